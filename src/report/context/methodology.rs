//! The methodology paragraph (timers, stopping rule, how many points
//! converged, the median CV) and the list of points not measured.

use crate::analysis::PointStat;
use crate::archive::manifest::Manifest;
use crate::vocab::facts::StopRule;
use crate::vocab::rows::Row;

use super::prose::pct;
use super::{Methodology, SkippedRow};

pub(super) fn methodology(manifest: &Manifest, all_stats: &[PointStat]) -> Methodology {
    // What benchbook timed itself: imported points keep their tool's timer,
    // named in Imported sources, and have one sample (no CV to speak of).
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
        precision: precision(rule, all_stats),
        median_cv_pct: if cvs.is_empty() { "n/a".into() } else { pct(crate::vocab::stats::quantile_sorted(&cvs, 0.5)) },
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

/// How precise the medians are: which points reached the interval target
/// (the run's own, else ±1 %), which did not, and which intervals rest on
/// one round only.
pub(super) fn precision(rule: Option<&StopRule>, stats: &[PointStat]) -> String {
    if stats.is_empty() {
        return "No timed points.".into();
    }
    let target = rule.filter(|r| r.rounds > 1).map_or(0.01, |r| r.target_ci);
    let widths: Vec<Option<f64>> = stats.iter().map(|p| p.ci_relative()).collect();
    let met = widths.iter().filter(|w| w.is_some_and(|w| w <= target * (1.0 + 1e-9))).count();
    let mut out = format!(
        "{met} of {} points have a 95 % interval of their median within ±{} (the tables give each point's median ± its interval)",
        stats.len(),
        super::prose::ci_pct(target)
    );
    let mut missed: Vec<(f64, String, Option<String>)> = stats
        .iter()
        .zip(&widths)
        .filter(|(_, w)| !w.is_some_and(|w| w <= target * (1.0 + 1e-9)))
        .map(|(p, w)| (w.unwrap_or(f64::INFINITY), p.params().label(), p.ci_wide_why.as_ref().map(|y| y.to_string())))
        .collect();
    if !missed.is_empty() {
        missed.sort_by(|a, b| b.0.total_cmp(&a.0));
        let shown: Vec<String> = missed
            .iter()
            .take(6)
            .map(|(w, l, why)| {
                if w.is_finite() {
                    match why {
                        Some(why) => format!("{l} (±{}: {why})", super::prose::ci_pct(*w)),
                        None => format!("{l} (±{})", super::prose::ci_pct(*w)),
                    }
                } else {
                    format!("{l} (no interval)")
                }
            })
            .collect();
        let more = if missed.len() > shown.len() {
            format!(" and {} more", missed.len() - shown.len())
        } else {
            String::new()
        };
        out += &format!("; the widest of those that did not: {}{more}", shown.join(", "));
    }
    out.push('.');
    let one_round = stats.iter().filter(|p| p.ci_basis == Some(crate::vocab::interval::Basis::Samples)).count();
    if one_round > 0 {
        out += &format!(
            " {one_round} point{} rest on one round, so {} interval counts only the spread of {} samples, not the drift between runs, and is likely too narrow.",
            if one_round == 1 { "" } else { "s" },
            if one_round == 1 { "its" } else { "their" },
            if one_round == 1 { "its" } else { "their" },
        );
    }
    let mut ws: Vec<f64> = widths.iter().flatten().copied().collect();
    if !ws.is_empty() {
        ws.sort_by(f64::total_cmp);
        out += &format!(
            " Median interval over points: ±{}.",
            super::prose::ci_pct(crate::vocab::stats::quantile_sorted(&ws, 0.5))
        );
    }
    out
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
                    format!("{} ({m}), {}", r.params.label(), crate::vocab::rows::short_device(&r.device))
                }
                _ => r.params.label(),
            },
            status: r.status.as_str().into(),
            reason: r.note.clone().unwrap_or_default(),
        })
        .collect()
}
