//! Per-point statistics of timed rows, and curves of points.
//!
//! Each point's samples, sorted, with their rounds, are gathered a slice of
//! rows at a time ([`super::samples`]); a second, small query reads each
//! point's parameters from its first sample only. Both read only the columns
//! they name, so a report of millions of rows never decodes a per-row string
//! it does not use, nor holds every decoded column at once. The
//! estimators (quantiles, the interval of the median) are the ones in
//! [`crate::vocab`], shared with the scheduler that decided when to stop.
//!
//! The file is longer than 400 lines because `PointStat`'s fields, the
//! accessors of its two intervals and the one pass that fills them are
//! one unit: splitting them would scatter what an interval means.

use std::collections::HashMap;

use polars::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::vocab::interval::{self, Basis, MedianInterval};
use crate::vocab::stats;

/// Measured rows of timed points (named-metric rows, schema v4, carry
/// `value` instead of `seconds`; their summary is `analysis::workload`).
pub(super) fn timed(rows: LazyFrame) -> LazyFrame {
    rows.filter(col("status").eq(lit("measured")).and(col("metric").is_null()))
}

/// One row per (run, point): every sample's seconds per operation, sorted
/// (`sorted_seconds`, a list), the round of each (`rounds`, in the same
/// order), operations in all, and how many ranks reported. A sample's time
/// is the slowest rank's, as nccl-tests and OSU report; runs with no rank
/// above 0 skip that collapse.
pub fn samples_lazy(rows: LazyFrame, collapse_ranks: bool) -> LazyFrame {
    let keys = [col("run_id"), col("point")];
    let mut per_sample = timed(rows).select([
        col("run_id"),
        col("point"),
        col("sample"),
        col("round"),
        col("rank"),
        col("seconds"),
        col("iterations"),
    ]);
    per_sample = if collapse_ranks {
        per_sample.group_by([col("run_id"), col("point"), col("sample")]).agg([
            col("seconds").max(),
            col("iterations").first(),
            col("round").first(),
            col("rank").n_unique().cast(DataType::UInt32).alias("ranks_reporting"),
        ])
    } else {
        per_sample.with_column(lit(1u32).alias("ranks_reporting"))
    };
    let spo = || col("seconds_per_op");
    let by_time = SortMultipleOptions::default().with_maintain_order(true);
    per_sample
        .with_column((col("seconds") / col("iterations").cast(DataType::Float64)).alias("seconds_per_op"))
        .group_by(keys)
        .agg([
            spo().sort_by([spo()], by_time.clone()).alias("sorted_seconds"),
            col("round").fill_null(lit(0u32)).sort_by([spo()], by_time).alias("rounds"),
            col("iterations").sum(),
            col("ranks_reporting").max(),
        ])
        .sort(["run_id", "point"], SortMultipleOptions::default())
}

/// One row per (run, point) with the columns constant within a point, read
/// from rows with `sample` 0 when `first_only` (every measured point has
/// one), else from every row.
fn params_lazy(rows: LazyFrame, first_only: bool) -> LazyFrame {
    let params = crate::vocab::columns::point_columns();
    let mut rows = timed(rows);
    if first_only {
        rows = rows.filter(col("sample").eq(lit(0u32)));
    }
    rows.group_by_stable([col("run_id"), col("point")]).agg(params.iter().map(|c| col(*c).first()).collect::<Vec<_>>())
}

