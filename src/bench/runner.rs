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
use super::{Outcome, Sampler, StopRule};
use crate::error::Result;
use crate::vocab::interrupt;
use crate::vocab::interval::{median_interval_moderated, prior_spreads, relative_spread};
use crate::vocab::kinds::ROUNDS_FIT;
use crate::vocab::progress::Progress;
use crate::vocab::rows::{Point, RunOutcome, Status};

pub use super::steps::{outcome_rows, point_end, run_benchmarks, run_benchmarks_within, RowMeta, Step};

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
    /// Seconds inside its timed operations, warm-up included: what its
    /// share (`max_seconds`, and time granted from the pool) counts.
    timed: f64,
    /// Seconds granted from the pool on top of `max_seconds`.
    granted: f64,
    /// Median seconds per operation of its latest round.
    per_op: f64,
    /// Whether its first round showed that its minimum rounds fit.
    fits: bool,
    /// Wall seconds of its latest step outside its timed operations
    /// (buffers, inputs, validation, recording): what a budget must leave
    /// room for besides the slice.
    overhead: Option<f64>,
    /// Whether it has left the schedule.
    done: bool,
    /// Whether any round ran.
    ran: bool,
    failed: bool,
    skipped: bool,
    /// Skipped before its first round because the budget could not give it
    /// its minimum rounds: what those rounds were expected to cost.
    unaffordable: Option<f64>,
    /// Wall seconds of its first step (warm-up and setup included).
    first_wall: Option<f64>,
}

impl PointState {
    /// Timed seconds it has left of its share.
    fn own_left(&self, max_seconds: f64) -> f64 {
        max_seconds + self.granted - self.timed
    }

    /// Timed seconds of the smallest round: one warm-up batch and one sample.
    fn smallest_round(&self) -> f64 {
        2.0 * self.per_op * self.batch.unwrap_or(1) as f64
    }

    /// Whether its minimum rounds fit in its share at one smallest round
    /// each, after what it has spent.
    fn minimum_fits(&self, min_rounds: u32, max_seconds: f64) -> bool {
        let missing = min_rounds.saturating_sub(self.rounds.len() as u32) as f64;
        self.timed + missing * self.smallest_round() <= max_seconds + self.granted
    }

    /// Wall seconds an owed round of it takes at least: its overhead, a
    /// warm-up batch and three samples (what a budget's owed step runs on).
    fn owed_step(&self) -> Option<f64> {
        (!self.rounds.is_empty()).then(|| self.overhead.unwrap_or(0.0) + 2.0 * self.smallest_round())
    }

    /// How far its interval is from the target (1: at it), with the prior
    /// its neighbours lend its spread.
    fn need(&self, prior: Option<f64>, target_ci: f64) -> f64 {
        median_interval_moderated(&self.rounds, prior).map_or(f64::INFINITY, |ci| ci.relative_half_width() / target_ci)
    }
}

/// Why a point will end with fewer rounds than the minimum although no
/// budget cuts it: one operation is so slow that they do not fit in its
/// share. Known after its first round, and stored with that round's rows.
fn short_of_rounds(st: &PointState, rule: &StopRule) -> String {
    let round = st.smallest_round();
    let fit = 1 + (st.own_left(rule.max_seconds).max(0.0) / round).floor() as u32;
    let needed = st.timed + round * (rule.min_rounds - 1) as f64;
    format!(
        "{fit} of {} {ROUNDS_FIT} one operation takes {}, a round times at least two, and --max-time {} s holds no more \
         (--max-time {:.2} would give {})",
        rule.min_rounds,
        crate::vocab::units::format_seconds(st.per_op),
        rule.max_seconds,
        needed * 1.05,
        rule.min_rounds
    )
}

