//! `benchbook backends`: which backends this build has, what each found
//! here, and why not.

use std::io;

use serde::Serialize;

use crate::backend;
use crate::cli::print::{terminal_safe, Render, Term};
use crate::vocab::facts::Probe;

/// Every backend, built ones first; as JSON, an array of [`BackendEntry`].
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct BackendsOutput {
    pub backends: Vec<BackendEntry>,
}

/// One backend and what its probe found.
#[derive(Debug, Serialize)]
pub struct BackendEntry {
    pub name: String,
    /// Whether this build has it (`missing` ones say how to get it).
    pub built: bool,
    pub probe: Probe,
    /// A built backend's device facts (`null` when it has none); absent for
    /// one this build lacks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub facts: Option<serde_json::Value>,
}

pub fn backends() -> BackendsOutput {
    let mut v: Vec<BackendEntry> = backend::all()
        .iter()
        .map(|b| BackendEntry {
            name: b.name().to_string(),
            built: true,
            probe: b.probe(),
            facts: Some(b.facts().unwrap_or(serde_json::Value::Null)),
        })
        .collect();
    for (name, why) in backend::missing() {
        v.push(BackendEntry {
            name: name.to_string(),
            built: false,
            probe: Probe::Unavailable { reason: why.to_string() },
            facts: None,
        });
    }
    BackendsOutput { backends: v }
}

impl Render for BackendsOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let w = &mut *t.out;
        for b in &self.backends {
            let name = terminal_safe(&b.name);
            match &b.probe {
                Probe::Available { devices } => {
                    writeln!(w, "{name:<5} available: {} device(s)", devices.len())?;
                    for (i, d) in devices.iter().enumerate() {
                        let d = terminal_safe(d);
                        // GPU names already carry their ordinal ("GPU 0: ...").
                        if d.starts_with("GPU ") {
                            writeln!(w, "      {d}")?;
                        } else {
                            writeln!(w, "      {i}: {d}")?;
                        }
                    }
                    // The libraries a GPU backend loaded: file and version.
                    // (GPU facts keep their version strings at the top level.)
                    let versions = b.facts.as_ref().and_then(|f| f.as_object());
                    for (k, v) in versions.into_iter().flatten() {
                        if let Some(text) = v.as_str() {
                            writeln!(w, "      {}: {}", terminal_safe(k), terminal_safe(text))?;
                        }
                    }
                }
                Probe::Unavailable { reason } if b.built => {
                    writeln!(w, "{name:<5} unavailable: {}", terminal_safe(reason))?
                }
                Probe::Unavailable { reason } => writeln!(w, "{name:<5} not built: {}", terminal_safe(reason))?,
            }
        }
        #[cfg(feature = "mpi")]
        writeln!(w, "mpi   built: run `p2p` / `collective` under mpirun or srun")?;
        #[cfg(not(feature = "mpi"))]
        writeln!(w, "mpi   not built: cargo build --release --features mpi (needs an MPI library; see README)")?;
        Ok(())
    }
}