/// One summarized point, for charts and report contexts.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PointStat {
    pub run_id: String,
    pub point: u32,
    pub bench: String,
    pub backend: String,
    pub device: String,
    pub op: String,
    pub variant: Option<String>,
    pub dtype: Option<String>,
    pub size_bytes: Option<u64>,
    pub m: Option<u64>,
    pub n: Option<u64>,
    pub k: Option<u64>,
    pub threads: Option<u32>,
    pub ranks: Option<u32>,
    pub peer: Option<String>,
    pub bw_factor: Option<f64>,
    pub method: Option<String>,
    /// The point's named parameters as canonical JSON (e.g. a one-sided
    /// put's `channels`, `strategy`, `sync_every`).
    pub axes: Option<String>,
    pub note: Option<String>,
    /// Why sampling stopped in the point's first round (native points).
    pub stop: Option<crate::vocab::kinds::StopReason>,
    pub source: Option<String>,
    pub samples: u32,
    pub iterations: u64,
    pub summary: stats::Summary,
    /// The estimate: the median seconds per operation (as `summary.median`).
    pub median_seconds: f64,
    /// The rerun interval of `median_seconds`: where a second run's median
    /// falls 95 % of the time ([`crate::vocab::interval::Intervals`]); the
    /// interval every table and rate states. Null below six samples of one
    /// round.
    pub ci_low_seconds: Option<f64>,
    pub ci_high_seconds: Option<f64>,
    /// The within-run 95 % interval of `median_seconds`: how precisely
    /// this run pinned its own median (what `--target-ci` stops on).
    pub within_low_seconds: Option<f64>,
    pub within_high_seconds: Option<f64>,
    /// Rounds the point was measured in (1: older runs and imports).
    pub rounds: u32,
    /// What the interval rests on: `rounds`, or `samples` of one round only.
    pub ci_basis: Option<Basis>,
    /// The standard deviation of its round medians relative to its median
    /// (3 rounds or more).
    pub round_spread: Option<f64>,
    /// The prior spread its neighbours lent it ([`interval::prior_spreads`]).
    pub prior_spread: Option<f64>,
    /// Why its interval is wider than ±10 % ([`PointStat::wide_why`]).
    pub ci_wide_why: Option<WideWhy>,
    pub gbps_copied: Option<f64>,
    pub gbps_moved: Option<f64>,
    pub best_gbps_moved: Option<f64>,
    /// Collectives: bus bandwidth = algbw (bytes_copied / time) × bw_factor.
    pub busbw_gbps: Option<f64>,
    pub gflops: Option<f64>,
    pub best_gflops: Option<f64>,
    /// What the sensors read while it was measured (schema v7 rows that
    /// carry readings).
    pub telemetry: Option<super::telemetry::PointTelemetry>,
    /// Rounds that ran in a capped power state apart from the headline's
    /// ([`CappedRounds`]); `None` when every round ran in one state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub capped: Option<CappedRounds>,
}

impl PointStat {
    /// Whether a report shows this point in its GPU section: measured on a
    /// GPU backend, of a benchmark that has one.
    pub fn is_gpu(&self) -> bool {
        crate::vocab::kinds::backend_is_gpu(&self.backend)
            && crate::vocab::benches::Bench::of(&self.bench).is_some_and(|b| b.info().gpu_section.is_some())
    }

    /// The point's parameters, e.g. for [`Point::label`].
    pub fn params(&self) -> crate::vocab::rows::Point {
        crate::vocab::rows::Point {
            bench: self.bench.clone(),
            op: self.op.clone(),
            variant: self.variant.clone(),
            dtype: self.dtype.clone(),
            size_bytes: self.size_bytes,
            m: self.m,
            n: self.n,
            k: self.k,
            threads: self.threads,
            ranks: self.ranks,
            peer: self.peer.clone(),
            method: self.method.clone(),
            axes: self.axes.clone(),
            ..Default::default()
        }
    }

    /// What the point measures (a timed point: never a named metric): its
    /// row of the op table
    /// ([`crate::vocab::ops::meaning`]).
    pub fn meaning(&self) -> Option<crate::vocab::ops::Meaning> {
        crate::vocab::ops::meaning(&self.bench, &self.op, self.variant.as_deref(), false)
    }

    /// An MPI point-to-point latency (ping-pong, OSU's latency tests): the
    /// points the latency table holds.
    pub fn is_p2p_latency(&self) -> bool {
        self.bench == crate::vocab::benches::Bench::P2p && self.meaning().is_some_and(|m| m.is_latency())
    }

