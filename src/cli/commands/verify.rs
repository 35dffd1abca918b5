//! `benchbook verify`: re-hash runs' files against their manifests.

use std::io;

use serde::Serialize;

use crate::archive::{verify_run, Archive, Finding};
use crate::cli::print::{terminal_safe, Render, Term};
use crate::error::Result;

/// Each run asked about, in order; as JSON, an array of [`Verified`].
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct VerifyOutput {
    pub runs: Vec<Verified>,
}

/// What changed in one run since it was written.
#[derive(Debug, Serialize)]
pub struct Verified {
    pub run_id: String,
    pub ok: bool,
    pub findings: Vec<Finding>,
    /// How many files matched, when all did (text form only).
    #[serde(skip)]
    pub files: usize,
}

impl VerifyOutput {
    /// 1 when any run changed, 0 otherwise.
    pub fn exit_code(&self) -> u8 {
        u8::from(self.runs.iter().any(|r| !r.ok))
    }
}

pub fn verify(archive: &Archive, queries: &[String]) -> Result<VerifyOutput> {
    let mut runs = Vec::new();
    for q in queries {
        let run = archive.resolve(q)?;
        let findings = verify_run(&run)?;
        let files = if findings.is_empty() { run.manifest()?.files.len() } else { 0 };
        runs.push(Verified { run_id: run.id, ok: findings.is_empty(), findings, files });
    }
    Ok(VerifyOutput { runs })
}

impl Render for VerifyOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        for r in &self.runs {
            let id = terminal_safe(&r.run_id);
            if r.ok {
                writeln!(t.out, "{id}: OK ({} files match their sha256)", r.files)?;
            } else {
                writeln!(t.out, "{id}: CHANGED")?;
                for f in &r.findings {
                    writeln!(t.out, "  {}", terminal_safe(&f.to_string()))?;
                }
            }
        }
        Ok(())
    }
}
