//! The fleet judgement on controlled samples: slow nodes found, small or
//! noisy ones not claimed, clean fleets within the promised error rate.

use super::*;
use proptest::prelude::*;
use rand_distr::{Distribution, Normal};

/// `n` nodes of `k` samples around `level` with a relative noise;
/// `slow` nodes run at `factor` × the level.
fn fleet(n: usize, k: usize, noise: f64, slow: &[(usize, f64)], seed: u64) -> BTreeMap<String, Runs> {
    let mut rng = crate::vocab::stats::seeded_rng(seed);
    (0..n)
        .map(|i| {
            let f = slow.iter().find(|(j, _)| *j == i).map_or(1.0, |(_, f)| *f);
            // Each node has its own small offset, as real nodes do.
            let offset = Normal::new(1.0, noise / 2.0).unwrap().sample(&mut rng);
            let d = Normal::new(100.0 * f * offset, 100.0 * noise).unwrap();
            (format!("node{i}"), vec![vec![(0..k).map(|_| d.sample(&mut rng).max(1.0)).collect()]])
        })
        .collect()
}

#[test]
fn a_slow_node_is_named_and_only_it() {
    let nodes = fleet(8, 20, 0.02, &[(3, 0.7)], 1);
    let j = judge_point("memcpy", &nodes, 8, &Rule::default()).unwrap();
    let slow: Vec<&str> = j.iter().filter(|j| j.slow).map(|j| j.node.as_str()).collect();
    assert_eq!(slow, vec!["node3"], "{j:#?}");
    let n3 = j.iter().find(|j| j.node == "node3").unwrap();
    assert!(n3.ratio_low < n3.ratio && n3.ratio < n3.ratio_high && n3.ratio_high < 0.95, "{n3:?}");
    assert!(n3.z < -Z_SLOW && n3.confidence > 0.99, "{n3:?}");
}

#[test]
fn three_nodes_are_the_least_and_no_spread_is_no_outlier() {
    let two: BTreeMap<String, Runs> = [("a".into(), vec![vec![vec![1.0]]]), ("b".into(), vec![vec![vec![2.0]]])].into();
    assert!(judge_point("p", &two, 2, &Rule::default()).is_none());
    let same: BTreeMap<String, Runs> = (0..4).map(|i| (format!("n{i}"), vec![vec![vec![5.0, 5.0]]])).collect();
    let j = judge_point("p", &same, 4, &Rule::default()).unwrap();
    assert!(j.iter().all(|j| j.z == 0.0 && !j.slow && j.ratio == 1.0), "{j:?}");
    // MAD 0 but one node off: the mean-absolute-deviation fallback scores it.
    let (c, s) = centre_and_scale(&[10.0, 10.0, 10.0, 4.0]);
    assert_eq!(c, 10.0);
    assert!((s.unwrap() - 1.2533 * 1.5).abs() < 1e-9);
}

#[test]
fn a_small_slowdown_inside_the_threshold_is_not_slow() {
    // 3 % slower, very precisely: an outlier by z, but not by δ = 5 %.
    let nodes = fleet(8, 40, 0.002, &[(5, 0.97)], 7);
    let j = judge_point("p", &nodes, 8, &Rule::default()).unwrap();
    let n5 = j.iter().find(|j| j.node == "node5").unwrap();
    assert!(n5.z < -Z_SLOW && !n5.slow, "{n5:?}");
}

#[test]
fn clean_fleets_raise_few_false_alarms() {
    // 100 clean fleets of 5 nodes × 2 points, each node with its own
    // offset: the family-wise rate of naming anyone must stay within
    // the 5 % the rule promises.
    let rule = Rule { replicates: 400, ..Rule::default() };
    let alarms = (0..100)
        .filter(|seed| {
            let samples: BTreeMap<String, BTreeMap<String, Runs>> =
                (0..2).map(|p| (format!("p{p}"), fleet(5, 10, 0.05, &[], seed * 2 + p))).collect();
            judge(&samples, &rule).nodes.iter().any(|n| n.slow)
        })
        .count();
    eprintln!("{alarms} of 100 clean fleets named a node");
    assert!(alarms <= 5, "{alarms} of 100 clean fleets named a node");
}

