//! `benchbook history`: each node's run medians of a point over time and
//! the change points of every series, from one scan of the archive.

use std::io;

use serde::Serialize;

use crate::analysis::changepoints::ChangeRule;
use crate::analysis::history::{history as series_of, HistorySeries};
use crate::archive::{Archive, ScanFilter};
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::error::Result;
use crate::vocab::units::format_sig3;

#[derive(Debug, Serialize)]
pub struct HistoryOutput {
    /// Runs the filter selected and that were read.
    pub runs: usize,
    /// Selected runs left out, with why.
    pub damaged: Vec<(String, String)>,
    pub alpha: f64,
    pub min_effect: f64,
    pub series: Vec<HistorySeries>,
}

pub fn history(
    archive: &Archive,
    filter: &ScanFilter,
    bench: Option<&str>,
    point: Option<&str>,
    rule: &ChangeRule,
    changed_only: bool,
) -> Result<HistoryOutput> {
    let scan = archive.scan(filter)?;
    let mut series = series_of(scan.rows, &scan.runs, bench, rule)?;
    series.retain(|s| point.is_none_or(|p| s.point.contains(p)) && (!changed_only || !s.changes.is_empty()));
    Ok(HistoryOutput {
        runs: scan.runs.height(),
        damaged: scan.damaged,
        alpha: rule.alpha,
        min_effect: rule.min_effect,
        series,
    })
}

/// Draw `out`'s series to the SVG file `path`.
pub fn write_chart(out: &HistoryOutput, path: &std::path::Path) -> Result<()> {
    let chart = crate::plot::metric::MetricChart::history("history", "Run medians over time", &out.series);
    let svg = crate::plot::to_svg(&chart)?;
    std::fs::write(path, svg).map_err(|e| crate::error::Error::io(path, e))
}

impl Render for HistoryOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for (id, why) in &self.damaged {
            writeln!(t.err, "warning: left out {}: {}", terminal_safe(id), terminal_safe(why))?;
        }
        if self.series.is_empty() {
            return writeln!(t.err, "no series: {} runs read, none with a point the filters keep", self.runs);
        }
        let mut tab = table(&["NODE", "POINT", "RUNS", "FIRST", "LAST", "UNIT", "CHANGES"], &[2, 3, 4]);
        for s in &self.series {
            let changes: Vec<String> = s.changes.iter().map(|c| c.to_string()).collect();
            tab.add_row(vec![
                cell(&s.node),
                cell(&s.point),
                s.runs.len().to_string(),
                s.runs.first().map_or("-".into(), |r| format_sig3(r.value)),
                s.runs.last().map_or("-".into(), |r| format_sig3(r.value)),
                s.unit.clone(),
                if changes.is_empty() { "none".into() } else { cell(&changes.join("; ")) },
            ]);
        }
        write_table(&mut *t.out, &tab)?;
        let with = self.series.iter().filter(|s| !s.changes.is_empty()).count();
        writeln!(
            t.out,
            "{} series from {} runs; {with} with a change point (p < {}, at least {:.1} %)",
            self.series.len(),
            self.runs,
            self.alpha,
            100.0 * self.min_effect
        )
    }
}
