//! The runs a write-up report sets side by side (an MPI run, a GPU run,
//! imported published logs), one row each. Template: `sections/runs.md`.

use serde::Serialize;

use crate::archive::manifest::Manifest;

#[derive(Debug, Clone, Serialize)]
pub struct RunRow {
    pub id: String,
    pub label: String,
    pub source: String,
    pub host: String,
    pub started_at: String,
    pub status: String,
    pub measured: u32,
    pub rows: u64,
}

/// One row per run; empty for a single run (the header says it all).
pub fn rows(manifests: &[Manifest]) -> Vec<RunRow> {
    if manifests.len() < 2 {
        return Vec::new();
    }
    manifests
        .iter()
        .map(|m| RunRow {
            id: m.run_id.clone(),
            label: m.label.clone().unwrap_or_default(),
            source: m.source.to_string(),
            host: m.host.hostname.clone(),
            started_at: m.started_at.clone(),
            status: m.effective_status().as_str().into(),
            measured: m.counts.measured,
            rows: m.counts.rows,
        })
        .collect()
}
