//! `benchbook site OUT/`: a static site over a whole archive, one folder
//! to publish with no server: an index of every run (sortable and
//! filterable by a small script of our own, pinned by its hash in the CSP),
//! a page per run (its points with their rerun intervals), a page per node
//! (each point's run medians over time, with change points and a chart),
//! a page per benchmark point across nodes (where each node stands today,
//! against the fleet's centre), and the example reports, copied whole.
//!
//! **Incremental.** `OUT/site-state.json` keeps, per run, its results'
//! hash, its devices and its points' medians. A second build reads only
//! the runs that are new or changed, rewrites their pages and the node and
//! point pages they touch, and the index; a page whose text is unchanged
//! is never written. A run no longer in the archive (or no longer kept by
//! the filter) loses its page; its node and points are rewritten without
//! it; a node or point left with no run loses its page too.
//!
//! Compare pages (labels that measured the same points) are built in
//! [`compare`].
//!
//! The file is longer than 400 lines because the site's five kinds of
//! page and the state that makes it incremental are one unit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::analysis::changepoints::ChangeRule;
use crate::analysis::history::{series_of_points, HistoryPoint, HistorySeries};
use crate::analysis::PointStat;
use crate::archive::catalog::CatalogEntry;
use crate::archive::{Archive, ScanFilter};
use crate::error::{Error, IoContext, Result};
use crate::plot::metric::HISTORY_LINES;
use crate::render::markdown::escape_markdown as md;
use crate::vocab::units::{format_seconds, format_sig3};
use polars::prelude::IntoLazy;

mod compare;

/// The layout of `site-state.json`; another version rebuilds everything.
const STATE_VERSION: u32 = 1;
const STATE_FILE: &str = "site-state.json";
const SCRIPT: &str = include_str!("../../templates/site.js");
/// Runs read at once: a 10^4-run archive of 10^7 rows read as one scan
/// held 6.1 GB. In slices of 200 runs it took 33.7 s and 475 MiB; of 500,
/// 34.1 s and 780 MiB; of 2,000, 40.2 s and 2.1 GB (each slice then read
/// by several queries).
const RUNS_PER_READ: usize = 200;
/// Rows of a slice decoded whole, every column, at once: 200 runs of
/// 1,000 rows held about 400 MiB at the peak of a whole build.
const ROWS_PER_READ: u64 = 250_000;

/// What a build did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SiteSummary {
    pub runs: usize,
    /// Runs read this time (new or changed since the last build).
    pub runs_read: usize,
    pub nodes: usize,
    pub points: usize,
    pub reports: usize,
    /// Compare pages: labels that measured the same points, each against the next.
    pub compares: usize,
    /// Pages written (new or changed text) and left as they were.
    pub written: usize,
    pub unchanged: usize,
    /// Pages removed: of runs no longer in the archive, and of nodes and
    /// points left with no run.
    pub removed: usize,
    /// Runs left out (damaged), with why.
    pub left_out: Vec<(String, String)>,
}

/// One run as the site remembers it between builds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct RunState {
    sha: Option<String>,
    devices: Vec<String>,
    points: Vec<HistoryPoint>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct State {
    version: u32,
    runs: BTreeMap<String, RunState>,
}

/// Consecutive slices of `ids`, each of at most [`RUNS_PER_READ`] runs
/// and, where it holds more than one run, at most [`ROWS_PER_READ`] rows;
/// with the rows each holds.
fn slices_of<'a>(ids: &[&'a String], rows: impl Fn(&str) -> u64) -> Vec<(Vec<&'a String>, u64)> {
    let mut out: Vec<(Vec<&String>, u64)> = Vec::new();
    for &id in ids {
        let n = rows(id);
        match out.last_mut() {
            Some((last, held)) if last.len() < RUNS_PER_READ && held.saturating_add(n) <= ROWS_PER_READ => {
                last.push(id);
                *held += n;
            }
            _ => out.push((vec![id], n)),
        }
    }
    out
}

