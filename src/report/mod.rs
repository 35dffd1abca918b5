//! Reports: analysis results → a [`ReportContext`] and the sections of its
//! kind → tera Markdown and HTML pages ([`crate::render`]).
//!
//! The file is longer than 400 lines because it holds the one path from runs
//! to a report (rows, statistics, sections, every chart with its marks and
//! lines, the GPU GEMM panels) that every report kind shares.

pub mod compare;
pub mod context;
pub mod fleet;
pub mod kind;
pub mod sections;

pub use compare::{build_compare, CompareReport};
pub use context::ReportContext;
pub use kind::Kind;

use std::path::{Path, PathBuf};

use polars::prelude::*;

use crate::analysis::{point_stats, Catalog, PointStat, SpecBook};
use crate::archive::schema::from_dataframe;
use crate::archive::RunDir;
use crate::error::{Error, Result};
use crate::plot::{self, Chart};
use crate::render::{self, charts::ask_for_charts, render_template, write_page};

/// The fleet report's own template.
const FLEET_TEMPLATE: (&str, &str) = ("fleet.md", include_str!("../../templates/fleet.md"));

/// Every built-in template (name, content): the page templates, each
/// section's partial ([`sections::partials`]) and each kind's template,
/// generated from its list of sections.
pub fn templates() -> Vec<(String, String)> {
    let pages = render::PAGE_TEMPLATES.iter().chain([&FLEET_TEMPLATE]).map(|(n, t)| (n.to_string(), t.to_string()));
    let partials = sections::partials().map(|(n, t)| (n, t.to_string()));
    let kinds = Kind::ALL
        .iter()
        .filter(|k| !k.sections().is_empty())
        .map(|k| (k.template(), sections::kind_template(&k.sections())));
    let sentences = context::said::PARTIALS.iter().map(|(n, t)| (n.to_string(), t.to_string()));
    pages.chain(partials).chain(kinds).chain(sentences).collect()
}

pub use crate::render::Format;

/// The tera engine with the reports' templates (each replaced by a
/// same-named file in `overrides`), filters, escaping and `say()`.
pub fn engine(overrides: Option<&Path>) -> Result<tera::Tera> {
    let mut t = render::engine(templates(), overrides)?;
    context::said::register(&mut t);
    Ok(t)
}

/// Options of `benchbook report`.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    pub format: Format,
    /// Spec id to use as roofline (default: matched from the device name).
    pub spec: Option<String>,
    /// Also write PNG charts.
    pub png: bool,
    /// A folder whose files override the built-in templates.
    pub templates: Option<PathBuf>,
    /// Read results whose sha256 no longer matches the manifest (forensics).
    pub no_verify: bool,
    /// The report kind; `None` picks it from the runs' contents
    /// ([`Kind::detect`]).
    pub kind: Option<Kind>,
    /// A Markdown file whose `##` sections go where a write-up has prose.
    pub notes: Option<PathBuf>,
    /// GPU pairs whose peer-copy curves are charted (`0-1,0-2`); default:
    /// every pair up to 8, else those from the lowest GPU.
    pub pairs: Option<String>,
    /// The interconnect id (`data/specs/interconnects.toml`) of the link
    /// the network transfers crossed; logs name a link's type, not its rate.
    pub link: Option<String>,
    /// Let throttled points set plateaus and headlines (still flagged).
    pub keep_throttled: bool,
}

/// What a report's templates see: the run context's fields, and the
/// write-up sections under `writeup`.
#[derive(serde::Serialize)]
struct Page<'a> {
    #[serde(flatten)]
    context: &'a ReportContext,
    writeup: &'a sections::Sections,
}

/// Render the Markdown of a report as `kind`, asking for its charts.
pub fn render_markdown(engine: &mut tera::Tera, report: &Report) -> Result<(String, Vec<String>)> {
    let page = Page { context: &report.context, writeup: &report.writeup };
    let asked = ask_for_charts(engine, &report.charts);
    let md = render_template(engine, &report.kind.template(), &page)?;
    Ok((md, asked.take()))
}

