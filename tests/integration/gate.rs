//! `benchbook fleet gate` on this machine, through the real binary: what it
//! says with no history, an unreadable archive, a missing floors file or a
//! refused suite (never "bad"), that it judges once the fleet has runs, that
//! every verdict is a run, and that a hostile node name reaches the terminal
//! escaped. The drain itself is tested in a real Slurm cluster (`slurm::`).

use std::path::Path;
use std::process::{Command, Output};

use benchbook::prelude::*;

use crate::common;

/// A quick suite: one size, a tenth of a second a point.
const SUITE: &[&str] = &["--", "memcpy", "--sizes", "1M", "--threads", "1", "--max-time", "0.1"];

fn gate(archive: &Path, node: &str, extra: &[&str]) -> Output {
    Command::new(common::bin())
        .args(["-q", "--archive"])
        .arg(archive)
        .args(["fleet", "gate", "demo", "--node", node])
        .args(extra)
        .args(SUITE)
        .output()
        .expect("benchbook")
}

fn last_line(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).lines().last().unwrap_or_default().to_string()
}

#[test]
fn a_gate_without_history_or_archive_or_floors_is_not_judged_never_bad() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");

    // No history: the first node of a fleet.
    let o = gate(&archive, "n1", &["--json"]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["verdict"], "not_judged");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.starts_with("benchbook: not judged: 0 other node(s) of fleet demo"), "{reason}");
    assert!(reason.contains("earlier run(s)") && reason.contains("no published floor"), "{reason}");
    // The pass and the verdict are runs; the verdict's manifest says what it judged.
    let verdict = v["verdict_run"].as_str().unwrap();
    let m = Archive::new(&archive).resolve(verdict).unwrap().manifest().unwrap();
    match m.config {
        benchbook::archive::manifest::RunConfig::Gate(g) => {
            assert_eq!(
                (g.gate.fleet.as_str(), g.gate.node.as_str(), g.gate.verdict.as_str()),
                ("demo", "n1", "not_judged")
            );
            assert_eq!(g.gate.passes.len(), 1);
            assert_eq!(g.gate.reason, reason);
        }
        other => panic!("not a gate verdict: {other:?}"),
    }
    assert_eq!(m.source.to_string(), "gate");
    // `fleet check` counts the gate's pass as n1's run, never its verdict.
    let c = Command::new(common::bin())
        .arg("--archive")
        .arg(&archive)
        .args(["fleet", "check", "demo", "--json", "--fail-on", "never"])
        .output()
        .unwrap();
    let c: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap();
    assert_eq!(c["nodes_seen"], serde_json::json!({ "n1": 1 }), "{c}");

    // An archive that cannot be written (its root is a file).
    let file = tmp.path().join("a-file");
    std::fs::write(&file, "not an archive").unwrap();
    let o = gate(&file, "n1", &[]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(last_line(&o).starts_with("benchbook: not judged: "), "{}", last_line(&o));

    // A floors file that is missing, and one that is not valid.
    let o = gate(&archive, "n1", &["--floors", "/nonexistent/floors.toml"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        last_line(&o).contains("not judged: the floors") && last_line(&o).contains("/nonexistent/floors.toml"),
        "{}",
        last_line(&o)
    );
    let bad = tmp.path().join("floors.toml");
    std::fs::write(&bad, "[[floor]]\ntool = \"x\"\ngbps = -1\n").unwrap();
    let o = gate(&archive, "n1", &["--floors", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert!(last_line(&o).contains("floors.toml"), "{}", last_line(&o));

    // A suite `run` refuses.
    let o = Command::new(common::bin())
        .args(["-q", "--archive"])
        .arg(&archive)
        .args(["fleet", "gate", "demo", "--", "memcpy", "--sizes", "banana"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3));
    assert!(last_line(&o).starts_with("benchbook: not judged: the suite"), "{}", last_line(&o));
}

#[test]
fn a_gate_judges_once_three_other_nodes_have_runs_and_escapes_a_hostile_node() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    for n in ["n1", "n2", "n3"] {
        assert_eq!(gate(&archive, n, &[]).status.code(), Some(3));
    }
    let hostile = "n4\u{1b}]0;owned\u{7}\u{1b}[31m";
    let o = gate(&archive, hostile, &[]);
    let text = String::from_utf8_lossy(&o.stdout).into_owned();
    // Judged against 3 other nodes: a pass or, on a bad day, bad; not "not judged".
    assert!(matches!(o.status.code(), Some(0) | Some(1)), "{text}");
    assert!(text.contains("(3 other nodes, 0 earlier runs of this node)"), "{text}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'), "{text:?}");
    let line = last_line(&o);
    assert!(line.starts_with("benchbook: pass: 1 point") || line.contains("× fleet"), "{line}");
}