/// `n` nodes of `rounds` rounds of `k` tight samples each; `burst`
/// rounds of node 1 run at `factor` × the level (noise that hit part
/// of its run, as a neighbour's load does).
fn rounds_fleet(n: usize, rounds: usize, k: usize, burst: usize, factor: f64, seed: u64) -> BTreeMap<String, Runs> {
    let mut rng = crate::vocab::stats::seeded_rng(seed);
    let d = Normal::new(1.0, 0.003).unwrap();
    (0..n)
        .map(|i| {
            let node = (0..rounds)
                .map(|r| {
                    let f = if i == 1 && r < burst { factor } else { 1.0 };
                    (0..k).map(|_| 100.0 * f * d.sample(&mut rng)).collect()
                })
                .collect();
            (format!("node{i}"), vec![node])
        })
        .collect()
}

#[test]
fn a_burst_in_some_rounds_is_not_a_slow_node_but_a_slow_node_in_every_round_is() {
    // 2 of node1's 5 rounds at 0.8: pooled, its samples' median would
    // sit low with a tight interval; by rounds, the interval admits 1.
    let nodes = rounds_fleet(4, 5, 100, 2, 0.8, 3);
    let j = judge_point("p", &nodes, 4, &Rule::default()).unwrap();
    let n1 = j.iter().find(|j| j.node == "node1").unwrap();
    assert!(!n1.slow && n1.rounds == 5 && n1.samples == 500, "{n1:?}");
    assert!(n1.ratio_low < 0.9 && n1.ratio_high > 0.95, "{n1:?}");
    // Every round slow: named, with an interval below 0.9.
    let nodes = rounds_fleet(4, 5, 100, 5, 0.8, 3);
    let j = judge_point("p", &nodes, 4, &Rule::default()).unwrap();
    let slow: Vec<&NodeJudgement> = j.iter().filter(|j| j.slow).collect();
    assert_eq!(slow.len(), 1, "{j:#?}");
    assert!(slow[0].node == "node1" && slow[0].ratio_high < 0.9, "{:?}", slow[0]);
}

#[test]
fn a_5_percent_slow_node_among_16_is_found_and_a_2_percent_one_is_not_claimed() {
    // 16 nodes, 1 % sample noise; node 9 at 0.95. At δ = 5 % a node
    // exactly 5 % slow cannot have its whole interval below 0.95, so it
    // is found at δ = 3 %, and a 2 % slowdown is not claimed at 5 %.
    let nodes = fleet(16, 30, 0.01, &[(9, 0.95)], 11);
    let rule = Rule { threshold: 0.03, ..Rule::default() };
    let j = judge_point("p", &nodes, 16, &rule).unwrap();
    let slow: Vec<&str> = j.iter().filter(|j| j.slow).map(|j| j.node.as_str()).collect();
    assert_eq!(slow, ["node9"], "{j:#?}");
    let nodes = fleet(16, 30, 0.01, &[(9, 0.98)], 11);
    let j = judge_point("p", &nodes, 16, &Rule::default()).unwrap();
    assert!(j.iter().all(|j| !j.slow), "{j:#?}");
}

#[test]
fn a_noisy_node_with_a_wide_interval_is_not_called_slow() {
    // Node 2's median sits 10 % low, but its samples spread ±40 %: its
    // interval reaches past 0.95, so it is not slow, whatever its z.
    let mut nodes = fleet(8, 12, 0.005, &[], 5);
    let mut rng = crate::vocab::stats::seeded_rng(9);
    let noisy = Normal::new(90.0, 40.0).unwrap();
    nodes.insert("node2".into(), vec![vec![(0..12).map(|_| f64::max(noisy.sample(&mut rng), 1.0)).collect()]]);
    let j = judge_point("p", &nodes, 8, &Rule::default()).unwrap();
    let n2 = j.iter().find(|j| j.node == "node2").unwrap();
    assert!(!n2.slow && n2.ratio_high >= 0.95 && n2.ratio_high - n2.ratio_low > 0.2, "{n2:?}");
}

