//! Backends: the machines a benchmark can run on. Each backend says whether
//! it is usable here (and why not), names its devices, and hands out the
//! benchmarks it implements. CPU is always present; CUDA, HIP and MPI
//! backends plug in behind Cargo features with the same surface.

pub mod cpu;
#[cfg(feature = "cuda")]
pub mod cuda;
#[cfg(feature = "hip")]
pub mod hip;
#[cfg(feature = "hip")]
mod hipblas;
#[cfg(feature = "hip")]
mod hiprtc;
pub mod kernel_log;
#[cfg(feature = "mpi")]
pub mod mpi;
#[cfg(feature = "cuda")]
mod nvml;
#[cfg(feature = "cuda")]
mod nvml_health;
pub mod sysfs;

use crate::bench::Benchmark;
use crate::vocab::benches::Bench;

pub use crate::vocab::facts::Probe;

/// One kind of hardware benchbook can measure.
pub trait Backend {
    /// `cpu`, `cuda`, `hip`, `mpi`: stored in the `backend` column.
    fn name(&self) -> &'static str;
    /// Look for usable devices, never panicking when a driver is absent.
    fn probe(&self) -> Probe;
    /// Whether this backend implements the benchmark `bench` (whether or
    /// not it is usable here).
    fn implements(&self, bench: Bench) -> bool;
    /// Facts about the devices for the manifest (driver versions, clocks,
    /// peer access, ...), when the backend is usable.
    fn facts(&self) -> Option<serde_json::Value> {
        None
    }
    /// The benchmarks this backend implements among `cfg.benches`, for `device`.
    fn benchmarks(&self, cfg: &crate::bench::BenchConfig, device: usize) -> Vec<Box<dyn Benchmark>>;
    /// The sensor the telemetry sampler reads beside `device`'s points.
    fn sensor(&self, device: usize) -> crate::vocab::telemetry::SensorOpener;
}

/// The sensor of every GPU this build can read, for `run exec` (NVML:
/// power and energy summed over the GPUs), or why there is none.
pub fn all_gpus_sensor() -> crate::vocab::telemetry::SensorOpener {
    #[cfg(feature = "cuda")]
    {
        Box::new(|| nvml::NvmlSensor::open_all().map(|s| Box::new(s) as Box<dyn crate::vocab::telemetry::Sensor>))
    }
    #[cfg(not(feature = "cuda"))]
    {
        Box::new(|| Err("built without the `cuda` feature: no NVML to read GPUs with".to_string()))
    }
}

/// What every GPU of this node reports about its own health (NVML), or
/// why nothing could be read. Where NVML is not there but the node has AMD
/// GPUs, the answer says so: amd-smi's library is not read yet.
pub fn gpu_health() -> Result<Vec<crate::vocab::health::DeviceHealth>, String> {
    nvml_health().map_err(|why| match sysfs::amd_gpus() {
        0 => why,
        n => format!(
            "{n} AMD GPU{} on this node (sysfs vendor 0x1002), and benchbook does not read amd-smi's library yet: their health is not judged ({why})",
            if n == 1 { "" } else { "s" }
        ),
    })
}

fn nvml_health() -> Result<Vec<crate::vocab::health::DeviceHealth>, String> {
    #[cfg(feature = "cuda")]
    {
        let nvml = nvml::Nvml::open()?;
        let devices = nvml.health();
        if devices.is_empty() {
            return Err("NVML sees no GPU".into());
        }
        Ok(devices)
    }
    #[cfg(not(feature = "cuda"))]
    {
        Err("built without the `cuda` feature: no NVML to read GPUs with".to_string())
    }
}

/// Every backend compiled into this build.
pub fn all() -> Vec<Box<dyn Backend>> {
    #[allow(unused_mut)]
    let mut v: Vec<Box<dyn Backend>> = vec![Box::new(cpu::Cpu)];
    #[cfg(feature = "cuda")]
    v.push(Box::new(cuda::backend()));
    #[cfg(feature = "hip")]
    v.push(Box::new(hip::backend()));
    v
}

/// GPU backends this build was compiled without, and how to get them.
pub fn missing() -> Vec<(&'static str, &'static str)> {
    [
        (!cfg!(feature = "cuda")).then_some((
            "cuda",
            "built without the `cuda` feature (it is a default feature; drop --no-default-features)",
        )),
        (!cfg!(feature = "hip")).then_some((
            "hip",
            "built without the `hip` feature (cargo build --release --features hip, with the HIP runtime installed)",
        )),
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(any(feature = "cuda", feature = "hip"))]
type GpuState = Result<(crate::bench::gpu::SharedApi, serde_json::Value), String>;

/// A GPU backend (CUDA, HIP): the device API is opened on first use, and
/// every benchmark is the shared [`crate::bench::gpu`] code over it.
#[cfg(any(feature = "cuda", feature = "hip"))]
pub struct GpuBackend {
    name: &'static str,
    open: fn() -> GpuState,
    state: std::cell::OnceCell<GpuState>,
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl GpuBackend {
    pub(crate) fn new(name: &'static str, open: fn() -> GpuState) -> Self {
        GpuBackend { name, open, state: std::cell::OnceCell::new() }
    }

    /// The backend's device API, opened on first use, or why it cannot be
    /// (the MPI backend hands its buffers to a GPU-aware MPI).
    #[cfg(feature = "mpi")]
    pub(crate) fn api(&self) -> Result<crate::bench::gpu::SharedApi, String> {
        self.state().as_ref().map(|(api, _)| api.clone()).map_err(|e| e.clone())
    }

    fn state(&self) -> &GpuState {
        self.state.get_or_init(|| {
            // cudarc panics when a symbol is missing from an old driver; a
            // panic while opening becomes an "unavailable" reason, never a crash.
            std::panic::catch_unwind(self.open).unwrap_or_else(|p| {
                Err(format!("the {} runtime panicked: {}", self.name, crate::error::panic_text(&p)))
            })
        })
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl Backend for GpuBackend {
    fn name(&self) -> &'static str {
        self.name
    }

    fn probe(&self) -> Probe {
        match self.state() {
            Ok((api, _)) => Probe::Available {
                devices: api
                    .borrow()
                    .devices()
                    .iter()
                    .map(|d| crate::vocab::rows::gpu_device_name(d.ordinal, &d.name))
                    .collect(),
            },
            Err(reason) => Probe::Unavailable { reason: reason.clone() },
        }
    }

    fn implements(&self, bench: Bench) -> bool {
        crate::bench::gpu::Kind::of(bench).is_some()
    }

    fn facts(&self) -> Option<serde_json::Value> {
        self.state().as_ref().ok().map(|(_, f)| f.clone())
    }

    fn benchmarks(&self, cfg: &crate::bench::BenchConfig, device: usize) -> Vec<Box<dyn Benchmark>> {
        match self.state() {
            Ok((api, _)) => crate::bench::gpu::benchmarks(api, &cfg.benches, device, cfg.gpu_gemm_algos),
            Err(_) => Vec::new(),
        }
    }

    fn sensor(&self, device: usize) -> crate::vocab::telemetry::SensorOpener {
        match self.state() {
            Ok((api, _)) => api.borrow().sensor(device),
            Err(why) => {
                let why = why.clone();
                Box::new(move || Err(why))
            }
        }
    }
}
