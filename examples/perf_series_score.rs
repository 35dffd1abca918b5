//! The change-point detector on benchmark-like series, held apart from
//! TCPD (`examples/tcpd_score.rs`): run medians with steps, drifts,
//! outliers and bimodal runs, generated from the model below, scored with
//! the same F1 (margin 5) and cover (`analysis::changepoints::score`, the
//! generating model's change points as the one annotator), and the false
//! alarms per 1,000 series that have no change. "zero" (never a change)
//! is scored beside it: a detector has to beat saying nothing.
//!
//!   cargo run --release --example perf_series_score -- [SERIES_PER_CELL] [SEED]
//!
//! The model (stated, not measured): a series is 60 runs of one point at
//! level 100; each run's median is off by Normal(0, CV) (CV 0.5, 1 or 2 %).
//! - steady: nothing else (no change);
//! - step: the level moves by ±3, 5 or 10 % at a run drawn from 10..50;
//! - two steps: two such moves, at least 10 runs apart;
//! - drift: the level moves by 10 % linearly over 10 runs from a run drawn
//!   from 10..40 (the change annotated at the drift's middle);
//! - outliers: steady, with 3 runs 20 % slow (no change);
//! - bimodal: each run lands in a second mode 3 % slower with probability
//!   0.3, as a run does when its buffers land on another NUMA node (no
//!   change).
//!
//! Prints a table (Markdown) per CV.

use benchbook::analysis::changepoints::{change_points, score, ChangeRule};
use rand::{RngExt, SeedableRng};
use rand_distr::{Distribution, Normal};

const N: usize = 60;

/// One generated series and its true change points.
fn series(kind: &str, cv: f64, rng: &mut rand::rngs::StdRng) -> (Vec<f64>, Vec<usize>) {
    let noise = Normal::new(0.0, cv).unwrap();
    let mut level = vec![100.0; N];
    let mut truth = Vec::new();
    let step = |rng: &mut rand::rngs::StdRng| {
        let size = [0.03, 0.05, 0.10][rng.random_range(0..3)];
        if rng.random_bool(0.5) {
            1.0 + size
        } else {
            1.0 - size
        }
    };
    match kind {
        "step" => {
            let at = rng.random_range(10..50);
            let k = step(rng);
            level[at..].iter_mut().for_each(|l| *l *= k);
            truth.push(at);
        }
        "two steps" => {
            let a = rng.random_range(10..35);
            let b = rng.random_range(a + 10..50);
            for at in [a, b] {
                let k = step(rng);
                level[at..].iter_mut().for_each(|l| *l *= k);
                truth.push(at);
            }
        }
        "drift" => {
            let at = rng.random_range(10..40);
            for (i, l) in level.iter_mut().enumerate().skip(at) {
                *l *= 1.0 - 0.10 * ((i - at + 1) as f64 / 10.0).min(1.0);
            }
            truth.push(at + 5);
        }
        _ => {}
    }
    let mut xs: Vec<f64> = level.iter().map(|l| l * (1.0 + noise.sample(rng))).collect();
    match kind {
        "outliers" => {
            for _ in 0..3 {
                let i = rng.random_range(0..N);
                xs[i] *= 0.8;
            }
        }
        "bimodal" => {
            for x in xs.iter_mut() {
                if rng.random_bool(0.3) {
                    *x *= 0.97;
                }
            }
        }
        _ => {}
    }
    (xs, truth)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let per: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(1000);
    let seed: u64 = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1);
    let rule = ChangeRule::default();
    println!("benchbook ({}), {per} series a cell, seed {seed}\n", rule.describe());
    for cv in [0.005, 0.01, 0.02] {
        println!("CV {:.1} %\n", cv * 100.0);
        println!("| series | F1 | cover | zero's F1 | zero's cover | series with a false change, per 1,000 |");
        println!("|---|---:|---:|---:|---:|---:|");
        for kind in ["steady", "step", "two steps", "drift", "outliers", "bimodal"] {
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed ^ (cv * 1e4) as u64 ^ (kind.len() as u64 * 7919));
            let (mut f1, mut cover, mut zf1, mut zcover, mut alarms) = (0.0, 0.0, 0.0, 0.0, 0usize);
            for _ in 0..per {
                let (xs, truth) = series(kind, cv, &mut rng);
                let found: Vec<usize> = change_points(&xs, &rule).iter().map(|c| c.at).collect();
                let ann = [truth.clone()];
                f1 += score::f1(&ann, &found, N);
                cover += score::cover(&ann, &found, N);
                zf1 += score::f1(&ann, &[], N);
                zcover += score::cover(&ann, &[], N);
                // A change found more than the margin from every true one.
                let far = |c: &usize| truth.iter().all(|t| t.abs_diff(*c) > score::MARGIN);
                alarms += usize::from(found.iter().any(far));
            }
            let m = |v: f64| v / per as f64;
            println!(
                "| {kind} | {:.3} | {:.3} | {:.3} | {:.3} | {:.1} |",
                m(f1),
                m(cover),
                m(zf1),
                m(zcover),
                1000.0 * alarms as f64 / per as f64
            );
        }
        println!();
    }
}
