//! An MPI job's steps: every rank measures, rank 0 gathers each step's
//! rows and alone writes them, and every decision is agreed over ranks.

use std::collections::BTreeMap;

use mpi::topology::SimpleCommunicator;

use super::{any, gather_bytes, max_f64, measure_point, DeviceSide};
use crate::bench::runner::{outcome_rows, RowMeta, Step, StepDriver};
use crate::bench::{Outcome, Sampler};
use crate::error::{Error, Result};
use crate::vocab::benches::Bench;
use crate::vocab::rows::{Point, Row, RowSink};

/// Steps of an MPI job: every rank measures, rank 0 gathers each step's
/// rows from all ranks and alone writes them; decisions are OR-ed over ranks.
pub(super) struct MpiDriver<'a> {
    pub(super) world: &'a SimpleCommunicator,
    pub(super) meta: &'a RowMeta,
    pub(super) sink: &'a mut dyn RowSink,
    pub(super) failure: Option<String>,
    pub(super) device: Option<&'a DeviceSide>,
    /// This rank's own times for the samples of the step just measured.
    pub(super) own: Vec<f64>,
    /// Link sweep, first pass: this rank's own seconds per exchange, by
    /// the round's pairs.
    pub(super) link_times: BTreeMap<String, Vec<f64>>,
}

impl StepDriver for MpiDriver<'_> {
    /// The outcome every rank shares: the schedule's decisions (rounds,
    /// shares, the pool) rest on its maxima, so every rank makes them
    /// alike and calls `agree` as often as the others.
    ///
    /// A step's share is counted in wall seconds over its sampling, the
    /// slowest rank's: under MPI the barrier and the reduction around each
    /// sample are part of measuring, and on oversubscribed ranks they take
    /// as long as the operations. Counted in timed operations alone, a
    /// point's share let a 4-rank p2p sweep run three times its shares.
    fn measure(&mut self, _index: usize, point: &Point, sampler: &Sampler) -> Outcome {
        let (mut outcome, own) = measure_point(self.world, point, sampler, self.device);
        self.own = own;
        let wall = match &outcome {
            Outcome::Measured(m) => m.sampled.map_or(0.0, |(a, b)| (b - a).as_secs_f64()),
            _ => 0.0,
        };
        let wall = max_f64(self.world, wall);
        if let Outcome::Measured(m) = &mut outcome {
            m.timed_seconds = m.timed_seconds.max(wall);
        }
        outcome
    }

    /// Rows with this rank's own sample times (the analysis takes the
    /// per-sample maximum over ranks).
    fn record(&mut self, step: Step, point: &Point, outcome: &Outcome) -> Result<()> {
        let rows = match outcome {
            Outcome::Measured(m) => {
                let mut mine = m.clone();
                for (s, t) in mine.samples.iter_mut().zip(std::mem::take(&mut self.own)) {
                    s.seconds = t;
                }
                if point.bench == Bench::Links && point.op == crate::vocab::pairs::ROUND_OP {
                    let times = self.link_times.entry(point.peer.clone().unwrap_or_default()).or_default();
                    times.extend(mine.samples.iter().map(|s| s.seconds / s.iterations.max(1) as f64));
                }
                outcome_rows(self.meta, step, point, "mpi_wtime", &Outcome::Measured(mine))
            }
            _ => outcome_rows(self.meta, step, point, "mpi_wtime", outcome),
        };
        if let Some(all) = gather_bytes(self.world, serde_json::to_vec(&rows).expect("rows serialize")) {
            let mut gathered: Vec<Row> = Vec::new();
            for (r, bytes) in all.iter().enumerate() {
                match serde_json::from_slice::<Vec<Row>>(bytes) {
                    Ok(rs) => gathered.extend(rs),
                    Err(e) => self.failure = Some(format!("rank {r} sent unreadable rows: {e}")),
                }
            }
            if let Err(e) = self.sink.write_point(gathered) {
                self.failure = Some(e.to_string());
            }
        }
        if any(self.world, self.failure.is_some()) {
            return Err(Error::Mpi(self.failure.take().unwrap_or_else(|| {
                "another rank reported an error and the job stopped; rank 0's output and the run's manifest say which"
                    .into()
            })));
        }
        Ok(())
    }

    fn agree(&mut self, local: bool) -> bool {
        any(self.world, local)
    }
}
