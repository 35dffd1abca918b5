//! Passive GPU health: what a node's GPUs report about themselves, read
//! without running anything (NVML on NVIDIA: `backend::nvml`), judged by
//! published rules. These are the faults that take training jobs down and
//! that no bandwidth test sees: memory rows that could not be remapped, a
//! PCIe link trained narrower than the part, NVLinks down, a fabric
//! manager that never finished. Each check names its rule's source, and
//! what it asks for: drain the node, reset the GPU, or only a warning.
//!
//! Nothing read is `None`, and `None` is never a fault: a check the
//! driver or the part does not support says so ([`Health::unread`]).

use serde::Serialize;

pub use super::health_xid::xid_findings;
pub use crate::vocab::health::{DeviceHealth, XidEvent};

/// What a finding asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Action {
    /// Take the node out of service until the part is repaired.
    Drain,
    /// Reset the GPU (or reboot) before it takes work again.
    Reset,
    /// Worth a look; no action by itself.
    Warn,
}

impl Action {
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Drain => "drain",
            Action::Reset => "reset",
            Action::Warn => "warn",
        }
    }
}

/// One passive check: its name, its rule in words and the rule's source
/// (`docs/gate-health.md` tabulates them), and whether a GPU answered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    RowRemap,
    Ecc,
    RetiredPages,
    PcieWidth,
    PcieGen,
    Nvlink,
    Fabric,
    Throttle,
    Xid,
    GpuCount,
    IbPort,
    CpuCount,
    CpuTopology,
    Memory,
    Swap,
    NetInterface,
    Topology,
    IbFlap,
}

impl Check {
    pub const ALL: [Check; 18] = [
        Check::RowRemap,
        Check::Ecc,
        Check::RetiredPages,
        Check::PcieWidth,
        Check::PcieGen,
        Check::Nvlink,
        Check::Fabric,
        Check::Throttle,
        Check::Xid,
        Check::GpuCount,
        Check::IbPort,
        Check::CpuCount,
        Check::CpuTopology,
        Check::Memory,
        Check::Swap,
        Check::NetInterface,
        Check::Topology,
        Check::IbFlap,
    ];

