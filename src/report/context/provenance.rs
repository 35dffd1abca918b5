//! The provenance appendix: for every table and figure of the report, the
//! run, the benchmark and its parameters, how many samples each point has
//! and the rule that stopped sampling, which bytes its rates count, the
//! benchbook build, and the command that reproduces it. Imported numbers
//! name the file they were read from and its sha256.

use std::collections::BTreeSet;

use crate::analysis::workload::MetricStat;
use crate::analysis::PointStat;
use crate::archive::manifest::Manifest;
use crate::vocab::benches::Bench;
use crate::vocab::source::RowOrigin;
use crate::vocab::units::{format_bytes, shell_join};

use super::ProvenanceRow;

/// The report section a point appears in, as the template titles it (the
/// benchmark table's section titles).
fn section_of(p: &PointStat) -> &'static str {
    let info = Bench::of(&p.bench).map(|b| b.info());
    let title = if p.is_gpu() { info.and_then(|i| i.gpu_section) } else { info.and_then(|i| i.section) };
    match title {
        // MPI ping-pong has its own table beside the bandwidth section.
        Some(_) if p.is_p2p_latency() => LATENCY,
        Some(t) => t,
        None => OTHER,
    }
}

const LATENCY: &str = "Point-to-point: Latency";
const OTHER: &str = "Other measurements";

/// Which bytes a section's rates count: the benchmark table's text, and for
/// the latency table, what its times are.
fn bytes_counted(section: &str, bench: &str) -> &'static str {
    match (section, Bench::of(bench)) {
        (LATENCY, _) => "time per one-way message (half the round trip)",
        (_, Some(b)) => b.info().counts,
        (_, None) => "bytes copied once (the payload), GB/s = 10^9 bytes/s",
    }
}

/// Distinct values, in order, joined; long lists shortened to their ends.
fn summary<T: Ord + Clone>(values: impl Iterator<Item = T>, show: impl Fn(&T) -> String) -> Option<String> {
    let set: BTreeSet<T> = values.collect();
    let v: Vec<String> = set.iter().map(show).collect();
    match v.len() {
        0 => None,
        1..=4 => Some(v.join(", ")),
        n => Some(format!("{} … {} ({n} values)", v[0], v[n - 1])),
    }
}

fn parameters(points: &[&PointStat]) -> String {
    let mut parts = Vec::new();
    let text = |f: fn(&PointStat) -> Option<String>| summary(points.iter().filter_map(|p| f(p)), |s| s.clone());
    if let Some(s) = text(|p| Some(p.op.clone())) {
        parts.push(format!("op {s}"));
    }
    if let Some(s) = summary(points.iter().filter_map(|p| p.size_bytes), |b| format_bytes(*b)) {
        parts.push(format!("sizes {s}"));
    }
    if let Some(s) = summary(points.iter().filter_map(|p| p.m.zip(p.n).zip(p.k)), |((m, n), k)| {
        crate::vocab::gemm::shape(*m, *n, *k)
    }) {
        parts.push(format!("shapes {s}"));
    }
    for (name, f) in [
        ("dtype", (|p: &PointStat| p.dtype.clone()) as fn(&PointStat) -> Option<String>),
        ("method", |p| p.method.clone()),
        ("variant", |p| p.variant.clone()),
        ("threads", |p| p.threads.map(|t| t.to_string())),
        ("ranks", |p| p.ranks.map(|t| t.to_string())),
        ("peer", |p| p.peer.clone()),
        ("device", |p| Some(p.device.clone()).filter(|d| d != "none" && !d.is_empty())),
    ] {
        if let Some(s) = text(f) {
            parts.push(format!("{name} {s}"));
        }
    }
    parts.join("; ")
}

/// The imported files (each row's `source` is `import:<tool>:<kept file>`)
/// behind `points`, with the sha256 the manifest records for each.
fn sources(manifest: &Manifest, points: &[&PointStat]) -> String {
    sources_of(manifest, points.iter().filter_map(|p| p.source.as_deref()))
}

