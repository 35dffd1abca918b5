//! How often `fleet check` and `fleet gate` raise a false alarm on clean
//! fleets, and how often they find a node 5 % slow, on simulated fleets
//! judged by the library's own code (`analysis::fleet::judge`,
//! `analysis::fleet::gate::judge`, `confirm`).
//!
//!   cargo run --release --example fleet_rates -- [FLEETS] [NODES] [POINTS] [THRESHOLD] [NODE_SD] [SLOW] [RUNS]
//!
//! The noise model (stated, not measured): each node has its own speed
//! (sd NODE_SD, default 0.5 %, the same on every point); each run of a node is off as a whole
//! (sd 1 %), and 1 % of runs are unlucky (10 % slow as a whole: the rate
//! measured on this project's Slurm cluster, 1 run in about 120); each run's
//! samples scatter by a coefficient of variation drawn from 2–5 % per run;
//! 1 % of samples are bursts (1.5–3× slower). A slow node is SLOW (default
//! 5 %) slower on every point. Every node has 3 runs of 5 rounds × 20 samples per point.
//! `fleet check` judges the 3 runs; the gate judges each node's fresh run
//! (and a retest when it fails) against the others' 3 runs and its own.
//! Prints JSON.

use std::collections::BTreeMap;

use benchbook::analysis::fleet::gate::{self, GateData, GateRule};
use benchbook::analysis::fleet::{judge, Rule, Runs};
use rand::{Rng, RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};

struct Noise {
    run: f64,
    unlucky: f64,
    cv: (f64, f64),
    burst: f64,
}

/// Rounds per point and samples per round: what a short memcpy point gets.
const ROUNDS: usize = 5;
const SAMPLES: usize = 20;

const NOISE: Noise = Noise { run: 0.01, unlucky: 0.01, cv: (0.02, 0.05), burst: 0.01 };

/// One run of a node of speed `speed` on `points` points.
fn run(speed: f64, points: usize, rng: &mut impl Rng) -> Vec<Vec<Vec<f64>>> {
    let mut r = speed * Normal::new(1.0, NOISE.run).unwrap().sample(rng);
    if rng.random_bool(NOISE.unlucky) {
        r *= 0.9;
    }
    let cv = rng.random_range(NOISE.cv.0..NOISE.cv.1);
    let s = Normal::new(1.0, cv).unwrap();
    (0..points)
        .map(|_| {
            (0..ROUNDS)
                .map(|_| {
                    (0..SAMPLES)
                        .map(|_| {
                            let burst = if rng.random_bool(NOISE.burst) { rng.random_range(1.5..3.0) } else { 1.0 };
                            r * s.sample(rng).max(0.05) / burst
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

struct Fleet {
    /// point → node → runs.
    history: BTreeMap<String, BTreeMap<String, Runs>>,
    speeds: Vec<f64>,
}

fn fleet(nodes: usize, points: usize, runs: usize, slow: Option<f64>, node_sd: f64, rng: &mut impl Rng) -> Fleet {
    let speeds: Vec<f64> = (0..nodes)
        .map(|k| Normal::new(1.0, node_sd).unwrap().sample(rng) * if k == 0 { 1.0 - slow.unwrap_or(0.0) } else { 1.0 })
        .collect();
    let mut history: BTreeMap<String, BTreeMap<String, Runs>> = BTreeMap::new();
    for (k, &sp) in speeds.iter().enumerate() {
        for _ in 0..runs {
            for (p, rounds) in run(sp, points, rng).into_iter().enumerate() {
                history.entry(format!("point {p}")).or_default().entry(format!("node{k:02}")).or_default().push(rounds);
            }
        }
    }
    Fleet { history, speeds }
}

/// The gate's verdict on node `k`: bad when a point fails its pass and its retest.
fn gate_node(f: &Fleet, k: usize, points: usize, rule: &GateRule, rng: &mut impl Rng) -> bool {
    let me = format!("node{k:02}");
    let mut d = GateData { node: me.clone(), ..GateData::default() };
    let (first, second) = (run(f.speeds[k], points, rng), run(f.speeds[k], points, rng));
    for (p, (a, b)) in first.into_iter().zip(second).enumerate() {
        let point = format!("point {p}");
        d.fresh.insert(point.clone(), vec![a, b]);
        let nodes = &f.history[&point];
        // As the gate reads them: each peer's latest 3 runs, its own latest 5.
        let latest = |r: &Runs, k: usize| r[r.len().saturating_sub(k)..].to_vec();
        d.own.insert(point.clone(), latest(&nodes[&me], 5));
        d.peers
            .insert(point, nodes.iter().filter(|(n, _)| **n != me).map(|(n, r)| (n.clone(), latest(r, 3))).collect());
    }
    let one = gate::judge(&d.with_fresh(&[0]), rule);
    if one.faults().next().is_none() {
        return false;
    }
    let two = gate::judge(&d.with_fresh(&[1]), rule);
    !gate::confirm(&[&one, &two]).is_empty()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let (fleets, nodes, points, threshold) =
        (arg(0, 100.0) as usize, arg(1, 8.0) as usize, arg(2, 5.0) as usize, arg(3, 0.05));
    let node_sd = arg(4, 0.005);
    let deficit = arg(5, 0.05);
    let runs = arg(6, 3.0) as usize;
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    let rule = Rule { threshold, ..Rule::default() };
    let grule = GateRule { threshold, ..GateRule::default() };
    let (mut check_false, mut check_found, mut gate_false, mut gate_found) = (0, 0, 0, 0);
    let started = std::time::Instant::now();
    for _ in 0..fleets {
        let clean = fleet(nodes, points, runs, None, node_sd, &mut rng);
        if judge(&clean.history, &rule).nodes.iter().any(|n| n.slow) {
            check_false += 1;
        }
        if (0..nodes).any(|k| gate_node(&clean, k, points, &grule, &mut rng)) {
            gate_false += 1;
        }
        let slow = fleet(nodes, points, runs, Some(deficit), node_sd, &mut rng);
        let j = judge(&slow.history, &rule);
        if j.nodes.iter().any(|n| n.slow && n.node == "node00") {
            check_found += 1;
        }
        if gate_node(&slow, 0, points, &grule, &mut rng) {
            gate_found += 1;
        }
    }
    println!(
        "{}",
        serde_json::json!({
            "fleets_of_each_kind": fleets, "nodes": nodes, "points": points, "runs_per_node": runs, "threshold": threshold, "node_sd": node_sd, "slow_node_deficit": deficit,
            "check": { "clean_fleets_with_a_false_alarm": check_false, "slow_node_found": check_found },
            "gate": { "clean_fleets_with_a_node_called_bad": gate_false, "slow_node_called_bad": gate_found },
            "seconds": started.elapsed().as_secs_f64(),
        })
    );
}
