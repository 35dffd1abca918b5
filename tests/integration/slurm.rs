//! A real Slurm cluster on this machine (Debian's slurmctld, slurmd and
//! munge, started by `scripts/slurm-cluster.sh`): four `slurmd -N` nodes,
//! `benchbook run --fleet` on every node through `srun`, and `fleet check`
//! judging them, clean and with one node genuinely throttled by a CPU
//! cgroup.
//!
//! A second test makes `benchbook fleet gate` the cluster's
//! `HealthCheckProgram`: slurmctld itself drains the throttled node with
//! benchbook's reason, drains no clean node, and resumes the node once the
//! throttle is lifted.
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

/// One cluster at a time: the tests measure, and two clusters would load
/// each other's nodes.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// A running cluster, stopped when dropped (a failing test included).
struct Cluster {
    dir: PathBuf,
    port: &'static str,
}

impl Cluster {
    /// Start `n` nodes; `None` (saying why) where this machine cannot,
    /// except in CI, which installs Slurm and must run the test.
    fn start(n: usize, dir: &Path) -> Option<Cluster> {
        Cluster::start_with(n, dir, "17400", &[])
    }

    /// [`Cluster::start`] on `port`, with more `start` options.
    fn start_with(n: usize, dir: &Path, port: &'static str, options: &[&str]) -> Option<Cluster> {
        let root = Command::new("id").arg("-u").output().map(|o| o.stdout == b"0\n").unwrap_or(false);
        let slurm = Command::new("slurmctld").arg("-V").output().is_ok();
        if !(root && slurm) {
            let why = if root { "slurmctld is not installed" } else { "not root" };
            assert!(std::env::var_os("CI").is_none(), "CI must run the Slurm test, but {why}");
            eprintln!("skipped: {why} (apt-get install slurmctld slurmd slurm-client munge; run as root)");
            return None;
        }
        let c = Cluster { dir: dir.to_path_buf(), port };
        let n = n.to_string();
        let mut args = vec!["start", n.as_str()];
        args.extend_from_slice(options);
        let o = c.script(&args);
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
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
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

/// A gate verdict: (verdict, reason, action).
type Verdict = (String, String, Option<String>);

/// Each node's gate verdicts so far, oldest first.
fn verdicts(archive: &Path) -> std::collections::BTreeMap<String, Vec<Verdict>> {
    // node → (start, verdict, reason, action).
    type Dated = (String, String, String, Option<String>);
    let mut out: std::collections::BTreeMap<String, Vec<Dated>> = Default::default();
    // A run being written while we look is skipped; the next look reads it.
    for r in Archive::new(archive).runs().unwrap_or_default() {
        let Ok(m) = r.manifest() else { continue };
        if let benchbook::archive::manifest::RunConfig::Gate(g) = m.config {
            let g = g.gate;
            out.entry(g.node).or_default().push((m.started_at, g.verdict, g.reason, g.action));
        }
    }
    out.into_iter()
        .map(|(n, mut v)| {
            v.sort();
            (n, v.into_iter().map(|(_, a, b, c)| (a, b, c)).collect())
        })
        .collect()
}

impl Cluster {
    /// Node `node`'s state and reason, as slurmctld holds them.
    fn node(&self, node: &str) -> (String, String) {
        let o = Command::new("scontrol")
            .args(["show", "node", node, "-o"])
            .env("SLURM_CONF", self.conf())
            .output()
            .expect("scontrol");
        let text = String::from_utf8_lossy(&o.stdout).into_owned();
        let s = benchbook::gate::slurm::NodeState::parse(&text).unwrap_or_else(|| panic!("{text}"));
        (s.state, s.reason.unwrap_or_default())
    }

    /// Wait up to `seconds` for `done`, then fail with the gates' logs.
    fn wait(&self, what: &str, seconds: u64, mut done: impl FnMut() -> bool) {
        let start = std::time::Instant::now();
        while start.elapsed().as_secs() < seconds {
            if done() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        let logs: String = (1..=4)
            .map(|k| {
                let p = self.dir.join(format!("gate-node{k}.log"));
                format!("== {}\n{}\n", p.display(), std::fs::read_to_string(&p).unwrap_or_default())
            })
            .collect();
        panic!("{what}: not within {seconds} s\n{logs}");
    }
}

/// `start` options making `fleet gate gated` the cluster's health check
/// every `interval` s. One point, in the test's debug build: a gate well
/// inside Slurm's 60 s even on a throttled node, with its retest and its
/// turn to wait.
fn gated<'a>(archive: &'a str, interval: &'a str) -> [&'a str; 10] {
    [
        "--health-check",
        "gated",
        "--archive",
        archive,
        "--interval",
        interval,
        "--benchbook",
        common::bin(),
        "--suite",
        "memcpy --sizes 64M --threads 1 --max-time 0.3",
    ]
}

#[test]
#[ignore = "needs root, Slurm and the machine to itself; CI runs it alone"]
fn slurm_health_check_drains_the_throttled_node_itself_and_resumes_it_once_fixed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let archive_arg = archive.display().to_string();
    let options = gated(&archive_arg, "30");
    let Some(cluster) = Cluster::start_with(4, &tmp.path().join("slurm"), "17500", &options) else { return };
    drains_and_resumes(&cluster, &|| verdicts(&archive));
}

/// The health-gate test with a bucket as the archive: each node's gate
/// has its own mirror (its environment file names it), and the verdicts
/// are read from the bucket by a machine that ran nothing.
#[test]
#[ignore = "needs root, Slurm and the machine to itself; CI runs it alone"]
fn slurm_health_check_with_a_bucket_as_archive_drains_and_resumes() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = crate::object_store::Store::start(&tmp.path().join("s3")) else { return };
    let url = store.url("gated");
    let dir = tmp.path().join("slurm");
    std::fs::create_dir_all(&dir).unwrap();
    for k in 1..=4 {
        let mut env: String = store.env.iter().map(|(k, v)| format!("export {k}={v}\n")).collect();
        env += &format!("export BENCHBOOK_CACHE={}/mirror-node{k}\n", tmp.path().display());
        env += &format!("export BENCHBOOK_TURNS={}/turns.lock\n", tmp.path().display());
        std::fs::write(dir.join(format!("env-node{k}")), env).unwrap();
    }
    let options = gated(&url, "30");
    let Some(cluster) = Cluster::start_with(4, &dir, "17600", &options) else { return };
    let reader = tmp.path().join("reader");
    let mirror = reader.join("s3/benchbook/gated");
    // The reader syncs at most every 10 s: a sync every poll (2 s) competes
    // with the nodes' own measurements for this machine's two cores, and
    // once slowed a clean node enough to be drained.
    let last = std::cell::Cell::new(None::<std::time::Instant>);
    drains_and_resumes(&cluster, &|| {
        if last.get().is_none_or(|t| t.elapsed().as_secs() >= 10) {
            let _ = store.bb(&reader, None).args(["-q", "sync", "--archive", &url]).output();
            last.set(Some(std::time::Instant::now()));
        }
        verdicts(&mirror)
    });
    assert!(!tmp.path().join("archive").exists(), "no shared directory in use");
}

