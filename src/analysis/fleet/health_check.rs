//! The passive checks: each one's name, its rule in words, the rule's
//! published source, and whether a GPU answered it.

use serde::Serialize;

use crate::vocab::health::DeviceHealth;

/// One passive check: its name, its rule in words and the rule's source
/// (`docs/gate-health.md` tabulates them), and whether a GPU answered it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Check {
    RowRemap,
    Ecc,
    EccCount,
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
    pub const ALL: [Check; 19] = [
        Check::RowRemap,
        Check::Ecc,
        Check::EccCount,
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
            Check::EccCount => "ecc-count",
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
            Check::EccCount => "more than 10,000 corrected SRAM errors, any uncorrected SRAM error, more than 20,000,000 DRAM errors, or more than 512 rows remapped for uncorrectable errors drains",
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
            Check::EccCount => "Azure NHC check_gpu_ecc (customTests/azure_gpu_ecc.nhc; conf/nd96isr_h100_v5.conf: `check_gpu_ecc 20000000 10000`): SRAM corrected above 10,000 or any SRAM uncorrected (volatile or aggregate), DRAM corrected or uncorrected above 20,000,000, and more than 512 rows remapped for uncorrectable errors each fail the node; read with nvmlDeviceGetMemoryErrorCounter (DRAM = 2, SRAM = 7) and nvmlDeviceGetRemappedRows. https://github.com/Azure/azurehpc-health-checks",
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
    pub(super) fn read(self, d: &DeviceHealth) -> bool {
        match self {
            Check::RowRemap => d.remap_failed.is_some(),
            Check::Ecc => d.ecc_uncorrected_volatile.is_some(),
            Check::EccCount => d.ecc_sram_corrected.is_some() || d.ecc_dram.is_some(),
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
