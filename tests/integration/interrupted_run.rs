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
    assert!(verify_run(&run).findings.is_empty(), "the files match the manifest");
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

/// A real nccl-tests log repeated to about 15 MB: long enough to catch an
/// import while it writes.
fn big_log(dir: &std::path::Path) -> std::path::PathBuf {
    let one = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/import/real/nccl-tests/all_reduce_int8_8xGH200_olivia_v2.18.3_unalign.txt"),
    )
    .unwrap();
    let path = dir.join("big.log");
    std::fs::write(&path, one.repeat(15_000_000 / one.len())).unwrap();
    path
}

fn start_import(archive: &std::path::Path, log: &std::path::Path) -> Child {
    Command::new(common::bin())
        .args(["import", "--quiet", "--archive"])
        .arg(archive)
        .arg(log)
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn benchbook import")
}

/// Wait until the import has created its staging folder (it parses first).
fn wait_for_staging(archive: &Archive, child: &mut Child) {
    let t = Instant::now();
    while archive.stale_staging().is_empty() {
        assert!(child.try_wait().unwrap().is_none(), "the import finished before it could be interrupted");
        assert!(t.elapsed() < Duration::from_secs(120), "the import never started writing");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn a_killed_import_leaves_no_run_and_list_says_what_is_left() {
    let tmp = tempfile::tempdir().unwrap();
    let log = big_log(tmp.path());
    let archive = Archive::new(tmp.path().join("archive"));
    let mut child = start_import(&archive.root, &log);
    wait_for_staging(&archive, &mut child);
    signal(&child, "-KILL");
    child.wait().unwrap();
    assert!(archive.runs().unwrap().is_empty(), "a killed import left a run");
    let out = Command::new(common::bin()).args(["list", "--archive"]).arg(&archive.root).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(archive.stale_staging().len(), 1, "the staging folder is what a kill leaves");
    assert!(err.contains("killed before it finished"), "{err}");
}

#[test]
fn ctrl_c_cancels_an_import_and_leaves_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let log = big_log(tmp.path());
    let archive = Archive::new(tmp.path().join("archive"));
    let mut child = start_import(&archive.root, &log);
    wait_for_staging(&archive, &mut child);
    signal(&child, "-INT");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a cancelled import must not exit 0: {err}");
    assert!(err.contains("cancelling") && err.contains("cancelled"), "{err}");
    assert!(archive.runs().unwrap().is_empty(), "a cancelled import left a run");
    assert!(archive.stale_staging().is_empty(), "a cancelled import left its staging folder");
}
