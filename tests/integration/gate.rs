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

/// A fleet of 70 nodes (more than `SUMMARY_FROM_PEERS` peers): the first
/// gate reads every peer's results and writes their summaries; the next
/// reads the summaries, and judges every point at the same ratio, its
/// interval within bootstrap noise of the full read. A summary that no
/// longer holds its node's latest runs is not used: that node is read in
/// full and its summary rewritten.
#[test]
fn a_large_fleet_is_judged_from_its_peers_summaries_as_from_their_results() {
    use benchbook::analysis::fleet::gate::collect::{self, SUMMARY_FROM_PEERS};
    use benchbook::analysis::fleet::gate::{floors, judge, GateRule};
    use benchbook::analysis::fleet::summary;
    use benchbook::archive::catalog::Catalog;
    use benchbook::archive::synthetic::{synthetic_fleet, SynthSpec};
    use benchbook::archive::RunDir;

    let tmp = tempfile::tempdir().unwrap();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let template = RunDir { id: "t".into(), path: root.join("data/runs/20261122T014545Z-memcpy-rounds-a-2c86") };
    let spec =
        SynthSpec { runs: 210, rows_per_run: 60, nodes: 70, drifting: 17, drift_at: 99, damage: 0, points: None };
    let archive = Archive::new(tmp.path());
    synthetic_fleet(&template, &archive, &spec).unwrap();
    const { assert!(70 > SUMMARY_FROM_PEERS) };
    let catalog = Catalog::open(&archive).unwrap();
    let latest = |node: &str| {
        let mut runs: Vec<_> = catalog.entries.iter().filter(|e| e.node.as_deref() == Some(node)).collect();
        runs.sort_by(|a, b| (&b.started_at, &b.run_id).cmp(&(&a.started_at, &a.run_id)));
        runs[0].run_id.clone()
    };
    let fresh = [latest("node0001")];
    let specs = benchbook::analysis::specs::SpecBook::load(&archive.root).unwrap();
    let floors = floors::load(None).unwrap();
    let read = || {
        collect::collect(&archive, "synthetic", "node0001", &fresh, &floors, &specs, collect::Window::default())
            .unwrap()
    };
    let cold = read();
    assert_eq!(cold.from_summary, 0);
    let warm = read();
    assert_eq!(warm.from_summary, 69, "every peer from its summary");
    assert_eq!(warm.peers, cold.peers);
    let (jc, jw) = (judge(&cold.data, &GateRule::default()), judge(&warm.data, &GateRule::default()));
    assert_eq!(jc.points.len(), jw.points.len());
    for (c, w) in jc.points.iter().zip(&jw.points) {
        let (c, w) = (c.fleet.as_ref().unwrap(), w.fleet.as_ref().unwrap());
        assert!((w.ratio / c.ratio - 1.0).abs() < 1e-12, "{} vs {}", w.ratio, c.ratio);
        assert!((w.ratio_low / c.ratio_low - 1.0).abs() < 0.02, "{} vs {}", w.ratio_low, c.ratio_low);
        assert_eq!(w.below, c.below);
    }
    // node0042's summary loses its newest run: it is read again, and
    // rewritten with it.
    let mut s = summary::read(&archive, "synthetic", "node0042").unwrap();
    let newest = s.runs.remove(0);
    std::fs::write(archive.root.join("fleet-summary/synthetic/node0042.json"), serde_json::to_vec(&s).unwrap())
        .unwrap();
    assert_eq!(read().from_summary, 68);
    assert_eq!(summary::read(&archive, "synthetic", "node0042").unwrap().runs[0], newest);
    assert_eq!(read().from_summary, 69);
}

/// `--tool-check`, NHC's `check_nccl_allreduce 460.0 … 16G`, with the
/// tool's output a published 8×H100 all_reduce_perf log (busbw 483 GB/s at
/// 16 GiB; sources in tests/fixtures/import/real/nccl-tests/expected.toml)
/// printed by `cat`: at a 460 GB/s floor it passes and the suite runs; at
/// 500 it is below twice and the node is bad without a suite; a tool that
/// fails, is missing, or prints what its format does not read is not
/// judged, never bad; an unknown format is refused before anything runs.
#[test]
fn a_tool_check_holds_a_published_nccl_log_against_its_floor() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let log = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/import/real/nccl-tests/all_reduce_8xH100_p5_awsbatch_mpirun_tag_output.txt");
    let check = |floor: &str, command: &str| {
        let o = gate(&archive, "n1", &["--json", "--tool-check", &format!("{floor}:{command}")]);
        let v: serde_json::Value =
            serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
        (o.status.code(), v)
    };
    let cat = format!("cat {}", log.display());
    let (code, v) = check("nccl-tests:460", &cat);
    // The tool passes; the suite has no fleet yet, so the gate is not judged.
    assert_eq!(code, Some(3), "{v}");
    let t = &v["tools"][0];
    assert_eq!(t["verdict"], "pass", "{v}");
    let figures = t["figures"].as_array().unwrap();
    assert_eq!(figures.len(), 2, "in-place and out-of-place: {v}");
    for f in figures {
        assert_eq!(f["size_bytes"], 17179869184u64);
        let gbps = f["gbps"].as_f64().unwrap();
        assert!((gbps - 483.2).abs() < 0.3, "the log's 483.05 / 483.35 GB/s busbw: {gbps}");
        assert_eq!(f["axis"], "GB/s (bus bandwidth)");
    }
    assert_eq!(v["passes"].as_array().unwrap().len(), 1, "the suite ran: {v}");

    let (code, v) = check("nccl-tests:500", &cat);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(v["tools"][0]["runs"].as_array().unwrap().len(), 2, "measured again before calling it bad: {v}");
    let reason = v["reason"].as_str().unwrap();
    // The curve is named as the catalog names it (its owner: SeriesKey::base_name).
    assert!(reason.starts_with("benchbook: nccl-tests (cat) ") && reason.contains("all_reduce"), "{reason}");
    assert!(reason.contains("at 16 GiB, below the 500 GB/s floor, twice"), "{reason}");
    assert!(v["passes"].as_array().unwrap().is_empty(), "no suite after a bad tool: {v}");

    for (command, why) in [
        ("false", "`false` exited with exit status: 1"),
        ("no-such-tool-here", "`no-such-tool-here` could not start"),
        ("echo hello", "its output is not nccl-tests output"),
    ] {
        let (code, v) = check("nccl-tests:460", command);
        assert_eq!(code, Some(3), "{command}: {v}");
        assert_eq!(v["tools"][0]["verdict"], "not_judged", "{v}");
        assert!(v["reason"].as_str().unwrap().contains(why), "{command}: {v}");
    }
    // Two checks of one format (NHC's 8-GPU all_reduce and its IB loopback)
    // are two series for node_exporter, never one twice.
    let dir = tmp.path().join("textfile");
    std::fs::create_dir_all(&dir).unwrap();
    let (two, three) = (format!("nccl-tests:460:{cat}"), format!("nccl-tests:40:{cat}"));
    gate(&archive, "n1", &["--tool-check", &two, "--tool-check", &three, "--textfile", dir.to_str().unwrap()]);
    let prom = std::fs::read_to_string(dir.join("benchbook_gate.prom")).unwrap();
    assert!(
        prom.contains(r#"check="tool1:nccl-tests"} 0"#) && prom.contains(r#"check="tool2:nccl-tests"} 0"#),
        "{prom}"
    );
    let o = gate(&archive, "n1", &["--tool-check", "nccl:460:cat x"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(last_line(&o).contains("`nccl` is not an import format"), "{}", last_line(&o));
}
