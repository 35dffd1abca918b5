//! Curves set against each other within a bandwidth section:
//! - **peers**: benchbook's curve beside another tool's measurement of the
//!   same copy on the same device (PyTorch `copy_`, a CUDA C reference),
//!   as a ratio at every size both measured;
//! - **contrasts**: two of benchbook's curves of one run that differ in one
//!   setting only (copy engine against SM kernel, warm against cold L2,
//!   pinned against pageable).
//!
//! Which curves pair up is decided from the points' fields (backend,
//! method, variant), never from a curve's label.

use serde::Serialize;

use crate::analysis::{Curve, PointStat, Series};
use crate::vocab::source::RowOrigin;
use crate::vocab::units::{format_bytes, format_sig3};

/// Sizes from which a copy is bandwidth-bound rather than latency-bound,
/// for the summary's "large sizes" range.
const LARGE_BYTES: u64 = 1 << 20;

/// One size of a curve against another.
#[derive(Debug, Clone, Serialize)]
pub struct RatioRow {
    pub size: String,
    pub ours: String,
    pub theirs: String,
    /// ours / theirs.
    pub ratio: String,
}

/// benchbook's curve against another tool's, size by size.
#[derive(Debug, Clone, Serialize)]
pub struct PeerPair {
    /// benchbook's curve.
    pub ours: String,
    /// The other tool's curve, and the tool.
    pub theirs: String,
    pub tool: String,
    /// The rate's unit, naming the bytes it counts.
    pub unit: String,
    /// ours / theirs over the sizes from 1 MiB (min, median, max), when
    /// there are any.
    pub large: Option<(String, String, String)>,
    /// The same below 1 MiB.
    pub small: Option<(String, String, String)>,
    pub rows: Vec<RatioRow>,
}

/// Two curves of one run that differ in one setting.
#[derive(Debug, Clone, Serialize)]
pub struct Contrast {
    /// The setting and its two values: `method: copy_engine → sm_kernel`.
    pub differs: String,
    pub a: String,
    pub b: String,
    /// b / a at the largest size both measured, and that size.
    pub at_largest: (String, String),
    /// b / a at the smallest size both measured, and that size.
    pub at_smallest: (String, String),
    /// The lowest and highest b / a, with their sizes.
    pub lowest: (String, String),
    pub highest: (String, String),
}

fn native(c: &Curve) -> bool {
    c.points.first().is_some_and(PointStat::native)
}

fn first(c: &Curve) -> Option<&PointStat> {
    c.points.first()
}

/// The copy a curve makes: (bench, op, method, host memory kind). Another
/// tool's copy with no method recorded is a copy-engine copy (`copy_` and
/// `cudaMemcpyAsync` of device memory); its host memory kind is the first
/// word of its variant (`pinned cuda c`).
fn copy_of(c: &Curve, ours: bool) -> Option<(String, String, String, Option<String>)> {
    let p = first(c)?;
    let method = p.method.clone().unwrap_or_else(|| "copy_engine".into());
    let memory = p.variant.as_deref().and_then(|v| {
        let w = if ours { v } else { v.split_whitespace().next().unwrap_or(v) };
        matches!(w, "pinned" | "pageable").then(|| w.to_string())
    });
    // benchbook's cold-L2 curves time one copy alone: not the copy another
    // tool loops over.
    if ours && p.variant.as_deref().is_some_and(|v| v == "cold") {
        return None;
    }
    Some((c.bench.clone(), c.op.clone(), method, memory))
}

fn ratios(a: &Curve, b: &Curve) -> Vec<(u64, f64, f64)> {
    let theirs = b.rate();
    a.rate()
        .into_iter()
        .filter_map(|(s, x)| {
            let y = theirs.iter().find(|(t, _)| *t == s)?.1;
            (x > 0.0 && y > 0.0).then_some((s, x, y))
        })
        .collect()
}

