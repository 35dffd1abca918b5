//! Per-point telemetry (schema v7): what the sensors read while a point
//! was measured, and the energy units that follow from it — J/GB for
//! copies, GFLOP/J for GEMM. A point measured while throttled (a slowing
//! reason, or below 75 % of its reference clock:
//! [`crate::vocab::telemetry::throttled`]) says so, and is kept out of
//! plateaus and headlines unless the report is asked to keep it.

use std::collections::HashMap;

use polars::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};

/// What the sensors read over a point's rounds.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct PointTelemetry {
    /// Median over its samples of each round's median SM (GPU) or core
    /// (CPU) clock, MHz.
    pub clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    /// The lowest and highest round clock: rounds of one point can run at
    /// different clocks (a GPU at its boost clock, then at its power cap).
    pub clock_range_mhz: Option<(f64, f64)>,
    /// Mean power over its rounds' timed operations, W: each round's mean
    /// power weighted by its samples' seconds, over the rounds whose power
    /// rests on at least 25 readings, 0.5 s at the default interval (a
    /// GPU's board power; a CPU's package power from RAPL). None when no
    /// round was that long.
    pub power_w: Option<f64>,
    /// The seconds of timed samples its power rests on (rounds with at
    /// least [`crate::vocab::telemetry::MIN_POWER_READINGS`] readings only).
    pub powered_seconds: Option<f64>,
    /// The lowest and highest round power, W (one short round can read 0 W
    /// or several kW: see `power_w`).
    pub power_range_w: Option<(f64, f64)>,
    /// The highest temperature read, °C.
    pub temperature_c: Option<f64>,
    /// Every throttle reason any of its rounds saw, OR-ed.
    pub throttle: Option<u64>,
    /// The fewest sensor readings any of its rounds rests on (2 or more
    /// bracket a round; 1 is a single reading).
    pub readings: u64,
    /// Why it counts as throttled, when it does.
    pub throttled: Option<String>,
    /// Whether it is kept out of plateaus and headlines: throttled in the
    /// rounds its figure rests on (a point whose capped rounds are set
    /// apart is not, `analysis::summary`), and the report was not asked to
    /// keep such points (`report --keep-throttled`).
    pub held_out: bool,
    /// Energy of one operation: power × the median seconds per operation, J.
    pub joules_per_op: Option<f64>,
    /// Joules per GB copied (the payload, each byte once; copies and
    /// host links).
    pub j_per_gb: Option<f64>,
    /// GFLOP per joule (GEMM).
    pub gflop_per_j: Option<f64>,
    /// The board's power limit, W, where the mean power read above it: a
    /// reading error (an energy counter that stepped inside a short
    /// window), so the point has no energy units ([`over_power_limit`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub over_limit_w: Option<f64>,
}

impl PointTelemetry {
    /// The reasons in words (`software power cap, hardware slowdown`),
    /// without `idle` ([`crate::vocab::telemetry::reported`]).
    pub fn reasons(&self) -> Vec<&'static str> {
        self.throttle.map(crate::vocab::telemetry::reported).unwrap_or_default()
    }
}

/// Each point's telemetry, by (run, point), from the measured rows that
/// carry readings.
pub fn point_telemetry(rows: &LazyFrame) -> Result<HashMap<(String, u32), PointTelemetry>> {
    use crate::archive::schema::columns::{f64s, strings, u64s};
    let measured = super::summary::timed(rows.clone()).filter(col("sensor_readings").is_not_null());
    // Power per point: the energy of its rounds over their time (each
    // round's mean power weighted by the seconds of its samples). An energy
    // counter that steps every few tens of ms reads 0 W over one short
    // round and several kW over the next; over all of them it is right.
    let weighted = measured
        .clone()
        .filter(col("power_w").is_not_null())
        // Rounds whose power rests on enough readings for the energy
        // counter (rows recorded before the window rule may hold a power
        // over a few ms: 0 W or several kW).
        .filter(col("sensor_readings").gt_eq(lit(crate::vocab::telemetry::MIN_POWER_READINGS)))
        .group_by([col("run_id"), col("point"), col("round")])
        .agg([col("power_w").first(), col("seconds").sum()])
        .group_by([col("run_id"), col("point")])
        .agg([
            ((col("power_w") * col("seconds")).sum() / col("seconds").sum()).alias("power_mean"),
            col("seconds").sum().alias("powered_seconds"),
        ]);
    let df = measured
        .clone()
        .group_by([col("run_id"), col("point")])
        .agg([
            col("clock_mhz").median(),
            col("clock_mhz").min().alias("clock_min"),
            col("clock_mhz").max().alias("clock_max"),
            col("mem_clock_mhz").median(),
            col("power_w").min().alias("power_min"),
            col("power_w").max().alias("power_max"),
            col("temperature_c").max(),
            col("sensor_readings").cast(DataType::UInt64).min().alias("readings"),
        ])
        .join(weighted, [col("run_id"), col("point")], [col("run_id"), col("point")], JoinArgs::new(JoinType::Left))
        .collect()
        .map_err(Error::analysis)?;
    let mut out = HashMap::with_capacity(df.height());
    let (run, point) = (strings(&df, "run_id")?, u64s(&df, "point")?);
    let (clock, mem, temp) = (f64s(&df, "clock_mhz")?, f64s(&df, "mem_clock_mhz")?, f64s(&df, "temperature_c")?);
    let readings = u64s(&df, "readings")?;
    let (mean, powered) = (f64s(&df, "power_mean")?, f64s(&df, "powered_seconds")?);
    let (c0, c1, p0, p1) =
        (f64s(&df, "clock_min")?, f64s(&df, "clock_max")?, f64s(&df, "power_min")?, f64s(&df, "power_max")?);
    for i in 0..df.height() {
        let key = (run[i].clone().unwrap_or_default(), point[i].unwrap_or(0) as u32);
        out.insert(
            key,
            PointTelemetry {
                clock_mhz: clock[i],
                clock_range_mhz: c0[i].zip(c1[i]),
                mem_clock_mhz: mem[i],
                power_w: mean[i],
                powered_seconds: powered[i],
                power_range_w: p0[i].zip(p1[i]),
                temperature_c: temp[i],
                readings: readings[i].unwrap_or(0),
                ..PointTelemetry::default()
            },
        );
    }
    // The reasons: every distinct mask of the point, OR-ed.
    let masks = measured
        .filter(col("throttle").is_not_null())
        .select([col("run_id"), col("point"), col("throttle")])
        .unique(None, UniqueKeepStrategy::Any)
        .collect()
        .map_err(Error::analysis)?;
    let (run, point, mask) = (strings(&masks, "run_id")?, u64s(&masks, "point")?, u64s(&masks, "throttle")?);
    for i in 0..masks.height() {
        let key = (run[i].clone().unwrap_or_default(), point[i].unwrap_or(0) as u32);
        if let (Some(t), Some(m)) = (out.get_mut(&key), mask[i]) {
            t.throttle = Some(t.throttle.unwrap_or(0) | m);
        }
    }
    for t in out.values_mut() {
        t.throttled = t.throttle.and_then(crate::vocab::telemetry::throttled);
        t.held_out = t.throttled.is_some();
    }
    Ok(out)
}

