//! How small a change a comparison can call at a point: the detectable
//! change, as asv and nvbench's compare state it.

/// The smallest change, in the direction a point moved, that an interval
/// of this width lets a verdict call: the verdict's own side of the
/// interval must clear the threshold (a true ratio r above 1 is called once
/// r · lo/ratio passes 1 + threshold; below 1, once r · hi/ratio falls
/// under 1 − threshold). Stated as the change column states a change
/// (|r − 1|, or |1 − 1/r| for a lower-better metric), so a called change
/// is never smaller than it.
pub fn detectable_change(ratio: f64, lo: f64, hi: f64, threshold: f64, lower_better: bool) -> f64 {
    let edge = if ratio >= 1.0 { (1.0 + threshold) * ratio / lo } else { (1.0 - threshold) * ratio / hi };
    if lower_better {
        (1.0 - 1.0 / edge).abs()
    } else {
        (edge - 1.0).abs()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_called_change_is_never_smaller_than_the_change_its_interval_resolves() {
        let t = 0.02;
        for i in 0..200 {
            let ratio = 0.6 + i as f64 * 0.004;
            for (below, above) in [(0.01, 0.01), (0.04, 0.2), (0.2, 0.04), (0.1, 0.1)] {
                let (lo, hi) = (ratio * (1.0 - below), ratio * (1.0 + above));
                for lower_better in [false, true] {
                    let d = detectable_change(ratio, lo, hi, t, lower_better);
                    let change = if lower_better { (1.0 - 1.0 / ratio).abs() } else { (ratio - 1.0).abs() };
                    if lo > 1.0 + t || hi < 1.0 - t {
                        assert!(change >= d - 1e-12, "ratio {ratio} [{lo}, {hi}]: {change} < {d}");
                    }
                    assert!(d >= t * 0.9, "ratio {ratio}: {d} below the threshold's reach");
                }
            }
        }
        // seed 004's stream scale 1 MiB: 1.104 in 1.059–1.350 was '24.8 %' (the
        // wider, upper side); the faster side it was called on resolves 6.3 %.
        let d = detectable_change(1.104, 1.059, 1.350, t, false);
        assert!((d - 0.0634).abs() < 0.001, "{d}");
    }
}
