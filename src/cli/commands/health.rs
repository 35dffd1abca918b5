//! `benchbook fleet health`: what this node's GPUs report about their own
//! health (ECC, row remapping, retired pages, PCIe link, NVLinks, the
//! fabric, throttle reasons, Xid events in the kernel log), judged by
//! published rules, without running
//! anything: NHC's and DCGM's passive checks. `fleet gate` reads the same
//! first. Exit codes: 0 healthy (warnings at most), 1 a GPU to drain or
//! reset, 3 nothing readable (no NVML, no GPU).

use std::io;
use std::path::Path;

use serde::Serialize;

use crate::analysis::fleet::health::{Action, Check, Health};
use crate::analysis::specs::SpecBook;
use crate::cli::print::{terminal_safe, Render, Term};

/// `fleet health --help`'s text after the options: the rules, from the
/// checks themselves.
pub fn health_help() -> String {
    let rules: String = Check::ALL.iter().map(|c| format!("  {:<15}{}\n", c.name(), c.rule())).collect();
    format!(
        "Reads every GPU through NVML, and the driver's Xid events from the kernel
log (--kernel-log), and judges them by the rules below; nothing runs on the
GPUs, so it takes well under a second. A check the part, driver or log
cannot answer is listed as not read, never as a fault.

Rules (docs/gate-health.md and --json give each one's source):
{rules}
Examples:
  benchbook fleet health
  benchbook fleet health --json
  journalctl -k -b > kern.log && benchbook fleet health --kernel-log kern.log"
    )
}

/// What `fleet health` found.
#[derive(Debug, Serialize)]
pub struct HealthOutput {
    pub health: Option<Health>,
    /// Why nothing could be read.
    pub unread: Option<String>,
}

impl HealthOutput {
    pub fn exit_code(&self) -> u8 {
        match &self.health {
            None => 3,
            Some(h) if matches!(h.worst(), Some(Action::Drain | Action::Reset)) => 1,
            Some(_) => 0,
        }
    }
}

/// Read and judge this node's GPUs.
pub fn health(specs: &SpecBook, kernel_log: &Path) -> HealthOutput {
    match crate::gate::passive_health(specs, kernel_log) {
        Ok(h) => HealthOutput { health: Some(h), unread: None },
        Err(why) => HealthOutput { health: None, unread: Some(why) },
    }
}

/// The health lines `fleet health` and `fleet gate` print.
pub fn render_health(t: &mut Term<'_>, health: Option<&Health>, unread: Option<&str>) -> io::Result<()> {
    let s = terminal_safe;
    match (health, unread) {
        (Some(h), _) => {
            let worst = h.worst().map_or("healthy", |a| a.as_str());
            writeln!(t.out, "GPU health: {worst} ({} GPUs, {} findings)", h.devices, h.findings.len())?;
            for f in &h.findings {
                writeln!(t.out, "  {}", s(&f.line()))?;
            }
            if !h.unread.is_empty() {
                let names: Vec<&str> = h.unread.iter().map(|c| c.name()).collect();
                writeln!(t.out, "  not read here (the part or driver does not say): {}", names.join(", "))?;
            }
        }
        (None, Some(why)) => writeln!(t.out, "GPU health: not read ({})", s(why))?,
        (None, None) => {}
    }
    Ok(())
}

impl Render for HealthOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        render_health(t, self.health.as_ref(), self.unread.as_deref())?;
        if self.health.as_ref().is_some_and(|h| !h.findings.is_empty()) {
            writeln!(t.err, "the {} rules and their sources: docs/gate-health.md (and --json)", Check::ALL.len())?;
        }
        Ok(())
    }
}
