//! A real Slurm cluster on this machine (Debian's slurmctld, slurmd and
//! munge, started by `scripts/slurm-cluster.sh`): four `slurmd -N` nodes,
//! `benchbook run --fleet` on every node through `srun`, and `fleet check`
//! judging them, clean and with one node genuinely throttled by a CPU
//! cgroup.
//!
//! Ignored by `cargo test`: it needs root, the Slurm packages, and the
//! machine to itself (other tests running beside it are load that no node
//! should measure). CI runs it alone: `cargo test --test integration --
//! --ignored slurm::`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchbook::prelude::*;

use crate::common;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/slurm-cluster.sh");

/// A running cluster, stopped when dropped (a failing test included).
struct Cluster {
    dir: PathBuf,
    port: &'static str,
}

impl Cluster {
    /// Start `n` nodes; `None` (saying why) where this machine cannot,
    /// except in CI, which installs Slurm and must run the test.
    fn start(n: usize, dir: &Path) -> Option<Cluster> {
        let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
        let slurm = Command::new("slurmctld").arg("-V").output().is_ok();
        if !(root && slurm) {
            let why = if root { "slurmctld is not installed" } else { "not root" };
            assert!(std::env::var_os("CI").is_none(), "CI must run the Slurm test, but {why}");
            eprintln!("skipped: {why} (apt-get install slurmctld slurmd slurm-client munge; run as root)");
            return None;
        }
        let c = Cluster { dir: dir.to_path_buf(), port: "17400" };
        let o = c.script(&["start", &n.to_string()]);
        assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
        Some(c)
    }

    fn script(&self, args: &[&str]) -> Output {
        Command::new("bash")
            .arg(SCRIPT)
            .args(args)
            .env("BENCHBOOK_SLURM_DIR", &self.dir)
            .env("BENCHBOOK_SLURM_PORT", self.port)
            .output()
            .expect("bash")
    }

    fn conf(&self) -> PathBuf {
        self.dir.join("slurm.conf")
    }

    /// One allocation of every node, and `passes` job steps in it, each
    /// running the suite once per node, the nodes taking turns.
    fn fleet(&self, name: &str, passes: usize, archive: &Path) {
        let bb = common::bin();
        let suite = format!(
            "{bb} -q run memcpy --sizes 4M,64M --threads 1 --max-time 0.5 --fleet {name} --take-turns --archive {}",
            archive.display()
        );
        let script = format!("for p in $(seq 1 {passes}); do srun -N4 --ntasks-per-node=1 {suite} || exit 1; done");
        let o = Command::new("timeout")
            .args(["-k", "10", "300", "salloc", "-N4", "bash", "-c", &script])
            .env("SLURM_CONF", self.conf())
            .output()
            .expect("salloc");
        assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    }

    fn check(&self, name: &str, archive: &Path) -> (Option<i32>, serde_json::Value, String) {
        let run = |json: bool| {
            let mut c = Command::new(common::bin());
            c.args(["fleet", "check", name, "--archive"]).arg(archive);
            if json {
                c.arg("--json");
            }
            c.output().expect("benchbook")
        };
        let o = run(true);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("fleet check --json");
        let text = run(false);
        (o.status.code(), v, String::from_utf8_lossy(&text.stdout).into_owned())
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = self.script(&["stop"]);
    }
}

#[test]
#[ignore = "needs root, Slurm and the machine to itself; CI runs it alone"]
fn slurm_fleet_names_the_throttled_node_and_nobody_when_clean() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cluster) = Cluster::start(4, &tmp.path().join("slurm")) else { return };
    let archive = tmp.path().join("archive");

    // Clean: 3 passes in one job; every node recorded 3 times, by name.
    cluster.fleet("clean", 3, &archive);
    let runs = Archive::new(&archive).runs().unwrap();
    assert_eq!(runs.len(), 12);
    let mut nodes = std::collections::BTreeMap::<String, usize>::new();
    let mut jobs = std::collections::BTreeSet::new();
    for r in &runs {
        let m = r.manifest().unwrap();
        let p = m.placement.clone().expect("a placement");
        assert_eq!((p.fleet.as_deref(), p.launcher.as_deref()), (Some("clean"), Some("slurm")), "{p:?}");
        *nodes.entry(p.node).or_default() += 1;
        jobs.insert(p.job_id.expect("Slurm's job id"));
    }
    assert_eq!(nodes, (1..=4).map(|k| (format!("node{k}"), 3)).collect());
    assert_eq!(jobs.len(), 1, "one allocation: {jobs:?}");
    let (code, v, text) = cluster.check("clean", &archive);
    assert_eq!(code, Some(0), "a clean fleet named {}\n{text}", v["drain"]);
    assert_eq!(v["drain"], serde_json::json!([]));

    // node3 at 25 % of one CPU: named, and only it, with its figures.
    let o = cluster.script(&["throttle", "node3", "25"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    cluster.fleet("throttled", 3, &archive);
    let (code, v, text) = cluster.check("throttled", &archive);
    assert_eq!(code, Some(1), "{text}");
    assert_eq!(v["drain"], serde_json::json!(["node3"]), "{text}");
    let n3 = &v["nodes"][0];
    assert_eq!(n3["node"], "node3");
    let w = &n3["worst"];
    let (ratio, high, z) = (w["ratio"].as_f64().unwrap(), w["ratio_high"].as_f64().unwrap(), w["z"].as_f64().unwrap());
    assert!(ratio < high && high < 0.95 && z < -3.5, "{w}");
    assert_eq!(w["runs"], 3);
    // The sentence names the node, its ratio, interval and z.
    let line = text.lines().find(|l| l.starts_with("- node3")).unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains(&format!("{ratio:.2}×")) && line.contains(&format!("z = {z:.1}")), "{line}");
}
