//! The compare report (seed 004's bare metal vs container, partitioned vs
//! whole GPU): runs or groups of repeated runs, the first the baseline,
//! each other compared with it. It holds the runs overlaid on one chart
//! per benchmark, per pair the ratio chart with its 95 % band, the verdict
//! table and sentences, what differs between the environments and how much
//! the runs vary. Native, exec and imported runs mix: points match on their
//! parameters, whatever measured them.

mod conclusion;
mod overlays;
mod partitions;
mod rows;
mod suite;

use serde::Serialize;

pub use partitions::{PartitionRow, PartitionSection};
pub use suite::{FamilySection, SummaryRow};

use crate::analysis::compare::{compare_loaded, PointComparison, RunComparison};
use crate::archive::RunDir;
use crate::error::Result;
use crate::plot::{Chart, RatioChart};

/// One run of the report.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRun {
    /// `baseline`, or the group compared with it.
    pub role: String,
    /// The group's name in the report (its label, or its run id).
    pub name: String,
    pub id: String,
    pub source: String,
    pub host: String,
    pub started_at: String,
    pub status: String,
    pub measured: u32,
    pub command: String,
}

/// A chart and the sentence under it.
#[derive(Debug, Clone, Serialize)]
pub struct ChartRef {
    /// The chart's id, which the template asks for (`chart(id=...)`).
    pub id: String,
    pub alt: String,
    pub caption: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct VerdictRow {
    pub point: String,
    pub base: String,
    pub new: String,
    pub ratio: String,
    /// The ratio as a change in words: "4.1 % faster", "42.5 % lower".
    pub change: String,
    pub ci: String,
    /// The smallest change its interval lets a verdict call
    /// ([`PointComparison::detectable`]): "4.1 %", or "-".
    pub resolves: String,
    pub verdict: String,
    pub runs: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct EnvRow {
    pub what: String,
    pub base: String,
    pub new: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct VariabilityRow {
    pub name: String,
    pub runs: usize,
    pub within_run: String,
    pub run_to_run: String,
}

/// One group compared with the baseline.
#[derive(Debug, Clone, Serialize)]
pub struct PairSection {
    pub base: String,
    pub new: String,
    pub ratio_chart: ChartRef,
    /// How many points, and how many of each verdict.
    pub counts: String,
    pub verdicts: Vec<String>,
    /// A partitioned group: each called point against the control's ratio
    /// there ([`conclusion::control_notes`]).
    pub control_notes: Vec<String>,
    pub table: Vec<VerdictRow>,
    /// Whether any point rests on one sample (no interval).
    pub one_sample: bool,
    /// Whether either side has repeated runs (intervals over runs).
    pub repeated: bool,
    pub environment: Vec<EnvRow>,
    pub variability: Vec<VariabilityRow>,
}

/// Everything the compare template can use.
#[derive(Debug, Clone, Serialize)]
pub struct CompareContext {
    pub title: String,
    pub generated_at: String,
    pub benchbook_version: String,
    pub threshold_pct: String,
    /// The command that makes this report again: one argument per group,
    /// the runs of a group joined by commas.
    pub reproduce: String,
    pub runs: Vec<CompareRun>,
    /// Per compared group, each family's change with its bound.
    pub conclusion: Vec<conclusion::ConclusionLine>,
    /// One row per curve and pair: its verdict, ratio and interval.
    pub summary: Vec<SummaryRow>,
    /// One section per benchmark family: overlays and verdicts.
    pub families: Vec<FamilySection>,
    /// Groups of partitions measuring at once, against the baseline.
    pub partitions: Vec<PartitionSection>,
    pub pairs: Vec<PairSection>,
    /// The system of each group (its first run's), a column per group, as
    /// every report kind's System table.
    pub system: crate::report::context::SystemTable,
    /// A write-up's prose (`--notes`): introduction, setup, discussion and
    /// limitations, as every report kind takes them.
    pub notes: crate::report::sections::notes::Notes,
}

/// A compare report before it is written.
pub struct CompareReport {
    pub context: CompareContext,
    pub charts: Vec<Box<dyn Chart>>,
    /// The comparisons behind each pair, for callers that want the numbers.
    pub comparisons: Vec<RunComparison>,
}

impl CompareReport {
    /// With the write-up's notes from `path` (none: no prose sections).
    pub fn with_notes(mut self, path: Option<&std::path::Path>) -> Result<CompareReport> {
        if let Some(p) = path {
            self.context.notes = crate::report::sections::notes::Notes::read(p)?;
        }
        Ok(self)
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("-".into(), |c| format!("{:.2} %", 100.0 * c))
}

fn verdict_row(p: &PointComparison) -> VerdictRow {
    VerdictRow {
        point: p.label.clone(),
        base: p.median_text(p.median_a),
        new: p.median_text(p.median_b),
        ratio: format!("{:.3}", p.ratio),
        change: {
            let reading = crate::analysis::compare::summary::Reading::of(p);
            let (better, worse) = reading.words();
            format!("{:.1} % {}", 100.0 * reading.change(p.ratio), if p.ratio < 1.0 { worse } else { better })
        },
        ci: p.ci_text(),
        resolves: p.detectable_text(),
        // A metric's verdict reads in its direction ("lower, better"), as
        // the Summary's does; a time's reads faster or slower.
        verdict: crate::analysis::compare::summary::Reading::of(p).verdict_word(p.verdict).into(),
        runs: format!("{} / {}", p.runs_a, p.runs_b),
    }
}

/// Analyse `groups` (the first the baseline) and build the compare report.
pub fn build_compare(groups: &[Vec<RunDir>], threshold: f64) -> Result<CompareReport> {
    let crate::analysis::compare::groups::Loaded { groups, names, firsts, catalog } =
        crate::analysis::compare::groups::load(groups)?;
    let mut system = crate::report::context::system(&firsts, &[], &catalog);
    system.runs = names.clone();
    let runs = rows::compare_runs(&groups, &names);
    let mut charts: Vec<Box<dyn Chart>> = Vec::new();
    let mut pairs = Vec::new();
    let mut comparisons = Vec::new();
    for (i, g) in groups.iter().enumerate().skip(1) {
        let c = compare_loaded(&groups[0], g, threshold, &names[i])?;
        let file = format!("ratio-{i}");
        let n_rows = c.points.iter().filter(|p| p.size_bytes.is_none()).count();
        let shown = if c.points.iter().any(|p| p.size_bytes.is_some()) {
            "every sized point".to_string()
        } else if n_rows > crate::plot::ratio::MAX_ROWS {
            format!("the first {} of {n_rows} points (all are in the table)", crate::plot::ratio::MAX_ROWS)
        } else {
            "every point".to_string()
        };
        let title = format!("{} vs {}", names[i], names[0]);
        charts.push(Box::new(RatioChart::of_comparison(&file, &title, &c)));
        pairs.push(PairSection {
            base: names[0].clone(),
            new: names[i].clone(),
            ratio_chart: ChartRef {
                id: file.clone(),
                alt: format!("ratio of medians, {} over {}, with 95 % intervals", names[i], names[0]),
                caption: format!(
                    "How many times better {} is than {} at {shown}; the shaded band or bar is the 95 % interval of the ratio, the dashed lines the ±{:.1} % a verdict has to clear.",
                    names[i],
                    names[0],
                    100.0 * threshold
                ),
            },
            counts: rows::verdict_counts(&c),
            verdicts: c.verdicts.clone(),
            control_notes: Vec::new(),
            table: c.points.iter().map(verdict_row).collect(),
            one_sample: c.points.iter().any(|p| p.ci_low.is_none()),
            repeated: c.variability.iter().any(|v| v.runs > 1),
            environment: c
                .environment
                .iter()
                .map(|d| EnvRow {
                    what: d.what.clone(),
                    base: d.a.clone().unwrap_or_else(|| "(not recorded)".into()),
                    new: d.b.clone().unwrap_or_else(|| "(not recorded)".into()),
                })
                .collect(),
            variability: [&names[0], &names[i]]
                .iter()
                .zip(&c.variability)
                .map(|(n, v)| VariabilityRow {
                    name: n.to_string(),
                    runs: v.runs,
                    within_run: pct(v.within_run_cv),
                    run_to_run: if v.runs > 1 { pct(v.run_to_run_cv) } else { "unknown: one run".into() },
                })
                .collect(),
        });
        comparisons.push(c);
    }
    let overlays = overlays::overlay_charts(&groups, &names, &mut charts)?;
    let indexed: Vec<(usize, &RunComparison)> = comparisons.iter().enumerate().map(|(k, c)| (k + 1, c)).collect();
    let summary = suite::summary_rows(&names, &indexed);
    let families = suite::family_sections(overlays, &summary);
    let partitions = groups
        .iter()
        .enumerate()
        .skip(1)
        .filter_map(|(i, g)| partitions::section(i, &names[i], &names[0], g, &mut charts))
        .collect();
    let counts: Vec<usize> = groups.iter().skip(1).map(|g| g.first().map_or(1, |r| r.partitions())).collect();
    let conclusion = conclusion::conclusions(&names, &comparisons, &counts);
    // The control (the first compared group measured as one instance) set
    // beside every point a partitioned group is called at.
    if let Some(k) = counts.iter().position(|n| *n == 1) {
        for (i, pair) in pairs.iter_mut().enumerate().filter(|(i, _)| *i != k && counts[*i] > 1) {
            pair.control_notes = conclusion::control_notes(&comparisons[i], &comparisons[k], &names[k + 1]);
        }
    }
    let title = format!("benchbook comparison: {}", names.join(" vs "));
    crate::plot::share_palette(&mut charts);
    Ok(CompareReport {
        context: CompareContext {
            title,
            generated_at: crate::archive::manifest::now_rfc3339(),
            benchbook_version: env!("CARGO_PKG_VERSION").into(),
            threshold_pct: format!("{:.1} %", 100.0 * threshold),
            reproduce: format!(
                "benchbook report {} --kind compare --threshold {}%",
                groups
                    .iter()
                    .map(|g| g.iter().map(|r| r.manifest.run_id.as_str()).collect::<Vec<_>>().join(","))
                    .collect::<Vec<_>>()
                    .join(" "),
                100.0 * threshold
            ),
            runs,
            conclusion,
            summary,
            families,
            partitions,
            pairs,
            system,
            notes: Default::default(),
        },
        charts,
        comparisons,
    })
}
