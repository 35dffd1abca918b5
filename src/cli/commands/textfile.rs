//! node_exporter's textfile collector: `fleet gate --textfile DIR` and
//! `fleet health --textfile DIR` write their verdicts as Prometheus
//! metrics (`DIR/benchbook_gate.prom`, `DIR/benchbook_health.prom`),
//! written atomically, so the collector never reads half a file. docs/gate-health.md has the metrics and an
//! alert rule.
//!
//! - `benchbook_gate_verdict{fleet,node,check}`: 0 pass, 1 bad, 3 not
//!   judged (the gate's exit codes), for the gate as a whole
//!   (`check="gate"`), its suite (`check="suite"`), each tool check in
//!   the order given (`check="tool1:nccl-tests"`) and each passive check (1 where a
//!   finding drains or asks for a reset);
//! - `benchbook_gate_warnings{fleet,node,check}`: findings that only warn;
//! - `benchbook_gate_point_ratio{fleet,node,point}` and `…_ratio_low`:
//!   the node's median over the fleet's, and its interval's lower end;
//! - `benchbook_gate_last_run_timestamp_seconds{fleet,node}`.
//!
//! `fleet health` writes the passive lines as `benchbook_health_*`, with
//! a `node` label only.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::analysis::fleet::gate::Verdict;
use crate::analysis::fleet::health::{Action, Check, Health};
use crate::gate::GateOutcome;

/// A label value as the text format quotes it: `\`, `"` and newlines
/// escaped.
fn label(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// `{k="v",...}`.
fn labels(pairs: &[(&str, &str)]) -> String {
    let inner: Vec<String> = pairs.iter().map(|(k, v)| format!("{k}=\"{}\"", label(v))).collect();
    format!("{{{}}}", inner.join(","))
}

fn header(out: &mut String, name: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge");
}

/// The passive checks' verdict lines under `prefix` (`benchbook_gate`,
/// `benchbook_health`), each labelled `base` plus its check; `more` adds
/// lines of the same family (a family's samples must be together).
fn passive(out: &mut String, prefix: &str, base: &[(&str, &str)], health: Option<&Health>, more: &[(&str, Verdict)]) {
    header(
        out,
        &format!("{prefix}_verdict"),
        "0 pass, 1 bad, 3 not judged: check=gate the whole gate, suite its suite, others each passive GPU check (1: a finding that drains or asks for a reset)",
    );
    let with = |check: &str| {
        let mut l = base.to_vec();
        l.push(("check", check));
        labels(&l)
    };
    for c in Check::ALL {
        let v = match health {
            None => Verdict::NotJudged,
            Some(h) if h.unread.contains(&c) => Verdict::NotJudged,
            Some(h) if h.findings.iter().any(|f| f.check == c && f.action != Action::Warn) => Verdict::Bad,
            Some(_) => Verdict::Pass,
        };
        let _ = writeln!(out, "{prefix}_verdict{} {}", with(c.name()), v.code());
    }
    for (check, v) in more {
        let _ = writeln!(out, "{prefix}_verdict{} {}", with(check), v.code());
    }
    if let Some(h) = health {
        header(out, &format!("{prefix}_warnings"), "findings of a passive GPU check that only warn");
        for c in Check::ALL.into_iter().filter(|c| !h.unread.contains(c)) {
            let n = h.findings.iter().filter(|f| f.check == c && f.action == Action::Warn).count();
            let _ = writeln!(out, "{prefix}_warnings{} {n}", with(c.name()));
        }
    }
}

/// The gate's metrics, ended at `unix_seconds`.
pub fn gate_metrics(o: &GateOutcome, unix_seconds: f64) -> String {
    let mut out = String::new();
    let base = [("fleet", o.fleet.as_str()), ("node", o.node.as_str())];
    let suite = if o.passes.is_empty() {
        Verdict::NotJudged
    } else if !o.confirmed.is_empty() {
        Verdict::Bad
    } else if o.verdict == Verdict::NotJudged {
        Verdict::NotJudged
    } else {
        Verdict::Pass
    };
    // Numbered in the order given: two checks of one format (NHC's 8-GPU
    // all_reduce and its IB loopback) would otherwise be one series twice,
    // which node_exporter refuses.
    let tools: Vec<(String, Verdict)> =
        o.tools.iter().enumerate().map(|(i, t)| (format!("tool{}:{}", i + 1, t.check.format), t.verdict)).collect();
    let mut more: Vec<(&str, Verdict)> = vec![("gate", o.verdict), ("suite", suite)];
    more.extend(tools.iter().map(|(c, v)| (c.as_str(), *v)));
    passive(&mut out, "benchbook_gate", &base, o.health.as_ref(), &more);
    if let Some(j) = o.both.as_ref().or(o.retest.as_ref()).or(o.first.as_ref()) {
        header(&mut out, "benchbook_gate_point_ratio", "this node's median over the fleet's, per point of the suite");
        let judged: Vec<_> = j.points.iter().filter_map(|p| p.fleet.as_ref().map(|a| (p.point.as_str(), a))).collect();
        for (point, a) in &judged {
            let mut l = base.to_vec();
            l.push(("point", point));
            let _ = writeln!(out, "benchbook_gate_point_ratio{} {}", labels(&l), a.ratio);
        }
        header(
            &mut out,
            "benchbook_gate_point_ratio_low",
            "the lower end of that ratio's interval (a fault lies wholly below 1 - threshold)",
        );
        for (point, a) in &judged {
            let mut l = base.to_vec();
            l.push(("point", point));
            let _ = writeln!(out, "benchbook_gate_point_ratio_low{} {}", labels(&l), a.ratio_low);
        }
    }
    header(&mut out, "benchbook_gate_last_run_timestamp_seconds", "when this gate ended (Unix time)");
    let _ = writeln!(out, "benchbook_gate_last_run_timestamp_seconds{} {unix_seconds:.3}", labels(&base));
    out
}

/// `fleet health`'s metrics for `node`.
pub fn health_metrics(node: &str, health: Option<&Health>) -> String {
    let mut out = String::new();
    passive(&mut out, "benchbook_health", &[("node", node)], health, &[]);
    out
}

/// Write `text` to `dir/name` atomically (`archive::store::write_atomic`):
/// the collector sees the old file or the new, never half.
pub fn write(dir: &Path, name: &str, text: &str) -> crate::error::Result<PathBuf> {
    let path = dir.join(name);
    crate::archive::store::write_atomic(&path, text.as_bytes())?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_label_values_stay_inside_their_quotes() {
        assert_eq!(labels(&[("node", "a\"b\\c\nd")]), "{node=\"a\\\"b\\\\c\\nd\"}");
        let text = health_metrics("n1", None);
        assert!(text.contains("benchbook_health_verdict{node=\"n1\",check=\"xid\"} 3"), "{text}");
        assert!(!text.contains("_warnings{"), "nothing read, nothing counted: {text}");
    }
}