    /// A GEMM point's shape ([`crate::vocab::gemm::shape`]); `0×0×0`
    /// where the rows lack a dimension.
    pub fn shape(&self) -> String {
        crate::vocab::gemm::shape(self.m.unwrap_or(0), self.n.unwrap_or(0), self.k.unwrap_or(0))
    }

    /// Whether benchbook measured it (not an imported tool's figure).
    pub fn native(&self) -> bool {
        crate::vocab::source::RowOrigin::parse(self.source.as_deref()) == crate::vocab::source::RowOrigin::Native
    }

    /// Whether it is kept out of plateaus and headlines: measured while
    /// throttled ([`super::telemetry::PointTelemetry::held_out`]).
    pub fn held_out(&self) -> bool {
        self.telemetry.as_ref().is_some_and(|t| t.held_out)
    }

    /// The rerun interval of the median, when there is one: what every
    /// table states.
    pub fn interval(&self) -> Option<MedianInterval> {
        self.median_interval(self.ci_low_seconds?, self.ci_high_seconds?)
    }

    /// The within-run interval of the median, when there is one.
    pub fn within_interval(&self) -> Option<MedianInterval> {
        self.median_interval(self.within_low_seconds?, self.within_high_seconds?)
    }

    fn median_interval(&self, low: f64, high: f64) -> Option<MedianInterval> {
        Some(MedianInterval { median: self.median_seconds, low, high, rounds: self.rounds, basis: self.ci_basis? })
    }

    /// Whether its interval holds one round's samples only and claims no
    /// rerun: a GPU point of one round, since a second GPU run can start in
    /// another clock and power state that one round does not see (κ was
    /// calibrated on CPU runs).
    pub fn within_run_only(&self) -> bool {
        self.is_gpu() && self.ci_basis != Some(crate::vocab::interval::Basis::Rounds)
    }

    /// Half the rerun interval relative to the median (0.01: ±1 %).
    pub fn ci_relative(&self) -> Option<f64> {
        self.interval().map(|ci| ci.relative_half_width())
    }

    /// Half the within-run interval relative to the median: what
    /// `--target-ci` is met against.
    pub fn within_relative(&self) -> Option<f64> {
        self.within_interval().map(|ci| ci.relative_half_width())
    }

    /// Why its interval is wide, when it is wider than [`WIDE`]: too few
    /// rounds (with the schedule's reason where it recorded one), rounds
    /// that disagree with each other, or the spread its neighbours lend it.
    pub fn wide_why(&self) -> Option<WideWhy> {
        let r = self.ci_relative()?;
        if r <= WIDE {
            return None;
        }
        if self.ci_basis == Some(Basis::Samples) {
            return Some(WideWhy::OneRound);
        }
        if self.rounds < 3 {
            let why = self
                .note
                .as_deref()
                .and_then(|n| n.split("; ").find(|part| part.contains(crate::vocab::kinds::ROUNDS_FIT)))
                .map(str::to_string);
            return Some(WideWhy::FewRounds { rounds: self.rounds, why });
        }
        match (self.round_spread, self.prior_spread) {
            (Some(own), Some(prior)) if own < prior => Some(WideWhy::Neighbours { own, prior }),
            (Some(own), _) => Some(WideWhy::RoundsDisagree { spread: own, rounds: self.rounds }),
            _ => Some(WideWhy::FewRounds { rounds: self.rounds, why: None }),
        }
    }

    /// The interval of a rate computed as work / median seconds (GB/s,
    /// GFLOP/s), given the rate at the median: (low, high) in its unit.
    pub fn rate_interval(&self, rate: f64) -> crate::vocab::interval::RateInterval {
        crate::vocab::interval::RateInterval::of(rate, self.interval().as_ref())
    }
}

