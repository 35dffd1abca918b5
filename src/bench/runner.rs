//! Drives benchmarks in rounds: every point once per round, in a shuffled
//! order, each round's rows handed to the sink at once. The sink (the
//! archive's run writer) makes them durable before the next step starts,
//! which is the whole of benchbook's "nothing lost when a run is
//! interrupted" promise.
//!
//! Rounds spread a burst of noise across points instead of onto one, and
//! give each point repeated, separated measurements, from which its
//! interval ([`crate::vocab::interval`]) is built. A point leaves the
//! schedule when its interval is narrow enough, when it has spent its time
//! (`max_seconds`, and its share of `budget_seconds`), or when it is
//! skipped or fails. Local runs and MPI jobs share this scheduler; an MPI
//! job passes an `agree` that makes every rank take the same decisions.
//!
//! The file is longer than 400 lines because the scheduler's tests (rounds,
//! order, budget, failures) sit beside it.

use std::time::Instant;

use super::sampler::StopReason;
use super::{BenchConfig, Benchmark, Outcome, Sampler, StopRule};
use crate::error::Result;
use crate::vocab::interrupt;
use crate::vocab::interval::{median_interval_floored, relative_spread, run_floor};
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

/// Where one step's rows sit: the point's index in the run, the round
/// (None outside a rounds schedule) and the index its first sample gets.
#[derive(Debug, Clone, Copy, Default)]
pub struct Step {
    pub point: u32,
    pub round: Option<u32>,
    pub first_sample: u32,
}

impl Step {
    /// A point measured once, outside any schedule.
    pub fn single(point: u32) -> Step {
        Step { point, round: None, first_sample: 0 }
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
            let note = m.note();
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
                    ..base(Status::Measured, Some(note.clone()))
                })
                .collect()
        }
        Outcome::Skipped(why) => vec![base(Status::Skipped, Some(why.clone()))],
        Outcome::Failed(why) => vec![base(Status::Failed, Some(why.clone()))],
    }
}

/// Where a point stands in the schedule.
#[derive(Debug, Clone, Default)]
struct PointState {
    /// Per round, seconds per operation of each sample.
    rounds: Vec<Vec<f64>>,
    /// The spread between its rounds ([`relative_spread`]), kept up to date
    /// so that the run's floor costs one pass over points, not over samples.
    spread: Option<f64>,
    samples: u32,
    batch: Option<u64>,
    /// Wall seconds spent on the point, allocation and validation included.
    spent: f64,
    /// Whether it has left the schedule.
    done: bool,
    /// Whether any round ran.
    ran: bool,
    failed: bool,
    skipped: bool,
}

/// How the steps of a schedule are measured and recorded; local runs and
/// MPI jobs differ only here.
pub trait StepDriver {
    /// Measure `point` (index `index` in the plan) with `sampler`.
    fn measure(&mut self, index: usize, point: &Point, sampler: &Sampler) -> Outcome;
    /// Record the step's outcome (durably, before returning).
    fn record(&mut self, step: Step, point: &Point, outcome: &Outcome) -> Result<()>;
    /// The same answer on every process: a logical OR over MPI ranks, the
    /// value itself in one process.
    fn agree(&mut self, local: bool) -> bool {
        local
    }
}

/// The schedule of one sweep.
#[derive(Debug, Clone)]
pub struct Schedule {
    pub rule: StopRule,
    /// Seconds this sweep may take (`None`: per-point limits only).
    pub budget_seconds: Option<f64>,
    /// Seeds the shuffled order of each round (the run id's hash).
    pub seed: u64,
}

impl Schedule {
    pub fn new(rule: StopRule, run_id: &str) -> Schedule {
        let budget_seconds = rule.budget_seconds;
        Schedule { rule, budget_seconds, seed: fnv1a(run_id.as_bytes()) }
    }