/// Build (or update) the site of `archive`'s runs that `filter` keeps in
/// `out`, with the example reports found under `reports` (each folder's
/// `report.html`) copied beside them.
pub fn build(archive: &Archive, filter: &ScanFilter, out: &Path, reports: Option<&Path>) -> Result<SiteSummary> {
    for dir in ["runs", "nodes", "points", "reports", "compare"] {
        std::fs::create_dir_all(out.join(dir)).at(out.join(dir))?;
    }
    let state_path = out.join(STATE_FILE);
    let mut state: State = std::fs::read(&state_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .filter(|s: &State| s.version == STATE_VERSION)
        .unwrap_or_default();
    let (entries, left_out) = archive.verified(filter)?;
    let entries: BTreeMap<String, CatalogEntry> = entries.into_iter().map(|e| (e.run_id.clone(), e)).collect();
    // Runs gone since the last build: their nodes and points are rewritten.
    let gone: Vec<RunState> =
        state.runs.iter().filter(|(id, _)| !entries.contains_key(*id)).map(|(_, r)| r.clone()).collect();
    state.runs.retain(|id, _| entries.contains_key(id));
    let changed: BTreeSet<String> = entries
        .values()
        .filter(|e| state.runs.get(&e.run_id).is_none_or(|r| r.sha != e.results_sha256))
        .map(|e| e.run_id.clone())
        .collect();
    let mut pages = Pages::new(out)?;
    // The reports first, so that a run's page can link its own report.
    let copied = copy_reports(reports, &mut pages)?;
    let mut summary = SiteSummary { runs: entries.len(), runs_read: changed.len(), left_out, ..Default::default() };
    run_pages(archive, &entries, &changed, &copied, &mut pages, &mut state)?;
    // Node and point pages: all from the state, rewritten where a changed
    // run touched them (an unchanged text is not written either way).
    let all: Vec<HistoryPoint> = state.runs.values().flat_map(|r| r.points.iter().cloned()).collect();
    let rule = ChangeRule::default();
    let series = series_of_points(all, &rule);
    let mut touched_nodes: BTreeSet<String> = changed.iter().filter_map(|id| entries.get(id)).map(node_of).collect();
    let mut touched_points: BTreeSet<String> = changed
        .iter()
        .filter_map(|id| state.runs.get(id))
        .flat_map(|r| r.points.iter().map(|p| p.point.clone()))
        .collect();
    for r in &gone {
        touched_points.extend(r.points.iter().map(|p| p.point.clone()));
    }
    if !gone.is_empty() {
        // A gone run with no points (metrics only) names no node: every
        // node page is rewritten (an unchanged text is still not written).
        touched_nodes.extend(entries.values().map(node_of));
    }
    let mut by_node: BTreeMap<&str, Vec<&HistorySeries>> = BTreeMap::new();
    let mut by_point: BTreeMap<&str, Vec<&HistorySeries>> = BTreeMap::new();
    for s in &series {
        by_node.entry(s.node.as_str()).or_default().push(s);
        by_point.entry(s.point.as_str()).or_default().push(s);
    }
    let runs_of_node: BTreeMap<String, Vec<&CatalogEntry>> = entries.values().fold(BTreeMap::new(), |mut m, e| {
        m.entry(node_of(e)).or_insert_with(Vec::new).push(e);
        m
    });
    for (node, runs) in &runs_of_node {
        if touched_nodes.contains(node) || !out.join(format!("nodes/{}.html", file_name(node))).exists() {
            let series = by_node.get(node.as_str()).map(Vec::as_slice).unwrap_or_default();
            pages.write(&format!("nodes/{}.html", file_name(node)), &node_page(node, runs, series, &rule)?)?;
        }
    }
    for (point, series) in &by_point {
        if touched_points.contains(*point) || !out.join(format!("points/{}.html", file_name(point))).exists() {
            pages.write(&format!("points/{}.html", file_name(point)), &point_page(point, series)?)?;
        }
    }
    let stale = |pair: &compare::Pair| !gone.is_empty() || pair.runs().any(|id| changed.contains(id));
    let compared = compare_pages(archive, out, &mut pages, &entries, &state, stale, &mut summary.left_out)?;
    summary.compares = compared.len();
    pages.write(
        "index.html",
        &index_page(archive, &entries, &state, &by_point, &copied, &compared, &summary.left_out),
    )?;
    // What is gone: pages of runs, nodes and points the site no longer has.
    let keep =
        |names: Vec<String>| -> BTreeSet<String> { names.iter().map(|n| format!("{}.html", file_name(n))).collect() };
    summary.removed = prune(&out.join("runs"), &keep(entries.keys().cloned().collect()))?
        + prune(&out.join("nodes"), &keep(runs_of_node.keys().cloned().collect()))?
        + prune(&out.join("points"), &keep(by_point.keys().map(|p| p.to_string()).collect()))?
        + prune(
            &out.join("compare"),
            &compared.iter().map(|p| p.page().trim_start_matches("compare/").to_string()).collect(),
        )?;
    std::fs::write(
        &state_path,
        serde_json::to_vec(&State { version: STATE_VERSION, ..state }).map_err(Error::analysis)?,
    )
    .at(&state_path)?;
    summary.nodes = runs_of_node.len();
    summary.points = by_point.len();
    summary.reports = copied.len();
    (summary.written, summary.unchanged) = (pages.written, pages.unchanged);
    Ok(summary)
}

/// The pages of the runs `changed` (new or changed since the last build),
/// and their entries in the state: a slice of runs at a time, each slice's
/// rows read, summarised and dropped, so memory holds one slice's rows,
/// not the archive's.
fn run_pages(
    archive: &Archive,
    entries: &BTreeMap<String, CatalogEntry>,
    changed: &BTreeSet<String>,
    copied: &[String],
    pages: &mut Pages,
    state: &mut State,
) -> Result<()> {
    let ids: Vec<&String> = changed.iter().collect();
    // A run that does not say how many rows it holds counts as too many.
    for (chunk, rows) in slices_of(&ids, |id| entries[id].rows.unwrap_or(u64::MAX)) {
        let slice: Vec<CatalogEntry> = chunk.iter().map(|id| entries[*id].clone()).collect();
        let scan = archive.scan_verified(&slice)?;
        // A slice within the rows budget is decoded once, whole: the
        // statistics' several queries then read memory, not 200 files'
        // Parquet footers each (10^4 runs: 14.6–15.3 s, against 19.5–21 s). A larger
        // run is left to `point_stats`, which reads it a part at a time.
        let rows = match rows <= ROWS_PER_READ {
            true => scan.rows.collect().map_err(Error::analysis)?.lazy(),
            false => scan.rows,
        };
        let stats = crate::analysis::point_stats(rows)?;
        let mut by_run: BTreeMap<&str, Vec<&PointStat>> = BTreeMap::new();
        for p in &stats {
            by_run.entry(p.run_id.as_str()).or_default().push(p);
        }
        for id in &chunk {
            let e = &entries[*id];
            let points = by_run.remove(id.as_str()).unwrap_or_default();
            let node = node_of(e);
            let started = e.started_at.clone().unwrap_or_default();
            let devices: BTreeSet<String> = points.iter().map(|p| p.device.clone()).collect();
            let history: Vec<HistoryPoint> =
                points.iter().filter_map(|p| HistoryPoint::of(p, &node, &started)).collect();
            pages.write(
                &format!("runs/{}.html", file_name(id)),
                &run_page(e, &points, &devices, copied.iter().any(|c| c == *id)),
            )?;
            state.runs.insert(
                id.to_string(),
                RunState { sha: e.results_sha256.clone(), devices: devices.into_iter().collect(), points: history },
            );
        }
    }
    Ok(())
}

/// The compare pages: rewritten where `stale` (one of their runs changed,
/// or a run left), or missing; the pairs the site has a page for.
fn compare_pages(
    archive: &Archive,
    out: &Path,
    pages: &mut Pages,
    entries: &BTreeMap<String, CatalogEntry>,
    state: &State,
    stale: impl Fn(&compare::Pair) -> bool,
    left_out: &mut Vec<(String, String)>,
) -> Result<Vec<compare::Pair>> {
    let pairs = compare::pairs(entries, |id| {
        state.runs.get(id).map(|r| r.points.iter().map(|p| p.point.clone()).collect()).unwrap_or_default()
    });
    let mut compared = Vec::new();
    for pair in &pairs {
        if !stale(pair) && out.join(pair.page()).exists() {
            compared.push(pair.clone());
            continue;
        }
        match compare::page(archive, pair) {
            Ok((title, markdown)) => {
                pages.write(&pair.page(), &Page { title, markdown, svgs: BTreeMap::new() })?;
                compared.push(pair.clone());
            }
            Err(e) => left_out.push((format!("compare {} against {}", pair.new, pair.base), e.to_string())),
        }
    }
    Ok(compared)
}

/// Remove the `.html` pages of `dir` not named in `keep`; how many.
fn prune(dir: &Path, keep: &BTreeSet<String>) -> Result<usize> {
    let mut removed = 0;
    for entry in std::fs::read_dir(dir).at(dir)? {
        let path = entry.at(dir)?.path();
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        if name.ends_with(".html") && !keep.contains(&name) {
            std::fs::remove_file(&path).at(&path)?;
            removed += 1;
        }
    }
    Ok(removed)
}

/// A run's node: Slurm's node name, else its host, else "unknown node".
fn node_of(e: &CatalogEntry) -> String {
    e.node.clone().or_else(|| e.host.clone()).unwrap_or_else(|| "unknown node".into())
}

pub use crate::archive::store::file_name;

/// The pages of one build: each rendered into the site's own page and
/// written only when its text changed.
struct Pages<'a> {
    out: &'a Path,
    engine: tera::Tera,
    /// `sha256-…` of [`SCRIPT`], for every page's CSP.
    script_hash: String,
    written: usize,
    unchanged: usize,
}

