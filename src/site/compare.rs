//! The site's compare pages: labels whose runs measured exactly the same
//! points are one experiment under different conditions (seed 004's `bare`,
//! `container` and `partitions-2`; `telemetry-on-1` and `telemetry-off-1`),
//! so each such label is compared with the next one recorded, as
//! `benchbook compare label:A label:B` would: every run of a label is one
//! group (repeats resampled as runs, then rounds and samples). Labels with
//! a point set of their own get no page: a comparison of different suites
//! would only list what they do not share.

use std::collections::{BTreeMap, BTreeSet};

use crate::analysis::compare::{compare_runs, PointComparison};
use crate::archive::catalog::CatalogEntry;
use crate::archive::{Archive, RunDir};
use crate::error::Result;
use crate::render::markdown::escape_markdown as md;
use crate::vocab::units::{format_seconds, format_sig3};

/// The threshold a verdict needs, as `compare`'s default.
const THRESHOLD: f64 = 0.02;

/// A pair of labels to compare: the older first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Pair {
    pub base: String,
    pub new: String,
    pub base_runs: Vec<String>,
    pub new_runs: Vec<String>,
}

impl Pair {
    /// The page's path under the site: the two names joined by `+`, which
    /// [`super::file_name`] never writes, so two pairs never share a page.
    pub fn page(&self) -> String {
        format!("compare/{}+{}.html", super::file_name(&self.base), super::file_name(&self.new))
    }

    pub fn runs(&self) -> impl Iterator<Item = &String> {
        self.base_runs.iter().chain(&self.new_runs)
    }
}

/// The pairs of `entries`, from each run's points (`points_of`).
pub(super) fn pairs(
    entries: &BTreeMap<String, CatalogEntry>,
    points_of: impl Fn(&str) -> BTreeSet<String>,
) -> Vec<Pair> {
    // label → its first start, its runs (start, id), its points.
    type Label = (String, Vec<(String, String)>, BTreeSet<String>);
    // A label among those with the same points: its first start, name, runs.
    type Same<'a> = (String, &'a str, Vec<String>);
    let mut labels: BTreeMap<&str, Label> = BTreeMap::new();
    for e in entries.values() {
        let Some(label) = e.label.as_deref() else { continue };
        let start = e.started_at.clone().unwrap_or_default();
        let l = labels.entry(label).or_insert_with(|| (start.clone(), Vec::new(), BTreeSet::new()));
        l.0 = l.0.clone().min(start.clone());
        l.1.push((start, e.run_id.clone()));
        l.2.extend(points_of(&e.run_id));
    }
    let mut by_points: BTreeMap<BTreeSet<String>, Vec<Same>> = BTreeMap::new();
    for (label, (first, mut runs, points)) in labels {
        if points.is_empty() {
            continue;
        }
        runs.sort();
        by_points.entry(points).or_default().push((first, label, runs.into_iter().map(|(_, id)| id).collect()));
    }
    let mut out = Vec::new();
    for mut same in by_points.into_values() {
        same.sort();
        for w in same.windows(2) {
            out.push(Pair {
                base: w[0].1.to_string(),
                new: w[1].1.to_string(),
                base_runs: w[0].2.clone(),
                new_runs: w[1].2.clone(),
            });
        }
    }
    out.sort();
    out
}

/// The compare page of `pair`: the title and its Markdown.
pub(super) fn page(archive: &Archive, pair: &Pair) -> Result<(String, String)> {
    let dirs = |ids: &[String]| -> Vec<RunDir> { ids.iter().map(|id| archive.run_dir(id)).collect() };
    let c = compare_runs(&dirs(&pair.base_runs), &dirs(&pair.new_runs), THRESHOLD, &pair.new)?;
    let title = format!("{} against {}", pair.new, pair.base);
    let runs = |ids: &[String]| {
        ids.iter()
            .map(|id| super::link(id, &format!("../runs/{}.html", super::file_name(id))))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut m = format!(
        "# {}\n\nEvery point both labels measured: the ratio of medians (above 1: **{}** is better), its 95 % interval \
         and a verdict at ±{:.0} % (`benchbook compare label:{} label:{}`). Each label's runs are one group: runs are \
         resampled, then their rounds and samples.\n\n- **{}** ({}): {}\n- **{}** ({}): {}\n\n",
        md(&title),
        md(&pair.new),
        THRESHOLD * 100.0,
        md(&pair.base),
        md(&pair.new),
        md(&pair.base),
        pair.base_runs.len(),
        runs(&pair.base_runs),
        md(&pair.new),
        pair.new_runs.len(),
        runs(&pair.new_runs),
    );
    m.push_str(&format!(
        "| point | {} | {} | ratio | 95 % interval | verdict |\n|---|---|---|---|---|---|\n",
        md(&pair.base),
        md(&pair.new)
    ));
    for p in &c.points {
        m.push_str(&row(p));
    }
    Ok((title, m))
}

fn row(p: &PointComparison) -> String {
    let value = |v: f64| if p.unit == "s" { format_seconds(v) } else { format!("{} {}", format_sig3(v), md(&p.unit)) };
    let interval = match (p.ci_low, p.ci_high) {
        (Some(l), Some(h)) => format!("{l:.3}–{h:.3}"),
        _ => "no uncertainty: one sample".into(),
    };
    format!(
        "| {} | {} | {} | {:.3}× | {interval} | {} |\n",
        md(&p.label),
        value(p.median_a),
        value(p.median_b),
        p.ratio,
        p.verdict.as_str()
    )
}
