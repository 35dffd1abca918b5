//! Sentence-making helpers: number formats shared by every section, and
//! the observations, each computed from the data it states.
//!
//! The file is longer than 400 lines because every observation keeps its
//! tests, property tests among them, beside it.

use crate::analysis::{Curve, PointStat, Saturation};
use crate::vocab::benches::Bench;
use crate::vocab::stats::Crossing;
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

use super::{KeyValue, RooflineRef};

pub(super) fn kv(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue { key: key.into(), value: value.into() }
}

pub(super) fn opt_size(s: Option<u64>) -> String {
    s.map(format_bytes).unwrap_or_else(|| "not reached".into())
}

/// Where a crossing holds, as a clause: `from 1 MiB on`, `at every size`,
/// `not at the largest size`.
fn from_size(c: Crossing) -> String {
    match c {
        Crossing::At(x) => format!("from {} on", format_bytes(x)),
        Crossing::FromStart => "at every size".into(),
        Crossing::Never => "not at the largest size".into(),
    }
}

/// The saturation sentence of a curve against its plateau, or why there is
/// none to state.
fn saturation_sentence(s: &Saturation, smallest: Option<u64>) -> String {
    let [c50, c80, c90] = [s.plateau_50, s.plateau_80, s.plateau_90];
    if s.sizes < 2 {
        return "One size was measured, so the curve has no saturation to state.".into();
    }
    if !s.settled() {
        return "The curve never holds a level, so no saturation size is stated against one.".into();
    }
    if c50 == Crossing::FromStart {
        return format!(
            "Every size measured, from {}, already runs at half the plateau or more: the sweep starts above the ramp, so it shows no saturation size{}.",
            smallest.map(format_bytes).unwrap_or_else(|| "the smallest".into()),
            if s.peak_gbps > 1.25 * s.plateau_gbps { " (its small sizes are served from caches)" } else { "" }
        );
    }
    let from = from_size;
    format!("The rate stays at or above 50 % of the plateau {}, 80 % {}, 90 % {}.", from(c50), from(c80), from(c90))
}

pub(super) fn pct(f: f64) -> String {
    format!("{} %", format_sig3(f * 100.0))
}

/// Sizes as a span: `64 MiB`, `64 MiB and 128 MiB`, `64 MiB to 256 MiB`.
pub(super) fn span(sizes: &[String]) -> String {
    match sizes {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [a, .., b] => format!("{a} to {b}"),
    }
}

/// What the plateau of `s` left out: a jump at the largest size, and sizes
/// too uncertain to set a level; empty when nothing was.
pub(super) fn plateau_flags(s: &Saturation) -> String {
    let mut out = String::new();
    if let Some((size, rate)) = s.plateau_jump {
        out += &format!(
            " The largest size, {}, jumps to {} GB/s, above the level the sizes below it hold: flagged, not taken as the plateau.",
            format_bytes(size),
            format_sig3(rate)
        );
    }
    if !s.plateau_left_out.is_empty() {
        let sizes: Vec<String> = s.plateau_left_out.iter().map(|b| format_bytes(*b)).collect();
        out += &format!(
            " Left out of the plateau as too uncertain (an interval wider than ±{} %, or a single round): {}.",
            format_sig3(crate::analysis::curves::TRUSTED_HALF_WIDTH * 100.0),
            sizes.join(", ")
        );
    }
    out
}

/// What stands for a point's time where it has none of its own: a tool
/// that printed only a rate, with no size in the file, has a time per
/// operation that would rest on an assumed size (nvbandwidth's 10^9 bytes).
pub(crate) fn time_shown(p: &crate::analysis::PointStat) -> Option<String> {
    let imported = crate::vocab::source::RowOrigin::parse(p.source.as_deref()).tool().is_some();
    (imported && p.size_bytes.is_none() && p.gbps_copied.is_some()).then(|| "n/a (the tool printed a rate)".into())
}

/// A point's median time with its 95 % interval: `1.23 ms ± 0.8 %`;
/// `(1 round)` when the interval rests on one round's samples only,
/// `(no CI)` below six samples of one round, and `n/a` for an imported
/// rate whose size the file does not give.
pub(crate) fn median_with_ci(p: &crate::analysis::PointStat) -> String {
    if let Some(none) = time_shown(p) {
        return none;
    }
    let t = crate::vocab::units::format_seconds(p.summary.median);
    match (p.interval(), p.ci_relative()) {
        (Some(ci), Some(r)) if ci.basis == crate::vocab::interval::Basis::Rounds => format!("{t} ± {}", ci_pct(r)),
        (Some(_), Some(r)) => format!("{t} ± {} (1 round)", ci_pct(r)),
        _ => format!("{t} (no CI)"),
    }
}

