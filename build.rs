//! Records the git commit benchbook was built from (and whether the tree
//! had uncommitted changes), so every manifest can say which code measured.
//!
//! The script reruns only when the commit or the sources change. It never
//! watches `.git/index`: `git status` rewrites that file whenever it
//! refreshes stale stat data, so watching it made every build rerun this
//! script and recompile the crate (each notebook cell paid ~20 s for it).
//! `GIT_OPTIONAL_LOCKS=0` also keeps `git status` from writing the index.
//!
//! It also finds the report's sections: every file in
//! `src/report/sections/` is a module of that folder, and each that
//! declares `pub const SECTION: Plugin` is registered (`PLUGINS`), so a
//! section with data of its own is its Rust file and its template, with
//! no list to edit.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).env("GIT_OPTIONAL_LOCKS", "0").output().ok()?;
    out.status.success().then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `$OUT_DIR/sections.rs`: one `mod` per file of `src/report/sections/`
/// (but `mod.rs`), and the list of those that declare a section.
fn sections() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/report/sections");
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .expect("src/report/sections")
        .map(|e| e.expect("src/report/sections").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs"))
        .collect();
    files.sort();
    let mut mods = String::new();
    let mut plugins = Vec::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        mods += &format!("#[path = {:?}]\npub mod {stem};\n", f.display().to_string());
        let text = std::fs::read_to_string(f).expect("a section's file");
        if text.lines().any(|l| l.starts_with("pub const SECTION: Plugin")) {
            plugins.push(format!("&{stem}::SECTION"));
        }
    }
    mods += &format!(
        "/// Every section that brings data of its own, in file order.\npub const PLUGINS: &[&Plugin] = &[{}];\n",
        plugins.join(", ")
    );
    let out = std::path::Path::new(&std::env::var("OUT_DIR").unwrap()).join("sections.rs");
    std::fs::write(out, mods).expect("OUT_DIR");
}

fn main() {
    sections();
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
