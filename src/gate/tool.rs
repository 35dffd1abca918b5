//! `fleet gate --tool-check`: a tool the gate runs and holds against a
//! fixed floor, as Azure's NHC runs nccl-tests (`check_nccl_allreduce
//! 460.0 … 16G`) and perftest with GPUDirect (`check_ib_bw_gdr 375`). The
//! tool's output is imported as a run of the fleet on this node (label
//! `gate-tool`), so it is archived, verifiable and reportable like any
//! import, and each of its curves' figures at the largest size is held
//! against the floor. A figure below it is measured again before the node
//! is called bad; a tool that cannot start, fails, runs past its time or
//! prints nothing its format reads is not judged, never bad.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{this_node, GateOutcome, GateSpec};
use crate::analysis::fleet::gate::{reason, Verdict};
use crate::archive::Archive;
use crate::vocab::gate::ToolCheck;
use crate::vocab::progress::Progress;

/// How long one run of a tool may take before it is stopped (Slurm gives
/// a whole health check 60 s).
pub const TOOL_TIMEOUT: Duration = Duration::from_secs(50);

/// One curve's figure at its largest size.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ToolFigure {
    /// The series' name (`all_reduce out-of-place`).
    pub curve: String,
    pub size_bytes: Option<u64>,
    pub gbps: f64,
    /// What the figure counts (`GB/s (bus bandwidth)`).
    pub axis: String,
}

/// What one tool check found.
#[derive(Debug, Clone, Serialize)]
pub struct ToolResult {
    pub check: ToolCheck,
    /// Its imported runs: the first, then the retest.
    pub runs: Vec<String>,
    /// The last run's figures.
    pub figures: Vec<ToolFigure>,
    pub verdict: Verdict,
    /// One line: the figure below the floor, or why it was not judged.
    pub reason: String,
}

/// The gate's tool checks, then, unless one is bad, the rest of the gate
/// (`suite`). A tool below its floor twice makes the gate bad with its
/// figure as the reason, and `suite` does not run; a pass is only a pass
/// of everything asked, so a tool that could not be judged leaves the node
/// not judged.
pub(super) fn then_suite(
    archive: &Archive,
    spec: &GateSpec,
    progress: &dyn Progress,
    suite: impl FnOnce() -> GateOutcome,
) -> GateOutcome {
    let tools: Vec<ToolResult> = spec.tools.iter().map(|t| check(archive, t, progress)).collect();
    let mut out = match tools.iter().find(|t| t.verdict == Verdict::Bad) {
        Some(t) => GateOutcome {
            verdict: Verdict::Bad,
            reason: format!("{} {}", reason::PREFIX, t.reason),
            ..GateOutcome::not_judged(&spec.fleet, &this_node(), Vec::new(), "")
        },
        None => suite(),
    };
    if let Some(t) = tools.iter().find(|t| t.verdict == Verdict::NotJudged) {
        match out.verdict {
            Verdict::Pass => out.reason = reason::not_judged(&t.reason),
            Verdict::NotJudged => out.reason = format!("{}; {}", out.reason, t.reason),
            Verdict::Bad => {}
        }
        if out.verdict == Verdict::Pass {
            out.verdict = Verdict::NotJudged;
        }
    }
    out.tools = tools;
    out
}

/// Run `tool` (and once more when a figure is below its floor), import
/// each output, and judge it.
pub fn check(archive: &Archive, tool: &ToolCheck, progress: &dyn Progress) -> ToolResult {
    let mut result = ToolResult {
        check: tool.clone(),
        runs: Vec::new(),
        figures: Vec::new(),
        verdict: Verdict::NotJudged,
        reason: String::new(),
    };
    for attempt in 0..2 {
        let figures = match measure(archive, tool, progress) {
            Ok((run, figures)) => {
                result.runs.push(run);
                figures
            }
            Err(why) => {
                let again = if attempt == 1 { "its retest: " } else { "" };
                result.reason = format!("{}: {again}{why}", tool.name());
                result.verdict = Verdict::NotJudged;
                return result;
            }
        };
        result.figures = figures;
        let low = result.figures.iter().filter(|f| f.gbps < tool.floor_gbps).min_by(|a, b| a.gbps.total_cmp(&b.gbps));
        match low {
            None => {
                result.verdict = Verdict::Pass;
                result.reason = format!("{}: every curve reaches {} GB/s", tool.name(), tool.floor_gbps);
                return result;
            }
            Some(f) => {
                result.verdict = Verdict::Bad;
                let size =
                    f.size_bytes.map(|s| format!(" at {}", crate::vocab::units::format_bytes(s))).unwrap_or_default();
                let twice = if attempt == 1 { ", twice" } else { "" };
                result.reason = format!(
                    "{} {}: {:.1} {}{size}, below the {} GB/s floor{twice}",
                    tool.name(),
                    f.curve,
                    f.gbps,
                    f.axis,
                    tool.floor_gbps
                );
            }
        }
    }
    result
}

