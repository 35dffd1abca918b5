//! `fleet gate`'s lifecycle (above both `session`, which measures, and
//! `analysis`, which judges; below only the CLI): measure the suite as a run of the fleet, judge
//! it ([`crate::analysis::fleet::gate`]), retest a failing pass before
//! calling it bad, and archive the verdict as a run of its own. Nothing
//! here drains a node: the caller acts on the outcome. Every failure to
//! measure, read or judge becomes [`Verdict::NotJudged`] with its reason,
//! never `Bad`.

mod health;
pub mod slurm;
pub mod tool;

pub use health::passive_health;

use std::path::PathBuf;

use serde::Serialize;

use crate::analysis::changepoints::ChangeRule;
use crate::analysis::fleet::gate::changes;
use crate::analysis::fleet::gate::collect::{collect, Window};
use crate::analysis::fleet::gate::floors::FloorSpec;
use crate::analysis::fleet::gate::{confirm, judge, reason, GateJudgement, GateRule, Verdict, GATE_BENCH, GATE_SOURCE};
use crate::analysis::fleet::health::{Action, Health};
use crate::analysis::specs::SpecBook;
use crate::archive::Archive;
use crate::bench::BenchConfig;
use crate::error::Result;
use crate::vocab::config::{GateConfig, GateRecord, RunConfig};
use crate::vocab::progress::Progress;
use crate::vocab::rows::{Point, Row, RowSink, RunOutcome, Status};
use crate::vocab::source::{RunOrigin, Source, SourceInfo};

/// What to gate and how.
#[derive(Debug, Clone)]
pub struct GateSpec {
    pub fleet: String,
    pub suite: BenchConfig,
    pub rule: GateRule,
    pub window: Window,
    pub floors: Vec<FloorSpec>,
    /// Where the floors came from, when not built in.
    pub floors_path: Option<String>,
    /// Retest a failing first pass (off only to study single passes).
    pub retest: bool,
    /// Where Xid events are read: the kernel's ring buffer, or a log file.
    pub kernel_log: PathBuf,
    /// What the node must have (GPUs, InfiniBand ports), where given.
    pub expected: crate::vocab::health::Expected,
    /// Tools run and held against fixed floors (`--tool-check`).
    pub tools: Vec<crate::vocab::gate::ToolCheck>,
}

/// What a gate found.
#[derive(Debug, Clone, Serialize)]
pub struct GateOutcome {
    pub fleet: String,
    pub node: String,
    pub verdict: Verdict,
    /// One line, for Slurm and for people.
    pub reason: String,
    /// The suite's runs: the first pass, then the retest.
    pub passes: Vec<String>,
    pub first: Option<GateJudgement>,
    pub retest: Option<GateJudgement>,
    /// Both passes judged together: the figures a drain reason states.
    pub both: Option<GateJudgement>,
    /// The points that failed in both passes.
    pub confirmed: Vec<String>,
    /// Other nodes read, and this node's earlier runs.
    pub peers: usize,
    pub history_runs: usize,
    pub damaged: Vec<(String, String)>,
    /// The verdict's own run.
    pub verdict_run: Option<String>,
    /// What this node's GPUs report about their own health, judged
    /// (`analysis::fleet::health`), read before the suite runs; or why it
    /// could not be read (`health_unread`: no NVML, no GPU).
    pub health: Option<Health>,
    pub health_unread: Option<String>,
    /// Where this node's own runs (its earlier ones and the first pass)
    /// changed level, point by point: informative, never a reason to drain
    /// (`analysis::fleet::gate::changes`).
    pub own_changes: Vec<String>,
    /// The tool checks (`--tool-check`), run after the passive checks and
    /// before the suite.
    pub tools: Vec<tool::ToolResult>,
}

impl GateOutcome {
    /// A gate that judged `first` (and `retest`) but cannot call the node
    /// either way: not judged, with why.
    fn stopped(mut self, why: &str, first: GateJudgement, retest: Option<GateJudgement>) -> GateOutcome {
        self.verdict = Verdict::NotJudged;
        self.reason = reason::not_judged(why);
        self.first = Some(first);
        self.retest = retest;
        self
    }

