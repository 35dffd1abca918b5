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
    /// Median over its samples of each round's mean power, W (a GPU's
    /// board power; a CPU's package power from RAPL).
    pub power_w: Option<f64>,
    /// The highest temperature read, °C.
    pub temperature_c: Option<f64>,
    /// Every throttle reason any of its rounds saw, OR-ed.
    pub throttle: Option<u64>,
    /// The fewest sensor readings any of its rounds rests on (2 or more
    /// bracket a round; 1 is a single reading).
    pub readings: u64,
    /// Why it counts as throttled, when it does.
    pub throttled: Option<String>,
    /// Energy of one operation: power × the median seconds per operation, J.
    pub joules_per_op: Option<f64>,
    /// Joules per GB copied (the payload, each byte once; copies and
    /// host links).
    pub j_per_gb: Option<f64>,
    /// GFLOP per joule (GEMM).
    pub gflop_per_j: Option<f64>,
}

impl PointTelemetry {
    /// The reasons in words (`software power cap, hardware slowdown`).
    pub fn reasons(&self) -> Vec<&'static str> {
        self.throttle.map(crate::vocab::telemetry::decode).unwrap_or_default()
    }
}

/// Each point's telemetry, by (run, point), from the measured rows that
/// carry readings.
pub fn point_telemetry(rows: &LazyFrame) -> Result<HashMap<(String, u32), PointTelemetry>> {
    use crate::archive::schema::columns::{f64s, strings, u64s};
    let measured = super::summary::timed(rows.clone()).filter(col("sensor_readings").is_not_null());
    let df = measured
        .clone()
        .group_by([col("run_id"), col("point")])
        .agg([
            col("clock_mhz").median(),
            col("mem_clock_mhz").median(),
            col("power_w").median(),
            col("temperature_c").max(),
            col("sensor_readings").cast(DataType::UInt64).min().alias("readings"),
        ])
        .collect()
        .map_err(Error::analysis)?;
    let mut out = HashMap::with_capacity(df.height());
    let (run, point) = (strings(&df, "run_id")?, u64s(&df, "point")?);
    let (clock, mem, power, temp) =
        (f64s(&df, "clock_mhz")?, f64s(&df, "mem_clock_mhz")?, f64s(&df, "power_w")?, f64s(&df, "temperature_c")?);
    let readings = u64s(&df, "readings")?;
    for i in 0..df.height() {
        let key = (run[i].clone().unwrap_or_default(), point[i].unwrap_or(0) as u32);
        out.insert(
            key,
            PointTelemetry {
                clock_mhz: clock[i],
                mem_clock_mhz: mem[i],
                power_w: power[i],
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
    }
    Ok(out)
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
