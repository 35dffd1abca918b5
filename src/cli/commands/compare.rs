//! `benchbook compare BASE NEW`: every point both runs measured, with the
//! ratio of medians (above 1: NEW is better), its 95 % interval or "no
//! uncertainty" for one-sample (imported) points, a verdict, the verdicts
//! in words per size band and what differs in the environment. The exit
//! code is what CI calls: 1 when a point is slower beyond the threshold
//! (`--fail-on slower`, the default), or differs at all (`any`).

use std::collections::BTreeSet;
use std::io;

use serde::Serialize;

use crate::analysis::compare::{compare as compare_rows, verdict_sentences, PointComparison, Verdict};
use crate::analysis::environment::{environment_diff, EnvDifference};
use crate::archive::Archive;
use crate::cli::print::{cell, table, terminal_safe, write_table, Render, Term};
use crate::error::{Error, Result};
use crate::vocab::units::{format_seconds, format_sig3};

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
    pub base: String,
    pub new: String,
    pub threshold: f64,
    pub fail_on: FailOn,
    pub points: Vec<PointComparison>,
    /// The verdicts in words, per curve and size band.
    pub verdicts: Vec<String>,
    pub environment: Vec<EnvDifference>,
}

impl CompareOutput {
    pub fn exit_code(&self) -> u8 {
        let bad = |v: Verdict| match self.fail_on {
            FailOn::Slower => v == Verdict::Slower,
            FailOn::Any => matches!(v, Verdict::Slower | Verdict::Faster),
            FailOn::Never => false,
        };
        u8::from(self.points.iter().any(|p| bad(p.verdict)))
    }
}

pub fn compare(archive: &Archive, base: &str, new: &str, threshold: f64, fail_on: FailOn) -> Result<CompareOutput> {
    let (a, b) = (archive.resolve(base)?, archive.resolve(new)?);
    let (ma, da) = a.read(false)?;
    let (mb, db) = b.read(false)?;
    let (ra, rb) = (crate::archive::schema::from_dataframe(&da)?, crate::archive::schema::from_dataframe(&db)?);
    let mut points = compare_rows(&ra, &rb, threshold);
    if points.is_empty() {
        let benches = |rows: &[crate::vocab::rows::Row]| {
            let set: BTreeSet<String> = rows
                .iter()
                .filter(|r| r.status == crate::vocab::rows::Status::Measured)
                .map(|r| r.params.metric.clone().unwrap_or_else(|| r.params.bench.clone()))
                .collect();
            set.into_iter().collect::<Vec<_>>().join(", ")
        };
        let (ba, bb) = (benches(&ra), benches(&rb));
        let why = if ba != bb {
            format!("BASE measured {ba}; NEW measured {bb}")
        } else {
            format!("both measured {ba}, but at different parameters (sizes, threads, devices or methods)")
        };
        return Err(Error::config("BASE NEW", format!("{} and {} have no point in common: {why}", a.id, b.id)));
    }
    points.sort_by(|x, y| (&x.curve, x.size_bytes, &x.label).cmp(&(&y.curve, y.size_bytes, &y.label)));
    Ok(CompareOutput {
        verdicts: verdict_sentences(&points, "NEW"),
        environment: environment_diff(&ma, &mb),
        base: a.id,
        new: b.id,
        threshold,
        fail_on,
        points,
    })
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

/// The table of per-point comparisons `compare` and `rerun` print.
pub(crate) fn write_points(w: &mut dyn io::Write, points: &[PointComparison], names: [&str; 2]) -> io::Result<()> {
    let mut tab = table(&["POINT", names[0], names[1], "RATIO", "95 % CI", "VERDICT"], &[1, 2, 3, 4]);
    for p in points {
        let ci = match (p.ci_low, p.ci_high) {
            (Some(lo), Some(hi)) => format!("{lo:.3}–{hi:.3}"),
            _ => "no uncertainty: one sample".into(),
        };
        let median =
            |v: f64| if p.metric.is_some() { format!("{} {}", format_sig3(v), p.unit) } else { format_seconds(v) };
        tab.add_row(vec![
            cell(&p.label),
            cell(&median(p.median_a)),
            cell(&median(p.median_b)),
            format!("{:.3}", p.ratio),
            ci,
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

impl Render for CompareOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let s = terminal_safe;
        writeln!(t.out, "BASE {}\nNEW  {}", s(&self.base), s(&self.new))?;
        writeln!(
            t.out,
            "ratio: how many times better NEW is (time BASE / NEW; for metrics in their direction); a verdict needs the 95 % interval beyond ±{} %",
            self.threshold * 100.0
        )?;
        writeln!(t.out)?;
        write_points(&mut *t.out, &self.points, ["BASE", "NEW"])?;
        writeln!(t.out)?;
        for v in &self.verdicts {
            writeln!(t.out, "- {}", s(v))?;
        }
        writeln!(t.out)?;
        write_environment(&mut *t.out, &self.environment, ["BASE", "NEW"])
    }
}
