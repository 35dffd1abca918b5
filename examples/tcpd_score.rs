//! benchbook's change-point detector on the Turing Change Point Detection
//! Benchmark (van den Burg and Williams, 2020): the detector `history`
//! uses (`analysis::changepoints::change_points` with
//! `ChangeRule::default()`, no setting per series) runs on each of the
//! benchmark's 32 univariate series, and its change points are scored by
//! the benchmark's own F1 (margin 5) and cover
//! (`analysis::changepoints::score`, checked against TCPDBench's published
//! per-series scores in `tests/integration/changepoints.rs`). Its means
//! stand beside the 14 methods of the paper's table, recomputed from
//! TCPDBench's run files (`docs/tcpd/paper-table.json`).
//!
//!   cargo run --release --example tcpd_score -- PATH/TO/TCPD [--series] [--penalty X]
//!
//! PATH/TO/TCPD is a built checkout of alan-turing-institute/TCPD
//! (`datasets/NAME/NAME.json` and `annotations.json`); nothing is fetched.
//! `docs/changepoints.md` gives the steps. A series that is missing scores
//! 0, as the benchmark counts a failed run, and is named. `--series` also
//! prints each series' scores; `--penalty X` scores another
//! `ChangeRule::penalty` (not the default: to see how much the result
//! rests on it). The 4 multivariate series are left out: the detector
//! reads one value per run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use benchbook::analysis::changepoints::{change_points, score, ChangeRule};

#[derive(serde::Deserialize)]
struct Paper {
    univariate: BTreeMap<String, Scores>,
    univariate_series: Vec<String>,
    /// Method → series → [F1, cover], default experiment.
    default_per_series: BTreeMap<String, BTreeMap<String, [f64; 2]>>,
}

/// Each method's rank on each series (1: the highest score; ties share
/// the mean of their ranks, as scipy's `rankdata(method="average")` in
/// TCPDBench's rank_common.py), averaged over the series. `scores[m][s]`.
fn average_ranks(scores: &[Vec<f64>]) -> Vec<f64> {
    let series = scores.first().map_or(0, Vec::len);
    let mut sum = vec![0.0; scores.len()];
    for s in 0..series {
        for (m, total) in sum.iter_mut().enumerate() {
            let v = scores[m][s];
            let above = scores.iter().filter(|o| o[s] > v).count() as f64;
            let tied = scores.iter().filter(|o| o[s] == v).count() as f64;
            *total += above + (tied + 1.0) / 2.0;
        }
    }
    sum.iter().map(|t| t / series as f64).collect()
}

#[derive(serde::Deserialize, Clone, Copy)]
struct Scores {
    default_f1: f64,
    default_cover: f64,
    oracle_f1: f64,
    oracle_cover: f64,
}

#[derive(serde::Deserialize)]
struct Dataset {
    n_obs: usize,
    series: Vec<Dimension>,
}

#[derive(serde::Deserialize)]
struct Dimension {
    raw: Vec<Option<f64>>,
}

