//! Display in evcxr notebooks: small wrappers whose `evcxr_display` method
//! emits `text/html` tables or `image/svg+xml` charts through evcxr's
//! display protocol, built from the same library calls as the CLI. Outside
//! a notebook they print as plain text (`Display`).

use std::fmt;

use crate::analysis::compare::PointComparison;
use crate::analysis::workload::MetricStat;
use crate::analysis::{PointStat, Series};
use crate::archive::Archive;
use crate::error::Result;
use crate::plot::{bandwidth_chart, to_svg};
use crate::render::markdown::escape_html;
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

/// An HTML table for a notebook.
#[derive(Debug, Clone)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// An SVG chart for a notebook.
#[derive(Debug, Clone)]
pub struct Chart(pub String);

impl Table {
    pub fn new(headers: &[&str]) -> Self {
        Table { headers: headers.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// The table as an HTML fragment (every cell escaped).
    pub fn to_html(&self) -> String {
        let mut h = String::from("<table><thead><tr>");
        for c in &self.headers {
            h += &format!("<th>{}</th>", escape_html(c));
        }
        h += "</tr></thead><tbody>";
        for r in &self.rows {
            h += "<tr>";
            for c in r {
                h += &format!("<td>{}</td>", escape_html(c));
            }
            h += "</tr>";
        }
        h + "</tbody></table>"
    }

    /// evcxr's display hook.
    pub fn evcxr_display(&self) {
        println!("EVCXR_BEGIN_CONTENT text/html\n{}\nEVCXR_END_CONTENT", self.to_html());
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}", self.headers.join(" | "))?;
        for r in &self.rows {
            writeln!(f, "{}", r.join(" | "))?;
        }
        Ok(())
    }
}

impl Chart {
    /// evcxr's display hook.
    pub fn evcxr_display(&self) {
        println!("EVCXR_BEGIN_CONTENT image/svg+xml\n{}\nEVCXR_END_CONTENT", self.0);
    }
}

impl fmt::Display for Chart {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<svg chart, {} bytes>", self.0.len())
    }
}

/// Rows of one benchmark at or above a size, with the columns a reader
/// usually wants first. The query runs inside benchbook: in an evcxr kernel,
/// polars objects built in a cell and consumed by the library (or the
/// reverse) can come from two compiled copies of polars whose hash seeds
/// differ, and column lookups then fail.
pub fn select(df: &polars::prelude::DataFrame, bench: &str, min_size_bytes: u64) -> Result<polars::prelude::DataFrame> {
    use polars::prelude::*;
    df.clone()
        .lazy()
        .filter(col("bench").eq(lit(bench)).and(col("size_bytes").gt_eq(lit(min_size_bytes))))
        .select([col("point"), col("size_bytes"), col("threads"), col("sample"), col("iterations"), col("seconds")])
        .collect()
        .map_err(crate::error::Error::analysis)
}

/// The runs of an archive.
pub fn runs(archive: &Archive) -> Result<Table> {
    let mut t = Table::new(&["run", "status", "started", "source", "points", "rows"]);
    for r in archive.runs()? {
        match r.manifest() {
            Ok(m) => t.rows.push(vec![
                r.id.clone(),
                m.effective_status().as_str().into(),
                m.started_at.clone(),
                m.source.to_string(),
                m.counts.points.to_string(),
                m.counts.rows.to_string(),
            ]),
            Err(e) => t.rows.push(vec![
                r.id.clone(),
                format!("damaged: {e}"),
                String::new(),
                String::new(),
                String::new(),
                String::new(),
            ]),
        }
    }
    Ok(t)
}

