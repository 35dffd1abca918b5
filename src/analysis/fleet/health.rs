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

pub use super::health_check::Check;
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
    for what in ecc_counts(d) {
        find(Check::EccCount, Action::Drain, what);
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

/// NHC's `check_gpu_ecc 20000000 10000` (Azure's ND H100 v5): the counts
/// past its thresholds, in words.
fn ecc_counts(d: &DeviceHealth) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(n) = d.ecc_sram_corrected.filter(|n| *n > ECC_SRAM_CORRECTED_MAX) {
        out.push(format!("{n} corrected SRAM ECC errors, above {ECC_SRAM_CORRECTED_MAX}"));
    }
    if let Some(n) = d.ecc_sram_uncorrected.filter(|n| *n > 0) {
        out.push(format!("{n} uncorrected SRAM ECC error(s)"));
    }
    if let Some(n) = d.ecc_dram.filter(|n| *n > ECC_DRAM_MAX) {
        out.push(format!("{n} DRAM ECC errors, above {ECC_DRAM_MAX}"));
    }
    if let Some(n) = d.remapped_uncorrectable_rows.filter(|n| *n > REMAPPED_UNCORRECTABLE_MAX) {
        out.push(format!("{n} rows remapped for uncorrectable errors, above {REMAPPED_UNCORRECTABLE_MAX}"));
    }
    out
}

/// NHC's thresholds (`check_gpu_ecc 20000000 10000`, azure_gpu_ecc.nhc).
const ECC_SRAM_CORRECTED_MAX: u64 = 10_000;
const ECC_DRAM_MAX: u64 = 20_000_000;
const REMAPPED_UNCORRECTABLE_MAX: u64 = 512;

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
            ecc_sram_corrected: Some(3),
            ecc_sram_uncorrected: Some(0),
            ecc_dram: Some(12),
            remapped_uncorrectable_rows: Some(2),
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
            (DeviceHealth { ecc_sram_corrected: Some(10_001), ..healthy() }, "ecc-count", Action::Drain),
            (DeviceHealth { ecc_sram_uncorrected: Some(1), ..healthy() }, "ecc-count", Action::Drain),
            (DeviceHealth { ecc_dram: Some(20_000_001), ..healthy() }, "ecc-count", Action::Drain),
            (DeviceHealth { remapped_uncorrectable_rows: Some(513), ..healthy() }, "ecc-count", Action::Drain),
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
