//! A `fleet gate` verdict as its run's manifest records it (manifest v9):
//! the words every layer shares, so the archive reads a verdict without
//! knowing how it was judged.

use serde::{Deserialize, Serialize};

/// A `fleet gate` verdict run (manifest v9): which node of which fleet was
/// gated, on which passes (run ids), by which rule, and what it decided.
/// Its rows are the verdict's figures, one metric row per point and line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateRecord {
    pub fleet: String,
    pub node: String,
    /// The suite's runs this verdict judged: the first pass, then the retest.
    pub passes: Vec<String>,
    /// `pass`, `bad` or `not_judged`.
    pub verdict: String,
    /// The one line Slurm shows as the drain reason.
    pub reason: String,
    /// δ and the gate's error rate.
    pub threshold: f64,
    pub alpha: f64,
    /// The floors file, where not the built-in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floors: Option<String>,
    /// What was done in Slurm: `drained`, `resumed`, or why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// A gate verdict run's configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateConfig {
    pub gate: GateRecord,
}
