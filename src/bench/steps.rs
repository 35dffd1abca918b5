//! What one step of a schedule becomes: the rows of its outcome (shared by
//! local runs and MPI jobs), and the local driver that measures a device's
//! benchmarks and hands each step's rows to the sink. The schedule itself
//! is [`super::runner`]'s.

use super::runner::{Schedule, StepDriver};
use super::telemetry::Monitor;
use super::{BenchConfig, Benchmark, Outcome, Sampler};
use crate::error::Result;
use crate::vocab::progress::{PointEnd, Progress};
use crate::vocab::rows::{Point, Row, RowSink, RunOutcome, Status};
use crate::vocab::telemetry::SensorOpener;

/// The columns every row of one backend/device shares.
#[derive(Debug, Clone)]
pub struct RowMeta {
    pub run_id: String,
    pub backend: String,
    pub device: String,
    pub host: String,
    pub rank: u32,
}

/// Where one step's rows sit: the point's index in the run, the round
/// (None outside a rounds schedule) and the index its first sample gets.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub point: u32,
    pub round: Option<u32>,
    pub first_sample: u32,
    /// What the schedule adds to the rows' note (why a point ends short of
    /// its minimum rounds).
    pub note: Option<String>,
    /// What the device's sensors read over the step.
    pub telemetry: Option<crate::vocab::telemetry::StepTelemetry>,
}

impl Step {
    /// A point measured once, outside any schedule.
    pub fn single(point: u32) -> Step {
        Step { point, round: None, first_sample: 0, note: None, telemetry: None }
    }
}

/// The rows of one step's outcome.
pub fn outcome_rows(meta: &RowMeta, step: Step, point: &Point, timer: &str, outcome: &Outcome) -> Vec<Row> {
    let base = |status, note: Option<String>| Row {
        run_id: meta.run_id.clone(),
        backend: meta.backend.clone(),
        device: meta.device.clone(),
        host: meta.host.clone(),
        rank: meta.rank,
        point: step.point,
        params: point.clone(),
        status,
        note,
        source: "native".into(),
        ..Row::blank()
    };
    match outcome {
        Outcome::Measured(m) => {
            let note = match &step.note {
                Some(why) => format!("{}; {why}", m.note()),
                None => m.note(),
            };
            m.samples
                .iter()
                .enumerate()
                .map(|(i, s)| Row {
                    sample: Some(step.first_sample + i as u32),
                    round: step.round,
                    iterations: Some(s.iterations),
                    seconds: Some(s.seconds),
                    timer: Some(timer.to_string()),
                    stop: Some(m.stop),
                    telemetry: step.telemetry,
                    ..base(Status::Measured, Some(note.clone()))
                })
                .collect()
        }
        Outcome::Skipped(why) => vec![base(Status::Skipped, Some(why.clone()))],
        Outcome::Failed(why) => vec![base(Status::Failed, Some(why.clone()))],
    }
}

/// The local driver: benchmarks of one backend and device, rows to a sink.
struct LocalDriver<'a> {
    benches: &'a mut [Box<dyn Benchmark>],
    owner: Vec<usize>,
    meta: &'a RowMeta,
    sink: &'a mut dyn RowSink,
    /// The benchmark of the step being measured.
    current: usize,
    /// The device's telemetry sampler, and what it read over the last step.
    monitor: Option<Monitor>,
    read: Option<crate::vocab::telemetry::StepTelemetry>,
    /// `--telemetry-ab`: steps measured so far per point (odd ones run
    /// with the sampler paused).
    ab: Option<Vec<u32>>,
}

impl StepDriver for LocalDriver<'_> {
    fn measure(&mut self, index: usize, point: &Point, sampler: &Sampler) -> Outcome {
        self.current = self.owner[index];
        let off = self.ab.as_mut().is_some_and(|steps| {
            steps[index] += 1;
            steps[index] % 2 == 0
        });
        if off {
            let m = self.monitor.as_ref().expect("--telemetry-ab runs with a sampler");
            m.pause();
            let outcome = self.benches[self.current].run(point, sampler);
            m.resume();
            self.read = None;
            return outcome;
        }
        let Some(m) = self.monitor.as_mut() else { return self.benches[self.current].run(point, sampler) };
        // A reading when the timed samples start and end; the step's
        // telemetry is read over them, not over its setup and validation.
        let sampler = Sampler { mark: Some(m.mark()), ..sampler.clone() };
        let from = m.begin();
        let outcome = self.benches[self.current].run(point, &sampler);
        let span = match &outcome {
            Outcome::Measured(x) => x.sampled.map(|(a, b)| (m.at(a), m.at(b))),
            _ => None,
        };
        self.read = m.end(from, span);
        outcome
    }

    fn record(&mut self, mut step: Step, point: &Point, outcome: &Outcome) -> Result<()> {
        let timer = self.benches[self.current].timer();
        step.telemetry = self.read.take();
        self.sink.write_point(outcome_rows(self.meta, step, point, timer, outcome))
    }
}

/// Run every point of `benches` on one device, numbering points from
/// `first_point`, within `budget_seconds` when given (else the rule's own).
/// Stops early (and says so) when an interrupt is requested.
pub fn run_benchmarks(
    benches: &mut [Box<dyn Benchmark>],
    cfg: &BenchConfig,
    meta: &RowMeta,
    first_point: u32,
    sink: &mut dyn RowSink,
    progress: &dyn Progress,
) -> Result<RunOutcome> {
    run_benchmarks_within(benches, cfg, cfg.stop.budget_seconds, meta, None, first_point, sink, progress)
}

/// [`run_benchmarks`] with this sweep's share of the run's budget, and the
/// device's sensor, read every `cfg.telemetry_ms` beside every point (none
/// when 0).
#[allow(clippy::too_many_arguments)]
pub fn run_benchmarks_within(
    benches: &mut [Box<dyn Benchmark>],
    cfg: &BenchConfig,
    budget_seconds: Option<f64>,
    meta: &RowMeta,
    sensor: Option<SensorOpener>,
    first_point: u32,
    sink: &mut dyn RowSink,
    progress: &dyn Progress,
) -> Result<RunOutcome> {
    let mut plan = Vec::new();
    let mut owner = Vec::new();
    for (i, b) in benches.iter().enumerate() {
        for p in b.points(cfg) {
            plan.push(p);
            owner.push(i);
        }
    }
    if plan.is_empty() {
        return Ok(RunOutcome::default());
    }
    let schedule = Schedule { budget_seconds, ..Schedule::new(cfg.stop.clone(), &meta.run_id) };
    let monitor = sensor.filter(|_| cfg.telemetry_ms > 0).map(|open| Monitor::start(open, cfg.telemetry_ms));
    let ab = (cfg.telemetry_ab && monitor.is_some()).then(|| vec![0; plan.len()]);
    let mut driver = LocalDriver { benches, owner, meta, sink, current: 0, monitor, read: None, ab };
    let mut outcome = schedule.run(&plan, first_point, &mut driver, progress)?;
    if let Some(m) = driver.monitor.take() {
        outcome.telemetry.push(m.finish(&meta.backend, &meta.device));
    }
    Ok(outcome)
}

/// The progress event for an outcome.
pub fn point_end(outcome: &Outcome) -> PointEnd<'_> {
    match outcome {
        Outcome::Measured(_) => PointEnd::Measured,
        Outcome::Skipped(why) => PointEnd::Skipped(why),
        Outcome::Failed(why) => PointEnd::Failed(why),
    }
}
