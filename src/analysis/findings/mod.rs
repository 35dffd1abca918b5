//! What a report says, as typed values: the findings. Each variant is one
//! sentence. The analysis here decides *which* sentence holds and fills in
//! its numbers (from the series, their summaries and the metrics); the
//! words live in `templates/sentences/<id>.md`, a tera partial the report
//! renders ([`crate::report::context::said`]). Tests assert on the values
//! here, not on the words.
//!
//! - [`bandwidth`]: size-swept curves (memcpy, STREAM, links, GEMM peaks,
//!   convergence);
//! - [`latency`]: a latency curve's largest inversion and protocol step;
//! - [`metrics`]: workload metrics (a training log's steady state, or the
//!   range of points of different settings);
//! - [`plausibility`]: a throughput from an unnamed GPU against every
//!   known GPU's peak;
//! - [`precision`]: how many medians reached their interval target;
//! - [`share`]: what a headline figure is held against.

use serde::Serialize;

use crate::analysis::Saturation;
use crate::vocab::stats::Crossing;

pub mod bandwidth;
pub mod latency;
pub mod metrics;
pub mod plausibility;
pub mod precision;
pub mod share;

/// One sentence of a report: its id (`kebab-case`, the partial's name)
/// and the values it states. Rates are GB/s, sizes bytes, times seconds,
/// fractions 0–1.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "id", rename_all = "kebab-case")]
pub enum Said {
    /// The curve with the highest plateau: its peak, both byte counts, and,
    /// when the peak exceeds the memory roofline, that roofline and the
    /// working set (bytes one operation moves) that a cache must be serving.
    BandwidthPeak {
        what: String,
        peak_gbps: f64,
        copied_gbps: Option<f64>,
        size_bytes: u64,
        label: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        above_roof: Option<(f64, u64)>,
        /// Whether that curve settled on a plateau (else it is the highest
        /// level among curves none of which settled).
        settled: bool,
    },
    /// Its plateau, the sizes it spans and how far they may differ from it.
    Plateau { plateau_gbps: f64, sizes: Vec<u64>, tolerance: f64, flags: PlateauFlags },
    /// Too few largest sizes agree: the largest size's rate stands in.
    /// `rule`: what a plateau needs ([`crate::vocab::stats::plateau_rule`]).
    Unsettled { largest: Vec<u64>, level_gbps: f64, rule: String, flags: PlateauFlags },
    /// A peak above the plateau from a cache-resident working set.
    CachePeak { size_bytes: u64, ratio: f64, working_set_bytes: u64 },
    /// One size: no saturation.
    OneSize,
    /// More than one size, but no level held.
    NoLevel,
    /// Every size already at half the plateau or more.
    AboveRamp { smallest: Option<u64>, cached: bool },
    /// Where the curve stays at or above 50/80/90 % of its plateau.
    Saturation { p50: Crossing, p80: Crossing, p90: Crossing },
    /// The smallest size below half the plateau: a fixed cost.
    FixedCost { size_bytes: u64, time_s: f64 },
    /// A latency curve whose smaller message takes longer than a larger
    /// one (the largest such ratio): `overlap` whether their rerun
    /// intervals overlap (then it is within the noise).
    LatencyInversion {
        curve: String,
        small_bytes: u64,
        small_s: f64,
        large_bytes: u64,
        large_s: f64,
        ratio: f64,
        overlap: bool,
        /// Other sizes below `large_bytes` that take longer than it too.
        also: Vec<u64>,
    },
    /// A latency curve's largest step between neighbouring small sizes
    /// where the time grows more than twice as fast as the bytes and the
    /// rerun intervals do not overlap: a fixed cost that starts at
    /// `large_bytes` (a change of protocol, as an MPI library's eager
    /// limit makes).
    LatencyStep { curve: String, small_bytes: u64, small_s: f64, large_bytes: u64, large_s: f64 },
    /// Points measured in rounds whose interval is wider than ±1 %.
    /// `one_round`: how many of the `of` points rest on a single round.
    WideIntervals { wide: usize, of: usize, widest: f64, one_round: usize },
    /// Points that stopped before the noise target, and why.
    NoiseTarget { met: usize, of: usize, reasons: Vec<String> },
    /// The plateau with the most threads against one thread.
    Threads { threads: u32, most_gbps: f64, one_gbps: f64 },
    /// The plateau as a share of the memory roofline, and where 90 % of
    /// the roofline is reached (`None`: never).
    Roofline { fraction: f64, name: String, roofline_gbps: String, reach_90: Option<Crossing> },
    /// No roofline for the device, and how to give one.
    NoRoofline { device: String },
    /// A STREAM kernel's best curve.
    /// `sizes`: how many sizes the curve has; `settled`: whether it holds a
    /// plateau ([`crate::analysis::Level`]).
    StreamKernel {
        op: String,
        plateau_gbps: f64,
        peak_gbps: f64,
        size_bytes: u64,
        label: String,
        sizes: usize,
        settled: bool,
    },
    /// A link curve (collective, p2p, peer or host↔device copy): its peak,
    /// its plateau when it settled, and where it ramps to it.
    Link {
        label: String,
        ranks: Option<u32>,
        /// Bus bandwidth (collectives) rather than bandwidth.
        bus: bool,
        peak_gbps: f64,
        size_bytes: u64,
        plateau_gbps: f64,
        /// The size the unsettled level is read at (its largest trusted
        /// size), and the curve's largest size.
        level_at: u64,
        largest: u64,
        sizes: usize,
        settled: bool,
        p80: Crossing,
        p90: Crossing,
        /// peak / plateau, when the peak exceeds the plateau by > 25 %.
        hump: Option<f64>,
        /// The peak is at the smallest size measured (small messages, not
        /// mid-size ones, run fastest).
        hump_at_smallest: bool,
        flags: PlateauFlags,
    },
    /// A GEMM dtype's best point, in `unit` (GFLOP/s or TFLOP/s).
    GemmPeak {
        dtype: String,
        rate: f64,
        unit: String,
        shape: String,
        threads: Option<u32>,
        method: Option<String>,
        points: usize,
    },
    /// A workload metric with one point (`from`: the file or run, when a
    /// metric comes from several).
    MetricSingle {
        metric: String,
        from: Option<String>,
        median: f64,
        unit: String,
        samples: usize,
        ci: Option<(f64, f64)>,
        /// The point's parameters.
        at: String,
    },
    /// A workload metric's best point (`higher`: higher is better) and the
    /// level it holds; `at` names the point's parameters.
    MetricBest {
        metric: String,
        from: Option<String>,
        higher: bool,
        best: f64,
        unit: String,
        at: String,
        level: MetricLevel,
    },
    /// A training loss above [`crate::vocab::metrics::LOSS_BOUND`] (a
    /// uniform guess over a million tokens): its largest value and where.
    LossAboveUniform {
        metric: String,
        from: Option<String>,
        value: f64,
        at: String,
        bound: f64,
        /// The vocabulary the run recorded (a `vocab` parameter): the
        /// bound is then ln of it, else ln(10^6).
        vocab: Option<u64>,
    },
    /// One-sided against two-sided one-way transfers, like for like: the
    /// table's ratio when it is beyond the plateaus' flatness (`resolved`).
    OneSided {
        one_sided: String,
        two_sided: String,
        resolved: bool,
        ratio: String,
        flat_to: String,
        same_file: bool,
        /// From two files: the device both name.
        device: Option<String>,
    },
    /// No like-for-like pair: none settles on a plateau, or every pair
    /// that does comes from two systems (`across_systems`).
    OneSidedNotCompared { across_systems: bool },
    /// Transfers crossed a link nobody named: the link types the logs
    /// name, and the ids `--link` takes.
    UnnamedLink { named: Vec<String>, known: Vec<String> },
    /// A run whose ranks all ran on one host.
    SharedMemory { run_id: String, host: String },
    /// A peer-write launch sweep whose fewest threads in flight were best.
    LaunchBest { least: String },
    /// A launch sweep's best launch against the one with the fewest threads.
    LaunchPeak {
        best: String,
        best_gbps: f64,
        ratio: f64,
        least: String,
        least_gbps: f64,
        best_threads: u64,
        least_threads: u64,
    },
    /// The peer charts draw `shown` of the `measured` GPU pairs (`chosen`:
    /// by `--pairs`, else those from the lowest GPU).
    PairsShown { shown: usize, measured: usize, chosen: bool, pairs: Vec<String> },
    /// A run with no timed points of its own.
    NoTimedPoints,
    /// How many points reached the interval `target` (±, 0–1), the widest
    /// of those that did not (`more`: how many are not listed), how many
    /// rest on one round, and the median interval.
    Precision {
        met: usize,
        of: usize,
        target: f64,
        widest_missed: Vec<Missed>,
        more: usize,
        one_round: usize,
        /// The median within-run half-width over points.
        median_width: Option<f64>,
        /// The median rerun half-width over points (what the tables state).
        median_rerun: Option<f64>,
    },
}