/// A point's rounds in two power states ([`crate::vocab::telemetry::capped_rounds`]):
/// its headline (`median_seconds`, its intervals, its rates) comes from its
/// full-clock rounds, and the capped ones are stated apart. Where every
/// round ran capped, the headline is theirs and `all` says so.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CappedRounds {
    /// Rounds that ran capped, of `of` measured.
    pub rounds: u32,
    pub of: u32,
    /// The median of the capped rounds' medians, seconds per operation.
    pub median_seconds: f64,
    /// The capped rounds' median clock, MHz.
    pub clock_mhz: Option<f64>,
    /// The headline rounds' median clock, MHz (the full clock, unless `all`).
    pub full_clock_mhz: Option<f64>,
    /// Every round ran capped.
    pub all: bool,
}

impl PointStat {
    /// The point's headline rate at `seconds` per operation, with its unit:
    /// TFLOP/s or GFLOP/s for GEMM, GB/s for copies (the bytes its rates
    /// count), else the time itself.
    pub fn rate_at(&self, seconds: f64) -> String {
        use crate::vocab::units::{format_seconds, format_sig3};
        let at = |rate_at_median: Option<f64>| rate_at_median.map(|r| r * self.median_seconds / seconds);
        if let Some(g) = at(self.gflops) {
            return if g >= 1000.0 {
                format!("{} TFLOP/s", format_sig3(g / 1000.0))
            } else {
                format!("{} GFLOP/s", format_sig3(g))
            };
        }
        match at(self.gbps_moved.or(self.gbps_copied)) {
            Some(g) => format!("{} GB/s", format_sig3(g)),
            None => format_seconds(seconds),
        }
    }

    /// The headline and its capped rounds in words, where the point has
    /// capped rounds: "779 TFLOP/s at 1980 MHz; 676 TFLOP/s power-capped at
    /// 1485 MHz in 1 of 5 rounds", or "every round (5) ran power-capped, at
    /// 1485 MHz".
    pub fn power_states(&self) -> Option<String> {
        let c = self.capped.as_ref()?;
        let mhz = |m: Option<f64>| m.map(|m| format!(" at {m:.0} MHz")).unwrap_or_default();
        if c.all {
            return Some(format!("every round ({}) ran power-capped{}", c.of, mhz(c.clock_mhz)));
        }
        Some(format!(
            "{}{}; {} power-capped{} in {} of {} rounds",
            self.rate_at(self.median_seconds),
            mhz(c.full_clock_mhz),
            self.rate_at(c.median_seconds),
            mhz(c.clock_mhz),
            c.rounds,
            c.of
        ))
    }
}

/// An interval wider than this (±10 %) says why ([`PointStat::wide_why`]).
pub const WIDE: f64 = 0.10;

/// Why a point's interval is wide.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "reason", rename_all = "snake_case")]
pub enum WideWhy {
    /// One round: the interval rests on its samples.
    OneRound,
    /// Fewer than 3 rounds, so t is large; `why` is the schedule's reason
    /// when it recorded one (an operation too slow for --max-time).
    FewRounds { rounds: u32, why: Option<String> },
    /// Its own round medians spread this much (relative standard deviation).
    RoundsDisagree { spread: f64, rounds: u32 },
    /// Its rounds agree within `own`, but its neighbours on the curve (or
    /// the run) spread `prior`, which it borrows.
    Neighbours { own: f64, prior: f64 },
}

impl std::fmt::Display for WideWhy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let pct = |x: f64| format!("{:.1} %", x * 100.0);
        match self {
            WideWhy::OneRound => write!(f, "one round: its samples only"),
            WideWhy::FewRounds { rounds, why: Some(why) } => write!(f, "{rounds} rounds ({why})"),
            WideWhy::FewRounds { rounds, why: None } => write!(f, "only {rounds} rounds"),
            WideWhy::RoundsDisagree { spread, rounds } => {
                write!(f, "its {rounds} rounds disagree: their medians spread {}", pct(*spread))
            }
            WideWhy::Neighbours { own, prior } => write!(
                f,
                "the sizes around it: its rounds agree within {}, its neighbours spread {}",
                pct(*own),
                pct(*prior)
            ),
        }
    }
}

