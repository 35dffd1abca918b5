//! A few NVML facts for the manifest (driver version, clocks, power limit,
//! MIG mode), read through `libnvidia-ml.so.1` loaded at run time. NVML is
//! optional: where it is missing, the facts are simply absent and the
//! manifest says why.
//!
//! Only long-stable NVML entry points are used (all present since NVML 5 /
//! driver 3xx), matched to CUDA devices by PCI bus id rather than ordinal,
//! since `CUDA_VISIBLE_DEVICES` and NVML can number GPUs differently.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

use libloading::{Library, Symbol};

type Device = *mut c_void;
const SUCCESS: c_int = 0;
const CLOCK_SM: c_uint = 1;
const CLOCK_MEM: c_uint = 2;
const TEMPERATURE_GPU: c_uint = 0;

/// An initialised NVML library.
pub struct Nvml {
    lib: Library,
}

impl Nvml {
    /// Load and initialise NVML, or say why not.
    pub fn open() -> Result<Nvml, String> {
        let lib = unsafe { Library::new("libnvidia-ml.so.1").or_else(|_| Library::new("libnvidia-ml.so")) }
            .map_err(|e| format!("NVML not loaded ({e})"))?;
        let nvml = Nvml { lib };
        let rc = unsafe { nvml.sym::<unsafe extern "C" fn() -> c_int>("nvmlInit_v2")?() };
        if rc != SUCCESS {
            return Err(format!("nvmlInit_v2 returned {rc}"));
        }
        Ok(nvml)
    }

    fn sym<T>(&self, name: &str) -> Result<Symbol<'_, T>, String> {
        unsafe { self.lib.get::<T>(name.as_bytes()) }.map_err(|e| format!("NVML has no {name}: {e}"))
    }

    /// The kernel driver's version, e.g. `580.65.06`.
    pub fn driver_version(&self) -> Option<String> {
        let f = self.sym::<unsafe extern "C" fn(*mut c_char, c_uint) -> c_int>("nvmlSystemGetDriverVersion").ok()?;
        let mut buf = [0 as c_char; 96];
        (unsafe { f(buf.as_mut_ptr(), buf.len() as c_uint) } == SUCCESS)
            .then(|| unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy().into_owned())
    }

    /// Clocks, power limit, temperature and MIG mode of the GPU at
    /// `pci_bus_id` (as `cuDeviceGetPCIBusId` writes it).
    pub fn device_facts(&self, pci_bus_id: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(dev) = self.device(pci_bus_id) else {
            out.insert("nvml".into(), format!("no NVML device at PCI bus id {pci_bus_id}"));
            return out;
        };
        type Clock = unsafe extern "C" fn(Device, c_uint, *mut c_uint) -> c_int;
        type Uint = unsafe extern "C" fn(Device, *mut c_uint) -> c_int;
        let mut put_clock = |fname: &str, kind: c_uint, key: &str| {
            if let Ok(f) = self.sym::<Clock>(fname) {
                let mut v: c_uint = 0;
                if unsafe { f(dev, kind, &mut v) } == SUCCESS {
                    out.insert(key.into(), v.to_string());
                }
            }
        };
        put_clock("nvmlDeviceGetMaxClockInfo", CLOCK_SM, "sm_clock_max_mhz");
        put_clock("nvmlDeviceGetClockInfo", CLOCK_SM, "sm_clock_mhz");
        put_clock("nvmlDeviceGetMaxClockInfo", CLOCK_MEM, "mem_clock_max_mhz");
        put_clock("nvmlDeviceGetTemperature", TEMPERATURE_GPU, "temperature_c");
        for (fname, key) in [
            ("nvmlDeviceGetPowerManagementLimit", "power_limit_mw"),
            ("nvmlDeviceGetEnforcedPowerLimit", "power_limit_enforced_mw"),
        ] {
            if let Ok(f) = self.sym::<Uint>(fname) {
                let mut v: c_uint = 0;
                if unsafe { f(dev, &mut v) } == SUCCESS {
                    out.insert(key.into(), v.to_string());
                }
            }
        }
        if let Ok(f) =
            self.sym::<unsafe extern "C" fn(Device, *mut c_uint, *mut c_uint) -> c_int>("nvmlDeviceGetMigMode")
        {
            let (mut cur, mut pending) = (0, 0);
            if unsafe { f(dev, &mut cur, &mut pending) } == SUCCESS {
                out.insert("mig_mode".into(), if cur == 1 { "enabled" } else { "disabled" }.into());
            }
        }
        out
    }

    fn device(&self, pci_bus_id: &str) -> Option<Device> {
        let f = self
            .sym::<unsafe extern "C" fn(*const c_char, *mut Device) -> c_int>("nvmlDeviceGetHandleByPciBusId_v2")
            .ok()?;
        let id = CString::new(pci_bus_id).ok()?;
        let mut dev: Device = std::ptr::null_mut();
        (unsafe { f(id.as_ptr(), &mut dev) } == SUCCESS).then_some(dev)
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        if let Ok(f) = self.sym::<unsafe extern "C" fn() -> c_int>("nvmlShutdown") {
            unsafe { f() };
        }
    }
}
