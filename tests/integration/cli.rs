//! The binary as a user meets it: help that teaches, errors that name the
//! flag and the fix, JSON output, exit codes.

use crate::common;

use std::process::{Command, Output};

fn bb(args: &[&str], archive: &std::path::Path) -> Output {
    Command::new(common::bin()).args(args).arg("--archive").arg(archive).output().unwrap()
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn help_shows_examples() {
    let o = Command::new(common::bin()).arg("--help").output().unwrap();
    let t = text(&o);
    assert!(o.status.success());
    assert!(t.contains("benchbook run quick --report") && t.contains("docs/schema.md"), "{t}");
}

#[test]
fn bad_flags_name_the_flag_and_the_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let o = bb(&["run", "memcpy", "--sizes", "4Q"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let t = text(&o);
    assert!(t.contains("--sizes") && t.contains("unknown suffix"), "{t}");

    let o = bb(&["run", "bogus"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("neither a preset"), "{}", text(&o));

    let o = bb(&["run", "gemm", "--dtypes", "bf16"], tmp.path());
    assert!(text(&o).contains("--dtypes"), "{}", text(&o));

    let o = bb(&["run", "gemm", "--gpu-dtypes", "fp4"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--gpu-dtypes") && text(&o).contains("bf16"), "{}", text(&o));

    let o = bb(&["run", "memcpy", "--backend", "tpu"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--backend") && text(&o).contains("cuda"), "{}", text(&o));

    let o = bb(&["run", "memcpy", "--cache", "lukewarm"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--cache"), "{}", text(&o));

    let o = bb(&["show", "nothing-here"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("benchbook run quick"), "{}", text(&o));
    // Nothing was written for any of these.
    assert!(!tmp.path().join("runs").exists());
}

#[cfg(not(feature = "mpi"))]
#[test]
fn mpi_benchmarks_without_the_feature_say_how_to_get_it() {
    let tmp = tempfile::tempdir().unwrap();
    let o = bb(&["run", "p2p"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("--features mpi"), "{}", text(&o));
}

#[test]
fn run_json_list_show_verify_report() {
    let tmp = tempfile::tempdir().unwrap();
    let reports = tmp.path().join("reports");
    let o = bb(
        &[
            "run",
            "memcpy",
            "--backend",
            "cpu",
            "--sizes",
            "4K,64K",
            "--threads",
            "1",
            "--warmup",
            "0.005",
            "--min-time",
            "0.005",
            "--max-time",
            "0.02",
            "--json",
            "--report",
            "--format",
            "md",
            "--reports-dir",
            reports.to_str().unwrap(),
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "complete");
    assert_eq!(v["outcome"]["points"], 2);
    let id = v["run_id"].as_str().unwrap().to_string();
    assert!(reports.join(&id).join("report.md").exists());
    assert!(!reports.join(&id).join("report.html").exists(), "--format md writes no HTML");

    let o = bb(&["list", "--json"], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["run_id"], id.as_str());
    assert_eq!(v[0]["points"], 2);

    let o = bb(&["show", "latest"], tmp.path());
    let t = text(&o);
    assert!(o.status.success() && t.contains("memcpy copy 64 KiB 1T"), "{t}");

    let o = bb(&["verify", "latest"], tmp.path());
    assert!(o.status.success() && text(&o).contains("OK"), "{}", text(&o));
    let results = tmp.path().join("runs").join(&id).join("results.parquet");
    let mut data = std::fs::read(&results).unwrap();
    data[10] ^= 0xff;
    std::fs::write(&results, data).unwrap();
    let o = bb(&["verify", "latest"], tmp.path());
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).contains("content changed in bytes 0.."), "{}", text(&o));

    let o = bb(&["specs"], tmp.path());
    assert!(text(&o).contains("mi300x") && text(&o).contains("5300"), "{}", text(&o));
}

#[test]
fn rerun_makes_a_linked_run_and_compares_it() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let first = std::process::Command::new(common::bin())
        .args(["run", "memcpy", "--sizes", "4K,64K", "--threads", "1", "--warmup", "0.005", "--min-time", "0.01"])
        .args(["--max-time", "0.05", "--label", "original", "--quiet", "--json", "--archive"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(first.status.success(), "{}", String::from_utf8_lossy(&first.stderr));
    let original: serde_json::Value = serde_json::from_slice(&first.stdout).unwrap();
    let id = original["run_id"].as_str().unwrap();

    let out =
        std::process::Command::new(common::bin()).args(["rerun", id, "--archive"]).arg(&archive).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains(&format!("repeats {id}")), "{text}");
    assert!(text.contains("environment:") && text.contains("VERDICT"), "{text}");
    assert!(text.contains("memcpy") && text.contains("2 points:"), "{text}");

    let a = benchbook::archive::Archive::new(&archive);
    let runs = a.runs().unwrap();
    assert_eq!(runs.len(), 2);
    let new = runs.iter().find(|r| r.id != id).unwrap();
    let m = new.manifest().unwrap();
    assert_eq!(m.repeats.as_deref(), Some(id), "the new manifest names the run it repeats");
    assert_eq!(m.config, a.resolve(id).unwrap().manifest().unwrap().config, "the same resolved configuration");
    assert_eq!(m.label.as_deref(), Some("original"));
    assert!(benchbook::archive::verify_run(new).findings.is_empty());

    let json = std::process::Command::new(common::bin())
        .args(["rerun", id, "--json", "--threshold", "5%", "--archive"])
        .arg(&archive)
        .output()
        .unwrap();
    assert!(json.status.success(), "{}", String::from_utf8_lossy(&json.stderr));
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["original"], id);
    assert_eq!(v["threshold"], 0.05);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    for p in points {
        assert!(["same", "faster", "slower", "inconclusive"].contains(&p["verdict"].as_str().unwrap()), "{p}");
        assert!(p["ci_low"].as_f64().unwrap() <= p["ratio"].as_f64().unwrap() + 1e-12);
    }
}

#[test]
fn an_imported_run_cannot_be_rerun_and_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let log = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/ib_write_bw_gbits.txt");
    let imp = std::process::Command::new(common::bin())
        .args(["import", "--quiet", "--json", "--archive"])
        .arg(&archive)
        .arg(&log)
        .output()
        .unwrap();
    assert!(imp.status.success(), "{}", String::from_utf8_lossy(&imp.stderr));
    let id = serde_json::from_slice::<serde_json::Value>(&imp.stdout).unwrap()["run_id"].as_str().unwrap().to_string();
    let out =
        std::process::Command::new(common::bin()).args(["rerun", &id, "--archive"]).arg(&archive).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot be re-run") && err.contains("imported from perftest"), "{err}");
    assert_eq!(benchbook::archive::Archive::new(&archive).runs().unwrap().len(), 1, "nothing was measured");
}

/// `run --fleet` records each run's node (here Slurm's node name, as
/// `slurmd -N` gives it) and `fleet check` judges them together: every
/// node and point in the JSON, a damaged run named and left out, and an
/// unknown fleet refused with the command that records one. (Which node is
/// slow under a real injected fault: scripts/slurm-cluster.sh.)
#[test]
fn fleet_check_judges_the_nodes_of_a_fleet_and_leaves_out_a_damaged_run() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path();
    // A hostile node name (it comes from the environment) must stay text in the report.
    for node in ["node1", "node2", "node3", "node4<script>x</script>"] {
        let o = Command::new(common::bin())
            .args(["-q", "run", "memcpy", "--sizes", "64K,1M", "--threads", "1", "--max-time", "0.2", "--fleet", "t"])
            .arg("--archive")
            .arg(archive)
            .env("SLURMD_NODENAME", node)
            .env("SLURM_JOB_ID", "7")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    // Damage one run's results: it is named, and the rest are judged.
    let runs: Vec<_> = std::fs::read_dir(archive.join("runs")).unwrap().flatten().map(|e| e.path()).collect();
    // node1's (read_dir's order is no order: the hostile node must stay readable).
    let node1 = runs
        .iter()
        .find(|r| std::fs::read_to_string(r.join("manifest.json")).unwrap().contains("\"node\": \"node1\""))
        .expect("node1's run");
    std::fs::write(node1.join("results.parquet"), b"not parquet").unwrap();
    let o = bb(&["fleet", "check", "t", "--json", "--fail-on", "never"], archive);
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["runs"], 3, "{v}");
    assert_eq!(v["damaged"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["nodes_seen"].as_object().unwrap().len(), 3, "{v}");
    assert_eq!(v["tests"], 6, "3 nodes × 2 points: {v}");
    for p in v["points"].as_array().unwrap() {
        let (lo, hi) = (p["ratio_low"].as_f64().unwrap(), p["ratio_high"].as_f64().unwrap());
        assert!(lo <= hi && p["confidence"].as_f64().unwrap() > 0.99, "{p}");
        assert_eq!(p["slow"].as_bool().unwrap(), p["z"].as_f64().unwrap() < -3.5 && hi < 0.95, "{p}");
    }
    let drain: Vec<&str> = v["drain"].as_array().unwrap().iter().map(|d| d.as_str().unwrap()).collect();
    let slow: Vec<&str> = v["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["slow"] == true)
        .map(|n| n["node"].as_str().unwrap())
        .collect();
    assert_eq!(drain, slow);
    // --fail-on any fails on the damaged run whatever the verdicts.
    assert_eq!(bb(&["-q", "fleet", "check", "t", "--fail-on", "any"], archive).status.code(), Some(1));
    let o = bb(&["fleet", "check", "nope"], archive);
    assert!(!o.status.success() && text(&o).contains("--fleet nope"), "{}", text(&o));

    // The report: every judged node in the ranked table, a chart per point,
    // the drain list, and the hostile name escaped in the HTML.
    let out = archive.join("fleet-report");
    let o = bb(&["fleet", "report", "t", "--out", out.to_str().unwrap()], archive);
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for n in v["nodes"].as_array().unwrap() {
        let w = &n["worst"];
        let row = format!(
            "| {:.3} | {:.3}–{:.3} | {:.1} |",
            w["ratio"].as_f64().unwrap(),
            w["ratio_low"].as_f64().unwrap(),
            w["ratio_high"].as_f64().unwrap(),
            w["z"].as_f64().unwrap()
        );
        assert!(md.contains(&row), "{row} not in\n{md}");
    }
    assert!(md.contains("## Drain list") && md.contains("## memcpy copy 1 MiB 1T"), "{md}");
    assert!(out.join("fleet-1.svg").exists() && out.join("fleet-2.svg").exists());
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(
        !html.contains("<script>x") && html.contains("node4&lt;script&gt;"),
        "the node name reached the HTML unescaped"
    );
}

/// Per-node logs join a fleet by their host: one published perftest log
/// imported for 4 nodes (`import --fleet --host`) is judged as 4 nodes,
/// every one at 1.0× its peers, none slow.
#[test]
fn imported_per_node_logs_join_a_fleet_by_their_host() {
    let tmp = tempfile::tempdir().unwrap();
    let log = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/import/real/perftest/ib_read_bw_mlx4_mb_sec_a_sweep_cpufreq_warning_inside_table.txt"
    );
    for k in 1..=4 {
        let o = bb(&["-q", "import", log, "--host", &format!("ib{k}"), "--fleet", "ib"], tmp.path());
        assert!(o.status.success(), "{}", text(&o));
        if k == 2 {
            // Two nodes judge nothing, and the check says so and fails.
            let o = bb(&["fleet", "check", "ib"], tmp.path());
            assert!(o.status.code() == Some(1) && text(&o).contains("nothing was judged"), "{}", text(&o));
        }
    }
    let o = bb(&["fleet", "check", "ib", "--json"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let nodes: Vec<&str> = v["nodes_seen"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
    assert_eq!(nodes, ["ib1", "ib2", "ib3", "ib4"], "{v}");
    let points = v["points"].as_array().unwrap();
    assert!(points.len() >= 4 * 10, "a sweep's sizes, each judged on 4 nodes: {}", points.len());
    assert!(points.iter().all(|p| p["ratio"] == 1.0 && p["slow"] == false), "{v}");
}

/// `--take-turns`: a run waits, saying so, while another holds the
/// archive's turn, and measures once it is free.
#[test]
fn take_turns_waits_for_the_archives_turn() {
    let tmp = tempfile::tempdir().unwrap();
    let lock = std::fs::File::create(tmp.path().join(".turns.lock")).unwrap();
    lock.lock().unwrap();
    let child = Command::new(common::bin())
        .args([
            "run",
            "memcpy",
            "--sizes",
            "64K",
            "--threads",
            "1",
            "--min-time",
            "0.02",
            "--max-time",
            "0.05",
            "--take-turns",
            "--json",
        ])
        .arg("--archive")
        .arg(tmp.path())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(
        benchbook::archive::Archive::new(tmp.path()).runs().unwrap().is_empty(),
        "a run started while the turn was taken"
    );
    lock.unlock().unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("waiting for another --take-turns run"), "{}", text(&o));
    assert_eq!(benchbook::archive::Archive::new(tmp.path()).runs().unwrap().len(), 1);
}

/// `run --partitions 2`: two pinned instances at once, one run; every row
/// carries its partition and CPU set (disjoint), `show --json` adds them
/// up, and more partitions than CPUs is refused by flag.
#[test]
fn partitions_run_at_once_on_disjoint_cpus_and_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let cpus = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let o = bb(&["run", "memcpy", "--partitions", "4096", "--sizes", "64K"], tmp.path());
    assert!(!o.status.success() && text(&o).contains("4096 partitions need at least 4096 CPUs"), "{}", text(&o));
    if cpus < 2 {
        eprintln!("skipped: one CPU cannot hold two partitions");
        return;
    }
    let what = ["-q", "run", "memcpy", "--sizes", "64K", "--threads", "1", "--min-time", "0.02", "--max-time", "0.1"];
    let o = bb(&[&what[..], &["--partitions", "2"]].concat(), tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let runs = benchbook::archive::Archive::new(tmp.path()).runs().unwrap();
    assert_eq!(runs.len(), 1, "one run, not one per partition");
    let rows = runs[0].rows().unwrap();
    let mut sets = std::collections::BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == benchbook::vocab::rows::Status::Measured) {
        let axes: serde_json::Value = serde_json::from_str(r.params.axes.as_deref().unwrap()).unwrap();
        sets.insert(axes["partition"].as_u64().unwrap(), axes["partition_cpus"].as_str().unwrap().to_string());
        assert!(r.params.variant.as_deref().unwrap().starts_with("partition "), "{:?}", r.params.variant);
    }
    assert_eq!(sets.len(), 2, "{sets:?}");
    assert_ne!(sets[&0], sets[&1]);
    let o = bb(&["show", "latest", "--json"], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let agg = &v["partitions"][0];
    assert_eq!(agg["partitions"].as_array().unwrap().len(), 2, "{v}");
    let parts: f64 = agg["partitions"].as_array().unwrap().iter().map(|p| p[1].as_f64().unwrap()).sum();
    assert!((agg["total"].as_f64().unwrap() - parts).abs() < 1e-6 * parts);
    assert!(agg["total_low"].as_f64().unwrap() <= agg["total"].as_f64().unwrap());

    // `run exec --partitions 2`: each copy knows its partition, and a
    // throughput metric it reports adds up.
    let script = r#"echo "{\"metric\":\"items_per_s\",\"value\":$((100 + 50 * BENCHBOOK_PARTITION)),\"unit\":\"items/s\"}" >> "$BENCHBOOK_METRICS_FILE""#;
    // (--archive before the command: `bb` would append it after `--`.)
    let o = Command::new(common::bin())
        .args(["-q", "run", "exec", "--repeat", "2", "--partitions", "2", "--archive"])
        .arg(tmp.path())
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let o = bb(&["show", "latest", "--json"], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let items =
        v["partitions"].as_array().unwrap().iter().find(|a| a["point"].as_str().unwrap().contains("items_per_s"));
    assert_eq!(items.expect("items_per_s added up")["total"], 250.0, "{v}");
}
