//! The blocks several report sections are made of: the size-swept
//! bandwidth block (memcpy, STREAM, collectives, MPI p2p and the GPU
//! copies), the GEMM block, MPI latency rows and the points of benchmarks
//! without a section of their own. (The sections themselves, and the one
//! list of them, are [`crate::report::sections`].)

use crate::analysis::{curves, saturation, Curve, PointStat, Saturation, Spec};
use crate::vocab::benches::{Bench, RateUnit};
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

use super::prose::{
    bandwidth_observations, gemm_observations, link_observations, median_with_ci, opt_size, pct, stream_observations,
    FlopUnit,
};
use super::{BandwidthSection, BwRow, GemmRow, GemmSection, LatencyRow, OtherRow, RooflineRef, SatRow};
use crate::vocab::gemm::GemmSetting;

/// The memory roofline of a spec, as shown and as a number (GB/s).
pub(super) fn roofline_of(spec: Option<&Spec>) -> Option<(RooflineRef, f64)> {
    let s = spec?;
    let m = s.memory.as_ref()?;
    Some((
        RooflineRef { name: s.name.clone(), gbps: format_sig3(m.bandwidth_gbps), source: m.source.clone() },
        m.bandwidth_gbps,
    ))
}

fn bw_rows(curves: &[Curve]) -> Vec<BwRow> {
    curves
        .iter()
        .flat_map(|c| {
            c.points.iter().map(move |p| BwRow {
                label: c.label.clone(),
                size: opt_size(p.size_bytes),
                median_time: median_with_ci(p),
                gbps_copied: p.gbps_copied.map(format_sig3).unwrap_or_default(),
                gbits_copied: p.gbps_copied.map(|g| format_sig3(g * 8.0)).unwrap_or_default(),
                gbps_moved: p.gbps_moved.map(format_sig3).unwrap_or_default(),
                busbw: p.busbw_gbps.map(format_sig3).unwrap_or_default(),
                cv_pct: spread_pct(p),
                samples: p.samples,
            })
        })
        .collect()
}

fn sat_row(s: &Saturation) -> SatRow {
    // One size: no curve, so nothing saturates.
    let cell = |c: crate::vocab::stats::Crossing| match (s.sizes, s.settled()) {
        (0 | 1, _) => "one size".to_string(),
        (_, false) => "not settled".to_string(),
        _ => c.to_string(),
    };
    // The level with the sizes it spans, or where the curve ended.
    let sizes: Vec<String> = s.plateau_sizes.iter().map(|b| format_bytes(*b)).collect();
    let plateau = if s.settled() {
        format!(
            "{} ({}, ±{})",
            format_sig3(s.plateau_gbps),
            super::prose::span(&sizes),
            super::prose::pct(s.plateau_tolerance)
        )
    } else if s.sizes < 2 {
        format_sig3(s.plateau_gbps)
    } else {
        format!(
            "not settled ({} at {}; the size below differs by more than ±{})",
            format_sig3(s.plateau_gbps),
            sizes.join(", "),
            super::prose::pct(s.plateau_tolerance)
        )
    };
    SatRow {
        label: s.label.clone(),
        peak_gbps: format_sig3(s.peak_gbps),
        peak_size: format_bytes(s.peak_size_bytes),
        plateau_gbps: plateau,
        peak_over_plateau: if s.settled() && s.plateau_gbps > 0.0 {
            format!("{}×", format_sig3(s.peak_gbps / s.plateau_gbps))
        } else {
            "-".into()
        },
        p50: cell(s.plateau_50),
        p80: cell(s.plateau_80),
        p90: cell(s.plateau_90),
        roofline_pct: s.plateau_fraction.map(pct).unwrap_or_else(|| "no roofline".into()),
        roofline_90: s.roofline_90.map(cell).unwrap_or_else(|| "no roofline".into()),
    }
}

/// The section of the size-swept curves of `benches` (the first names the
/// kind of observations), or `None` when there are none.
pub(super) fn bandwidth_section(
    stats: &[PointStat],
    benches: &[Bench],
    chart: &str,
    roof: Option<&(RooflineRef, f64)>,
) -> Option<BandwidthSection> {
    let bench = benches[0];
    // Latency curves are times, not bandwidths: they get their own table.
    let cs: Vec<Curve> =
        curves(stats).into_iter().filter(|c| benches.iter().any(|b| c.bench == *b) && c.op != "latency").collect();
    if cs.is_empty() {
        return None;
    }
    let sats: Vec<Saturation> = cs.iter().filter_map(|c| saturation(c, roof.map(|r| r.1))).collect();
    let observations = match bench {
        Bench::Stream => stream_observations(&cs, &sats),
        Bench::Collective | Bench::P2p | Bench::MemcpyPeer | Bench::H2d => link_observations(&cs, &sats, bench),
        _ => bandwidth_observations(&cs, &sats, roof, bench.name()),
    };
    Some(BandwidthSection {
        chart: chart.into(),
        roofline: roof.map(|r| r.0.clone()),
        observations,
        saturation: sats.iter().map(sat_row).collect(),
        table: bw_rows(&cs),
    })
}

