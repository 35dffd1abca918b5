use std::collections::BTreeMap;

use rand_distr::{Distribution, Normal};

use super::*;

const P: &str = "memcpy copy 64 MiB 1T";

/// `n` runs of speed `level`: 3 rounds of 5 samples, each run off by
/// `run_sd`, each sample by 2 %.
fn runs(n: usize, level: f64, run_sd: f64, seed: u64) -> Runs {
    let mut rng = crate::vocab::stats::seeded_rng(seed);
    let (run, sample) = (Normal::new(1.0, run_sd).unwrap(), Normal::new(1.0, 0.02).unwrap());
    (0..n)
        .map(|_| {
            let r = level * run.sample(&mut rng);
            (0..3).map(|_| (0..5).map(|_| r * sample.sample(&mut rng)).collect()).collect()
        })
        .collect()
}

fn data(fresh_level: f64, peers: usize, own: usize, seed: u64) -> GateData {
    let mut d = GateData { node: "n0".into(), ..GateData::default() };
    d.fresh.insert(P.into(), runs(1, fresh_level, 0.01, seed));
    let p: BTreeMap<String, Runs> =
        (1..=peers).map(|k| (format!("n{k}"), runs(3, 1.0, 0.01, seed + k as u64))).collect();
    if peers > 0 {
        d.peers.insert(P.into(), p);
    }
    if own > 0 {
        d.own.insert(P.into(), runs(own, 1.0, 0.01, seed + 100));
    }
    d
}

#[test]
fn a_node_like_its_fleet_passes_and_a_slow_one_fails_against_it() {
    let rule = GateRule::default();
    let ok = judge(&data(1.0, 4, 0, 1), &rule);
    assert!(ok.judged());
    assert_eq!(ok.faults().count(), 0, "{ok:?}");
    let slow = judge(&data(0.8, 4, 0, 1), &rule);
    let p = slow.faults().next().expect("a fault");
    assert_eq!(p.fault, Some(Line::Fleet));
    let a = p.fleet.as_ref().unwrap();
    assert!(a.ratio < 0.85 && a.ratio_high < 0.95 && a.z.unwrap() < -Z_SLOW, "{a:?}");
    let r = reason::fault(p, rule.threshold);
    assert!(
        r.starts_with("benchbook: memcpy copy 64 MiB 1T at 0.") && r.contains("× fleet") && r.ends_with("below 0.95"),
        "{r}"
    );
}

#[test]
fn too_few_peers_and_no_history_is_not_judged() {
    let j = judge(&data(0.5, 2, 2, 3), &GateRule::default());
    assert!(!j.judged() && j.faults().count() == 0, "{j:?}");
}

#[test]
fn history_judges_only_where_the_fleet_cannot() {
    let rule = GateRule::default();
    // Two peers: no fleet line; five earlier runs: a history line that fails.
    let j = judge(&data(0.8, 2, 5, 4), &rule);
    let p = &j.points[0];
    assert!(p.fleet.is_none() && p.fault == Some(Line::History), "{p:?}");
    assert!(reason::fault(p, rule.threshold).contains("its own last 5 runs"));
    // With a fleet that is as slow as this node now (a driver update), its
    // history says slower, but the fleet line rules: no fault.
    let mut d = data(0.8, 0, 5, 4);
    d.peers.insert(P.into(), (1..=4).map(|k| (format!("n{k}"), runs(3, 0.8, 0.01, 40 + k))).collect());
    let j = judge(&d, &rule);
    assert!(j.points[0].history.as_ref().unwrap().below && j.points[0].fault.is_none(), "{:?}", j.points[0]);
}

