//! `benchbook report`: write the Markdown/HTML report of one or more runs.

use std::io;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::archive::Archive;
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::cli::ReportArgs;
use crate::error::{Error, Result};
use crate::report::{Kind, ReportOptions};

/// The files written, every run's in turn, and the runs that could not be
/// reported (only when several were asked for: one run's error is the
/// command's error).
#[derive(Debug, Serialize)]
pub struct ReportOutput {
    pub files: Vec<PathBuf>,
    pub failed: Vec<NotReported>,
}

/// A run whose report was not written, and why.
#[derive(Debug, Serialize)]
pub struct NotReported {
    pub run: String,
    pub error: String,
}

impl ReportOutput {
    /// 1 when any run asked for was not reported.
    pub fn exit_code(&self) -> u8 {
        u8::from(!self.failed.is_empty())
    }
}

/// Build and write the report of each run `a` names: into `--out` for one
/// run, `<out>/<run-id>/` for several, `reports/<run-id>/` by default. A
/// write-up kind given with `--kind` makes one report of all the runs;
/// `--all` regenerates every example listed in `examples.toml`.
pub fn report(archive: &Archive, a: &ReportArgs) -> Result<ReportOutput> {
    let opts = ReportOptions {
        format: a.format,
        spec: a.spec.clone(),
        png: a.png,
        templates: a.templates.clone(),
        no_verify: a.no_verify,
        kind: a.kind,
        notes: a.notes.clone(),
        pairs: a.pairs.clone(),
        link: a.link.clone(),
        keep_throttled: a.keep_throttled,
    };
    if a.all {
        return report_all(archive, a, &opts);
    }
    match a.kind {
        Some(Kind::Compare) => return report_compare(archive, a, &opts, &a.runs, a.out.clone()),
        Some(k) if k.merges_runs() && a.runs.len() > 1 => {
            let runs = a.runs.iter().map(|q| archive.resolve(q)).collect::<Result<Vec<_>>>()?;
            let out = a.out.clone().unwrap_or_else(|| PathBuf::from("reports").join(format!("{k}-{}", runs[0].id)));
            return Ok(ReportOutput {
                files: crate::report::make(&runs, &archive.root, &out, &opts)?,
                failed: Vec::new(),
            });
        }
        _ => {}
    }
    let mut out = ReportOutput { files: Vec::new(), failed: Vec::new() };
    for q in &a.runs {
        match report_one(archive, a, &opts, q) {
            Ok(files) => out.files.extend(files),
            Err(e) if a.runs.len() > 1 => out.failed.push(NotReported { run: q.clone(), error: e.to_string() }),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// One example report: its folder under the reports directory, the runs
/// (comma-separated groups for `compare`), and its options.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Example {
    out: String,
    #[serde(default)]
    runs: Vec<String>,
    /// Another archive its runs are in (a path from where `report --all`
    /// runs, e.g. `data/seed-004`); default: the one given.
    archive: Option<PathBuf>,
    /// A fleet report (`fleet report NAME`) instead of a report of runs.
    fleet: Option<String>,
    kind: Option<Kind>,
    notes: Option<PathBuf>,
    pairs: Option<String>,
    threshold: Option<f64>,
    link: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Examples {
    example: Vec<Example>,
}

/// `report --all`: every example of `<reports-dir>/examples.toml`, each
/// from its runs in the archive. One example that fails does not stop the
/// others; it is listed and the exit code is 1.
fn report_all(archive: &Archive, a: &ReportArgs, opts: &ReportOptions) -> Result<ReportOutput> {
    let path = a.reports_dir.join("examples.toml");
    let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
    let list: Examples = toml::from_str(&text).map_err(|e| crate::analysis::specs::toml_error(&path, &text, &e))?;
    let mut out = ReportOutput { files: Vec::new(), failed: Vec::new() };
    for ex in &list.example {
        let dir = a.reports_dir.join(&ex.out);
        let mut o = opts.clone();
        o.kind = ex.kind.or(opts.kind);
        o.notes = ex.notes.clone().or_else(|| opts.notes.clone());
        o.pairs = ex.pairs.clone().or_else(|| opts.pairs.clone());
        o.link = ex.link.clone().or_else(|| opts.link.clone());
        // A write-up (an example that names its kind) mirrors a published
        // one, prose included: without notes it is not an example.
        if ex.kind.is_some_and(|k| k != Kind::Run) && o.notes.is_none() {
            out.failed.push(NotReported {
                run: ex.out.clone(),
                error: format!(
                    "{}: example `{}` is a {} write-up without notes; add `notes = \"reports/notes/<name>.md\"` \
                     (## Introduction, ## Setup, ## Limitations)",
                    path.display(),
                    ex.out,
                    ex.kind.map_or("", |k| k.name())
                ),
            });
            continue;
        }
        let other = ex.archive.as_ref().map(Archive::new);
        let archive = other.as_ref().unwrap_or(archive);
        let made = if let Some(name) = &ex.fleet {
            super::fleet::report(archive, name, ex.threshold.unwrap_or(0.05), Some(dir), &o).map(|r| r.files)
        } else if ex.runs.is_empty() {
            Err(Error::config(
                "examples.toml",
                format!("example `{}` names no runs and no fleet; add `runs = [...]` or `fleet = \"NAME\"`", ex.out),
            ))
        } else if o.kind == Some(Kind::Compare) {
            resolve_groups(archive, &ex.runs).and_then(|groups| {
                let r = crate::report::build_compare(&groups, ex.threshold.unwrap_or(a.threshold))?
                    .with_notes(o.notes.as_deref())?;
                crate::report::write_compare(&r, &dir, &o)
            })
        } else {
            ex.runs
                .iter()
                .map(|q| archive.resolve(q))
                .collect::<Result<Vec<_>>>()
                .and_then(|runs| measured_something(&ex.out, runs))
                .and_then(|runs| crate::report::make(&runs, &archive.root, &dir, &o))
        };
        match made {
            Ok(files) => out.files.extend(files),
            Err(e) => out.failed.push(NotReported { run: ex.out.clone(), error: e.to_string() }),
        }
    }
    Ok(out)
}

/// An example shows numbers: runs that measured or imported nothing (every
/// point skipped) are refused as one.
fn measured_something(example: &str, runs: Vec<crate::archive::RunDir>) -> Result<Vec<crate::archive::RunDir>> {
    let mut measured = 0;
    for r in &runs {
        measured += r.manifest()?.counts.measured;
    }
    if measured == 0 {
        return Err(Error::config(
            "examples.toml",
            format!(
                "example `{example}`: its runs measured or imported nothing (every point was skipped), so it shows no result; measure it where it can run, or drop it from the list"
            ),
        ));
    }
    Ok(runs)
}

/// `--kind compare`: one report of every group against the first.
fn report_compare(
    archive: &Archive,
    a: &ReportArgs,
    opts: &ReportOptions,
    runs: &[String],
    out: Option<PathBuf>,
) -> Result<ReportOutput> {
    let groups = resolve_groups(archive, runs)?;
    let out = out.unwrap_or_else(|| {
        let ids: Vec<&str> = groups.iter().filter_map(|g| g.first()).map(|r| r.id.as_str()).collect();
        PathBuf::from("reports").join(format!("compare-{}", ids.join("-vs-")))
    });
    let r = crate::report::build_compare(&groups, a.threshold)?.with_notes(opts.notes.as_deref())?;
    Ok(ReportOutput { files: crate::report::write_compare(&r, &out, opts)?, failed: Vec::new() })
}

/// The groups of a comparison (`A1,A2 B1,B2`), each resolved in the archive.
fn resolve_groups(archive: &Archive, runs: &[String]) -> Result<Vec<Vec<crate::archive::RunDir>>> {
    if runs.len() < 2 {
        return Err(Error::config(
            "--kind compare",
            "a comparison needs two runs or more: `benchbook report BASE NEW [MORE...] --kind compare`",
        ));
    }
    runs.iter().map(|arg| super::compare::resolve_group(archive, &super::compare::split_group(arg))).collect()
}

fn report_one(archive: &Archive, a: &ReportArgs, opts: &ReportOptions, query: &str) -> Result<Vec<PathBuf>> {
    let run = archive.resolve(query)?;
    let out = match &a.out {
        Some(o) if a.runs.len() == 1 => o.clone(),
        Some(o) => o.join(&run.id),
        None => PathBuf::from("reports").join(&run.id),
    };
    crate::report::make(std::slice::from_ref(&run), &archive.root, &out, opts)
}

impl Render for ReportOutput {
    /// One path a line, on stdout, for scripts (nothing with `--quiet`);
    /// the runs not reported on stderr.
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for p in self.files.iter().filter(|_| !t.quiet) {
            writeln!(t.out, "{}", safe_path(p))?;
        }
        for f in &self.failed {
            writeln!(t.err, "error: no report for {}: {}", terminal_safe(&f.run), terminal_safe(&f.error))?;
        }
        Ok(())
    }
}