/// A run's analysed report, before it is written.
pub struct Report {
    pub context: ReportContext,
    /// The write-up sections of its kind (empty for `--kind run`).
    pub writeup: sections::Sections,
    pub charts: Vec<Box<dyn Chart>>,
    /// The kind it was built as (given, or detected from its rows).
    pub kind: Kind,
}

/// Analyse a run and build its report context and charts.
pub fn build(run: &RunDir, archive_root: &Path, opts: &ReportOptions) -> Result<Report> {
    build_runs(std::slice::from_ref(run), archive_root, opts)
}

/// Analyse one or more runs into one report: a write-up kind sets them
/// side by side (an MPI run, a GPU run, imported published logs).
pub fn build_runs(runs: &[RunDir], archive_root: &Path, opts: &ReportOptions) -> Result<Report> {
    let mut manifests = Vec::new();
    let (mut stats, mut metrics, mut not_measured) = (Vec::new(), Vec::new(), Vec::new());
    for run in runs {
        let (manifest, rows) = run.scan(opts.no_verify)?;
        stats.extend(point_stats(rows.clone())?);
        metrics.extend(crate::analysis::workload::metric_stats_lazy(rows.clone())?);
        not_measured.extend(from_dataframe(
            &rows.filter(col("status").neq(lit("measured"))).collect().map_err(Error::analysis)?,
        )?);
        manifests.push(manifest);
    }
    if manifests.is_empty() {
        return Err(Error::config("RUN", "a report needs at least one run"));
    }
    crate::analysis::telemetry::keep_throttled(&mut stats, opts.keep_throttled);
    crate::analysis::telemetry::over_power_limit(&mut stats, &manifests);
    let kind = opts.kind.unwrap_or_else(|| Kind::detect(&stats, &metrics, &manifests));
    // A GEMM write-up holds the GPUs' GEMMs: the copies of a run that also
    // measured them (a PyTorch reference's `copy_`) belong to the memcpy one.
    if kind == Kind::Gemm {
        stats.retain(|p| !p.is_gpu() || p.bench == crate::vocab::benches::Bench::Gemm);
    }
    let notes = opts.notes.as_deref().map(sections::notes::Notes::read).transpose()?.unwrap_or_default();
    let book = SpecBook::load(archive_root)?;
    let explicit = match &opts.spec {
        Some(id) => Some(book.specs.get(id).ok_or_else(|| {
            Error::config(
                "--spec",
                format!("no spec `{id}`; known: {}", book.specs.keys().cloned().collect::<Vec<_>>().join(", ")),
            )
        })?),
        None => None,
    };
    // Whose rows each curve holds and what it is called: once, for the
    // whole report (every section, chart and sentence reads the names).
    let mut catalog = Catalog::build(&stats, &manifests, &book, explicit);
    let all = stats;
    let (stats, pairs_note) = sections::pairs::Pairs::parse(opts.pairs.as_deref())?.filter(&all);
    let links = sections::NamedLinks::parse(opts.link.as_deref(), &book, &manifests)?;
    // Every series of the report, once: each held against its own
    // system's memory roofline (the catalog's one rule).
    catalog.hold_series(&stats);
    let (gpu_stats, cpu_stats): (Vec<PointStat>, Vec<PointStat>) = stats.iter().cloned().partition(PointStat::is_gpu);
    // The specs of the host and GPU sections: the catalog's, the one rule
    // (a device's own spec by name; --spec for a device of its kind that
    // has none).
    let spec = cpu_stats.iter().find_map(|p| catalog.spec_of_point(p));
    let gpu_spec = gpu_stats.iter().find_map(|p| catalog.spec_of_point(p));
    let mut context = context::build(&manifests, &stats, &metrics, &not_measured, spec, gpu_spec, &catalog);
    let mut charts: Vec<Box<dyn Chart>> = Vec::new();
    let writeup = if kind != Kind::Run {
        let input = sections::Input {
            kind,
            manifests: &manifests,
            stats: &stats,
            all: &all,
            book: &book,
            spec: gpu_spec.or(spec),
            links,
            catalog: &catalog,
        };
        let (writeup, more) = sections::build(&input, notes, pairs_note)?;
        trim_other(kind, &writeup, &mut context.other);
        let names: Vec<String> =
            manifests.iter().map(|m| m.label.clone().unwrap_or_else(|| m.run_id.clone())).collect();
        context.title = format!(
            "benchbook report: {} — {}",
            names.join(" + "),
            kind.subject_of(&stats, sections::shared_memory_only(&manifests))
        );
        charts.extend(more);
        writeup
    } else {
        sections::Sections { notes, pairs_note, ..sections::Sections::default() }
    };
    let l2_of = |p: &PointStat| context::l2_of(&manifests, p);
    charts.extend(plot::series::bandwidth_charts(&catalog, &l2_of, gpu_spec));
    let run_name = |run: &str| context::run_name(&manifests, run);
    if let Some(chart) = plot::series::gpu_gemm_chart(&catalog, &gpu_stats, gpu_spec, &run_name) {
        charts.push(Box::new(chart));
    }
    charts.extend(plot::series::cpu_gemm_chart(&cpu_stats).map(|c| Box::new(c) as Box<dyn Chart>));
    if let Some(w) = &context.workload {
        let label = |run: &str| context::run_name(&manifests, run);
        for c in &w.charts {
            charts.push(Box::new(crate::plot::MetricChart::of(&c.name, &c.title, &metrics, &c.metric, &c.x, &label)));
        }
    }
    plot::share_palette(&mut charts);
    Ok(Report { context, writeup, charts, kind })
}

