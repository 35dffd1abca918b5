//! `run exec`: any command as the source of a run, run N times as hyperfine
//! does. Each repetition's wall time becomes a `wall_time_s` metric row;
//! every JSON line the command appends to `$BENCHBOOK_METRICS_FILE`
//! becomes a metric row (protocol: [`crate::vocab::metrics`]); stdout,
//! stderr and the metrics file of every repetition are kept in the run.
//!
//! A repetition is flushed to the archive as soon as it ends, so Ctrl-C
//! (which stops the child: SIGINT, then SIGTERM, then SIGKILL) or a kill
//! keeps every finished repetition. A malformed metric line or a non-zero
//! exit keeps what was recorded and ends the run as failed, naming the
//! line and field or the exit code.
//!
//! The file is longer than 400 lines because a repetition's whole life
//! (start, stop, keep its files, parse its metrics, flush) reads best in one
//! place.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::{Error, IoContext, Result};
use crate::vocab::metrics::{self, Better, Params};
use crate::vocab::progress::{PointEnd, Progress};
use crate::vocab::rows::{Point, Row, RowSink, RunOutcome, Status};
use crate::vocab::source::{Source, SourceInfo};

/// The metric every repetition records: its wall time, seconds.
pub const WALL_METRIC: &str = "wall_time_s";
/// The exit code with which a command says it cannot run here (the
/// automake convention); its last stderr line is recorded as the reason.
pub const SKIP_EXIT: i32 = 77;
/// The environment variable naming the file a command appends metrics to.
pub const METRICS_ENV: &str = "BENCHBOOK_METRICS_FILE";

/// What `run exec` runs, as the manifest records it (and `rerun` reads it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExecSpec {
    /// The command and its arguments, exactly as given (no shell).
    pub command: Vec<String>,
    pub repeat: u32,
    /// Parameters of every row (`--param k=v`); a metric line's own
    /// parameters add to them and win on a clash.
    pub params: Params,
    /// Go on after a repetition that exits non-zero.
    #[serde(default)]
    pub ignore_failure: bool,
}

impl ExecSpec {
    pub fn validate(&self) -> Result<()> {
        if self.command.is_empty() || self.command[0].is_empty() {
            return Err(Error::config("run exec", "no command given: `benchbook run exec [OPTIONS] -- CMD ARGS...`"));
        }
        if self.repeat == 0 {
            return Err(Error::config("--repeat", "must be at least 1"));
        }
        Ok(())
    }

    /// Refuse, before any run exists, a program that cannot be started.
    fn check_program(&self) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let program = &self.command[0];
        let executable =
            |p: &std::path::Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
        let found = if program.contains('/') {
            executable(std::path::Path::new(program))
        } else {
            std::env::var_os("PATH")
                .is_some_and(|path| std::env::split_paths(&path).any(|d| executable(&d.join(program))))
        };
        if found {
            Ok(())
        } else {
            Err(Error::config(
                "run exec",
                format!(
                    "`{}` is not an executable file{}; nothing was recorded",
                    program.escape_debug(),
                    if program.contains('/') { "" } else { " on PATH (give its path, e.g. ./script.sh)" }
                ),
            ))
        }
    }

    /// The label a run gets when the user gives none: the script's name
    /// (`train_mlp` for `python3 scripts/train_mlp.py`), else the command's.
    pub fn default_label(&self) -> String {
        let script = self
            .command
            .iter()
            .skip(1)
            .find(|a| !a.starts_with('-') && [".py", ".sh", ".pl", ".rb", ".js"].iter().any(|e| a.ends_with(e)));
        let word = script.unwrap_or(&self.command[0]);
        let base = std::path::Path::new(word).file_stem().and_then(|s| s.to_str()).unwrap_or("exec");
        let clean: String = base.chars().filter(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_')).collect();
        if clean.is_empty() {
            "exec".into()
        } else {
            clean
        }
    }
}

/// A command as the source of a run.
pub struct ExecSource {
    spec: ExecSpec,
    /// Why the last repetition failed, for the run's status detail.
    failures: Vec<String>,
}

impl ExecSource {
    pub fn new(spec: ExecSpec) -> Self {
        ExecSource { spec, failures: Vec::new() }
    }
}

