//! Where a bandwidth curve levels off, and where it crosses a share of a
//! reference rate for good: the plateau rule reports print, the sustained
//! crossing and the saturation size. Pure functions on (size, rate)
//! slices, re-exported by [`super::stats`].
//!
//! The plateau rule keeps its hostile-curve cases and property tests
//! beside it.

use super::stats::quantile_sorted;

/// Where a curve crosses `fraction` × a reference rate, for good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "size_bytes")]
pub enum Crossing {
    /// From this size on, every size measured reaches it; some smaller
    /// size did not: a saturation size.
    At(u64),
    /// Every size measured reaches it, the smallest included: the sweep
    /// starts above the ramp (small sizes served from caches, or a sweep
    /// that starts too large), so it shows no saturation size.
    FromStart,
    /// The largest size measured does not reach it.
    Never,
}

/// As a report's table cell: `1 MiB`, `every size`, `not at the largest
/// size` (a curve may reach the level below its largest size and fall off
/// it: the peak column says how high it went).
impl std::fmt::Display for Crossing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Crossing::At(s) => f.write_str(&crate::vocab::units::format_bytes(*s)),
            Crossing::FromStart => f.write_str("every size"),
            Crossing::Never => f.write_str("not at the largest size"),
        }
    }
}

impl Crossing {
    pub fn size(self) -> Option<u64> {
        match self {
            Crossing::At(s) => Some(s),
            _ => None,
        }
    }
}

/// The smallest size from which the rate stays at or above `fraction` ×
/// `reference` at every larger size. A dip after a first crossing moves the
/// crossing past the dip, so a noisy or cache-shaped curve is never said to
/// saturate where it falls back below. `curve` is (size, rate) pairs in any
/// order.
pub fn sustained_crossing(curve: &[(u64, f64)], reference: f64, fraction: f64) -> Crossing {
    let mut v: Vec<(u64, f64)> = curve.iter().copied().filter(|(_, r)| !r.is_nan()).collect();
    // NaN references fall here too.
    if reference.is_nan() || reference <= 0.0 || v.is_empty() {
        return Crossing::Never;
    }
    v.sort_by_key(|(s, _)| *s);
    let threshold = fraction * reference;
    match v.iter().rposition(|(_, r)| *r < threshold) {
        None => Crossing::FromStart,
        Some(i) if i + 1 < v.len() => Crossing::At(v[i + 1].0),
        Some(_) => Crossing::Never,
    }
}

/// The smallest size whose rate reaches `fraction` × `reference`, even if
/// a larger size falls back below it. None when no point reaches it.
pub fn saturation_size(curve: &[(u64, f64)], reference: f64, fraction: f64) -> Option<u64> {
    if reference.is_nan() || reference <= 0.0 {
        return None;
    }
    curve.iter().filter(|(_, r)| *r >= fraction * reference).map(|(s, _)| *s).min()
}

/// The level a bandwidth curve settles at, and how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Plateau {
    /// The median rate of the flat region.
    pub level: f64,
    /// The sizes of the flat region, smallest first: one size means the
    /// curve has not settled (still rising, or cache-dominated to its end).
    pub sizes: Vec<u64>,
    /// The largest size, when it jumps above a level the sizes below it
    /// hold: flagged, not taken as the level.
    pub jump: Option<(u64, f64)>,
    /// Sizes left out as too uncertain to set a level (see [`plateau_of`]).
    pub left_out: Vec<u64>,
}

/// The fewest sizes a plateau spans: two sizes that agree are a pair, not
/// a level.
pub const PLATEAU_MIN_SIZES: usize = 3;

/// How far each size of a plateau may differ from its level: ±10 %.
pub const PLATEAU_TOLERANCE: f64 = 0.10;

/// A peak above the plateau by more than this factor is a hump (a cache,
/// or a protocol that suits mid-size messages), said as such.
pub const HUMP_RATIO: f64 = 1.25;

/// What a plateau needs, as reports state it: `3 sizes within ±10 %`.
pub fn plateau_rule() -> String {
    format!("{PLATEAU_MIN_SIZES} sizes within ±{} %", crate::vocab::units::format_sig3(PLATEAU_TOLERANCE * 100.0))
}

impl Plateau {
    /// Whether [`PLATEAU_MIN_SIZES`] sizes or more hold the level.
    pub fn settled(&self) -> bool {
        self.sizes.len() >= PLATEAU_MIN_SIZES
    }
}

