//! The verdicts of a comparison in words, per curve and size band, as the
//! terminal, the JSON and the compare report print them.

use std::collections::BTreeMap;

use super::{PointComparison, Verdict};

/// Verdicts in words, per curve and size band: "no significant difference
/// at any size", or "B is 7.1 % slower from 1 MiB to 64 MiB (95 % CI of the
/// ratio 0.91–0.95)". `b` names the second run in the sentences.
pub fn verdict_sentences(points: &[PointComparison], b: &str) -> Vec<String> {
    let mut curves: BTreeMap<super::CurveGroup, Vec<&PointComparison>> = BTreeMap::new();
    for p in points {
        curves.entry(p.group()).or_default().push(p);
    }
    let mut out = Vec::new();
    for ((curve, _), mut ps) in curves {
        ps.sort_by_key(|p| p.size_bytes);
        if ps.iter().all(|p| p.verdict == Verdict::Same) {
            out.push(format!(
                "{curve}: no significant difference at any point ({} points{}).",
                ps.len(),
                resolves(&ps)
            ));
            continue;
        }
        // Runs of one verdict along the sizes.
        let mut i = 0;
        while i < ps.len() {
            let v = ps[i].verdict;
            let mut j = i;
            while j + 1 < ps.len() && ps[j + 1].verdict == v {
                j += 1;
            }
            let band = &ps[i..=j];
            let span = match (band[0].size_bytes, band[band.len() - 1].size_bytes) {
                (Some(lo), Some(hi)) if lo == hi => format!("at {}", crate::vocab::units::format_bytes(lo)),
                (Some(lo), Some(hi)) => {
                    format!(
                        "from {} to {}",
                        crate::vocab::units::format_bytes(lo),
                        crate::vocab::units::format_bytes(hi)
                    )
                }
                _ if ps.len() == band.len() => "at every point".to_string(),
                _ => format!("at {} of its points", band.len()),
            };
            // How much, as the range of the points' own changes (each is
            // in the point table), not a figure no table holds.
            let reading = super::summary::Reading::of(band[0]);
            let (better, worse) = reading.words();
            let changes: Vec<f64> = band.iter().map(|p| 100.0 * reading.change(p.ratio)).collect();
            let (cmin, cmax) =
                changes.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), c| (a.min(*c), b.max(*c)));
            let by = if format!("{cmin:.1}") == format!("{cmax:.1}") {
                format!("{cmin:.1} %")
            } else {
                format!("{cmin:.1}–{cmax:.1} %")
            };
            let lo = band.iter().filter_map(|p| p.ci_low).fold(f64::INFINITY, f64::min);
            let hi = band.iter().filter_map(|p| p.ci_high).fold(f64::NEG_INFINITY, f64::max);
            let ci = if lo.is_finite() && hi.is_finite() && band.iter().all(|p| p.ci_low.is_some()) {
                format!(" (95 % CIs of the ratio within {lo:.3}–{hi:.3})")
            } else {
                " (no uncertainty: one sample per point)".to_string()
            };
            let n = band.len();
            // A difference the clocks explain: the same cycles per operation.
            let ci = if band.iter().all(|p| p.clocks_explain) {
                let c: Vec<f64> = band.iter().filter_map(|p| p.clock_ratio).collect();
                let (lo, hi) = (c.iter().copied().fold(f64::INFINITY, f64::min), c.iter().copied().fold(0.0, f64::max));
                format!("{ci}: same work per cycle; clocks differ ({b}'s clock {lo:.2}–{hi:.2}× the base's)")
            } else {
                ci
            };
            let text = match v {
                Verdict::Slower => format!("{b} is {by} {worse} {span}{ci}"),
                Verdict::Faster => format!("{b} is {by} {better} {span}{ci}"),
                Verdict::Same => format!("no significant difference {span}"),
                Verdict::Inconclusive => format!("inconclusive {span}: the interval straddles the threshold"),
            };
            out.push(format!(
                "{curve}: {} ({n} point{}{}).",
                text.trim_end(),
                if n == 1 { "" } else { "s" },
                resolves(band)
            ));
            i = j + 1;
        }
    }
    out
}

/// The smallest change the points' intervals let a verdict call, as a
/// clause: "; resolves changes of 3.3–4.1 % or more" (the range over the
/// points, each as the point table prints it), or nothing where they have
/// no interval.
fn resolves(points: &[&PointComparison]) -> String {
    let with: Vec<&PointComparison> = points.iter().copied().filter(|p| p.detectable.is_some()).collect();
    let d = |p: &&PointComparison| p.detectable.unwrap_or(f64::NAN);
    let (Some(lo), Some(hi)) =
        (with.iter().min_by(|a, b| d(a).total_cmp(&d(b))), with.iter().max_by(|a, b| d(a).total_cmp(&d(b))))
    else {
        return String::new();
    };
    let (lo, hi) = (lo.detectable_text(), hi.detectable_text());
    if lo == hi {
        format!("; resolves changes of {lo} or more")
    } else {
        format!("; resolves changes of {}–{hi} or more", lo.trim_end_matches(" %"))
    }
}
