//! Rows of the compare report that are built the same way for every
//! pair: the compared runs, and each pair's verdict counts in words.

use crate::analysis::compare::{LoadedRun, RunComparison};
use crate::vocab::units::shell_join;

use super::CompareRun;

/// Every compared run, the baseline group first.
pub(super) fn compare_runs(groups: &[Vec<LoadedRun>], names: &[String]) -> Vec<CompareRun> {
    let mut runs = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        for m in g.iter().map(|r| &r.manifest) {
            runs.push(CompareRun {
                role: if i == 0 { "baseline".into() } else { format!("compared #{i}") },
                name: names[i].clone(),
                id: m.run_id.clone(),
                source: m.source.to_string(),
                host: m.host.hostname.clone(),
                started_at: m.started_at.clone(),
                status: m.effective_status().as_str().into(),
                measured: m.counts.measured,
                command: shell_join(&m.argv),
            });
        }
    }
    runs
}

/// Each point's verdict in its own words, counted: `12 points: 4 same,
/// 3 faster, 0 slower, 5 inconclusive` (a latency that improved is lower,
/// not faster).
pub(super) fn verdict_counts(c: &RunComparison) -> String {
    use crate::analysis::compare::Verdict as V;
    let count = |v| c.points.iter().filter(|p| p.verdict == v).count();
    // Each point's verdict in its own words: a latency that
    // improved is lower, not faster.
    use crate::analysis::compare::summary::Reading;
    let mut words: Vec<(String, usize)> = vec![("same".into(), count(V::Same))];
    for p in c.points.iter().filter(|p| matches!(p.verdict, V::Faster | V::Slower)) {
        let w = Reading::of(p).count_word(p.verdict);
        match words.iter_mut().find(|(x, _)| *x == w) {
            Some(e) => e.1 += 1,
            None => words.push((w, 1)),
        }
    }
    for w in ["faster", "slower"] {
        if !words.iter().any(|(x, _)| x == w) {
            words.push((w.into(), 0));
        }
    }
    // Better before worse, times before metrics.
    let rank = |w: &str| match w {
        "same" => 0,
        "faster" => 1,
        w if w.starts_with("better") => 2,
        "slower" => 3,
        _ => 4,
    };
    words.sort_by_key(|(w, _)| rank(w));
    words.push(("inconclusive".into(), count(V::Inconclusive)));
    let text: Vec<String> = words.iter().map(|(w, n)| format!("{n} {w}")).collect();
    format!("{} points: {}", c.points.len(), text.join(", "))
}
