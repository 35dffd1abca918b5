//! Passive GPU health through NVML: ECC, row remapping, retired pages,
//! the PCIe link against the device's maximum, NVLink state, clock event
//! reasons, the GPU fabric and the PCI address (which Xid lines name), for
//! every GPU NVML sees
//! ([`crate::vocab::health::DeviceHealth`]; judged in
//! `analysis::fleet::health`). A call the part or driver does not support
//! leaves its field `None`: unread, never a fault.

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, CStr};

use super::nvml::{Device, Nvml, SUCCESS};
use crate::vocab::health::DeviceHealth;

/// NVML_ERROR_INSUFFICIENT_SIZE: a count query's answer with room for none.
const INSUFFICIENT_SIZE: c_int = 7;
/// NVML_NVLINK_MAX_LINKS.
const MAX_NVLINKS: c_uint = 18;

/// `nvmlGpuFabricInfo_t`.
#[repr(C)]
struct FabricInfo {
    cluster_uuid: [u8; 16],
    status: c_int,
    clique_id: c_uint,
    state: u8,
}

/// `nvmlPciInfo_t`.
#[repr(C)]
struct PciInfo {
    bus_id_legacy: [c_char; 16],
    domain: c_uint,
    bus: c_uint,
    device: c_uint,
    pci_device_id: c_uint,
    pci_sub_system_id: c_uint,
    bus_id: [c_char; 32],
}

impl Nvml {
    /// Every GPU's health, by NVML index.
    pub fn health(&self) -> Vec<DeviceHealth> {
        self.all_devices().into_iter().enumerate().map(|(i, d)| self.device_health(i, d)).collect()
    }

