//! A synthetic fleet archive for scale tests and benchmarks
//! (`scripts/synth-archive.sh`, `examples/synth_archive.rs`): runs made
//! from a real run (its rows' timings rescaled), spread over nodes night
//! after night, each node with its own fixed speed (±2 %), each run with
//! its own noise (±1 %), and one drifting node whose runs are 12 % slower
//! from a given night on. A few runs are damaged on purpose (a results file
//! with one byte changed, a manifest removed), as a big archive will have.

use rand::RngExt;
use rand_distr::{Distribution, Normal};
use serde::Serialize;

use super::manifest::Manifest;
use super::{Archive, RunDir, RunStatus};
use crate::error::{Error, Result};
use crate::vocab::rows::{Row, RowSink, Status};

/// What to make.
#[derive(Debug, Clone)]
pub struct SynthSpec {
    pub runs: usize,
    pub rows_per_run: usize,
    pub nodes: usize,
    /// The drifting node's index.
    pub drifting: usize,
    /// The night (the index in its node's series) the drift starts.
    pub drift_at: usize,
    /// How many runs to damage (at most 3, far from the drifting node).
    pub damage: usize,
    /// Points per run, where more than the template has: its points again,
    /// each copy a variant of its own (`warm-1`, `warm-2`, ...).
    pub points: Option<usize>,
}

/// What was made: where the drift is and which runs were damaged.
#[derive(Debug, Clone, Serialize)]
pub struct SynthOutcome {
    pub runs: usize,
    pub rows_per_run: usize,
    pub nodes: usize,
    pub drifting_node: String,
    pub drift_at_run: usize,
    pub damaged: Vec<String>,
}

/// The node name of index `k`.
pub fn node_name(k: usize) -> String {
    format!("node{k:04}")
}

/// Write `spec.runs` runs into `out` from `template`'s measured rows.
pub fn synthetic_fleet(template: &RunDir, out: &Archive, spec: &SynthSpec) -> Result<SynthOutcome> {
    let manifest = template.manifest()?;
    let mut points: std::collections::BTreeMap<u32, Vec<Row>> = Default::default();
    for r in template.rows()?.into_iter().filter(|r| r.status == Status::Measured) {
        points.entry(r.point).or_default().push(r);
    }
    // Every measured point, its samples taken in turn (again from its first
    // when it has fewer, numbered on): rows_per_run in all.
    if let Some(want) = spec.points.filter(|n| *n > points.len()) {
        let base: Vec<Vec<Row>> = std::mem::take(&mut points).into_values().collect();
        for i in 0..want {
            let copy = i / base.len().max(1);
            let mut rows = base[i % base.len().max(1)].clone();
            for r in &mut rows {
                r.point = i as u32;
                if copy > 0 {
                    let v =
                        r.params.variant.clone().unwrap_or_else(|| crate::vocab::kinds::CacheMode::Warm.name().into());
                    r.params.variant = Some(format!("{v}-{copy}"));
                }
            }
            points.insert(i as u32, rows);
        }
    }
    let per_point = spec.rows_per_run.div_ceil(points.len().max(1));
    let rows: Vec<Row> = points
        .into_values()
        .flat_map(|v| {
            let n = v.len().max(1);
            (0..per_point).filter_map(move |i| {
                let mut r = v.get(i % n)?.clone();
                r.sample = Some(i as u32);
                Some(r)
            })
        })
        .take(spec.rows_per_run)
        .collect();
    std::fs::create_dir_all(out.runs_dir()).map_err(|e| Error::io(out.runs_dir(), e))?;
    let mut rng = crate::vocab::stats::seeded_rng(2026);
    let normal = |sd: f64| Normal::new(1.0, sd).expect("a finite deviation");
    let node_speed: Vec<f64> = (0..spec.nodes).map(|_| normal(0.02).sample(&mut rng)).collect();
    let (run_noise, sample_noise) = (normal(0.01), normal(0.002));
    let start =
        chrono::DateTime::parse_from_rfc3339("2026-10-01T02:00:00Z").expect("a valid time").with_timezone(&chrono::Utc);
    let victims: Vec<usize> = [spec.runs / 3, spec.runs / 2, 2 * spec.runs / 3]
        .into_iter()
        .filter(|i| i % spec.nodes != spec.drifting)
        .take(spec.damage)
        .collect();
    let mut damaged = Vec::new();
    for i in 0..spec.runs {
        let (node, night) = (i % spec.nodes, i / spec.nodes);
        let when = start + chrono::Duration::days(night as i64) + chrono::Duration::seconds(node as i64 * 3);
        let id = format!("{}-nightly-{i:05}", when.format("%Y%m%dT%H%M%SZ"));
        let mut m: Manifest = manifest.clone();
        m.run_id = id.clone();
        m.label = Some("nightly".into());
        m.started_at = when.to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
        m.files.clear();
        m.manifest_sha256 = None;
        let mut placement = m.placement.clone().unwrap_or_else(|| crate::host::Placement::detect(&node_name(node)));
        placement.node = node_name(node);
        placement.fleet = Some("synthetic".into());
        placement.job_id = Some((1000 + night).to_string());
        m.placement = Some(placement);
        let slow = if node == spec.drifting && night >= spec.drift_at { 1.0 / 0.88 } else { 1.0 };
        let factor = slow / (node_speed[node] * run_noise.sample(&mut rng));
        let mut w = out.create_run_staged(m)?;
        let mut these = rows.clone();
        for r in &mut these {
            r.seconds = r.seconds.map(|s| s * factor * sample_noise.sample(&mut rng));
            r.host = node_name(node);
        }
        w.write_point(these)?;
        w.finish(RunStatus::Complete, None)?;
        let dir = out.runs_dir().join(&id);
        match victims.iter().position(|v| *v == i) {
            Some(0) | Some(1) => {
                let path = dir.join(super::RESULTS_FILE);
                let mut data = std::fs::read(&path).map_err(|e| Error::io(&path, e))?;
                let at = rng.random_range(100..data.len() - 100);
                data[at] ^= 0xff;
                std::fs::write(&path, data).map_err(|e| Error::io(&path, e))?;
                damaged.push(id);
            }
            Some(_) => {
                let path = dir.join(super::MANIFEST_FILE);
                std::fs::remove_file(&path).map_err(|e| Error::io(&path, e))?;
                damaged.push(id);
            }
            None => {}
        }
    }
    Ok(SynthOutcome {
        runs: spec.runs,
        rows_per_run: rows.len(),
        nodes: spec.nodes,
        drifting_node: node_name(spec.drifting),
        drift_at_run: spec.drift_at,
        damaged,
    })
}