/// Clean gates pass; node3 throttled is drained by slurmctld with
/// benchbook's reason, and resumed once the throttle is lifted.
fn drains_and_resumes(cluster: &Cluster, verdicts: &dyn Fn() -> std::collections::BTreeMap<String, Vec<Verdict>>) {
    let nodes: Vec<String> = (1..=4).map(|k| format!("node{k}")).collect();

    // Clean: the first gates have no fleet to judge against (not judged);
    // wait until every node has passed twice against its fleet.
    let passes = |v: &[Verdict]| v.iter().filter(|x| x.0 == "pass").count();
    cluster.wait("every node passing its gate twice", 240, || {
        let v = verdicts();
        nodes.iter().all(|n| v.get(n).is_some_and(|x| passes(x) >= 2))
    });
    let v = verdicts();
    for n in &nodes {
        assert!(v[n].iter().all(|x| x.0 != "bad"), "clean {n} was called bad: {:?}", v[n]);
        let (state, reason) = cluster.node(n);
        assert!(!state.contains("DRAIN"), "clean {n} is {state}: {reason}");
    }

    // node3 at 25 % of one CPU: slurmctld drains it with benchbook's reason.
    let o = cluster.script(&["throttle", "node3", "25"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    cluster.wait("slurmctld draining node3", 150, || cluster.node("node3").0.contains("DRAIN"));
    let (state, reason) = cluster.node("node3");
    assert!(
        reason.starts_with("benchbook: memcpy copy ") && reason.contains("× fleet") && reason.ends_with("below 0.95"),
        "{state}: {reason}"
    );
    let sinfo = Command::new("sinfo")
        .args(["-h", "-N", "-R", "-o", "%N|%E"])
        .env("SLURM_CONF", cluster.conf())
        .output()
        .unwrap();
    let sinfo = String::from_utf8_lossy(&sinfo.stdout).into_owned();
    assert!(sinfo.lines().any(|l| l == format!("node3|{reason}")), "{sinfo}");
    for n in ["node1", "node2", "node4"] {
        let (state, reason) = cluster.node(n);
        assert!(!state.contains("DRAIN"), "clean {n} is {state}: {reason}");
    }
    // Its verdict run says what it judged and what was done (once a reader
    // has it: a bucket's reader syncs every few seconds).
    let has = |node: &str, verdict: &str| verdicts().get(node).is_some_and(|v| v.iter().any(|x| x.0 == verdict));
    cluster.wait("node3's bad verdict archived", 60, || has("node3", "bad"));
    let bad = verdicts()["node3"].iter().find(|x| x.0 == "bad").cloned().expect("a bad verdict");
    assert_eq!((bad.1.as_str(), bad.2.as_deref()), (reason.as_str(), Some("drained")));

    // Fixed: the next gate passes, and resumes the node it drained.
    let o = cluster.script(&["throttle", "node3", "off"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    cluster.wait("node3 back to idle", 150, || !cluster.node("node3").0.contains("DRAIN"));
    let resumed = || verdicts()["node3"].iter().any(|x| x.0 == "pass" && x.2.as_deref() == Some("resumed"));
    cluster.wait("node3's resuming verdict archived", 60, resumed);
    let v = verdicts();
    assert!(v["node3"].iter().any(|x| x.0 == "pass" && x.2.as_deref() == Some("resumed")), "{:?}", v["node3"]);
    for n in &nodes {
        let (state, reason) = cluster.node(n);
        assert!(!state.contains("DRAIN"), "{n} is {state}: {reason}");
    }
}

/// GPU faults injected on two nodes of a real cluster, through each
/// node's own environment file (`$DIR/env-NODE`, sourced by the health
/// check): node2 loads the stand-in NVML with its link trained at x8 of
/// x16, node4
/// reads a kernel log holding an Xid 79. slurmctld drains both with
/// benchbook's reason and no other node; once the files are gone, each
/// node's next gates pass against the fleet and resume it.
#[cfg(feature = "cuda")]
#[test]
#[ignore = "needs root, Slurm and the machine to itself; CI runs it alone"]
fn slurm_drains_the_nodes_whose_gpus_report_faults_and_resumes_them_once_fixed() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let lib = tmp.path().join("fake-nvml");
    std::fs::create_dir_all(&lib).unwrap();
    crate::fake_cuda::build_fake_driver(&lib);
    let xid = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/health/gpu1_xid79.log");
    let archive_arg = archive.display().to_string();
    let options = gated(&archive_arg, "20");
    let dir = tmp.path().join("slurm");
    let Some(cluster) = Cluster::start_with(4, &dir, "17600", &options) else { return };
    let env2 = dir.join("env-node2");
    let env4 = dir.join("env-node4");
    std::fs::write(&env2, format!("export LD_LIBRARY_PATH={}\nexport FAKE_NVML_FAULT=pcie_x8\n", lib.display()))
        .unwrap();
    std::fs::write(&env4, format!("export BENCHBOOK_KERNEL_LOG={}\n", xid.display())).unwrap();

    cluster.wait("slurmctld draining node2 and node4", 150, || {
        cluster.node("node2").0.contains("DRAIN") && cluster.node("node4").0.contains("DRAIN")
    });
    let (_, reason2) = cluster.node("node2");
    assert!(
        reason2
            .starts_with("benchbook: drain: GPU 1 (GPU-fake-0001) pcie-width: PCIe link x8, the part's maximum is x16"),
        "{reason2}"
    );
    let (_, reason4) = cluster.node("node4");
    assert!(
        reason4.starts_with("benchbook: reset: PCI 0000:02:00 (no GPU NVML sees) xid: Xid 79 ")
            && reason4.contains("RESTART_BM"),
        "{reason4}"
    );
    for n in ["node1", "node3"] {
        let (state, reason) = cluster.node(n);
        assert!(!state.contains("DRAIN"), "healthy {n} is {state}: {reason}");
    }
    let v = verdicts(&archive);
    for (n, reason) in [("node2", &reason2), ("node4", &reason4)] {
        let bad = v[n].iter().find(|x| x.0 == "bad").unwrap_or_else(|| panic!("{n}: {:?}", v[n]));
        assert_eq!((bad.1.as_str(), bad.2.as_deref()), (reason.as_str(), Some("drained")), "{n}");
    }

    // Repaired: the faults are gone, the suite runs and passes, and each
    // node resumes itself.
    std::fs::remove_file(&env2).unwrap();
    std::fs::remove_file(&env4).unwrap();
    cluster.wait("node2 and node4 resumed", 300, || {
        !cluster.node("node2").0.contains("DRAIN") && !cluster.node("node4").0.contains("DRAIN")
    });
    let v = verdicts(&archive);
    for n in ["node2", "node4"] {
        assert!(v[n].iter().any(|x| x.0 == "pass" && x.2.as_deref() == Some("resumed")), "{n}: {:?}", v[n]);
    }
}

#[test]
#[ignore = "needs root, Slurm and the machine to itself; CI runs it alone"]
fn slurm_fleet_archives_in_a_bucket_without_a_shared_directory() {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = crate::object_store::Store::start(&tmp.path().join("s3")) else { return };
    let Some(cluster) = Cluster::start_with(4, &tmp.path().join("slurm"), "17700", &[]) else { return };
    let url = store.url("slurm");
    // Each node's mirror is its own folder; the only thing they share is
    // the bucket (and, as slurmd -N nodes on one host, a turns lock).
    let mirrors = tmp.path().join("mirrors");
    let suite = format!(
        "{} -q run memcpy --sizes 4M,64M --threads 1 --max-time 0.5 --fleet bucket --take-turns --archive {url}",
        common::bin()
    );
    let step = format!("BENCHBOOK_CACHE={}/$SLURMD_NODENAME exec {suite}", mirrors.display());
    let script = format!("for p in 1 2; do srun -N4 --ntasks-per-node=1 bash -c '{step}' || exit 1; done");
    let o = Command::new("timeout")
        .args(["-k", "10", "300", "salloc", "-N4", "bash", "-c", &script])
        .env("SLURM_CONF", cluster.conf())
        .env("BENCHBOOK_TURNS", tmp.path().join("turns.lock"))
        .envs(store.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .output()
        .expect("salloc");
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    for k in 1..=4 {
        let own = Archive::new(mirrors.join(format!("node{k}")).join("s3/benchbook/slurm")).runs().unwrap();
        assert_eq!(own.len(), 2, "node{k}'s mirror holds its own 2 runs, no other node's");
    }
    // A machine that ran nothing judges the fleet from the bucket alone.
    let check = |json: bool| {
        let mut c = store.bb(&tmp.path().join("batch-host"), None);
        c.args(["fleet", "check", "bucket", "--archive", &url]);
        if json {
            c.arg("--json");
        }
        c.output().unwrap()
    };
    let o = check(true);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("fleet check --json");
    let text = String::from_utf8_lossy(&check(false).stdout).into_owned();
    assert_eq!(o.status.code(), Some(0), "{text}");
    assert_eq!(v["drain"], serde_json::json!([]), "{text}");
    let mirror = Archive::new(tmp.path().join("batch-host/s3/benchbook/slurm"));
    let mut nodes = std::collections::BTreeMap::<String, usize>::new();
    for r in mirror.runs().unwrap() {
        let m = r.manifest().unwrap();
        assert_eq!(m.effective_status(), RunStatus::Complete);
        *nodes.entry(m.node().to_string()).or_default() += 1;
    }
    assert_eq!(nodes, (1..=4).map(|k| (format!("node{k}"), 2)).collect(), "every run once");
}
