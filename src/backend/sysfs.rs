//! What sysfs says about the node's devices: its InfiniBand ports as the
//! kernel lists them (`/sys/class/infiniband/DEV/
//! ports/N/{state,rate,link_layer}`, Documentation/ABI/stable/
//! sysfs-class-infiniband): what NHC's `check_hw_ib` reads, with each
//! port's `link_downed` counter; its CPUs' sockets and cores, its network
//! interfaces and its PCI devices' NUMA nodes (NHC's `check_hw_cpuinfo`,
//! `check_hw_eth`, Azure's `check_hw_topology`); and how many AMD GPUs it has. The root is `/sys`, or `BENCHBOOK_SYSFS` (the tests'
//! stand-in trees).

use std::path::{Path, PathBuf};

use crate::vocab::health::IbPort;

/// The sysfs root: `BENCHBOOK_SYSFS`, else `/sys`.
fn root() -> PathBuf {
    std::env::var_os("BENCHBOOK_SYSFS").map_or_else(|| PathBuf::from("/sys"), PathBuf::from)
}

fn read(p: &Path) -> Option<String> {
    std::fs::read_to_string(p).ok().map(|s| s.trim().to_string())
}

/// Every port of every InfiniBand device, in name order; empty where the
/// node has none (or no sysfs).
pub fn ports() -> Vec<IbPort> {
    let class = root().join("class/infiniband");
    let mut devices: Vec<PathBuf> =
        std::fs::read_dir(&class).map_or_else(|_| Vec::new(), |d| d.flatten().map(|e| e.path()).collect());
    devices.sort();
    let mut out = Vec::new();
    for dev in devices {
        let name = dev.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mut ports: Vec<PathBuf> = std::fs::read_dir(dev.join("ports"))
            .map_or_else(|_| Vec::new(), |d| d.flatten().map(|e| e.path()).collect());
        ports.sort();
        for p in ports {
            let port = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            // `4: ACTIVE` → `ACTIVE`; `400 Gb/sec (4X NDR)` → 400.
            let state = read(&p.join("state")).map(|s| s.split_once(": ").map_or(s.clone(), |(_, w)| w.to_string()));
            let rate_gbps =
                read(&p.join("rate")).and_then(|r| r.split_whitespace().next().and_then(|v| v.parse::<f64>().ok()));
            out.push(IbPort {
                port: format!("{name}:{port}"),
                state,
                rate_gbps,
                link_layer: read(&p.join("link_layer")),
                link_downed: read(&p.join("counters/link_downed")).and_then(|v| v.parse().ok()),
            });
        }
    }
    out
}

/// Sockets and physical cores of the online CPUs: the distinct
/// `physical_package_id`s, and the distinct (package, `core_id`) pairs,
/// of `devices/system/cpu/cpuN/topology` (an offline CPU has no
/// topology folder). `None` where no CPU lists one.
pub fn cpu_topology() -> Option<(usize, usize)> {
    let dir = root().join("devices/system/cpu");
    let mut packages = std::collections::BTreeSet::new();
    let mut cores = std::collections::BTreeSet::new();
    for e in std::fs::read_dir(&dir).ok()?.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if !name.strip_prefix("cpu").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit())) {
            continue;
        }
        let t = e.path().join("topology");
        let (Some(p), Some(c)) = (read(&t.join("physical_package_id")), read(&t.join("core_id"))) else { continue };
        packages.insert(p.clone());
        cores.insert((p, c));
    }
    (!packages.is_empty()).then_some((packages.len(), cores.len()))
}

/// Whether the kernel lists network interface `name` (`class/net/NAME`).
pub fn has_interface(name: &str) -> bool {
    !name.contains('/') && root().join("class/net").join(name).exists()
}

/// The NUMA node of PCI device `bus` (`0001:00:00.0`): `None` where the
/// kernel does not list the device, `Some(-1)` where it names no node.
pub fn pci_numa_node(bus: &str) -> Option<i64> {
    if bus.contains('/') {
        return None;
    }
    let dev = root().join("bus/pci/devices").join(bus);
    if !dev.exists() {
        return None;
    }
    Some(read(&dev.join("numa_node")).and_then(|n| n.parse().ok()).unwrap_or(-1))
}

/// AMD GPUs: DRM cards (`class/drm/cardN`, not their connectors) whose PCI
/// vendor is 0x1002 and whose class is a display or processing
/// accelerator (0x03xxxx, 0x12xxxx).
pub fn amd_gpus() -> usize {
    let drm = root().join("class/drm");
    let Ok(cards) = std::fs::read_dir(&drm) else { return 0 };
    cards
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.strip_prefix("card").is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
        })
        .filter(|e| {
            let dev = e.path().join("device");
            let class = read(&dev.join("class")).unwrap_or_default();
            read(&dev.join("vendor")).as_deref() == Some("0x1002")
                && (class.starts_with("0x03") || class.starts_with("0x12"))
        })
        .count()
}
