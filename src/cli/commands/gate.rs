//! `benchbook fleet gate NAME`: gate this node (a short suite, judged
//! against its fleet, its own history and its device's published floors),
//! act in Slurm when asked, and archive the verdict. Made to run as Slurm's
//! `HealthCheckProgram`, in a prolog, or by hand. Exit codes: 0 pass,
//! 1 bad, 3 not judged (never a reason to drain), 2 a usage error.

use std::io;
use std::path::PathBuf;

use clap::Parser;
use serde::Serialize;

use crate::analysis::fleet::gate::{collect::Window, floors, GateJudgement, GatePoint, GateRule, Verdict};
use crate::archive::Archive;
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::cli::progress::{listener, Bar};
use crate::gate::slurm::{self, Action};
use crate::gate::{GateOutcome, GateSpec};

/// The suite when none is given, on a node without GPUs: what finds a
/// slow CPU node here in a few seconds (two sizes, one thread, half a
/// second a point).
pub const DEFAULT_SUITE: &[&str] = &["memcpy", "--sizes", "4M,64M", "--threads", "1", "--max-time", "0.5"];

/// The suite when none is given, on a node whose NVML sees GPUs: on every
/// GPU a device copy and pinned and pageable h2d/d2h at 256 MiB (where
/// DCGM's and NHC's floors apply) and a bf16 8192³ GEMM (judged on its
/// full-clock rounds), 0.3 s a point: 6 points a GPU, so about
/// 8 × 6 × 0.3 s = 14 s a pass on an 8-GPU node, 29 s with the retest.
pub const GPU_SUITE: &[&str] = &[
    "memcpy",
    "h2d",
    "d2h",
    "gemm",
    "--backend",
    "cuda",
    "--sizes",
    "256M",
    "--gpu-shapes",
    "8192",
    "--gpu-dtypes",
    "bf16",
    "--max-time",
    "0.3",
];

/// The default suite for this node: [`GPU_SUITE`] where NVML sees a GPU,
/// else [`DEFAULT_SUITE`].
pub fn default_suite() -> &'static [&'static str] {
    match crate::session::gpu_health() {
        Ok(gpus) if !gpus.is_empty() => GPU_SUITE,
        _ => DEFAULT_SUITE,
    }
}

#[derive(Debug, clap::Args)]
pub struct GateArgs {
    /// The fleet's name, as given to `run --fleet`.
    pub fleet: String,
    /// This node's name (default: Slurm's SLURMD_NODENAME, else the host name).
    #[arg(long, value_name = "NAME")]
    pub node: Option<String>,
    /// δ: a fault's whole ratio interval lies below 1 − δ (`5%` or `0.05`).
    #[arg(long, default_value = "5%", value_parser = crate::cli::parse_fraction)]
    pub threshold: f64,
    /// The gate's error rate, split over its points (each interval is at
    /// 1 − α / points).
    #[arg(long, default_value = "1%", value_parser = crate::cli::parse_fraction)]
    pub alpha: f64,
    /// A floors file replacing the built-in one (data/reference/floors.toml).
    #[arg(long, value_name = "FILE")]
    pub floors: Option<PathBuf>,
    /// Call a failing first pass bad without measuring it again.
    #[arg(long)]
    pub no_retest: bool,
    /// Drain this node when it is bad (`scontrol update … State=DRAIN Reason=…`).
    #[arg(long)]
    pub drain: bool,
    /// Resume this node when it passes, if benchbook drained it (its reason
    /// starts with `benchbook:`); other drains are left alone.
    #[arg(long)]
    pub resume_on_pass: bool,
    /// scontrol's path (default: on PATH, else /usr/bin, /usr/local/bin, /opt/slurm/bin).
    #[arg(long, value_name = "PATH")]
    pub scontrol: Option<PathBuf>,
    /// Measure only while no other `--take-turns` gate or run on this
    /// archive measures (nodes sharing CPUs).
    #[arg(long)]
    pub take_turns: bool,
    /// The passive checks, as for `fleet health`.
    #[command(flatten)]
    pub checks: super::health::HealthArgs,
    /// A tool to run and hold against a fixed floor, as NHC runs
    /// nccl-tests and perftest: FORMAT:GBPS:COMMAND. Its output is
    /// imported as FORMAT (an `import` format) into a run of the fleet, and
    /// each curve's figure at its largest size (bus bandwidth for a
    /// collective) must reach GBPS (10^9 bytes/s); below it twice, the
    /// node is bad. Repeatable; each run gets 50 s. NHC's 8-GPU check:
    /// --tool-check 'nccl-tests:460:all_reduce_perf -b 16G -e 16G -g 8'
    #[arg(long = "tool-check", value_name = "FORMAT:GBPS:COMMAND")]
    pub tool_checks: Vec<String>,
    /// Also write the verdict as Prometheus metrics into DIR (node_exporter's
    /// textfile collector directory): DIR/benchbook_gate.prom.
    #[arg(long, value_name = "DIR")]
    pub textfile: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// The suite: `benchbook run` arguments after `--` (default, where NVML
    /// sees GPUs: memcpy h2d d2h gemm --backend cuda --sizes 256M
    /// --gpu-shapes 8192 --gpu-dtypes bf16 --max-time 0.3; else memcpy
    /// --sizes 4M,64M --threads 1 --max-time 0.5).
    #[arg(last = true, value_name = "RUN ARGS")]
    pub suite: Vec<String>,
}

