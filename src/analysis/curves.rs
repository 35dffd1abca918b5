//! Curves (points that differ only by size) and where they saturate.

use crate::vocab::benches::Bench;
use crate::vocab::interval::{Interval, RateInterval};
use std::collections::BTreeMap;

use serde::Serialize;

use super::summary::PointStat;
use crate::vocab::stats;

/// Points that share everything but their size: one line on a chart.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    pub run_id: String,
    pub bench: String,
    pub op: String,
    pub threads: Option<u32>,
    pub dtype: Option<String>,
    pub device: String,
    pub points: Vec<PointStat>,
}

impl Curve {
    /// The system the curve ran on: its run and device (a chart's colour
    /// when it holds several).
    pub fn system(&self) -> String {
        format!("{} {}", self.run_id, self.device)
    }

    /// Whether its rows carry a bus factor (nccl-tests, benchbook's MPI
    /// collectives): its rate is bus bandwidth. An OSU collective has
    /// none, and its rate is algbw. The one test every table and sentence
    /// takes.
    pub fn has_bus_factor(&self) -> bool {
        self.points.iter().any(|p| p.size_bytes.is_some() && p.busbw_gbps.is_some())
    }

    /// (size, bus bandwidth GB/s) pairs, for collectives.
    pub fn busbw(&self) -> Vec<(u64, f64)> {
        self.points.iter().filter_map(|p| Some((p.size_bytes?, p.busbw_gbps?))).collect()
    }

    /// Which rate [`Self::rate`] plots: bus bandwidth for collectives,
    /// bytes read + written where known, else bytes copied. Transfers over
    /// a link (MPI p2p, GPU peer and host↔device copies) use bytes copied
    /// once, as nvbandwidth and the seed 000 scripts count.
    fn rate_of(&self) -> fn(&PointStat) -> Option<f64> {
        if Bench::of(&self.bench).is_some_and(Bench::is_transfer) {
            |p| p.gbps_copied
        } else if self.has_bus_factor() {
            |p| p.busbw_gbps
        } else if self.points.iter().any(|p| p.size_bytes.is_some() && p.gbps_moved.is_some()) {
            |p| p.gbps_moved
        } else {
            |p| p.gbps_copied
        }
    }

    /// The series a chart and the saturation analysis use ([`Self::rate_of`]).
    /// [`Self::rate_with_ci`] as a chart draws it: error bars only where
    /// both bounds exist.
    pub fn rate_with_bars(&self) -> Vec<(f64, f64, Option<Interval>)> {
        self.rate_with_ci().into_iter().map(|(s, r, ci)| (s as f64, r, ci.bounded())).collect()
    }

    pub fn rate(&self) -> Vec<(u64, f64)> {
        self.rate_with_ci().into_iter().map(|(s, r, _)| (s, r)).collect()
    }

    /// [`Self::rate`] with each point's 95 % interval in GB/s.
    pub fn rate_with_ci(&self) -> Vec<(u64, f64, RateInterval)> {
        let of = self.rate_of();
        self.points
            .iter()
            .filter_map(|p| {
                let r = of(p)?;
                Some((p.size_bytes?, r, p.rate_interval(r)))
            })
            .collect()
    }

    /// Its peak, the one definition every report uses: the highest median
    /// rate among the points [`Self::trusts`] (an interval no wider than
    /// ±[`TRUSTED_HALF_WIDTH`], more than one round where its curve had
    /// several, not measured while throttled); the highest of all points
    /// when none may. (size, rate, interval, point).
    pub fn peak(&self) -> Option<(u64, f64, RateInterval, &PointStat)> {
        let all: Vec<(u64, f64, RateInterval, &PointStat)> = self
            .rate_with_ci()
            .into_iter()
            .filter_map(|(s, r, ci)| Some((s, r, ci, self.points.iter().find(|p| p.size_bytes == Some(s))?)))
            .collect();
        let trusted = self.trusted();
        let trusts = |s: u64| trusted.iter().any(|(x, _, ok)| *x == s && *ok);
        let by_rate =
            |a: &&(u64, f64, RateInterval, &PointStat), b: &&(u64, f64, RateInterval, &PointStat)| a.1.total_cmp(&b.1);
        all.iter().filter(|x| trusts(x.0)).max_by(by_rate).or_else(|| all.iter().max_by(by_rate)).copied()
    }

