//! Sentence-making helpers: number formats shared by every section, and
//! the observations, each computed from the data it states.

use crate::analysis::{Curve, PointStat, Saturation};
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

use super::{KeyValue, RooflineRef};

pub(super) fn kv(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue { key: key.into(), value: value.into() }
}

pub(super) fn opt_size(s: Option<u64>) -> String {
    s.map(format_bytes).unwrap_or_else(|| "not reached".into())
}

pub(super) fn pct(f: f64) -> String {
    format!("{} %", format_sig3(f * 100.0))
}

/// Observations on a family of size-swept curves (memcpy, or one stream op).
pub(super) fn bandwidth_observations(
    curves: &[Curve],
    sats: &[Saturation],
    roof: Option<&(RooflineRef, f64)>,
    what: &str,
) -> Vec<String> {
    let mut obs = Vec::new();
    let Some((best_i, best)) = sats.iter().enumerate().max_by(|a, b| a.1.plateau_gbps.total_cmp(&b.1.plateau_gbps))
    else {
        return obs;
    };
    let curve = &curves[best_i];
    let peak_point = curve.points.iter().find(|p| p.size_bytes == Some(best.peak_size_bytes));
    obs.push(format!(
        "The highest median bandwidth of {what} is {} GB/s counting bytes read + written ({} GB/s counting bytes copied once), at {} ({}).",
        format_sig3(best.peak_gbps),
        peak_point.and_then(|p| p.gbps_copied).map(format_sig3).unwrap_or_else(|| "n/a".into()),
        format_bytes(best.peak_size_bytes),
        curve.label
    ));
    let largest: Vec<String> = best.plateau_sizes.iter().map(|b| format_bytes(*b)).collect();
    obs.push(format!(
        "At the largest sizes it settles at a plateau of {} GB/s (read + written), taken from {}: the largest sizes within 10 % of the largest one.",
        format_sig3(best.plateau_gbps),
        largest.join(", ")
    ));
    if best.peak_gbps > 1.25 * best.plateau_gbps {
        obs.push(format!(
            "At {} the rate is {}× the plateau: a working set of {} (source plus destination) is served from caches, not main memory.",
            format_bytes(best.peak_size_bytes),
            format_sig3(best.peak_gbps / best.plateau_gbps),
            format_bytes(2 * best.peak_size_bytes)
        ));
    }
    obs.push(format!(
        "50 % of the plateau is first reached at {}, 80 % at {}, 90 % at {}.",
        opt_size(best.plateau_50),
        opt_size(best.plateau_80),
        opt_size(best.plateau_90)
    ));
    if let Some(small) = curve.points.first() {
        if let (Some(size), Some(g)) = (small.size_bytes, small.gbps_moved) {
            let fraction = g / best.plateau_gbps;
            obs.push(format!(
                "The smallest size, {}, takes {} per operation and reaches {} of the plateau{}.",
                format_bytes(size),
                format_seconds(small.summary.median),
                pct(fraction),
                if fraction < 0.5 {
                    ": at this size fixed per-operation costs, not bandwidth, set the time"
                } else {
                    ""
                }
            ));
        }
    }
    let by_threads: Vec<(u32, f64)> =
        curves.iter().zip(sats).filter_map(|(c, s)| Some((c.threads?, s.plateau_gbps))).collect();
    if let (Some(one), Some(most)) =
        (by_threads.iter().find(|(t, _)| *t == 1), by_threads.iter().max_by_key(|(t, _)| *t))
    {
        if most.0 > 1 {
            obs.push(format!(
                "With {} threads the plateau is {}× the single-thread plateau.",
                most.0,
                format_sig3(most.1 / one.1)
            ));
        }
    }
    match roof {
        Some((r, gbps)) => obs.push(format!(
            "The plateau is {} of the {} memory roofline ({} GB/s, read + write); 90 % of the roofline is {}.",
            pct(best.plateau_gbps / gbps),
            r.name,
            r.gbps,
            best.roofline_90.map(|s| format!("first reached at {}", format_bytes(s))).unwrap_or_else(|| "never reached".into())
        )),
        None => obs.push(format!(
            "No memory roofline is known for {}; add a spec file under the archive's specs/ folder (or pass --spec) to see the fraction of peak.",
            curve.device
        )),
    }
    obs
}

