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

pub use crate::vocab::health::DeviceHealth;

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

/// One check that did not pass.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    pub device: String,
    /// The check's name: `row-remap`, `pcie-width`, ...
    pub check: &'static str,
    pub action: Action,
    /// What was read, in words.
    pub what: String,
    /// The published rule it follows.
    pub source: &'static str,
}

impl Finding {
    /// One line, for a drain reason and for people: `drain: GPU 0 (…)
    /// row-remap: a row remap failed (…)`.
    pub fn line(&self) -> String {
        format!("{}: {} {}: {}", self.action.as_str(), self.device, self.check, self.what)
    }
}

/// Every check's rule and source, as `docs/gate-health.md` tabulates them.
pub const RULES: &[(&str, &str, &str)] = &[
    ("row-remap", "a failed remap drains; a pending one asks for a reset", ROW_REMAP),
    ("ecc", "an uncorrectable error since the last reset asks for a reset", ECC),
    ("retired-pages", "a pending retirement asks for a reset", RETIRED),
    ("pcie-width", "a link narrower than the part's maximum drains", PCIE),
    ("pcie-gen", "a generation below the maximum only warns (links step down when idle)", PCIE),
    ("nvlink", "fewer active NVLinks than the spec's count drains", NVLINK),
    ("fabric", "a fabric not completed, or completed with an error, drains", FABRIC),
    ("throttle", "a hardware slowdown or power-brake reason warns", THROTTLE),
];

const ROW_REMAP: &str = "NVIDIA, GPU Memory Error Management (r. Row Remapping): a remapping failure means the GPU should be replaced; a pending remap takes effect after a GPU reset. https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/";
const ECC: &str = "NVIDIA, GPU Memory Error Management: an uncorrectable ECC error terminates the work on the GPU; DCGM's memory health watch fails on it. https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/";
const RETIRED: &str = "NVIDIA, Dynamic Page Retirement: a retired page is blacklisted at the next reset; pending retirements need one. https://docs.nvidia.com/deploy/dynamic-page-retirement/";
const PCIE: &str = "Azure NHC check_gpu_bw / NVSentinel PCIe checks: a link trained below the part's width halves host transfers; NVML reports the generation lowered while idle (power saving). https://github.com/Azure/azurehpc-health-checks";
const NVLINK: &str = "NVML nvmlDeviceGetNvLinkState against the part's NVLink count (its spec's [link] count); NHC check_nvlink_status drains on an inactive link. https://docs.nvidia.com/deploy/nvml-api/";
const FABRIC: &str = "NVIDIA Fabric Manager user guide: on NVSwitch systems a GPU takes no CUDA work until its fabric registration completes. https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/";
const THROTTLE: &str = "NVML clock event reasons: HW slowdown (0x8), HW thermal (0x40) and HW power brake (0x80) are the hardware's own slowdowns. https://docs.nvidia.com/deploy/nvml-api/";

/// The bits of the throttle reasons that are the hardware slowing itself.
const HW_SLOWDOWN: u64 = 0x8 | 0x40 | 0x80;

