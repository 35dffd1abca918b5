//! Facts about the machine we run on, read from the OS (Linux `/proc` and
//! `/etc`; elsewhere the fields say `unknown`). Benchmarks use them to size
//! buffers; the manifest records them.

use serde::{Deserialize, Serialize};

/// The host part of a manifest.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct HostInfo {
    pub hostname: String,
    pub os: String,
    pub kernel: String,
    pub arch: String,
    pub cpu_model: String,
    pub logical_cpus: usize,
    pub memory_bytes: Option<u64>,
}

fn read(path: &str) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn meminfo_field(name: &str) -> Option<u64> {
    let text = read("/proc/meminfo")?;
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// Memory the kernel says is available for new allocations.
pub fn available_memory_bytes() -> Option<u64> {
    meminfo_field("MemAvailable:")
}

/// Logical CPUs this process may use.
pub fn logical_cpus() -> usize {
    std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
}

/// The CPU's model name, e.g. `AMD EPYC 7763 64-Core Processor`.
pub fn cpu_model() -> String {
    read("/proc/cpuinfo")
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name") || l.starts_with("Model"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

pub fn hostname() -> String {
    read("/proc/sys/kernel/hostname")
        .or_else(|| read("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "unknown".into())
}

impl HostInfo {
    pub fn detect() -> Self {
        let os = read("/etc/os-release")
            .and_then(|t| {
                t.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim_matches('"').to_string())
            })
            .unwrap_or_else(|| std::env::consts::OS.to_string());
        HostInfo {
            hostname: hostname(),
            os,
            kernel: read("/proc/sys/kernel/osrelease")
                .map(|s| s.trim().to_string())
                .unwrap_or_else(|| "unknown".into()),
            arch: std::env::consts::ARCH.into(),
            cpu_model: cpu_model(),
            logical_cpus: logical_cpus(),
            memory_bytes: meminfo_field("MemTotal:"),
        }
    }
}
