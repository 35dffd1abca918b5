//! The parts of a report about the run itself: title, commit, counts, the
//! system it ran on and, for imported runs, where the numbers came from.

use crate::analysis::{PointStat, Spec};
use crate::archive::manifest::Manifest;
use crate::vocab::facts::Probe;
use crate::vocab::units::format_bytes;

use super::prose::kv;
use super::{ImportInfo, KeyValue, RunSection};
use crate::vocab::units::shell_join;

pub(super) fn title(manifest: &Manifest) -> String {
    match &manifest.label {
        Some(l) => format!("benchbook report: {l}"),
        None => format!("benchbook report: {}", manifest.run_id),
    }
}

/// The commit benchbook was built from, and whether it had local changes.
pub(super) fn commit(manifest: &Manifest) -> String {
    match (&manifest.tool.git_commit, manifest.tool.git_dirty) {
        (Some(c), Some(true)) => format!("{c} (with uncommitted changes)"),
        (Some(c), _) => c.clone(),
        (None, _) => "unknown".into(),
    }
}

pub(super) fn run_section(manifest: &Manifest) -> RunSection {
    let c = &manifest.counts;
    RunSection {
        id: manifest.run_id.clone(),
        status: manifest.effective_status().as_str().into(),
        status_detail: manifest.status_detail.clone(),
        label: manifest.label.clone(),
        source: manifest.source.to_string(),
        started_at: manifest.started_at.clone(),
        ended_at: manifest.ended_at.clone(),
        command: shell_join(&manifest.argv),
        preset: manifest.config.preset().map(|p| p.name().to_string()),
        points: c.points,
        measured: c.measured,
        skipped: c.skipped,
        failed: c.failed,
        rows: c.rows,
    }
}

/// The files an imported run was read from, as its config records them;
/// empty for a run benchbook measured.
pub(super) fn imported(manifest: &Manifest) -> Vec<ImportInfo> {
    let text = |v: &Option<String>| v.clone().unwrap_or_else(|| "not in the file".into());
    manifest
        .config
        .imported()
        .iter()
        .map(|i| ImportInfo {
            file: i.file.clone(),
            tool: i.tool.clone(),
            tool_version: text(&i.tool_version),
            command: text(&i.command),
            warnings: i.warnings.clone(),
        })
        .collect()
}

/// The system table: the host and its backends for a measured run; the
/// tools and devices for an imported one. Then the roofline specs used.
pub(super) fn system(
    manifest: &Manifest,
    stats: &[PointStat],
    imported: &[ImportInfo],
    spec: Option<&Spec>,
    gpu_spec: Option<&Spec>,
) -> Vec<KeyValue> {
    let h = &manifest.host;
    let mut devices: Vec<String> = stats.iter().map(|p| p.device.clone()).collect();
    devices.sort();
    devices.dedup();
    let mut system = if !imported.is_empty() {
        vec![
            kv("Measured by", {
                let mut tools: Vec<String> = imported.iter().map(|i| i.tool.clone()).collect();
                tools.dedup();
                tools.join(", ")
            }),
            kv("Devices (from the logs)", devices.join("; ")),
            kv("Imported on", format!("{} ({})", h.hostname, h.os)),
        ]
    } else {
        vec![
            kv("Host", h.hostname.clone()),
            kv("CPU", format!("{} ({} logical CPUs)", h.cpu_model, h.logical_cpus)),
            kv("Memory", h.memory_bytes.map(format_bytes).unwrap_or_else(|| "unknown".into())),
            kv("OS / kernel", format!("{} / {}", h.os, h.kernel)),
            kv("Architecture", h.arch.clone()),
        ]
    };
    for b in manifest.backends.iter().filter(|_| imported.is_empty()) {
        let v = match &b.probe {
            Probe::Available { devices } => format!("available: {}", devices.join("; ")),
            Probe::Unavailable { reason } => format!("unavailable: {reason}"),
        };
        system.push(kv(&format!("Backend {}", b.name), v));
    }
    if let Some(s) = spec {
        system.push(kv("Roofline spec", s.name.clone()));
    }
    if let Some(s) = gpu_spec {
        system.push(kv("GPU roofline spec", s.name.clone()));
    }
    system
}