/// The plateau of a curve of `(size, rate, trusted)`: the flat region at
/// its largest sizes, each size within `tolerance` of the median of the
/// sizes above it in the region, and that median as the level. Going down
/// from the largest size, a trusted size that disagrees ends the region;
/// an untrusted one (an interval too wide, a single round) is left out and
/// passed over, so one noisy size neither ends a level nor sets it (the
/// level is never above the highest trusted size). A largest size that agrees with nothing below it, while the
/// sizes below hold a level, is left out too: flagged as a jump when it is
/// trusted and above that level; a trusted one below it means the curve is
/// still falling (not settled). A cache-resident peak at middle sizes is
/// never the level; a curve with no flat region has its largest size's
/// rate as level, with one size (not settled).
pub fn plateau_of(curve: &[(u64, f64, bool)], tolerance: f64) -> Option<Plateau> {
    let mut points: Vec<(u64, f64, bool)> = curve.iter().copied().filter(|(_, r, _)| r.is_finite()).collect();
    if points.is_empty() {
        return None;
    }
    points.sort_by_key(|(s, _, _)| *s);
    // Nothing trusted: every point counts rather than none.
    if !points.iter().any(|p| p.2) {
        points.iter_mut().for_each(|p| p.2 = true);
    }
    let median = |region: &[(u64, f64, bool)]| {
        let mut r: Vec<f64> = region.iter().map(|p| p.1).collect();
        r.sort_by(f64::total_cmp);
        quantile_sorted(&r, 0.5)
    };
    // The flat region ending at `end` (exclusive), and the untrusted sizes
    // it passed over.
    // The level: the median of the region's trusted sizes (an untrusted
    // size that agrees shows the curve is flat, but never sets the level,
    // so the level is never above the curve's peak).
    let level_of = |region: &[(u64, f64, bool)]| {
        let trusted: Vec<(u64, f64, bool)> = region.iter().copied().filter(|p| p.2).collect();
        median(if trusted.is_empty() { region } else { &trusted })
    };
    // The flat region ending at `end` (exclusive), and the untrusted sizes
    // it passed over. Sizes are dropped from its small end until every
    // size is within `tolerance` of the final level.
    let flat = |end: usize| -> (Vec<(u64, f64, bool)>, Vec<u64>) {
        let mut region = vec![points[end - 1]];
        let mut passed = Vec::new();
        for &p in points[..end - 1].iter().rev() {
            let level = level_of(&region);
            if (p.1 - level).abs() <= tolerance * level.abs() {
                region.push(p);
            } else if !p.2 {
                passed.push(p.0);
            } else {
                break;
            }
        }
        while region.len() > 1 {
            let level = level_of(&region);
            if region.iter().all(|p| (p.1 - level).abs() <= tolerance * level.abs()) {
                break;
            }
            region.pop();
        }
        let bottom = region.last().map_or(0, |p| p.0);
        passed.retain(|s| *s > bottom);
        region.reverse();
        passed.reverse();
        (region, passed)
    };
    let n = points.len();
    // The region's sizes that set the level: its trusted ones; the
    // untrusted ones inside it are named as left out.
    // A region of untrusted sizes only leaves the largest trusted size below
    // it standing in (not settled), with those sizes named.
    let split = |region: Vec<(u64, f64, bool)>, mut left: Vec<u64>| {
        let top = region.last().map_or(0, |p| p.0);
        let (mut kept, out): (Vec<_>, Vec<_>) = region.into_iter().partition(|p| p.2);
        left.extend(out.iter().map(|p| p.0));
        if kept.is_empty() {
            if let Some(&below) = points.iter().rev().find(|p| p.2 && p.0 < top) {
                kept.push(below);
            }
        }
        left.sort_unstable();
        left.dedup();
        (kept, left)
    };
    let (region, left_out) = flat(n);
    let (mut region, mut left_out) = split(region, left_out);
    if region.is_empty() {
        region.push(points[n - 1]);
    }
    let mut jump = None;
    if region.len() < PLATEAU_MIN_SIZES && n > PLATEAU_MIN_SIZES {
        let (below, passed) = flat(n - 1);
        let (below, passed) = split(below, passed);
        let last = points[n - 1];
        // An untrusted largest size is left out; a trusted one only when it
        // rises above the level (falling: the curve has not settled).
        if below.len() >= PLATEAU_MIN_SIZES && (!last.2 || last.1 > level_of(&below)) {
            // (`below` is never empty here: it holds PLATEAU_MIN_SIZES sizes.)
            if last.2 {
                jump = Some((last.0, last.1));
                left_out = passed;
            } else {
                left_out = passed.into_iter().chain([last.0]).collect();
            }
            region = below;
        }
    }
    // A level below two or more larger sizes too uncertain to judge is not
    // one "at the largest sizes": the curve has not shown where it settles.
    let top = region.last().map_or(0, |p| p.0);
    if region.len() > 1 && left_out.iter().filter(|s| **s > top).count() > 1 {
        region = vec![*region.last().expect("not empty")];
    }
    // Not settled: the largest size it has is the level that stands in,
    // at that size (never a median of sizes that do not make a plateau).
    if region.len() < PLATEAU_MIN_SIZES {
        region = vec![*region.last().expect("not empty")];
    }
    Some(Plateau { level: level_of(&region), sizes: region.iter().map(|p| p.0).collect(), jump, left_out })
}

