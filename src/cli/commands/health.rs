//! `benchbook fleet health`: what this node's GPUs report about their own
//! health (ECC, row remapping, retired pages, PCIe link, NVLinks, the
//! fabric, throttle reasons, Xid events in the kernel log), judged by
//! published rules, without running
//! anything: NHC's and DCGM's passive checks. `fleet gate` reads the same
//! first. Exit codes: 0 healthy (warnings at most), 1 a GPU to drain or
//! reset, 3 nothing readable (no NVML, no GPU).

use std::io;

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

/// What the passive checks read, and what the node must have:
/// `fleet health`'s and `fleet gate`'s options.
#[derive(clap::Args, Debug, Clone)]
pub struct HealthArgs {
    /// Where Xid events are read: the kernel's ring buffer (this boot;
    /// needs root or CAP_SYSLOG where dmesg_restrict is set), or a log
    /// file (`journalctl -k -b > FILE`, /var/log/kern.log).
    #[arg(long, value_name = "PATH", env = "BENCHBOOK_KERNEL_LOG", default_value = crate::session::KMSG)]
    pub kernel_log: std::path::PathBuf,
    /// The GPUs this node must have (NHC's check_gpu_count): fewer visible drains it.
    #[arg(long, value_name = "N")]
    pub gpus: Option<u32>,
    /// The rate, in Gb/s, every InfiniBand port must be active at (NHC's
    /// check_hw_ib): a port down, slower, or none at all drains the node.
    #[arg(long, value_name = "GBPS")]
    pub ib_rate: Option<f64>,
    /// Logical CPUs the node must have online (NHC's check_hw_cpuinfo): fewer drains it.
    #[arg(long, value_name = "N")]
    pub cpus: Option<u32>,
    /// Memory the node must have, in GiB (NHC's check_hw_physmem): more than 5 % less drains it.
    #[arg(long, value_name = "GIB")]
    pub memory_gib: Option<f64>,
    /// CPU sockets the node must have online (check_hw_cpuinfo's first figure): fewer drains it.
    #[arg(long, value_name = "N")]
    pub sockets: Option<u32>,
    /// Physical cores the node must have online (check_hw_cpuinfo's second figure): fewer drains it.
    #[arg(long, value_name = "N")]
    pub cores: Option<u32>,
    /// Swap the node must have, in GiB, within 3 % (NHC's check_hw_swap);
    /// 0 says none: any swap drains it.
    #[arg(long, value_name = "GIB")]
    pub swap_gib: Option<f64>,
    /// A network interface the node must list (NHC's check_hw_eth), as
    /// /sys/class/net names it; repeat it, or give a comma list
    /// (`--interface eth0,ib0`). One missing drains the node.
    #[arg(long = "interface", value_name = "NAME", value_delimiter = ',')]
    pub interfaces: Vec<String>,
    /// An NCCL topology file (NCCL_TOPO_FILE; Azure's ndv5-topo.xml): every
    /// PCI device it lists must be present on the NUMA node it names
    /// (Azure's check_hw_topology). One missing or moved drains the node.
    #[arg(long, value_name = "FILE")]
    pub topology: Option<std::path::PathBuf>,
    /// The link losses an InfiniBand port may have counted since its
    /// counters were reset (Azure's check_ib_link_flapping): more drains
    /// the node, one or more warns.
    #[arg(long, value_name = "N")]
    pub ib_flaps: Option<u64>,
}

impl HealthArgs {
    /// What the node must have; a topology file that cannot be read or
    /// parsed is an error naming it (and its line).
    pub fn expected(&self) -> crate::error::Result<crate::vocab::health::Expected> {
        let topology = match &self.topology {
            None => None,
            Some(p) => {
                let name = p.display().to_string();
                let text = std::fs::read_to_string(p).map_err(|e| crate::error::Error::io(p, e))?;
                let devices = crate::vocab::health::topology_devices(&name, &text)
                    .map_err(|why| crate::error::Error::config("--topology", why))?;
                Some((name, devices))
            }
        };
        Ok(crate::vocab::health::Expected {
            gpus: self.gpus,
            ib_rate_gbps: self.ib_rate,
            cpus: self.cpus,
            memory_gib: self.memory_gib,
            sockets: self.sockets,
            cores: self.cores,
            swap_gib: self.swap_gib,
            interfaces: self.interfaces.iter().filter(|i| !i.is_empty()).cloned().collect(),
            topology,
            ib_flaps: self.ib_flaps,
        })
    }
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

/// Read and judge this node's GPUs, and what it must have.
pub fn health(specs: &SpecBook, a: &HealthArgs) -> crate::error::Result<HealthOutput> {
    Ok(match crate::gate::passive_health(specs, &a.kernel_log, &a.expected()?) {
        Ok(h) => HealthOutput { health: Some(h), unread: None },
        Err(why) => HealthOutput { health: None, unread: Some(why) },
    })
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
                writeln!(
                    t.out,
                    "  not read here (the part, driver or log does not say, or its flag was not given): {}",
                    names.join(", ")
                )?;
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
