//! What a GPU reports about its own health, read without running anything
//! (NVML on NVIDIA, `backend::gpu_health`), as every layer passes it on;
//! `analysis::fleet::health` judges it.

use serde::Serialize;

/// What one GPU reported. `None`: not readable here (not supported by
/// the part or the driver, or the call failed).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DeviceHealth {
    /// How reports name it: `GPU 0 (GPU-8f2e…, 0000:18:00.0)`.
    pub device: String,
    /// Its product name (`NVIDIA H100 80GB HBM3`): which spec says how
    /// many NVLinks it has.
    pub name: Option<String>,
    /// Uncorrectable ECC errors since the last reset (volatile) and over
    /// the part's life (aggregate).
    pub ecc_uncorrected_volatile: Option<u64>,
    pub ecc_uncorrected_aggregate: Option<u64>,
    /// Error counts by where they happened (`nvmlDeviceGetMemoryErrorCounter`,
    /// the larger of volatile and aggregate): corrected and uncorrected in
    /// SRAM, and every DRAM error, corrected or not.
    pub ecc_sram_corrected: Option<u64>,
    pub ecc_sram_uncorrected: Option<u64>,
    pub ecc_dram: Option<u64>,
    /// Rows remapped for uncorrectable errors.
    pub remapped_uncorrectable_rows: Option<u64>,
    /// Row remapping (A100 and later): a remap waiting for a reset, and a
    /// remap that failed (no spare row left).
    pub remap_pending: Option<bool>,
    pub remap_failed: Option<bool>,
    /// Page retirement (before A100): pages retired for double-bit errors,
    /// and a retirement waiting for a reset.
    pub retired_pages: Option<u64>,
    pub retired_pending: Option<bool>,
    /// PCIe link: (current, the device's maximum) generation and width.
    pub pcie_gen: Option<(u32, u32)>,
    pub pcie_width: Option<(u32, u32)>,
    /// NVLinks reported active, and how many the part's spec says it has
    /// (its `[link] count`, with the spec's name).
    pub nvlinks_active: Option<u32>,
    pub nvlinks_expected: Option<(u32, String)>,
    /// The clock event (throttle) reasons bit mask now.
    pub throttle_reasons: Option<u64>,
    /// The GPU fabric (NVSwitch systems): NVML's state (0 not supported,
    /// 1 not started, 2 in progress, 3 completed) and its status (0:
    /// success).
    pub fabric: Option<(u8, i32)>,
    /// Its PCI address (domain, bus, device): how the kernel log's Xid
    /// lines name it.
    pub pci: Option<(u32, u32, u32)>,
    /// The driver's Xid events for it in the kernel log, in order (`None`:
    /// the log could not be read).
    pub xids: Option<Vec<XidEvent>>,
}

/// One Xid event the driver logged (`NVRM: Xid (PCI:0000:2b:00): 79, GPU
/// has fallen off the bus.`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct XidEvent {
    pub code: u32,
    /// The PCI address the line names (domain, bus, device).
    pub pci: Option<(u32, u32, u32)>,
    /// The driver's words after the code, as logged (shortened).
    pub text: String,
}

/// One InfiniBand port as sysfs lists it (`mlx5_0:1`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IbPort {
    pub port: String,
    /// `ACTIVE`, `DOWN`, `INIT`, ...
    pub state: Option<String>,
    /// The link's rate, in Gb/s (`400 Gb/sec (4X NDR)`).
    pub rate_gbps: Option<f64>,
    /// `InfiniBand` or `Ethernet` (RoCE).
    pub link_layer: Option<String>,
    /// Times the link failed to recover and went down, since the
    /// counters were last reset (`counters/link_downed`).
    pub link_downed: Option<u64>,
}

/// What a node must have, where its operator says so (NHC's
/// `check_gpu_count` and `check_hw_ib`): unset, the check is not made.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Expected {
    /// GPUs NVML must see.
    pub gpus: Option<u32>,
    /// The rate every InfiniBand port must be active at, in Gb/s.
    pub ib_rate_gbps: Option<f64>,
    /// Logical CPUs the node must have online (NHC's `check_hw_cpuinfo`).
    pub cpus: Option<u32>,
    /// Memory the node must have, in GiB, within 5 % (NHC's
    /// `check_hw_physmem`).
    pub memory_gib: Option<f64>,
    /// CPU sockets and physical cores it must have online (the rest of
    /// `check_hw_cpuinfo`).
    pub sockets: Option<u32>,
    pub cores: Option<u32>,
    /// Swap it must have, in GiB, within 3 % (`check_hw_swap`; 0: none).
    pub swap_gib: Option<f64>,
    /// Network interfaces it must list (`check_hw_eth`).
    pub interfaces: Vec<String>,
    /// Its PCI devices on their NUMA nodes: (bus id, NUMA node), read from
    /// an NCCL topology file (Azure's `check_hw_topology`), with the file's name.
    pub topology: Option<(String, Vec<(String, i64)>)>,
    /// The link losses an InfiniBand port may have counted (Azure's
    /// `check_ib_link_flapping`).
    pub ib_flaps: Option<u64>,
}