    /// `row-remap`, `pcie-width`, ...: as reasons and JSON name it.
    pub fn name(self) -> &'static str {
        match self {
            Check::RowRemap => "row-remap",
            Check::Ecc => "ecc",
            Check::RetiredPages => "retired-pages",
            Check::PcieWidth => "pcie-width",
            Check::PcieGen => "pcie-gen",
            Check::Nvlink => "nvlink",
            Check::Fabric => "fabric",
            Check::Throttle => "throttle",
            Check::Xid => "xid",
            Check::GpuCount => "gpu-count",
            Check::IbPort => "ib-port",
            Check::CpuCount => "cpu-count",
            Check::CpuTopology => "cpu-topology",
            Check::Memory => "memory",
            Check::Swap => "swap",
            Check::NetInterface => "net-interface",
            Check::Topology => "topology",
            Check::IbFlap => "ib-flap",
        }
    }

    /// What drains, what asks for a reset, what only warns.
    pub fn rule(self) -> &'static str {
        match self {
            Check::RowRemap => "a failed remap drains; a pending one asks for a reset",
            Check::Ecc => "an uncorrectable error since the last reset asks for a reset",
            Check::RetiredPages => "a pending retirement asks for a reset",
            Check::PcieWidth => "a link narrower than the part's maximum drains",
            Check::PcieGen => "a generation below the maximum only warns (links step down when idle)",
            Check::Nvlink => "fewer active NVLinks than the spec's count drains",
            Check::Fabric => "a fabric not completed, or completed with an error, drains",
            Check::Throttle => "a hardware slowdown or power-brake reason warns",
            Check::GpuCount => "fewer GPUs than --gpus N drains (not made without it)",
            Check::CpuCount => "fewer logical CPUs online than --cpus N drains (not made without it)",
            Check::CpuTopology => "fewer CPU sockets than --sockets S, or physical cores than --cores C, drains (not made without them)",
            Check::Memory => "memory more than 5 % below --memory-gib G drains (not made without it)",
            Check::Swap => "swap more than 3 % away from --swap-gib G drains (0: any swap drains; not made without it)",
            Check::NetInterface => "a network interface named by --interface that the kernel does not list drains (not made without it)",
            Check::Topology => "with --topology FILE (an NCCL topology file), a PCI device it lists that is missing, or on another NUMA node, drains",
            Check::IbFlap => "with --ib-flaps N, an InfiniBand port whose link went down more than N times since its counters were reset (boot) drains; once or more warns",
            Check::IbPort => "with --ib-rate GBPS, an InfiniBand port not ACTIVE, or active below that rate, drains; so does a node with none",
            Check::Xid => "an Xid in this boot's kernel log, by NVIDIA's immediate action: CONTACT_SUPPORT, CHECK_MECHANICALS, UPDATE_SWFW drain; RESET_GPU, RESTART_BM, RESTART_VM and the DBE workflow ask for a reset (or reboot); RESTART_APP, IGNORE and the rest warn",
        }
    }

    /// The published rule it follows.
    pub fn source(self) -> &'static str {
        match self {
            Check::RowRemap => "NVIDIA, GPU Memory Error Management (r. Row Remapping): a remapping failure means the GPU should be replaced; a pending remap takes effect after a GPU reset. https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/",
            Check::Ecc => "NVIDIA, GPU Memory Error Management: an uncorrectable ECC error terminates the work on the GPU; DCGM's memory health watch fails on it. https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/",
            Check::RetiredPages => "NVIDIA, Dynamic Page Retirement: a retired page is blacklisted at the next reset; pending retirements need one. https://docs.nvidia.com/deploy/dynamic-page-retirement/",
            Check::PcieWidth | Check::PcieGen => "Azure NHC check_gpu_bw / NVSentinel PCIe checks: a link trained below the part's width halves host transfers; NVML reports the generation lowered while idle (power saving). https://github.com/Azure/azurehpc-health-checks",
            Check::Nvlink => "NVML nvmlDeviceGetNvLinkState against the part's NVLink count (its spec's [link] count); NHC check_nvlink_status drains on an inactive link. https://docs.nvidia.com/deploy/nvml-api/",
            Check::Fabric => "NVIDIA Fabric Manager user guide: on NVSwitch systems a GPU takes no CUDA work until its fabric registration completes. https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/",
            Check::Throttle => "NVML clock event reasons: HW slowdown (0x8), HW thermal (0x40) and HW power brake (0x80) are the hardware's own slowdowns. https://docs.nvidia.com/deploy/nvml-api/",
            Check::GpuCount => "Azure NHC check_gpu_count (conf/nd96isr_h100_v5.conf: `check_gpu_count 8`): a GPU missing from the driver's count is a GPU the node cannot use. https://github.com/Azure/azurehpc-health-checks",
            Check::CpuCount => "LBNL NHC check_hw_cpuinfo (Azure conf/nd96isr_h100_v5.conf: `check_hw_cpuinfo 2 96 96`): a CPU the kernel took offline is capacity the node no longer has; the count is the kernel's online CPUs (/sys/devices/system/cpu/online). https://github.com/mej/nhc",
            Check::CpuTopology => "LBNL NHC check_hw_cpuinfo (Azure conf/nd96isr_h100_v5.conf: `check_hw_cpuinfo 2 96 96`: sockets, cores, threads): sockets are the distinct physical_package_id and cores the distinct (package, core_id) of the online CPUs (/sys/devices/system/cpu/cpuN/topology, Documentation/ABI/stable/sysfs-devices-system-cpu). https://github.com/mej/nhc",
            Check::Swap => "LBNL NHC check_hw_swap (Azure conf/nd96isr_h100_v5.conf: `check_hw_swap 0kB 0kB 3%`): /proc/meminfo's SwapTotal within 3 % of the expected size; a GPU node is expected to have none. https://github.com/mej/nhc",
            Check::NetInterface => "LBNL NHC check_hw_eth (Azure conf/nd96isr_h100_v5.conf: `check_hw_eth eth0`, `ib0`…`ib7`, `docker0`): the interface must exist (/sys/class/net/NAME). https://github.com/mej/nhc",
            Check::Topology => "Azure NHC check_hw_topology (customTests/azure_hw_topology_check.nhc, conf/nd96isr_h100_v5.conf: `check_hw_topology /opt/microsoft/ndv5-topo.xml`): every leaf <pci busid> of the topology file under its <cpu numaid>, found on that NUMA node (here /sys/bus/pci/devices/BUSID/numa_node; Azure reads lstopo). https://github.com/Azure/azurehpc-health-checks",
            Check::IbFlap => "Azure NHC check_ib_link_flapping (conf/nd96isr_h100_v5.conf: `check_ib_link_flapping 6`: two link losses within 6 hours drain, read from syslog); here the port's own link_downed counter (Documentation/ABI/stable/sysfs-class-infiniband: times the link failed to recover and went down), which counts since the counters were last reset, not a time window. https://github.com/Azure/azurehpc-health-checks",
            Check::Memory => "LBNL NHC check_hw_physmem (Azure conf/nd96isr_h100_v5.conf: `check_hw_physmem 1915071MB 1915071MB 5%`): /proc/meminfo's MemTotal against the expected size, 5 % below allowed. https://github.com/mej/nhc",
            Check::IbPort => "LBNL NHC check_hw_ib (Azure conf/nd96isr_h100_v5.conf: `check_hw_ib 400 mlx5_ib0:1` for each of 8 ports): the port's state and rate from sysfs (Documentation/ABI/stable/sysfs-class-infiniband). https://github.com/mej/nhc",
            Check::Xid => "NVIDIA, Analyzing Xid Errors with the Xid Catalog: each Xid's Resolution Bucket (Immediate Action), 'the action that is immediately needed in order to recover the system and get it back into service' (data/reference/xid-catalog.tsv); Xid 154 states the recovery action itself. https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html",
        }
    }

    /// Whether `d` answered this check at all (unread is never a fault).
    fn read(self, d: &DeviceHealth) -> bool {
        match self {
            Check::RowRemap => d.remap_failed.is_some(),
            Check::Ecc => d.ecc_uncorrected_volatile.is_some(),
            Check::RetiredPages => d.retired_pending.is_some(),
            Check::PcieWidth => d.pcie_width.is_some(),
            Check::PcieGen => d.pcie_gen.is_some(),
            Check::Nvlink => d.nvlinks_active.is_some() && d.nvlinks_expected.is_some(),
            Check::Fabric => d.fabric.is_some_and(|f| f.0 != 0),
            Check::Throttle => d.throttle_reasons.is_some(),
            Check::Xid => d.xids.is_some(),
            // Node-level: read by `node_findings`.
            Check::GpuCount
            | Check::IbPort
            | Check::CpuCount
            | Check::CpuTopology
            | Check::Memory
            | Check::Swap
            | Check::NetInterface
            | Check::Topology
            | Check::IbFlap => false,
        }
    }
}

