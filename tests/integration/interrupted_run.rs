//! A run stopped mid-sweep keeps every finished point: Ctrl-C (SIGINT)
//! marks it interrupted; SIGKILL leaves a `running` manifest whose process is
//! gone, which reads as interrupted. Both leave readable Parquet.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use benchbook::prelude::*;

fn start(archive: &std::path::Path) -> Child {
    Command::new(common::bin())
        .args([
            "run",
            "memcpy",
            "--backend",
            "cpu",
            "--sizes",
            "4K..256M",
            "--threads",
            "1",
            "--warmup",
            "0.01",
            "--min-time",
            "0.05",
            "--max-time",
            "0.3",
            "--quiet",
            "--archive",
        ])
        .arg(archive)
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn benchbook")
}

/// Wait until the run has archived at least `n` points.
fn wait_for_points(archive: &Archive, n: u32) -> RunDir {
    let t = Instant::now();
    loop {
        if let Ok(run) = archive.resolve("latest") {
            if let Ok(m) = run.manifest() {
                if m.counts.points >= n {
                    return run;
                }
            }
        }
        assert!(t.elapsed() < Duration::from_secs(120), "the run never archived {n} points");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, sig: &str) {
    let ok = Command::new("kill").args([sig, &child.id().to_string()]).status().unwrap().success();
    assert!(ok, "kill {sig}");
}

#[test]
fn sigint_keeps_finished_points_and_marks_interrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let mut child = start(tmp.path());
    wait_for_points(&archive, 3);
    signal(&child, "-INT");
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130), "exit code of an interrupted run");
    let run = archive.resolve("latest").unwrap();
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Interrupted);
    assert!(m.ended_at.is_some());
    let rows = run.rows().unwrap();
    assert_eq!(rows.len() as u64, m.counts.rows);
    let points: std::collections::BTreeSet<u32> = rows.iter().map(|r| r.point).collect();
    assert!(points.len() >= 3 && points.len() < 17, "{} points", points.len());
    assert!(verify_run(&run).unwrap().is_empty(), "the files match the manifest");
}

#[test]
fn sigkill_leaves_a_readable_archive_that_reads_as_interrupted() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let mut child = start(tmp.path());
    wait_for_points(&archive, 2);
    signal(&child, "-KILL");
    child.wait().unwrap();
    let run = archive.resolve("latest").unwrap();
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Running, "the process had no chance to say otherwise");
    assert_eq!(m.effective_status(), RunStatus::Interrupted);
    let rows = run.rows().unwrap();
    assert!(rows.len() as u64 >= m.counts.rows, "every point the manifest counts is in the file");
    assert!(!rows.is_empty());
}
