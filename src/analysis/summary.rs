//! Per-point statistics (one polars lazy query) and curves of points.

use std::collections::BTreeMap;

use polars::prelude::*;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::vocab::stats;

/// The lazy per-point summary of measured rows: one row per (run, point) with sample statistics of seconds per operation and derived rates.
pub fn summarize_lazy(rows: LazyFrame) -> LazyFrame {
    // The columns constant within a point, from the one column table.
    let params = crate::vocab::columns::point_columns();
    let spo = || col("seconds_per_op");
    let mut aggs: Vec<Expr> = params.iter().map(|c| col(*c).first()).collect();
    aggs.extend([
        spo().len().alias("samples"),
        spo().min().alias("min_seconds"),
        spo().quantile(lit(0.2), QuantileMethod::Linear).alias("p20_seconds"),
        spo().median().alias("median_seconds"),
        spo().quantile(lit(0.8), QuantileMethod::Linear).alias("p80_seconds"),
        spo().max().alias("max_seconds"),
        spo().mean().alias("mean_seconds"),
        spo().std(1).alias("std_seconds"),
        col("iterations").sum().alias("iterations"),
    ]);
    aggs.push(col("ranks_reporting").max());
    let f = |c: &str| col(c).cast(DataType::Float64);
    // A sample's time is the slowest rank's, as nccl-tests and OSU report:
    // collapse ranks first (a no-op for single-process runs).
    let mut per_sample: Vec<Expr> = params.iter().map(|c| col(*c).first()).collect();
    per_sample.extend([
        col("seconds").max(),
        col("iterations").first(),
        col("rank").n_unique().cast(DataType::UInt32).alias("ranks_reporting"),
    ]);
    // Named-metric rows (schema v4) carry `value`, not `seconds`: their
    // summary is `analysis::workload`.
    rows.filter(col("status").eq(lit("measured")).and(col("metric").is_null()))
        .group_by([col("run_id"), col("point"), col("sample")])
        .agg(per_sample)
        .with_column((col("seconds") / f("iterations")).alias("seconds_per_op"))
        .group_by([col("run_id"), col("point")])
        .agg(aggs)
        .with_columns([
            (col("std_seconds").fill_null(lit(0.0)) / col("mean_seconds")).alias("cv"),
            (f("bytes_copied") / col("median_seconds") / lit(1e9)).alias("gbps_copied"),
            (f("bytes_moved") / col("median_seconds") / lit(1e9)).alias("gbps_moved"),
            (f("bytes_moved") / col("min_seconds") / lit(1e9)).alias("best_gbps_moved"),
            (f("bytes_copied") * col("bw_factor") / col("median_seconds") / lit(1e9)).alias("busbw_gbps"),
            (col("flops") / col("median_seconds") / lit(1e9)).alias("gflops"),
            (col("flops") / col("min_seconds") / lit(1e9)).alias("best_gflops"),
        ])
        .sort(["run_id", "point"], SortMultipleOptions::default())
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
    pub note: Option<String>,
    /// Why sampling stopped (native measured points).
    pub stop: Option<crate::vocab::kinds::StopReason>,
    pub source: Option<String>,
    pub samples: u32,
    pub iterations: u64,
    pub summary: stats::Summary,
    pub gbps_copied: Option<f64>,
    pub gbps_moved: Option<f64>,
    pub best_gbps_moved: Option<f64>,
    /// Collectives: bus bandwidth = algbw (bytes_copied / time) × bw_factor.
    pub busbw_gbps: Option<f64>,
    pub gflops: Option<f64>,
    pub best_gflops: Option<f64>,
}

impl PointStat {
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
            ..Default::default()
        }
    }
}

/// Per-point statistics of one archived run: read, check and summarize in
/// one call (notebooks use this, so that every polars object is made and
/// consumed by the same compiled copy of polars).
pub fn run_stats(run: &crate::archive::RunDir) -> Result<Vec<PointStat>> {
    point_stats(run.dataframe()?.lazy())
}

