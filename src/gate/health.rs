//! The passive half of the gate: this node's GPUs as NVML reports them,
//! with the driver's Xid events from the kernel log placed on them, and
//! what the node must have (GPU count, InfiniBand ports and their link
//! losses, CPUs, sockets and cores, memory, swap, interfaces, PCI topology), judged
//! by `analysis::fleet::health`.

use std::path::Path;

use crate::analysis::fleet::health::{xid_findings, Check, Health, XidEvent};
use crate::analysis::fleet::health_node::{node_findings, NodeFacts};
use crate::analysis::specs::SpecBook;
use crate::vocab::health::Expected;

/// This node's GPUs' health, judged, each GPU held against its spec's
/// NVLink count, with the Xid events of `kernel_log` (this boot's, from
/// `/dev/kmsg`) given to the GPU whose PCI address they name. An Xid for
/// an address NVML does not see (a GPU off the bus) is judged on its own,
/// and is judged even when NVML cannot be read at all. Then what the
/// node must have (`expected`: its GPU count, InfiniBand ports, CPUs and
/// memory).
pub fn passive_health(specs: &SpecBook, kernel_log: &Path, expected: &Expected) -> std::result::Result<Health, String> {
    let xids = crate::session::kernel_xids(kernel_log);
    let (mut devices, seen) = match (crate::session::gpu_health(), &xids) {
        (Ok(d), _) => {
            let n = d.len();
            (d, Some(n))
        }
        (Err(_), Ok(x)) if !x.is_empty() => (Vec::new(), None),
        (Err(_), _) if expected.asks_node() => (Vec::new(), None),
        (Err(why), _) => return Err(why),
    };
    for d in &mut devices {
        let link = d.name.as_deref().and_then(|n| specs.find(n)).and_then(|s| s.link.as_ref());
        d.nvlinks_expected = link.map(|l| (l.count, l.name.clone()));
    }
    let mut elsewhere: Vec<XidEvent> = Vec::new();
    if let Ok(xids) = xids {
        devices.iter_mut().for_each(|d| d.xids = Some(Vec::new()));
        for x in xids {
            match devices.iter_mut().find(|d| d.pci.is_some() && d.pci == x.pci) {
                Some(d) => d.xids.get_or_insert_with(Vec::new).push(x),
                None => elsewhere.push(x),
            }
        }
    }
    let mut health = Health::of(&devices);
    let mut addresses: Vec<Option<(u32, u32, u32)>> = elsewhere.iter().map(|x| x.pci).collect();
    addresses.sort();
    addresses.dedup();
    for pci in addresses {
        let device = match pci {
            Some((d, b, dev)) => format!("PCI {d:04x}:{b:02x}:{dev:02x} (no GPU NVML sees)"),
            None => "a GPU the log does not place".to_string(),
        };
        let own: Vec<XidEvent> = elsewhere.iter().filter(|x| x.pci == pci).cloned().collect();
        health.findings.extend(xid_findings(&device, &own));
    }
    if !elsewhere.is_empty() {
        health.unread.retain(|c| *c != Check::Xid);
    }
    let host = expected.asks_host().then(crate::host::HostInfo::detect);
    let placed = expected.topology.as_ref().map_or_else(Vec::new, |(_, devices)| {
        devices.iter().map(|(bus, numa)| (bus.clone(), *numa, crate::session::pci_numa_node(bus))).collect()
    });
    let node = NodeFacts {
        gpus: seen,
        ports: if expected.asks_ports() { crate::session::ib_ports() } else { Vec::new() },
        cpus: host.as_ref().map(|h| h.online_cpus.unwrap_or(h.logical_cpus)),
        memory_bytes: host.and_then(|h| h.memory_bytes),
        sockets_cores: (expected.sockets.is_some() || expected.cores.is_some())
            .then(crate::session::cpu_topology)
            .flatten(),
        swap_bytes: expected.swap_gib.and_then(|_| crate::host::swap_bytes()),
        missing_interfaces: expected.interfaces.iter().filter(|i| !crate::session::has_interface(i)).cloned().collect(),
        placed,
    };
    node_findings(&mut health, expected, &node);
    Ok(health)
}
