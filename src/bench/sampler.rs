//! The measurement engine: time-based warm-up, batching so one sample is
//! long enough to time, and nvbench's noise-based stopping rule: keep taking
//! samples until their relative standard deviation falls under a target,
//! after a minimum count and measured time, with a maximum time per point.
//! Every sample is returned; nothing is averaged away here.

use std::time::Instant;

use crate::vocab::interrupt;
use crate::vocab::stats::rel_std_dev;

pub use crate::vocab::facts::StopRule;
pub use crate::vocab::kinds::StopReason;

/// One timed sample.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    pub iterations: u64,
    pub seconds: f64,
}

/// All samples of one point and why sampling stopped.
#[derive(Debug, Clone)]
pub struct Measurement {
    pub samples: Vec<Sample>,
    pub stop: StopReason,
    /// Relative std. dev. of per-operation times when sampling stopped.
    pub rsd: f64,
    /// Operations per sample: the batch the warm-up calibrated, which the
    /// next round of the same point starts from.
    pub batch: u64,
    /// Seconds inside timed operations, warm-up included: what a point's
    /// `max_seconds` counts (setup and validation around them do not).
    pub timed_seconds: f64,
    /// What the benchmark adds to the note (a GEMM's algorithm).
    pub detail: Option<String>,
    /// Seconds of one-time work in this step (a GPU's clock ramp, timing
    /// GEMM algorithms): a budget must not expect them again next round.
    pub setup_seconds: f64,
    /// When its timed operations (warm-up included: the same operation)
    /// started and ended: the window its telemetry is read over, not the
    /// setup and validation around it.
    pub sampled: Option<(Instant, Instant)>,
}

impl Measurement {
    /// The note stored with every row of the point.
    pub fn note(&self) -> String {
        let base = format!("{}; rsd {:.3} %", self.stop.words(), self.rsd * 100.0);
        match &self.detail {
            Some(d) => format!("{base}; {d}"),
            None => base,
        }
    }
}

/// Runs the stopping rule over a timed closure.
#[derive(Debug, Clone, Default)]
pub struct Sampler {
    pub rule: StopRule,
    /// A batch size from an earlier round of the same point: warm-up starts
    /// there instead of doubling up from one operation.
    pub batch_hint: Option<u64>,
    /// Called when the timed samples start and when they end (the
    /// telemetry sampler takes a reading at each).
    pub mark: Option<Mark>,
}

/// A callback at the edges of the timed samples.
#[derive(Clone)]
pub struct Mark(pub std::sync::Arc<dyn Fn() + Send + Sync>);

impl std::fmt::Debug for Mark {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Mark")
    }
}

impl Sampler {
    pub fn new(rule: StopRule) -> Self {
        Sampler { rule, batch_hint: None, mark: None }
    }

    /// Measure `timed`, which runs `n` operations and returns the seconds
    /// they took by its own clock (a CPU steady clock, or device events).
    /// An `Err` from `timed` aborts the point with that message.
    pub fn measure(&self, timed: &mut dyn FnMut(u64) -> Result<f64, String>) -> Result<Measurement, String> {
        self.measure_synced(
            &mut |n, deadline| {
                let seconds = timed(n)?;
                Ok(Synced::local(seconds, deadline))
            },
            &mut |local| local,
        )
    }

    /// [`Sampler::measure`] for several processes measuring together (MPI
    /// ranks): every decision that depends on a local clock or signal must
    /// come out the same on every rank, so that all ranks take the same
    /// number of samples. `timed(n, deadline)` runs `n` operations and
    /// returns a [`Synced`]: the slowest rank's seconds, and whether any
    /// rank was interrupted or past `deadline` when its operations ended,
    /// agreed in the same reduction (one collective per sample, not three).
    /// `agree` (e.g. a logical OR over ranks) settles the few decisions of
    /// the warm-up.
    pub fn measure_synced(
        &self,
        timed: &mut dyn FnMut(u64, Instant) -> Result<Synced, String>,
        agree: &mut dyn FnMut(bool) -> bool,
    ) -> Result<Measurement, String> {
        let r = &self.rule;
        // Warm-up: double the batch until one batch is sample-sized, and keep
        // going until the warm-up time is spent. The last batch calibrates, so
        // warm-up also continues until a batch is sample-sized (a slow first
        // call, e.g. connection setup, must not size the batches), but never
        // past the point's maximum time.
        if let Some(m) = &self.mark {
            (m.0)();
        }
        let start = Instant::now();
        let timed_from = start;
        let after = |from: Instant, s: f64| from + std::time::Duration::from_secs_f64(s.clamp(0.0, 1e9));
        let mut iters: u64 = self.batch_hint.unwrap_or(1).clamp(1, 1 << 40);
        let mut per_op;
        let mut timed_seconds = 0.0;
        loop {
            let t = timed(iters, after(start, r.max_seconds))?.seconds;
            timed_seconds += t;
            per_op = t / iters as f64;
            let calibrated = t >= r.sample_seconds || iters >= (1 << 40);
            if !calibrated {
                iters *= 2;
            }
            let elapsed = start.elapsed().as_secs_f64();
            let done =
                (elapsed >= r.warmup_seconds && calibrated) || elapsed >= r.max_seconds || interrupt::requested();
            if agree(done) {
                break;
            }
        }
        let batch = if per_op > 0.0 { ((r.sample_seconds / per_op).round() as u64).max(1) } else { iters };

        let deadline = after(Instant::now(), r.max_seconds);
        let mut samples = Vec::new();
        let mut per_op_times = Vec::new();
        let mut measured = 0.0;
        if agree(interrupt::requested()) {
            return Ok(Measurement::interrupted(batch, timed_seconds));
        }
        let stop = loop {
            let synced = timed(batch, deadline)?;
            let t = synced.seconds;
            if synced.interrupted {
                break StopReason::Interrupted;
            }
            if !(t.is_finite() && t >= 0.0) {
                return Err(format!("the timer returned {t} seconds"));
            }
            measured += t;
            timed_seconds += t;
            samples.push(Sample { iterations: batch, seconds: t });
            per_op_times.push(t / batch as f64);
            let n = samples.len();
            if n >= r.min_samples && measured >= r.min_seconds && rel_std_dev(&per_op_times) <= r.target_rsd {
                break StopReason::Converged;
            }
            // Two samples at least, unless the rule asks for one (a round of
            // a point whose operations are slow: its round median is then
            // that sample, and the spread comes from the rounds).
            if synced.past_deadline && n >= r.min_samples_on_time.min(r.min_samples).max(1) {
                break StopReason::MaxTime;
            }
            if n >= r.max_samples {
                break StopReason::MaxSamples;
            }
        };
        let rsd = rel_std_dev(&per_op_times);
        let sampled = Some((timed_from, Instant::now()));
        if let Some(m) = &self.mark {
            (m.0)();
        }
        Ok(Measurement { samples, stop, rsd, batch, timed_seconds, detail: None, setup_seconds: 0.0, sampled })
    }
}

