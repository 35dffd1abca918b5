//! The one line a gate leaves: Slurm's drain reason, `fleet gate`'s last
//! line, and the verdict run's record. Short (Slurm shows it in `sinfo -R`),
//! and it says against what, how far, with what confidence.

use super::{Against, GateJudgement, GatePoint, Line};
use crate::vocab::units::format_confidence;

/// The prefix of every reason: how `--resume-on-pass` knows a drain is its own.
pub const PREFIX: &str = "benchbook:";

/// `benchbook: memcpy copy 64 MiB 1T at 0.79× fleet (99.50 % CI 0.76–0.83), below 0.95`.
pub fn fault(p: &GatePoint, threshold: f64) -> String {
    let Some((line, a)) = p.failed() else { return format!("{PREFIX} {} judged fine", p.point) };
    let ci = |a: &Against| format!("{} CI {:.2}–{:.2}", format_confidence(a.confidence), a.ratio_low, a.ratio_high);
    match line {
        Line::Fleet => {
            format!("{PREFIX} {} at {:.2}× fleet ({}), below {:.2}", p.point, a.ratio, ci(a), 1.0 - threshold)
        }
        Line::History => format!(
            "{PREFIX} {} at {:.2}× its own last {} runs ({}), below {:.2}",
            p.point,
            a.ratio,
            a.n,
            ci(a),
            1.0 - threshold
        ),
        Line::Floor => {
            let f = p.floor.as_ref().map(|(f, _)| f);
            let (tool, gbps) = f.map_or(("published", f64::NAN), |f| (f.spec.tool.as_str(), f.spec.gbps));
            format!(
                "{PREFIX} {} at {} GB/s, {:.2}× the {} floor of {} GB/s ({})",
                p.point,
                crate::vocab::units::format_sig3(gbps * a.ratio),
                a.ratio,
                tool,
                crate::vocab::units::format_sig3(gbps),
                ci(a)
            )
        }
    }
}

/// `benchbook: pass: 2 points, worst memcpy copy 64 MiB 1T at 0.98× fleet`.
pub fn pass(j: &GateJudgement, cleared: &[String]) -> String {
    let judged: Vec<&GatePoint> = j.points.iter().filter(|p| p.judged()).collect();
    let worst = judged.iter().min_by(|a, b| a.worst_ratio().total_cmp(&b.worst_ratio()));
    let mut s = format!("{PREFIX} pass: {} point{}", judged.len(), if judged.len() == 1 { "" } else { "s" });
    if let Some(w) = worst {
        let against = if w.fleet.as_ref().is_some_and(|a| a.ratio == w.worst_ratio()) {
            "fleet"
        } else if w.history.as_ref().is_some_and(|a| a.ratio == w.worst_ratio()) {
            "its history"
        } else {
            "its floor"
        };
        s.push_str(&format!(", worst {} at {:.2}× {against}", w.point, w.worst_ratio()));
    }
    if !cleared.is_empty() {
        s.push_str(&format!("; the retest cleared {}", cleared.join(", ")));
    }
    s
}

/// `benchbook: not judged: WHY`.
pub fn not_judged(why: &str) -> String {
    format!("{PREFIX} not judged: {why}")
}
