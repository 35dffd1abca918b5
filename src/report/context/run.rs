//! The parts of a report about the run itself: title, commit, counts, the
//! system it ran on and, for imported runs, where the numbers came from.

use crate::analysis::PointStat;
use crate::archive::manifest::Manifest;
use crate::vocab::facts::Probe;
use crate::vocab::units::format_bytes;

use super::prose::kv;
use super::{ImportInfo, KeyValue, RunSection, SystemRow, SystemTable};
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

/// The system table: per run, the host and its backends for a measured
/// run, the tools and devices for an imported one, a column per run; then
/// the published spec each run's devices are held against
/// ([`crate::analysis::Catalog`]: a device's own, never another's).
pub(crate) fn system(manifests: &[Manifest], stats: &[PointStat], catalog: &crate::analysis::Catalog) -> SystemTable {
    let mut table = SystemTable::default();
    for (i, manifest) in manifests.iter().enumerate() {
        let of_run: Vec<&PointStat> = stats.iter().filter(|p| p.run_id == manifest.run_id).collect();
        table.runs.push(manifest.label.clone().unwrap_or_else(|| manifest.run_id.clone()));
        for kv in run_system(manifest, &of_run) {
            let row = match table.rows.iter_mut().position(|r| r.key == kv.key) {
                Some(at) => &mut table.rows[at],
                None => {
                    table.rows.push(SystemRow { key: kv.key.clone(), values: vec![String::new(); manifests.len()] });
                    table.rows.last_mut().expect("just pushed")
                }
            };
            row.values[i] = kv.value;
        }
    }
    let specs: Vec<Vec<String>> = manifests.iter().map(|m| catalog.specs_of_run(&m.run_id)).collect();
    if specs.iter().any(|s| !s.is_empty()) {
        let values = specs
            .iter()
            .map(|s| if s.is_empty() { "none known for its devices".to_string() } else { s.join("; ") })
            .collect();
        table.rows.push(SystemRow { key: "Published spec".into(), values });
    }
    // The physical cards, where runs recorded them: a report over two
    // cards of one model says so, run by run.
    let cards: Vec<String> = manifests
        .iter()
        .map(|m| {
            let mut c: Vec<String> = catalog
                .systems
                .iter()
                .filter(|s| s.run_id == m.run_id && s.card.is_some())
                .map(|s| format!("{}: {}", s.device_shown(), s.card.as_deref().unwrap_or_default()))
                .collect();
            c.sort();
            c.dedup();
            c.join("; ")
        })
        .collect();
    if cards.iter().any(|c| !c.is_empty()) {
        table.rows.push(SystemRow { key: "GPU card (UUID)".into(), values: cards });
    }
    table.cards = catalog.cards().into_iter().map(|(card, runs)| format!("{card} ({})", runs.join(", "))).collect();
    // A row every run shares (one host measured twice) reads once.
    table.same = table.runs.len() > 1 && table.rows.iter().all(|r| r.values.windows(2).all(|w| w[0] == w[1]));
    table
}

/// Device names a tool prints for a GPU it has no product name for: ROCm
/// before it knows a new Instinct part, or a GPU in a partition mode.
const GENERIC_DEVICE_NAMES: [&str; 2] = ["AMD Radeon Graphics", "AMD Radeon Graphics Device"];

/// A device name as the logs print it, with what a reader needs to know
/// when that name does not identify the part.
fn device_as_logged(name: &str) -> String {
    if crate::analysis::catalog::unnamed(name) {
        "not named in the log".into()
    } else if GENERIC_DEVICE_NAMES.iter().any(|g| g.eq_ignore_ascii_case(name)) {
        format!("{name} (the generic name ROCm prints for a GPU it has no product name for; the log does not say which model)")
    } else {
        name.to_string()
    }
}

fn run_system(manifest: &Manifest, stats: &[&PointStat]) -> Vec<KeyValue> {
    let h = &manifest.host;
    let imported = manifest.config.imported();
    if !imported.is_empty() {
        let mut tools: Vec<String> = imported.iter().map(|i| i.tool.clone()).collect();
        tools.sort();
        tools.dedup();
        // A device given on the command line (`import --device`) for rows
        // whose file did not name one is said to be given, not read.
        let given: Vec<&str> = imported.iter().filter_map(|i| i.device_given.as_deref()).collect();
        let mut devices: Vec<String> = stats
            .iter()
            .map(|p| {
                if given.contains(&p.device.as_str()) {
                    format!("{} (given on import with --device, not read from the file)", p.device)
                } else {
                    device_as_logged(&p.device)
                }
            })
            .collect();
        devices.sort();
        devices.dedup();
        if devices.is_empty() {
            devices.push("not named in the logs".into());
        }
        return vec![
            kv("Printed by", tools.join(", ")),
            kv("Devices", devices.join("; ")),
            kv("Imported on", format!("{} ({})", h.hostname, h.os)),
        ];
    }
    let mut system = vec![
        kv("Host", h.hostname.clone()),
        kv("CPU", h.cpu_summary()),
        kv("Memory", h.memory_bytes.map(format_bytes).unwrap_or_else(|| "unknown".into())),
        kv("OS / kernel", format!("{} / {}", h.os, h.kernel)),
        kv("Architecture", h.arch.clone()),
    ];
    for b in &manifest.backends {
        let v = match &b.probe {
            Probe::Available { devices } => format!("available: {}", devices.join("; ")),
            Probe::Unavailable { reason } => format!("unavailable: {reason}"),
        };
        system.push(kv(&format!("Backend {}", b.name), v));
    }
    system
}

/// A run's name as reports show it: its label, else its id.
pub fn run_name(manifests: &[Manifest], run: &str) -> String {
    let m = manifests.iter().find(|m| m.run_id == run);
    m.and_then(|m| m.label.clone()).unwrap_or_else(|| run.to_string())
}
