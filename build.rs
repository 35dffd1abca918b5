//! Records the git commit benchbook was built from (and whether the tree
//! had uncommitted changes), so every manifest can say which code measured.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_default();
    let dirty = match git(&["status", "--porcelain", "--untracked-files=no"]) {
        Some(_) if commit.is_empty() => String::new(),
        Some(s) => (!s.is_empty()).to_string(),
        None => String::new(),
    };
    println!("cargo:rustc-env=BENCHBOOK_GIT_COMMIT={commit}");
    println!("cargo:rustc-env=BENCHBOOK_GIT_DIRTY={dirty}");
    for p in [".git/HEAD", ".git/index", ".git/refs/heads", "src", "templates", "Cargo.toml"] {
        if std::path::Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
