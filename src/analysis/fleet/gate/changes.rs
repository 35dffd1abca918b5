//! Where a node's own runs changed level, point by point: its earlier runs
//! (oldest first) and the pass being judged, through the change-point
//! detector `history` uses ([`crate::analysis::changepoints`], scored on
//! TCPD). Informative: it never makes a gate bad by itself. The gate reads
//! up to 10 earlier runs for it (`Window::change_runs`); a change shows
//! once 3 runs precede and 3 follow it, in a series of 7 runs or more.

use serde::Serialize;

use super::GateData;
use crate::analysis::changepoints::{change_points, ChangeRule};
use crate::vocab::stats::RoundsResampler;

/// A change in a node's own runs of one point.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OwnChange {
    pub point: String,
    /// The run (1 = the oldest read) from which the new level holds, of `runs`.
    pub from_run: usize,
    pub runs: usize,
    /// `after / before − 1` of the speeds, and the change's p-value.
    pub change: f64,
    pub p_value: f64,
}

impl OwnChange {
    /// `memcpy copy 64 MiB 1T: its own runs changed level from run 4 of 6 (−8.1 %, p = 2.1e-5)`.
    pub fn line(&self) -> String {
        format!(
            "{}: its own runs changed level from run {} of {} ({:+.1} %, p = {:.1e})",
            self.point,
            self.from_run,
            self.runs,
            100.0 * self.change,
            self.p_value
        )
    }
}

/// Each point's changes over the node's earlier runs and the first fresh
/// pass, in that order.
pub fn own_changes(data: &GateData, rule: &ChangeRule) -> Vec<OwnChange> {
    // A run's figure as the fleet judges it: the median of its rounds' medians.
    let run_figure = |run: &Vec<Vec<f64>>| RoundsResampler::new(run).map(|r| r.figure());
    let mut out = Vec::new();
    for (point, fresh) in &data.fresh {
        let own = data.own_series.get(point).or(data.own.get(point)).map(Vec::as_slice).unwrap_or_default();
        let series: Vec<f64> = own.iter().chain(fresh.first()).filter_map(run_figure).collect();
        for c in change_points(&series, rule) {
            out.push(OwnChange {
                point: point.clone(),
                from_run: c.at + 1,
                runs: series.len(),
                change: c.change,
                p_value: c.p_value,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run of 3 rounds of 5 samples around `level`.
    fn run(level: f64, k: u64) -> Vec<Vec<f64>> {
        (0..3)
            .map(|r| (0..5).map(|s| level * (1.0 + 0.001 * (((k * 7 + r * 3 + s) % 5) as f64 - 2.0))).collect())
            .collect()
    }

    #[test]
    fn a_step_in_its_own_runs_is_named_and_a_steady_node_has_none() {
        let mut data = GateData::default();
        let own = (0..5).map(|k| run(100.0, k)).chain((5..7).map(|k| run(90.0, k)));
        data.own_series.insert("memcpy 64 MiB".into(), own.collect());
        data.fresh.insert("memcpy 64 MiB".into(), vec![run(90.0, 9)]);
        data.own_series.insert("memcpy 4 MiB".into(), (0..7).map(|k| run(50.0, k)).collect());
        data.fresh.insert("memcpy 4 MiB".into(), vec![run(50.0, 9)]);
        let found = own_changes(&data, &ChangeRule::default());
        assert_eq!(found.len(), 1, "{found:?}");
        let c = &found[0];
        assert_eq!((c.point.as_str(), c.from_run, c.runs), ("memcpy 64 MiB", 6, 8));
        assert!((c.change + 0.10).abs() < 0.01, "{c:?}");
        let line = c.line();
        assert!(line.starts_with("memcpy 64 MiB: its own runs changed level from run 6 of 8 (-10.0 %"), "{line}");
        // Too few runs for the detector (6): nothing, not a guess.
        let mut short = GateData::default();
        let own = (0..3).map(|k| run(100.0, k)).chain((3..5).map(|k| run(90.0, k)));
        short.own_series.insert("p".into(), own.collect());
        short.fresh.insert("p".into(), vec![run(90.0, 9)]);
        assert!(own_changes(&short, &ChangeRule::default()).is_empty());
    }
}
