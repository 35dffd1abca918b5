//! Drives benchmarks point by point: measure, turn the outcome into rows,
//! hand them to the sink at once. The sink (the archive's run writer) makes
//! them durable before the next point starts, which is the whole of
//! benchbook's "nothing lost when a run is interrupted" promise.

use super::sampler::StopReason;
use super::{BenchConfig, Benchmark, Outcome, Sampler};
use crate::error::Result;
use crate::vocab::interrupt;
use crate::vocab::progress::{PointEnd, Progress};
use crate::vocab::rows::{Point, Row, RowSink, RunOutcome, Status};

/// The columns every row of one backend/device shares.
#[derive(Debug, Clone)]
pub struct RowMeta {
    pub run_id: String,
    pub backend: String,
    pub device: String,
    pub host: String,
    pub rank: u32,
}

/// The rows of one point's outcome.
pub fn outcome_rows(meta: &RowMeta, index: u32, point: &Point, timer: &str, outcome: &Outcome) -> Vec<Row> {
    let base = |status, note: Option<String>| Row {
        run_id: meta.run_id.clone(),
        backend: meta.backend.clone(),
        device: meta.device.clone(),
        host: meta.host.clone(),
        rank: meta.rank,
        point: index,
        params: point.clone(),
        sample: None,
        iterations: None,
        seconds: None,
        value: None,
        timer: None,
        status,
        note,
        stop: None,
        source: "native".into(),
    };
    match outcome {
        Outcome::Measured(m) => {
            let note = m.note();
            m.samples
                .iter()
                .enumerate()
                .map(|(i, s)| Row {
                    sample: Some(i as u32),
                    iterations: Some(s.iterations),
                    seconds: Some(s.seconds),
                    value: None,
                    timer: Some(timer.to_string()),
                    stop: Some(m.stop),
                    ..base(Status::Measured, Some(note.clone()))
                })
                .collect()
        }
        Outcome::Skipped(why) => vec![base(Status::Skipped, Some(why.clone()))],
        Outcome::Failed(why) => vec![base(Status::Failed, Some(why.clone()))],
    }
}

/// Run every point of `benches`, numbering points from `first_point`.
/// Stops early (and says so) when an interrupt is requested.
pub fn run_benchmarks(
    benches: &mut [Box<dyn Benchmark>],
    cfg: &BenchConfig,
    meta: &RowMeta,
    first_point: u32,
    sink: &mut dyn RowSink,
    progress: &dyn Progress,
) -> Result<RunOutcome> {
    let sampler = Sampler::new(cfg.stop.clone());
    let plan: Vec<(usize, Point)> =
        benches.iter().enumerate().flat_map(|(i, b)| b.points(cfg).into_iter().map(move |p| (i, p))).collect();
    progress.planned(plan.len() as u64);
    let mut out = RunOutcome::default();
    for (bench_index, point) in plan {
        if interrupt::requested() {
            out.interrupted = true;
            break;
        }
        let label = point.label();
        progress.point_started(&label);
        let bench = &mut benches[bench_index];
        let outcome = bench.run(&point, &sampler);
        if matches!(&outcome, Outcome::Measured(m) if m.stop == StopReason::Interrupted) {
            // A point cut short is not a measurement of that point.
            out.interrupted = true;
            break;
        }
        let rows = outcome_rows(meta, first_point + out.points, &point, bench.timer(), &outcome);
        out.count(outcome.status());
        sink.write_point(rows)?;
        progress.point_finished(&label, point_end(&outcome));
    }
    Ok(out)
}

/// The progress event for an outcome.
pub fn point_end(outcome: &Outcome) -> PointEnd<'_> {
    match outcome {
        Outcome::Measured(_) => PointEnd::Measured,
        Outcome::Skipped(why) => PointEnd::Skipped(why),
        Outcome::Failed(why) => PointEnd::Failed(why),
    }
}
