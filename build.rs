//! Records the git commit benchbook was built from (and whether the tree
//! had uncommitted changes), so every manifest can say which code measured.
//!
//! The script reruns only when the commit or the sources change. It never
//! watches `.git/index`: `git status` rewrites that file whenever it
//! refreshes stale stat data, so watching it made every build rerun this
//! script and recompile the crate (each notebook cell paid ~20 s for it).
//! `GIT_OPTIONAL_LOCKS=0` also keeps `git status` from writing the index.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).env("GIT_OPTIONAL_LOCKS", "0").output().ok()?;
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
    // A new commit moves HEAD or a branch ref; an edit touches the sources.
    for p in [".git/HEAD", ".git/refs/heads", ".git/packed-refs", "src", "templates", "Cargo.toml", "build.rs"] {
        if std::path::Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
