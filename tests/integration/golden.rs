//! Golden Markdown: the reports of the committed fixture runs must render
//! exactly as `tests/golden/run.md` (CPU) and `tests/golden/gpu-run.md`, with volatile fields (generation time,
//! benchbook version and commit) normalised. A golden file changes only on
//! purpose: run with `BENCHBOOK_BLESS=1` to rewrite it, then review the diff.

use std::path::Path;

use benchbook::prelude::*;
use benchbook::report;

fn normalised_markdown(run: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    let archive = Archive::new(&root);
    let run = archive.resolve(run).expect("the committed fixture run");
    let mut rep = report::build(&run, &root, &ReportOptions::default()).unwrap();
    rep.context.generated_at = "<generated_at>".into();
    rep.context.benchbook_version = "<version>".into();
    rep.context.benchbook_commit = "<commit>".into();
    report::render_markdown(&report::engine(None).unwrap(), &rep.context).unwrap()
}

fn check_golden(run: &str, file: &str) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(file);
    let got = normalised_markdown(run);
    if std::env::var("BENCHBOOK_BLESS").is_ok() {
        std::fs::create_dir_all(golden.parent().unwrap()).unwrap();
        std::fs::write(&golden, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|_| panic!("tests/golden/{file} (BENCHBOOK_BLESS=1 writes it)"));
    if got != want {
        // The first differing line, or the first line one of them lacks.
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| got.lines().count().min(want.lines().count()));
        panic!(
            "report differs from tests/golden/{file} at line {}:\n  got:  {:?}\n  want: {:?}\n(BENCHBOOK_BLESS=1 rewrites it; review the diff)",
            first + 1,
            got.lines().nth(first),
            want.lines().nth(first)
        );
    }
}

#[test]
fn run_report_matches_golden_markdown() {
    check_golden("fixture", "run.md");
}

/// The GPU sections (device memcpy, peer copies, host↔device, GEMM, device
/// facts) from a committed GPU-shaped fixture. Its rows come from the
/// emulated device of the shared GPU code (host memory), so only the
/// report's shape and arithmetic are under test, not any GPU's numbers.
#[test]
fn gpu_report_matches_golden_markdown() {
    let md = normalised_markdown("emulated-gpu");
    for section in ["## GPUs", "### Device memcpy", "### Peer memcpy", "### Host ↔ device", "### GPU GEMM"] {
        assert!(md.contains(section), "{section}");
    }
    check_golden("emulated-gpu", "gpu-run.md");
}

#[test]
fn fixture_runs_verify() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    for name in ["fixture", "emulated-gpu"] {
        let run = Archive::new(&root).resolve(name).unwrap();
        assert!(verify_run(&run).findings.is_empty(), "the committed fixture {name} was modified");
    }
}
