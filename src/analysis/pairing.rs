//! Series set against each other: another tool's measurement of the same
//! copy on the same device beside benchbook's ([`peers`]), and two of
//! benchbook's curves of one run that differ in one setting only
//! ([`contrasts`]: copy engine against SM kernel, warm against cold L2,
//! pinned against pageable). Which curves pair up is decided from the
//! points' fields (backend, method, variant), never from a curve's name.

use crate::analysis::{Curve, PointStat, Series};

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

/// (size, a's rate, b's rate) at every size both measured.
pub fn ratios(a: &Curve, b: &Curve) -> Vec<(u64, f64, f64)> {
    let theirs = b.rate();
    a.rate()
        .into_iter()
        .filter_map(|(s, x)| {
            let y = theirs.iter().find(|(t, _)| *t == s)?.1;
            (x > 0.0 && y > 0.0).then_some((s, x, y))
        })
        .collect()
}

/// Every imported curve of `curves` (theirs) beside the native curve that
/// makes the same copy on the same device (ours): (ours, theirs).
pub fn peers<'a>(curves: &[&'a Series]) -> Vec<(&'a Series, &'a Series)> {
    let mut out = Vec::new();
    for theirs in curves.iter().copied().filter(|c| !native(c)) {
        let Some(want) = copy_of(theirs, false) else { continue };
        let same_device = |c: &&&Series| {
            theirs.device.is_empty() || theirs.device == "unknown" || c.device.contains(theirs.device.as_str())
        };
        if let Some(ours) =
            curves.iter().filter(|c| native(c)).filter(same_device).find(|c| copy_of(c, true) == Some(want.clone()))
        {
            out.push((*ours, theirs));
        }
    }
    out
}

/// The one setting two curves differ in: (`method` or `variant`, a's, b's).
pub type Differs = (&'static str, String, String);

/// Pairs of native curves of one run, bench, op and device that differ in
/// exactly one of method and variant.
pub fn contrasts<'a>(curves: &[&'a Series]) -> Vec<(&'a Series, &'a Series, Differs)> {
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
            let show = |v: &Option<String>| v.as_deref().unwrap_or("-").to_string();
            let differs = match (pa.method == pb.method, pa.variant == pb.variant) {
                (false, true) => ("method", show(&pa.method), show(&pb.method)),
                (true, false) => ("variant", show(&pa.variant), show(&pb.variant)),
                _ => continue,
            };
            out.push((*a, *b, differs));
        }
    }
    out
}
