//! The methodology paragraph (timers, stopping rule, how many points
//! converged, the median CV) and the list of points not measured.

use crate::analysis::PointStat;
use crate::archive::manifest::Manifest;
use crate::vocab::rows::Row;

use super::prose::pct;
use super::{Methodology, SkippedRow};
use crate::analysis::findings::precision::precision;

pub(super) fn methodology(
    manifest: &Manifest,
    all_stats: &[PointStat],
    catalog: &crate::analysis::Catalog,
) -> Methodology {
    // What benchbook timed itself: imported points keep their tool's timer,
    // named in the Methodology table of imported files, and have one sample (no CV to speak of).
    let native: Vec<PointStat> = all_stats
        .iter()
        .filter(|p| crate::vocab::source::RowOrigin::parse(p.source.as_deref()).tool().is_none())
        .cloned()
        .collect();
    let all_stats = &native[..];
    let rule = manifest.config.stop();
    let mut cvs: Vec<f64> = all_stats.iter().map(|p| p.summary.cv).filter(|c| c.is_finite()).collect();
    cvs.sort_by(f64::total_cmp);
    Methodology {
        timers: timers(all_stats),
        stop_rule: stop_rule(manifest),
        precision: precision(rule, all_stats, &|p| catalog.point_name(p)),
        median_cv_pct: if cvs.is_empty() { "n/a".into() } else { pct(crate::vocab::stats::quantile_sorted(&cvs, 0.5)) },
        rerun_share: crate::vocab::interval::RERUN_SHARE,
        short_of_rounds: rule.filter(|r| r.rounds > 1).and_then(|r| {
            let measured = all_stats.iter().filter(|p| p.samples > 0).count();
            let short = all_stats.iter().filter(|p| p.samples > 0 && p.rounds < r.min_rounds).count();
            (short > 0).then_some((short, measured, r.min_rounds))
        }),
    }
}

/// The timers behind the points, each once, in the order first used.
fn timers(all_stats: &[PointStat]) -> String {
    let mut timers: Vec<String> = Vec::new();
    for p in all_stats {
        let t = match p.backend.as_str() {
            "cpu" => "steady_clock (CLOCK_MONOTONIC via std::time::Instant)",
            "cuda" => "cuda_event (CUDA events around n back-to-back operations on the stream)",
            "hip" => "hip_event (HIP events around n back-to-back operations on the stream)",
            other => other,
        };
        if !timers.iter().any(|x| x == t) {
            timers.push(t.to_string());
        }
    }
    if timers.is_empty() {
        "none (no measured points)".into()
    } else {
        timers.join("; ")
    }
}

/// The stopping rule the run was configured with; imported runs have none.
pub(super) fn stop_rule(manifest: &Manifest) -> String {
    manifest.config.stop().map(|r| r.describe()).unwrap_or_else(|| "not recorded (imported run)".into())
}

/// The points that were skipped or failed, with the reason.
pub(super) fn not_measured(rows: &[Row]) -> Vec<SkippedRow> {
    rows.iter()
        .map(|r| SkippedRow {
            bench: r.params.bench.clone(),
            point: match (&r.params.method, r.backend.as_str()) {
                // GPU points: which method, and on which GPU.
                (Some(m), "cuda" | "hip") => {
                    format!("{} ({m}), {}", r.params.label_with(false), crate::vocab::rows::short_device(&r.device))
                }
                _ => r.params.label_with(false),
            },
            status: r.status.as_str().into(),
            reason: r.note.clone().unwrap_or_default(),
        })
        .collect()
}