/// Per-point statistics.
pub fn points(stats: &[PointStat]) -> Table {
    let mut t = Table::new(&["point", "median", "p20", "p80", "CV", "samples", "GB/s once", "GB/s moved", "GFLOP/s"]);
    let f = |v: Option<f64>| v.map(format_sig3).unwrap_or_default();
    for p in stats {
        let label = p.params().label();
        t.rows.push(vec![
            label,
            format_seconds(p.median_seconds),
            format_seconds(p.summary.p20),
            format_seconds(p.summary.p80),
            format!("{:.2} %", p.summary.cv * 100.0),
            p.samples.to_string(),
            f(p.gbps_copied),
            f(p.gbps_moved),
            f(p.gflops.filter(|g| *g > 0.0)),
        ]);
    }
    t
}

/// A comparison, point by point.
pub fn comparison(c: &[PointComparison]) -> Table {
    let mut t = Table::new(&["point", "median A", "median B", "A / B", "95 % CI", "samples", "verdict"]);
    for p in c {
        t.rows.push(vec![
            p.label.clone(),
            format_seconds(p.median_a),
            format_seconds(p.median_b),
            format_sig3(p.ratio),
            match (p.ci_low, p.ci_high) {
                (Some(lo), Some(hi)) => format!("{} – {}", format_sig3(lo), format_sig3(hi)),
                _ => "no uncertainty: one sample".into(),
            },
            format!("{} / {}", p.samples_a, p.samples_b),
            p.verdict.as_str().into(),
        ]);
    }
    t
}

/// A log-log rate chart of series (each labelled by its name, or `run:
/// name` when they come from several runs), with an optional roofline in GB/s.
pub fn chart(title: &str, y_label: &str, curves: &[Series], roofline_gbps: Option<f64>) -> Result<Chart> {
    let several = curves.iter().any(|c| c.run_id != curves[0].run_id);
    let lines = curves
        .iter()
        .map(|c| {
            let label = if several { format!("{}: {}", short_id(&c.run_id), c.name()) } else { c.name().to_string() };
            crate::plot::series::line(c, label, 1.0)
        })
        .collect();
    let roof = roofline_gbps.map(|r| (format!("roofline {} GB/s", format_sig3(r)), r));
    Ok(Chart(to_svg(&bandwidth_chart("notebook", title, y_label, lines, roof))?))
}

/// History series (`benchbook history`): each run's median in run order,
/// with its 95 % interval, one line per series (those with a change first).
pub fn history_chart(title: &str, series: &[crate::analysis::history::HistorySeries]) -> Result<Chart> {
    Ok(Chart(to_svg(&crate::plot::metric::MetricChart::history("notebook", title, series))?))
}

/// Named-metric points (tokens/s, latencies, loss) with the 95 % interval
/// of each median, or why there is none.
pub fn metrics(stats: &[MetricStat]) -> Table {
    let mut t = Table::new(&["metric", "parameters", "unit", "median", "95 % CI of median", "best", "samples"]);
    for s in stats {
        t.rows.push(vec![
            s.metric.clone(),
            crate::vocab::metrics::params_label(&s.params),
            s.unit.clone(),
            format_sig3(s.median),
            s.ci.map(|(lo, hi)| format!("{} – {}", format_sig3(lo), format_sig3(hi)))
                .unwrap_or_else(|| format!("n/a ({} samples)", s.samples)),
            format_sig3(s.peak),
            s.samples.to_string(),
        ]);
    }
    t
}

/// `metric` against parameter `x`, one line per run and other-parameter
/// combination: the chart `report` draws.
pub fn metric_chart(title: &str, stats: &[MetricStat], metric: &str, x: &str) -> Result<Chart> {
    let chart = crate::plot::MetricChart::of("notebook", title, stats, metric, x, &|id| short_id(id).to_string());
    Ok(Chart(to_svg(&chart)?))
}

/// The last part of a run id (its label and salt), for legends.
fn short_id(id: &str) -> &str {
    id.split_once('-').map(|(_, rest)| rest).unwrap_or(id)
}

/// Sizes formatted for a table column.
pub fn size(bytes: Option<u64>) -> String {
    bytes.map(format_bytes).unwrap_or_default()
}
