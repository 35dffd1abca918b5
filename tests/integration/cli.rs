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