/// The rounds a point's headline rests on: the full-clock rounds where
/// some ran capped ([`CappedRounds`]), else all of them
/// ([`crate::vocab::telemetry::headline_rounds`]).
pub(crate) struct Headline {
    /// The rounds it keeps, and their medians, in round order.
    pub(crate) rounds: Vec<u32>,
    pub(crate) medians: Vec<f64>,
    /// Their samples, sorted, where some rounds were left out (`None`: all).
    pub(crate) pooled: Option<Vec<f64>>,
    /// The spread of their medians ([`interval::spread_of`]).
    pub(crate) spread: Option<f64>,
    /// Their median clock, MHz, where every one of them read one.
    pub(crate) clock_mhz: Option<f64>,
    pub(crate) capped: Option<CappedRounds>,
}

/// The headline of a point from its rounds (each round's values sorted,
/// in round order) and each round's power state, where known: the one rule
/// `point_stats` and `compare` share.
pub(crate) fn headline_of(
    by_round: &[(u32, Vec<f64>)],
    states: Option<&HashMap<u32, crate::vocab::telemetry::RoundState>>,
) -> Headline {
    use crate::vocab::telemetry::{capped_rounds, headline_rounds, RoundState};
    let n = by_round.len();
    let state: Vec<RoundState> =
        by_round.iter().map(|(r, _)| states.and_then(|m| m.get(r)).copied().unwrap_or((None, None))).collect();
    let is_capped = capped_rounds(&state);
    let keep = headline_rounds(&is_capped);
    let (kept, capped): (Vec<usize>, Vec<usize>) =
        ((0..n).filter(|&i| keep[i]).collect(), (0..n).filter(|&i| is_capped[i]).collect());
    let median_of = |i: &usize| stats::quantile_sorted(&by_round[*i].1, 0.5);
    // The median clock of some rounds, where every one of them read one.
    let clock = |idx: &[usize]| {
        let mut c: Vec<f64> = idx.iter().filter_map(|&i| state[i].0).collect();
        (c.len() == idx.len() && !c.is_empty()).then(|| stats::median_unsorted(&mut c))
    };
    let medians: Vec<f64> = kept.iter().map(median_of).collect();
    let pooled = (kept.len() < n).then(|| {
        let mut xs: Vec<f64> = kept.iter().flat_map(|&i| by_round[i].1.iter().copied()).collect();
        xs.sort_by(f64::total_cmp);
        xs
    });
    let capped = (!capped.is_empty()).then(|| CappedRounds {
        rounds: capped.len() as u32,
        of: n as u32,
        median_seconds: interval::figure(&capped.iter().map(median_of).collect::<Vec<_>>()).unwrap_or(f64::NAN),
        clock_mhz: clock(&capped),
        full_clock_mhz: (capped.len() < n).then(|| clock(&kept)).flatten(),
        all: capped.len() == n,
    });
    Headline {
        rounds: kept.iter().map(|&i| by_round[i].0).collect(),
        spread: interval::spread_of(&medians),
        clock_mhz: clock(&kept),
        medians,
        pooled,
        capped,
    }
}

/// Per-point statistics of one archived run: read, check and summarize in
/// one call (notebooks use this, so that every polars object is made and
/// consumed by the same compiled copy of polars).
pub fn run_stats(run: &crate::archive::RunDir) -> Result<Vec<PointStat>> {
    point_stats(run.scan(false)?.1)
}

/// Whether any timed row comes from a rank above 0 (whether
/// [`samples_lazy`] should collapse ranks).
pub fn has_ranks(rows: &LazyFrame) -> Result<bool> {
    let df = timed(rows.clone()).select([col("rank").max()]).collect().map_err(Error::analysis)?;
    Ok(crate::archive::schema::columns::u64s(&df, "rank")?.first().copied().flatten().unwrap_or(0) > 0)
}