pub const GATE_HELP: &str = "\
Each point of this node's fresh pass is judged against:
  its fleet     the median of the other nodes' latest 3 runs; z on the spread
                of their single runs; a fault when z < -3.5 and the whole
                interval of the ratio lies below 1 - δ;
  its floor     a published floor for its device (data/reference/floors.toml:
                DCGM's and Azure NHC's); a fault when the whole interval lies
                below it;
  its history   its own last 5 runs, only where fewer than 3 other nodes
                measured the point.
A failing pass is measured again, and only points that fail both times make
the node bad. Too little history, an unreadable archive or floors file, or a
suite that cannot run gives `not judged`, never `bad`. Every verdict is
archived as a run (label gate-verdict) beside the passes (label gate).

Exit: 0 pass, 1 bad, 3 not judged, 2 usage. The last line is the reason:
  benchbook: memcpy copy 64 MiB 1T at 0.79× fleet (99.50 % CI 0.76–0.83), below 0.95

As Slurm's HealthCheckProgram (Slurm gives it no PATH, only SLURMD_NODENAME):
  #!/bin/sh
  exec /usr/local/bin/benchbook --archive /shared/benchbook fleet gate nightly \\
      --drain --resume-on-pass -- h2d d2h memcpy --backend cuda --sizes 256M --max-time 0.5

Examples:
  benchbook fleet gate nightly                     gate this node, report only
  benchbook fleet gate nightly --drain --resume-on-pass --take-turns";

/// What `fleet gate` did.
#[derive(Debug, Serialize)]
pub struct GateOutput {
    #[serde(flatten)]
    pub outcome: GateOutcome,
    pub action: Option<Action>,
}

impl GateOutput {
    pub fn exit_code(&self) -> u8 {
        self.outcome.verdict.code()
    }
}

/// The `--tool-check` specs, each naming a format `import` reads.
fn tool_checks(specs: &[String]) -> std::result::Result<Vec<crate::vocab::gate::ToolCheck>, String> {
    let formats: Vec<String> = crate::import::formats().iter().map(|f| f.name().to_string()).collect();
    specs
        .iter()
        .map(|spec| {
            let t = crate::vocab::gate::ToolCheck::parse(spec).map_err(|e| format!("--tool-check: {e}"))?;
            if !formats.contains(&t.format) {
                return Err(format!(
                    "--tool-check: `{}` is not an import format (one of: {})",
                    t.format,
                    formats.join(", ")
                ));
            }
            Ok(t)
        })
        .collect()
}

