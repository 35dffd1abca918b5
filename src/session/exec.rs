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

use crate::vocab::benches::Bench;
use crate::vocab::config::{ExecConfig, RunConfig};
use crate::vocab::source::RunOrigin;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, IoContext, Result};
pub use crate::vocab::facts::ExecSpec;
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

/// Refuse, before any run exists, a program that cannot be started.
fn check_program(spec: &ExecSpec) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let program = &spec.command[0];
    let executable =
        |p: &std::path::Path| p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0);
    let found = if program.contains('/') {
        executable(std::path::Path::new(program))
    } else {
        std::env::var_os("PATH").is_some_and(|path| std::env::split_paths(&path).any(|d| executable(&d.join(program))))
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

/// A command as the source of a run.
pub struct ExecSource {
    spec: ExecSpec,
    /// Repetitions that failed (with --ignore-failure) or skipped, for the
    /// run's status detail.
    notes: Vec<String>,
}

impl ExecSource {
    pub fn new(spec: ExecSpec) -> Self {
        ExecSource { spec, notes: Vec::new() }
    }
}

impl Source for ExecSource {
    fn describe(&mut self) -> Result<SourceInfo> {
        self.spec.validate()?;
        check_program(&self.spec)?;
        let tools = crate::host::tool_versions(&self.spec.command[0]);
        // The same probes as a local run: which CPU and GPUs the command had.
        let mut probe =
            crate::session::LocalSource::new(crate::bench::BenchConfig::preset(crate::bench::Preset::Quick));
        let backends = probe.describe()?.backends;
        Ok(SourceInfo {
            kind: RunOrigin::Exec,
            config: RunConfig::Exec(ExecConfig { exec: self.spec.clone(), tools }),
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
        (!self.notes.is_empty()).then(|| self.notes.join("; "))
    }
}

/// How one repetition's process ended.
enum Ended {
    Exited(ExitStatus),
    Interrupted,
}

/// What a repetition's end means for its wall-time row and for the run.
enum RepEnd {
    Succeeded,
    /// Exit 77: the command cannot run here; the run stops, complete.
    Skipped(String),
    /// A non-zero exit or an interrupt.
    Failed(String),
}

impl ExecSource {
    fn repetitions(
        &mut self,
        run_id: &str,
        scratch: &std::path::Path,
        sink: &mut dyn RowSink,
        progress: &dyn Progress,
    ) -> Result<RunOutcome> {
        let ms = self.spec.telemetry_ms;
        let mut outcome = RunOutcome::default();
        progress.planned(u64::from(self.spec.repeat));
        // The GPUs' sensors, read throughout; each repetition takes its window.
        let mut monitor =
            (ms > 0).then(|| crate::bench::telemetry::Monitor::start(crate::backend::all_gpus_sensor(), ms));
        let result = self.each_repetition(run_id, scratch, sink, progress, &mut monitor, &mut outcome);
        if let Some(m) = monitor {
            outcome.telemetry.push(m.finish("exec", "all GPUs"));
        }
        result.map(|()| outcome)
    }

    /// Every repetition, each flushed as it ends, into `outcome`.
    fn each_repetition(
        &mut self,
        run_id: &str,
        scratch: &std::path::Path,
        sink: &mut dyn RowSink,
        progress: &dyn Progress,
        monitor: &mut Option<crate::bench::telemetry::Monitor>,
        outcome: &mut RunOutcome,
    ) -> Result<()> {
        let spec = self.spec.clone();
        let host = crate::host::hostname();
        // (metric, parameters) → (point index, samples so far).
        let mut points: BTreeMap<(String, Option<String>), (u32, u32)> = BTreeMap::new();
        let mut measured_points = std::collections::BTreeSet::new();
        for rep in 1..=spec.repeat {
            if crate::vocab::interrupt::requested() {
                outcome.interrupted = true;
                break;
            }
            let files = RepFiles::new(scratch, rep);
            let from = monitor.as_ref().map(|m| m.begin());
            let clock = || monitor.as_ref().map_or(0.0, |m| m.now());
            let (ended, wall, stamps) = run_once(&spec.command, &files, run_id, rep, &clock)?;
            let whole = monitor.as_mut().zip(from).and_then(|(m, from)| m.end(from, None));
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
                           note: Option<String>,
                           telemetry: Option<crate::vocab::telemetry::StepTelemetry>| {
                let axes = metrics::params_text(params);
                let n = points.len() as u32;
                let slot = points.entry((metric.to_string(), axes.clone())).or_insert((n, 0));
                let sample = slot.1;
                if status == Status::Measured {
                    slot.1 += 1;
                }
                rows.push(Row {
                    run_id: run_id.into(),
                    backend: Bench::Exec.name().into(),
                    device: "host".into(),
                    host: host.clone(),
                    rank: 0,
                    point: slot.0,
                    params: Point {
                        bench: Bench::Exec.name().into(),
                        op: metric.into(),
                        metric: Some(metric.into()),
                        axes,
                        unit: Some(unit.into()),
                        better: Some(better.as_str().into()),
                        ..Point::default()
                    },
                    sample: (status == Status::Measured).then_some(sample),
                    round: None,
                    iterations: None,
                    seconds: None,
                    value,
                    timer: Some(if metric == WALL_METRIC { "steady_clock" } else { "command" }.into()),
                    status,
                    note,
                    stop: None,
                    source: format!("exec:repetition-{rep}"),
                    telemetry,
                });
            };
            for (i, l) in lines.iter().enumerate() {
                let mut params = spec.params.clone();
                params.extend(l.params.clone());
                // A line's window ends when it was written, and starts at
                // the first line of this repetition that adds parameters to
                // its own (a per-step line, e.g. `loss` at `step` 1: the
                // timed steps), else the first with all of its parameters.
                let window = monitor.as_ref().and_then(|m| {
                    let holds = |o: &metrics::MetricLine| l.params.iter().all(|(k, v)| o.params.get(k) == Some(v));
                    let first = lines[..i]
                        .iter()
                        .position(|o| holds(o) && o.params.len() > l.params.len())
                        .or_else(|| lines.iter().position(holds))?;
                    let (a, b) = (*stamps.get(first)?, *stamps.get(i)?);
                    Some((b - a, m.window(a, b)?))
                });
                row(&l.metric, &l.unit, l.better, &params, Some(l.value), Status::Measured, None, window.map(|w| w.1));
                if let (Some((span, t)), true) = (window, l.unit == "tokens/s") {
                    if let Some(w) = t.power_w.filter(|&w| w > 0.0 && span > 0.0) {
                        let note = format!(
                            "{} tokens/s over a mean GPU power of {w:.1} W, read over the {span:.1} s from this \
                             configuration's first per-step (else first) metric line to this one ({} readings)",
                            crate::vocab::units::format_sig3(l.value),
                            t.readings
                        );
                        row(
                            "tokens_per_j",
                            "tokens/J",
                            Better::Higher,
                            &params,
                            Some(l.value / w),
                            Status::Measured,
                            Some(note),
                            Some(t),
                        );
                    }
                }
            }
            if let (Some(t), true) = (whole, matches!(ended, Ended::Exited(s) if s.success())) {
                if let Some(w) = t.power_w {
                    let why = format!(
                        "the repetition's whole wall time ({wall:.1} s, start-up included), {} readings",
                        t.readings
                    );
                    row(
                        "gpu_energy_j",
                        "J",
                        Better::Lower,
                        &spec.params,
                        Some(w * wall),
                        Status::Measured,
                        Some(format!("mean GPU power × {why}")),
                        Some(t),
                    );
                    row(
                        "gpu_power_w",
                        "W",
                        Better::Lower,
                        &spec.params,
                        Some(w),
                        Status::Measured,
                        Some(format!("mean GPU power over {why}")),
                        Some(t),
                    );
                }
            }
            let end = match &ended {
                Ended::Exited(s) if s.success() => RepEnd::Succeeded,
                Ended::Exited(s) if s.code() == Some(SKIP_EXIT) => {
                    let why = tail(&files.stderr, 1);
                    let why = if why.is_empty() { "no reason given".to_string() } else { why };
                    RepEnd::Skipped(format!("skipped by the command (exit {SKIP_EXIT}): {why}"))
                }
                Ended::Exited(s) => RepEnd::Failed(format!("repetition {rep} {}", exit_text(s))),
                Ended::Interrupted => RepEnd::Failed(format!("repetition {rep} was stopped by an interrupt")),
            };
            let (value, status, note) = match &end {
                RepEnd::Succeeded => (Some(wall), Status::Measured, None),
                RepEnd::Skipped(why) => (None, Status::Skipped, Some(why.clone())),
                RepEnd::Failed(why) => {
                    (None, Status::Failed, Some(format!("{why} after {wall:.3} s; its wall time is not a measurement")))
                }
            };
            row(WALL_METRIC, "s", Better::Lower, &spec.params, value, status, note, whole);
            for r in &rows {
                match r.status {
                    Status::Measured => {
                        measured_points.insert(r.point);
                    }
                    Status::Skipped => outcome.skipped += 1,
                    Status::Failed => outcome.failed += 1,
                }
            }
            outcome.points = points.len() as u32;
            outcome.measured = measured_points.len() as u32;
            sink.write_point(rows)?;
            let label = format!("repetition {rep}/{}", spec.repeat);
            progress.point_finished(
                &label,
                match &end {
                    RepEnd::Succeeded => PointEnd::Measured,
                    RepEnd::Skipped(why) => PointEnd::Skipped(why),
                    RepEnd::Failed(why) => PointEnd::Failed(why),
                },
            );
            if let Some((line, e)) = bad {
                return Err(Error::Metrics {
                    file: format!("metrics-{rep}.jsonl"),
                    line,
                    field: e.field,
                    message: e.message,
                });
            }
            match end {
                RepEnd::Succeeded => {}
                _ if matches!(ended, Ended::Interrupted) => {
                    outcome.interrupted = true;
                    break;
                }
                RepEnd::Skipped(why) => {
                    self.notes.push(why);
                    break;
                }
                RepEnd::Failed(why) if spec.ignore_failure => self.notes.push(why),
                RepEnd::Failed(why) => {
                    return Err(Error::CommandFailed {
                        command: crate::vocab::units::shell_join(&spec.command),
                        message: why,
                        stderr: tail(&files.stderr, 8),
                    });
                }
            }
        }
        Ok(())
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

/// Run the command once; returns how it ended, its wall time, and when
/// (on `clock`) each non-blank line of its metrics file was first seen.
fn run_once(
    command: &[String],
    files: &RepFiles,
    run_id: &str,
    rep: u32,
    clock: &dyn Fn() -> f64,
) -> Result<(Ended, f64, Vec<f64>)> {
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
    let mut stamps = Vec::new();
    let mut seen = 0usize;
    let mut watch = |stamps: &mut Vec<f64>| {
        // Stamp the complete, non-blank lines written since the last look.
        if let Ok(data) = std::fs::read(&files.metrics) {
            if data.len() > seen {
                let end = data[seen..].iter().rposition(|&b| b == b'\n').map_or(seen, |p| seen + p + 1);
                let now = clock();
                for line in data[seen..end].split(|&b| b == b'\n') {
                    if !line.iter().all(u8::is_ascii_whitespace) {
                        stamps.push(now);
                    }
                }
                seen = end;
            }
        }
    };
    loop {
        if let Some(status) = child.try_wait().at(&command[0])? {
            let wall = start.elapsed().as_secs_f64();
            watch(&mut stamps);
            return Ok((Ended::Exited(status), wall, stamps));
        }
        if crate::vocab::interrupt::requested() {
            stop(&mut child);
            return Ok((Ended::Interrupted, start.elapsed().as_secs_f64(), stamps));
        }
        watch(&mut stamps);
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Stop a child as a terminal would, then harder: SIGINT (5 s to write its
/// last metrics and exit), SIGTERM (5 s), SIGKILL.
pub(super) fn stop(child: &mut Child) {
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
            partitions: Vec::new(),
            partition_devices: Vec::new(),
            telemetry_ms: 0,
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
