//! `benchbook show`: one run's manifest and per-point statistics.

use std::io;

use serde::Serialize;

use crate::analysis::workload::{metric_stats_lazy, MetricStat};
use crate::analysis::{point_stats, PointStat};
use crate::archive::{Archive, Manifest};
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::error::Result;
use crate::vocab::interval::Basis;
use crate::vocab::units::shell_join;
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

/// The run's manifest as stored and a summary of each point.
#[derive(Debug, Serialize)]
pub struct ShowOutput {
    pub manifest: Manifest,
    pub points: Vec<PointStat>,
    /// Named-metric points (schema v4): tokens/s, latencies, wall times.
    pub metrics: Vec<MetricStat>,
    /// `run --partitions N`: each point's partitions added up.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<crate::analysis::partitions::Aggregate>,
}

/// Read the run `query` names (an id, a unique part of one, or `latest`).
pub fn show(archive: &Archive, query: &str, no_verify: bool) -> Result<ShowOutput> {
    let run = archive.resolve(query)?;
    let (manifest, rows) = run.scan(no_verify)?;
    let metrics = metric_stats_lazy(rows.clone())?;
    let points = point_stats(rows)?;
    use crate::vocab::config::RunConfig;
    let partitioned = match &manifest.config {
        RunConfig::Sweep(c) => !c.partitions.is_empty(),
        RunConfig::Exec(e) => !e.exec.partitions.is_empty(),
        _ => false,
    };
    let partitions =
        if partitioned { crate::analysis::partitions::aggregate(&run.rows()?, 2000, 0x5eed) } else { Vec::new() };
    Ok(ShowOutput { manifest, points, metrics, partitions })
}