/// One series scored: (F1, cover, change points found), or why not.
fn score_one(root: &Path, name: &str, annotations: &[Vec<usize>], rule: &ChangeRule) -> Result<(f64, f64, Vec<usize>)> {
    let path: PathBuf = root.join("datasets").join(name).join(format!("{name}.json"));
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("{}: not found or unreadable", path.display()))?;
    let d: Dataset = serde_json::from_str(&text).with_context(|| format!("{}: not a TCPD dataset", path.display()))?;
    let [dim] = d.series.as_slice() else { bail!("{}: {} dimensions, not one", path.display(), d.series.len()) };
    let values: Vec<f64> = dim.raw.iter().map(|v| v.unwrap_or(f64::NAN)).collect();
    if values.iter().any(|v| !v.is_finite()) || values.len() != d.n_obs {
        bail!("{}: missing values, or not n_obs of them", path.display());
    }
    let found: Vec<usize> = change_points(&values, rule).iter().map(|c| c.at).collect();
    Ok((score::f1(annotations, &found, d.n_obs), score::cover(annotations, &found, d.n_obs), found))
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(root) = args.first().filter(|a| !a.starts_with("--")).map(PathBuf::from) else {
        bail!("usage: tcpd_score PATH/TO/TCPD [--series]   (a built checkout of alan-turing-institute/TCPD)");
    };
    let mut rule = ChangeRule::default();
    if let Some(i) = args.iter().position(|a| a == "--penalty") {
        let v = args.get(i + 1).context("--penalty takes a number, e.g. --penalty 2")?;
        rule.penalty = v.parse().with_context(|| format!("--penalty {v}: not a number"))?;
    }
    let paper: Paper = serde_json::from_str(include_str!("../docs/tcpd/paper-table.json"))?;
    let ann_path = root.join("annotations.json");
    let all: BTreeMap<String, BTreeMap<String, Vec<usize>>> =
        serde_json::from_str(&std::fs::read_to_string(&ann_path).with_context(|| ann_path.display().to_string())?)
            .with_context(|| format!("{}: not TCPD's annotations", ann_path.display()))?;
    let (mut f1s, mut covers, mut missing) = (Vec::new(), Vec::new(), Vec::new());
    for name in &paper.univariate_series {
        let annotations: Vec<Vec<usize>> = all.get(name).map(|a| a.values().cloned().collect()).unwrap_or_default();
        match score_one(&root, name, &annotations, &rule) {
            Ok((f1, cover, found)) => {
                if args.iter().any(|a| a == "--series") {
                    println!("{name:<20} F1 {f1:.3}  cover {cover:.3}  found {found:?}");
                }
                f1s.push(f1);
                covers.push(cover);
            }
            Err(e) => {
                missing.push(format!("{name} ({e:#})"));
                f1s.push(0.0);
                covers.push(0.0);
            }
        }
    }
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let ours = (mean(&f1s), mean(&covers));
    // Average ranks over the series, the paper's way, benchbook among the 14.
    let methods: Vec<&String> = paper.default_per_series.keys().collect();
    let per = |k: usize, ours: &[f64]| -> Vec<Vec<f64>> {
        let theirs = methods.iter().map(|m| {
            paper.univariate_series.iter().map(|s| paper.default_per_series[*m].get(s).map_or(0.0, |v| v[k])).collect()
        });
        theirs.chain(std::iter::once(ours.to_vec())).collect()
    };
    let (rank_f1, rank_cover) = (average_ranks(&per(0, &f1s)), average_ranks(&per(1, &covers)));
    let at = |m: &str| methods.iter().position(|x| *x == m).unwrap_or(methods.len());
    let mut rows: Vec<(String, Scores)> = paper.univariate.iter().map(|(m, s)| (m.clone(), *s)).collect();
    rows.sort_by(|a, b| b.1.default_f1.total_cmp(&a.1.default_f1));
    println!(
        "TCPD, {} univariate series, default experiment (one setting for every series; benchbook: {}).",
        paper.univariate_series.len(),
        rule.describe(),
    );
    println!("Means, and in brackets the average rank over the series among the {} (1 = best).", methods.len() + 1);
    println!("The benchmark's 4 multivariate series are left out: the detector reads one value per run.");
    println!("{:<20} {:>16} {:>16} {:>9} {:>12}", "method", "default F1", "default cover", "oracle F1", "oracle cover");
    let ranked = |v: f64, r: f64| format!("{v:.3} ({r:.2})");
    let b = methods.len();
    println!(
        "{:<20} {:>16} {:>16} {:>9} {:>12}",
        "benchbook",
        ranked(ours.0, rank_f1[b]),
        ranked(ours.1, rank_cover[b]),
        "-",
        "-"
    );
    for (m, s) in &rows {
        let k = at(m);
        println!(
            "{m:<20} {:>16} {:>16} {:>9.3} {:>12.3}",
            ranked(s.default_f1, rank_f1.get(k).copied().unwrap_or(f64::NAN)),
            ranked(s.default_cover, rank_cover.get(k).copied().unwrap_or(f64::NAN)),
            s.oracle_f1,
            s.oracle_cover
        );
    }
    if !missing.is_empty() {
        println!("\n{} series scored 0, as the benchmark counts a failed run:", missing.len());
        for m in &missing {
            println!("  {m}");
        }
    }
    Ok(())
}