/// Test fixtures stated through the rule's owner, so that changing the
/// rule changes this file only.
#[cfg(test)]
pub(crate) mod fixtures {
    /// The smallest flat region the plateau rule accepts: sizes doubling
    /// from `start`, [`super::PLATEAU_MIN_SIZES`] of them, each at `level`.
    pub(crate) fn flat_tail(start: u64, level: f64) -> Vec<(u64, f64)> {
        (0..super::PLATEAU_MIN_SIZES).map(|i| (start << i, level)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// [`plateau_of`] with every point trusted, agreement within 10 %.
    fn plateau_span(curve: &[(u64, f64)]) -> Option<(f64, Vec<u64>)> {
        let all: Vec<(u64, f64, bool)> = curve.iter().map(|&(s, r)| (s, r, true)).collect();
        plateau_of(&all, 0.1).map(|p| (p.level, p.sizes))
    }

    fn plateau(curve: &[(u64, f64)]) -> Option<f64> {
        plateau_span(curve).map(|(p, _)| p)
    }

    #[test]
    fn saturation_and_plateau() {
        let curve = [(1, 10.0), (2, 50.0), (4, 85.0), (8, 120.0), (16, 100.0), (32, 100.0), (64, 98.0)];
        assert_eq!(plateau(&curve), Some(100.0));
        assert_eq!(saturation_size(&curve, 100.0, 0.5), Some(2));
        assert_eq!(saturation_size(&curve, 100.0, 0.9), Some(8));
        assert_eq!(saturation_size(&curve, 1000.0, 0.9), None);
        assert_eq!(saturation_size(&curve, 0.0, 0.9), None);
        assert_eq!(sustained_crossing(&curve, 100.0, 0.9), Crossing::At(8));
        // A cache hump: everything at or above the plateau, nothing to saturate.
        let cached = [(4096, 2700.0), (1 << 20, 400.0), (1 << 28, 100.0), (1 << 29, 98.0)];
        assert_eq!(sustained_crossing(&cached, 99.0, 0.5), Crossing::FromStart);
        // A dip after the first crossing moves the crossing past it.
        let dip = [(1, 95.0), (2, 40.0), (4, 99.0), (8, 100.0)];
        assert_eq!(saturation_size(&dip, 100.0, 0.9), Some(1));
        assert_eq!(sustained_crossing(&dip, 100.0, 0.9), Crossing::At(4));
        assert_eq!(sustained_crossing(&[(1, 1.0), (2, 5.0)], 10.0, 0.9), Crossing::Never);
        // Still rising at the end: the last point is the plateau.
        let rising = [(1, 1.0), (2, 17.5), (4, 140.0), (8, 331.0)];
        assert_eq!(plateau(&rising), Some(331.0));
        assert_eq!(plateau_span(&rising).unwrap().1, vec![8]);
        assert_eq!(plateau_span(&curve).unwrap().1, vec![16, 32, 64]);
    }

    #[test]
    fn plateaus_of_hostile_curves() {
        let t = |c: &[(u64, f64)]| c.iter().map(|&(s, r)| (s, r, true)).collect::<Vec<_>>();
        // A cache hump, then a long flat region: the level is the region's.
        let hump = t(&[(1, 300.0), (2, 400.0), (4, 120.0), (8, 101.0), (16, 99.0), (32, 100.0), (64, 102.0)]);
        let p = plateau_of(&hump, 0.1).unwrap();
        assert_eq!((p.level, p.sizes.clone(), p.jump), (100.5, vec![8, 16, 32, 64], None));
        // A jump at the largest size is flagged, not the level.
        let jump = t(&[(1, 10.0), (2, 14.0), (4, 14.2), (8, 13.9), (16, 30.0)]);
        let p = plateau_of(&jump, 0.1).unwrap();
        assert_eq!((p.level, p.sizes.clone(), p.jump), (14.0, vec![2, 4, 8], Some((16, 30.0))));
        // A wide interval or a single round at the largest size is left out.
        let mut wide = t(&[(1, 5.0), (2, 14.0), (3, 14.1), (4, 14.2), (8, 23.0)]);
        wide[4].2 = false;
        let p = plateau_of(&wide, 0.1).unwrap();
        assert_eq!((p.level, p.sizes.clone(), p.left_out.clone(), p.jump), (14.1, vec![2, 3, 4], vec![8], None));
        // Two sizes that agree are not a plateau: the jump over a pair is
        // not flagged, and the curve has not settled.
        let pair = t(&[(1, 5.0), (2, 14.0), (4, 14.2), (8, 30.0)]);
        let p = plateau_of(&pair, 0.1).unwrap();
        assert!(!p.settled() && p.jump.is_none() && p.level == 30.0, "{p:?}");
        // One noisy size inside a level is passed over, neither ending nor
        // setting it; a cache hump below the level ends it.
        let mut noisy = t(&[(1, 220.0), (2, 224.0), (4, 160.0), (8, 84.0), (16, 120.0), (32, 85.6), (64, 71.7)]);
        noisy[4].2 = false;
        let p = plateau_of(&noisy, 0.3).unwrap();
        assert_eq!((p.sizes.clone(), p.left_out.clone()), (vec![8, 32, 64], vec![16]));
        assert!((p.level - 84.0).abs() < 1e-9);
        // An untrusted size that agrees does not end the region, but it
        // neither sets the level nor counts as one of its sizes: it is named
        // as left out, and the level is never above the highest trusted size.
        let mut above = t(&[(1, 10.0), (2, 20.0), (4, 20.5), (8, 21.0), (16, 22.0)]);
        above[4].2 = false;
        let p = plateau_of(&above, 0.1).unwrap();
        assert_eq!((p.sizes.clone(), p.left_out.clone(), p.level), (vec![2, 4, 8], vec![16], 20.5));
        // Falling at the largest size (out of a cache): not settled, no jump.
        let falling = t(&[(1, 10.0), (2, 30.0), (4, 31.0), (8, 12.0)]);
        let p = plateau_of(&falling, 0.1).unwrap();
        assert!(!p.settled() && p.jump.is_none() && p.level == 12.0);
        // No flat region: still rising, not settled, no jump invented.
        let rising = t(&[(1, 1.0), (2, 17.5), (4, 140.0), (8, 331.0)]);
        let p = plateau_of(&rising, 0.1).unwrap();
        assert!(!p.settled() && p.jump.is_none() && p.level == 331.0);
        // Nothing trusted: every point counts rather than none.
        let none: Vec<(u64, f64, bool)> = rising.iter().map(|&(s, r, _)| (s, r, false)).collect();
        assert_eq!(plateau_of(&none, 0.1).unwrap().level, 331.0);
        assert_eq!(plateau_of(&[], 0.1), None);
    }

    proptest! {
        #[test]
        fn a_sustained_crossing_holds_from_there_on_and_follows_a_miss(
            curve in proptest::collection::vec((1u64..1_000_000, 0.0f64..1000.0), 1..50),
            frac in 0.0f64..1.0,
        ) {
            let p = plateau(&curve).unwrap();
            match sustained_crossing(&curve, p, frac) {
                Crossing::At(s) => {
                    // Every size from s on reaches it; some smaller one did not.
                    prop_assert!(curve.iter().all(|(sz, r)| *sz < s || *r >= frac * p));
                    prop_assert!(curve.iter().any(|(sz, r)| *sz < s && *r < frac * p));
                }
                Crossing::FromStart => prop_assert!(curve.iter().all(|(_, r)| *r >= frac * p)),
                Crossing::Never => {
                    let largest = curve.iter().max_by_key(|(sz, _)| *sz).unwrap().0;
                    prop_assert!(curve.iter().any(|(sz, r)| *sz == largest && *r < frac * p));
                }
            }
        }

        #[test]
        fn saturation_point_reaches_the_fraction(
            curve in proptest::collection::vec((1u64..1_000_000, 0.0f64..1000.0), 1..50),
            frac in 0.0f64..1.0,
        ) {
            let p = plateau(&curve).unwrap();
            if let Some(s) = saturation_size(&curve, p, frac) {
                // Some point at that size reaches it, and no smaller size does.
                prop_assert!(curve.iter().any(|(sz, r)| *sz == s && *r >= frac * p));
                prop_assert!(curve.iter().all(|(sz, r)| *sz >= s || *r < frac * p));
            }
        }
    }
}