/// A page: its title, Markdown body and inline charts.
struct Page {
    title: String,
    markdown: String,
    svgs: BTreeMap<String, String>,
}

impl<'a> Pages<'a> {
    fn new(out: &'a Path) -> Result<Pages<'a>> {
        use sha2::Digest;
        let hash = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, sha2::Sha256::digest(SCRIPT));
        Ok(Pages {
            out,
            engine: crate::report::engine(None)?,
            script_hash: format!("sha256-{hash}"),
            written: 0,
            unchanged: 0,
        })
    }

    fn write(&mut self, rel: &str, page: &Page) -> Result<()> {
        let body = crate::render::markdown::to_html(&page.markdown, &page.svgs);
        let mut c = tera::Context::new();
        c.insert("title", &page.title);
        c.insert("body", &body);
        c.insert("css", crate::render::css());
        c.insert("script", SCRIPT);
        c.insert("script_hash", &self.script_hash);
        let html = self
            .engine
            .render("page.html", &c)
            .map_err(|e| Error::Template { name: "page.html".into(), message: e.to_string() })?;
        self.put(rel, html.as_bytes())
    }

    /// Write `bytes` at `rel` unless the file already holds them.
    fn put(&mut self, rel: &str, bytes: &[u8]) -> Result<()> {
        let path = self.out.join(rel);
        if std::fs::read(&path).is_ok_and(|old| old == bytes) {
            self.unchanged += 1;
            return Ok(());
        }
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).at(dir)?;
        }
        std::fs::write(&path, bytes).at(&path)?;
        self.written += 1;
        Ok(())
    }
}