    /// The order of one round: the active points, shuffled (round 0 too:
    /// sizes must not meet the machine's state in the same order each run).
    fn order(&self, round: u32, active: Vec<usize>) -> Vec<usize> {
        use rand::seq::SliceRandom;
        let mut order = active;
        let mut rng = crate::vocab::stats::seeded_rng(self.seed ^ (round as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        if self.rule.rounds > 1 {
            order.shuffle(&mut rng);
        }
        order
    }

    /// Run `plan` through `driver`, numbering points from `first_point`.
    pub fn run(
        &self,
        plan: &[Point],
        first_point: u32,
        driver: &mut dyn StepDriver,
        progress: &dyn Progress,
    ) -> Result<RunOutcome> {
        let rule = &self.rule;
        let rounds = rule.rounds.max(1);
        let min_rounds = rule.min_rounds.clamp(1, rounds);
        let start = Instant::now();
        let mut states = vec![PointState::default(); plan.len()];
        progress.planned(plan.len() as u64 * rounds as u64);
        let mut interrupted = false;
        'rounds: for round in 0..rounds {
            let active: Vec<usize> = (0..plan.len()).filter(|&i| !states[i].done).collect();
            if active.is_empty() {
                break;
            }
            let rounds_left = (rounds - round) as f64;
            for (pos, &i) in self.order(round, active.clone()).iter().enumerate() {
                if driver.agree(interrupt::requested()) {
                    interrupted = true;
                    break 'rounds;
                }
                // This round's share of what the point has left, and of what
                // the sweep has left for the points still in this round.
                let st = &states[i];
                let mut slice = (rule.max_seconds - st.spent) / rounds_left;
                if let Some(b) = self.budget_seconds {
                    let still = (active.len() - pos) as f64;
                    let left = b - start.elapsed().as_secs_f64();
                    slice = slice.min(left / still / rounds_left);
                }
                let point = &plan[i];
                let label = if rounds > 1 {
                    format!("{} · round {}/{rounds}", point.label(), round + 1)
                } else {
                    point.label()
                };
                // Without a sweep budget every point gets two rounds, so that
                // its interval can rest on rounds, even where one round of a
                // large point (fresh buffers, warm-up, validation) spends its
                // --max-time.
                let owed = self.budget_seconds.is_none() && st.rounds.len() < 2.min(min_rounds as usize);
                if owed {
                    slice = slice.max(rule.max_seconds / rounds as f64);
                }
                if driver.agree(slice <= 0.0 && st.ran) {
                    // Out of time: the point keeps the rounds it has.
                    states[i].done = true;
                    progress.unplanned(rounds_left as u64);
                    continue;
                }
                progress.point_started(&label);
                let sampler = Sampler {
                    rule: rule.for_round(round, slice.max(rule.sample_seconds)),
                    batch_hint: states[i].batch,
                };
                let t0 = Instant::now();
                let outcome = driver.measure(i, point, &sampler);
                if matches!(&outcome, Outcome::Measured(m) if m.stop == StopReason::Interrupted) {
                    // A step cut short is not a measurement of the point.
                    interrupted = true;
                    break 'rounds;
                }
                let st = &mut states[i];
                let step = Step {
                    point: first_point + i as u32,
                    round: (rounds > 1).then_some(round),
                    first_sample: st.samples,
                };
                driver.record(step, point, &outcome)?;
                st.spent += t0.elapsed().as_secs_f64();
                st.ran = true;
                let (mut done, mut check) = (false, false);
                match &outcome {
                    Outcome::Measured(m) => {
                        st.samples += m.samples.len() as u32;
                        st.batch = Some(m.batch);
                        st.rounds.push(m.samples.iter().map(|s| s.seconds / s.iterations.max(1) as f64).collect());
                        st.spread = relative_spread(&st.rounds);
                        check = st.rounds.len() as u32 >= min_rounds && rounds > 1;
                    }
                    Outcome::Skipped(_) => {
                        st.skipped = true;
                        done = true;
                    }
                    Outcome::Failed(_) => {
                        st.failed = true;
                        done = true;
                    }
                }
                if check {
                    // The same floor the analysis puts under the spread.
                    let floor = run_floor(states.iter().filter_map(|s| s.spread));
                    done = median_interval_floored(&states[i].rounds, floor)
                        .is_some_and(|ci| ci.relative_half_width() <= rule.target_ci);
                }
                progress.point_finished(&label, point_end(&outcome));
                if driver.agree(done) && round + 1 < rounds {
                    states[i].done = true;
                    progress.unplanned(rounds_left as u64 - 1);
                }
            }
        }
        let mut out = RunOutcome { interrupted, ..RunOutcome::default() };
        for st in states.iter().filter(|s| s.ran) {
            out.count(if st.failed {
                Status::Failed
            } else if st.skipped {
                Status::Skipped
            } else {
                Status::Measured
            });
        }
        Ok(out)
    }
}

/// FNV-1a, 64-bit: a stable seed from text.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3))
}

