//! How precise a report's medians are: which points reached the interval
//! target, the widest that did not, and which intervals rest on one round.

use super::{Missed, Said};
use crate::analysis::PointStat;
use crate::vocab::facts::StopRule;

/// How precise the medians are: which points reached the interval target
/// (the run's own, else ±1 %), which did not, and which intervals rest on
/// one round only.
pub fn precision(rule: Option<&StopRule>, stats: &[PointStat], name: &dyn Fn(&PointStat) -> String) -> Said {
    if stats.is_empty() {
        return Said::NoTimedPoints;
    }
    let target = rule.filter(|r| r.rounds > 1).map_or(0.01, |r| r.target_ci);
    // The target is met against the within-run interval (what the
    // scheduler stops on); the tables state the rerun interval.
    let widths: Vec<Option<f64>> = stats.iter().map(|p| p.within_relative()).collect();
    let within = |w: &Option<f64>| w.is_some_and(|w| w <= target * (1.0 + 1e-9));
    let mut missed: Vec<Missed> = stats
        .iter()
        .zip(&widths)
        .filter(|(_, w)| !within(w))
        .map(|(p, w)| Missed { label: name(p), width: *w, why: p.ci_wide_why.as_ref().map(|y| y.to_string()) })
        .collect();
    missed.sort_by(|a, b| b.width.unwrap_or(f64::INFINITY).total_cmp(&a.width.unwrap_or(f64::INFINITY)));
    let more = missed.len().saturating_sub(6);
    missed.truncate(6);
    let mut ws: Vec<f64> = widths.iter().flatten().copied().collect();
    ws.sort_by(f64::total_cmp);
    let mut rerun: Vec<f64> = stats.iter().filter_map(|p| p.ci_relative()).collect();
    rerun.sort_by(f64::total_cmp);
    Said::Precision {
        met: widths.iter().filter(|w| within(w)).count(),
        of: stats.len(),
        target,
        widest_missed: missed,
        more,
        one_round: stats.iter().filter(|p| p.ci_basis == Some(crate::vocab::interval::Basis::Samples)).count(),
        median_width: (!ws.is_empty()).then(|| crate::vocab::stats::quantile_sorted(&ws, 0.5)),
        median_rerun: (!rerun.is_empty()).then(|| crate::vocab::stats::quantile_sorted(&rerun, 0.5)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::interval::Basis;

    /// A point with a 95 % interval of ±`half` (0–1) over `basis`, or none.
    fn point(size: u64, half: Option<f64>, basis: Basis) -> PointStat {
        PointStat {
            bench: "memcpy".into(),
            op: "copy".into(),
            size_bytes: Some(size),
            median_seconds: 1.0,
            ci_low_seconds: half.map(|h| 1.0 - 2.0 * h),
            ci_high_seconds: half.map(|h| 1.0 + 2.0 * h),
            within_low_seconds: half.map(|h| 1.0 - h),
            within_high_seconds: half.map(|h| 1.0 + h),
            ci_basis: half.map(|_| basis),
            ..PointStat::default()
        }
    }

    #[test]
    fn precision_lists_the_widest_misses_first_and_counts_one_round_points() {
        let mut stats = vec![point(1, Some(0.005), Basis::Rounds), point(2, None, Basis::Rounds)];
        stats.extend((0..7).map(|i| point(10 + i, Some(0.02 + i as f64 * 0.01), Basis::Samples)));
        let Said::Precision { met, of, target, widest_missed, more, one_round, median_width, median_rerun } =
            precision(None, &stats, &|p| p.params().label())
        else {
            panic!("a precision sentence")
        };
        assert_eq!((met, of, target, more, one_round), (1, 9, 0.01, 2, 7));
        // No interval counts as the widest; then by width, widest first.
        assert_eq!(widest_missed.len(), 6);
        assert_eq!(widest_missed[0].width, None);
        assert!(widest_missed[1..].windows(2).all(|w| w[0].width >= w[1].width), "{widest_missed:?}");
        // Eight intervals (0.5 %, 2–8 %): the median is halfway between 4 and 5 %.
        assert!((median_width.unwrap() - 0.045).abs() < 1e-9, "{median_width:?}");
        // The rerun intervals (twice as wide here) are stated beside it.
        assert!((median_rerun.unwrap() - 0.09).abs() < 1e-9, "{median_rerun:?}");
        assert_eq!(precision(None, &[], &|p| p.params().label()), Said::NoTimedPoints);
    }
}