/// One line per STREAM kernel, in STREAM's own order (not alphabetical):
/// the best curve's plateau and peak.
pub(super) fn stream_observations(curves: &[Curve], sats: &[Saturation]) -> Vec<String> {
    let mut observations = Vec::new();
    for (op, _) in crate::vocab::accounting::STREAM_KERNELS {
        let s: Vec<&Saturation> = curves.iter().zip(sats).filter(|(c, _)| c.op == op).map(|(_, s)| s).collect();
        if let Some(best) = s.iter().max_by(|a, b| a.plateau_gbps.total_cmp(&b.plateau_gbps)) {
            observations.push(format!(
                "{op}: plateau {} GB/s (BabelStream counting), peak {} GB/s at {} arrays ({}).",
                format_sig3(best.plateau_gbps),
                format_sig3(best.peak_gbps),
                format_bytes(best.peak_size_bytes),
                best.label
            ));
        }
    }
    observations
}

/// One line per link curve (collectives, MPI p2p, GPU peer and host↔device
/// copies): peak, plateau, and the small-message penalty.
pub(super) fn link_observations(curves: &[Curve], sats: &[Saturation], bench: &str) -> Vec<String> {
    let mut observations = Vec::new();
    for (c, s) in curves.iter().zip(sats) {
        let ranks = c.points.first().and_then(|p| p.ranks).map(|r| format!(" over {r} ranks")).unwrap_or_default();
        // The small-message penalty, as seed 000 words it: the share of the
        // plateau reached around 100 KB (the largest size up to 128 KiB).
        let small = c.rate().into_iter().filter(|(b, _)| *b <= 128 * 1024).max_by_key(|(b, _)| *b);
        let mut o = format!(
            "{}{ranks}: {} peaks at {} GB/s at {}; the plateau ({} GB/s) is 80 % reached at {} and 90 % at {}.",
            c.label,
            if bench == "collective" { "bus bandwidth" } else { "bandwidth" },
            format_sig3(s.peak_gbps),
            format_bytes(s.peak_size_bytes),
            format_sig3(s.plateau_gbps),
            opt_size(s.plateau_80),
            opt_size(s.plateau_90)
        );
        if let Some((bytes, rate)) = small.filter(|_| s.plateau_gbps > 0.0) {
            o += &format!(" At {} it reaches {} of the plateau.", format_bytes(bytes), pct(rate / s.plateau_gbps));
        }
        observations.push(o);
    }
    observations
}

/// GFLOP/s for CPUs; GPUs are quoted in TFLOP/s, as the seed 002 tables are.
#[derive(Clone, Copy)]
pub(super) enum FlopUnit {
    Giga,
    Tera,
}

impl FlopUnit {
    pub(super) fn show(self, gflops: f64) -> String {
        match self {
            FlopUnit::Giga => format_sig3(gflops),
            FlopUnit::Tera => format_sig3(gflops / 1e3),
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            FlopUnit::Giga => "GFLOP/s",
            FlopUnit::Tera => "TFLOP/s",
        }
    }
}

/// Per dtype (alphabetical): the peak and the average over its points;
/// then f32 against f64 where both were measured.
pub(super) fn gemm_observations(pts: &[&PointStat], unit: FlopUnit) -> Vec<String> {
    let shape = |p: &PointStat| format!("{}×{}×{}", p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0));
    let mut observations = Vec::new();
    let mut dtypes: Vec<String> = pts.iter().filter_map(|p| p.dtype.clone()).collect();
    dtypes.sort();
    dtypes.dedup();
    let mut best_by_dtype = Vec::new();
    for d in &dtypes {
        let of: Vec<&&PointStat> = pts.iter().filter(|p| p.dtype.as_ref() == Some(d)).collect();
        let gf = |p: &PointStat| p.gflops.unwrap_or(0.0);
        if let Some(best) = of.iter().max_by(|a, b| gf(a).total_cmp(&gf(b))) {
            let avg = of.iter().map(|p| gf(p)).sum::<f64>() / of.len() as f64;
            let with = match (best.threads, best.method.as_deref()) {
                (Some(t), _) => format!(" with {t} thread(s)"),
                (None, Some(m)) => format!(" ({m})"),
                _ => String::new(),
            };
            observations.push(format!(
                "{d}: peak {} {u} at {}{with}; average over the {} measured points {} {u}.",
                unit.show(gf(best)),
                shape(best),
                of.len(),
                unit.show(avg),
                u = unit.name()
            ));
            best_by_dtype.push((d.clone(), gf(best)));
        }
    }
    if let (Some(f32b), Some(f64b)) =
        (best_by_dtype.iter().find(|(d, _)| d == "f32"), best_by_dtype.iter().find(|(d, _)| d == "f64"))
    {
        if f64b.1 > 0.0 {
            observations.push(format!("Peak f32 throughput is {}× peak f64 throughput.", format_sig3(f32b.1 / f64b.1)));
        }
    }
    observations
}
