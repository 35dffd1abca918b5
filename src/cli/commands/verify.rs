//! `benchbook verify`: re-hash runs' files against their manifests.

use std::io;

use serde::Serialize;

use crate::archive::{verify_run, Archive, Finding};
use crate::cli::print::{terminal_safe, Render, Term};

/// Each run asked about, in order; as JSON, an array of [`Verified`].
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct VerifyOutput {
    pub runs: Vec<Verified>,
}

/// What changed in one run since it was written.
#[derive(Debug, Serialize)]
pub struct Verified {
    /// The run's id, or what was asked for when no run matched.
    pub run_id: String,
    pub ok: bool,
    pub findings: Vec<Finding>,
    /// Why the run could not be checked at all (no run matches the query).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Whether the manifest carries its own hash (v1 manifests do not).
    pub manifest_sealed: bool,
    /// How many files were checked.
    #[serde(skip)]
    pub files: usize,
}

impl VerifyOutput {
    /// 1 when any run changed or could not be checked, 0 otherwise.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.runs.iter().any(|r| !r.ok))
    }
}

/// Check every run asked about, in order: a damaged or missing run is
/// reported and the others are still checked.
pub fn verify(archive: &Archive, queries: &[String]) -> VerifyOutput {
    let runs = queries
        .iter()
        .map(|q| match archive.resolve(q) {
            Ok(run) => {
                let c = verify_run(&run);
                Verified {
                    run_id: run.id,
                    ok: c.findings.is_empty(),
                    findings: c.findings,
                    error: None,
                    manifest_sealed: c.sealed,
                    files: c.files,
                }
            }
            Err(e) => Verified {
                run_id: q.clone(),
                ok: false,
                findings: Vec::new(),
                error: Some(e.to_string()),
                manifest_sealed: false,
                files: 0,
            },
        })
        .collect();
    VerifyOutput { runs }
}

impl Render for VerifyOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for r in &self.runs {
            let id = terminal_safe(&r.run_id);
            if let Some(e) = &r.error {
                writeln!(t.out, "{id}: NOT CHECKED: {}", terminal_safe(e))?;
            } else if r.ok {
                let seal = if r.manifest_sealed { "" } else { "; its v1 manifest carries no hash of its own" };
                writeln!(t.out, "{id}: OK ({} files match their sha256{seal})", r.files)?;
            } else {
                writeln!(t.out, "{id}: CHANGED")?;
                for f in &r.findings {
                    writeln!(t.out, "  {}", terminal_safe(&f.to_string()))?;
                }
            }
        }
        let bad = self.runs.iter().filter(|r| !r.ok).count();
        if bad > 0 && self.runs.len() > 1 {
            writeln!(t.err, "{bad} of {} runs failed verification", self.runs.len())?;
        }
        Ok(())
    }
}
