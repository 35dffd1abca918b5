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
    report::render_markdown(&mut report::engine(None).unwrap(), &rep).unwrap().0
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

/// A write-up kind's Markdown from committed fixture runs, normalised.
fn kind_markdown(runs: &[&str], kind: report::Kind, link: Option<&str>) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    let archive = Archive::new(&root);
    let runs: Vec<_> = runs.iter().map(|r| archive.resolve(r).expect("a committed fixture run")).collect();
    let opts = ReportOptions { kind: Some(kind), link: link.map(String::from), ..ReportOptions::default() };
    let mut rep = report::build_runs(&runs, &root, &opts).unwrap();
    assert_eq!(rep.kind, kind);
    rep.context.generated_at = "<generated_at>".into();
    rep.context.benchbook_version = "<version>".into();
    rep.context.benchbook_commit = "<commit>".into();
    report::render_markdown(&mut report::engine(None).unwrap(), &rep).unwrap().0
}

fn check_kind_golden(runs: &[&str], kind: report::Kind, sections: &[&str]) {
    check_kind_golden_with(runs, kind, None, sections)
}

/// [`check_kind_golden`] with the network link named (`--link`).
fn check_kind_golden_with(runs: &[&str], kind: report::Kind, link: Option<&str>, sections: &[&str]) {
    let md = kind_markdown(runs, kind, link);
    for s in sections {
        assert!(md.contains(s), "{kind} report lacks {s}");
    }
    let file = format!("kind-{kind}.md");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(&file);
    if std::env::var("BENCHBOOK_BLESS").is_ok() {
        std::fs::write(&golden, &md).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&golden).unwrap_or_else(|_| panic!("tests/golden/{file} (BENCHBOOK_BLESS=1)"));
    let first = md.lines().zip(want.lines()).position(|(a, b)| a != b);
    assert!(
        md == want,
        "report differs from tests/golden/{file} at line {:?}:\n  got:  {:?}\n  want: {:?}",
        first.map(|f| f + 1),
        first.and_then(|f| md.lines().nth(f)),
        first.and_then(|f| want.lines().nth(f))
    );
}

#[test]
fn memcpy_kind_matches_golden() {
    check_kind_golden(&["fixture"], report::Kind::Memcpy, &["## Host memcpy", "## Published numbers", "MI300X"]);
}

#[test]
fn memcpy_peer_kind_matches_golden() {
    check_kind_golden(
        &["emulated-gpu", "published-net-logs"],
        report::Kind::MemcpyPeer,
        &["## Runs", "### Peer memcpy", "## Peer matrices", "matrix-1.svg", "Infinity Fabric"],
    );
}

#[test]
fn gemm_kind_matches_golden() {
    check_kind_golden(&["fixture"], report::Kind::Gemm, &["## GEMM", "## Published numbers", "MI350X"]);
}

#[test]
fn network_kind_matches_golden() {
    // The perftest log ran on an NDR (400 Gb/s) port; the report is told which.
    check_kind_golden_with(
        &["published-net-logs"],
        report::Kind::Network,
        Some("ib-ndr"),
        &[
            "## Network transfers",
            "one-sided (RDMA write)",
            "two-sided (MPI send/recv)",
            "## Against the link",
            "400 Gb/s",
            "### Small-message latency",
            "### Collectives (one rank count: no scaling shown)",
        ],
    );
}

#[test]
fn compare_kind_matches_golden() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    let archive = Archive::new(&root);
    let groups = vec![vec![archive.resolve("compare-base").unwrap()], vec![archive.resolve("compare-new").unwrap()]];
    let mut rep = report::build_compare(&groups, 0.02).unwrap();
    let md = report::render_compare_markdown(&mut report::engine(None).unwrap(), &rep).unwrap().0;
    assert!(md.contains("no uncertainty"), "one sample a point has no interval");
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/kind-compare.md");
    let md = md.replace(&rep.context.generated_at, "<generated_at>");
    rep.context.generated_at.clear();
    if std::env::var("BENCHBOOK_BLESS").is_ok() {
        std::fs::write(&golden, &md).unwrap();
        return;
    }
    assert_eq!(md, std::fs::read_to_string(&golden).expect("tests/golden/kind-compare.md (BENCHBOOK_BLESS=1)"));
}

/// The seed-004 example (`scripts/seed-004.sh`: bare metal, a podman
/// container and 2 partitions, 3 interleaved rounds, committed under
/// `data/seed-004`) renders as its golden Markdown, and its summary table
/// says what `compare --json` says of the same runs.
#[test]
fn seed_004_report_matches_golden_and_compare_json() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("data/seed-004");
    let archive = Archive::new(&root);
    let group = |l: &str| archive.runs_labelled(l).unwrap();
    let groups = vec![group("bare"), group("container"), group("partitions-2")];
    assert_eq!(groups.iter().map(Vec::len).collect::<Vec<_>>(), [9, 9, 6], "3 rounds of each side");
    let mut rep = report::build_compare(&groups, 0.02).unwrap();
    rep.context.generated_at = "<generated_at>".into();
    rep.context.benchbook_version = "<version>".into();
    let md = report::render_compare_markdown(&mut report::engine(None).unwrap(), &rep).unwrap().0;
    for section in ["## Summary", "## Collectives", "## Memory bandwidth", "## Workloads and serving", "## Partitions:"]
    {
        assert!(md.contains(section), "{section}");
    }
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/seed-004.md");
    if std::env::var("BENCHBOOK_BLESS").is_ok() {
        std::fs::write(&golden, &md).unwrap();
    } else {
        let want = std::fs::read_to_string(&golden).expect("tests/golden/seed-004.md (BENCHBOOK_BLESS=1)");
        assert!(md == want, "seed-004 report differs from tests/golden/seed-004.md (BENCHBOOK_BLESS=1 rewrites it)");
    }
    // The summary's verdicts are compare --json's, curve by curve.
    for (i, label) in [(1, "container"), (2, "partitions-2")] {
        let o = std::process::Command::new(crate::common::bin())
            .args(["compare", "label:bare", &format!("label:{label}"), "--json", "--archive"])
            .arg(&root)
            .output()
            .unwrap();
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut json: Vec<(String, String)> = v["summary"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["curve"].as_str().unwrap().to_string(), s["verdict"].as_str().unwrap().to_string()))
            .collect();
        let name = &rep.context.pairs[i - 1].new;
        let mut table: Vec<(String, String)> = rep
            .context
            .summary
            .iter()
            .filter(|r| &r.new == name)
            .map(|r| (r.curve.clone(), r.verdict.clone()))
            .collect();
        assert!(!json.is_empty());
        // The table goes by family; the JSON by curve.
        json.sort();
        table.sort();
        assert_eq!(table, json, "{label}");
    }
}