/// The GEMM section, with rates in `unit`, or `None` without GEMM points.
pub(super) fn gemm_section(
    stats: &[PointStat],
    spec: Option<&Spec>,
    chart: &str,
    unit: FlopUnit,
) -> Option<GemmSection> {
    let pts: Vec<&PointStat> = stats.iter().filter(|p| p.bench == Bench::Gemm).collect();
    if pts.is_empty() {
        return None;
    }
    let shape = |p: &PointStat| format!("{}×{}×{}", p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0));
    let table: Vec<GemmRow> = pts
        .iter()
        .map(|p| {
            let dtype = p.dtype.clone().unwrap_or_default();
            GemmRow {
                shape: shape(p),
                threads: p.threads.map(|t| t.to_string()).unwrap_or_default(),
                // The library, and the operand layout (and FP8 accumulation)
                // where the rows record one: `cublaslt, nn`.
                method: match (p.method.clone().unwrap_or_default(), GemmSetting::recorded(&p.params())) {
                    (m, Some(setting)) => format!("{m}, {}", setting.label()),
                    (m, None) => m,
                },
                gflops: p.gflops.map(|g| unit.show(g)).unwrap_or_default(),
                best_gflops: p.best_gflops.map(|g| unit.show(g)).unwrap_or_default(),
                median_time: median_with_ci(p),
                cv_pct: spread_pct(p),
                samples: p.samples,
                peak_pct: match (spec.and_then(|s| s.peak_tflops(&dtype)), p.gflops) {
                    (Some(peak), Some(g)) => pct(g / (peak * 1e3)),
                    _ => "no spec".into(),
                },
                dtype,
            }
        })
        .collect();
    let observations = gemm_observations(&pts, unit);
    Some(GemmSection { chart: chart.into(), observations, table })
}

/// A point's CV, or `n/a` where one sample (an imported figure) has no
/// spread to state.
fn spread_pct(p: &PointStat) -> String {
    if p.samples < 2 {
        "n/a (1 sample)".into()
    } else {
        pct(p.summary.cv)
    }
}

/// The one-way latencies of MPI ping-pong.
pub(super) fn latency_rows(stats: &[PointStat]) -> Vec<LatencyRow> {
    stats
        .iter()
        .filter(|p| p.bench == Bench::P2p && p.op == "latency")
        .map(|p| LatencyRow {
            peer: p.peer.clone().unwrap_or_default(),
            size: p.size_bytes.map(format_bytes).unwrap_or_default(),
            median: format_seconds(p.summary.median),
            p20: if p.samples < 2 { "n/a".into() } else { format_seconds(p.summary.p20) },
            p80: if p.samples < 2 { "n/a".into() } else { format_seconds(p.summary.p80) },
            samples: p.samples,
        })
        .collect()
}

/// Points of benchmarks without a section of their own (the table's
/// `section`: host memcpy, STREAM, GEMM, collectives, point-to-point).
pub(super) fn other_rows(stats: &[PointStat]) -> Vec<OtherRow> {
    stats
        .iter()
        .filter(|p| Bench::of(&p.bench).is_none_or(|b| b.info().section.is_none()))
        .map(|p| OtherRow {
            bench: p.bench.clone(),
            op: p.op.clone(),
            variant: p.variant.clone().unwrap_or_default(),
            size: p.size_bytes.map(format_bytes).unwrap_or_else(|| "-".into()),
            peer: p.peer.clone().unwrap_or_default(),
            median_time: super::prose::time_shown(p).unwrap_or_else(|| format_seconds(p.summary.median)),
            // Network tools (perftest, OSU) print their rates in Gb/s.
            rate: match p.gbps_copied {
                Some(g) if Bench::of(&p.bench).is_some_and(|b| b.info().unit == RateUnit::Gbps) => {
                    format!("{} GB/s = {} Gb/s", format_sig3(g), format_sig3(g * 8.0))
                }
                Some(g) => format!("{} GB/s", format_sig3(g)),
                None => "- (a time, no bytes)".into(),
            },
            note: p.note.clone().unwrap_or_default(),
        })
        .collect()
}