/// A relative half-width as a percentage, two significant digits at most.
pub(crate) fn ci_pct(r: f64) -> String {
    let pct = r * 100.0;
    if pct < 0.01 {
        "< 0.01 %".into()
    } else if pct < 1.0 {
        format!("{pct:.2} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// Observations on a family of size-swept curves (memcpy, or one stream op).
pub(super) fn bandwidth_observations(
    curves: &[Curve],
    sats: &[Saturation],
    roof: Option<&(RooflineRef, f64)>,
    what: &str,
) -> Vec<String> {
    let mut obs = Vec::new();
    // The curve with the highest plateau, a settled one before any that is not.
    let Some((best_i, best)) = sats.iter().enumerate().max_by(|a, b| {
        (a.1.settled(), a.1.plateau_gbps)
            .partial_cmp(&(b.1.settled(), b.1.plateau_gbps))
            .unwrap_or(std::cmp::Ordering::Equal)
    }) else {
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
    if best.settled() || best.sizes < 2 {
        obs.push(format!(
            "At its largest sizes it settles at a plateau of {} GB/s (read + written), the median of {}: the sizes that agree with that level within the tolerance the saturation table gives{}.{}",
            format_sig3(best.plateau_gbps),
            span(&largest),
            if best.plateau_tolerance > 0.1 { " (twice their noise, CV)" } else { "" },
            plateau_flags(best)
        ));
    } else {
        obs.push(format!(
            "The curve has not settled by its largest size, {}: the next size down differs by more than the tolerance the saturation table gives, so the {} GB/s there stands in for a plateau this sweep did not reach. Extend the sweep to measure it.{}",
            largest.join(", "),
            format_sig3(best.plateau_gbps),
            plateau_flags(best)
        ));
    }
    // A cache peak above the level, unless the peak is a flagged jump.
    let peak_is_jump = best.plateau_jump.is_some_and(|(size, _)| size == best.peak_size_bytes);
    if best.settled() && !peak_is_jump && best.peak_gbps > 1.25 * best.plateau_gbps {
        obs.push(format!(
            "At {} the rate is {}× the plateau: a working set of {} (source plus destination) is served from caches, not main memory.",
            format_bytes(best.peak_size_bytes),
            format_sig3(best.peak_gbps / best.plateau_gbps),
            format_bytes(2 * best.peak_size_bytes)
        ));
    }
    let smallest = curve.points.first();
    obs.push(saturation_sentence(best, smallest.and_then(|p| p.size_bytes)));
    if let Some(small) = smallest {
        if let (Some(size), Some(g)) = (small.size_bytes, small.gbps_moved) {
            // Above the plateau the cache sentence has said why.
            if g < 0.5 * best.plateau_gbps {
                obs.push(format!(
                    "The smallest size, {}, takes {} per operation, below half the plateau: at this size fixed per-operation costs, not bandwidth, set the time.",
                    format_bytes(size),
                    format_seconds(small.summary.median),
                ));
            }
        }
    }
    obs.extend(convergence_sentence(curves.iter().flat_map(|c| &c.points)));
    let by_threads: Vec<(u32, f64)> =
        curves.iter().zip(sats).filter_map(|(c, s)| Some((c.threads?, s.plateau_gbps))).collect();
    if let (Some(one), Some(most)) =
        (by_threads.iter().find(|(t, _)| *t == 1), by_threads.iter().max_by_key(|(t, _)| *t))
    {
        if most.0 > 1 {
            obs.push(format!(
                "With {} threads the plateau is {} GB/s, against {} GB/s with one thread.",
                most.0,
                format_sig3(most.1),
                format_sig3(one.1)
            ));
        }
    }
    match roof {
        Some((r, gbps)) => obs.push(format!(
            "The plateau is {} of the {} memory roofline ({} GB/s, read + write); 90 % of the roofline is {}.",
            pct(best.plateau_gbps / gbps),
            r.name,
            r.gbps,
            match best.roofline_90 {
                Some(Crossing::At(s)) => format!("reached for good from {} on", format_bytes(s)),
                Some(Crossing::FromStart) => "reached at every size".into(),
                _ => "never reached".into(),
            }
        )),
        None => obs.push(format!(
            "No memory roofline is known for {}; add a spec file under the archive's specs/ folder (or pass --spec) to see the fraction of peak.",
            curve.device
        )),
    }
    obs
}

/// How many points met the noise target, when some did not: their medians
/// carry the spread the CV column shows. Imported points (no stop reason)
/// are left out.
/// Points measured in rounds are judged by their interval instead: how
/// many are wider than ±1 %.
pub(super) fn convergence_sentence<'a>(points: impl Iterator<Item = &'a PointStat>) -> Option<String> {
    use crate::vocab::kinds::StopReason;
    let points: Vec<&PointStat> = points.collect();
    let rounds: Vec<f64> = points
        .iter()
        .filter(|p| p.ci_basis == Some(crate::vocab::interval::Basis::Rounds))
        .filter_map(|p| p.ci_relative())
        .collect();
    if !rounds.is_empty() {
        let wide: Vec<f64> = rounds.iter().copied().filter(|w| *w > 0.01).collect();
        return (!wide.is_empty()).then(|| {
            let widest = wide.iter().copied().fold(0.0, f64::max);
            format!(
                "{} of {} points have a 95 % interval wider than ±1 % (up to ±{}): read those medians with their ± in the table.",
                wide.len(),
                rounds.len(),
                ci_pct(widest)
            )
        });
    }
    let stops: Vec<StopReason> = points.iter().filter_map(|p| p.stop).collect();
    let met = stops.iter().filter(|s| **s == StopReason::Converged).count();
    (met < stops.len()).then(|| {
        format!(
            "{met} of {} points met the noise target; the others {}, so their medians carry the spread in the CV column.",
            stops.len(),
            stops
                .iter()
                .filter(|s| **s != StopReason::Converged)
                .map(|s| s.words())
                .collect::<std::collections::BTreeSet<_>>()
                .into_iter()
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
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
/// copies): peak, plateau, and where the curve ramps to it; every number is
/// one the saturation table shows.
pub(super) fn link_observations(curves: &[Curve], sats: &[Saturation], bench: Bench) -> Vec<String> {
    let mut observations = Vec::new();
    for (c, s) in curves.iter().zip(sats) {
        let ranks = c.points.first().and_then(|p| p.ranks).map(|r| format!(" over {r} ranks")).unwrap_or_default();
        let what = if bench == Bench::Collective { "bus bandwidth" } else { "bandwidth" };
        let mut o = if s.sizes < 2 {
            format!(
                "{}{ranks}: {what} {} GB/s at {}, the one size measured.",
                c.label,
                format_sig3(s.peak_gbps),
                format_bytes(s.peak_size_bytes)
            )
        } else if !s.settled() {
            format!(
                "{}{ranks}: {what} peaks at {} GB/s at {} and has not settled by its largest size ({} GB/s there), so no plateau is stated.",
                c.label,
                format_sig3(s.peak_gbps),
                format_bytes(s.peak_size_bytes),
                format_sig3(s.plateau_gbps)
            )
        } else {
            format!(
                "{}{ranks}: {what} peaks at {} GB/s at {}; the rate stays at or above 80 % of the plateau ({} GB/s) {}, and 90 % {}.",
                c.label,
                format_sig3(s.peak_gbps),
                format_bytes(s.peak_size_bytes),
                format_sig3(s.plateau_gbps),
                from_size(s.plateau_80),
                from_size(s.plateau_90)
            )
        };
        // A level below the peak by more than a quarter: mid-size messages
        // run faster than large ones (the ratio is the table's peak / plateau).
        if s.settled() && s.plateau_gbps > 0.0 && s.peak_gbps > 1.25 * s.plateau_gbps {
            o += &format!(
                " Its peak, at {}, is {}× the plateau: mid-size messages run faster than large ones (a cache or protocol effect).",
                format_bytes(s.peak_size_bytes),
                format_sig3(s.peak_gbps / s.plateau_gbps)
            );
        }
        if s.sizes > 1 {
            o += &plateau_flags(s);
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

/// Per dtype (alphabetical): the peak, with its shape and threads (both in
/// the table beside it).
pub(super) fn gemm_observations(pts: &[&PointStat], unit: FlopUnit) -> Vec<String> {
    let shape = |p: &PointStat| format!("{}×{}×{}", p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0));
    let mut observations = Vec::new();
    let mut dtypes: Vec<String> = pts.iter().filter_map(|p| p.dtype.clone()).collect();
    dtypes.sort();
    dtypes.dedup();
    for d in &dtypes {
        let of: Vec<&&PointStat> = pts.iter().filter(|p| p.dtype.as_ref() == Some(d)).collect();
        let gf = |p: &PointStat| p.gflops.unwrap_or(0.0);
        if let Some(best) = of.iter().max_by(|a, b| gf(a).total_cmp(&gf(b))) {
            let with = match (best.threads, best.method.as_deref()) {
                (Some(t), _) => format!(" with {t} thread(s)"),
                (None, Some(m)) => format!(" ({m})"),
                _ => String::new(),
            };
            observations.push(format!(
                "{d}: peak {} {u} at {}{with}, over {} measured points.",
                unit.show(gf(best)),
                shape(best),
                of.len(),
                u = unit.name()
            ));
        }
    }
    observations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::saturation;
    use proptest::prelude::*;

    /// A memcpy curve of (size, GB/s moved) points, converged or not.
    fn curve(points: &[(u64, f64)], converged: bool) -> Curve {
        use crate::vocab::kinds::StopReason;
        let pts: Vec<PointStat> = points
            .iter()
            .map(|(size, g)| PointStat {
                bench: Bench::Memcpy.name().into(),
                op: "copy".into(),
                size_bytes: Some(*size),
                threads: Some(1),
                gbps_moved: Some(*g),
                gbps_copied: Some(g / 2.0),
                stop: Some(if converged { StopReason::Converged } else { StopReason::MaxTime }),
                summary: crate::vocab::stats::Summary { median: 2.0 * *size as f64 / (g * 1e9), ..Default::default() },
                ..Default::default()
            })
            .collect();
        crate::analysis::curves(&pts).remove(0)
    }

    fn observations(points: &[(u64, f64)], converged: bool) -> Vec<String> {
        let c = curve(points, converged);
        let s = saturation(&c, None).unwrap();
        bandwidth_observations(&[c], &[s], None, "memcpy")
    }

    #[test]
    fn a_cache_hump_is_never_called_a_saturation() {
        // This machine's shape: 2700 % of the plateau at 4 KiB.
        let o = observations(&[(4096, 190.0), (1 << 20, 95.0), (1 << 28, 22.0), (1 << 29, 21.0)], false);
        let text = o.join("\n");
        assert!(text.contains("the sweep starts above the ramp, so it shows no saturation size"), "{text}");
        assert!(text.contains("served from caches"), "{text}");
        assert!(!text.contains("of the plateau from"), "{text}");
        assert!(!text.contains("The smallest size"), "no '905 % of the plateau': {text}");
        assert!(text.contains("0 of 4 points met the noise target"), "{text}");
    }

    #[test]
    fn hostile_curves_get_only_what_they_support() {
        // One point.
        let one = observations(&[(1 << 20, 50.0)], true).join("\n");
        assert!(one.contains("One size was measured"), "{one}");
        assert!(!one.contains("not settled"), "{one}");
        // Still rising at its end: no plateau claimed.
        let rising = observations(&[(4096, 1.0), (65536, 10.0), (1 << 20, 40.0)], true).join("\n");
        assert!(rising.contains("has not settled by its largest size, 1 MiB"), "{rising}");
        assert!(!rising.contains("noise target"), "every point converged: {rising}");
        // Flat: everything reaches the plateau from the start.
        let flat = observations(&[(4096, 10.0), (65536, 10.1), (1 << 20, 9.9)], true).join("\n");
        assert!(flat.contains("no saturation size"), "{flat}");
        // A dip past the first crossing: the saturation size follows it.
        let dip = observations(&[(1, 5.0), (2, 95.0), (4, 30.0), (8, 99.0), (16, 100.0), (32, 100.0)], true);
        assert!(dip.join(" ").contains("90 % from 8 B on"), "{dip:?}");
    }

    proptest! {
        #[test]
        fn no_sentence_claims_more_than_the_plateau_or_panics(
            rates in proptest::collection::vec(0.01f64..1000.0, 1..24),
            converged in any::<bool>(),
        ) {
            let points: Vec<(u64, f64)> = rates.iter().enumerate().map(|(i, r)| (4096u64 << i, *r)).collect();
            for o in observations(&points, converged) {
                // "reaches N % of the plateau" never exceeds 100 %.
                if let Some(i) = o.find(" % of the plateau") {
                    let n: f64 = o[..i].rsplit(' ').next().unwrap().parse().unwrap();
                    prop_assert!(n <= 100.0, "{o}");
                }
            }
        }
    }
}