/// Summarize rows (any number of runs) into [`PointStat`]s, sorted by run
/// and point.
pub fn point_stats(rows: LazyFrame) -> Result<Vec<PointStat>> {
    use crate::archive::schema::columns::{f64s, strings, u64s};
    let grouped = super::samples::point_samples(&rows)?;
    if grouped.is_empty() {
        return Ok(Vec::new());
    }
    let mut telemetry = super::telemetry::point_telemetry(&rows)?;
    let states = if telemetry.is_empty() { Default::default() } else { super::telemetry::round_states(&rows)? };
    let mut params = params_lazy(rows.clone(), true).collect().map_err(Error::analysis)?;
    if params.height() < grouped.len() {
        // A point without a sample 0 (an archive written by other means):
        // read every row's parameters instead.
        params = params_lazy(rows, false).collect().map_err(Error::analysis)?;
    }
    let df = &params;
    let (s, u, f) = (|n| strings(df, n), |n| u64s(df, n), |n| f64s(df, n));
    let (run_id, bench, backend, device, op) = (s("run_id")?, s("bench")?, s("backend")?, s("device")?, s("op")?);
    let (variant, dtype, note, peer, source) = (s("variant")?, s("dtype")?, s("note")?, s("peer")?, s("source")?);
    let (ranks, method, stop, axes) = (u("ranks")?, s("method")?, s("stop")?, s("axes")?);
    let (point, size, m, n, k, threads) = (u("point")?, u("size_bytes")?, u("m")?, u("n")?, u("k")?, u("threads")?);
    let (bytes_copied, bytes_moved, flops, bw_factor) =
        (u("bytes_copied")?, u("bytes_moved")?, f("flops")?, f("bw_factor")?);
    let mut at: HashMap<(String, u64), usize> = HashMap::with_capacity(df.height());
    for i in 0..df.height() {
        at.entry((run_id[i].clone().unwrap_or_default(), point[i].unwrap_or(0))).or_insert(i);
    }

    // First pass, on every CPU: each point's summary, its round medians
    // and their spread; then each run's floor under those spreads.
    let firsts = super::on_every_cpu(&grouped, |g| {
        let states = states.get(&(g.run_id.clone(), g.point));
        let by_round = interval::rounds_sorted(&g.sorted_seconds, &g.rounds);
        (stats::summarize_sorted(&g.sorted_seconds), headline_of(&by_round, states))
    });
    let mut out = Vec::with_capacity(grouped.len());
    let mut samples = Vec::with_capacity(grouped.len());
    for (g, (summary, headline)) in grouped.into_iter().zip(firsts) {
        let key = (g.run_id, g.point as u64);
        let Some(&i) = at.get(&key) else { continue };
        let Some(summary) = summary else { continue };
        let Headline { medians, pooled, spread, capped, .. } = headline;
        let Some(figure) = interval::figure(&medians) else { continue };
        let (iterations, n_samples, rounds) = (g.iterations, g.sorted_seconds.len(), g.rounds);
        let values = pooled.unwrap_or(g.sorted_seconds);
        let per_median = |work: Option<f64>| work.map(|w| w / figure / 1e9);
        let per_min = |work: Option<f64>| work.map(|w| w / summary.min / 1e9);
        let copied = bytes_copied[i].map(|b| b as f64);
        let moved = bytes_moved[i].map(|b| b as f64);
        out.push(PointStat {
            run_id: key.0.clone(),
            point: key.1 as u32,
            bench: bench[i].clone().unwrap_or_default(),
            backend: backend[i].clone().unwrap_or_default(),
            device: device[i].clone().unwrap_or_default(),
            op: op[i].clone().unwrap_or_default(),
            variant: variant[i].clone(),
            dtype: dtype[i].clone(),
            size_bytes: size[i],
            m: m[i],
            n: n[i],
            k: k[i],
            threads: threads[i].map(|t| t as u32),
            ranks: ranks[i].map(|r| r as u32),
            peer: peer[i].clone(),
            bw_factor: bw_factor[i],
            method: method[i].clone(),
            axes: axes[i].clone(),
            note: note[i].clone(),
            stop: stop[i].as_deref().and_then(|s| crate::vocab::kinds::StopReason::parse(s).ok()),
            source: source[i].clone(),
            samples: n_samples as u32,
            iterations,
            median_seconds: figure,
            ci_low_seconds: None,
            ci_high_seconds: None,
            within_low_seconds: None,
            within_high_seconds: None,
            rounds: rounds.iter().copied().max().map_or(1, |r| r + 1),
            ci_basis: None,
            round_spread: spread,
            prior_spread: None,
            gbps_copied: per_median(copied),
            gbps_moved: per_median(moved),
            best_gbps_moved: per_min(moved),
            busbw_gbps: copied.zip(bw_factor[i]).map(|(c, b)| c * b / figure / 1e9),
            gflops: flops[i].map(|f| f / figure / 1e9),
            best_gflops: flops[i].map(|f| f / summary.min / 1e9),
            // Energy per GB for copies, per GFLOP for GEMM (not per byte of
            // its compulsory traffic).
            telemetry: telemetry.remove(&(key.0.clone(), key.1 as u32)).map(|t| {
                let bytes = if flops[i].is_some() { None } else { copied.or(moved) };
                let mut t = super::telemetry::with_energy(t, figure, bytes, flops[i]);
                // Its figure comes from its full-clock rounds, which
                // `capped_rounds` keeps clear of every slowing reason: it
                // stays flagged (its capped rounds were slowed), but it is
                // not held out of plateaus and headlines.
                if capped.as_ref().is_some_and(|c| !c.all) {
                    t.held_out = false;
                    // Its power is every round's, its figure the full-clock
                    // rounds': no energy per operation from the two.
                    (t.joules_per_op, t.j_per_gb, t.gflop_per_j) = (None, None, None);
                }
                t
            }),
            summary,
            ci_wide_why: None,
            capped,
        });
        samples.push((values, medians));
    }
    set_intervals(&mut out, &samples);
    Ok(out)
}