    fn text(&self, f: &str, dev: Device) -> Option<String> {
        let f = self.sym::<unsafe extern "C" fn(Device, *mut c_char, c_uint) -> c_int>(f).ok()?;
        let mut buf = [0 as c_char; 96];
        (unsafe { f(dev, buf.as_mut_ptr(), buf.len() as c_uint) } == SUCCESS)
            .then(|| unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    fn uint(&self, f: &str, dev: Device) -> Option<u32> {
        let f = self.sym::<unsafe extern "C" fn(Device, *mut c_uint) -> c_int>(f).ok()?;
        let mut v: c_uint = 0;
        (unsafe { f(dev, &mut v) } == SUCCESS).then_some(v)
    }

    fn ecc(&self, dev: Device, counter: c_uint) -> Option<u64> {
        let f = self
            .sym::<unsafe extern "C" fn(Device, c_uint, c_uint, *mut c_ulonglong) -> c_int>(
                "nvmlDeviceGetTotalEccErrors",
            )
            .ok()?;
        let mut v: c_ulonglong = 0;
        // Error type 1: uncorrected.
        (unsafe { f(dev, 1, counter, &mut v) } == SUCCESS).then_some(v)
    }

    /// The larger of the volatile and aggregate counts of `kind` (0
    /// corrected, 1 uncorrected) at `location` (2 DRAM, 7 SRAM).
    fn located(&self, dev: Device, kind: c_uint, location: c_uint) -> Option<u64> {
        type Counter = unsafe extern "C" fn(Device, c_uint, c_uint, c_uint, *mut c_ulonglong) -> c_int;
        let f = self.sym::<Counter>("nvmlDeviceGetMemoryErrorCounter").ok()?;
        let read = |counter: c_uint| {
            let mut v: c_ulonglong = 0;
            (unsafe { f(dev, kind, counter, location, &mut v) } == SUCCESS).then_some(v)
        };
        read(0).into_iter().chain(read(1)).max()
    }

    fn device_health(&self, index: usize, dev: Device) -> DeviceHealth {
        let uuid = self.text("nvmlDeviceGetUUID", dev).unwrap_or_else(|| "no UUID".into());
        let mut h = DeviceHealth {
            device: format!("GPU {index} ({uuid})"),
            name: self.text("nvmlDeviceGetName", dev),
            ecc_uncorrected_volatile: self.ecc(dev, 0),
            ecc_uncorrected_aggregate: self.ecc(dev, 1),
            ecc_sram_corrected: self.located(dev, 0, 7),
            ecc_sram_uncorrected: self.located(dev, 1, 7),
            ecc_dram: self.located(dev, 0, 2).into_iter().chain(self.located(dev, 1, 2)).max(),
            ..Default::default()
        };
        type Remapped = unsafe extern "C" fn(Device, *mut c_uint, *mut c_uint, *mut c_uint, *mut c_uint) -> c_int;
        if let Ok(f) = self.sym::<Remapped>("nvmlDeviceGetRemappedRows") {
            let (mut corr, mut unc, mut pending, mut failed) = (0, 0, 0, 0);
            if unsafe { f(dev, &mut corr, &mut unc, &mut pending, &mut failed) } == SUCCESS {
                (h.remap_pending, h.remap_failed) = (Some(pending != 0), Some(failed != 0));
                h.remapped_uncorrectable_rows = Some(unc as u64);
            }
        }
        h.retired_pending = self.uint("nvmlDeviceGetRetiredPagesPendingStatus", dev).map(|v| v != 0);
        type Retired = unsafe extern "C" fn(Device, c_uint, *mut c_uint, *mut c_ulonglong) -> c_int;
        if let Ok(f) = self.sym::<Retired>("nvmlDeviceGetRetiredPages") {
            // Cause 1: double-bit ECC errors; a count query (room for none).
            let mut n: c_uint = 0;
            let rc = unsafe { f(dev, 1, &mut n, std::ptr::null_mut()) };
            if rc == SUCCESS || rc == INSUFFICIENT_SIZE {
                h.retired_pages = Some(n as u64);
            }
        }
        let pair = |now: &str, max: &str| Some((self.uint(now, dev)?, self.uint(max, dev)?));
        h.pcie_gen = pair("nvmlDeviceGetCurrPcieLinkGeneration", "nvmlDeviceGetMaxPcieLinkGeneration");
        h.pcie_width = pair("nvmlDeviceGetCurrPcieLinkWidth", "nvmlDeviceGetMaxPcieLinkWidth");
        if let Ok(f) =
            self.sym::<unsafe extern "C" fn(Device, c_uint, *mut c_uint) -> c_int>("nvmlDeviceGetNvLinkState")
        {
            // Links the part has answer; the first that does not ends them.
            let mut active = None;
            for link in 0..MAX_NVLINKS {
                let mut on: c_uint = 0;
                if unsafe { f(dev, link, &mut on) } != SUCCESS {
                    break;
                }
                *active.get_or_insert(0) += u32::from(on != 0);
            }
            h.nvlinks_active = active;
        }
        if let Ok(f) = self
            .sym::<unsafe extern "C" fn(Device, *mut c_ulonglong) -> c_int>("nvmlDeviceGetCurrentClocksEventReasons")
        {
            let mut v: c_ulonglong = 0;
            h.throttle_reasons = (unsafe { f(dev, &mut v) } == SUCCESS).then_some(v);
        }
        if let Ok(f) = self.sym::<unsafe extern "C" fn(Device, *mut FabricInfo) -> c_int>("nvmlDeviceGetGpuFabricInfo")
        {
            let mut info = FabricInfo { cluster_uuid: [0; 16], status: 0, clique_id: 0, state: 0 };
            if unsafe { f(dev, &mut info) } == SUCCESS {
                h.fabric = Some((info.state, info.status));
            }
        }
        if let Ok(f) = self.sym::<unsafe extern "C" fn(Device, *mut PciInfo) -> c_int>("nvmlDeviceGetPciInfo_v3") {
            let mut p = PciInfo {
                bus_id_legacy: [0; 16],
                domain: 0,
                bus: 0,
                device: 0,
                pci_device_id: 0,
                pci_sub_system_id: 0,
                bus_id: [0; 32],
            };
            if unsafe { f(dev, &mut p) } == SUCCESS {
                h.pci = Some((p.domain, p.bus, p.device));
            }
        }
        h
    }
}