    /// Whether its point at `size` may set a level or carry a verdict: an
    /// interval no wider than ±[`TRUSTED_HALF_WIDTH`], more than one round
    /// where most of its curve had several (a curve measured in one round
    /// throughout, as under a tight `--budget`, is judged as it is), and
    /// not measured while throttled. The one trust rule of plateaus and of
    /// every verdict between two of a curve's points.
    pub fn trusts(&self, size: u64) -> bool {
        self.trusted().into_iter().any(|(s, _, trusted)| s == size && trusted)
    }

    /// Every sized point's (size, rate, whether [`Self::trusts`] it),
    /// worked out once for the whole curve.
    pub fn trusted(&self) -> Vec<(u64, f64, bool)> {
        self.distrust().into_iter().map(|(size, r, why)| (size, r, why.is_none())).collect()
    }

    /// Every sized point's (size, rate, why [`Self::trusts`] does not
    /// trust it): the one place the trust rule is written.
    pub fn distrust(&self) -> Vec<(u64, f64, Option<Distrust>)> {
        let mut rounds: Vec<u32> = self.points.iter().map(|p| p.rounds).collect();
        rounds.sort_unstable();
        let most_rounds = rounds.get(rounds.len() / 2).copied().unwrap_or(1);
        self.rate_with_ci()
            .into_iter()
            .map(|(size, r, ci)| {
                let point = self.points.iter().find(|p| p.size_bytes == Some(size));
                let why = if point.is_none_or(|p| p.held_out()) {
                    Some(Distrust::Throttled)
                } else if !ci.within(r, TRUSTED_HALF_WIDTH) {
                    Some(Distrust::Wide)
                } else if point.is_some_and(|p| p.rounds == 1) && most_rounds > 1 {
                    Some(Distrust::OneRound)
                } else {
                    None
                };
                (size, r, why)
            })
            .collect()
    }

    /// The highest median above [`Self::peak`], when the peak passed one
    /// over, and why: (size, rate, why).
    pub fn passed_over(&self) -> Option<(u64, f64, Distrust)> {
        let (_, peak, ..) = self.peak()?;
        self.distrust()
            .into_iter()
            .filter(|(_, r, _)| *r > peak)
            .max_by(|a, b| a.1.total_cmp(&b.1))
            .and_then(|(size, rate, why)| Some((size, rate, why?)))
    }

    /// Whether [`Self::rate`] counts bytes read + written (a copy's or a
    /// STREAM kernel's moved bytes), not bytes copied once or bus bandwidth.
    pub fn counts_moved(&self) -> bool {
        !Bench::of(&self.bench).is_some_and(Bench::is_transfer) && !self.has_bus_factor() && !self.gbps(true).is_empty()
    }

    /// The y axis of [`Self::rate`], naming the bytes it counts.
    pub fn rate_axis(&self) -> &'static str {
        if self.counts_moved() {
            crate::vocab::benches::AXIS_MOVED
        } else if !Bench::of(&self.bench).is_some_and(Bench::is_transfer) && self.has_bus_factor() {
            "GB/s (bus bandwidth)"
        } else {
            crate::vocab::benches::AXIS_ONCE
        }
    }

    /// (size, GB/s) pairs under a byte convention (`moved` or `copied`).
    pub fn gbps(&self, moved: bool) -> Vec<(u64, f64)> {
        self.points
            .iter()
            .filter_map(|p| Some((p.size_bytes?, if moved { p.gbps_moved? } else { p.gbps_copied? })))
            .collect()
    }
}

/// Group size-swept points into curves, one per [`super::series::SeriesKey`],
/// ordered by it (run, device, bench, op, ...). Reports take curves as
/// [`super::series::Series`] from their catalog, never from here.
pub fn curves(points: &[PointStat]) -> Vec<Curve> {
    let mut map: BTreeMap<super::series::SeriesKey, Vec<PointStat>> = BTreeMap::new();
    for p in points.iter().filter(|p| p.size_bytes.is_some()) {
        map.entry(super::series::SeriesKey::of(p)).or_default().push(p.clone());
    }
    map.into_iter()
        .map(|(k, mut pts)| {
            pts.sort_by_key(|p| p.size_bytes);
            Curve {
                device: k.device,
                run_id: k.run_id,
                bench: k.bench,
                op: k.op,
                threads: k.threads,
                dtype: k.dtype,
                points: pts,
            }
        })
        .collect()
}

