//! The conclusion a reader of seed 004 looks for first: per compared group
//! and benchmark family, how much the group changes things, bounded
//! ([`FamilyBound`]: an average over the family's points with its 95 %
//! interval over runs). A partitioned group's bound is set beside the
//! control's, the group measured as one unpartitioned instance (the
//! container), so a change the control shows as well is not credited to
//! the partitions.

use serde::Serialize;

use crate::analysis::compare::bounds::{Call, ControlReading, FamilyBound};
use crate::analysis::compare::summary::Reading;
use crate::analysis::compare::{RunComparison, Verdict};

/// One compared group's sentence.
#[derive(Debug, Clone, Serialize)]
pub struct ConclusionLine {
    pub new: String,
    pub base: String,
    /// Partitions measuring at once (1: one instance).
    pub partitions: usize,
    pub families: Vec<FamilyLine>,
}

/// One family's clause.
#[derive(Debug, Clone, Serialize)]
pub struct FamilyLine {
    pub family: String,
    /// Whether `family` names one workload metric rather than a family.
    pub metric: bool,
    pub points: usize,
    /// Runs a side: `3 / 3`.
    pub runs: String,
    /// Whether the runs alternated in time and were compared in pairs.
    pub paired: bool,
    /// `no change beyond ±2.0 %`, `slower`, `faster`, or `not resolved`.
    pub call: String,
    /// `between 1.2 % slower and 0.8 % faster`.
    pub interval: String,
    /// The geometric mean change: `0.4 % faster`.
    pub change: String,
    /// The control's name and interval for the same family, and what it
    /// says of this change as a clause and in short ([`ControlWords`];
    /// `None` where no change was called: there is nothing for the control
    /// to explain).
    pub control: Option<(String, String, Option<ControlWords>)>,
    /// A called change: how many of its points are called that way on
    /// their own, and how many moved the other way.
    pub split: Option<(usize, usize)>,
}

/// How a bound's change reads: a family of times as a speed-up, a latency
/// lower or higher, as the point tables read them ([`Reading`]); a metric
/// where higher is better, better or worse.
fn reading(b: &FamilyBound) -> Reading {
    match (b.metric, b.lower_better) {
        (false, _) => Reading::Time,
        (true, true) => Reading::LowerBetter,
        (true, false) => Reading::HigherBetter,
    }
}

fn words(b: &FamilyBound) -> (&'static str, &'static str) {
    match reading(b) {
        Reading::HigherBetter => ("better", "worse"),
        r => r.words(),
    }
}

/// A ratio (above 1: better) as a change in `b`'s words, by
/// [`Reading::change`] (a latency at ratio 1.975 is 49.4 % lower, not
/// 97.5 % better).
fn change(r: f64, b: &FamilyBound) -> String {
    let (better, worse) = words(b);
    format!("{:.1} % {}", reading(b).change(r) * 100.0, if r >= 1.0 { better } else { worse })
}

fn interval(b: &FamilyBound) -> String {
    format!("between {} and {}", change(b.low, b), change(b.high, b))
}

