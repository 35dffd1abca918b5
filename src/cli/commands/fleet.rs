//! `benchbook fleet check NAME`: every run of fleet NAME (`run --fleet
//! NAME`, one or more per node), each node judged against the others on
//! every point they measured ([`crate::analysis::fleet`]). Prints the
//! nodes ranked slowest first, one sentence per slow node, and a JSON drain
//! list with `--json`; exits 1 when a node is slow (`--fail-on slow`, the
//! default), also when a run could not be read (`any`), or never.

use std::collections::BTreeMap;
use std::io;

use serde::Serialize;

use crate::analysis::fleet::{judge, FleetJudgement, Rule, MIN_NODES};
use crate::archive::Archive;
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::error::{Error, Result};
use crate::vocab::rows::Status;

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
}

const CHECK_HELP: &str = "\
How a node is judged, per point (benchmark, operation, size, threads):
  its median speed against the fleet centre (the median of node medians);
  modified z = (node - centre) / (1.4826 MAD); a ratio interval from a
  hierarchical bootstrap (nodes, then samples), Bonferroni-corrected over
  every node and point. Slow: z < -3.5 and the whole interval below 1 - δ.

Examples:
  srun -N4 --ntasks-per-node=1 benchbook run memcpy --sizes 16M --fleet nightly
  benchbook fleet check nightly
  benchbook fleet check nightly --json --fail-on never | jq .drain";

#[derive(Debug, Serialize)]
pub struct FleetOutput {
    pub fleet: String,
    pub threshold: f64,
    pub runs: usize,
    /// Runs per node.
    pub nodes_seen: BTreeMap<String, usize>,
    #[serde(flatten)]
    pub judgement: FleetJudgement,
    /// The slow nodes: what a scheduler drains.
    pub drain: Vec<String>,
    /// Runs of the fleet that could not be read, and why.
    pub damaged: Vec<(String, String)>,
    pub fail_on: FailOn,
}

impl FleetOutput {
    pub fn exit_code(&self) -> u8 {
        match self.fail_on {
            FailOn::Slow => u8::from(!self.drain.is_empty()),
            FailOn::Any => u8::from(!self.drain.is_empty() || !self.damaged.is_empty()),
            FailOn::Never => 0,
        }
    }
}

/// Gather fleet `name`'s runs and judge its nodes.
pub fn check(archive: &Archive, name: &str, threshold: f64, fail_on: FailOn) -> Result<FleetOutput> {
    let mut samples: BTreeMap<String, BTreeMap<String, Vec<f64>>> = BTreeMap::new();
    let (mut runs, mut nodes_seen, mut damaged) = (0, BTreeMap::new(), Vec::new());
    for run in archive.runs()? {
        let Ok(manifest) = run.manifest() else { continue };
        if manifest.fleet() != Some(name) {
            continue;
        }
        // A damaged run is named and left out; it never stops the check.
        let rows = match run.rows() {
            Ok(rows) => rows,
            Err(e) => {
                damaged.push((run.id.clone(), e.to_string()));
                continue;
            }
        };
        runs += 1;
        let node = manifest.node().to_string();
        *nodes_seen.entry(node.clone()).or_insert(0) += 1;
        for r in rows.iter().filter(|r| r.status == Status::Measured) {
            // Speed: operations per second, so higher is better for every point.
            let (Some(s), Some(n)) = (r.seconds, r.iterations) else { continue };
            if s > 0.0 && n > 0 {
                samples.entry(r.params.label()).or_default().entry(node.clone()).or_default().push(n as f64 / s);
            }
        }
    }
    if runs == 0 {
        return Err(Error::config(
            "FLEET",
            format!(
                "no run in {} belongs to fleet `{name}`; record some with `benchbook run ... --fleet {name}`",
                archive.root.display()
            ),
        ));
    }
    let judgement = judge(&samples, &Rule { threshold, ..Rule::default() });
    let drain = judgement.nodes.iter().filter(|n| n.slow).map(|n| n.node.clone()).collect();
    Ok(FleetOutput { fleet: name.into(), threshold, runs, nodes_seen, judgement, drain, damaged, fail_on })
}

impl Render for FleetOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let s = terminal_safe;
        let j = &self.judgement;
        writeln!(
            t.out,
            "fleet {}: {} runs on {} nodes, {} points judged ({} node × point tests share a {} % error rate)",
            s(&self.fleet),
            self.runs,
            self.nodes_seen.len(),
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
                format!("{:.2} %", w.confidence * 100.0),
                format!("{:.1}", w.z),
                format!("{} of {}", n.slow_points, n.points),
            ]);
        }
        write_table(&mut *t.out, &tab)?;
        for n in j.nodes.iter().filter(|n| n.slow) {
            let w = &n.worst;
            writeln!(
                t.out,
                "- {} {} is {:.2}× the fleet ({:.2} % CI {:.2}–{:.2}), z = {:.1}",
                s(&n.node),
                s(&w.point),
                w.ratio,
                w.confidence * 100.0,
                w.ratio_low,
                w.ratio_high,
                w.z
            )?;
        }
        if self.drain.is_empty() {
            writeln!(
                t.out,
                "no node is slower than the fleet by more than {:.0} % with this confidence",
                self.threshold * 100.0
            )?;
        }
        if !j.unjudged.is_empty() {
            writeln!(t.err, "not judged (fewer than {MIN_NODES} nodes measured them): {}", s(&j.unjudged.join(", ")))?;
        }
        for (run, why) in &self.damaged {
            writeln!(t.err, "left out: run {} could not be read: {}", s(run), s(why))?;
        }
        Ok(())
    }
}