impl Expected {
    /// Whether a check of the node itself (ports, CPUs, memory) is asked
    /// for: those are judged even where no GPU can be read.
    pub fn asks_node(&self) -> bool {
        self.ib_rate_gbps.is_some()
            || self.asks_host()
            || self.asks_ports()
            || self.sockets.is_some()
            || self.cores.is_some()
            || !self.interfaces.is_empty()
            || self.topology.is_some()
    }

    /// Whether the host's CPUs, memory or swap are asked for.
    pub fn asks_host(&self) -> bool {
        self.cpus.is_some() || self.memory_gib.is_some() || self.swap_gib.is_some()
    }

    /// Whether the InfiniBand ports are read.
    pub fn asks_ports(&self) -> bool {
        self.ib_rate_gbps.is_some() || self.ib_flaps.is_some()
    }
}

/// The PCI devices an NCCL topology file (`NCCL_TOPO_FILE`, Azure's
/// `ndv5-topo.xml`) places on each NUMA node: every leaf `<pci busid>` under
/// its `<cpu numaid>`, bus ids in lower case. A `<pci>` with children is a
/// switch, often a made-up `ffff:ff:01.0`, and is not listed, as Azure's
/// check leaves it out. `name` names the file in errors.
pub fn topology_devices(name: &str, xml: &str) -> Result<Vec<(String, i64)>, String> {
    let doc = roxmltree::Document::parse(xml).map_err(|e| format!("{name}: not an NCCL topology file: {e}"))?;
    let mut out = Vec::new();
    for pci in doc.descendants().filter(|n| n.has_tag_name("pci") && !n.children().any(|c| c.is_element())) {
        let Some(bus) = pci.attribute("busid") else { continue };
        let cpu = pci.ancestors().find(|a| a.has_tag_name("cpu"));
        let numa = cpu.and_then(|c| c.attribute("numaid")).and_then(|n| n.parse::<i64>().ok()).ok_or_else(|| {
            let line = doc.text_pos_at(pci.range().start).row;
            format!("{name}:{line}: <pci busid=\"{bus}\"> is not inside a <cpu numaid=\"N\">")
        })?;
        out.push((bus.to_ascii_lowercase(), numa));
    }
    if out.is_empty() {
        return Err(format!("{name}: no <pci busid> device under a <cpu numaid> (is it an NCCL topology file?)"));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_nccl_topology_file_places_its_leaf_devices_on_numa_nodes() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/health/ndv5-topo.xml");
        let devices = topology_devices("ndv5-topo.xml", &std::fs::read_to_string(path).unwrap()).unwrap();
        // Azure's ND H100 v5 file: 8 GPUs and 8 NICs, half on each node;
        // the made-up switches (`ffff:ff:01.0`) are not devices.
        assert_eq!(devices.len(), 16);
        assert_eq!(devices[0], ("0001:00:00.0".to_string(), 0));
        assert!(
            devices.contains(&("000c:00:00.0".to_string(), 1)) && devices.contains(&("0104:00:00.0".to_string(), 0))
        );
        assert!(devices.iter().all(|(b, _)| !b.starts_with("ffff")));
        assert_eq!(devices.iter().filter(|(_, n)| *n == 1).count(), 8);
        let e = topology_devices("t.xml", "<system>\n  <pci busid=\"0001:00:00.0\"/>\n</system>").unwrap_err();
        assert_eq!(e, "t.xml:2: <pci busid=\"0001:00:00.0\"> is not inside a <cpu numaid=\"N\">");
        assert!(topology_devices("t.xml", "<system><cpu numaid=\"0\">").unwrap_err().starts_with("t.xml: not an NCCL"));
        assert!(topology_devices("t.xml", "<system/>").unwrap_err().contains("no <pci busid>"));
    }
}
