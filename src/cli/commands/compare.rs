//! `benchbook compare BASE NEW`: every point both runs measured, with the
//! ratio of medians (above 1: NEW is better), its 95 % interval or "no
//! uncertainty" for one-sample (imported) points, a verdict, the verdicts
//! in words per size band and what differs in the environment. The exit
//! code is what CI calls: 1 when a point is slower beyond the threshold
//! (`--fail-on slower`, the default), or differs at all (`any`).

use std::io;

use serde::Serialize;

use crate::analysis::compare::{compare_runs, CurveSummary, PointComparison, RunComparison, Variability, Verdict};
use crate::analysis::environment::EnvDifference;
use crate::archive::Archive;
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::error::{Error, Result};

/// Which verdicts fail the command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum FailOn {
    /// A point NEW measured slower beyond the threshold.
    Slower,
    /// Any point faster or slower beyond the threshold.
    Any,
    /// Never (report only).
    Never,
}

#[derive(Debug, Serialize)]
pub struct CompareOutput {
    #[serde(flatten)]
    pub comparison: RunComparison,
    pub fail_on: FailOn,
}

impl CompareOutput {
    pub fn exit_code(&self) -> u8 {
        let bad = |v: Verdict| match self.fail_on {
            FailOn::Slower => v == Verdict::Slower,
            FailOn::Any => matches!(v, Verdict::Slower | Verdict::Faster),
            FailOn::Never => false,
        };
        u8::from(self.comparison.points.iter().any(|p| bad(p.verdict)))
    }
}

/// The two groups of run queries, from `BASE NEW` (each possibly
/// `R1,R2,...`) or `--base R1 R2 --new R3 R4`.
pub fn groups(
    base_pos: Option<String>,
    new_pos: Option<String>,
    base: Vec<String>,
    new: Vec<String>,
) -> Result<[Vec<String>; 2]> {
    match (base_pos, new_pos) {
        (Some(a), Some(b)) => Ok([split_group(&a), split_group(&b)]),
        _ if !base.is_empty() && !new.is_empty() => Ok([base, new]),
        _ => Err(Error::config(
            "BASE NEW",
            "name the two runs: `benchbook compare BASE NEW`, or groups of repeats with `--base R1 R2 --new R3 R4`",
        )),
    }
}

/// The run queries of one group argument, `R1,R2,R3`.
pub fn split_group(arg: &str) -> Vec<String> {
    arg.split(',').map(str::trim).filter(|q| !q.is_empty()).map(String::from).collect()
}

/// Resolve each group's queries (a query may not name a run twice). A
/// query `label:NAME` names every run labelled NAME, oldest first.
pub fn resolve_group(archive: &Archive, queries: &[String]) -> Result<Vec<crate::archive::RunDir>> {
    let mut runs: Vec<crate::archive::RunDir> = Vec::new();
    for q in queries {
        let found = match q.strip_prefix("label:") {
            Some(label) => archive.runs_labelled(label)?,
            None => vec![archive.resolve(q)?],
        };
        for r in found {
            if runs.iter().any(|x| x.id == r.id) {
                return Err(Error::config("BASE NEW", format!("run {} is named twice in one group", r.id)));
            }
            runs.push(r);
        }
    }
    Ok(runs)
}

pub fn compare(
    archive: &Archive,
    base: &[String],
    new: &[String],
    threshold: f64,
    fail_on: FailOn,
) -> Result<CompareOutput> {
    let (a, b) = (resolve_group(archive, base)?, resolve_group(archive, new)?);
    Ok(CompareOutput { comparison: compare_runs(&a, &b, threshold, "NEW")?, fail_on })
}

/// What differs between two runs' environments, as `compare` and `rerun`
/// print it. Long values (LD_LIBRARY_PATH) are cut for the terminal;
/// `--json` has them whole.
pub(crate) fn write_environment(w: &mut dyn io::Write, diffs: &[EnvDifference], names: [&str; 2]) -> io::Result<()> {
    if diffs.is_empty() {
        return writeln!(w, "environment: nothing recorded differs");
    }
    writeln!(w, "environment: {} settings differ", diffs.len())?;
    let mut tab = table(&["SETTING", names[0], names[1]], &[]);
    let v = |x: &Option<String>| match x.as_deref() {
        Some(t) if t.chars().count() > 60 => format!("{}…", cell(&t.chars().take(59).collect::<String>())),
        Some(t) => cell(t),
        None => "(not recorded)".into(),
    };
    for d in diffs {
        tab.add_row(vec![cell(&d.what), v(&d.a), v(&d.b)]);
    }
    write_table(w, &tab)
}