/// One run of the tool, imported: its run id and its figures.
fn measure(
    archive: &Archive,
    tool: &ToolCheck,
    progress: &dyn Progress,
) -> std::result::Result<(String, Vec<ToolFigure>), String> {
    let dir = std::env::temp_dir().join(format!(
        "benchbook-tool-{}-{}",
        std::process::id(),
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let out = run(tool, &dir);
    let imported = out.and_then(|log| {
        crate::session::import(archive, &[log], Some(&tool.format), Some("gate-tool"), progress).map_err(|e| {
            // The output's temporary file means nothing to the reader.
            let e = e.to_string().replace(&format!("{}/", dir.display()), "");
            format!("its output is not {} output: {e}", tool.format)
        })
    });
    let _ = std::fs::remove_dir_all(&dir);
    let (result, _) = imported?;
    let frame = result.run.dataframe().map_err(|e| format!("its run: {e}"))?;
    let stats = crate::analysis::point_stats(polars::prelude::IntoLazy::lazy(frame)).map_err(|e| e.to_string())?;
    let figures = figures(&stats);
    if figures.is_empty() {
        return Err(format!("its output has no bandwidth figure (run {})", result.run.id));
    }
    Ok((result.run.id, figures))
}

/// Each bandwidth series' figure at its largest size.
pub fn figures(stats: &[crate::analysis::PointStat]) -> Vec<ToolFigure> {
    crate::analysis::series::series_of(stats, |_| None)
        .iter()
        .filter(|s| s.is_bandwidth())
        .filter_map(|s| {
            let (size, gbps) = s.rate().into_iter().max_by_key(|(size, _)| *size)?;
            Some(ToolFigure {
                curve: s.name().to_string(),
                size_bytes: Some(size),
                gbps,
                axis: s.rate_axis().to_string(),
            })
        })
        .collect()
}

/// Run the command with its stdout into a file of `dir`, within
/// [`TOOL_TIMEOUT`]; the file, or why not (with the last stderr line).
fn run(tool: &ToolCheck, dir: &Path) -> std::result::Result<PathBuf, String> {
    let program = tool.command[0].rsplit('/').next().unwrap_or("tool").to_string();
    let log = dir.join(format!("{program}.log"));
    let err_log = dir.join("stderr.log");
    let stdout = std::fs::File::create(&log).map_err(|e| format!("{}: {e}", log.display()))?;
    let stderr = std::fs::File::create(&err_log).map_err(|e| format!("{}: {e}", err_log.display()))?;
    let mut child = Command::new(&tool.command[0])
        .args(&tool.command[1..])
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .spawn()
        .map_err(|e| format!("`{}` could not start: {e}", tool.command[0]))?;
    let start = Instant::now();
    let last_err = || {
        let text = std::fs::read_to_string(&err_log).unwrap_or_default();
        text.lines().rev().find(|l| !l.trim().is_empty()).map(|l| format!(" ({})", l.trim())).unwrap_or_default()
    };
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(log),
            Ok(Some(status)) => return Err(format!("`{program}` exited with {status}{}", last_err())),
            Ok(None) if start.elapsed() > TOOL_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "`{program}` was still running after {} s and was stopped",
                    TOOL_TIMEOUT.as_secs()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("`{program}`: {e}")),
        }
    }
}