/// The suite's configuration from `run` arguments.
fn suite(args: &[String]) -> std::result::Result<crate::bench::BenchConfig, String> {
    #[derive(Parser)]
    #[command(name = "suite", no_binary_name = true)]
    struct Suite {
        #[command(flatten)]
        run: crate::cli::RunArgs,
    }
    let given: Vec<String> =
        if args.is_empty() { default_suite().iter().map(|s| s.to_string()).collect() } else { args.to_vec() };
    let s = Suite::try_parse_from(&given).map_err(|e| format!("the suite `{}`: {}", given.join(" "), e.kind()))?;
    if s.run.sub.is_some() {
        return Err("the suite is a sweep (`memcpy --sizes 4M`), not `run exec`".into());
    }
    crate::cli::config::resolve_config(&s.run).map_err(|e| format!("the suite `{}`: {e}", given.join(" ")))
}

/// Gate this node.
pub fn gate(archive: &Archive, a: &GateArgs, quiet: bool) -> GateOutput {
    // The suite's runs join the fleet, on this node.
    std::env::set_var(crate::host::placement::FLEET_ENV, &a.fleet);
    if let Some(n) = &a.node {
        std::env::set_var("SLURMD_NODENAME", n);
    }
    let rule = GateRule { threshold: a.threshold, alpha: a.alpha, ..GateRule::default() };
    let floors_name = a.floors.as_ref().map(|p| p.display().to_string());
    let prepared = (|| {
        crate::host::placement::check_fleet_name(&a.fleet).map_err(|e| format!("fleet `{}`: {e}", a.fleet))?;
        let floors = floors::load(a.floors.as_deref()).map_err(|e| format!("the floors: {e}"))?;
        let specs = crate::analysis::specs::SpecBook::load(&archive.root).map_err(|e| format!("the specs: {e}"))?;
        let expected = a.checks.expected().map_err(|e| e.to_string())?;
        let tools = tool_checks(&a.tool_checks)?;
        Ok::<_, String>((suite(&a.suite)?, floors, specs, (expected, tools)))
    })();
    let outcome = match prepared {
        Err(why) => crate::gate::refused(&a.fleet, &why),
        Ok((suite, floors, specs, (expected, tools))) => {
            let spec = GateSpec {
                fleet: a.fleet.clone(),
                suite,
                rule,
                window: Window::default(),
                floors,
                floors_path: floors_name.clone(),
                retest: !a.no_retest,
                kernel_log: a.checks.kernel_log.clone(),
                expected,
                tools,
            };
            let turn =
                if a.take_turns { crate::cli::commands::run::take_turn(archive, quiet).map(Some) } else { Ok(None) };
            match turn {
                Err(e) => crate::gate::refused(&a.fleet, &format!("waiting for its turn: {e}")),
                Ok(_turn) => {
                    let bar = Bar::unless(quiet || a.json);
                    let out = crate::gate::gate(archive, &spec, &specs, listener(&bar));
                    if let Some(b) = &bar {
                        b.finish();
                    }
                    out
                }
            }
        }
    };
    let action = (a.drain || a.resume_on_pass)
        .then(|| {
            let node = if outcome.node.is_empty() { crate::gate::this_node() } else { outcome.node.clone() };
            slurm::act(
                &slurm::scontrol(a.scontrol.as_deref()),
                &node,
                outcome.verdict,
                &outcome.reason,
                a.drain,
                a.resume_on_pass,
            )
        })
        .flatten();
    let mut out = GateOutput { outcome, action };
    match crate::gate::write_verdict(
        archive,
        &rule,
        floors_name.as_deref(),
        &out.outcome,
        out.action.as_ref().map(|x| x.to_string()),
    ) {
        Ok(id) => out.outcome.verdict_run = Some(id),
        Err(e) => out.outcome.damaged.push(("verdict".into(), format!("the verdict could not be archived: {e}"))),
    }
    if let Some(dir) = &a.textfile {
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64());
        let text = super::textfile::gate_metrics(&out.outcome, now);
        if let Err(e) = super::textfile::write(dir, "benchbook_gate.prom", &text) {
            out.outcome.damaged.push(("textfile".into(), format!("{}: {e}", dir.display())));
        }
    }
    out
}