/// The table of per-point comparisons `compare` and `rerun` print. Medians
/// of repeated runs are medians of per-run medians.
pub(crate) fn write_points(w: &mut dyn io::Write, points: &[PointComparison], names: [&str; 2]) -> io::Result<()> {
    let mut tab = table(&["POINT", names[0], names[1], "RATIO", "95 % CI", "VERDICT"], &[1, 2, 3, 4]);
    for p in points {
        tab.add_row(vec![
            cell(&p.label),
            cell(&p.median_text(p.median_a)),
            cell(&p.median_text(p.median_b)),
            format!("{:.3}", p.ratio),
            p.ci_text(),
            p.verdict.as_str().into(),
        ]);
    }
    write_table(w, &tab)?;
    let count = |v: Verdict| points.iter().filter(|p| p.verdict == v).count();
    writeln!(
        w,
        "{} points: {} same, {} faster, {} slower, {} inconclusive",
        points.len(),
        count(Verdict::Same),
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::Inconclusive)
    )
}

/// One row per curve: its verdict, from its points', the median ratio and
/// the interval every point's lies in.
pub(crate) fn write_summary(w: &mut dyn io::Write, summary: &[CurveSummary]) -> io::Result<()> {
    let mut tab =
        table(&["CURVE", "POINTS", "VERDICT", "MEDIAN RATIO", "95 % CIs WITHIN", "RESOLVES ≥"], &[1, 3, 4, 5]);
    for c in summary {
        tab.add_row(vec![
            cell(&c.curve),
            c.points.to_string(),
            format!("{} ({})", c.verdict.as_str(), c.counts_text()),
            format!("{:.3}", c.ratio),
            match (c.ci_low, c.ci_high) {
                (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
                _ => "no interval: one sample".into(),
            },
            c.detectable.map_or("-".into(), |d| format!("{:.1} %", 100.0 * d)),
        ]);
    }
    write_table(w, &tab)
}

/// One line per group on how much its runs vary.
pub(crate) fn write_variability(w: &mut dyn io::Write, v: &[Variability; 2], names: [&str; 2]) -> io::Result<()> {
    let pct = |x: Option<f64>| x.map_or("-".to_string(), |c| format!("{:.2} %", 100.0 * c));
    for (v, name) in v.iter().zip(names) {
        writeln!(
            w,
            "variability {name}: {} run{}; CV within a run {} (median over points); run to run {}",
            v.runs,
            if v.runs == 1 { "" } else { "s" },
            pct(v.within_run_cv),
            if v.runs > 1 { pct(v.run_to_run_cv) } else { "unknown: one run".into() }
        )?;
    }
    Ok(())
}

impl Render for CompareOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let s = terminal_safe;
        let c = &self.comparison;
        writeln!(t.out, "BASE {}\nNEW  {}", s(&c.base.join(", ")), s(&c.new.join(", ")))?;
        writeln!(
            t.out,
            "ratio: how many times better NEW is (time BASE / NEW; for metrics in their direction); a verdict needs the 95 % interval beyond ±{} %",
            c.threshold * 100.0
        )?;
        writeln!(t.out)?;
        write_points(&mut *t.out, &c.points, ["BASE", "NEW"])?;
        writeln!(t.out)?;
        for v in &c.verdicts {
            writeln!(t.out, "- {}", s(v))?;
        }
        writeln!(t.out)?;
        write_summary(&mut *t.out, &c.summary)?;
        writeln!(t.out)?;
        write_variability(&mut *t.out, &c.variability, ["BASE", "NEW"])?;
        write_environment(&mut *t.out, &c.environment, ["BASE", "NEW"])
    }
}
