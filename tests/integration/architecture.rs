//! The one-way flow, checked on the source: bench → rows → archive →
//! analysis → plot/report. A `crate::` path that runs back up the flow (or
//! two top-level modules that use each other) fails this test, naming the
//! file, the line and the path. `docs/architecture.md` draws the layers.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Top-level modules each module must never use.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "vocab",
        &[
            "bench", "backend", "archive", "import", "session", "analysis", "plot", "render", "report", "site",
            "notebook", "cli", "host", "gate",
        ],
    ),
    (
        "error",
        &[
            "vocab", "bench", "backend", "archive", "import", "session", "analysis", "plot", "render", "report",
            "site", "notebook", "cli", "gate",
        ],
    ),
    (
        "host",
        &[
            "bench", "backend", "archive", "import", "session", "analysis", "plot", "render", "report", "site",
            "notebook", "cli", "gate",
        ],
    ),
    (
        "bench",
        &[
            "backend", "analysis", "import", "archive", "session", "plot", "render", "report", "site", "notebook",
            "cli", "gate",
        ],
    ),
    (
        "archive",
        &[
            "bench", "backend", "import", "session", "analysis", "plot", "render", "report", "site", "notebook", "cli",
            "gate",
        ],
    ),
    (
        "backend",
        &["session", "archive", "import", "analysis", "plot", "render", "report", "site", "notebook", "cli", "gate"],
    ),
    (
        "import",
        &[
            "bench", "backend", "archive", "session", "analysis", "plot", "render", "report", "site", "notebook",
            "cli", "gate",
        ],
    ),
    (
        "analysis",
        &["bench", "backend", "import", "session", "plot", "render", "report", "site", "notebook", "cli", "gate"],
    ),
    (
        "plot",
        &["bench", "backend", "import", "session", "archive", "render", "report", "site", "notebook", "cli", "gate"],
    ),
    ("render", &["bench", "backend", "import", "session", "analysis", "report", "site", "notebook", "cli", "gate"]),
    ("report", &["bench", "backend", "import", "session", "notebook", "cli", "gate", "site"]),
    ("session", &["analysis", "plot", "render", "report", "site", "notebook", "cli", "gate"]),
    ("notebook", &["bench", "backend", "import", "session", "cli", "gate", "site"]),
    ("site", &["bench", "backend", "import", "session", "notebook", "cli", "gate"]),
    ("gate", &["backend", "import", "plot", "render", "report", "site", "notebook", "cli"]),
];

/// What `report/` never does itself: group points into curves, compute a
/// saturation, or hold a curve against a rule read from its display name.
/// The catalog builds every series once (`analysis::series`) and sections
/// read them; what a curve measures comes from the op table (`vocab::ops`).
const REPORT_NEVER: &[(&str, &str)] = &[
    ("curves(", "group points into curves: take the report's series (`Catalog::series`)"),
    ("saturation(", "compute a saturation: read `Series::summary`, or `Series::against` for a link"),
    ("label.contains(", "read a curve's meaning from its name: ask `Series::meaning` or `Series::buffers`"),
    (".label ==", "join rows by display name: join on `SeriesKey`"),
    ("Catalog::default()", "use an empty catalog: build the report's own"),
    ("op == \"latency\"", "test an op's spelling: ask `vocab::ops::meaning`"),
    ("op != \"latency\"", "test an op's spelling: ask `vocab::ops::meaning`"),
    ("contains(\"device\")", "read buffers from a variant's spelling: ask `vocab::ops::Buffers`"),
];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p);
        }
    }
}

/// The top-level module a file under `src/` belongs to.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel.components().next().unwrap().as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

/// Each `crate::<module>` a line names, including `use crate::{a, b::c}`.
fn uses(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                if !name.is_empty() {
                    out.push(name);
                }
            }
        } else {
            let name: String = after.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            out.push(name);
        }
        rest = &rest[i + "crate::".len()..];
    }
    out
}

/// Non-test source lines: a file's `#[cfg(test)] mod tests` (always last
/// in this crate), the one line after any other `#[cfg(test)]` (a
/// test-only registration) and comments are left out.
fn code_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut skip_next = false;
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().copied().enumerate() {
        let t = line.trim_start();
        if std::mem::take(&mut skip_next) {
            continue;
        }
        if t.starts_with("#[cfg(test)]") {
            let next = lines.get(i + 1).map(|l| l.trim_start()).unwrap_or("");
            if next.starts_with("mod tests") || next.starts_with("pub(crate) mod tests") {
                break;
            }
            skip_next = true;
            continue;
        }
        if t.starts_with("//") {
            continue;
        }
        out.push((i + 1, line));
    }
    out
}

#[test]
fn no_module_reaches_back_up_the_flow() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let forbidden: BTreeMap<&str, &[&str]> = FORBIDDEN.iter().copied().collect();
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    let mut bad = Vec::new();
    for file in &files {
        // `tests.rs` files are test-only modules (`#[cfg(test)] mod tests;`).
        if file.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let module = module_of(&src, file);
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in code_lines(&text) {
            for used in uses(line) {
                if used == module || used == "prelude" {
                    continue;
                }
                edges.insert((module.clone(), used.clone()));
                if forbidden.get(module.as_str()).is_some_and(|f| f.contains(&used.as_str())) {
                    bad.push(format!("{}:{n}: `{module}` uses `crate::{used}`", file.display()));
                }
            }
        }
    }
    for (a, b) in &edges {
        if a < b && edges.contains(&(b.clone(), a.clone())) && a != "lib" && b != "lib" {
            bad.push(format!("`{a}` and `{b}` use each other"));
        }
    }
    assert!(bad.is_empty(), "the flow runs back up:\n{}", bad.join("\n"));
    assert!(edges.len() > 10, "the scan found too few module edges ({}) to be checking anything", edges.len());
}

#[test]
fn the_scan_sees_grouped_and_plain_paths() {
    assert_eq!(uses("use crate::{vocab::rows::Row, error::Result};"), vec!["vocab", "error"]);
    assert_eq!(uses("let x = crate::bench::gpu::pattern(1, 2);"), vec!["bench"]);
}

#[test]
fn report_reads_series_and_never_rederives_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src.join("report"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    let mut found = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for (no, line) in code_lines(&text) {
            for (pat, instead) in REPORT_NEVER {
                // A method or a longer name ending the same way is fine
                // (`s.against(`, `transfer_curves(`).
                let call = pat.ends_with('(') && !pat.contains('.');
                let hit = line.match_indices(pat).any(|(at, _)| {
                    let before = &line[..at];
                    !call || !(before.ends_with('.') || before.ends_with("fn ") || before.ends_with('_'))
                });
                if hit {
                    found.push(format!("{}:{no}: does not {instead}\n    {}", file.display(), line.trim()));
                }
            }
        }
    }
    assert!(found.is_empty(), "report/ re-derives what the catalog owns:\n{}", found.join("\n"));
}

#[test]
fn files_stay_under_400_lines_unless_their_header_says_why() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut long = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines = text.lines().count();
        let header: String = text.lines().take_while(|l| l.starts_with("//!")).collect::<Vec<_>>().join("\n");
        if lines > 400 && !header.contains("longer than 400 lines") {
            long.push(format!("{}: {lines} lines", file.display()));
        }
    }
    assert!(long.is_empty(), "files over 400 lines without a reason in their header:\n{}", long.join("\n"));
}
