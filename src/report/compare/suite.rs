//! The compare report as seed 004 reads: one section per benchmark family
//! (collectives, transfers and RDMA, memory bandwidth, compute, workloads),
//! each with its overlay charts and, per pair of groups, one verdict per
//! curve answering the write-up's question ("container within ±0.8 % of
//! bare metal at every size"), and a summary table of every curve's
//! verdict. The rows come from [`RunComparison::summary`], the same
//! figures `compare --json` prints.

use serde::Serialize;

use super::ChartRef;
use crate::analysis::compare::{CurveSummary, CurveVerdict, RunComparison};
use crate::vocab::benches::CompareFamily as Family;

/// Runs a side past which "about N runs would settle it" is no plan: the
/// number is then the formula's, set by how close the median ratio sits
/// to the threshold, not a count anyone would run.
pub const PRACTICAL_RUNS: usize = 1000;

/// One curve's verdict in the summary table and its family section.
#[derive(Debug, Clone, Serialize)]
pub struct SummaryRow {
    pub base: String,
    pub new: String,
    pub family: String,
    pub curve: String,
    pub points: usize,
    /// `same`, `faster`, `slower`, `mixed`, `inconclusive`.
    pub verdict: String,
    /// The verdict as it reads for this curve: `faster`/`slower` for
    /// times, `higher`/`lower` for a metric.
    pub verdict_shown: String,
    /// "3 slower, 5 same".
    pub counts: String,
    pub same: usize,
    pub faster: usize,
    pub slower: usize,
    pub ratio: String,
    /// Lowest and highest point ratio: "0.981–1.004".
    pub ratio_range: String,
    /// The interval every point's 95 % interval lies in, or why none.
    pub ci: String,
    /// "±1.9 %": how far the widest bound reaches; empty without intervals.
    pub within: String,
    /// Whether the points rest on one sample a side (imported logs).
    pub one_sample: bool,
    /// For `slower` and `faster`: how much, at the median of the points
    /// with that verdict ("4.1 %"), and that median ratio; "-" otherwise.
    pub change: String,
    pub verdict_ratio: String,
    /// "7 points", "1 point".
    pub points_text: String,
    /// The words its verdicts read as: `faster`/`slower` for times,
    /// `higher`/`lower` for a metric, in the direction it improves.
    pub better: String,
    pub worse: String,
    /// About how many runs a side would resolve the threshold at the
    /// run-to-run spread these runs show, and that spread ("10.4 %");
    /// `None` where one run a side shows no spread.
    pub runs_to_resolve: Option<usize>,
    /// That number as the report says it: "about 57", or "over 1000"
    /// past [`PRACTICAL_RUNS`].
    pub runs_text: String,
    /// Whether those runs would put its interval inside the threshold (a
    /// median ratio within it can at best be called `same`) rather than
    /// clear of it.
    pub resolves_inside: bool,
    pub run_cv: String,
}

/// A family section: its charts, and its curves' verdicts per pair.
#[derive(Debug, Clone, Serialize)]
pub struct FamilySection {
    pub title: String,
    pub charts: Vec<ChartRef>,
    pub rows: Vec<SummaryRow>,
}

/// The word a change at `ratio` (above 1: better) reads as.
fn change_word(reading: crate::analysis::compare::summary::Reading, ratio: f64) -> &'static str {
    let (better, worse) = reading.words();
    if ratio >= 1.0 {
        better
    } else {
        worse
    }
}

fn row(base: &str, new: &str, c: &CurveSummary, threshold: f64) -> SummaryRow {
    let runs = c.runs_to_resolve(threshold);
    SummaryRow {
        base: base.into(),
        new: new.into(),
        family: Family::of(&c.bench).title().into(),
        curve: c.curve.clone(),
        points: c.points,
        verdict: c.verdict.as_str().into(),
        verdict_shown: match c.verdict {
            CurveVerdict::Faster => c.reading.verdict_word(crate::analysis::compare::Verdict::Faster).into(),
            CurveVerdict::Slower => c.reading.verdict_word(crate::analysis::compare::Verdict::Slower).into(),
            v => v.as_str().into(),
        },
        counts: c.counts_text(),
        same: c.same,
        faster: c.faster,
        slower: c.slower,
        ratio: format!("{:.3}", c.ratio),
        ratio_range: format!("{:.3}–{:.3}", c.ratio_min, c.ratio_max),
        ci: match (c.ci_low, c.ci_high) {
            (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
            _ => "none: one sample a side".into(),
        },
        within: c.within.map_or("-".into(), |w| format!("±{:.1} %", 100.0 * w)),
        one_sample: c.ci_low.is_none(),
        change: match (c.verdict, c.verdict_ratio) {
            (CurveVerdict::Slower | CurveVerdict::Faster, Some(r)) => {
                format!("{:.1} % {}", 100.0 * c.reading.change(r), change_word(c.reading, r))
            }
            _ => "-".into(),
        },
        better: c.reading.words().0.into(),
        worse: c.reading.words().1.into(),
        verdict_ratio: c.verdict_ratio.map_or("-".into(), |r| format!("{r:.3}")),
        points_text: if c.points == 1 { "1 point".into() } else { format!("{} points", c.points) },
        runs_to_resolve: runs,
        runs_text: match runs {
            Some(n) if n > PRACTICAL_RUNS => format!("over {PRACTICAL_RUNS}"),
            Some(n) => format!("about {n}"),
            None => "-".into(),
        },
        resolves_inside: (c.ratio - 1.0).abs() < threshold,
        run_cv: c.run_cv.map_or("-".into(), |v| format!("{:.1} %", 100.0 * v)),
    }
}

/// Every pair's curves as summary rows: in pair order, then by family
/// (as the sections come), then curve.
pub fn summary_rows(names: &[String], comparisons: &[(usize, &RunComparison)]) -> Vec<SummaryRow> {
    comparisons
        .iter()
        .flat_map(|(i, c)| {
            let mut rows: Vec<(Family, SummaryRow)> =
                c.summary.iter().map(|s| (Family::of(&s.bench), row(&names[0], &names[*i], s, c.threshold))).collect();
            rows.sort_by_key(|r| r.0);
            rows.into_iter().map(|(_, r)| r)
        })
        .collect()
}

/// The family sections that have a chart or a verdict, in [`Family::ALL`]
/// order.
pub fn family_sections(charts: Vec<(Family, ChartRef)>, rows: &[SummaryRow]) -> Vec<FamilySection> {
    Family::ALL
        .iter()
        .map(|f| FamilySection {
            title: f.title().into(),
            charts: charts.iter().filter(|(g, _)| g == f).map(|(_, c)| c.clone()).collect(),
            rows: rows.iter().filter(|r| r.family == f.title()).cloned().collect(),
        })
        .filter(|s| !s.charts.is_empty() || !s.rows.is_empty())
        .collect()
}
