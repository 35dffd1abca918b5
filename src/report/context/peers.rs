//! Curves set against each other within a bandwidth section:
//! - **peers**: benchbook's curve beside another tool's measurement of the
//!   same copy on the same device (PyTorch `copy_`, a CUDA C reference),
//!   as a ratio at every size both measured;
//! - **contrasts**: two of benchbook's curves of one run that differ in one
//!   setting only (copy engine against SM kernel, warm against cold L2,
//!   pinned against pageable).
//!
//! Which curves pair up is decided in [`crate::analysis::pairing`].

use serde::Serialize;

use crate::analysis::{pairing, Series};
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
/// the same copy on the same device ([`pairing::peers`]).
pub(super) fn peer_pairs(curves: &[&Series]) -> Vec<PeerPair> {
    let mut out = Vec::new();
    for (ours, theirs) in pairing::peers(curves) {
        let pts = pairing::ratios(ours, theirs);
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
            tool: theirs
                .points
                .first()
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

/// Pairs of native curves of one run that differ in one setting
/// ([`pairing::contrasts`]), b against a size by size.
pub(super) fn contrasts(curves: &[&Series]) -> Vec<Contrast> {
    let mut out = Vec::new();
    for (a, b, (setting, va, vb)) in pairing::contrasts(curves) {
        let pts = pairing::ratios(a, b);
        let (Some(lo), Some(hi)) = (
            pts.iter().min_by(|x, y| (x.2 / x.1).total_cmp(&(y.2 / y.1))),
            pts.iter().max_by(|x, y| (x.2 / x.1).total_cmp(&(y.2 / y.1))),
        ) else {
            continue;
        };
        let cell = |(s, x, y): &(u64, f64, f64)| (format!("{:.2}×", y / x), format_bytes(*s));
        out.push(Contrast {
            differs: format!("{setting}: {va} → {vb}"),
            a: a.name().to_string(),
            b: b.name().to_string(),
            at_largest: cell(&pts[pts.len() - 1]),
            at_smallest: cell(&pts[0]),
            lowest: cell(lo),
            highest: cell(hi),
        });
    }
    out
}