    pub fn not_judged(fleet: &str, node: &str, passes: Vec<String>, why: &str) -> GateOutcome {
        GateOutcome {
            fleet: fleet.into(),
            node: node.into(),
            verdict: Verdict::NotJudged,
            reason: reason::not_judged(why),
            passes,
            first: None,
            retest: None,
            both: None,
            confirmed: Vec::new(),
            peers: 0,
            history_runs: 0,
            damaged: Vec::new(),
            verdict_run: None,
            health: None,
            health_unread: None,
            own_changes: Vec::new(),
            tools: Vec::new(),
        }
    }
}

/// Measure one pass of the suite as a run of the fleet; its id, or why not.
fn pass(archive: &Archive, spec: &GateSpec, progress: &dyn Progress) -> std::result::Result<String, String> {
    match crate::session::run(archive, &spec.suite, Some("gate"), progress) {
        Ok(r) if r.outcome.interrupted => Err("the suite was interrupted".into()),
        Ok(r) if r.outcome.measured == 0 => {
            Err(format!("the suite measured nothing ({} failed, {} skipped)", r.outcome.failed, r.outcome.skipped))
        }
        Ok(r) => Ok(r.run.id),
        Err(e) => Err(format!("the suite could not run: {e}")),
    }
}

/// The node a run was recorded on.
fn node_of(archive: &Archive, run: &str) -> Option<String> {
    let dir = archive.resolve(run).ok()?;
    Some(dir.manifest().ok()?.placement?.node)
}

/// Gate this node: a pass, its judgement, and a retest when it fails. The
/// caller acts on the outcome, then archives it ([`write_verdict`]).
///
/// First the GPUs' own health (passive, instant): a finding that asks to
/// drain the node or reset a GPU makes the gate bad at once, with the
/// finding as its reason, and the suite does not run. Then the tool checks ([`tool::then_suite`]).
pub fn gate(archive: &Archive, spec: &GateSpec, specs: &SpecBook, progress: &dyn Progress) -> GateOutcome {
    let (health, unread) = match passive_health(specs, &spec.kernel_log, &spec.expected) {
        Ok(h) => (Some(h), None),
        Err(why) => (None, Some(why)),
    };
    let urgent = health.as_ref().and_then(|h| h.findings.iter().find(|f| f.action != Action::Warn)).cloned();
    let mut out = match urgent {
        Some(f) => GateOutcome {
            verdict: Verdict::Bad,
            reason: format!("{} {}", reason::PREFIX, f.line()),
            ..GateOutcome::not_judged(&spec.fleet, &this_node(), Vec::new(), "")
        },
        None => tool::then_suite(archive, spec, progress, || match pass(archive, spec, progress) {
            Err(why) => GateOutcome::not_judged(&spec.fleet, &this_node(), Vec::new(), &why),
            Ok(first) => judge_passes(archive, spec, specs, progress, first),
        }),
    };
    (out.health, out.health_unread) = (health, unread);
    // The passes join this node's fleet summary (a cache: failing to
    // write it only costs the next peer's gate a read).
    for id in &out.passes {
        let _ = crate::analysis::fleet::summary::record_run(archive, id);
    }
    out
}

/// The node this process's runs are recorded on (Slurm's name for it, else the host name).
pub fn this_node() -> String {
    crate::host::Placement::detect(&crate::host::HostInfo::detect().hostname).node
}

/// A gate that could not start (its floors unreadable, its suite refused):
/// not judged, with why.
pub fn refused(fleet: &str, why: &str) -> GateOutcome {
    GateOutcome::not_judged(fleet, &this_node(), Vec::new(), why)
}