/// `[text](href)` with the text escaped.
pub(crate) fn link(text: &str, href: &str) -> String {
    format!("[{}]({href})", md(text))
}

/// A run's page; `has_report`: a report of it was copied into the site.
fn run_page(e: &CatalogEntry, points: &[&PointStat], devices: &BTreeSet<String>, has_report: bool) -> Page {
    let node = node_of(e);
    let mut m = format!(
        "# Run {}\n\n[All runs](../index.html) · node {}{}\n\n",
        md(&e.run_id),
        link(&node, &format!("../nodes/{}.html", file_name(&node))),
        if has_report {
            format!(" · {}", link("its report", &format!("../reports/{}/report.html", file_name(&e.run_id))))
        } else {
            String::new()
        }
    );
    m.push_str("| fact | value |\n|---|---|\n");
    let opt = |v: &Option<String>| v.as_deref().map(md).unwrap_or_else(|| "—".into());
    for (k, v) in [
        ("label", opt(&e.label)),
        ("host", opt(&e.host)),
        ("fleet", opt(&e.fleet)),
        ("started", opt(&e.started_at)),
        ("status", opt(&e.status)),
        ("source", opt(&e.source)),
        ("benchmarks", opt(&e.benches)),
        (
            "devices",
            if devices.is_empty() { "—".into() } else { md(&devices.iter().cloned().collect::<Vec<_>>().join(", ")) },
        ),
        ("benchbook commit", opt(&e.git_commit)),
        ("points, rows", format!("{}, {}", e.points.unwrap_or(0), e.rows.unwrap_or(0))),
    ] {
        m.push_str(&format!("| {k} | {v} |\n"));
    }
    m.push_str("\n## Points\n\nEach median with its rerun 95 % interval: where a second run's median falls 95 % of the time.\n\n");
    m.push_str("| point | median time | ± rerun 95 % | GB/s (copied once) | GFLOP/s | rounds | samples |\n|---|---:|---:|---:|---:|---:|---:|\n");
    for p in points {
        let ci = p.ci_relative().map_or("—".into(), |r| format!("±{:.1} %", r * 100.0));
        let num = |v: Option<f64>| v.filter(|x| x.is_finite() && *x > 0.0).map_or("—".into(), format_sig3);
        let label = link(&p.params().label(), &format!("../points/{}.html", file_name(&p.params().label())));
        m.push_str(&format!(
            "| {label} | {} | {ci} | {} | {} | {} | {} |\n",
            format_seconds(p.median_seconds),
            num(p.gbps_copied),
            num(p.gflops),
            p.rounds,
            p.samples
        ));
    }
    if points.is_empty() {
        m.push_str("\nNo timed point (an exec run's metrics, or every point skipped or failed): `benchbook show` lists them.\n");
    }
    Page { title: format!("Run {}", e.run_id), markdown: m, svgs: BTreeMap::new() }
}