/// Where a bandwidth curve saturates.
#[derive(Debug, Clone, Serialize)]
pub struct Saturation {
    /// The curve's peak ([`Curve::peak`]), and the size it happened at.
    pub peak_gbps: f64,
    pub peak_size_bytes: u64,
    /// The level of the flat region at the largest trusted sizes
    /// ([`stats::plateau_of`]).
    pub plateau_gbps: f64,
    /// The sizes the plateau was taken from (one: not settled).
    pub plateau_sizes: Vec<u64>,
    /// The largest size and its rate, when it jumps off the level the sizes
    /// below it hold: flagged, not taken as the plateau.
    pub plateau_jump: Option<(u64, f64)>,
    /// Sizes left out of the plateau: an interval wider than
    /// ±[`TRUSTED_HALF_WIDTH`], or a single round in a run of several.
    pub plateau_left_out: Vec<u64>,
    /// Sizes held out of the plateau as measured while throttled
    /// ([`PointStat::held_out`]).
    pub plateau_held_out: Vec<u64>,
    /// How far the plateau's sizes may differ from its level
    /// ([`stats::PLATEAU_TOLERANCE`]).
    pub plateau_tolerance: f64,
    /// How many sizes the curve has (one: nothing saturates).
    pub sizes: usize,
    /// Where the curve reaches 50/80/90 % of the plateau for good
    /// ([`stats::sustained_crossing`]): cache-resident sizes above the
    /// plateau are never a saturation.
    pub plateau_50: stats::Crossing,
    pub plateau_80: stats::Crossing,
    pub plateau_90: stats::Crossing,
    /// The roofline (bytes moved), and where the curve reaches 50/80/90 %
    /// of it for good.
    pub roofline_gbps: Option<f64>,
    pub roofline_50: Option<stats::Crossing>,
    pub roofline_80: Option<stats::Crossing>,
    pub roofline_90: Option<stats::Crossing>,
    /// plateau / roofline, and peak / roofline.
    pub plateau_fraction: Option<f64>,
    pub peak_fraction: Option<f64>,
}

impl Saturation {
    /// Whether the plateau rests on [`stats::PLATEAU_MIN_SIZES`] sizes or
    /// more that agree within the tolerance; `false`: the curve had not
    /// settled by its largest size.
    pub fn settled(&self) -> bool {
        self.plateau_sizes.len() >= stats::PLATEAU_MIN_SIZES
    }

    /// peak / plateau, when a settled curve peaks above its plateau by
    /// more than [`stats::HUMP_RATIO`] (a cache or protocol hump).
    pub fn hump(&self) -> Option<f64> {
        let above = self.plateau_gbps > 0.0 && self.peak_gbps > stats::HUMP_RATIO * self.plateau_gbps;
        (self.settled() && above).then(|| self.peak_gbps / self.plateau_gbps)
    }

    /// The level the curve holds, as every table and sentence states it.
    pub fn level(&self) -> Level {
        if self.sizes < 2 {
            return Level::Single {
                size: self.plateau_sizes.last().copied().unwrap_or(self.peak_size_bytes),
                gbps: self.plateau_gbps,
            };
        }
        if self.settled() {
            return Level::Plateau {
                gbps: self.plateau_gbps,
                sizes: self.plateau_sizes.clone(),
                tolerance: self.plateau_tolerance,
                jump: self.plateau_jump,
                left_out: self.plateau_left_out.clone(),
                held_out: self.plateau_held_out.clone(),
            };
        }
        Level::NotSettled {
            largest: self.plateau_sizes.clone(),
            gbps: self.plateau_gbps,
            tolerance: self.plateau_tolerance,
            left_out: self.plateau_left_out.clone(),
        }
    }
}

/// What level a curve holds ([`Saturation::level`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Level {
    /// One size measured: its rate; nothing saturates.
    Single { size: u64, gbps: f64 },
    /// [`stats::PLATEAU_MIN_SIZES`] sizes or more within ±`tolerance` of
    /// `gbps`, with a largest size that jumps off it, and the sizes left out
    /// (too uncertain) or held out (throttled), each named.
    Plateau {
        gbps: f64,
        sizes: Vec<u64>,
        tolerance: f64,
        jump: Option<(u64, f64)>,
        left_out: Vec<u64>,
        held_out: Vec<u64>,
    },
    /// Fewer sizes than a plateau needs agree at its largest sizes (still
    /// rising, falling out of a cache, or noisy): the largest size's level.
    /// `left_out`: larger sizes too uncertain to judge, named.
    NotSettled { largest: Vec<u64>, gbps: f64, tolerance: f64, left_out: Vec<u64> },
}