impl Render for ShowOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let (m, w) = (&self.manifest, &mut *t.out);
        let s = terminal_safe;
        writeln!(w, "run      {}", s(&m.run_id))?;
        if let Some(label) = &m.label {
            writeln!(w, "label    {}", s(label))?;
        }
        if let Some(original) = &m.repeats {
            writeln!(w, "repeats  {}", s(original))?;
        }
        writeln!(
            w,
            "status   {}{}",
            m.effective_status().as_str(),
            m.status_detail.as_deref().map(|d| format!(" ({})", s(d))).unwrap_or_default()
        )?;
        writeln!(w, "started  {}   ended {}", s(&m.started_at), s(m.ended_at.as_deref().unwrap_or("-")))?;
        writeln!(
            w,
            "host     {} — {}, {}",
            s(&m.host.hostname),
            s(&m.host.cpu_summary()),
            m.host.memory_bytes.map(format_bytes).unwrap_or_default()
        )?;
        writeln!(w, "os       {} / {}", s(&m.host.os), s(&m.host.kernel))?;
        writeln!(
            w,
            "tool     {} {} {}",
            s(&m.tool.name),
            s(&m.tool.version),
            s(m.tool.git_commit.as_deref().unwrap_or("(no git commit)"))
        )?;
        writeln!(w, "command  {}", s(&shell_join(&m.argv)))?;
        let c = &m.counts;
        writeln!(
            w,
            "points   {} ({} measured, {} skipped, {} failed), {} rows",
            c.points, c.measured, c.skipped, c.failed, c.rows
        )?;
        if !self.metrics.is_empty() {
            writeln!(w)?;
            let mut tab =
                table(&["METRIC", "UNIT", "MEDIAN", "95% CI OF MEDIAN", "MIN", "MAX", "N", "BETTER"], &[2, 4, 5, 6]);
            for p in &self.metrics {
                tab.add_row(vec![
                    cell(&p.label()),
                    cell(&p.unit),
                    format_sig3(p.median),
                    p.ci.map(|(lo, hi)| format!("{}–{}", format_sig3(lo), format_sig3(hi)))
                        .unwrap_or_else(|| format!("n/a: {} sample(s), needs 6", p.samples)),
                    format_sig3(p.min),
                    format_sig3(p.max),
                    p.samples.to_string(),
                    p.better.as_str().into(),
                ]);
            }
            write_table(w, &tab)?;
        }
        if self.points.is_empty() && !self.metrics.is_empty() {
            return Ok(());
        }
        writeln!(w)?;
        let mut tab = table(
            &["POINT", "MEDIAN", "±RERUN", "±WITHIN", "GB/s moved", "GB/s once", "GFLOP/s", "CV", "N", "ROUNDS"],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        );
        let num = |v: Option<f64>| v.map(format_sig3).unwrap_or_else(|| "-".into());
        let mut one_round = false;
        let params: Vec<crate::vocab::rows::Point> = self.points.iter().map(|p| p.params()).collect();
        let labels = crate::vocab::labels::distinct_labels(&params.iter().collect::<Vec<_>>());
        for (p, label) in self.points.iter().zip(&labels) {
            let ci = match (p.interval(), p.ci_relative()) {
                (Some(ci), Some(r)) if ci.basis == Basis::Rounds => format!("±{:.1}%", r * 100.0),
                (Some(_), Some(r)) => {
                    one_round = true;
                    format!("±{:.1}%*", r * 100.0)
                }
                _ => "n/a".into(),
            };
            let within = p.within_relative().map_or("n/a".into(), |r| format!("±{:.1}%", r * 100.0));
            tab.add_row(vec![
                cell(label),
                format_seconds(p.median_seconds),
                ci,
                within,
                num(p.gbps_moved),
                num(p.gbps_copied),
                num(p.gflops.filter(|g| *g > 0.0)),
                format!("{:.2}%", p.summary.cv * 100.0),
                p.samples.to_string(),
                p.rounds.to_string(),
            ]);
        }
        write_table(w, &tab)?;
        writeln!(
            w,
            "±RERUN: 95 % of second runs' medians fall within it (rounds and the share between runs, {}); \
             ±WITHIN: how precisely this run pinned its own median (what --target-ci stops on)",
            crate::vocab::interval::rerun_model()
        )?;
        if !self.partitions.is_empty() {
            writeln!(w, "\nPartitions at once, added up (95 % interval: each partition's rounds and samples resampled, its medians summed):")?;
            let mut tab = table(
                &["POINT", "PARTITIONS", "TOTAL OPS/S", "95% CI", "TOTAL GB/S ONCE", "FASTEST/SLOWEST"],
                &[1, 2, 4, 5],
            );
            for a in &self.partitions {
                tab.add_row(vec![
                    cell(&a.point),
                    a.partitions.len().to_string(),
                    crate::vocab::units::format_sig3(a.total),
                    format!(
                        "{}–{}",
                        crate::vocab::units::format_sig3(a.total_low),
                        crate::vocab::units::format_sig3(a.total_high)
                    ),
                    a.total_gbps().map_or("-".into(), crate::vocab::units::format_sig3),
                    format!("{:.2}×", a.spread),
                ]);
            }
            write_table(w, &tab)?;
        }
        if one_round {
            writeln!(w, "* one round: the interval counts the spread of its samples only, not drift between runs")?;
        }
        let states: Vec<(String, &String)> =
            self.points.iter().zip(&labels).filter_map(|(p, l)| Some((p.power_states()?, l))).collect();
        if !states.is_empty() {
            writeln!(
                w,
                "\nRounds in two power states (a point's figure comes from its full-clock rounds; capped: a \
                 slowing throttle reason, or a clock over {:.0} % below its fastest round):",
                crate::vocab::telemetry::CAPPED_CLOCK_GAP * 100.0
            )?;
            for (words, label) in states {
                writeln!(w, "  {}: {}", s(label), s(&words))?;
            }
        }
        let wide: Vec<(&PointStat, &String)> =
            self.points.iter().zip(&labels).filter(|(p, _)| p.ci_wide_why.is_some()).collect();
        if !wide.is_empty() {
            writeln!(w, "\nIntervals wider than ±{:.0} %, and why:", crate::analysis::summary::WIDE * 100.0)?;
            for (p, label) in wide {
                let why = p.ci_wide_why.as_ref().expect("filtered above");
                let r = p.ci_relative().unwrap_or(f64::NAN) * 100.0;
                writeln!(w, "  {} ±{r:.1}%: {}", s(label), s(&why.to_string()))?;
            }
        }
        Ok(())
    }
}
