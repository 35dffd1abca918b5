//! What a control says of a change set beside it: the same comparison
//! without what was varied (seed 004's container, one unpartitioned
//! instance, beside the partitions), read from the two ratios and their
//! 95 % intervals.

use serde::Serialize;

/// What a control says of a change set beside it: both are ratios against
/// the same baseline (above 1: better) with their 95 % intervals.
/// Overlapping intervals alone do not move a change onto the control: a
/// control that shows the same change does, and one whose ratio matches
/// this one points that way without resolving it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ControlReading {
    /// The control's own interval clears the threshold the same way: the
    /// change comes without what was varied.
    Shows,
    /// The two intervals do not overlap: the control does not explain it.
    Clears,
    /// The intervals overlap, each ratio lies inside the other's interval,
    /// and the control's interval is at most twice as wide (on a log
    /// scale): the control reads about the same, so the change is likely
    /// not the varied setting's, though the control's is not resolved.
    Matches,
    /// The intervals overlap, but each ratio lies outside the other's
    /// interval: the control reads differently, so the change is likely
    /// the varied setting's, though not resolved.
    Differs,
    /// Neither: the two are not told apart.
    Undecided,
}

impl ControlReading {
    /// `change` and `control`: (ratio, low, high) of each.
    pub fn of(change: (f64, f64, f64), control: (f64, f64, f64), threshold: f64) -> ControlReading {
        let (r, lo, hi) = change;
        let (cr, clo, chi) = control;
        if hi < clo || chi < lo {
            return ControlReading::Clears;
        }
        let shows = if r >= 1.0 { clo > 1.0 + threshold } else { chi < 1.0 - threshold };
        let inside = |x: f64, a: f64, b: f64| a <= x && x <= b;
        if shows {
            ControlReading::Shows
        } else if inside(cr, lo, hi) && inside(r, clo, chi) && (chi / clo).ln() <= 2.0 * (hi / lo).ln() {
            // A control far less precise than the change matches anything.
            ControlReading::Matches
        } else if !inside(cr, lo, hi) && !inside(r, clo, chi) {
            ControlReading::Differs
        } else {
            ControlReading::Undecided
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_control_takes_a_change_over_only_when_it_shows_it_too() {
        let t = 0.02;
        // seed 004, stream copy 8 MiB: partitions 0.773 (0.636-0.907); the
        // container reads 1.016 (0.862-1.177): each ratio outside the
        // other's interval, the cache effect the Setup predicts.
        assert_eq!(ControlReading::of((0.773, 0.636, 0.907), (1.016, 0.862, 1.177), t), ControlReading::Differs);
        // served at 600 req/s: partitions 1.082 (1.022-1.126), container
        // 1.081 (0.990-1.144): the same ratio, shared with the control.
        assert_eq!(ControlReading::of((1.082, 1.022, 1.126), (1.081, 0.990, 1.144), t), ControlReading::Matches);
        // A control that clears the threshold the same way shows it.
        assert_eq!(ControlReading::of((1.741, 1.030, 2.587), (1.8, 1.2, 3.0), t), ControlReading::Shows);
        // A control four times as wide as the change matches nothing.
        assert_eq!(ControlReading::of((1.3, 1.167, 1.453), (1.35, 0.72, 2.53), t), ControlReading::Undecided);
        // One ratio inside the other's interval, the other not: undecided.
        assert_eq!(ControlReading::of((1.5, 1.0, 2.0), (1.05, 0.9, 1.2), t), ControlReading::Undecided);
        // Disjoint: the control does not explain it, whichever way.
        assert_eq!(ControlReading::of((0.7, 0.6, 0.8), (1.0, 0.95, 1.05), t), ControlReading::Clears);
        assert_eq!(ControlReading::of((1.4, 1.3, 1.5), (1.1, 1.05, 1.2), t), ControlReading::Clears);
    }
}
