//! Golden Markdown: the report of a committed fixture run must render
//! exactly as `tests/golden/run.md`, with volatile fields (generation time,
//! benchbook version and commit) normalised. A golden file changes only on
//! purpose: run with `BENCHBOOK_BLESS=1` to rewrite it, then review the diff.

use std::path::Path;

use benchbook::prelude::*;
use benchbook::report;

fn normalised_markdown() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    let archive = Archive::new(&root);
    let run = archive.resolve("fixture").expect("the committed fixture run");
    let mut rep = report::build(&run, &root, &ReportOptions::default()).unwrap();
    rep.context.generated_at = "<generated_at>".into();
    rep.context.benchbook_version = "<version>".into();
    rep.context.benchbook_commit = "<commit>".into();
    report::render_markdown(&report::engine(None).unwrap(), &rep.context).unwrap()
}

#[test]
fn run_report_matches_golden_markdown() {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/run.md");
    let got = normalised_markdown();
    if std::env::var("BENCHBOOK_BLESS").is_ok() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&golden).expect("tests/golden/run.md (BENCHBOOK_BLESS=1 writes it)");
    if got != want {
        let first = got.lines().zip(want.lines()).position(|(a, b)| a != b).unwrap_or(0);
        panic!(
            "report differs from tests/golden/run.md at line {}:\n  got:  {:?}\n  want: {:?}\n(BENCHBOOK_BLESS=1 rewrites it; review the diff)",
            first + 1,
            got.lines().nth(first),
            want.lines().nth(first)
        );
    }
}

#[test]
fn fixture_run_verifies() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    let run = Archive::new(&root).resolve("fixture").unwrap();
    assert!(verify_run(&run).unwrap().is_empty(), "the committed fixture was modified");
}
