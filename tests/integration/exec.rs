//! `benchbook run exec` through the real binary: metrics with their
//! parameters, a wall time per repetition, repeats, a malformed metric
//! line, a non-zero exit and Ctrl-C, each read back from the archive.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use benchbook::analysis::workload::{metric_stats, with_axis_columns};
use benchbook::archive::RunStatus;
use benchbook::polars::prelude::{col, lit};
use benchbook::prelude::*;
use benchbook::vocab::rows::Row;

use crate::common::bin;

/// A shell script in `dir` (executable), for the command to run.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn exec(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin()).current_dir(dir).args(["--archive", "data", "-q", "run", "exec"]).args(args).output().unwrap()
}

fn rows_of(dir: &Path, query: &str) -> (benchbook::archive::RunDir, Vec<Row>) {
    let archive = Archive::new(dir.join("data"));
    let run = archive.resolve(query).unwrap();
    let rows = benchbook::archive::schema::from_dataframe(&run.read(true).unwrap().1).unwrap();
    (run, rows)
}

fn metric<'a>(rows: &'a [Row], name: &str) -> Vec<&'a Row> {
    rows.iter().filter(|r| r.params.metric.as_deref() == Some(name)).collect()
}

#[test]
fn metrics_params_wall_times_and_repeats_are_archived() {
    let tmp = tempfile::tempdir().unwrap();
    let s = script(
        tmp.path(),
        "work.sh",
        r#"echo "working on repetition $BENCHBOOK_REPETITION"
echo '{"metric": "tokens_per_s", "value": '$((4000 + BENCHBOOK_REPETITION))'.5, "unit": "tokens/s", "params": {"model": "7b"}}' >> "$BENCHBOOK_METRICS_FILE"
echo '{"metric": "loss", "value": 2.5, "unit": "1", "params": {"model": "7b", "step": 10, "gpus": 4}}' >> "$BENCHBOOK_METRICS_FILE""#,
    );
    let out =
        exec(tmp.path(), &["--repeat", "3", "--param", "gpus=2", "--param", "mode=ddp", "--", s.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (run, rows) = rows_of(tmp.path(), "latest");
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(m.source.to_string(), "exec");
    let e = m.config.exec().expect("an exec configuration");
    assert_eq!(e.exec.command[0], s.to_str().unwrap());
    assert_eq!(e.exec.repeat, 3);

    let tps = metric(&rows, "tokens_per_s");
    assert_eq!(tps.len(), 3, "one row per repetition");
    let values: Vec<f64> = tps.iter().map(|r| r.value.unwrap()).collect();
    assert_eq!(values, vec![4001.5, 4002.5, 4003.5]);
    assert!(tps
        .iter()
        .all(|r| r.params.unit.as_deref() == Some("tokens/s") && r.params.better.as_deref() == Some("higher")));
    // Command-line parameters join the line's own.
    assert_eq!(tps[0].params.axes.as_deref(), Some(r#"{"gpus":2,"mode":"ddp","model":"7b"}"#));
    assert_eq!(tps.iter().map(|r| r.sample.unwrap()).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(tps.iter().all(|r| r.point == tps[0].point));
    // ... and a line's own parameter wins on a clash.
    assert_eq!(
        metric(&rows, "loss")[0].params.axes.as_deref(),
        Some(r#"{"gpus":4,"mode":"ddp","model":"7b","step":10}"#)
    );
    assert_eq!(metric(&rows, "loss")[0].params.better.as_deref(), Some("lower"));

    let wall = metric(&rows, "wall_time_s");
    assert_eq!(wall.len(), 3);
    assert!(wall.iter().all(|r| r.status == Status::Measured && r.value.unwrap() > 0.0 && r.value.unwrap() < 30.0));
    assert!(wall.iter().all(|r| r.params.unit.as_deref() == Some("s")));

    // Output and metrics of each repetition are kept, hashed in the manifest.
    let stdout = std::fs::read_to_string(run.path.join("stdout-2.txt")).unwrap();
    assert_eq!(stdout, "working on repetition 2\n");
    assert!(m.files.iter().any(|f| f.path == "metrics-3.jsonl"));
    assert!(benchbook::archive::verify_run(&run).findings.is_empty());

    // Statistics, and parameters as polars columns.
    let (_, df) = run.read(false).unwrap();
    let stats = metric_stats(&df).unwrap();
    let t = stats.iter().find(|s| s.metric == "tokens_per_s").unwrap();
    assert_eq!((t.samples, t.median, t.peak), (3, 4002.5, 4003.5));
    assert!(t.ci.is_none(), "three samples cannot support a 95 % interval of the median");
    let wide = with_axis_columns(&df).unwrap();
    let gpus2 = wide.lazy().filter(col("axis.gpus").eq(lit(2i64))).collect().unwrap();
    assert_eq!(gpus2.height(), 6, "3 tokens_per_s + 3 wall_time_s rows have gpus=2");
}

#[test]
fn a_malformed_metric_line_names_line_and_field_and_keeps_the_run() {
    let tmp = tempfile::tempdir().unwrap();
    let s = script(
        tmp.path(),
        "bad.sh",
        r#"echo '{"metric": "samples_per_s", "value": 10, "unit": "samples/s"}' >> "$BENCHBOOK_METRICS_FILE"
echo '{"metric": "samples_per_s", "value": "fast", "unit": "samples/s"}' >> "$BENCHBOOK_METRICS_FILE""#,
    );
    let out = exec(tmp.path(), &["--repeat", "3", "--", s.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("metrics-1.jsonl line 2, field `value`: must be a number, found a string"), "{err}");
    assert!(err.contains("was kept and marked failed"), "{err}");
    let (run, rows) = rows_of(tmp.path(), "latest");
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Failed);
    assert!(m.status_detail.as_deref().unwrap().contains("field `value`"));
    assert_eq!(metric(&rows, "samples_per_s").len(), 1, "the good line before it is kept");
    assert_eq!(metric(&rows, "wall_time_s").len(), 1, "the run stopped after the bad repetition");
    assert!(run.path.join("metrics-1.jsonl").exists(), "the bad file is kept for inspection");
}

#[test]
fn a_non_zero_exit_is_recorded_with_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    let s =
        script(tmp.path(), "flaky.sh", r#"echo "disk full" >&2; [ "$BENCHBOOK_REPETITION" = 2 ] && exit 3; exit 0"#);
    let out = exec(tmp.path(), &["--repeat", "3", "--", s.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("repetition 2 exited with code 3") && err.contains("disk full"), "{err}");
    let (run, rows) = rows_of(tmp.path(), "latest");
    assert_eq!(run.manifest().unwrap().status, RunStatus::Failed);
    let wall = metric(&rows, "wall_time_s");
    assert_eq!(wall.len(), 2, "repetition 3 never ran");
    assert_eq!((wall[0].status, wall[1].status), (Status::Measured, Status::Failed));
    assert!(wall[1].note.as_deref().unwrap().contains("exited with code 3"));
    assert_eq!(wall[1].value, None, "a failed repetition's time is not a measurement");

    // With --ignore-failure every repetition runs and the run completes.
    let out =
        exec(tmp.path(), &["--repeat", "3", "--ignore-failure", "--label", "ignoring", "--", s.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1), "a failed repetition still fails the exit code");
    let (run, rows) = rows_of(tmp.path(), "ignoring");
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Complete);
    assert!(m.status_detail.unwrap().contains("repetition 2 exited with code 3"));
    let wall = metric(&rows, "wall_time_s");
    assert_eq!(wall.iter().filter(|r| r.status == Status::Measured).count(), 2);
    assert_eq!(wall.len(), 3);
}

#[test]
fn ctrl_c_stops_the_command_and_keeps_what_was_recorded() {
    let tmp = tempfile::tempdir().unwrap();
    // Repetition 1 is quick; repetition 2 reports a metric, then hangs.
    let s = script(
        tmp.path(),
        "hang.sh",
        r#"echo '{"metric": "steps_per_s", "value": 7, "unit": "steps/s"}' >> "$BENCHBOOK_METRICS_FILE"
[ "$BENCHBOOK_REPETITION" = 1 ] && exit 0
touch started-2
exec sleep 60"#,
    );
    let mut child = Command::new(bin())
        .current_dir(tmp.path())
        .args(["--archive", "data", "-q", "run", "exec", "--repeat", "5", "--", s.to_str().unwrap()])
        .spawn()
        .unwrap();
    let start = Instant::now();
    // Wait until repetition 2 has reported (it touches a marker after its metric line).
    while !tmp.path().join("started-2").exists() {
        assert!(start.elapsed() < Duration::from_secs(30), "repetition 2 never started");
        std::thread::sleep(Duration::from_millis(20));
    }
    let ok = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success();
    assert!(ok);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(start.elapsed() < Duration::from_secs(30), "the hung command was not stopped");
    let (run, rows) = rows_of(tmp.path(), "latest");
    assert_eq!(run.manifest().unwrap().effective_status(), RunStatus::Interrupted);
    assert_eq!(metric(&rows, "steps_per_s").len(), 2, "repetition 2's metric, reported before Ctrl-C, is kept");
    let wall = metric(&rows, "wall_time_s");
    assert_eq!(wall.len(), 2);
    assert_eq!(wall[0].status, Status::Measured);
    assert!(wall[1].status == Status::Failed && wall[1].note.as_deref().unwrap().contains("interrupt"));
}

#[test]
fn a_missing_command_records_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let out = exec(tmp.path(), &["--", "./no-such-script.sh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not an executable file"));
    assert!(
        !tmp.path().join("data/runs").exists() || std::fs::read_dir(tmp.path().join("data/runs")).unwrap().count() == 0
    );
}

#[test]
fn a_command_that_cannot_run_here_is_recorded_as_skipped_with_its_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let s = script(tmp.path(), "nogpu.sh", r#"echo "skipped: needs PyTorch, which is not installed" >&2; exit 77"#);
    let out = exec(tmp.path(), &["--repeat", "3", "--", s.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let (run, rows) = rows_of(tmp.path(), "latest");
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(rows.len(), 1, "one skipped row, no further repetitions");
    assert_eq!(rows[0].status, Status::Skipped);
    assert!(rows[0].note.as_deref().unwrap().contains("needs PyTorch"), "{:?}", rows[0].note);
}

#[test]
fn the_mlp_script_reports_throughput_and_a_loss_curve() {
    // scripts/train_mlp.py in plain Python (no PyTorch needed): a real
    // training loop whose loss must fall.
    let tmp = tempfile::tempdir().unwrap();
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/train_mlp.py");
    let out =
        exec(tmp.path(), &["--", "python3", script.to_str().unwrap(), "--python", "--steps", "40", "--warmup", "1"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, rows) = rows_of(tmp.path(), "latest");
    let loss: Vec<f64> = metric(&rows, "loss").iter().map(|r| r.value.unwrap()).collect();
    assert_eq!(loss.len(), 40);
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    assert!(mean(&loss[30..]) < 0.9 * mean(&loss[..10]), "the loss falls: {loss:?}");
    let sps = metric(&rows, "samples_per_s");
    assert_eq!(sps.len(), 1);
    assert!(sps[0].value.unwrap() > 0.0);
    assert!(sps[0].params.axes.as_deref().unwrap().contains(r#""framework":"python""#));
}