/// Each point's prior spread, from its neighbours on its curve in its run
/// ([`interval::prior_spreads`]), and then its intervals from its round
/// medians (`samples`: each point's values and round medians, in order).
fn set_intervals(out: &mut [PointStat], samples: &[(Vec<f64>, Vec<f64>)]) {
    let mut by_run: HashMap<String, Vec<usize>> = HashMap::new();
    for (n, p) in out.iter().enumerate() {
        by_run.entry(p.run_id.clone()).or_default().push(n);
    }
    let mut priors = vec![None; out.len()];
    for members in by_run.values() {
        let curves: Vec<(String, u64, Option<f64>)> = members
            .iter()
            .map(|&n| {
                let p = &out[n];
                let (key, place) = p.params().curve_on(&p.backend, &p.device);
                (key, place, p.round_spread)
            })
            .collect();
        for (&n, prior) in members.iter().zip(interval::prior_spreads(&curves)) {
            priors[n] = prior;
        }
    }
    let work: Vec<_> = samples.iter().zip(&priors).collect();
    let intervals = super::on_every_cpu(&work, |((values, medians), prior)| {
        interval::intervals_from_round_medians(medians, values, **prior)
    });
    for ((p, prior), both) in out.iter_mut().zip(priors).zip(intervals) {
        p.prior_spread = prior;
        if let Some(both) = both {
            (p.ci_low_seconds, p.ci_high_seconds) = (Some(both.rerun.low), Some(both.rerun.high));
            (p.within_low_seconds, p.within_high_seconds) = (Some(both.within.low), Some(both.within.high));
            (p.rounds, p.ci_basis) = (both.within.rounds, Some(both.within.basis));
        }
        p.ci_wide_why = p.wide_why();
    }
}