fn range(r: &[f64]) -> Option<(String, String, String)> {
    if r.is_empty() {
        return None;
    }
    let mut v = r.to_vec();
    v.sort_by(f64::total_cmp);
    let show = |x: f64| format!("{:.2}×", x);
    let (lo, hi) = (v[0], v[v.len() - 1]);
    Some((show(lo), show(crate::vocab::stats::median_unsorted(&mut v)), show(hi)))
}

/// Every imported curve of `curves` beside the native curve that makes
/// the same copy on the same device.
pub(super) fn peer_pairs(curves: &[&Series]) -> Vec<PeerPair> {
    let mut out = Vec::new();
    for theirs in curves.iter().filter(|c| !native(c)) {
        let Some(want) = copy_of(theirs, false) else { continue };
        let same_device = |c: &&&Series| {
            theirs.device.is_empty() || theirs.device == "unknown" || c.device.contains(theirs.device.as_str())
        };
        let Some(ours) =
            curves.iter().filter(|c| native(c)).filter(same_device).find(|c| copy_of(c, true) == Some(want.clone()))
        else {
            continue;
        };
        let pts = ratios(ours, theirs);
        if pts.is_empty() {
            continue;
        }
        let (large, small): (Vec<f64>, Vec<f64>) = {
            let l = pts.iter().filter(|(s, ..)| *s >= LARGE_BYTES).map(|(_, x, y)| x / y).collect();
            let s = pts.iter().filter(|(s, ..)| *s < LARGE_BYTES).map(|(_, x, y)| x / y).collect();
            (l, s)
        };
        out.push(PeerPair {
            ours: ours.name().to_string(),
            theirs: theirs.name().to_string(),
            tool: first(theirs)
                .and_then(|p| RowOrigin::parse(p.source.as_deref()).tool().map(String::from))
                .unwrap_or_default(),
            unit: ours.rate_axis().to_string(),
            large: range(&large),
            small: range(&small),
            rows: pts
                .iter()
                .map(|(s, x, y)| RatioRow {
                    size: format_bytes(*s),
                    ours: format_sig3(*x),
                    theirs: format_sig3(*y),
                    ratio: format!("{:.2}×", x / y),
                })
                .collect(),
        });
    }
    out
}

/// Pairs of native curves of one run, bench, op and device that differ in
/// exactly one of method and variant.
pub(super) fn contrasts(curves: &[&Series]) -> Vec<Contrast> {
    let ours: Vec<&Series> = curves.iter().copied().filter(|c| native(c)).collect();
    let mut out = Vec::new();
    for (i, a) in ours.iter().enumerate() {
        for b in &ours[i + 1..] {
            let (Some(pa), Some(pb)) = (first(a), first(b)) else { continue };
            let same = a.run_id == b.run_id
                && a.bench == b.bench
                && a.op == b.op
                && a.device == b.device
                && a.threads == b.threads
                && a.dtype == b.dtype
                && pa.peer == pb.peer;
            if !same {
                continue;
            }
            let differs = match (pa.method == pb.method, pa.variant == pb.variant) {
                (false, true) => {
                    format!("method: {} → {}", pa.method.as_deref().unwrap_or("-"), pb.method.as_deref().unwrap_or("-"))
                }
                (true, false) => format!(
                    "variant: {} → {}",
                    pa.variant.as_deref().unwrap_or("-"),
                    pb.variant.as_deref().unwrap_or("-")
                ),
                _ => continue,
            };
            let pts = ratios(a, b);
            let (Some(lo), Some(hi)) = (
                pts.iter().min_by(|x, y| (x.2 / x.1).total_cmp(&(y.2 / y.1))),
                pts.iter().max_by(|x, y| (x.2 / x.1).total_cmp(&(y.2 / y.1))),
            ) else {
                continue;
            };
            let cell = |(s, x, y): &(u64, f64, f64)| (format!("{:.2}×", y / x), format_bytes(*s));
            out.push(Contrast {
                differs,
                a: a.name().to_string(),
                b: b.name().to_string(),
                at_largest: cell(&pts[pts.len() - 1]),
                at_smallest: cell(&pts[0]),
                lowest: cell(lo),
                highest: cell(hi),
            });
        }
    }
    out
}
