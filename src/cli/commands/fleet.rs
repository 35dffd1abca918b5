//! `benchbook fleet check NAME`: every run of fleet NAME (`run --fleet
//! NAME`, one or more per node), each node judged against the others on
//! every point they measured ([`crate::analysis::fleet`]). Prints the
//! nodes ranked slowest first, one sentence per slow node, and a JSON drain
//! list with `--json`; exits 1 when a node is slow (`--fail-on slow`, the
//! default), also when a run could not be read (`any`), or never.

use std::io;

use serde::Serialize;

use crate::analysis::fleet::{gather, Fleet, MIN_NODES, RUNS_ADVISED};
use crate::archive::Archive;
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::error::Result;

/// What fails `fleet check`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// A node slower than its fleet.
    Slow,
    /// A slow node, or a run of the fleet that could not be read.
    Any,
    /// Never (report only).
    Never,
}

#[derive(Debug, clap::Subcommand)]
pub enum FleetCommand {
    /// Judge every node of a fleet against the others; exit 1 when one is slow.
    #[command(after_help = CHECK_HELP)]
    Check {
        /// The fleet's name, as given to `run --fleet`.
        fleet: String,
        /// δ: a node is slow only when the whole interval of its ratio to
        /// the fleet lies below 1 − δ (`5%` or `0.05`).
        #[arg(long, default_value = "5%", value_parser = crate::cli::parse_fraction)]
        threshold: f64,
        #[arg(long, value_enum, default_value_t = FailOn::Slow)]
        fail_on: FailOn,
        /// Print JSON (the judgement and a drain list) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Gate this node: a short suite judged against its fleet, its own
    /// history and its device's published floors; drain or resume it in
    /// Slurm when asked (exit 0 pass, 1 bad, 3 not judged).
    #[command(after_help = super::gate::GATE_HELP)]
    Gate(super::gate::GateArgs),
    /// This node's GPUs' own health, read without running anything (ECC,
    /// row remapping, PCIe link, NVLinks, fabric, throttle reasons): exit 0
    /// healthy, 1 a GPU to drain or reset, 3 nothing readable.
    #[command(after_help = super::health::health_help())]
    Health {
        /// Print JSON (every GPU's findings, with each rule's source).
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        checks: super::health::HealthArgs,
        /// Also write the findings as Prometheus metrics into DIR (node_exporter's
        /// textfile collector directory): DIR/benchbook_health.prom.
        #[arg(long, value_name = "DIR")]
        textfile: Option<std::path::PathBuf>,
    },
    /// Write the fleet's report: ranked nodes, one chart per point, the
    /// drain list (Markdown, HTML, SVG).
    #[command(after_help = REPORT_HELP)]
    Report {
        /// The fleet's name, as given to `run --fleet`.
        fleet: String,
        /// δ, as for `fleet check`.
        #[arg(long, default_value = "5%", value_parser = crate::cli::parse_fraction)]
        threshold: f64,
        /// Where the report goes (default: reports/fleet-NAME).
        #[arg(long, value_name = "DIR")]
        out: Option<std::path::PathBuf>,
        #[arg(long, value_enum, default_value_t = crate::report::Format::Both)]
        format: crate::report::Format,
        /// Also write PNG charts.
        #[arg(long)]
        png: bool,
        /// A folder whose files override the built-in templates (fleet.md).
        #[arg(long, value_name = "DIR")]
        templates: Option<std::path::PathBuf>,
    },
}

const REPORT_HELP: &str = "\
Examples:
  benchbook fleet report nightly                  reports/fleet-nightly/report.{md,html}
  benchbook fleet report nightly --threshold 10%  judge at δ = 10 %";

/// What `fleet report` wrote.
#[derive(Debug, Serialize)]
pub struct FleetReportOutput {
    pub files: Vec<std::path::PathBuf>,
    pub drain: Vec<String>,
}

impl Render for FleetReportOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for f in &self.files {
            writeln!(t.out, "wrote {}", crate::cli::print::safe_path(f))?;
        }
        if !self.drain.is_empty() {
            writeln!(t.out, "slow: {}", terminal_safe(&self.drain.join(", ")))?;
        }
        Ok(())
    }
}

/// `fleet report`: judge fleet `name` and write its report.
pub fn report(
    archive: &Archive,
    name: &str,
    threshold: f64,
    out: Option<std::path::PathBuf>,
    opts: &crate::report::ReportOptions,
) -> Result<FleetReportOutput> {
    let fleet = gather(archive, name, threshold)?;
    let r = crate::report::fleet::build_fleet(&fleet);
    let out = out.unwrap_or_else(|| std::path::PathBuf::from("reports").join(format!("fleet-{name}")));
    Ok(FleetReportOutput { files: crate::report::fleet::write_fleet(&r, &out, opts)?, drain: fleet.drain })
}

const CHECK_HELP: &str = "\
How a node is judged, per point (benchmark, operation, size, threads):
  its median speed against the fleet centre (the median of node medians);
  modified z = (node - centre) / (1.4826 MAD); a ratio interval from a
  hierarchical bootstrap (peers from 5 up, then each node's runs, rounds
  and samples), Bonferroni-corrected over
  every node and point. Slow: z < -3.5 and the whole interval below 1 - δ.

Record the suite 3 times on every node (a run that was unlucky as a whole
cannot otherwise be told from a slow node); --take-turns when the nodes
share CPUs.