/// One check that did not pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub device: String,
    pub check: Check,
    pub action: Action,
    /// What was read, in words.
    pub what: String,
    /// The published rule it follows ([`Check::source`]).
    pub source: &'static str,
}

impl Finding {
    /// One line, for a drain reason and for people: `drain: GPU 0 (…)
    /// row-remap: a row remap failed (…)`.
    pub fn line(&self) -> String {
        format!("{}: {} {}: {}", self.action.as_str(), self.device, self.check.name(), self.what)
    }
}

/// The bits of the throttle reasons that are the hardware slowing itself.
const HW_SLOWDOWN: u64 = 0x8 | 0x40 | 0x80;

/// Every finding of one GPU, most severe first.
pub fn judge(d: &DeviceHealth) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut find = |check: Check, action: Action, what: String| {
        out.push(Finding { device: d.device.clone(), check, action, what, source: check.source() })
    };
    if d.remap_failed == Some(true) {
        find(
            Check::RowRemap,
            Action::Drain,
            "a row remap failed: no spare row was left for a failing memory row".into(),
        );
    } else if d.remap_pending == Some(true) {
        find(Check::RowRemap, Action::Reset, "a row remap is pending: it takes effect at the next GPU reset".into());
    }
    if let Some(n) = d.ecc_uncorrected_volatile.filter(|n| *n > 0) {
        find(Check::Ecc, Action::Reset, format!("{n} uncorrectable ECC error(s) since the last reset"));
    }
    if d.retired_pending == Some(true) {
        let pages = d.retired_pages.map(|n| format!(" ({n} retired so far)")).unwrap_or_default();
        find(Check::RetiredPages, Action::Reset, format!("a page retirement is pending{pages}"));
    }
    if let Some((now, max)) = d.pcie_width.filter(|(now, max)| now < max) {
        find(Check::PcieWidth, Action::Drain, format!("PCIe link x{now}, the part's maximum is x{max}"));
    }
    if let Some((now, max)) = d.pcie_gen.filter(|(now, max)| now < max) {
        find(
            Check::PcieGen,
            Action::Warn,
            format!("PCIe Gen{now}, the part's maximum is Gen{max} (normal while idle)"),
        );
    }
    if let (Some(active), Some((expected, name))) = (d.nvlinks_active, &d.nvlinks_expected) {
        if active < *expected {
            find(Check::Nvlink, Action::Drain, format!("{active} of {expected} NVLinks active ({name})"));
        }
    }
    match d.fabric {
        Some((3, 0)) | Some((0, _)) | None => {}
        Some((3, status)) => {
            find(Check::Fabric, Action::Drain, format!("fabric registration completed with error {status}"))
        }
        Some((state, _)) => {
            let word = if state == 1 { "not started" } else { "still in progress" };
            find(Check::Fabric, Action::Drain, format!("fabric registration {word}: is the fabric manager running?"))
        }
    }
    if let Some(bits) = d.throttle_reasons.filter(|b| b & HW_SLOWDOWN != 0) {
        let words: Vec<&str> = [(0x8, "HW slowdown"), (0x40, "HW thermal"), (0x80, "HW power brake")]
            .iter()
            .filter(|(b, _)| bits & b != 0)
            .map(|(_, w)| *w)
            .collect();
        find(Check::Throttle, Action::Warn, format!("the hardware is slowing itself: {}", words.join(", ")));
    }
    out.extend(xid_findings(&d.device, d.xids.as_deref().unwrap_or_default()));
    out.sort_by_key(|f| f.action);
    out
}

