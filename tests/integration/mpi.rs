//! Real MPI ranks: `mpirun -n 2` and `mpirun -n 4 --oversubscribe` on this
//! machine's CPU (feature `mpi`; CI installs Debian's Open MPI). Rows must
//! arrive from every rank, busbw/algbw must equal nccl-tests' factors, every
//! collective must validate, and a lone rank must get a clear error.

use crate::common;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use benchbook::prelude::*;

/// `mpirun` under a time limit: ranks that disagree on how many collective
/// calls to make wait for each other forever, and a test must fail instead.
fn mpirun(n: u32, args: &[&str], archive: &std::path::Path) -> Output {
    Command::new("timeout")
        .args(["-k", "10", "300", "mpirun", "--allow-run-as-root", "--oversubscribe", "-n", &n.to_string()])
        .arg(common::bin())
        .args(args)
        .arg("--archive")
        .arg(archive)
        .output()
        .expect("mpirun (apt-get install openmpi-bin)")
}

const FAST: [&str; 8] = ["--warmup", "0.005", "--min-time", "0.005", "--max-time", "0.05", "--quiet", "--json"];

fn run_ok(n: u32, what: &[&str], archive: &std::path::Path) -> RunDir {
    let args: Vec<&str> = ["run"].iter().chain(what).chain(FAST.iter()).copied().collect();
    let o = mpirun(n, &args, archive);
    assert!(
        !matches!(o.status.code(), Some(124 | 137)),
        "the job did not finish in 300 s: its ranks wait on each other (a decision not agreed)\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON summary, from rank 0 only");
    assert_eq!(v["status"], "complete");
    Archive::new(archive).resolve(v["run_id"].as_str().unwrap()).unwrap()
}

fn check_factors(run: &RunDir, n: f64) {
    let stats = point_stats(run.dataframe().unwrap().lazy()).unwrap();
    let coll: Vec<&PointStat> = stats.iter().filter(|p| p.bench == "collective").collect();
    assert!(!coll.is_empty());
    for p in coll {
        // all_to_all also runs on the first 2, 4, ... ranks of the job.
        let k = p.ranks.expect("collective rows name their ranks") as f64;
        assert!(k == n || (p.op == "all_to_all" && k < n), "{} on {k} of {n} ranks", p.op);
        let n = k;
        let want = match p.op.as_str() {
            "all_reduce" => 2.0 * (n - 1.0) / n,
            "all_gather" | "reduce_scatter" | "all_to_all" => (n - 1.0) / n,
            _ => 1.0,
        };
        let ratio = p.busbw_gbps.unwrap() / p.gbps_copied.unwrap();
        assert!((ratio - want).abs() < 1e-9, "{} busbw/algbw {ratio}, want {want}", p.op);
    }
}

#[test]
fn two_ranks_p2p_and_collectives() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_ok(
        2,
        &[
            "p2p",
            "collective",
            "--sizes",
            "4K,64K",
            "--latency-sizes",
            "8,1K",
            "--channels",
            "1,2",
            "--sync-every",
            "1,4",
        ],
        tmp.path(),
    );
    let rows = run.rows().unwrap();
    let ranks: BTreeSet<u32> = rows.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, BTreeSet::from([0, 1]), "rows from every rank");
    assert!(rows.iter().all(|r| r.status != Status::Failed), "every point validated");
    // Every measured point has the same samples on both ranks.
    for p in rows.iter().filter(|r| r.rank == 0 && r.status == Status::Measured) {
        assert!(rows.iter().any(|q| q.rank == 1 && q.point == p.point && q.sample == p.sample));
    }
    let ops: BTreeSet<&str> = rows.iter().map(|r| r.params.op.as_str()).collect();
    for op in [
        "send_recv",
        "bidirectional",
        "latency",
        "all_reduce",
        "all_gather",
        "reduce_scatter",
        "all_to_all",
        "broadcast",
        "put",
        "get",
        "put_round_trip",
    ] {
        assert!(ops.contains(op), "{op} missing");
    }
    check_one_sided(&rows, &[1, 2], &[1, 4]);
    let m = run.manifest().unwrap();
    let Some(mpi) = m.config.mpi() else { panic!("not an MPI configuration: {:?}", m.config) };
    assert_eq!(mpi.ranks.len(), 2);
    // The host is the machine, not the rank's binding (mpirun binds a rank
    // to one core where it has more cores than ranks).
    let machine = benchbook::host::online_cpus();
    assert!(machine >= std::thread::available_parallelism().unwrap().get());
    assert_eq!(m.host.online_cpus, Some(machine), "the machine's CPUs");
    assert!(m.host.logical_cpus <= machine);
    assert!(m.host.cpu_summary().contains(&format!("({machine} logical CPU")), "{}", m.host.cpu_summary());
    // The stored JSON, as other tools read it.
    let raw: serde_json::Value = serde_json::from_slice(&std::fs::read(run.manifest_path()).unwrap()).unwrap();
    let config = &raw["config"];
    assert_eq!(config["mpi"]["ranks"].as_array().unwrap().len(), 2);
    assert!(config["mpi"]["library"].as_str().unwrap().contains("Open MPI"));
    // two-sided 3 × 2; put/get 2 × 2 rhythms × 2 sizes; 2 channels × 2
    // strategies × 2 sizes; the put round trip × 2; collectives 5 × 2; the
    // device-buffer skips, one per benchmark (this MPI is not GPU-aware).
    assert_eq!(m.counts.points, 3 * 2 + 8 + 4 + 2 + 5 * 2 + 2, "points count once, not once per rank");
    assert_eq!(config["p2p_channels"], serde_json::json!([1, 2]));
    assert!(config["mpi"].get("rocm_aware").is_some(), "GPU awareness is recorded, known or not");
    let device =
        rows.iter().find(|r| r.params.variant.as_deref() == Some("device buffers")).expect("device buffers recorded");
    assert_eq!(device.status, Status::Skipped);
    let why = device.note.as_deref().unwrap();
    assert!(why.contains("CUDA") && why.contains("ROCm") && why.contains("MPIX_Query_cuda_support"), "{why}");
    let skipped: Vec<&str> = rows
        .iter()
        .filter(|r| r.params.variant.as_deref() == Some("device buffers"))
        .map(|r| r.params.bench.as_str())
        .collect();
    assert_eq!(skipped, ["p2p", "collective"], "each benchmark says why it ran on host buffers only");
    assert_eq!(config["mpi"]["device_buffers"], serde_json::Value::Null, "no GPU memory was handed to MPI");
    check_factors(&run, 2.0);
    // The bidirectional rows count both directions.
    let bi = rows.iter().find(|r| r.params.op == "bidirectional").unwrap();
    assert_eq!(bi.params.bytes_copied, bi.params.size_bytes.map(|s| 2 * s));
}

