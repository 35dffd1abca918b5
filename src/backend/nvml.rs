//! A few NVML facts for the manifest (driver version, clocks, power limit,
//! MIG mode), read through `libnvidia-ml.so.1` loaded at run time. NVML is
//! optional: where it is missing, the facts are simply absent and the
//! manifest says why.
//!
//! Only long-stable NVML entry points are used (all present since NVML 5 /
//! driver 3xx), matched to CUDA devices by PCI bus id rather than ordinal,
//! since `CUDA_VISIBLE_DEVICES` and NVML can number GPUs differently.

use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void, CStr, CString};

use libloading::{Library, Symbol};

use crate::vocab::telemetry::{Reading, Sensor};

pub(crate) type Device = *mut c_void;
pub(crate) const SUCCESS: c_int = 0;
const CLOCK_SM: c_uint = 1;
const CLOCK_MEM: c_uint = 2;
const TEMPERATURE_GPU: c_uint = 0;

/// An initialised NVML library.
pub struct Nvml {
    lib: Library,
}

// SAFETY: NVML is thread-safe (its documentation: "all NVML functions are
// thread-safe"), and the library handle is only used to look up symbols.
unsafe impl Send for Nvml {}

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

    pub(crate) fn sym<T>(&self, name: &str) -> Result<Symbol<'_, T>, String> {
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

    /// Every GPU NVML sees, by index.
    pub fn all_devices(&self) -> Vec<Device> {
        let (Ok(count), Ok(get)) = (
            self.sym::<unsafe extern "C" fn(*mut c_uint) -> c_int>("nvmlDeviceGetCount_v2"),
            self.sym::<unsafe extern "C" fn(c_uint, *mut Device) -> c_int>("nvmlDeviceGetHandleByIndex_v2"),
        ) else {
            return Vec::new();
        };
        let mut n: c_uint = 0;
        if unsafe { count(&mut n) } != SUCCESS {
            return Vec::new();
        }
        (0..n)
            .filter_map(|i| {
                let mut dev: Device = std::ptr::null_mut();
                (unsafe { get(i, &mut dev) } == SUCCESS).then_some(dev)
            })
            .collect()
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

type ClockFn = unsafe extern "C" fn(Device, c_uint, *mut c_uint) -> c_int;
type UintFn = unsafe extern "C" fn(Device, *mut c_uint) -> c_int;
type U64Fn = unsafe extern "C" fn(Device, *mut c_ulonglong) -> c_int;

/// NVML as a telemetry sensor of one GPU (a sweep), or of every GPU at
/// once (`run exec`: power and energy summed, clocks the median, the
/// hottest temperature, reasons OR-ed).
pub struct NvmlSensor {
    devices: Vec<Device>,
    what: String,
    clock: Option<ClockFn>,
    power: Option<UintFn>,
    temperature: Option<ClockFn>,
    reasons: Option<U64Fn>,
    energy: Option<U64Fn>,
    reference: Vec<Option<f64>>,
    lacks: Vec<String>,
    // Last: the library outlives the function pointers above.
    _nvml: Nvml,
}

// SAFETY: NVML handles may be used from any thread (see `Nvml`).
unsafe impl Send for NvmlSensor {}

impl NvmlSensor {
    /// The sensor of the GPU at `pci_bus_id`.
    pub fn open(pci_bus_id: &str) -> Result<NvmlSensor, String> {
        let nvml = Nvml::open()?;
        let dev = nvml.device(pci_bus_id).ok_or_else(|| format!("NVML has no GPU at PCI bus id {pci_bus_id}"))?;
        NvmlSensor::over(nvml, vec![dev], format!("NVML (libnvidia-ml.so.1), GPU {pci_bus_id}"))
    }

    /// The sensor of every GPU NVML sees.
    pub fn open_all() -> Result<NvmlSensor, String> {
        let nvml = Nvml::open()?;
        let devs = nvml.all_devices();
        if devs.is_empty() {
            return Err("NVML sees no GPU".into());
        }
        let n = devs.len();
        NvmlSensor::over(nvml, devs, format!("NVML (libnvidia-ml.so.1), all {n} GPU(s), power summed"))
    }

    fn over(nvml: Nvml, devices: Vec<Device>, what: String) -> Result<NvmlSensor, String> {
        let f = |name: &str| nvml.sym::<ClockFn>(name).ok().map(|s| *s);
        let u = |name: &str| nvml.sym::<UintFn>(name).ok().map(|s| *s);
        let w = |name: &str| nvml.sym::<U64Fn>(name).ok().map(|s| *s);
        let default_clock = f("nvmlDeviceGetDefaultApplicationsClock");
        let reference = devices
            .iter()
            .map(|&d| {
                let get = default_clock?;
                let mut v: c_uint = 0;
                (unsafe { get(d, CLOCK_SM, &mut v) } == SUCCESS && v > 0).then_some(v as f64)
            })
            .collect();
        let mut s = NvmlSensor {
            devices,
            what,
            clock: f("nvmlDeviceGetClockInfo"),
            power: u("nvmlDeviceGetPowerUsage"),
            temperature: f("nvmlDeviceGetTemperature"),
            reasons: w("nvmlDeviceGetCurrentClocksEventReasons")
                .or_else(|| w("nvmlDeviceGetCurrentClocksThrottleReasons")),
            energy: w("nvmlDeviceGetTotalEnergyConsumption"),
            reference,
            lacks: Vec::new(),
            _nvml: nvml,
        };
        // One reading now, to say what this GPU does not report.
        let r = s.read()?;
        for (missing, what) in [
            (r.clock_mhz.is_none(), "SM clock"),
            (r.power_w.is_none(), "power draw"),
            (r.temperature_c.is_none(), "temperature"),
            (r.throttle.is_none(), "throttle reasons"),
            (r.clock_ref_mhz.is_none(), "default application clock (no below-clock flag)"),
        ] {
            if missing {
                s.lacks.push(format!("NVML gives no {what} for this GPU"));
            }
        }
        if r.energy_j.is_none() {
            s.lacks
                .push("NVML has no energy counter for this GPU (before Volta): power is integrated over time".into());
        }
        Ok(s)
    }
}

impl Sensor for NvmlSensor {
    fn read(&mut self) -> Result<Reading, String> {
        let mut clocks = Vec::new();
        let mut mem = Vec::new();
        let (mut power, mut energy, mut temp, mut reasons) = (None::<f64>, None::<f64>, None::<f64>, None::<u64>);
        let mut errors = Vec::new();
        for &d in &self.devices {
            let mut call_clock = |f: Option<ClockFn>, kind: c_uint| -> Option<f64> {
                let mut v: c_uint = 0;
                let rc = unsafe { f?(d, kind, &mut v) };
                if rc != SUCCESS {
                    errors.push(rc);
                }
                (rc == SUCCESS).then_some(v as f64)
            };
            clocks.extend(call_clock(self.clock, CLOCK_SM));
            mem.extend(call_clock(self.clock, CLOCK_MEM));
            if let Some(t) = call_clock(self.temperature, TEMPERATURE_GPU) {
                temp = Some(temp.map_or(t, |x| x.max(t)));
            }
            if let Some(f) = self.power {
                let mut mw: c_uint = 0;
                if unsafe { f(d, &mut mw) } == SUCCESS {
                    power = Some(power.unwrap_or(0.0) + mw as f64 / 1e3);
                }
            }
            if let Some(f) = self.energy {
                let mut mj: c_ulonglong = 0;
                if unsafe { f(d, &mut mj) } == SUCCESS {
                    energy = Some(energy.unwrap_or(0.0) + mj as f64 / 1e3);
                }
            }
            if let Some(f) = self.reasons {
                let mut m: c_ulonglong = 0;
                if unsafe { f(d, &mut m) } == SUCCESS {
                    reasons = Some(reasons.unwrap_or(0) | m);
                }
            }
        }
        if clocks.is_empty() && power.is_none() && energy.is_none() && temp.is_none() {
            return Err(format!("every NVML reading failed (return codes {errors:?})"));
        }
        let median = |mut v: Vec<f64>| (!v.is_empty()).then(|| crate::vocab::stats::median_unsorted(&mut v));
        Ok(Reading {
            t_s: 0.0,
            clock_mhz: median(clocks),
            mem_clock_mhz: median(mem),
            power_w: power,
            temperature_c: temp,
            throttle: reasons,
            energy_j: energy,
            clock_ref_mhz: median(self.reference.iter().flatten().copied().collect()),
        })
    }

    fn describe(&self) -> String {
        self.what.clone()
    }

    fn lacks(&self) -> Vec<String> {
        self.lacks.clone()
    }
}

impl Drop for Nvml {
    fn drop(&mut self) {
        if let Ok(f) = self.sym::<unsafe extern "C" fn() -> c_int>("nvmlShutdown") {
            unsafe { f() };
        }
    }
}