/// Every finding of one GPU, most severe first.
pub fn judge(d: &DeviceHealth) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut find = |check: &'static str, action: Action, what: String, source: &'static str| {
        out.push(Finding { device: d.device.clone(), check, action, what, source })
    };
    if d.remap_failed == Some(true) {
        find(
            "row-remap",
            Action::Drain,
            "a row remap failed: no spare row was left for a failing memory row".into(),
            ROW_REMAP,
        );
    } else if d.remap_pending == Some(true) {
        find(
            "row-remap",
            Action::Reset,
            "a row remap is pending: it takes effect at the next GPU reset".into(),
            ROW_REMAP,
        );
    }
    if let Some(n) = d.ecc_uncorrected_volatile.filter(|n| *n > 0) {
        find("ecc", Action::Reset, format!("{n} uncorrectable ECC error(s) since the last reset"), ECC);
    }
    if d.retired_pending == Some(true) {
        let pages = d.retired_pages.map(|n| format!(" ({n} retired so far)")).unwrap_or_default();
        find("retired-pages", Action::Reset, format!("a page retirement is pending{pages}"), RETIRED);
    }
    if let Some((now, max)) = d.pcie_width.filter(|(now, max)| now < max) {
        find("pcie-width", Action::Drain, format!("PCIe link x{now}, the part's maximum is x{max}"), PCIE);
    }
    if let Some((now, max)) = d.pcie_gen.filter(|(now, max)| now < max) {
        find(
            "pcie-gen",
            Action::Warn,
            format!("PCIe Gen{now}, the part's maximum is Gen{max} (normal while idle)"),
            PCIE,
        );
    }
    if let (Some(active), Some((expected, name))) = (d.nvlinks_active, &d.nvlinks_expected) {
        if active < *expected {
            find("nvlink", Action::Drain, format!("{active} of {expected} NVLinks active ({name})"), NVLINK);
        }
    }
    match d.fabric {
        Some((3, 0)) | Some((0, _)) | None => {}
        Some((3, status)) => {
            find("fabric", Action::Drain, format!("fabric registration completed with error {status}"), FABRIC)
        }
        Some((state, _)) => {
            let word = if state == 1 { "not started" } else { "still in progress" };
            find("fabric", Action::Drain, format!("fabric registration {word}: is the fabric manager running?"), FABRIC)
        }
    }
    if let Some(bits) = d.throttle_reasons.filter(|b| b & HW_SLOWDOWN != 0) {
        let words: Vec<&str> = [(0x8, "HW slowdown"), (0x40, "HW thermal"), (0x80, "HW power brake")]
            .iter()
            .filter(|(b, _)| bits & b != 0)
            .map(|(_, w)| *w)
            .collect();
        find("throttle", Action::Warn, format!("the hardware is slowing itself: {}", words.join(", ")), THROTTLE);
    }
    out.sort_by_key(|f| f.action);
    out
}

/// A node's passive health: its GPUs' findings, and what could not be read.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Health {
    pub devices: usize,
    pub findings: Vec<Finding>,
    /// Checks that no GPU of the node could answer, by name.
    pub unread: Vec<&'static str>,
}

impl Health {
    /// Judge every GPU of a node.
    pub fn of(devices: &[DeviceHealth]) -> Health {
        let mut findings: Vec<Finding> = devices.iter().flat_map(judge).collect();
        findings.sort_by_key(|f| f.action);
        let none = |read: &dyn Fn(&DeviceHealth) -> bool| !devices.iter().any(read);
        let mut unread = Vec::new();
        for (check, read) in [
            ("row-remap", &(|d: &DeviceHealth| d.remap_failed.is_some()) as &dyn Fn(&DeviceHealth) -> bool),
            ("ecc", &|d: &DeviceHealth| d.ecc_uncorrected_volatile.is_some()),
            ("retired-pages", &|d: &DeviceHealth| d.retired_pending.is_some()),
            ("pcie-width", &|d: &DeviceHealth| d.pcie_width.is_some()),
            ("nvlink", &|d: &DeviceHealth| d.nvlinks_active.is_some() && d.nvlinks_expected.is_some()),
            ("fabric", &|d: &DeviceHealth| d.fabric.is_some_and(|f| f.0 != 0)),
            ("throttle", &|d: &DeviceHealth| d.throttle_reasons.is_some()),
        ] {
            if none(read) {
                unread.push(check);
            }
        }
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
        }
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
        ];
        for (d, check, action) in cases {
            let f = judge(&d);
            assert_eq!(f.len(), 1, "{check}: {f:?}");
            assert_eq!((f[0].check, f[0].action), (check, action));
            assert!(f[0].line().contains("GPU 0 (GPU-test)") && f[0].line().contains(check), "{}", f[0].line());
        }
    }

    #[test]
    fn what_cannot_be_read_is_never_a_fault_and_is_named() {
        let blank = DeviceHealth { device: "GPU 0".into(), ..Default::default() };
        let h = Health::of(&[blank]);
        assert!(h.findings.is_empty() && h.worst().is_none());
        assert!(h.unread.contains(&"row-remap") && h.unread.contains(&"nvlink"), "{:?}", h.unread);
        // A failed remap on one GPU of two drains the node, before a warning.
        let h = Health::of(&[
            DeviceHealth { throttle_reasons: Some(0x8), ..healthy() },
            DeviceHealth { device: "GPU 1".into(), remap_failed: Some(true), ..healthy() },
        ]);
        assert_eq!(h.worst(), Some(Action::Drain));
        assert_eq!(h.findings[0].device, "GPU 1");
        assert!(h.unread.is_empty(), "{:?}", h.unread);
    }
}
