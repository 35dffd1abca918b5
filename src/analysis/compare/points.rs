//! One run's points as a comparison weighs them: each point's rounds, its
//! figure (the median of its round medians, power states kept apart as
//! [`crate::analysis::PointStat`] keeps them: one rule,
//! `analysis::summary::headline_of`) and the half-width of its rerun
//! interval, which a comparison of one run a side judges with.

use std::collections::{BTreeMap, HashMap};

use super::{key, Key};
use crate::vocab::rows::{Row, Status};
use crate::vocab::{interval, stats};

/// One run's samples of a point: each round's measurements (seconds per
/// operation, slowest rank per sample; a named metric's value), and each
/// round's power state where its rows carry telemetry.
#[derive(Default)]
struct RunSamples {
    rounds: BTreeMap<u32, Vec<f64>>,
    states: HashMap<u32, crate::vocab::telemetry::RoundState>,
}

fn samples(rows: &[Row]) -> BTreeMap<Key, (Row, RunSamples)> {
    let mut per_sample: BTreeMap<(Key, u32), (Row, f64)> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == Status::Measured) {
        let measurement = if r.params.metric.is_some() { r.value } else { r.seconds_per_op() };
        let (Some(s), Some(t)) = (r.sample, measurement) else { continue };
        let e = per_sample.entry((key(r), s)).or_insert((r.clone(), t));
        e.1 = e.1.max(t);
    }
    let mut out: BTreeMap<Key, (Row, RunSamples)> = BTreeMap::new();
    for ((k, _), (row, t)) in per_sample {
        let round = row.round.unwrap_or(0);
        let state = row.telemetry.as_ref().map(|s| (s.clock_mhz, s.throttle));
        let e = out.entry(k).or_insert_with(|| (row, RunSamples::default()));
        e.1.rounds.entry(round).or_default().push(t);
        if let Some(state) = state {
            e.1.states.insert(round, state);
        }
    }
    out
}

/// One run's point as a comparison weighs it: the rounds its figure rests
/// on (full-clock rounds where some ran capped, as
/// [`crate::analysis::PointStat`] takes them), its figure (the median of
/// their medians) and, for a timed point, half its rerun interval
/// relative to the figure ([`crate::vocab::interval::Intervals`]).
#[derive(Debug, Clone)]
pub struct RunPoint {
    pub rounds: Vec<Vec<f64>>,
    pub figure: f64,
    pub rerun_half: Option<f64>,
    /// The median SM (or core) clock of those rounds, MHz, where every one
    /// of them read one.
    pub clock_mhz: Option<f64>,
}

impl RunPoint {
    pub(super) fn samples(&self) -> usize {
        self.rounds.iter().map(Vec::len).sum()
    }
}

/// Each point of one run as [`RunPoint`]s. A timed point's rerun interval
/// borrows the spread of its neighbours on its curve, as the run's report
/// does ([`interval::prior_spreads`]).
pub(super) fn run_points(rows: &[Row]) -> BTreeMap<Key, (Row, RunPoint)> {
    let mut heads = Vec::new();
    for (k, (row, rs)) in samples(rows) {
        let by_round: Vec<(u32, Vec<f64>)> = rs
            .rounds
            .into_iter()
            .map(|(r, mut xs)| {
                xs.sort_by(f64::total_cmp);
                (r, xs)
            })
            .collect();
        let states = (!rs.states.is_empty()).then_some(&rs.states);
        let head = crate::analysis::summary::headline_of(&by_round, states);
        let kept: Vec<Vec<f64>> =
            by_round.into_iter().filter(|(r, _)| head.rounds.contains(r)).map(|(_, xs)| xs).collect();
        heads.push((k, row, kept, head));
    }
    let curves: Vec<(String, u64, Option<f64>)> = heads
        .iter()
        .map(|(_, row, _, head)| {
            let (curve, place) = row.params.curve_on(&row.backend, &row.device);
            (curve, place, if row.params.metric.is_none() { head.spread } else { None })
        })
        .collect();
    let priors = interval::prior_spreads(&curves);
    heads
        .into_iter()
        .zip(priors)
        .filter_map(|((k, row, kept, head), prior)| {
            let figure = interval::figure(&head.medians)?;
            let rerun_half = row.params.metric.is_none().then_some(()).and_then(|_| {
                let pooled = head.pooled.clone().unwrap_or_else(|| {
                    let mut xs: Vec<f64> = kept.iter().flatten().copied().collect();
                    xs.sort_by(f64::total_cmp);
                    xs
                });
                let both = interval::intervals_from_round_medians(&head.medians, &pooled, prior)?;
                Some(both.rerun.relative_half_width()).filter(|h| h.is_finite())
            });
            Some((k, (row, RunPoint { rounds: kept, figure, rerun_half, clock_mhz: head.clock_mhz })))
        })
        .collect()
}