/// A series' latest run, as `value (low–high) unit`.
fn latest(s: &HistorySeries) -> String {
    let Some(r) = s.runs.last() else { return "—".into() };
    let ci = r.low.zip(r.high).map(|(l, h)| format!(" ({}–{})", format_sig3(l), format_sig3(h))).unwrap_or_default();
    format!("{}{ci}", format_sig3(r.value))
}

fn changes(s: &HistorySeries) -> String {
    if s.changes.is_empty() {
        return "none".into();
    }
    s.changes.iter().map(|c| md(&c.to_string())).collect::<Vec<_>>().join("; ")
}

/// The history chart of `series` that share the first series' unit (one
/// y axis, one unit), when any has two runs or more.
fn chart(name: &str, title: &str, series: &[&HistorySeries]) -> Result<BTreeMap<String, String>> {
    let unit = series.iter().find(|s| s.runs.len() >= 2).map(|s| s.unit.as_str());
    let owned: Vec<HistorySeries> =
        series.iter().filter(|s| Some(s.unit.as_str()) == unit).map(|s| (*s).clone()).collect();
    let mut svgs = BTreeMap::new();
    if owned.iter().any(|s| s.runs.len() >= 2) {
        let chart = crate::plot::metric::MetricChart::history(name, title, &owned);
        let svg = crate::plot::to_svg(&chart)?;
        svgs.insert(format!("{name}.svg"), crate::plot::to_page_svg(&chart, &svg)?);
    }
    Ok(svgs)
}

fn node_page(node: &str, runs: &[&CatalogEntry], series: &[&HistorySeries], rule: &ChangeRule) -> Result<Page> {
    let mut m = format!("# Node {}\n\n[All runs](../index.html)\n\n", md(node));
    let changed = series.iter().filter(|s| !s.changes.is_empty()).count();
    m.push_str(&format!(
        "{} runs, {} points; {changed} of them changed level ({}).\n\n",
        runs.len(),
        series.len(),
        rule.describe()
    ));
    let svgs = chart("history", &format!("Run medians on {node}"), series)?;
    if !svgs.is_empty() {
        m.push_str(&format!(
            "![Run medians of {} on {} over time, oldest first, each with its rerun 95 % interval; series with a change first, at most {HISTORY_LINES}](history.svg)\n\n",
            if series.len() > HISTORY_LINES { format!("{HISTORY_LINES} points") } else { "every point".into() },
            md(node)
        ));
    }
    m.push_str("## Points\n\n| point | unit | runs | latest (rerun 95 %) | changes |\n|---|---|---:|---:|---|\n");
    for s in series {
        m.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            link(&s.point, &format!("../points/{}.html", file_name(&s.point))),
            md(&s.unit),
            s.runs.len(),
            latest(s),
            changes(s)
        ));
    }
    m.push_str("\n## Runs\n\n| run | label | started | status | points |\n|---|---|---|---|---:|\n");
    for e in runs.iter().rev() {
        m.push_str(&format!(
            "| {} | {} | {} | {} | {} |\n",
            link(&e.run_id, &format!("../runs/{}.html", file_name(&e.run_id))),
            e.label.as_deref().map(md).unwrap_or_default(),
            e.started_at.as_deref().map(md).unwrap_or_default(),
            e.status.as_deref().map(md).unwrap_or_default(),
            e.points.unwrap_or(0)
        ));
    }
    Ok(Page { title: format!("Node {node}"), markdown: m, svgs })
}