/// Each pair's conclusion; `partitions[i]` is pair `i`'s partition count.
pub fn conclusions(names: &[String], pairs: &[RunComparison], partitions: &[usize]) -> Vec<ConclusionLine> {
    // The control: the first compared group measured as one instance.
    let control = pairs.iter().zip(partitions).position(|(_, n)| *n == 1);
    pairs
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.families.is_empty())
        .map(|(i, c)| ConclusionLine {
            new: names[i + 1].clone(),
            base: names[0].clone(),
            partitions: partitions[i],
            families: c
                .families
                .iter()
                .map(|b| {
                    let (better, worse) = words(b);
                    let call = match b.call(c.threshold) {
                        Call::Within => format!("no change beyond ±{:.1} %", c.threshold * 100.0),
                        Call::Better => better.to_string(),
                        Call::Worse => worse.to_string(),
                        Call::Unresolved => format!("not resolved at ±{:.1} %", c.threshold * 100.0),
                    };
                    let control = control.filter(|k| *k != i && partitions[i] > 1).and_then(|k| {
                        let cb = pairs[k].families.iter().find(|x| x.title == b.title)?;
                        let called = matches!(b.call(c.threshold), Call::Better | Call::Worse);
                        let says = called.then(|| ControlWords::of(b.against_control(cb, c.threshold)));
                        Some((names[k + 1].clone(), interval(cb), says))
                    });
                    FamilyLine {
                        family: b.title.clone(),
                        metric: b.metric,
                        points: b.points,
                        runs: format!("{} / {}", b.runs_a, b.runs_b),
                        paired: b.paired,
                        call,
                        interval: interval(b),
                        change: change(b.ratio, b),
                        control,
                        split: match b.call(c.threshold) {
                            Call::Better => Some(b.point_split(&c.points, true)),
                            Call::Worse => Some(b.point_split(&c.points, false)),
                            _ => None,
                        },
                    }
                })
                .collect(),
        })
        .collect()
}

/// Each point a partitioned group is called faster or slower at (or
/// higher, lower), set beside the control's ratio at the same point
/// ([`ControlReading`]): only a control that shows the same change takes
/// it over. The Details' counterpart of the Conclusion's control column.
pub fn control_notes(c: &RunComparison, control: &RunComparison, control_name: &str) -> Vec<String> {
    let called = c.points.iter().filter(|p| matches!(p.verdict, Verdict::Faster | Verdict::Slower));
    called
        .map(|p| {
            let word = Reading::of(p).verdict_word(p.verdict);
            let at = format!("{} ({word}, ratio {:.3}, 95 % CI {})", p.label, p.ratio, p.ci_text());
            let Some(q) = control.points.iter().find(|q| p.same_point(q)) else {
                return format!(
                    "{at}: {control_name}, the control, has no such point, so this is not checked against it."
                );
            };
            let control_at = format!("{control_name}, the control, reads {:.3} ({}) there", q.ratio, q.ci_text());
            let (Some(a), Some(b)) = (p.ci_low.zip(p.ci_high), q.ci_low.zip(q.ci_high)) else {
                return format!("{at}: {control_at}; without both intervals the two are not set against each other.");
            };
            let said = ControlWords::of(ControlReading::of((p.ratio, a.0, a.1), (q.ratio, b.0, b.1), c.threshold));
            format!("{at}: {control_at}, {}.", said.point)
        })
        .collect()
}

/// What a [`ControlReading`] says, in the one place its words are written:
/// after a point's ratios (`point`), after a family's interval (`clause`),
/// and in the Conclusion table (`short`).
#[derive(Debug, Clone, Serialize)]
pub struct ControlWords {
    pub point: &'static str,
    pub clause: &'static str,
    pub short: &'static str,
}

impl ControlWords {
    pub fn of(r: ControlReading) -> ControlWords {
        let (point, clause, short) = match r {
            ControlReading::Shows => (
                "the same change, so this is not the partitions' doing",
                "the same change, so this is not the partitions' doing",
                "the same change",
            ),
            ControlReading::Clears => (
                "clear of it, so the control does not explain it",
                "which it clears, so the control does not explain it",
                "clear of it",
            ),
            ControlReading::Matches => (
                "about the same (each ratio inside the other's interval), so this is likely not the partitions' doing, though the control's own change is not resolved",
                "about the same, so this is likely not the partitions' doing, though the control's own change is not resolved",
                "about the same",
            ),
            ControlReading::Differs => (
                "different (each ratio outside the other's interval, though the intervals overlap), so this is likely the partitions' doing, though its difference from the control is not resolved",
                "different though overlapping, so this is likely the partitions' doing, though its difference from the control is not resolved",
                "different, overlapping",
            ),
            ControlReading::Undecided => (
                "neither the same nor clear of it, so the two are not told apart: more runs would say whether it is the partitions'",
                "neither the same nor clear of it, so the two are not told apart",
                "overlapping: not told apart",
            ),
        };
        ControlWords { point, clause, short }
    }
}
