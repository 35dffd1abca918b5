//! Where in a cluster a run ran: its node, the scheduler's job, step and
//! task, and the fleet it belongs to. Read from the environment the
//! launcher sets (Slurm's `SLURMD_NODENAME`, `SLURM_JOB_ID`, ...; Open
//! MPI's `OMPI_COMM_WORLD_RANK`) and from `BENCHBOOK_FLEET`, which
//! `run --fleet NAME` sets.

use serde::{Deserialize, Serialize};

/// The environment variable naming the fleet a run belongs to.
pub const FLEET_ENV: &str = "BENCHBOOK_FLEET";
/// The node's name where the host name is not it (a Kubernetes pod's).
pub const NODE_ENV: &str = "BENCHBOOK_NODE";

/// A run's place in a cluster (manifest v4).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct Placement {
    /// The fleet this run belongs to (`run --fleet NAME`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fleet: Option<String>,
    /// The node: Slurm's node name where Slurm launched the run, else the
    /// host name. Several `slurmd -N` nodes may share one host.
    pub node: String,
    /// `slurm` or `mpi` when a launcher started the process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub launcher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    /// The task's rank in its job step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<u32>,
}

impl Placement {
    /// This process's placement on host `hostname`, from its environment.
    pub fn detect(hostname: &str) -> Placement {
        Placement::from_env(|k| std::env::var(k).ok().filter(|v| !v.trim().is_empty()), hostname)
    }

    /// The placement `var` describes, on host `hostname`.
    pub fn from_env(var: impl Fn(&str) -> Option<String>, hostname: &str) -> Placement {
        let slurm = var("SLURM_JOB_ID").is_some();
        let mpi = var("OMPI_COMM_WORLD_RANK").is_some() || var("PMI_RANK").is_some();
        // A Kubernetes Indexed Job gives each pod its index; the pod's host
        // name is the pod's, so the node comes from BENCHBOOK_NODE (the
        // Downward API's spec.nodeName; docs/object-store.md).
        let kubernetes = var("JOB_COMPLETION_INDEX").is_some();
        let task = ["SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "JOB_COMPLETION_INDEX"]
            .iter()
            .find_map(|k| var(k)?.parse().ok());
        Placement {
            // A name `--fleet` would refuse is not a fleet (it names files
            // and filters runs unquoted).
            fleet: var(FLEET_ENV).filter(|f| check_fleet_name(f).is_ok()),
            node: var(NODE_ENV).or_else(|| var("SLURMD_NODENAME")).unwrap_or_else(|| hostname.to_string()),
            launcher: if slurm {
                Some("slurm".into())
            } else if mpi {
                Some("mpi".into())
            } else if kubernetes {
                Some("kubernetes".into())
            } else {
                None
            },
            job_id: var("SLURM_JOB_ID"),
            step_id: var("SLURM_STEP_ID"),
            task,
        }
    }
}

/// A fleet name as `--fleet` takes it: letters, digits, `-`, `_` and `.`,
/// so it can name files and filter runs without quoting.
pub fn check_fleet_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name.len() > 64 {
        return Err("a fleet name has 1 to 64 characters".into());
    }
    match name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
        Some(c) => Err(format!("`{c}` is not allowed in a fleet name (letters, digits, -, _ and . are)")),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
    }

    #[test]
    fn slurm_names_the_node_not_the_host() {
        let p = Placement::from_env(
            env(&[
                ("SLURMD_NODENAME", "node3"),
                ("SLURM_JOB_ID", "42"),
                ("SLURM_STEP_ID", "0"),
                ("SLURM_PROCID", "2"),
                (FLEET_ENV, "nightly"),
            ]),
            "host-a",
        );
        assert_eq!(p.node, "node3");
        assert_eq!((p.launcher.as_deref(), p.job_id.as_deref(), p.task), (Some("slurm"), Some("42"), Some(2)));
        assert_eq!(p.fleet.as_deref(), Some("nightly"));
        let plain = Placement::from_env(env(&[]), "host-a");
        assert_eq!(plain, Placement { node: "host-a".into(), ..Placement::default() });
        let mpi = Placement::from_env(env(&[("OMPI_COMM_WORLD_RANK", "1")]), "h");
        assert_eq!((mpi.launcher.as_deref(), mpi.task), (Some("mpi"), Some(1)));
        let pod =
            Placement::from_env(env(&[("JOB_COMPLETION_INDEX", "5"), (NODE_ENV, "gpu-node-17")]), "bench-5-x7k2p");
        assert_eq!(
            (pod.node.as_str(), pod.launcher.as_deref(), pod.task),
            ("gpu-node-17", Some("kubernetes"), Some(5))
        );
    }

    #[test]
    fn fleet_names_are_plain() {
        assert!(check_fleet_name("nightly-2026.11_a").is_ok());
        assert!(check_fleet_name("").is_err());
        assert!(check_fleet_name("a/b").unwrap_err().contains("`/`"));
    }
}