/// A node's passive health: its GPUs' findings, and what could not be read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Health {
    pub devices: usize,
    pub findings: Vec<Finding>,
    /// Checks that no GPU of the node could answer.
    pub unread: Vec<Check>,
}

impl Health {
    /// Judge every GPU of a node.
    pub fn of(devices: &[DeviceHealth]) -> Health {
        let mut findings: Vec<Finding> = devices.iter().flat_map(judge).collect();
        findings.sort_by_key(|f| f.action);
        let unread = Check::ALL.into_iter().filter(|c| !devices.iter().any(|d| c.read(d))).collect();
        Health { devices: devices.len(), findings, unread }
    }

    /// The most severe action any finding asks for.
    pub fn worst(&self) -> Option<Action> {
        self.findings.iter().map(|f| f.action).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn healthy() -> DeviceHealth {
        DeviceHealth {
            device: "GPU 0 (GPU-test)".into(),
            name: Some("NVIDIA H100 80GB HBM3".into()),
            ecc_uncorrected_volatile: Some(0),
            ecc_uncorrected_aggregate: Some(0),
            remap_pending: Some(false),
            remap_failed: Some(false),
            retired_pages: Some(0),
            retired_pending: Some(false),
            pcie_gen: Some((5, 5)),
            pcie_width: Some((16, 16)),
            nvlinks_active: Some(18),
            nvlinks_expected: Some((18, "NVLink 4".into())),
            throttle_reasons: Some(0x1),
            fabric: Some((3, 0)),
            pci: Some((0, 0x18, 0)),
            xids: Some(Vec::new()),
        }
    }

    fn xid(code: u32, text: &str) -> XidEvent {
        XidEvent { code, pci: Some((0, 0x18, 0)), text: text.into() }
    }

    #[test]
    fn each_fault_gets_its_action_and_names_device_and_check() {
        assert!(judge(&healthy()).is_empty());
        let cases: Vec<(DeviceHealth, &str, Action)> = vec![
            (DeviceHealth { remap_failed: Some(true), ..healthy() }, "row-remap", Action::Drain),
            (DeviceHealth { remap_pending: Some(true), ..healthy() }, "row-remap", Action::Reset),
            (DeviceHealth { ecc_uncorrected_volatile: Some(2), ..healthy() }, "ecc", Action::Reset),
            (DeviceHealth { retired_pending: Some(true), ..healthy() }, "retired-pages", Action::Reset),
            (DeviceHealth { pcie_width: Some((8, 16)), ..healthy() }, "pcie-width", Action::Drain),
            (DeviceHealth { pcie_gen: Some((1, 5)), ..healthy() }, "pcie-gen", Action::Warn),
            (DeviceHealth { nvlinks_active: Some(16), ..healthy() }, "nvlink", Action::Drain),
            (DeviceHealth { fabric: Some((1, 0)), ..healthy() }, "fabric", Action::Drain),
            (DeviceHealth { fabric: Some((3, 5)), ..healthy() }, "fabric", Action::Drain),
            (DeviceHealth { throttle_reasons: Some(0x40), ..healthy() }, "throttle", Action::Warn),
            (
                DeviceHealth { xids: Some(vec![xid(79, "GPU has fallen off the bus.")]), ..healthy() },
                "xid",
                Action::Reset,
            ),
            (DeviceHealth { xids: Some(vec![xid(64, "")]), ..healthy() }, "xid", Action::Reset),
            (DeviceHealth { xids: Some(vec![xid(54, "")]), ..healthy() }, "xid", Action::Drain),
            (DeviceHealth { xids: Some(vec![xid(13, ""), xid(13, "")]), ..healthy() }, "xid", Action::Warn),
            (DeviceHealth { xids: Some(vec![xid(9999, "")]), ..healthy() }, "xid", Action::Warn),
        ];
        for (d, check, action) in cases {
            let f = judge(&d);
            assert_eq!(f.len(), 1, "{check}: {f:?}");
            assert_eq!((f[0].check.name(), f[0].action), (check, action));
            assert!(f[0].line().contains("GPU 0 (GPU-test)") && f[0].line().contains(check), "{}", f[0].line());
        }
    }

    #[test]
    fn what_cannot_be_read_is_never_a_fault_and_is_named() {
        let blank = DeviceHealth { device: "GPU 0".into(), ..Default::default() };
        let h = Health::of(&[blank]);
        assert!(h.findings.is_empty() && h.worst().is_none());
        assert!(h.unread.contains(&Check::RowRemap) && h.unread.contains(&Check::Nvlink), "{:?}", h.unread);
        // A failed remap on one GPU of two drains the node, before a warning.
        let h = Health::of(&[
            DeviceHealth { throttle_reasons: Some(0x8), ..healthy() },
            DeviceHealth { device: "GPU 1".into(), remap_failed: Some(true), ..healthy() },
        ]);
        assert_eq!(h.worst(), Some(Action::Drain));
        assert_eq!(h.findings[0].device, "GPU 1");
        // Every GPU check read; the node's own (`health_node`) are added
        // by what the operator expects.
        assert_eq!(h.unread, Check::ALL[Check::ALL.iter().position(|c| *c == Check::GpuCount).unwrap()..]);
    }

    #[test]
    fn xid_154_is_judged_by_the_recovery_action_it_states_and_repeats_are_counted() {
        let line = "GPU recovery action changed from 0x0 (None) to 0x2 (Node Reboot Required)";
        let f = xid_findings("GPU 3", &[xid(154, line)]);
        assert_eq!(f[0].action, Action::Reset);
        assert!(f[0].what.contains("Node Reboot Required"), "{}", f[0].what);
        let f = xid_findings("GPU 3", &[xid(154, "GPU recovery action changed from 0x2 (x) to 0x3 (Drain P2P)")]);
        assert_eq!(f[0].action, Action::Drain);
        // Two codes, one of them three times: two findings, worst first
        // once judged; the count is stated.
        let f = xid_findings("GPU 3", &[xid(13, ""), xid(13, ""), xid(95, ""), xid(13, "")]);
        assert_eq!(f.len(), 2);
        assert!(f[0].what.starts_with("Xid 13 ") && f[0].what.contains("×3"), "{}", f[0].what);
        assert_eq!(f[1].action, Action::Reset);
    }
}
