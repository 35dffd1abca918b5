//! Comparing runs of an archive: one run or a group of repeated runs on
//! each side, read (and verified) from their Parquet files, compared point
//! by point, with the verdicts in words, what differs between the
//! environments and how much the runs vary. `benchbook compare`, the
//! compare report and the notebook all call [`compare_runs`].

use std::collections::BTreeSet;

use serde::Serialize;

use super::{compare_samples, gather, verdict_sentences, GroupSamples, PointComparison};
use crate::analysis::environment::{environment_diff, EnvDifference};
use crate::archive::{Manifest, RunDir};
use crate::error::{Error, Result};
use crate::vocab::rows::{Row, Status};
use crate::vocab::stats;

/// Two runs (or groups of runs) compared.
#[derive(Debug, Clone, Serialize)]
pub struct RunComparison {
    /// The base group's run ids, in the order given.
    pub base: Vec<String>,
    pub new: Vec<String>,
    /// The relative change a verdict needs (0.02 = 2 %).
    pub threshold: f64,
    /// Every point both groups measured, ordered by curve then size.
    pub points: Vec<PointComparison>,
    /// One verdict per curve, from its points' verdicts.
    pub summary: Vec<super::CurveSummary>,
    /// The verdicts in words, per curve and size band.
    pub verdicts: Vec<String>,
    /// What differs between the first base run's environment and the first
    /// new run's.
    pub environment: Vec<EnvDifference>,
    /// How much each group varies, inside a run and from run to run.
    pub variability: [Variability; 2],
    /// Each benchmark family's average change with its 95 % interval over
    /// runs (two runs a side or more): what a conclusion can bound.
    pub families: Vec<super::bounds::FamilyBound>,
}

/// How much one group's measurements vary, as medians over its points.
#[derive(Debug, Clone, Serialize)]
pub struct Variability {
    pub runs: usize,
    /// Median over points (and runs) of the coefficient of variation of
    /// one run's samples; `None` where no point has two samples in a run.
    pub within_run_cv: Option<f64>,
    /// Median over points of the coefficient of variation of the per-run
    /// medians; `None` with fewer than two runs measuring a point.
    pub run_to_run_cv: Option<f64>,
}

fn median(mut xs: Vec<f64>) -> Option<f64> {
    (!xs.is_empty()).then(|| stats::median_unsorted(&mut xs))
}

fn variability_of(points: &GroupSamples, runs: usize) -> Variability {
    let within = points
        .values()
        .flat_map(|(_, per_run)| {
            per_run.iter().map(|r| r.rounds.concat()).filter(|xs| xs.len() > 1).map(|xs| stats::rel_std_dev(&xs))
        })
        .collect();
    let between = points.values().filter_map(|(_, per_run)| super::run_cv(per_run)).collect();
    Variability { runs, within_run_cv: median(within), run_to_run_cv: median(between) }
}

/// One run read once (and verified): its manifest, its rows as a table
/// for polars and as [`Row`]s for the comparison. A run of N partitions
/// at once is read folded ([`crate::analysis::partitions::fold`]): its
/// rows are those of one instance doing all the partitions' work, so it
/// compares point by point with one instance on the whole machine; the
/// rows as measured stay in `partition_rows`.
pub struct LoadedRun {
    pub id: String,
    pub manifest: Manifest,
    pub df: polars::prelude::DataFrame,
    pub rows: Vec<Row>,
    /// The rows of each partition, as measured (empty without partitions).
    pub partition_rows: Vec<Row>,
}

impl LoadedRun {
    pub fn read(run: &RunDir) -> Result<LoadedRun> {
        let (manifest, df) = run.read(false)?;
        let rows = crate::archive::schema::from_dataframe(&df)?;
        if manifest.config.partitions().len() < 2 {
            return Ok(LoadedRun { id: run.id.clone(), manifest, df, rows, partition_rows: Vec::new() });
        }
        let folded = crate::analysis::partitions::fold(&rows);
        let df = crate::archive::schema::to_dataframe(&folded)?;
        Ok(LoadedRun { id: run.id.clone(), manifest, df, rows: folded, partition_rows: rows })
    }

    /// How many partitions measured at once (1: one instance).
    pub fn partitions(&self) -> usize {
        self.manifest.config.partitions().len().max(1)
    }
}

/// Compare group `base` with group `new` (one run each, or repeats of one
/// configuration). `new_name` names the new side in the verdict sentences.
/// Runs with no point in common are a configuration error that says what
/// differs: the benchmarks, or only their parameters.
pub fn compare_runs(base: &[RunDir], new: &[RunDir], threshold: f64, new_name: &str) -> Result<RunComparison> {
    let load = |runs: &[RunDir]| runs.iter().map(LoadedRun::read).collect::<Result<Vec<_>>>();
    compare_loaded(&load(base)?, &load(new)?, threshold, new_name)
}

/// [`compare_runs`] on runs already read.
pub fn compare_loaded(base: &[LoadedRun], new: &[LoadedRun], threshold: f64, new_name: &str) -> Result<RunComparison> {
    if base.is_empty() || new.is_empty() {
        return Err(Error::config(
            "BASE NEW",
            "name at least one run on each side: `benchbook compare BASE NEW` or `--base R1 R2 --new R3 R4`",
        ));
    }
    // Each run's points, read once: the family bounds take them per run,
    // the point comparisons gathered per point.
    let per_run = |g: &[LoadedRun]| g.iter().map(|r| super::points::run_points(&r.rows)).collect::<Vec<_>>();
    let (pa, pb) = (per_run(base), per_run(new));
    let started = |g: &[LoadedRun]| g.iter().map(|r| r.manifest.started_at.clone()).collect::<Vec<_>>();
    let families = super::bounds::family_bounds(&started(base), &pa, &started(new), &pb);
    let (sa, sb) = (gather(pa), gather(pb));
    let mut points = compare_samples(&sa, &sb, threshold);
    let ids = |g: &[LoadedRun]| g.iter().map(|r| r.id.clone()).collect::<Vec<_>>();
    if points.is_empty() {
        let benches = |groups: &[LoadedRun]| {
            let set: BTreeSet<String> = groups
                .iter()
                .flat_map(|g| &g.rows)
                .filter(|r| r.status == Status::Measured)
                .map(|r| r.params.metric.clone().unwrap_or_else(|| r.params.bench.clone()))
                .collect();
            set.into_iter().collect::<Vec<_>>().join(", ")
        };
        let (ba, bb) = (benches(base), benches(new));
        let why = if ba != bb {
            format!("BASE measured {ba}; NEW measured {bb}")
        } else {
            format!("both measured {ba}, but at different parameters (sizes, threads, devices or methods)")
        };
        return Err(Error::config(
            "BASE NEW",
            format!("{} and {} have no point in common: {why}", ids(base).join(", "), ids(new).join(", ")),
        ));
    }
    points.sort_by(|x, y| (&x.curve, x.size_bytes, &x.label).cmp(&(&y.curve, y.size_bytes, &y.label)));
    Ok(RunComparison {
        summary: super::summarize(&points),
        verdicts: verdict_sentences(&points, new_name),
        environment: {
            let mut env = environment_diff(&base[0].manifest, &new[0].manifest);
            env.extend(crate::analysis::environment::telemetry_diff(&base[0].rows, &new[0].rows));
            env
        },
        variability: [variability_of(&sa, base.len()), variability_of(&sb, new.len())],
        families,
        base: ids(base),
        new: ids(new),
        threshold,
        points,
    })
}