/// The local driver: benchmarks of one backend and device, rows to a sink.
struct LocalDriver<'a> {
    benches: &'a mut [Box<dyn Benchmark>],
    owner: Vec<usize>,
    meta: &'a RowMeta,
    sink: &'a mut dyn RowSink,
    /// The benchmark of the step being measured.
    current: usize,
}

impl StepDriver for LocalDriver<'_> {
    fn measure(&mut self, index: usize, point: &Point, sampler: &Sampler) -> Outcome {
        self.current = self.owner[index];
        self.benches[self.current].run(point, sampler)
    }

    fn record(&mut self, step: Step, point: &Point, outcome: &Outcome) -> Result<()> {
        let timer = self.benches[self.current].timer();
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
    run_benchmarks_within(benches, cfg, cfg.stop.budget_seconds, meta, first_point, sink, progress)
}

/// [`run_benchmarks`] with this sweep's share of the run's budget.
pub fn run_benchmarks_within(
    benches: &mut [Box<dyn Benchmark>],
    cfg: &BenchConfig,
    budget_seconds: Option<f64>,
    meta: &RowMeta,
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
    let mut driver = LocalDriver { benches, owner, meta, sink, current: 0 };
    schedule.run(&plan, first_point, &mut driver, progress)
}

/// The progress event for an outcome.
pub fn point_end(outcome: &Outcome) -> PointEnd<'_> {
    match outcome {
        Outcome::Measured(_) => PointEnd::Measured,
        Outcome::Skipped(why) => PointEnd::Skipped(why),
        Outcome::Failed(why) => PointEnd::Failed(why),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sampler::{Measurement, Sample};
    use crate::vocab::benches::Bench;
    use crate::vocab::progress::Silent;

    /// A driver whose points take no time: each step returns `per_round`
    /// samples whose per-operation times come from `time(point, round)`.
    struct Fake<F: FnMut(usize, u32) -> f64> {
        time: F,
        steps: Vec<(usize, u32)>,
        rows: Vec<Row>,
        round_of: Vec<u32>,
        sleep_ms: u64,
    }

    impl<F: FnMut(usize, u32) -> f64> StepDriver for Fake<F> {
        fn measure(&mut self, index: usize, _point: &Point, sampler: &Sampler) -> Outcome {
            let round = self.round_of[index];
            self.round_of[index] += 1;
            self.steps.push((index, round));
            if self.sleep_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(self.sleep_ms));
            }
            assert!(sampler.rule.max_seconds > 0.0);
            let t = (self.time)(index, round);
            let samples =
                (0..5).map(|k| Sample { iterations: 10, seconds: 10.0 * t * (1.0 + k as f64 * 1e-4) }).collect();
            Outcome::Measured(Measurement { samples, stop: StopReason::Converged, rsd: 0.0, batch: 10 })
        }

        fn record(&mut self, step: Step, point: &Point, outcome: &Outcome) -> Result<()> {
            let meta =
                RowMeta { run_id: "r".into(), backend: "cpu".into(), device: "d".into(), host: "h".into(), rank: 0 };
            self.rows.extend(outcome_rows(&meta, step, point, "fake", outcome));
            Ok(())
        }
    }

    fn plan(n: usize) -> Vec<Point> {
        (0..n)
            .map(|i| Point {
                bench: Bench::Memcpy.name().into(),
                op: "copy".into(),
                size_bytes: Some(4096 << i),
                ..Point::default()
            })
            .collect()
    }

    fn fake<F: FnMut(usize, u32) -> f64>(n: usize, time: F) -> Fake<F> {
        Fake { time, steps: Vec::new(), rows: Vec::new(), round_of: vec![0; n], sleep_ms: 0 }
    }

    fn rule() -> StopRule {
        StopRule { rounds: 5, min_rounds: 3, target_ci: 0.01, max_seconds: 10.0, ..StopRule::default() }
    }

    #[test]
    fn steady_points_stop_after_the_minimum_rounds_noisy_ones_run_them_all() {
        // Point 0 is steady; point 1 moves 20 % from round to round.
        let mut d = fake(2, |i, r| if i == 0 { 1e-6 } else { 1e-6 * (1.0 + 0.2 * (r % 2) as f64) });
        let out = Schedule::new(rule(), "run-a").run(&plan(2), 0, &mut d, &Silent).unwrap();
        let rounds = |i: usize| d.steps.iter().filter(|s| s.0 == i).count();
        assert_eq!(rounds(0), 3, "{:?}", d.steps);
        assert_eq!(rounds(1), 5, "{:?}", d.steps);
        assert_eq!(out.measured, 2);
        assert_eq!(out.points, 2);
        // Rows carry their round, and samples count on across rounds.
        let p1: Vec<&Row> = d.rows.iter().filter(|r| r.point == 1).collect();
        assert_eq!(p1.iter().map(|r| r.sample.unwrap()).collect::<Vec<_>>(), (0..25).collect::<Vec<_>>());
        assert_eq!(p1.iter().filter_map(|r| r.round).max(), Some(4));
        assert!(d.rows.iter().all(|r| r.round.is_some()));
    }

    #[test]
    fn each_round_visits_points_in_a_shuffled_order_seeded_by_the_run() {
        let order = |run: &str| {
            let mut d = fake(12, |_, r| 1e-6 * (1.0 + 0.3 * (r % 2) as f64));
            Schedule::new(rule(), run).run(&plan(12), 0, &mut d, &Silent).unwrap();
            d.steps
        };
        let a = order("run-a");
        assert_eq!(a, order("run-a"), "the same run id gives the same order");
        assert_ne!(a, order("run-b"));
        let round = |r: u32| a.iter().filter(|s| s.1 == r).map(|s| s.0).collect::<Vec<_>>();
        assert_eq!(round(0).len(), 12);
        assert_ne!(round(0), round(1), "rounds are not visited in one fixed order");
        assert_ne!(round(0), (0..12).collect::<Vec<_>>(), "round 0 is shuffled too");
    }

    #[test]
    fn one_round_is_the_old_single_pass() {
        let mut d = fake(3, |_, _| 1e-6);
        let r = StopRule { rounds: 1, min_rounds: 1, ..rule() };
        Schedule::new(r, "x").run(&plan(3), 7, &mut d, &Silent).unwrap();
        assert_eq!(d.steps, vec![(0, 0), (1, 0), (2, 0)]);
        assert!(d.rows.iter().all(|r| r.round.is_none()), "one pass stores no round");
        assert_eq!(d.rows[0].point, 7);
    }

    #[test]
    fn a_spent_budget_ends_every_point_after_its_first_round() {
        // 20 ms per step against a 50 ms budget for 6 points: round 0 alone
        // overruns it, so no point gets a second round, and none is skipped.
        let mut d = fake(6, |_, r| 1e-6 * (1.0 + 0.3 * (r % 2) as f64));
        d.sleep_ms = 20;
        let s = Schedule { budget_seconds: Some(0.05), ..Schedule::new(rule(), "b") };
        let out = s.run(&plan(6), 0, &mut d, &Silent).unwrap();
        assert_eq!(d.steps.len(), 6, "{:?}", d.steps);
        assert_eq!(out.measured, 6);
    }

    #[test]
    fn a_failure_ends_the_point_and_counts_as_failed() {
        struct Failing(u32);
        impl StepDriver for Failing {
            fn measure(&mut self, _: usize, _: &Point, _: &Sampler) -> Outcome {
                self.0 += 1;
                Outcome::Failed("validation".into())
            }
            fn record(&mut self, _: Step, _: &Point, _: &Outcome) -> Result<()> {
                Ok(())
            }
        }
        let mut d = Failing(0);
        let out = Schedule::new(rule(), "f").run(&plan(2), 0, &mut d, &Silent).unwrap();
        assert_eq!(d.0, 2, "a failed point is not measured again");
        assert_eq!(out.failed, 2);
    }
}