Examples:
  for pass in 1 2 3; do
    srun -N4 --ntasks-per-node=1 benchbook run memcpy --sizes 4M,64M --fleet nightly
  done
  benchbook fleet check nightly
  benchbook fleet check nightly --json --fail-on never | jq .drain";

/// A judged fleet and what fails the check.
#[derive(Debug, Serialize)]
pub struct FleetOutput {
    #[serde(flatten)]
    pub fleet: Fleet,
    pub fail_on: FailOn,
}

impl FleetOutput {
    pub fn exit_code(&self) -> u8 {
        let f = &self.fleet;
        match self.fail_on {
            FailOn::Slow => u8::from(!f.drain.is_empty() || !f.slow_links.is_empty() || f.nothing_judged()),
            FailOn::Any => {
                u8::from(!f.drain.is_empty() || !f.slow_links.is_empty() || f.nothing_judged() || !f.damaged.is_empty())
            }
            FailOn::Never => 0,
        }
    }
}

/// Gather fleet `name`'s runs and judge its nodes.
pub fn check(archive: &Archive, name: &str, threshold: f64, fail_on: FailOn) -> Result<FleetOutput> {
    Ok(FleetOutput { fleet: gather(archive, name, threshold)?, fail_on })
}

impl Render for FleetOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let s = terminal_safe;
        let f = &self.fleet;
        let j = &f.judgement;
        writeln!(
            t.out,
            "fleet {}: {} runs on {} nodes, {} points judged ({} node × point tests share a {} % error rate)",
            s(&f.fleet),
            f.runs,
            f.nodes_seen.len(),
            j.points.iter().map(|p| &p.point).collect::<std::collections::BTreeSet<_>>().len(),
            j.tests,
            j.alpha * 100.0
        )?;
        let mut tab = table(
            &["NODE", "VERDICT", "WORST POINT", "RATIO", "INTERVAL", "CONFIDENCE", "Z", "SLOW POINTS"],
            &[3, 4, 5, 6, 7],
        );
        for n in &j.nodes {
            let w = &n.worst;
            tab.add_row(vec![
                cell(&n.node),
                if n.slow { "SLOW".into() } else { "ok".into() },
                cell(&w.point),
                format!("{:.3}", w.ratio),
                format!("{:.3}–{:.3}", w.ratio_low, w.ratio_high),
                crate::vocab::units::format_confidence(w.confidence),
                format!("{:.1}", w.z),
                format!("{} of {}", n.slow_points, n.points),
            ]);
        }
        write_table(&mut *t.out, &tab)?;
        for n in j.nodes.iter().filter(|n| n.slow) {
            let w = &n.worst;
            writeln!(
                t.out,
                "- {} {} is {:.2}× the fleet ({} CI {:.2}–{:.2}), z = {:.1}",
                s(&n.node),
                s(&w.point),
                w.ratio,
                crate::vocab::units::format_confidence(w.confidence),
                w.ratio_low,
                w.ratio_high,
                w.z
            )?;
        }
        for l in &f.links {
            let suspects = l.links.iter().filter(|x| x.suspect).count();
            writeln!(
                t.out,
                "links at {} (run {}): {} links, median {:.3} GB/s, {} below {:.3} GB/s",
                crate::vocab::units::format_bytes(l.size_bytes),
                s(&l.run_id),
                l.links.len(),
                l.centre_gbps,
                suspects,
                l.floor_gbps
            )?;
            for r in &l.retests {
                writeln!(
                    t.out,
                    "  retest: {} against {}: {:.3} GB/s, {}",
                    s(&r.node),
                    s(&r.good),
                    r.gbps,
                    r.verdict.as_str()
                )?;
            }
            for b in &l.blamed {
                writeln!(t.out, "- {} {} is slow (second pass)", b.what.as_str(), s(&b.name))?;
            }
            for c in &l.cleared {
                writeln!(t.out, "  cleared: {}: fine when measured again", s(c))?;
            }
            for u in &l.unresolved {
                writeln!(
                    t.out,
                    "  unresolved: {}: no mostly good node to retest against, or its retest gave no number",
                    s(u)
                )?;
            }
        }
        if f.nothing_judged() {
            writeln!(
                t.out,
                "nothing was judged: no point was measured on {MIN_NODES} nodes or more, and no link sweep was found"
            )?;
        } else if f.drain.is_empty() {
            writeln!(
                t.out,
                "no node is slower than the fleet by more than {:.0} % with this confidence",
                f.threshold * 100.0
            )?;
        }
        let fewest = f.fewest_runs();
        if !f.nodes_seen.is_empty() && fewest < RUNS_ADVISED {
            writeln!(
                t.err,
                "note: some nodes have {fewest} run(s); with fewer than {RUNS_ADVISED} a run that was unlucky \
                 as a whole (other tenants, page placement) cannot be told from a slow node: \
                 record the suite {RUNS_ADVISED} times"
            )?;
        }
        if !j.unjudged.is_empty() {
            writeln!(t.err, "not judged (fewer than {MIN_NODES} nodes measured them): {}", s(&j.unjudged.join(", ")))?;
        }
        for (run, why) in &f.damaged {
            writeln!(t.err, "left out: run {} could not be read: {}", s(run), s(why))?;
        }
        Ok(())
    }
}