#[test]
fn a_floor_is_an_absolute_line() {
    let mut d = data(1.0, 0, 0, 5);
    let spec = floors::parse("t", floors::BUILTIN).unwrap().remove(0);
    // The floor as 1.1 × this node's speed: below it with confidence.
    d.floors.insert(P.into(), Floor { spec: spec.clone(), ops_per_second: 1.1 });
    let j = judge(&d, &GateRule::default());
    assert_eq!(j.points[0].fault, Some(Line::Floor));
    assert!(reason::fault(&j.points[0], 0.05).contains("floor of 48.0 GB/s"), "{}", reason::fault(&j.points[0], 0.05));
    d.floors.insert(P.into(), Floor { spec, ops_per_second: 0.9 });
    assert_eq!(judge(&d, &GateRule::default()).faults().count(), 0);
}

#[test]
fn only_points_that_fail_every_pass_are_confirmed() {
    let rule = GateRule::default();
    let mut d = data(0.8, 4, 0, 6);
    // A second fresh run, at full speed: the first was a flaky pass.
    d.fresh.get_mut(P).unwrap().extend(runs(1, 1.0, 0.01, 7));
    let first = judge(&d.with_fresh(&[0]), &rule);
    let retest = judge(&d.with_fresh(&[1]), &rule);
    assert_eq!(first.faults().count(), 1);
    assert_eq!(retest.faults().count(), 0);
    assert!(confirm(&[&first, &retest]).is_empty());
    assert_eq!(confirm(&[&first, &first]).into_iter().collect::<Vec<_>>(), vec![P.to_string()]);
}

#[test]
fn the_builtin_floors_parse_and_a_bad_file_is_refused_by_name() {
    let f = floors::parse("data/reference/floors.toml", floors::BUILTIN).unwrap();
    assert!(f.iter().all(|f| !f.source.is_empty() && f.gbps > 0.0));
    assert!(f.iter().any(|f| f.tool == "DCGM diag") && f.iter().any(|f| f.tool == "Azure NHC"));
    let e = floors::parse("mine.toml", "[[floor]]\ntool = 1").unwrap_err().to_string();
    assert!(e.contains("mine.toml"), "{e}");
}

/// The floors against the real H200 run committed in data/runs: they apply
/// to pinned h2d/d2h from 64 MiB and device copies from 256 MiB, not to
/// pageable copies, and the GPU clears every one of them.
#[test]
fn a_real_h200_clears_every_floor_that_applies_and_pageable_copies_have_none() {
    let archive = crate::archive::Archive::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data"));
    let rows = archive.resolve("h200-copies-cfb6").unwrap().rows().unwrap();
    let floors = floors::load(None).unwrap();
    let specs = crate::analysis::specs::SpecBook::builtin();
    // point → its speeds, its floor, its variant.
    type Speeds = (Vec<f64>, Option<Floor>, Option<String>);
    let mut speeds: BTreeMap<String, Speeds> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == crate::vocab::rows::Status::Measured) {
        let (Some(n), Some(s)) = (r.iterations, r.seconds) else { continue };
        let e = speeds
            .entry(crate::analysis::fleet::fleet_point(r))
            .or_insert_with(|| (Vec::new(), floors::floor_for(&floors, &specs, r), r.params.variant.clone()));
        e.0.push(n as f64 / s);
    }
    let with_floor: Vec<_> = speeds.iter().filter(|(_, v)| v.1.is_some()).collect();
    // h2d and d2h pinned at 64 MiB..2 GiB (6 sizes each), memcpy copy at
    // 256 MiB..2 GiB (4 sizes × 2 methods × 2 cache states).
    assert_eq!(with_floor.len(), 12 + 16, "{:?}", with_floor.iter().map(|(p, _)| p).collect::<Vec<_>>());
    assert!(speeds.values().filter(|v| v.2.as_deref() == Some("pageable")).all(|v| v.1.is_none()));
    for (point, (s, floor, _)) in with_floor {
        let f = floor.as_ref().unwrap();
        let m = crate::vocab::stats::median_unsorted(&mut s.clone());
        assert!(
            m > 1.1 * f.ops_per_second,
            "{point}: {m} ops/s against a floor of {} ({})",
            f.ops_per_second,
            f.spec.tool
        );
    }
}