/// Collect the lazy summary into [`PointStat`]s.
pub fn point_stats(rows: LazyFrame) -> Result<Vec<PointStat>> {
    let df = summarize_lazy(rows).collect().map_err(Error::analysis)?;
    use crate::archive::schema::columns::{f64s, strings, u64s};
    let (s, u, f) = (|n| strings(&df, n), |n| u64s(&df, n), |n| f64s(&df, n));
    let (run_id, bench, backend, device, op) = (s("run_id")?, s("bench")?, s("backend")?, s("device")?, s("op")?);
    let (variant, dtype, note, peer, source) = (s("variant")?, s("dtype")?, s("note")?, s("peer")?, s("source")?);
    let (ranks, method, stop) = (u("ranks")?, s("method")?, s("stop")?);
    let (point, size, m, n, k, threads) = (u("point")?, u("size_bytes")?, u("m")?, u("n")?, u("k")?, u("threads")?);
    let (samples, iterations) = (u("samples")?, u("iterations")?);
    // Read each float column by name into a map, so a new column cannot
    // shift the others.
    let mut floats = std::collections::HashMap::new();
    for name in [
        "min_seconds",
        "p20_seconds",
        "median_seconds",
        "p80_seconds",
        "max_seconds",
        "mean_seconds",
        "std_seconds",
        "cv",
        "gbps_copied",
        "gbps_moved",
        "best_gbps_moved",
        "gflops",
        "best_gflops",
        "bw_factor",
        "busbw_gbps",
    ] {
        floats.insert(name, f(name)?);
    }
    let g = |name: &str, i: usize| floats[name][i];
    let nan = |v: Option<f64>| v.unwrap_or(f64::NAN);
    Ok((0..df.height())
        .map(|i| PointStat {
            run_id: run_id[i].clone().unwrap_or_default(),
            point: point[i].unwrap_or(0) as u32,
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
            bw_factor: g("bw_factor", i),
            method: method[i].clone(),
            note: note[i].clone(),
            stop: stop[i].as_deref().and_then(|s| crate::vocab::kinds::StopReason::parse(s).ok()),
            source: source[i].clone(),
            samples: samples[i].unwrap_or(0) as u32,
            iterations: iterations[i].unwrap_or(0),
            summary: stats::Summary {
                count: samples[i].unwrap_or(0) as usize,
                min: nan(g("min_seconds", i)),
                p20: nan(g("p20_seconds", i)),
                median: nan(g("median_seconds", i)),
                p80: nan(g("p80_seconds", i)),
                max: nan(g("max_seconds", i)),
                mean: nan(g("mean_seconds", i)),
                std_dev: g("std_seconds", i).unwrap_or(0.0),
                cv: nan(g("cv", i)),
            },
            gbps_copied: g("gbps_copied", i),
            gbps_moved: g("gbps_moved", i),
            best_gbps_moved: g("best_gbps_moved", i),
            gflops: g("gflops", i),
            best_gflops: g("best_gflops", i),
            busbw_gbps: g("busbw_gbps", i),
        })
        .collect())
}

/// Points that share everything but their size: one line on a chart.
#[derive(Debug, Clone, Serialize)]
pub struct Curve {
    /// `memcpy copy, 4 threads`.
    pub label: String,
    pub run_id: String,
    pub bench: String,
    pub op: String,
    pub threads: Option<u32>,
    pub dtype: Option<String>,
    pub device: String,
    pub points: Vec<PointStat>,
}

impl Curve {
    /// (size, bus bandwidth GB/s) pairs, for collectives.
    pub fn busbw(&self) -> Vec<(u64, f64)> {
        self.points.iter().filter_map(|p| Some((p.size_bytes?, p.busbw_gbps?))).collect()
    }

    /// The series a chart and the saturation analysis use: bus bandwidth
    /// for collectives, bytes read + written where known, else bytes copied.
    /// Transfers over a link (MPI p2p, GPU peer and host↔device copies) use
    /// bytes copied once, as nvbandwidth and the seed 000 scripts count.
    pub fn rate(&self) -> Vec<(u64, f64)> {
        if matches!(self.bench.as_str(), "p2p" | "memcpy-peer" | "h2d" | "d2h") {
            return self.gbps(false);
        }
        let b = self.busbw();
        if !b.is_empty() {
            return b;
        }
        let m = self.gbps(true);
        if !m.is_empty() {
            m
        } else {
            self.gbps(false)
        }
    }