/// How the steps of a schedule are measured and recorded; local runs and
/// MPI jobs differ only here.
///
/// Several processes running one schedule together (MPI ranks) must each
/// get the same outcome from `measure` (e.g. each sample the slowest
/// rank's time): the schedule's decisions rest on it, and a rank that
/// decided otherwise would call `agree` a different number of times and
/// leave the others waiting. What each process stores is `record`'s
/// business.
pub trait StepDriver {
    /// Measure `point` (index `index` in the plan) with `sampler`; the same
    /// outcome on every process that runs the schedule.
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
///
/// Every point is measured once per round, in a shuffled order. Each point
/// has a share of time (`max_seconds`, counted in timed operations: fresh
/// buffers and validation around them are not the point's doing), spread
/// over its rounds. The first `min_rounds` rounds are owed to every point
/// whose first round shows they fit, even at one sample each; a point
/// whose operations are too slow for them says so in its rows' note.
/// After the minimum, a point stops once its interval meets `target_ci`,
/// and the share it leaves goes to a pool; points that have spent their
/// own share draw a round at a time from it, widest interval (relative to
/// the target) first. Under a sweep budget (wall seconds), the budget
/// decides instead: each point's slice is its part of what is left,
/// weighted after the minimum rounds by how far its interval is from the
/// target.
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
        Schedule { rule, budget_seconds, seed: crate::vocab::stats::seed_of(run_id) }
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

