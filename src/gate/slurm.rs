//! Acting on a gate's verdict in Slurm, as NHC does: drain a bad node with
//! the gate's reason (`scontrol update NodeName=N State=DRAIN Reason=…`),
//! and resume a passing node only where the drain was benchbook's own (its
//! reason starts with `benchbook:`). A node an operator drained for
//! another reason is never touched.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Serialize;

use crate::analysis::fleet::gate::reason::PREFIX;
use crate::analysis::fleet::gate::Verdict;

/// A node's state as slurmctld holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeState {
    /// `IDLE`, `IDLE+DRAIN`, `MIXED+DRAIN`, ...
    pub state: String,
    pub reason: Option<String>,
}

impl NodeState {
    pub fn drained(&self) -> bool {
        self.state.contains("DRAIN")
    }

    /// Whether someone took the node out: drained, down, failed, in
    /// maintenance, or with a reason of their own (benchbook's own drain
    /// aside).
    pub fn taken_out(&self) -> bool {
        let out = self.drained() || ["DOWN", "FAIL", "MAINT"].iter().any(|s| self.state.contains(s));
        (out || self.reason.is_some()) && !self.ours()
    }

    /// Whether the drain is benchbook's own.
    pub fn ours(&self) -> bool {
        self.reason.as_deref().is_some_and(|r| r.starts_with(PREFIX))
    }

    /// From one line of `scontrol show node NAME -o`.
    pub fn parse(line: &str) -> Option<NodeState> {
        let field = |key: &str| line.split_whitespace().find_map(|w| w.strip_prefix(key)).map(String::from);
        let state = field("State=")?;
        // The reason runs to the end of the line, less its `[user@time]` stamp.
        let reason = line.find(" Reason=").map(|at| {
            let r = &line[at + " Reason=".len()..];
            let r = match r.rfind(" [") {
                Some(i) if r.trim_end().ends_with(']') => &r[..i],
                _ => r,
            };
            r.trim().to_string()
        });
        Some(NodeState { state, reason: reason.filter(|r| !r.is_empty() && r != "(null)") })
    }
}

/// What was done in Slurm.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case", tag = "action", content = "detail")]
pub enum Action {
    Drained,
    Resumed,
    /// Left as it was, and why (drained by someone else, nothing to do).
    Left(String),
    /// scontrol failed.
    Failed(String),
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Action::Drained => f.write_str("drained"),
            Action::Resumed => f.write_str("resumed"),
            Action::Left(why) => write!(f, "left as it was: {why}"),
            Action::Failed(why) => write!(f, "scontrol failed: {why}"),
        }
    }
}

/// `scontrol`: the given path, else the first on PATH, else the usual
/// places (Slurm runs a HealthCheckProgram with no PATH at all).
pub fn scontrol(given: Option<&Path>) -> PathBuf {
    if let Some(p) = given {
        return p.to_path_buf();
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("scontrol")).find(|c| c.is_file()))
        .unwrap_or_default();
    on_path
        .or_else(|| {
            ["/usr/bin/scontrol", "/usr/local/bin/scontrol", "/opt/slurm/bin/scontrol"]
                .map(PathBuf::from)
                .into_iter()
                .find(|c| c.is_file())
        })
        .unwrap_or_else(|| PathBuf::from("scontrol"))
}

fn run(scontrol: &Path, args: &[&str]) -> Result<String, String> {
    let o = Command::new(scontrol).args(args).output().map_err(|e| format!("{}: {e}", scontrol.display()))?;
    if o.status.success() {
        Ok(String::from_utf8_lossy(&o.stdout).into_owned())
    } else {
        Err(format!(
            "`{} {}` exited {}: {}",
            scontrol.display(),
            args.join(" "),
            o.status.code().map_or("on a signal".into(), |c| c.to_string()),
            String::from_utf8_lossy(&o.stderr).trim()
        ))
    }
}

/// Node `node`'s state.
pub fn node_state(scontrol: &Path, node: &str) -> Result<NodeState, String> {
    let out = run(scontrol, &["show", "node", node, "-o"])?;
    out.lines()
        .find_map(NodeState::parse)
        .ok_or_else(|| format!("`scontrol show node {node}` printed no State= ({})", out.trim()))
}

/// Drain a bad node, or resume a passing one that benchbook drained, as
/// `drain` and `resume` allow. A verdict of not judged never acts.
pub fn act(scontrol: &Path, node: &str, verdict: Verdict, reason: &str, drain: bool, resume: bool) -> Option<Action> {
    let wanted = match verdict {
        Verdict::Bad if drain => true,
        Verdict::Pass if resume => false,
        _ => return None,
    };
    let state = match node_state(scontrol, node) {
        Ok(s) => s,
        Err(e) => return Some(Action::Failed(e)),
    };
    let done = |r: Result<String, String>, ok: Action| Some(r.map_or_else(Action::Failed, |_| ok));
    let node_arg = format!("NodeName={node}");
    if wanted {
        // A node someone else took out is left as it is: draining it would
        // replace their reason, and a later pass would then resume it.
        if state.taken_out() {
            let why = state.reason.unwrap_or_else(|| state.state.clone());
            return Some(Action::Left(format!("already taken out for another reason ({why})")));
        }
        // Slurm keeps only a reason's first 255 bytes in its accounting.
        let reason: String = reason
            .chars()
            .scan(0, |n, c| {
                *n += c.len_utf8();
                (*n <= 255).then_some(c)
            })
            .collect();
        done(run(scontrol, &["update", &node_arg, "State=DRAIN", &format!("Reason={reason}")]), Action::Drained)
    } else if !state.drained() {
        None
    } else if state.ours() {
        done(run(scontrol, &["update", &node_arg, "State=RESUME"]), Action::Resumed)
    } else {
        Some(Action::Left(format!(
            "drained for another reason ({}); only benchbook's drains are resumed",
            state.reason.unwrap_or_default()
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_line_gives_its_state_and_reason_without_the_stamp() {
        let line = "NodeName=node3 Arch=x86_64 CoresPerSocket=1 State=IDLE+DRAIN ThreadsPerCore=1 \
                    Reason=benchbook: memcpy copy 64 MiB 1T at 0.28× fleet (99.50 % CI 0.24–0.32), below 0.95 [root@2026-11-27T01:02:03]";
        let s = NodeState::parse(line).unwrap();
        assert_eq!(s.state, "IDLE+DRAIN");
        assert!(s.drained() && s.ours() && !s.taken_out());
        assert_eq!(
            s.reason.as_deref(),
            Some("benchbook: memcpy copy 64 MiB 1T at 0.28× fleet (99.50 % CI 0.24–0.32), below 0.95")
        );
        let other = NodeState::parse("NodeName=n1 State=DOWN Reason=bad dimm [admin@2026-11-27T01:00:00]").unwrap();
        assert!(!other.drained() && !other.ours() && other.reason.as_deref() == Some("bad dimm"));
        assert!(other.taken_out());
        let idle = NodeState::parse("NodeName=n1 State=IDLE ThreadsPerCore=1").unwrap();
        assert!(!idle.drained() && idle.reason.is_none() && !idle.taken_out());
        assert_eq!(NodeState::parse("no such node"), None);
    }
}