    /// The y axis of [`Self::rate`], naming the bytes it counts.
    pub fn rate_axis(&self) -> &'static str {
        if matches!(self.bench.as_str(), "p2p" | "memcpy-peer" | "h2d" | "d2h") {
            "GB/s (bytes copied once)"
        } else if !self.busbw().is_empty() {
            "GB/s (bus bandwidth)"
        } else if !self.gbps(true).is_empty() {
            "GB/s (bytes read + written)"
        } else {
            "GB/s (bytes copied once)"
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

/// Group size-swept points into curves, ordered by (run, bench, op, threads).
pub fn curves(points: &[PointStat]) -> Vec<Curve> {
    type Key =
        (String, String, String, String, Option<u32>, Option<String>, Option<String>, Option<String>, Option<String>);
    let mut map: BTreeMap<Key, Vec<PointStat>> = BTreeMap::new();
    for p in points.iter().filter(|p| p.size_bytes.is_some()) {
        let gpu = p.backend == "cuda" || p.backend == "hip";
        map.entry((
            p.run_id.clone(),
            p.bench.clone(),
            p.op.clone(),
            p.device.clone(),
            p.threads,
            p.dtype.clone(),
            p.variant.clone(),
            // GPU curves also split by copy method and GPU pair.
            if gpu { p.method.clone() } else { None },
            if gpu { p.peer.clone() } else { None },
        ))
        .or_default()
        .push(p.clone());
    }
    map.into_iter()
        .map(|((run_id, bench, op, device, threads, dtype, variant, method, peer), mut pts)| {
            pts.sort_by_key(|p| p.size_bytes);
            let mut label = format!("{bench} {op}");
            if let Some(v) = variant.as_deref().filter(|v| *v != "warm") {
                label += &format!(" {v}");
            }
            if let Some(t) = threads {
                label += &format!(", {t} thread{}", if t == 1 { "" } else { "s" });
            }
            if let Some(m) = &method {
                label += &format!(", {m}");
            }
            match (peer, &method) {
                (Some(p), _) => label += &format!(", GPU {}", p.replace("->", "→")),
                // A GPU curve without a pair runs on one device: "GPU 0".
                (None, Some(_)) => label += &format!(", {}", crate::vocab::rows::short_device(&device)),
                (None, None) => {}
            }
            Curve { label, device: pts[0].device.clone(), run_id, bench, op, threads, dtype, points: pts }
        })
        .collect()
}

/// Where a bandwidth curve saturates.
#[derive(Debug, Clone, Serialize)]
pub struct Saturation {
    pub label: String,
    /// Highest median rate ([`Curve::rate`]), and the size it happened at.
    pub peak_gbps: f64,
    pub peak_size_bytes: u64,
    /// Median rate of the largest sizes.
    pub plateau_gbps: f64,
    /// The sizes the plateau was taken from.
    pub plateau_sizes: Vec<u64>,
    /// How far the plateau's sizes may differ from the largest one: 10 %,
    /// or twice the CV of the largest sizes when that is wider.
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
    /// Whether the plateau rests on two sizes or more that agree within
    /// the tolerance; `false`: the curve had not settled by its largest size.
    pub fn settled(&self) -> bool {
        self.plateau_sizes.len() > 1
    }
}

/// Saturation of one curve's [`Curve::rate`] series, against an optional
/// roofline in GB/s of the same convention.
pub fn saturation(curve: &Curve, roofline_gbps: Option<f64>) -> Option<Saturation> {
    let pts = curve.rate();
    let (peak_size, peak) = pts.iter().copied().max_by(|a, b| a.1.total_cmp(&b.1))?;
    // Flat within its noise: two sizes agree when they differ by less than
    // 10 % or twice the largest size's CV, whichever is wider (at most 50 %).
    let noise = curve.points.iter().rev().take(2).map(|p| p.summary.cv).filter(|c| c.is_finite()).fold(0.0, f64::max);
    let tolerance = (2.0 * noise).clamp(0.1, 0.5);
    let (plateau, plateau_sizes) = stats::plateau_span_within(&pts, tolerance)?;
    let roof = roofline_gbps.filter(|r| *r > 0.0);
    let at = |reference: f64, f: f64| stats::sustained_crossing(&pts, reference, f);
    Some(Saturation {
        label: curve.label.clone(),
        peak_gbps: peak,
        peak_size_bytes: peak_size,
        plateau_gbps: plateau,
        plateau_tolerance: tolerance,
        sizes: pts.len(),
        plateau_sizes,
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