impl Source for ExecSource {
    fn describe(&mut self) -> Result<SourceInfo> {
        self.spec.validate()?;
        self.spec.check_program()?;
        let tools = crate::host::tool_versions(&self.spec.command[0]);
        // The same probes as a local run: which CPU and GPUs the command had.
        let mut probe =
            crate::session::LocalSource::new(crate::bench::BenchConfig::preset(crate::bench::Preset::Quick));
        let backends = probe.describe()?.backends;
        Ok(SourceInfo {
            kind: "exec".into(),
            config: serde_json::json!({ "exec": self.spec, "tools": tools }),
            backends,
            default_label: self.spec.default_label(),
        })
    }

    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, progress: &dyn Progress) -> Result<RunOutcome> {
        let scratch = std::env::temp_dir().join(format!("benchbook-exec-{run_id}-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).at(&scratch)?;
        let result = self.repetitions(run_id, &scratch, sink, progress);
        let _ = std::fs::remove_dir_all(&scratch);
        result
    }

    fn completion_note(&self) -> Option<String> {
        (!self.failures.is_empty()).then(|| self.failures.join("; "))
    }
}

/// How one repetition ended.
enum Ended {
    Exited(ExitStatus),
    Interrupted,
}

impl ExecSource {
    fn repetitions(
        &mut self,
        run_id: &str,
        scratch: &std::path::Path,
        sink: &mut dyn RowSink,
        progress: &dyn Progress,
    ) -> Result<RunOutcome> {
        let spec = self.spec.clone();
        let host = crate::host::hostname();
        let mut outcome = RunOutcome::default();
        // (metric, parameters) → (point index, samples so far).
        let mut points: BTreeMap<(String, Option<String>), (u32, u32)> = BTreeMap::new();
        let mut measured_points = std::collections::BTreeSet::new();
        progress.planned(u64::from(spec.repeat));
        for rep in 1..=spec.repeat {
            if crate::vocab::interrupt::requested() {
                outcome.interrupted = true;
                break;
            }
            let files = RepFiles::new(scratch, rep);
            let (ended, wall) = run_once(&spec.command, &files, run_id, rep)?;
            // Keep the command's output and metrics whatever happened next.
            for (path, name) in files.kept(rep) {
                if let Ok(data) = std::fs::read(&path) {
                    sink.add_file(&name, &data)?;
                }
            }
            let text =
                std::fs::read(&files.metrics).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
            let (lines, bad) = parse_metrics(&text);
            let mut rows = Vec::new();
            let mut row = |metric: &str,
                           unit: &str,
                           better: Better,
                           params: &Params,
                           value: Option<f64>,
                           status: Status,
                           note: Option<String>| {
                let axes = metrics::params_text(params);
                let n = points.len() as u32;
                let slot = points.entry((metric.to_string(), axes.clone())).or_insert((n, 0));
                let sample = slot.1;
                if status == Status::Measured {
                    slot.1 += 1;
                }
                rows.push(Row {
                    run_id: run_id.into(),
                    backend: "exec".into(),
                    device: "host".into(),
                    host: host.clone(),
                    rank: 0,
                    point: slot.0,
                    params: Point {
                        bench: "exec".into(),
                        op: metric.into(),
                        metric: Some(metric.into()),
                        axes,
                        unit: Some(unit.into()),
                        better: Some(better.as_str().into()),
                        ..Point::default()
                    },
                    sample: (status == Status::Measured).then_some(sample),
                    iterations: None,
                    seconds: None,
                    value,
                    timer: Some(if metric == WALL_METRIC { "steady_clock" } else { "command" }.into()),
                    status,
                    note,
                    stop: None,
                    source: format!("exec:repetition-{rep}"),
                });
            };
            for l in &lines {
                let mut params = spec.params.clone();
                params.extend(l.params.clone());
                row(&l.metric, &l.unit, l.better, &params, Some(l.value), Status::Measured, None);
            }
            if let Ended::Exited(s) = &ended {
                if s.code() == Some(SKIP_EXIT) {
                    let why = tail(&files.stderr, 1);
                    let note = format!(
                        "skipped by the command (exit {SKIP_EXIT}): {}",
                        if why.is_empty() { "no reason given" } else { why.as_str() }
                    );
                    row(WALL_METRIC, "s", Better::Lower, &spec.params, None, Status::Skipped, Some(note.clone()));
                    outcome.points = outcome.points.max(1);
                    outcome.skipped += 1;
                    sink.write_point(rows)?;
                    progress.point_finished(&format!("repetition {rep}/{}", spec.repeat), PointEnd::Skipped(&note));
                    self.failures.push(note);
                    break;
                }
            }
            let failure = match &ended {
                Ended::Exited(s) if s.success() => None,
                Ended::Exited(s) => Some(exit_text(s)),
                Ended::Interrupted => Some("stopped by an interrupt".to_string()),
            };
            match &failure {
                None => row(WALL_METRIC, "s", Better::Lower, &spec.params, Some(wall), Status::Measured, None),
                Some(why) => {
                    let note =
                        format!("repetition {rep} {why} after {:.3} s; its wall time is not a measurement", wall);
                    row(WALL_METRIC, "s", Better::Lower, &spec.params, None, Status::Failed, Some(note))
                }
            }
            for r in &rows {
                match r.status {
                    Status::Measured => {
                        measured_points.insert(r.point);
                    }
                    _ => outcome.failed += 1,
                }
            }
            outcome.points = points.len() as u32;
            outcome.measured = measured_points.len() as u32;
            sink.write_point(rows)?;
            let label = format!("repetition {rep}/{}", spec.repeat);
            match &failure {
                None => progress.point_finished(&label, PointEnd::Measured),
                Some(why) => progress.point_finished(&label, PointEnd::Failed(why)),
            }
            if let Some((line, e)) = bad {
                return Err(Error::Metrics {
                    file: format!("metrics-{rep}.jsonl"),
                    line,
                    field: e.field,
                    message: e.message,
                });
            }
            match (ended, failure) {
                (Ended::Interrupted, _) => {
                    outcome.interrupted = true;
                    break;
                }
                (Ended::Exited(_), Some(why)) => {
                    let msg = format!("repetition {rep} {why}");
                    if !spec.ignore_failure {
                        return Err(Error::CommandFailed {
                            command: crate::vocab::units::shell_join(&spec.command),
                            message: msg,
                            stderr: tail(&files.stderr, 8),
                        });
                    }
                    self.failures.push(msg);
                }
                _ => {}
            }
        }
        Ok(outcome)
    }
}

/// The scratch files of one repetition.
struct RepFiles {
    stdout: PathBuf,
    stderr: PathBuf,
    metrics: PathBuf,
}

impl RepFiles {
    fn new(dir: &std::path::Path, rep: u32) -> Self {
        RepFiles {
            stdout: dir.join(format!("stdout-{rep}.txt")),
            stderr: dir.join(format!("stderr-{rep}.txt")),
            metrics: dir.join(format!("metrics-{rep}.jsonl")),
        }
    }

    /// (scratch path, name in the run) of each file kept.
    fn kept(&self, rep: u32) -> [(PathBuf, String); 3] {
        [
            (self.stdout.clone(), format!("stdout-{rep}.txt")),
            (self.stderr.clone(), format!("stderr-{rep}.txt")),
            (self.metrics.clone(), format!("metrics-{rep}.jsonl")),
        ]
    }
}

fn run_once(command: &[String], files: &RepFiles, run_id: &str, rep: u32) -> Result<(Ended, f64)> {
    let create = |p: &PathBuf| std::fs::File::create(p).at(p);
    let (out, err) = (create(&files.stdout)?, create(&files.stderr)?);
    create(&files.metrics)?;
    let start = Instant::now();
    let mut child = Command::new(&command[0])
        .args(&command[1..])
        .env(METRICS_ENV, &files.metrics)
        .env("BENCHBOOK_RUN_ID", run_id)
        .env("BENCHBOOK_REPETITION", rep.to_string())
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| Error::Config {
            flag: "run exec".into(),
            message: format!(
                "cannot start `{}`: {e}{}",
                command[0],
                if e.kind() == std::io::ErrorKind::NotFound { " (not found on PATH; give its path)" } else { "" }
            ),
        })?;
    loop {
        if let Some(status) = child.try_wait().at(&command[0])? {
            return Ok((Ended::Exited(status), start.elapsed().as_secs_f64()));
        }
        if crate::vocab::interrupt::requested() {
            stop(&mut child);
            return Ok((Ended::Interrupted, start.elapsed().as_secs_f64()));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stop a child as a terminal would, then harder: SIGINT (5 s to write its
/// last metrics and exit), SIGTERM (5 s), SIGKILL.
fn stop(child: &mut Child) {
    for (signal, grace) in [(libc::SIGINT, 5.0), (libc::SIGTERM, 5.0)] {
        // SAFETY: kill(2) on the pid of a child we have not yet reaped.
        unsafe {
            libc::kill(child.id() as libc::pid_t, signal);
        }
        let t = Instant::now();
        while t.elapsed().as_secs_f64() < grace {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

fn exit_text(s: &ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (s.code(), s.signal()) {
        (Some(c), _) => format!("exited with code {c}"),
        (None, Some(sig)) => format!("was killed by signal {sig}"),
        _ => "failed".into(),
    }
}

/// Every well-formed line, and the first malformed one (1-based line and
/// why). Blank lines are skipped.
pub fn parse_metrics(text: &str) -> (Vec<metrics::MetricLine>, Option<(usize, metrics::LineError)>) {
    let mut ok = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match metrics::parse_metric_line(line) {
            Ok(l) => ok.push(l),
            Err(e) => return (ok, Some((i + 1, e))),
        }
    }
    (ok, None)
}

/// The last `n` lines of a file, for an error message.
fn tail(path: &std::path::Path, n: usize) -> String {
    let text = std::fs::read(path).map(|b| String::from_utf8_lossy(&b).into_owned()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_name_the_script() {
        let spec = |c: &[&str]| ExecSpec {
            command: c.iter().map(|s| s.to_string()).collect(),
            repeat: 1,
            params: Params::new(),
            ignore_failure: false,
        };
        assert_eq!(spec(&["python3", "-u", "scripts/train_mlp.py", "--steps", "5"]).default_label(), "train_mlp");
        assert_eq!(spec(&["/usr/bin/sleep", "1"]).default_label(), "sleep");
    }

    #[test]
    fn metrics_text_stops_at_the_first_bad_line() {
        let (ok, bad) = parse_metrics("{\"metric\":\"a\",\"value\":1,\"unit\":\"s\"}\n\n{\"metric\":\"b\"}\n");
        assert_eq!(ok.len(), 1);
        let (line, e) = bad.unwrap();
        assert_eq!((line, e.field.as_str()), (3, "value"));
    }
}