/// A point whose interval missed the target: its width (`None`: no
/// interval) and why it is wide, when known.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Missed {
    pub label: String,
    pub width: Option<f64>,
    pub why: Option<String>,
}

/// The level a workload metric holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum MetricLevel {
    /// Along a step axis: the median after the warm-up steps.
    Steady { axis: String, first: String, last: String, points: usize, warmup: usize, median: f64 },
    /// Along a step axis, still moving after the warm-up: the median of
    /// its first and last halves differ by more than the plateau tolerance,
    /// so no steady state is claimed (a loss that still falls).
    Moving { axis: String, first: String, last: String, early: f64, late: f64, direction: String },
    /// Without one: points of different settings, which no one level
    /// describes; the range of their medians.
    Points { points: usize, low: f64, high: f64 },
}

/// What a plateau left out: a jump at the largest size, and sizes too
/// uncertain to set a level.
#[derive(Debug, Clone, PartialEq, Serialize, Default)]
pub struct PlateauFlags {
    /// The largest size and its rate (GB/s), when it jumps off the level.
    pub jump: Option<(u64, f64)>,
    pub left_out: Vec<u64>,
    /// Sizes measured while throttled, held out.
    pub held_out: Vec<u64>,
    /// The half-width above which a point is too uncertain (0–1).
    pub trusted_half_width: f64,
}

impl PlateauFlags {
    pub fn of(s: &Saturation) -> PlateauFlags {
        PlateauFlags {
            jump: s.plateau_jump,
            left_out: s.plateau_left_out.clone(),
            held_out: s.plateau_held_out.clone(),
            trusted_half_width: crate::analysis::curves::TRUSTED_HALF_WIDTH,
        }
    }
}
