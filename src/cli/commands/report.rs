//! `benchbook report`: write the Markdown/HTML report of one or more runs.

use std::io;
use std::path::PathBuf;

use serde::Serialize;

use crate::archive::Archive;
use crate::cli::print::{safe_path, terminal_safe, Render, Term};
use crate::cli::ReportArgs;
use crate::error::Result;
use crate::report::ReportOptions;

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
/// run, `<out>/<run-id>/` for several, `reports/<run-id>/` by default.
pub fn report(archive: &Archive, a: &ReportArgs) -> Result<ReportOutput> {
    let opts = ReportOptions {
        format: a.format,
        spec: a.spec.clone(),
        png: a.png,
        templates: a.templates.clone(),
        no_verify: a.no_verify,
        ..ReportOptions::default()
    };
    if a.kind == crate::report::Kind::Compare {
        return report_compare(archive, a, &opts);
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

/// `--kind compare`: one report of every group against the first.
fn report_compare(archive: &Archive, a: &ReportArgs, opts: &ReportOptions) -> Result<ReportOutput> {
    if a.runs.len() < 2 {
        return Err(crate::error::Error::config(
            "--kind compare",
            "a comparison needs two runs or more: `benchbook report BASE NEW [MORE...] --kind compare`",
        ));
    }
    let mut groups = Vec::new();
    for arg in &a.runs {
        groups.push(super::compare::resolve_group(archive, &super::compare::split_group(arg))?);
    }
    let out = a.out.clone().unwrap_or_else(|| {
        let ids: Vec<&str> = groups.iter().filter_map(|g| g.first()).map(|r| r.id.as_str()).collect();
        PathBuf::from("reports").join(format!("compare-{}", ids.join("-vs-")))
    });
    let r = crate::report::build_compare(&groups, a.threshold)?;
    Ok(ReportOutput { files: crate::report::write_compare(&r, &out, opts)?, failed: Vec::new() })
}

fn report_one(archive: &Archive, a: &ReportArgs, opts: &ReportOptions, query: &str) -> Result<Vec<PathBuf>> {
    let run = archive.resolve(query)?;
    let out = match &a.out {
        Some(o) if a.runs.len() == 1 => o.clone(),
        Some(o) => o.join(&run.id),
        None => PathBuf::from("reports").join(&run.id),
    };
    let r = crate::report::build(&run, &archive.root, opts)?;
    crate::report::write(&r, &out, opts)
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
