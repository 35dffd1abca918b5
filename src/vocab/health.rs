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
}

impl Expected {
    /// Whether a check of the node itself (ports, CPUs, memory) is asked
    /// for: those are judged even where no GPU can be read.
    pub fn asks_node(&self) -> bool {
        self.ib_rate_gbps.is_some() || self.asks_host()
    }

    /// Whether the host's CPUs or memory are asked for.
    pub fn asks_host(&self) -> bool {
        self.cpus.is_some() || self.memory_gib.is_some()
    }
}