/// Why [`Series::trusts`] does not trust a point; its words are in
/// `templates/sections/key-results.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Distrust {
    /// Its interval is wider than ±[`TRUSTED_HALF_WIDTH`].
    Wide,
    /// It was measured while throttled.
    Throttled,
    /// One round, where most of its curve had several.
    OneRound,
}

/// The widest interval (relative half-width) a point may have and still
/// help set a curve's plateau.
pub const TRUSTED_HALF_WIDTH: f64 = 0.25;

/// Saturation of one curve's [`Curve::rate`] series, against an optional
/// roofline in GB/s of the same convention.
pub fn saturation(curve: &Curve, roofline_gbps: Option<f64>) -> Option<Saturation> {
    let pts = curve.rate();
    let trusted: Vec<(u64, f64, bool)> = curve.trusted();
    let (peak_size, peak, ..) = curve.peak()?;
    let tolerance = stats::PLATEAU_TOLERANCE;
    let level = stats::plateau_of(&trusted, tolerance)?;
    let held_out: Vec<u64> = curve.points.iter().filter(|p| p.held_out()).filter_map(|p| p.size_bytes).collect();
    let plateau = level.level;
    // Not settled: every size above the one that stands in and not trusted
    // is left out, not only those the plateau's walk passed.
    let left_out: Vec<u64> = if level.sizes.len() < stats::PLATEAU_MIN_SIZES {
        let top = level.sizes.last().copied().unwrap_or(0);
        trusted.iter().filter(|(s, _, ok)| *s > top && !ok).map(|(s, ..)| *s).collect()
    } else {
        level.left_out
    };
    let roof = roofline_gbps.filter(|r| *r > 0.0);
    let at = |reference: f64, f: f64| stats::sustained_crossing(&pts, reference, f);
    Some(Saturation {
        peak_gbps: peak,
        peak_size_bytes: peak_size,
        plateau_gbps: plateau,
        plateau_tolerance: tolerance,
        sizes: pts.len(),
        plateau_sizes: level.sizes,
        plateau_jump: level.jump,
        plateau_left_out: left_out.into_iter().filter(|s| !held_out.contains(s)).collect(),
        plateau_held_out: held_out,
        plateau_50: at(plateau, 0.5),
        plateau_80: at(plateau, 0.8),
        plateau_90: at(plateau, 0.9),
        roofline_gbps: roof,
        roofline_50: roof.map(|r| at(r, 0.5)),
        roofline_80: roof.map(|r| at(r, 0.8)),
        roofline_90: roof.map(|r| at(r, 0.9)),
        plateau_fraction: roof.map(|r| plateau / r),
        peak_fraction: roof.map(|r| peak / r),
    })
}

/// A latency curve's largest inversion: a smaller size that takes more
/// than 10 % longer than a larger one, and whether their rerun intervals
/// overlap (then it is within the noise).
pub struct Inversion<'a> {
    pub small: &'a PointStat,
    pub large: &'a PointStat,
    pub overlap: bool,
}

/// The largest inversion among `points` (a latency curve's, any order).
pub fn latency_inversion<'a>(points: &[&'a PointStat]) -> Option<Inversion<'a>> {
    let mut pts = points.to_vec();
    pts.sort_by_key(|p| p.size_bytes);
    let mut worst: Option<(&PointStat, &PointStat)> = None;
    for (i, small) in pts.iter().enumerate() {
        for large in &pts[i + 1..] {
            let ratio = small.median_seconds / large.median_seconds;
            if ratio > 1.1 && worst.is_none_or(|(s, l)| ratio > s.median_seconds / l.median_seconds) {
                worst = Some((small, large));
            }
        }
    }
    let (small, large) = worst?;
    let overlap = match (small.ci_low_seconds, large.ci_high_seconds) {
        (Some(low), Some(high)) => low <= high,
        _ => true,
    };
    Some(Inversion { small, large, overlap })
}