/// Every one-sided point measured and validated, with its parameters in
/// `axes` and its bytes counted by strategy.
fn check_one_sided(rows: &[benchbook::vocab::rows::Row], channels: &[u32], sync: &[u32]) {
    let one_sided: Vec<_> =
        rows.iter().filter(|r| r.rank == 0 && ["put", "get"].contains(&r.params.op.as_str())).collect();
    assert!(!one_sided.is_empty());
    let mut seen = BTreeSet::new();
    for r in &one_sided {
        assert_eq!(r.status, Status::Measured, "{:?}: {:?}", r.params, r.note);
        let axes: serde_json::Value = serde_json::from_str(r.params.axes.as_deref().unwrap()).unwrap();
        let (c, strategy, k) = (
            axes["channels"].as_u64().unwrap(),
            axes["strategy"].as_str().unwrap(),
            axes["sync_every"].as_u64().unwrap(),
        );
        let size = r.params.size_bytes.unwrap();
        let want = if strategy == "round_robin" { c * size } else { size };
        assert_eq!(r.params.bytes_copied, Some(want), "{axes}");
        assert_eq!(r.params.method.as_deref(), Some(format!("mpi_{}", r.params.op).as_str()));
        seen.insert((r.params.op.clone(), c, strategy.to_string(), k));
    }
    let max_sync = *sync.iter().max().unwrap() as u64;
    for &k in sync {
        for op in ["put", "get"] {
            assert!(seen.contains(&(op.to_string(), 1, "split".to_string(), k as u64)), "{op} every {k}");
        }
    }
    for &c in channels.iter().filter(|&&c| c > 1) {
        for strategy in ["split", "round_robin"] {
            assert!(seen.contains(&("put".to_string(), c as u64, strategy.to_string(), max_sync)), "{c} {strategy}");
        }
    }
    let trips = rows.iter().filter(|r| r.params.op == "put_round_trip").collect::<Vec<_>>();
    assert!(!trips.is_empty() && trips.iter().all(|r| r.status == Status::Measured), "put round trips validated");
}