fn point_page(point: &str, series: &[&HistorySeries]) -> Result<Page> {
    let mut m = format!("# {}\n\n[All runs](../index.html)\n\n", md(point));
    let mut latest_values: Vec<f64> = series.iter().filter_map(|s| s.runs.last().map(|r| r.value)).collect();
    latest_values.sort_by(f64::total_cmp);
    let centre = (!latest_values.is_empty()).then(|| crate::vocab::stats::quantile_sorted(&latest_values, 0.5));
    let unit = series.first().map_or("", |s| s.unit.as_str());
    if let Some(c) = centre {
        m.push_str(&format!(
            "{} nodes measured it. The fleet's centre today (the median of each node's latest run): {} {}.\n\n",
            series.len(),
            format_sig3(c),
            md(unit)
        ));
    }
    let svgs = chart("over-time", &format!("{point} over time"), series)?;
    if !svgs.is_empty() {
        m.push_str(&format!("![Each node's run medians over time, oldest first, with their rerun 95 % intervals; nodes with a change first, at most {HISTORY_LINES}](over-time.svg)\n\n"));
    }
    m.push_str(&format!(
        "## Where each node stands\n\n| node | runs | latest {} (rerun 95 %) | latest / centre | changes |\n|---|---:|---:|---:|---|\n",
        md(unit)
    ));
    for s in series {
        let ratio = match (s.runs.last(), centre) {
            (Some(r), Some(c)) if c > 0.0 => format!("{:.3}×", r.value / c),
            _ => "—".into(),
        };
        m.push_str(&format!(
            "| {} | {} | {} | {ratio} | {} |\n",
            link(&s.node, &format!("../nodes/{}.html", file_name(&s.node))),
            s.runs.len(),
            latest(s),
            changes(s)
        ));
    }
    Ok(Page { title: point.to_string(), markdown: m, svgs })
}

/// Copy every `reports/NAME/report.html` into the site (only where its
/// bytes changed); the names copied.
fn copy_reports(from: Option<&Path>, pages: &mut Pages) -> Result<Vec<String>> {
    let Some(from) = from else { return Ok(Vec::new()) };
    let Ok(dir) = std::fs::read_dir(from) else { return Ok(Vec::new()) };
    let mut names: Vec<(String, PathBuf)> = dir
        .filter_map(|e| e.ok())
        .map(|e| (e.file_name().to_string_lossy().to_string(), e.path().join("report.html")))
        .filter(|(_, p)| p.is_file())
        .collect();
    names.sort();
    for (name, path) in &names {
        let bytes = std::fs::read(path).at(path)?;
        pages.put(&format!("reports/{}/report.html", file_name(name)), &bytes)?;
    }
    Ok(names.into_iter().map(|(n, _)| n).collect())
}