fn judge_passes(
    archive: &Archive,
    spec: &GateSpec,
    specs: &SpecBook,
    progress: &dyn Progress,
    first: String,
) -> GateOutcome {
    let node = node_of(archive, &first).unwrap_or_default();
    let read = |passes: &[String]| collect(archive, &spec.fleet, &node, passes, &spec.floors, specs, spec.window);
    let c = match read(std::slice::from_ref(&first)) {
        Ok(c) => c,
        Err(e) => return GateOutcome::not_judged(&spec.fleet, &node, vec![first], &format!("the archive: {e}")),
    };
    let j1 = judge(&c.data, &spec.rule);
    let mut out = GateOutcome {
        fleet: spec.fleet.clone(),
        node: node.clone(),
        verdict: Verdict::Pass,
        reason: String::new(),
        passes: vec![first.clone()],
        first: None,
        retest: None,
        both: None,
        confirmed: Vec::new(),
        peers: c.peers.len(),
        history_runs: c.history_runs,
        damaged: c.damaged.clone(),
        verdict_run: None,
        health: None,
        health_unread: None,
        tools: Vec::new(),
        own_changes: changes::own_changes(&c.data, &ChangeRule::default()).iter().map(|c| c.line()).collect(),
    };
    if !j1.judged() {
        let why = why_not(spec, &c, &j1);
        return out.stopped(&why, j1, None);
    }
    if j1.faults().next().is_none() || !spec.retest {
        let failed: Vec<String> = j1.faults().map(|p| p.point.clone()).collect();
        out.verdict = if failed.is_empty() { Verdict::Pass } else { Verdict::Bad };
        out.reason = match j1.faults().next() {
            Some(p) => reason::fault(p, spec.rule.threshold),
            None => reason::pass(&j1, &[]),
        };
        out.confirmed = failed;
        out.first = Some(j1);
        return out;
    }
    // A failing first pass is measured again before anything is called bad.
    let second = match pass(archive, spec, progress) {
        Ok(id) => id,
        Err(why) => return out.stopped(&format!("the first pass failed, and its retest: {why}"), j1, None),
    };
    out.passes.push(second.clone());
    let c2 = match read(&[first, second]) {
        Ok(c) => c,
        Err(e) => return out.stopped(&format!("the archive, at the retest: {e}"), j1, None),
    };
    let j2 = judge(&c2.data.with_fresh(&[1]), &spec.rule);
    // A failing point the retest did not measure (or could not judge) is
    // neither confirmed nor cleared: not judged, never a pass.
    let unjudged: Vec<String> = j1
        .faults()
        .map(|p| p.point.clone())
        .filter(|p| !j2.points.iter().any(|q| &q.point == p && q.judged()))
        .collect();
    if !unjudged.is_empty() {
        let why = format!("the retest did not judge {}, which failed the first pass", unjudged.join(", "));
        return out.stopped(&why, j1, Some(j2));
    }
    let both = judge(&c2.data, &spec.rule);
    let confirmed = confirm(&[&j1, &j2]);
    let cleared: Vec<String> = j1.faults().map(|p| p.point.clone()).filter(|p| !confirmed.contains(p)).collect();
    if confirmed.is_empty() {
        out.verdict = Verdict::Pass;
        out.reason = reason::pass(&j2, &cleared);
    } else {
        out.verdict = Verdict::Bad;
        // The worst confirmed point, stated with both passes' figures.
        let pick = |j: &GateJudgement| {
            j.points
                .iter()
                .filter(|p| confirmed.contains(&p.point) && p.fault.is_some())
                .min_by(|a, b| a.worst_ratio().total_cmp(&b.worst_ratio()))
                .cloned()
        };
        let p = pick(&both).or_else(|| pick(&j2));
        out.reason =
            p.map_or_else(|| reason::not_judged("no confirmed point"), |p| reason::fault(&p, spec.rule.threshold));
    }
    out.confirmed = confirmed.into_iter().collect();
    out.first = Some(j1);
    out.retest = Some(j2);
    out.both = Some(both);
    out
}