#[test]
fn four_ranks_oversubscribed_collectives() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_ok(
        4,
        &["collective", "p2p", "--sizes", "4K,64K", "--latency-sizes", "8", "--channels", "1,4", "--sync-every", "1,8"],
        tmp.path(),
    );
    let rows = run.rows().unwrap();
    let ranks: BTreeSet<u32> = rows.iter().map(|r| r.rank).collect();
    assert_eq!(ranks, BTreeSet::from([0, 1, 2, 3]));
    assert!(rows.iter().all(|r| r.status != Status::Failed), "every point validated");
    check_factors(&run, 4.0);
    // all_to_all over 2 and 4 ranks, at both sizes, validated.
    let a2a: BTreeSet<(u32, u64)> = rows
        .iter()
        .filter(|r| r.params.op == "all_to_all" && r.status == Status::Measured)
        .map(|r| (r.params.ranks.unwrap(), r.params.size_bytes.unwrap()))
        .collect();
    assert_eq!(a2a, BTreeSet::from([(2, 4096), (2, 65536), (4, 4096), (4, 65536)]));
    // One-sided transfers from rank 0 to each of its three peers.
    check_one_sided(&rows, &[1, 4], &[1, 8]);
    let peers: BTreeSet<&str> =
        rows.iter().filter(|r| r.params.op == "put").filter_map(|r| r.params.peer.as_deref()).collect();
    assert_eq!(peers, BTreeSet::from(["0<->1", "0<->2", "0<->3"]));
    // Each rank stores its own times (the schedule decided on the maxima):
    // in a put from rank 0 to rank 1, ranks 2 and 3 only wait at barriers.
    let put = rows.iter().find(|r| r.params.op == "put" && r.status == Status::Measured && r.rank == 0).unwrap();
    let times: BTreeSet<u64> = rows
        .iter()
        .filter(|r| r.point == put.point && r.sample == put.sample)
        .map(|r| r.seconds.unwrap().to_bits())
        .collect();
    assert!(times.len() > 1, "every rank stored the same time for sample {:?} of a put", put.sample);
    // A sample's time is the slowest rank's.
    let df = run.dataframe().unwrap();
    let rows = benchbook::archive::schema::from_dataframe(&df).unwrap();
    let p = rows.iter().find(|r| r.status == Status::Measured).unwrap();
    let slowest = rows
        .iter()
        .filter(|r| r.point == p.point && r.sample == Some(0))
        .map(|r| r.seconds.unwrap() / r.iterations.unwrap() as f64)
        .fold(0.0, f64::max);
    let stats = point_stats(df.lazy()).unwrap();
    let s = stats.iter().find(|s| s.point == p.point).unwrap();
    assert!(s.summary.max >= slowest, "max over samples {} < slowest rank's sample 0 {slowest}", s.summary.max);
}

#[test]
fn a_lone_rank_gets_a_clear_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let o = mpirun(1, &["run", "p2p", "--quiet"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("at least 2 ranks") && err.contains("mpirun -n 2"), "{err}");
    assert!(!tmp.path().join("runs").exists());
    // Mixing CPU and MPI benchmarks in one job is refused before MPI starts.
    let o = mpirun(2, &["run", "p2p", "memcpy", "--quiet"], tmp.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("own job"));
}

/// `run links` on 4 ranks: the first pass measures every pair exactly once
/// in 3 rounds of 2 simultaneous pairs, every rank in every round; each
/// retest pits a suspect's endpoint against a mostly good rank (fewer
/// than half of its links suspect); `fleet check` reads the matrix back with one name per
/// rank (they share this host) and `fleet report` draws its heatmap.
#[test]
fn a_link_sweep_measures_every_pair_once_and_retests_against_a_good_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let run = run_ok(4, &["links", "--sizes", "64K", "--fleet", "lk"], tmp.path());
    let rows: Vec<Row> = run.rows().unwrap().into_iter().filter(|r| r.status == Status::Measured).collect();
    let rounds: BTreeSet<String> =
        rows.iter().filter(|r| r.params.op == "round_robin").map(|r| r.params.peer.clone().unwrap()).collect();
    assert_eq!(rounds.len(), 3, "{rounds:?}");
    let mut pairs: Vec<(usize, usize)> = rounds.iter().flat_map(|p| benchbook::vocab::pairs::parse(p)).collect();
    pairs.sort_unstable();
    assert_eq!(pairs, vec![(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]);
    for round in &rounds {
        let ranks: BTreeSet<u32> =
            rows.iter().filter(|r| r.params.peer.as_ref() == Some(round)).map(|r| r.rank).collect();
        assert_eq!(ranks.len(), 4, "every rank exchanges in {round}");
    }
    let o = Command::new(common::bin())
        .args(["fleet", "check", "lk", "--json", "--fail-on", "never", "--archive"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let sweep = &v["links"][0];
    let names: BTreeSet<&str> = sweep["nodes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert_eq!(names.len(), 4, "one name per rank: {names:?}");
    let links = sweep["links"].as_array().unwrap();
    assert_eq!(links.len(), 6);
    assert!(links.iter().all(|l| l["gbps"].as_f64().unwrap() > 0.0), "{links:?}");
    let suspects: Vec<[&str; 2]> = links
        .iter()
        .filter(|l| l["suspect"] == true)
        .map(|l| [l["a"].as_str().unwrap(), l["b"].as_str().unwrap()])
        .collect();
    let touching = |n: &str| suspects.iter().filter(|s| s.contains(&n)).count();
    for r in sweep["retests"].as_array().unwrap() {
        let (node, good) = (r["node"].as_str().unwrap(), r["good"].as_str().unwrap());
        assert!(touching(node) > 0, "{r}");
        // The suspect link itself, measured again: both its ends touch it.
        if suspects.iter().any(|s| s.contains(&node) && s.contains(&good)) {
            continue;
        }
        // Each rank has 3 links: a mostly good one has at most 1 suspect.
        assert!(touching(good) <= 1, "retested against a mostly bad rank: {r}");
    }
    let retest_rows = rows.iter().filter(|r| r.params.op == "retest").count();
    assert_eq!(retest_rows > 0, !sweep["retests"].as_array().unwrap().is_empty());
    let out = tmp.path().join("report");
    let o = Command::new(common::bin())
        .args(["fleet", "report", "lk", "--out", out.to_str().unwrap(), "--archive"])
        .arg(tmp.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(std::fs::read_to_string(out.join("links-1.svg")).unwrap().contains("<svg"));
}