/// [`sources`] of rows' `source` values.
fn sources_of<'a>(manifest: &Manifest, sources: impl Iterator<Item = &'a str>) -> String {
    let kept: BTreeSet<(String, String)> = sources
        .filter_map(|s| match RowOrigin::parse(Some(s)) {
            RowOrigin::Import { tool, file } if !file.is_empty() => Some((tool.to_string(), file.to_string())),
            _ => None,
        })
        .collect();
    if kept.is_empty() {
        return "the imported files listed under Reproducibility".into();
    }
    let imports = manifest.config.imported();
    kept.iter()
        .map(|(tool, name)| {
            // `source-<n>-…` is the n-th imported file.
            let original = crate::vocab::source::stored_file_parts(name)
                .and_then(|(n, _)| imports.get(n.checked_sub(1)?).map(|f| f.file.clone()));
            let hash =
                manifest.files.iter().find(|f| &f.path == name).map(|f| f.sha256.as_str()).unwrap_or("not recorded");
            match original {
                Some(o) => format!("{o} ({tool}), kept in the run as {name}, sha256 {hash}"),
                None => format!("{name} ({tool}), sha256 {hash}"),
            }
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn build_of(manifest: &Manifest) -> String {
    format!(
        "benchbook {}{}",
        manifest.tool.version,
        manifest.tool.git_commit.as_deref().map(|c| format!(" @ {}", &c[..c.len().min(12)])).unwrap_or_default()
    )
}

/// The workload section's row: its metric points, their samples, and how
/// the run came to be (a command's repetitions, or an imported file).
pub(super) fn workload_row(manifest: &Manifest, metrics: &[MetricStat]) -> Option<ProvenanceRow> {
    if metrics.is_empty() {
        return None;
    }
    let names = summary(metrics.iter().map(|m| m.metric.clone()), |s| s.clone()).unwrap_or_default();
    let params = summary(metrics.iter().flat_map(|m| m.params.keys().cloned()), |s| s.clone());
    let (lo, hi) = metrics.iter().fold((usize::MAX, 0), |(lo, hi), m| (lo.min(m.samples), hi.max(m.samples)));
    let samples = if lo == hi { format!("{lo} per point") } else { format!("{lo}–{hi} per point") };
    let (stopping, reproduce) = match super::workload::exec_spec(manifest) {
        Some(spec) => (
            format!(
                "fixed: {} repetition(s) of {}; each metric is the command's own figure",
                spec.repeat,
                shell_join(&spec.command)
            ),
            format!("benchbook rerun {}; or the original command: {}", manifest.run_id, shell_join(&manifest.argv)),
        ),
        None => (
            format!("imported: the tool's own figures, read from {}", sources_of(manifest, metrics.iter().map(|m| m.source.as_str()))),
            "not re-runnable by benchbook: run the tool's command in the Methodology table, then benchbook import its log".into(),
        ),
    };
    Some(ProvenanceRow {
        section: "Workload metrics".into(),
        run: manifest.run_id.clone(),
        benchmark: format!(
            "{} metric points: {names}{}",
            metrics.len(),
            params.map(|p| format!("; parameters {p}")).unwrap_or_default()
        ),
        samples,
        stopping,
        bytes: "each metric in its own unit (the table's unit column); no bytes counted".into(),
        build: build_of(manifest),
        reproduce,
    })
}

pub(super) fn provenance(manifest: &Manifest, stats: &[PointStat], stop_rule: &str) -> Vec<ProvenanceRow> {
    let build = build_of(manifest);
    let imported = manifest.is_import();
    let mut sections: Vec<&'static str> = Vec::new();
    for p in stats {
        let s = section_of(p);
        if !sections.contains(&s) {
            sections.push(s);
        }
    }
    sections
        .into_iter()
        .map(|section| {
            let points: Vec<&PointStat> = stats.iter().filter(|p| section_of(p) == section).collect();
            let benches: BTreeSet<String> = points.iter().map(|p| p.bench.clone()).collect();
            let (lo, hi) = points.iter().fold((u32::MAX, 0), |(lo, hi), p| (lo.min(p.samples), hi.max(p.samples)));
            let samples = if lo == hi { format!("{lo} per point") } else { format!("{lo}–{hi} per point") };
            let first_bench = benches.iter().next().cloned().unwrap_or_default();
            let (stopping, reproduce) = if imported {
                (
                    format!("imported: the tool's own figure, one sample per point; read from {}", sources(manifest, &points)),
                    "not re-runnable by benchbook: run the tool's command in the Methodology table, then benchbook import its log".into(),
                )
            } else {
                (stop_rule.to_string(), format!("benchbook rerun {}; or the original command: {}", manifest.run_id, shell_join(&manifest.argv)))
            };
            ProvenanceRow {
                section: section.into(),
                run: manifest.run_id.clone(),
                benchmark: format!("{} ({} points): {}", benches.into_iter().collect::<Vec<_>>().join(", "), points.len(), parameters(&points)),
                samples,
                stopping,
                bytes: bytes_counted(section, &first_bench).into(),
                build: build.clone(),
                reproduce,
            }
        })
        .collect()
}