/// Why nothing could be judged: each line's shortfall.
fn why_not(spec: &GateSpec, c: &crate::analysis::fleet::gate::collect::Collected, j: &GateJudgement) -> String {
    let mut why = vec![
        format!(
            "{} other node(s) of fleet {} have runs of these points (a fleet line needs {})",
            c.peers.len(),
            spec.fleet,
            spec.rule.min_peers
        ),
        format!("this node has {} earlier run(s) (its history needs {})", c.history_runs, spec.rule.min_history),
    ];
    why.push(if c.data.floors.is_empty() {
        "no published floor applies to its device".into()
    } else {
        "its floors could not be judged".into()
    });
    if j.points.is_empty() && !j.empty.is_empty() {
        why.push(format!("no samples in {}", j.empty.join(", ")));
    }
    why.join("; ")
}

/// The verdict as a run: one metric row per point and line (`ratio_to_fleet`,
/// `ratio_to_history`, `ratio_to_floor`) with the record in its manifest.
struct VerdictSource<'a> {
    rule: &'a GateRule,
    floors: Option<&'a str>,
    out: &'a GateOutcome,
    action: Option<String>,
}

impl Source for VerdictSource<'_> {
    fn describe(&mut self) -> Result<SourceInfo> {
        let o = self.out;
        Ok(SourceInfo {
            kind: RunOrigin::Gate,
            config: RunConfig::Gate(GateConfig {
                gate: GateRecord {
                    fleet: o.fleet.clone(),
                    node: o.node.clone(),
                    passes: o.passes.clone(),
                    verdict: o.verdict.as_str().into(),
                    reason: o.reason.clone(),
                    threshold: self.rule.threshold,
                    alpha: self.rule.alpha,
                    floors: self.floors.map(String::from),
                    action: self.action.clone(),
                },
            }),
            backends: Vec::new(),
            default_label: "gate".into(),
        })
    }

    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, _: &dyn Progress) -> Result<RunOutcome> {
        let o = self.out;
        let json = serde_json::to_vec_pretty(o).map_err(|e| crate::error::Error::analysis(e.to_string()))?;
        sink.add_file("gate.json", &json)?;
        let judged = o.both.as_ref().or(o.retest.as_ref()).or(o.first.as_ref());
        let mut n = 0u32;
        for p in judged.map(|j| j.points.as_slice()).unwrap_or_default() {
            let lines = [
                ("ratio_to_fleet", p.fleet.as_ref()),
                ("ratio_to_history", p.history.as_ref()),
                ("ratio_to_floor", p.floor.as_ref().map(|f| &f.1)),
            ];
            for (metric, a) in lines {
                let Some(a) = a else { continue };
                let axes =
                    serde_json::json!({ "point": p.point, "low": a.ratio_low, "high": a.ratio_high, "fault": a.below });
                sink.write_point(vec![Row {
                    run_id: run_id.into(),
                    backend: GATE_BENCH.into(),
                    device: "host".into(),
                    host: o.node.clone(),
                    rank: 0,
                    point: n,
                    params: Point {
                        bench: GATE_BENCH.into(),
                        op: metric.into(),
                        metric: Some(metric.into()),
                        axes: Some(axes.to_string()),
                        unit: Some("1".into()),
                        better: Some("higher".into()),
                        ..Point::default()
                    },
                    sample: Some(0),
                    round: None,
                    iterations: None,
                    seconds: None,
                    value: Some(a.ratio),
                    timer: None,
                    status: Status::Measured,
                    note: None,
                    stop: None,
                    source: GATE_SOURCE.into(),
                    telemetry: None,
                }])?;
                n += 1;
            }
        }
        Ok(RunOutcome { points: n, measured: n, ..RunOutcome::default() })
    }
}

/// Archive `out` as a run (labelled `gate-verdict`, source `gate`), with
/// what was done about it in Slurm; its id.
pub fn write_verdict(
    archive: &Archive,
    rule: &GateRule,
    floors: Option<&str>,
    out: &GateOutcome,
    action: Option<String>,
) -> Result<String> {
    let mut source = VerdictSource { rule, floors, out, action };
    let r = crate::session::record(archive, &mut source, Some("gate-verdict"), &crate::vocab::progress::Silent)?;
    Ok(r.map(|r| r.run.id).unwrap_or_default())
}