#[test]
fn one_unlucky_run_of_three_is_not_a_slow_node_but_three_are() {
    let run = |f: f64, seed: u64| -> Vec<Vec<f64>> {
        let mut rng = crate::vocab::stats::seeded_rng(seed);
        let d = Normal::new(100.0 * f, 0.3).unwrap();
        (0..5).map(|_| (0..50).map(|_| d.sample(&mut rng)).collect()).collect()
    };
    let fleet = |unlucky: usize| -> BTreeMap<String, Runs> {
        (0..4)
            .map(|i| {
                let runs = (0..3).map(|r| run(if i == 2 && r < unlucky { 0.85 } else { 1.0 }, i * 10 + r as u64));
                (format!("node{i}"), runs.collect())
            })
            .collect()
    };
    let j = judge_point("p", &fleet(1), 4, &Rule::default()).unwrap();
    let n2 = j.iter().find(|j| j.node == "node2").unwrap();
    assert!(!n2.slow && n2.runs == 3 && n2.rounds == 15, "{n2:?}");
    let j = judge_point("p", &fleet(3), 4, &Rule::default()).unwrap();
    let slow: Vec<&str> = j.iter().filter(|j| j.slow).map(|j| j.node.as_str()).collect();
    assert_eq!(slow, ["node2"], "{j:#?}");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    /// The interval holds the point estimate, and a node faster than
    /// the centre is never slow.
    #[test]
    fn intervals_hold_the_ratio_and_fast_nodes_are_never_slow(
        n in 3usize..9, k in 1usize..12, noise in 0.001f64..0.3, seed in 0u64..1000,
    ) {
        let nodes = fleet(n, k, noise, &[], seed);
        let j = judge_point("p", &nodes, n, &Rule { replicates: 300, ..Rule::default() }).unwrap();
        for x in &j {
            prop_assert!(x.ratio_low <= x.ratio_high, "{:?}", x);
            prop_assert!(!(x.ratio >= 1.0 && x.slow), "{:?}", x);
            prop_assert!(x.z.is_finite());
        }
    }
}

#[test]
fn a_large_fleet_names_its_slow_node_in_linear_time_and_screens_the_rest() {
    let n = large::LARGE_FLEET * 3;
    let nodes = fleet(n, 20, 0.02, &[(7, 0.7)], 3);
    let tests = n * 17;
    let j = judge_point("memcpy", &nodes, tests, &Rule::default()).unwrap();
    let slow: Vec<&str> = j.iter().filter(|j| j.slow).map(|j| j.node.as_str()).collect();
    assert_eq!(slow, vec!["node7"]);
    let n7 = j.iter().find(|j| j.node == "node7").unwrap();
    // Its interval is the corrected one; the others' are 95 % ones.
    assert!(!n7.screened && n7.confidence > 1.0 - 0.05 / tests as f64 - 1e-12, "{n7:?}");
    assert!(n7.ratio_low < n7.ratio && n7.ratio < n7.ratio_high && n7.ratio_high < 0.95, "{n7:?}");
    let rest: Vec<_> = j.iter().filter(|j| j.node != "node7").collect();
    assert!(rest.iter().all(|j| j.screened && j.confidence == 0.95 && j.ratio_low <= j.ratio_high), "{rest:?}");
    // A clean large fleet: nobody.
    let clean = fleet(n, 20, 0.02, &[], 4);
    assert!(judge_point("memcpy", &clean, tests, &Rule::default()).unwrap().iter().all(|j| !j.slow));
}