fn index_page(
    archive: &Archive,
    entries: &BTreeMap<String, CatalogEntry>,
    state: &State,
    by_point: &BTreeMap<&str, Vec<&HistorySeries>>,
    reports: &[String],
    compared: &[compare::Pair],
    left_out: &[(String, String)],
) -> Page {
    let nodes: BTreeSet<String> = entries.values().map(node_of).collect();
    let mut m = format!(
        "# benchbook: {}\n\n{} runs on {} nodes, {} benchmark points. Every page is static and self-contained: it needs no server and no network.\n\n",
        md(&archive.root.display().to_string()),
        entries.len(),
        nodes.len(),
        by_point.len()
    );
    if !left_out.is_empty() {
        m.push_str(&format!("{} runs are left out, damaged: ", left_out.len()));
        m.push_str(
            &left_out.iter().map(|(id, why)| format!("{} ({})", md(id), md(why))).collect::<Vec<_>>().join("; "),
        );
        m.push_str(".\n\n");
    }
    if !reports.is_empty() {
        m.push_str("## Reports\n\n");
        for r in reports {
            m.push_str(&format!("- {}\n", link(r, &format!("reports/{}/report.html", file_name(r)))));
        }
        m.push('\n');
    }
    if !compared.is_empty() {
        m.push_str(
            "## Comparisons\n\nLabels whose runs measured the same points, each against the next one recorded.\n\n",
        );
        for p in compared {
            m.push_str(&format!("- {}\n", link(&format!("{} against {}", p.new, p.base), &p.page())));
        }
        m.push('\n');
    }
    m.push_str("## Nodes\n\n");
    m.push_str(&nodes.iter().map(|n| link(n, &format!("nodes/{}.html", file_name(n)))).collect::<Vec<_>>().join(" · "));
    m.push_str("\n\n## Benchmark points across nodes\n\n");
    m.push_str(
        &by_point.keys().map(|p| link(p, &format!("points/{}.html", file_name(p)))).collect::<Vec<_>>().join(" · "),
    );
    m.push_str("\n\n## Runs\n\nNewest first. Click a column's title to sort by it; type to filter.\n\n");
    m.push_str(
        "| run | label | node | fleet | device | source | status | started |\n|---|---|---|---|---|---|---|---|\n",
    );
    let mut rows: Vec<&CatalogEntry> = entries.values().collect();
    rows.sort_by(|a, b| (&b.started_at, &b.run_id).cmp(&(&a.started_at, &a.run_id)));
    for e in rows {
        let node = node_of(e);
        let devices = state.runs.get(&e.run_id).map(|r| r.devices.join(", ")).unwrap_or_default();
        m.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} | {} |\n",
            link(&e.run_id, &format!("runs/{}.html", file_name(&e.run_id))),
            e.label.as_deref().map(md).unwrap_or_default(),
            link(&node, &format!("nodes/{}.html", file_name(&node))),
            e.fleet.as_deref().map(md).unwrap_or_default(),
            md(&devices),
            e.source.as_deref().map(md).unwrap_or_default(),
            e.status.as_deref().map(md).unwrap_or_default(),
            e.started_at.as_deref().map(md).unwrap_or_default()
        ));
    }
    Page { title: "benchbook site".into(), markdown: m, svgs: BTreeMap::new() }
}

#[cfg(test)]
mod tests {
    use super::{file_name, slices_of, ROWS_PER_READ, RUNS_PER_READ};

    /// Slices keep the runs' order, hold at most RUNS_PER_READ runs and,
    /// with more than one run, at most ROWS_PER_READ rows; a run too large
    /// for the budget (or of unknown size) is a slice of its own.
    #[test]
    fn slices_hold_runs_in_order_within_both_budgets() {
        let ids: Vec<String> = (0..1000).map(|i| format!("r{i:04}")).collect();
        let refs: Vec<&String> = ids.iter().collect();
        let rows = |id: &str| match &id[1..] {
            "0005" => u64::MAX,
            "0400" => ROWS_PER_READ * 3,
            n => n.parse::<u64>().unwrap() % 7 * 300,
        };
        let slices = slices_of(&refs, rows);
        let flat: Vec<&String> = slices.iter().flat_map(|(s, _)| s).copied().collect();
        assert_eq!(flat, refs, "every run once, in order");
        for (s, held) in &slices {
            assert!(!s.is_empty() && s.len() <= RUNS_PER_READ);
            assert_eq!(*held, s.iter().fold(0u64, |n, id| n.saturating_add(rows(id))), "the rows it says it holds");
            assert!(s.len() == 1 || *held <= ROWS_PER_READ, "{} runs, {held} rows", s.len());
        }
        for big in ["r0005", "r0400"] {
            assert!(slices.iter().any(|(s, _)| s.len() == 1 && s[0] == big), "{big} alone");
        }
        assert!(slices_of(&[], rows).is_empty());
    }

    #[test]
    fn file_names_are_safe_and_never_shared() {
        assert_eq!(file_name("20261126T213044Z-idle1-199f"), "20261126T213044Z-idle1-199f");
        assert_eq!(file_name("node-3.rack_1"), "node-3.rack_1");
        for hostile in ["../../etc/passwd", "a/b", "<script>", "", ".hidden", "memcpy copy 4 KiB 1T"] {
            let f = file_name(hostile);
            assert!(!f.is_empty() && !f.starts_with('.'), "{hostile:?} -> {f:?}");
            assert!(f.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)), "{hostile:?} -> {f:?}");
        }
        assert_ne!(file_name("a/b"), file_name("a_b"), "a replaced character never makes two names one file");
        assert_ne!(file_name("a b"), file_name("a/b"));
    }
}