/// Drop from "Other measurements" the rows a write-up section shows.
fn trim_other(kind: Kind, s: &sections::Sections, other: &mut Vec<context::OtherRow>) {
    use crate::vocab::benches::Bench;
    if kind == Kind::Network {
        other.retain(|o| o.bench != Bench::Rdma);
    }
    if matches!(kind, Kind::MemcpyPeer | Kind::Network) {
        other.retain(|o| !(o.bench == Bench::Nvbandwidth && s.matrices.iter().any(|m| m.title == o.op)));
    }
}

/// Write a report into `out`: Markdown, HTML, SVG (and PNG) charts.
/// Returns the paths written.
pub fn write(report: &Report, out: &Path, opts: &ReportOptions) -> Result<Vec<PathBuf>> {
    write_with(engine(opts.templates.as_deref())?, report, out, opts)
}

/// [`build_runs`] and [`write`] in one: the template engine (parsing every
/// template, about a tenth of a 10^6-row report) is built on a thread of
/// its own while the runs are analysed.
pub fn make(runs: &[RunDir], archive_root: &Path, out: &Path, opts: &ReportOptions) -> Result<Vec<PathBuf>> {
    let templates = opts.templates.clone();
    let engine = std::thread::spawn(move || engine(templates.as_deref()));
    let report = build_runs(runs, archive_root, opts);
    let engine = engine.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
    write_with(engine?, &report?, out, opts)
}

fn write_with(mut engine: tera::Tera, report: &Report, out: &Path, opts: &ReportOptions) -> Result<Vec<PathBuf>> {
    let (md, asked) = render_markdown(&mut engine, report)?;
    write_page(&engine, &report.context.title, &md, &report.charts, &asked, out, opts.format, opts.png)
}

/// Render the Markdown of a compare report, asking for its charts.
pub fn render_compare_markdown(engine: &mut tera::Tera, report: &CompareReport) -> Result<(String, Vec<String>)> {
    let asked = ask_for_charts(engine, &report.charts);
    let md = render_template(engine, &Kind::Compare.template(), &report.context)?;
    Ok((md, asked.take()))
}

/// Write a compare report into `out`, as [`write`] does a run report.
pub fn write_compare(report: &CompareReport, out: &Path, opts: &ReportOptions) -> Result<Vec<PathBuf>> {
    let mut engine = engine(opts.templates.as_deref())?;
    let (md, asked) = render_compare_markdown(&mut engine, report)?;
    write_page(&engine, &report.context.title, &md, &report.charts, &asked, out, opts.format, opts.png)
}