    /// Each point's prior spread between rounds, as the analysis will lend
    /// it ([`prior_spreads`]).
    fn priors(&self, curves: &[(String, u64)], states: &[PointState]) -> Vec<Option<f64>> {
        let points: Vec<(&str, u64, Option<f64>)> =
            curves.iter().zip(states).map(|((k, place), s)| (k.as_str(), *place, s.spread)).collect();
        prior_spreads(&points)
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
        let max = rule.max_seconds;
        let start = Instant::now();
        let mut states = vec![PointState::default(); plan.len()];
        let curves: Vec<(String, u64)> = plan.iter().map(Point::curve).collect();
        // Timed seconds handed back by points that met the target early.
        let mut pool = 0.0f64;
        progress.planned(plan.len() as u64 * rounds as u64);
        let mut interrupted = false;
        'rounds: for round in 0..rounds {
            let mut active: Vec<usize> = (0..plan.len()).filter(|&i| !states[i].done).collect();
            if active.is_empty() {
                break;
            }
            let rounds_left = (rounds - round) as f64;
            let priors = self.priors(&curves, &states);
            let past_minimum = round >= min_rounds;
            // How far each point is from the target, once it has its minimum.
            let need: Vec<f64> = states
                .iter()
                .zip(&priors)
                .map(|(s, &p)| if past_minimum { s.need(p, rule.target_ci).clamp(1.0, 4.0) } else { 1.0 })
                .collect();
            let mut granted_now = vec![false; plan.len()];
            if past_minimum && self.budget_seconds.is_none() {
                // Points whose own share is spent draw one round each from the
                // pool, widest interval first; the rest leave the schedule.
                let mut spent: Vec<usize> =
                    active.iter().copied().filter(|&i| states[i].own_left(max) < states[i].smallest_round()).collect();
                spent.sort_by(|&a, &b| need[b].total_cmp(&need[a]));
                for i in spent {
                    let st = &mut states[i];
                    let round_cost = st.smallest_round().max(max / rounds as f64);
                    // Enough that what it has left is one round.
                    let extra = round_cost - st.own_left(max);
                    if !driver.agree(pool < extra) {
                        pool -= extra;
                        st.granted += extra;
                        granted_now[i] = true;
                    } else {
                        st.done = true;
                        progress.unplanned(rounds_left as u64);
                    }
                }
                active.retain(|&i| !states[i].done);
            }
            let order = self.order(round, active);
            let mut weight_left: f64 = order.iter().map(|&i| need[i]).sum();
            // Under a budget: the overhead a step of a point not yet measured
            // is expected to have (the mean of those measured), and the
            // overhead of every step the minimum rounds still owe.
            let budget_plan = self.budget_seconds.map(|_| {
                let known: Vec<f64> = states.iter().filter_map(|s| s.overhead).collect();
                let typical = if known.is_empty() { 0.0 } else { known.iter().sum::<f64>() / known.len() as f64 };
                let owed: f64 = order
                    .iter()
                    .map(|&j| {
                        let missing = min_rounds.saturating_sub(states[j].rounds.len() as u32) as f64;
                        missing * states[j].overhead.unwrap_or(typical)
                    })
                    .sum();
                (typical, owed)
            });
            let mut owed_overhead = budget_plan.map_or(0.0, |p| p.1);
            for &i in &order {
                if driver.agree(interrupt::requested()) {
                    interrupted = true;
                    break 'rounds;
                }
                let st = &states[i];
                let own = st.own_left(max);
                // This round's part of what the point has left (all of a
                // round granted from the pool), never more than an equal
                // share of its time: a round that does not converge (a GPU
                // at its power cap) must not take what the rounds that met
                // the noise target early left (it once held 362 of a
                // point's 422 samples); that time goes to the pool.
                let equal = max / rounds as f64;
                let mut slice = if granted_now[i] { own } else { (own / rounds_left).min(equal) };
                let owed = st.ran && (st.rounds.len() as u32) < min_rounds && st.fits;
                let mut out_of_time = st.ran && !owed && !granted_now[i] && own < st.smallest_round();
                let mut no_room: Option<String> = None;
                let keep_rounds = self.budget_seconds.is_some() && !rule.budget_prefers_points;
                if let (Some(b), false, true) = (self.budget_seconds, st.ran, keep_rounds) {
                    // A budget that keeps its promise: a point is measured
                    // only if its minimum rounds fit beside those the
                    // points already measured still owe, at the average
                    // step of the points measured so far.
                    let mean = |xs: Vec<f64>| (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64);
                    let first = mean(states.iter().filter_map(|s| s.first_wall).collect());
                    let later = mean(states.iter().filter_map(PointState::owed_step).collect());
                    if let (Some(first), Some(later)) = (first, later) {
                        let owed_by_others: f64 = states
                            .iter()
                            .filter(|s| s.ran && !s.done && !s.skipped && !s.failed)
                            .map(|s| {
                                let missing = min_rounds.saturating_sub(s.rounds.len() as u32) as f64;
                                missing * s.owed_step().unwrap_or(later)
                            })
                            .sum();
                        let left = b - start.elapsed().as_secs_f64();
                        let cost = first + (min_rounds - 1) as f64 * later;
                        if driver.agree(left - owed_by_others < cost) {
                            let why = format!(
                                "{BUDGET_WORDS} ({}) had {:.1} s left beside the rounds already owed when this \
                                 point's turn came, and its {min_rounds} rounds take about {cost:.1} s; give a larger \
                                 --budget (the run says how large), or --budget-prefers points to measure every point \
                                 in fewer rounds",
                                crate::vocab::units::format_seconds(b),
                                (left - owed_by_others).max(0.0)
                            );
                            driver.record(Step::single(first_point + i as u32), &plan[i], &Outcome::Skipped(why))?;
                            let st = &mut states[i];
                            (st.ran, st.skipped, st.done, st.unaffordable) = (true, true, true, Some(cost));
                            weight_left -= need[i];
                            progress.unplanned(rounds_left as u64);
                            continue;
                        }
                    }
                }
                let st = &states[i];
                if let (Some(b), Some((typical, _))) = (self.budget_seconds, budget_plan) {
                    // Its weighted part of what the sweep has left for the
                    // points still to come in this round, once the overheads
                    // the minimum rounds still owe are set aside.
                    let left = b - start.elapsed().as_secs_f64();
                    let overhead = st.overhead.unwrap_or(typical);
                    let owes = (st.rounds.len() as u32) < min_rounds;
                    if owes {
                        owed_overhead -= overhead;
                    }
                    let spare = left - owed_overhead - overhead;
                    slice = slice.min(spare.max(0.0) * need[i] / weight_left / rounds_left);
                    // The least a step costs: its overhead, a warm-up batch and
                    // three samples (known after its first round).
                    let least = st.owed_step().unwrap_or(overhead);
                    // Rounds owed to a measured point run even past the
                    // budget when the budget keeps its promise.
                    let promised = keep_rounds && owes && st.ran;
                    if !promised && (left - least < 0.0 || (st.ran && slice <= 0.0 && !owes)) {
                        out_of_time = true;
                        if !st.ran {
                            no_room = Some(format!(
                                "{BUDGET_WORDS} ({}) had {:.1} s left when this point's turn came, and a step of \
                                 it takes about {least:.1} s; give a larger --budget, or fewer points",
                                crate::vocab::units::format_seconds(b),
                                left.max(0.0)
                            ));
                        }
                    } else if owes {
                        // The minimum rounds are owed: a step runs even on a
                        // thin slice (the sampler takes three samples).
                        out_of_time = false;
                        slice = slice.max(st.smallest_round().min((left - least).max(0.0)));
                    }
                }
                weight_left -= need[i];
                if owed && self.budget_seconds.is_none() {
                    // Room for the rounds still owed after this one.
                    let later = (min_rounds - 1 - st.rounds.len() as u32) as f64 * st.smallest_round();
                    slice = slice.min(own - later).max(0.0);
                }
                if driver.agree(out_of_time) {
                    // Out of time: the point keeps the rounds it has, and its
                    // unused share (if any) goes to the pool. One that never
                    // ran is recorded as skipped, with the reason.
                    // Whether it ran is the same on every rank (the local
                    // reason may not be: clocks differ), so every rank
                    // records the skip; recording is collective under MPI.
                    if !states[i].ran {
                        let why = no_room.unwrap_or_else(|| {
                            format!("another rank found {BUDGET_WORDS} spent when this point's turn came; give a larger --budget, or fewer points")
                        });
                        let step = Step::single(first_point + i as u32);
                        driver.record(step, &plan[i], &Outcome::Skipped(why))?;
                        states[i].ran = true;
                        states[i].skipped = true;
                    }
                    states[i].done = true;
                    progress.unplanned(rounds_left as u64);
                    continue;
                }
                let point = &plan[i];
                let label = if rounds > 1 {
                    format!("{} · round {}/{rounds}", point.label(), round + 1)
                } else {
                    point.label()
                };
                progress.point_started(&label);
                let mut step_rule = rule.for_round(round, slice.max(0.0));
                if self.budget_seconds.is_some() && round < min_rounds {
                    // Under a budget, the minimum rounds take three samples each.
                    step_rule.min_samples_on_time = step_rule.min_samples_on_time.max(3.min(step_rule.min_samples));
                }
                let sampler = Sampler { rule: step_rule, batch_hint: states[i].batch, mark: None };
                let step_start = Instant::now();
                let outcome = driver.measure(i, point, &sampler);
                if matches!(&outcome, Outcome::Measured(m) if m.stop == StopReason::Interrupted) {
                    // A step cut short is not a measurement of the point.
                    interrupted = true;
                    break 'rounds;
                }
                let st = &mut states[i];
                let mut step = Step {
                    point: first_point + i as u32,
                    round: (rounds > 1).then_some(round),
                    first_sample: st.samples,
                    ..Step::default()
                };
                st.ran = true;
                let (mut done, mut check) = (false, false);
                match &outcome {
                    Outcome::Measured(m) => {
                        st.samples += m.samples.len() as u32;
                        st.batch = Some(m.batch);
                        st.timed += m.timed_seconds;
                        let per_op: Vec<f64> =
                            m.samples.iter().map(|s| s.seconds / s.iterations.max(1) as f64).collect();
                        st.per_op = crate::vocab::stats::median_unsorted(&mut per_op.clone());
                        st.rounds.push(per_op);
                        st.spread = relative_spread(&st.rounds);
                        if st.rounds.len() == 1 {
                            // The first round's calibration decides whether
                            // the minimum rounds fit; if not, its rows say so.
                            st.fits = st.minimum_fits(min_rounds, max);
                            if !st.fits && min_rounds > 1 && self.budget_seconds.is_none() {
                                step.note = Some(short_of_rounds(st, rule));
                            }
                        }
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
                driver.record(step, point, &outcome)?;
                if let Outcome::Measured(m) = &outcome {
                    let once = m.timed_seconds + m.setup_seconds;
                    let wall = step_start.elapsed().as_secs_f64();
                    states[i].overhead = Some((wall - once).max(0.0));
                    states[i].first_wall.get_or_insert(wall);
                }
                let mut met = false;
                if check {
                    // The same prior the analysis lends the spread.
                    let prior = self.priors(&curves, &states)[i];
                    met = median_interval_moderated(&states[i].rounds, prior)
                        .is_some_and(|ci| ci.relative_half_width() <= rule.target_ci);
                    done = met;
                }
                progress.point_finished(&label, point_end(&outcome));
                if driver.agree(done) && round + 1 < rounds {
                    let st = &mut states[i];
                    st.done = true;
                    if met {
                        pool += st.own_left(max).max(0.0);
                    }
                    progress.unplanned(rounds_left as u64 - 1);
                }
            }
        }
        let mut out = RunOutcome { interrupted, ..RunOutcome::default() };
        if self.budget_seconds.is_some() {
            // Points the budget left short of their minimum rounds, and what
            // their missing rounds would have cost at their own pace.
            let mut wanted = start.elapsed().as_secs_f64();
            wanted += states.iter().filter_map(|s| s.unaffordable).sum::<f64>();
            out.over_budget = states.iter().filter(|s| s.unaffordable.is_some()).count() as u32;
            for st in states.iter().filter(|s| s.ran && !s.failed && !s.skipped) {
                let done = st.rounds.len() as u32;
                if done < min_rounds && done > 0 && st.fits {
                    out.short_of_rounds += 1;
                    let step = st.overhead.unwrap_or(0.0) + st.timed / done as f64;
                    wanted += (min_rounds - done) as f64 * step;
                }
            }
            // Every budgeted sweep reports it (its own time at least), so
            // that the run's hint adds up every sweep's share.
            out.budget_wanted_s = Some(wanted.ceil() as u32);
        }
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

/// What a budget skip calls the time it ran out of.
const BUDGET_WORDS: &str = "this sweep's share of --budget";

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::sampler::{Measurement, Sample};
    use crate::vocab::benches::Bench;
    use crate::vocab::progress::Silent;
    use crate::vocab::rows::Row;

    /// A driver whose points take no time: each step returns `per_round`
    /// samples whose per-operation times come from `time(point, round)`.
    struct Fake<F: FnMut(usize, u32) -> f64> {
        time: F,
        steps: Vec<(usize, u32)>,
        rows: Vec<Row>,
        round_of: Vec<u32>,
        sleep_ms: u64,
        /// Timed seconds of round 0's warm-up.
        warmup: f64,
        /// The slice (seconds) each step was given.
        slices: Vec<f64>,
    }

    impl<F: FnMut(usize, u32) -> f64> StepDriver for Fake<F> {
        fn measure(&mut self, index: usize, _point: &Point, sampler: &Sampler) -> Outcome {
            let round = self.round_of[index];
            self.round_of[index] += 1;
            self.steps.push((index, round));
            self.slices.push(sampler.rule.max_seconds);
            if self.sleep_ms > 0 {
                std::thread::sleep(std::time::Duration::from_millis(self.sleep_ms));
            }
            // As many samples of one operation as the round's slice holds (1
            // to 5), after one warm-up operation.
            let t = (self.time)(index, round);
            let k = ((sampler.rule.max_seconds / t).floor() as usize).clamp(1, 5);
            let samples = (0..k).map(|j| Sample { iterations: 1, seconds: t * (1.0 + j as f64 * 1e-4) }).collect();
            Outcome::Measured(Measurement {
                samples,
                stop: StopReason::Converged,
                rsd: 0.0,
                batch: 1,
                timed_seconds: (k + 1) as f64 * t + if round == 0 { self.warmup } else { 0.0 },
                detail: None,
                setup_seconds: 0.0,
                sampled: None,
            })
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
        Fake {
            time,
            steps: Vec::new(),
            rows: Vec::new(),
            round_of: vec![0; n],
            sleep_ms: 0,
            warmup: 0.0,
            slices: Vec::new(),
        }
    }

    fn rule() -> StopRule {
        StopRule { rounds: 5, min_rounds: 3, target_ci: 0.01, max_seconds: 10.0, ..StopRule::default() }
    }

    #[test]
    fn steady_points_stop_after_the_minimum_rounds_noisy_ones_run_them_all() {
        // Point 0 is steady; point 1 moves 20 % from round to round.
        let mut d = fake(2, |i, r| if i == 0 { 1e-6 } else { 1e-6 * (1.0 + 0.2 * (r % 2) as f64) });
        let out = Schedule::new(rule(), "run-a").run(&plan(2), 0, &mut d, &Silent).unwrap();
        let rounds = |i: usize| rounds_of(&d, i);
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
    fn no_round_gets_more_than_an_equal_share_of_its_points_time() {
        // A point whose rounds leave most of their share unspent (one fast
        // operation each) must not hand it to a later round: every step's
        // slice is at most max_seconds / rounds.
        let mut d = fake(1, |_, r| 1e-3 * (1.0 + 0.2 * (r % 2) as f64));
        let r = rule();
        Schedule::new(r.clone(), "equal").run(&plan(1), 0, &mut d, &Silent).unwrap();
        let equal = r.max_seconds / r.rounds as f64;
        assert!(d.slices.len() >= 3);
        assert!(d.slices.iter().all(|s| *s <= equal * (1.0 + 1e-9)), "{:?} against {equal}", d.slices);
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
    fn a_budget_too_small_for_every_point_measures_what_it_can_in_three_rounds() {
        // 20 ms of setup per step against a 100 ms budget for 6 points: once
        // a step's cost is known, only the points whose 3 rounds fit beside
        // the rounds already owed are measured; the rest are skipped, saying
        // why and what budget would hold them.
        let mut d = fake(6, |_, r| 1e-6 * (1.0 + 0.3 * (r % 2) as f64));
        d.sleep_ms = 20;
        let s = Schedule { budget_seconds: Some(0.1), ..Schedule::new(rule(), "b") };
        let out = s.run(&plan(6), 0, &mut d, &Silent).unwrap();
        assert!(out.measured >= 1 && out.measured <= 2, "{out:?}");
        assert_eq!(out.measured + out.skipped, 6, "{out:?}");
        for i in 0..6 {
            let n = rounds_of(&d, i);
            assert!(n == 0 || n >= 3, "point {i} measured in {n} rounds: {:?}", d.steps);
        }
        assert_eq!(out.short_of_rounds, 0);
        let skipped: Vec<&Row> = d.rows.iter().filter(|r| r.status == Status::Skipped).collect();
        assert_eq!(skipped.len(), out.skipped as usize);
        assert!(
            skipped.iter().all(|r| {
                let note = r.note.as_deref().unwrap_or("");
                note.contains("share of --budget (100.00 ms) had") && note.contains("its 3 rounds take about")
            }),
            "{skipped:?}"
        );
        // The run says what budget would hold every point: 18 steps of
        // about 20 ms.
        assert!(out.budget_wanted_s.is_some_and(|s| s >= 1), "{out:?}");
    }

    #[test]
    fn a_budget_that_prefers_points_skips_the_rest_with_the_reason() {
        // `--budget-prefers points`, 20 ms of setup per step against a 50 ms
        // budget for 6 points: once a step's cost is known, points that
        // cannot fit are skipped, and say why, instead of running past the
        // budget; the measured ones are short of their rounds.
        let mut d = fake(6, |_, r| 1e-6 * (1.0 + 0.3 * (r % 2) as f64));
        d.sleep_ms = 20;
        let rule = StopRule { budget_prefers_points: true, ..rule() };
        let s = Schedule { budget_seconds: Some(0.05), ..Schedule::new(rule, "b") };
        let t = Instant::now();
        let out = s.run(&plan(6), 0, &mut d, &Silent).unwrap();
        // At most one step past the budget (the first step's cost is unknown).
        // Unbounded, its 18 steps would take 0.36 s.
        assert!(t.elapsed().as_secs_f64() < 0.2, "{:?}", t.elapsed());
        assert!(out.measured >= 1 && out.measured <= 3, "{out:?}");
        assert_eq!(out.measured + out.skipped, 6, "{out:?}");
        let skipped: Vec<&Row> = d.rows.iter().filter(|r| r.status == Status::Skipped).collect();
        assert_eq!(skipped.len(), out.skipped as usize);
        assert!(
            skipped.iter().all(|r| r.note.as_deref().unwrap_or("").contains("share of --budget (50.00 ms) had")),
            "{skipped:?}"
        );
        // The measured points are short of their 3 rounds, and the run says
        // what budget would have held them (3 steps of about 20 ms each).
        assert_eq!(out.short_of_rounds, out.measured);
        assert!(out.budget_wanted_s.is_some_and(|s| s >= 1), "{out:?}");
    }

    #[test]
    fn within_a_budget_every_point_gets_its_minimum_rounds_and_samples_first() {
        // 10 points, 5 ms of setup per step, 1 s: the minimum rounds (30
        // steps) fit, and the budget holds the whole schedule.
        let mut d = fake(10, |i, r| 1e-4 * (1.0 + 0.3 * ((r + i as u32) % 2) as f64));
        d.sleep_ms = 5;
        let s = Schedule { budget_seconds: Some(1.0), ..Schedule::new(rule(), "m") };
        let t = Instant::now();
        let out = s.run(&plan(10), 0, &mut d, &Silent).unwrap();
        assert!(t.elapsed().as_secs_f64() < 1.5, "{:?}", t.elapsed());
        assert_eq!(out.measured, 10);
        assert_eq!(out.short_of_rounds, 0);
        for i in 0..10 {
            assert!(rounds_of(&d, i) >= 3, "point {i}: {:?}", d.steps);
            let samples = d.rows.iter().filter(|r| r.point == i as u32 && r.round == Some(0)).count();
            assert!(samples >= 3, "point {i} has {samples} samples in round 0");
        }
        // No fourth round starts before every point has had three.
        let first_fourth = d.steps.iter().position(|s| s.1 == 3).unwrap_or(d.steps.len());
        assert!(first_fourth >= 30, "{:?}", d.steps);
    }

    fn rounds_of(d: &Fake<impl FnMut(usize, u32) -> f64>, i: usize) -> usize {
        d.steps.iter().filter(|s| s.0 == i).count()
    }

    #[test]
    fn a_slow_point_gets_its_minimum_rounds_at_one_sample_each() {
        // 0.15 s per operation against 1 s: one sample per round, and the
        // three rounds fit (0.3 s each with the warm-up operation).
        let mut d = fake(1, |_, r| 0.15 * (1.0 + 0.05 * (r % 2) as f64));
        let r = StopRule { max_seconds: 1.0, ..rule() };
        Schedule::new(r, "slow").run(&plan(1), 0, &mut d, &Silent).unwrap();
        assert!(rounds_of(&d, 0) >= 3, "{:?}", d.steps);
        assert!(d.rows.iter().any(|r| r.sample == Some(2)), "rounds of one sample still count samples on");
        assert!(d.rows.iter().all(|r| !r.note.as_deref().unwrap_or("").contains(ROUNDS_FIT)), "no shortfall note");
    }

    #[test]
    fn the_minimum_rounds_are_owed_even_after_a_round_overspends_the_share() {
        // A 0.58 s warm-up in round 0 leaves 0.18 s of a 1 s share; the two
        // rounds still owed need 0.08 s each at least, so they fit. Round 1
        // takes two samples (0.12 s) and leaves 0.06 s, less than a round:
        // the third round is owed all the same, at one sample.
        let mut d = fake(1, |_, _| 0.04);
        d.warmup = 0.58;
        let r = StopRule { max_seconds: 1.0, rounds: 3, min_rounds: 3, ..rule() };
        Schedule::new(r, "owed").run(&plan(1), 0, &mut d, &Silent).unwrap();
        assert_eq!(rounds_of(&d, 0), 3, "{:?}", d.steps);
        assert_eq!(d.rows.iter().filter(|r| r.round == Some(2)).count(), 1, "the owed round holds one sample");
    }

    #[test]
    fn a_point_too_slow_for_its_minimum_rounds_says_why_in_its_first_rounds_rows() {
        // 0.2 s per operation against 1 s: round 0 spends 0.4 s, and each
        // later round needs 0.4 s, so only 2 of 3 rounds fit.
        let mut d = fake(1, |_, _| 0.2);
        let r = StopRule { max_seconds: 1.0, ..rule() };
        Schedule::new(r, "too-slow").run(&plan(1), 0, &mut d, &Silent).unwrap();
        assert_eq!(rounds_of(&d, 0), 2, "{:?}", d.steps);
        let first = d.rows.iter().find(|r| r.round == Some(0)).unwrap();
        let note = first.note.as_deref().unwrap();
        assert!(note.contains(&format!("2 of 3 {ROUNDS_FIT}")) && note.contains("--max-time"), "{note}");
    }

    #[test]
    fn time_handed_back_goes_to_the_point_that_needs_it() {
        // Three steady fast points meet the target after 3 rounds and hand
        // back their time; a slow, noisy point has spent its own share by
        // then and draws further rounds from what they left.
        let slow = |i: usize, r: u32| if i == 3 { 0.15 * (1.0 + 0.03 * (r % 2) as f64) } else { 1e-6 };
        let mut d = fake(4, slow);
        let r = StopRule { max_seconds: 1.0, ..rule() };
        Schedule::new(r.clone(), "pool").run(&plan(4), 0, &mut d, &Silent).unwrap();
        for i in 0..3 {
            assert_eq!(rounds_of(&d, i), 3, "steady point {i} stops at the minimum: {:?}", d.steps);
        }
        assert_eq!(rounds_of(&d, 3), 5, "the slow point gets every round: {:?}", d.steps);
        // Alone, nothing is handed back, and it stops when its share is spent.
        let mut alone = fake(1, |_, r| 0.15 * (1.0 + 0.03 * (r % 2) as f64));
        Schedule::new(r, "pool").run(&plan(1), 0, &mut alone, &Silent).unwrap();
        assert_eq!(rounds_of(&alone, 0), 3, "{:?}", alone.steps);
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
