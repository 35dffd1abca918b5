//! The backend contract: the device calls a GPU backend provides
//! ([`GpuApi`]), the buffers and operations they take, and what a backend
//! found at start-up ([`Inventory`]). CUDA, HIP and the emulated test
//! device implement it; nothing here knows which one it talks to.

use std::cell::RefCell;
use std::rc::Rc;

use super::{GpuFacts, Launch, PeerAccess};
use crate::vocab::kinds::Dtype;

/// A device allocation: its device ordinal, device address and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DevBuf {
    pub device: usize,
    pub ptr: u64,
    pub bytes: u64,
}

/// One operation enqueued on a stream. Host pointers must stay valid until
/// the timed call returns (the shared code owns them).
#[derive(Debug, Clone, Copy)]
pub enum Op {
    /// Device → device on the DMA copy engine (`cuMemcpyDtoDAsync`).
    CopyEngine { dst: DevBuf, src: DevBuf },
    /// Device → device by a copy kernel on the SMs/CUs of the lane's device;
    /// `dst` may be a peer's buffer (peer access enabled). `launch` fixes
    /// grid × block; without one the backend sizes the grid to the device.
    KernelCopy { dst: DevBuf, src: DevBuf, launch: Option<Launch> },
    /// Host → device (`cuMemcpyHtoDAsync`); pinned or pageable host memory.
    HostToDevice { dst: DevBuf, src: *const u8 },
    /// Device → host (`cuMemcpyDtoHAsync`).
    DeviceToHost { dst: *mut u8, src: DevBuf },
    /// Device → another device (`cuMemcpyPeerAsync`).
    Peer { dst: DevBuf, src: DevBuf },
    /// C = A·B with a plan from [`GpuApi::gemm_plan`] (buffers laid out
    /// as [`super::blas`] says for the plan's layout).
    Gemm { plan: usize, a: DevBuf, b: DevBuf, c: DevBuf },
}

/// What a GEMM plan is asked for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GemmSpec {
    pub dtype: Dtype,
    pub m: u64,
    pub n: u64,
    pub k: u64,
    pub setting: crate::vocab::gemm::GemmSetting,
}

/// How a backend will run a GEMM of one dtype and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmPlan {
    /// Handle for [`Op::Gemm`].
    pub id: usize,
    /// `cublaslt`, `hipblas_gemm_ex`: stored in `method`.
    pub method: String,
    /// Candidate algorithms the library offered (at least 1; at most what
    /// was asked), to be timed with [`GpuApi::gemm_use_algo`].
    pub algos: usize,
}

/// What a backend found: its devices, and `peers[a][b]`, peer access from
/// GPU a to GPU b.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub facts: Vec<GpuFacts>,
    pub peers: Vec<Vec<PeerAccess>>,
}

impl Inventory {
    /// The manifest facts of a GPU backend with this inventory and these
    /// version strings: the same type the report reads back.
    pub fn backend_facts(&self, versions: &[(&str, String)]) -> serde_json::Value {
        let facts = crate::vocab::facts::GpuBackendFacts {
            devices: self.facts.clone(),
            peer_access: self.peers.clone(),
            versions: versions.iter().map(|(k, v)| (k.to_string(), serde_json::Value::String(v.clone()))).collect(),
        };
        serde_json::to_value(facts).expect("GPU facts always serialize")
    }
}

/// The device calls a GPU backend provides. Every call reports failure as a
/// message (the driver's error name and what was attempted); the shared code
/// turns it into a failed or skipped point, never a panic.
pub trait GpuApi {
    /// The clock samples are timed with: `cuda_event`, `hip_event`.
    fn timer(&self) -> &'static str;
    /// The devices and the peer-access matrix found at start-up.
    fn inventory(&self) -> &Inventory;
    /// The devices found, in ordinal order.
    fn devices(&self) -> &[GpuFacts] {
        &self.inventory().facts
    }
    /// Peer access from `from` to `to`, as found (and enabled) at start-up.
    fn peer_access(&self, from: usize, to: usize) -> PeerAccess {
        self.inventory().peers.get(from).and_then(|r| r.get(to)).copied().unwrap_or(PeerAccess::Unsupported)
    }
    /// (free, total) device memory in bytes.
    fn mem_info(&mut self, device: usize) -> Result<(u64, u64), String>;
    fn alloc(&mut self, device: usize, bytes: u64) -> Result<DevBuf, String>;
    fn free(&mut self, buf: DevBuf);
    /// Page-locked host memory, registered with the driver.
    fn alloc_pinned(&mut self, bytes: u64) -> Result<*mut u8, String>;
    fn free_pinned(&mut self, ptr: *mut u8);
    /// Synchronous copy of `src` into the start of `dst`.
    fn upload(&mut self, dst: DevBuf, src: &[u8]) -> Result<(), String>;
    /// Synchronous copy of the start of `src` into `dst`.
    fn download(&mut self, src: DevBuf, dst: &mut [u8]) -> Result<(), String>;
    /// Seconds of back-to-back work before the first measurement, so that
    /// the clocks have left their idle state (MI300X takes hundreds of ms).
    fn ramp_seconds(&self) -> f64 {
        0.5
    }
    /// Evict `device`'s L2 cache (by writing a buffer larger than it).
    fn flush_l2(&mut self, device: usize) -> Result<(), String>;
    /// Whether `method` (a [`crate::vocab::kinds::CopyMethod`] name) can run here, or why not.
    fn copy_method(&mut self, device: usize, method: &str) -> Result<(), String>;
    /// The library call that will run a GEMM of `dtype`, or why none can.
    fn gemm_method(&self, device: usize, dtype: Dtype) -> Result<String, String>;
    /// Prepare a GEMM (row-major C = A·B, m×n, buffers as [`super::blas`] lays
    /// them out for `spec`'s layout), with up to `algos` candidate
    /// algorithms from the library's heuristic (the first in use).
    fn gemm_plan(&mut self, device: usize, spec: &GemmSpec, algos: u32) -> Result<GemmPlan, String>;
    /// Run the plan with its candidate `index` from now on; returns how
    /// the library names that algorithm.
    fn gemm_use_algo(&mut self, _plan: usize, index: usize) -> Result<String, String> {
        if index == 0 {
            Ok("library default".into())
        } else {
            Err("this backend offers one algorithm per GEMM".into())
        }
    }
    /// The workspace the GEMM library is given on `device`, once planned.
    fn gemm_workspace_bytes(&self, _device: usize) -> Option<u64> {
        None
    }
    /// Enqueue `n` repetitions of each lane's operation, every lane on its
    /// own stream of `device`, all started by one event and joined by
    /// another; return the seconds between the two events. Device backends
    /// implement it with [`timing::time_lanes`].
    fn time(&mut self, device: usize, lanes: &[Op], n: u64) -> Result<f64, String>;
    /// The sensor of `device` (clocks, power, throttle reasons, energy),
    /// opened on the telemetry sampler's thread; an opener that fails says
    /// why there is no telemetry.
    fn sensor(&self, _device: usize) -> crate::vocab::telemetry::SensorOpener {
        let backend = self.timer();
        Box::new(move || Err(format!("this backend ({backend}) has no sensor library wired up")))
    }
}

/// A GPU API shared by the benchmarks of one backend.
pub type SharedApi = Rc<RefCell<dyn GpuApi>>;