fn line_cell(a: Option<&crate::analysis::fleet::gate::Against>) -> (String, String) {
    match a {
        None => ("–".into(), String::new()),
        Some(a) => (
            format!("{:.3}{}", a.ratio, if a.below { " ✗" } else { "" }),
            format!("{:.3}–{:.3}", a.ratio_low, a.ratio_high),
        ),
    }
}

fn points_table(t: &mut Term<'_>, j: &GateJudgement) -> io::Result<()> {
    let mut tab = table(&["POINT", "RUNS", "× FLEET", "INTERVAL", "Z", "× HISTORY", "× FLOOR", "FAULT"], &[1, 2, 4]);
    for p in &j.points {
        let (fleet, fleet_ci) = line_cell(p.fleet.as_ref());
        let z = p.fleet.as_ref().and_then(|a| a.z).map_or(String::new(), |z| format!("{z:.1}"));
        let (hist, _) = line_cell(p.history.as_ref());
        let (floor, _) = line_cell(p.floor.as_ref().map(|f| &f.1));
        tab.add_row(vec![cell(&p.point), p.runs.to_string(), fleet, fleet_ci, z, hist, floor, fault_word(p).into()]);
    }
    write_table(&mut *t.out, &tab)
}

fn fault_word(p: &GatePoint) -> &'static str {
    match p.fault {
        None if !p.judged() => "not judged",
        None => "",
        Some(line) => line.as_str(),
    }
}

impl Render for GateOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let o = &self.outcome;
        let s = terminal_safe;
        let word = match o.verdict {
            Verdict::Pass => "PASS",
            Verdict::Bad => "BAD",
            Verdict::NotJudged => "NOT JUDGED",
        };
        writeln!(
            t.out,
            "gate {} of fleet {}: {word} ({} other nodes, {} earlier runs of this node)",
            s(&o.node),
            s(&o.fleet),
            o.peers,
            o.history_runs
        )?;
        crate::cli::commands::health::render_health(t, o.health.as_ref(), o.health_unread.as_deref())?;
        for r in &o.tools {
            let runs = if r.runs.is_empty() { String::new() } else { format!(" (run {})", r.runs.join(", then ")) };
            writeln!(t.out, "tool check {}: {}{runs}", r.verdict.as_str(), s(&r.reason))?;
            for f in &r.figures {
                let size = f.size_bytes.map(crate::vocab::units::format_bytes).unwrap_or_default();
                writeln!(t.out, "  {} {size}: {:.1} {}", s(&f.curve), f.gbps, f.axis)?;
            }
        }
        for (k, (name, j)) in [("first pass", &o.first), ("retest", &o.retest)].into_iter().enumerate() {
            if let Some(j) = j {
                writeln!(
                    t.out,
                    "{name} (run {}), intervals at {}:",
                    o.passes.get(k).map_or("?".into(), |r| s(r)),
                    crate::vocab::units::format_confidence(j.confidence)
                )?;
                points_table(t, j)?;
            }
        }
        for c in &o.own_changes {
            writeln!(t.out, "own history: {}", s(c))?;
        }
        if let Some(a) = &self.action {
            writeln!(t.out, "slurm: {} {}", s(&o.node), s(&a.to_string()))?;
        }
        if let Some(v) = &o.verdict_run {
            writeln!(t.err, "verdict archived as run {}", s(v))?;
        }
        for (run, why) in &o.damaged {
            writeln!(t.err, "left out: {}: {}", s(run), s(why))?;
        }
        writeln!(t.out, "{}", s(&o.reason))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_default_suites_resolve_to_the_benchmarks_they_name() {
        let args = |s: &[&str]| s.iter().map(|a| a.to_string()).collect::<Vec<String>>();
        let gpu = suite(&args(GPU_SUITE)).unwrap();
        let names: Vec<&str> = gpu.benches.iter().map(|b| b.name()).collect();
        assert_eq!(names, ["memcpy", "h2d", "d2h", "gemm"]);
        assert_eq!(gpu.memcpy_sizes, [256 << 20]);
        let cpu = suite(&args(DEFAULT_SUITE)).unwrap();
        assert_eq!(cpu.memcpy_sizes, [4 << 20, 64 << 20]);
    }
}