/// 95 % percentile-bootstrap interval of median(a) / median(b): each
/// resample's medians are drawn from their exact bootstrap distribution
/// ([`stats::MedianResampler`]).
pub fn bootstrap_ratio_ci(a: &[f64], b: &[f64], resamples: usize, seed: u64) -> (f64, f64) {
    let one =
        |xs: &[f64]| vec![RunPoint { rounds: vec![xs.to_vec()], figure: f64::NAN, rerun_half: None, clock_mhz: None }];
    group_ratio_ci(&one(a), &one(b), resamples, seed)
}

/// A group's estimate of a point: the median of its runs' figures (each
/// the median of its round medians).
pub fn group_median(runs: &[RunPoint]) -> f64 {
    let mut m: Vec<f64> = runs.iter().map(|r| r.figure).collect();
    stats::median_unsorted(&mut m)
}

/// Draws from the bootstrap distribution of [`group_median`]: runs drawn
/// with replacement, then each drawn run's rounds and samples
/// ([`stats::RoundsResampler`]).
struct GroupResampler {
    runs: Vec<stats::RoundsResampler>,
}

impl GroupResampler {
    fn new(runs: &[RunPoint]) -> Option<GroupResampler> {
        let runs: Option<Vec<_>> = runs.iter().map(|r| stats::RoundsResampler::new(&r.rounds)).collect();
        runs.filter(|r| !r.is_empty()).map(|runs| GroupResampler { runs })
    }

    fn draw<R: rand::RngExt + ?Sized>(&mut self, rng: &mut R, buf: &mut Vec<f64>) -> f64 {
        if self.runs.len() == 1 {
            return self.runs[0].draw(rng);
        }
        buf.clear();
        for _ in 0..self.runs.len() {
            let i = rng.random_range(0..self.runs.len());
            let x = self.runs[i].draw(rng);
            buf.push(x);
        }
        stats::median_unsorted(buf)
    }
}

/// 95 % two-level percentile-bootstrap interval of
/// group_median(a) / group_median(b).
pub fn group_ratio_ci(a: &[RunPoint], b: &[RunPoint], resamples: usize, seed: u64) -> (f64, f64) {
    let (Some(mut ra), Some(mut rb)) = (GroupResampler::new(a), GroupResampler::new(b)) else {
        return (f64::NAN, f64::NAN);
    };
    let mut rng = stats::resampling_rng(seed);
    let mut buf = Vec::new();
    let mut ratios: Vec<f64> =
        (0..resamples).map(|_| ra.draw(&mut rng, &mut buf) / rb.draw(&mut rng, &mut buf)).collect();
    ratios.sort_by(f64::total_cmp);
    (stats::quantile_sorted(&ratios, 0.025), stats::quantile_sorted(&ratios, 0.975))
}

/// A compared point's curve and its own name. A size-swept point's curve
/// is its series ([`crate::analysis::SeriesKey`]: method, variant and peer
/// included, so pinned and pageable copies are two curves), named as the
/// report names it, and the point is that name at its size. A metric's
/// curve is the metric (its points differ by parameters); any other point
/// (a GEMM shape) is its label without a size.
pub(super) fn names(row: &Row) -> (String, String) {
    let p = &row.params;
    if let (None, Some(size)) = (&p.metric, p.size_bytes) {
        let key = crate::analysis::SeriesKey::of_params(p, &row.backend, "", &row.device);
        // The name every report gives the series (the key keeps series of
        // one name apart: `PointComparison::group`).
        let curve = key.base_name();
        let label = format!("{curve} {}", crate::vocab::units::format_bytes(size));
        return (curve, label);
    }
    let curve = match &p.metric {
        Some(m) => m.clone(),
        None => crate::vocab::rows::Point { size_bytes: None, ..p.clone() }.label(),
    };
    (curve, p.label())
}
/// Per point: its first row and each run's [`RunPoint`] (runs that did
/// not measure the point are left out).
pub(super) type GroupSamples = BTreeMap<Key, (Row, Vec<RunPoint>)>;

/// One run's points ([`run_points`]).
pub(super) type RunPoints = BTreeMap<Key, (Row, RunPoint)>;

pub(super) fn group_samples<'a>(runs: impl IntoIterator<Item = &'a [Row]>) -> GroupSamples {
    gather(runs.into_iter().map(run_points))
}

/// Runs' points gathered per point, each run's in the order given.
pub(super) fn gather(runs: impl IntoIterator<Item = RunPoints>) -> GroupSamples {
    let mut out = GroupSamples::new();
    for run in runs {
        for (k, (row, point)) in run {
            out.entry(k).or_insert_with(|| (row, Vec::new())).1.push(point);
        }
    }
    out
}