/// One sample as every process measuring together agrees on it
/// ([`Sampler::measure_synced`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Synced {
    /// The slowest process's seconds for the batch.
    pub seconds: f64,
    /// Whether any process had an interrupt requested.
    pub interrupted: bool,
    /// Whether any process's clock had passed the deadline when its
    /// operations ended.
    pub past_deadline: bool,
}

impl Synced {
    /// One process alone: its own seconds, signal and clock.
    pub fn local(seconds: f64, deadline: Instant) -> Synced {
        Synced { seconds, interrupted: interrupt::requested(), past_deadline: Instant::now() >= deadline }
    }
}

impl Measurement {
    /// A step interrupted before its first sample.
    fn interrupted(batch: u64, timed_seconds: f64) -> Measurement {
        Measurement {
            samples: Vec::new(),
            stop: StopReason::Interrupted,
            rsd: rel_std_dev(&[]),
            batch,
            timed_seconds,
            detail: None,
            setup_seconds: 0.0,
            sampled: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> StopRule {
        StopRule {
            warmup_seconds: 0.0,
            min_samples: 5,
            min_seconds: 0.0,
            max_seconds: 10.0,
            target_rsd: 0.01,
            sample_seconds: 0.001,
            max_samples: 1000,
            ..StopRule::default()
        }
    }

    #[test]
    fn a_steady_timer_converges_at_min_samples_and_batches() {
        // A fake clock: each op takes 1 µs exactly.
        let mut calls = Vec::new();
        let m = Sampler::new(rule())
            .measure(&mut |n| {
                calls.push(n);
                Ok(n as f64 * 1e-6)
            })
            .unwrap();
        assert_eq!(m.stop, StopReason::Converged);
        assert_eq!(m.samples.len(), 5);
        // 1 ms per sample at 1 µs per op.
        assert!(m.samples.iter().all(|s| s.iterations == 1000), "{:?}", m.samples);
        assert_eq!(m.rsd, 0.0);
        assert_eq!(m.batch, 1000);
    }

    #[test]
    fn a_batch_hint_skips_the_doubling() {
        let mut calls = Vec::new();
        let sampler = Sampler { rule: rule(), batch_hint: Some(1000), mark: None };
        let m = sampler
            .measure(&mut |n| {
                calls.push(n);
                Ok(n as f64 * 1e-6)
            })
            .unwrap();
        assert_eq!(calls[0], 1000, "warm-up starts at the hinted batch: {calls:?}");
        assert_eq!(calls.len(), 1 + m.samples.len(), "one warm-up batch, then the samples: {calls:?}");
    }

    #[test]
    fn a_noisy_timer_runs_to_max_samples() {
        let mut k = 0u64;
        let mut r = rule();
        r.max_samples = 50;
        let m = Sampler::new(r)
            .measure(&mut |n| {
                k += 1;
                Ok(n as f64 * if k.is_multiple_of(2) { 1e-6 } else { 2e-6 })
            })
            .unwrap();
        assert_eq!(m.stop, StopReason::MaxSamples);
        assert_eq!(m.samples.len(), 50);
        assert!(m.rsd > 0.1);
    }

    #[test]
    fn timer_errors_abort_the_point() {
        let e = Sampler::new(rule()).measure(&mut |_| Err("boom".into())).unwrap_err();
        assert_eq!(e, "boom");
    }

    #[test]
    fn max_time_bounds_a_point() {
        let mut r = rule();
        r.max_seconds = 0.05;
        r.target_rsd = 0.0; // never converges
        let mut k = 0u64;
        let m = Sampler::new(r)
            .measure(&mut |n| {
                k += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
                Ok(n as f64 * (1.0 + (k % 3) as f64) * 1e-3)
            })
            .unwrap();
        assert_eq!(m.stop, StopReason::MaxTime);
    }
}