/// Each measured round's power state as its rows recorded it: (median
/// clock, throttle mask) by (run, point) and round. Every row of a round
/// carries the same step summary, so its first row speaks for it.
pub type RoundStates = HashMap<(String, u32), HashMap<u32, crate::vocab::telemetry::RoundState>>;

/// [`RoundStates`] of the measured rows that carry readings.
pub fn round_states(rows: &LazyFrame) -> Result<RoundStates> {
    use crate::archive::schema::columns::{f64s, strings, u64s};
    let df = super::summary::timed(rows.clone())
        .filter(col("sensor_readings").is_not_null())
        .group_by([col("run_id"), col("point"), col("round").fill_null(lit(0u32))])
        .agg([col("clock_mhz").first(), col("throttle").first()])
        .collect()
        .map_err(Error::analysis)?;
    let (run, point, round) = (strings(&df, "run_id")?, u64s(&df, "point")?, u64s(&df, "round")?);
    let (clock, mask) = (f64s(&df, "clock_mhz")?, u64s(&df, "throttle")?);
    let mut out = RoundStates::new();
    for i in 0..df.height() {
        let key = (run[i].clone().unwrap_or_default(), point[i].unwrap_or(0) as u32);
        out.entry(key).or_default().insert(round[i].unwrap_or(0) as u32, (clock[i], mask[i]));
    }
    Ok(out)
}

/// A GPU's board power limit, W, as its run's manifest recorded it (NVML's
/// `power_limit_mw` of the card the point ran on).
fn power_limit_w(p: &super::PointStat, manifest: Option<&crate::archive::manifest::Manifest>) -> Option<f64> {
    let facts = super::catalog::gpu_facts(p, manifest)?;
    let mw: f64 = facts.extra.get("power_limit_mw")?.parse().ok()?;
    (mw > 0.0).then_some(mw / 1000.0)
}

/// Points whose mean power reads above their board's power limit: a
/// board cannot draw more than its limit for long, so such a mean is a
/// reading error. It is flagged (`over_limit_w`) and kept out of J/GB,
/// GFLOP/J and J per operation.
pub fn over_power_limit(stats: &mut [super::PointStat], manifests: &[crate::archive::manifest::Manifest]) {
    for p in stats.iter_mut() {
        let m = manifests.iter().find(|m| m.run_id == p.run_id);
        let Some(limit) = power_limit_w(p, m) else { continue };
        let Some(t) = p.telemetry.as_mut() else { continue };
        if t.power_w.is_some_and(|w| w > limit) {
            t.over_limit_w = Some(limit);
            (t.joules_per_op, t.j_per_gb, t.gflop_per_j) = (None, None, None);
        }
    }
}

/// When `keep` (`--keep-throttled`), keep throttled points in plateaus and
/// headlines after all: they stay flagged, no longer held out.
pub fn keep_throttled(stats: &mut [super::PointStat], keep: bool) {
    for t in stats.iter_mut().filter_map(|p| p.telemetry.as_mut()).filter(|_| keep) {
        t.held_out = false;
    }
}

/// Fill in the energy units of a point from its power and median time.
pub fn with_energy(
    mut t: PointTelemetry,
    median_seconds: f64,
    bytes: Option<f64>,
    flops: Option<f64>,
) -> PointTelemetry {
    t.joules_per_op = t.power_w.filter(|_| median_seconds > 0.0).map(|w| w * median_seconds);
    if let Some(j) = t.joules_per_op.filter(|&j| j > 0.0) {
        t.j_per_gb = bytes.filter(|&b| b > 0.0).map(|b| j / (b / 1e9));
        t.gflop_per_j = flops.filter(|&f| f > 0.0).map(|f| f / 1e9 / j);
    }
    t
}
