//! Device benchmarks shared by every GPU backend (CUDA, HIP): which points a
//! sweep has, how a point is measured, how its result is validated and how
//! its bytes are counted. A backend supplies only the device calls, through
//! [`GpuApi`]; nothing here knows whether it talks to CUDA or HIP.
//!
//! | bench | op | one operation | `bytes_copied` | `bytes_moved` |
//! |---|---|---|---|---|
//! | `memcpy` | `copy` | device → same device | size | 2 × size (read + write) |
//! | `memcpy-peer` | `copy` | GPU a → GPU b | size | 2 × size |
//! | `memcpy-peer` | `copy_bidir` | a → b and b → a at once | 2 × size | 4 × size |
//! | `memcpy-peer` | `copy`, `sm_kernel`, grid × block | a kernel on a writes b's memory | size | 2 × size |
//! | `h2d` / `d2h` | `copy` | host ↔ device | size | 2 × size |
//! | `gemm` | `gemm` | C = Aᵀ·B (m×n, depth k) | — | A + B read, C written |
//!
//! Timing: a sample is `n` operations enqueued back to back on the device's
//! stream(s) between two device events (`timer` = `cuda_event` /
//! `hip_event`); the spine's sampler picks `n` so a sample lasts long enough
//! that launch overhead does not swamp small copies, and stores it in
//! `iterations`. Variant `cold` flushes the L2 cache before every single
//! operation and times each one alone (events around one operation, summed
//! over the sample), as nvbench's cold mode does. The event choreography is
//! written once, in [`timing`]; a backend supplies the driver calls.
//!
//! Layout: this file is the backend contract and the benchmark object;
//! [`points`] says which points a sweep has, `copy` measures and validates
//! the copies, `gemm` the GEMMs; element types live in [`super::dtype`].

use std::cell::RefCell;
use std::rc::Rc;

use super::{BenchConfig, Benchmark, Measurement, Outcome, Sampler};
use crate::vocab::benches::Bench;
use crate::vocab::kinds::Dtype;
use crate::vocab::rows::Point;
use crate::vocab::units::format_bytes;

mod copy;
mod gemm;
pub mod points;
pub mod timing;

pub use self::copy::{pattern, CopyArgs, COPY_KERNEL, COPY_KERNEL_NAME};
pub use self::gemm::check_gemm;
pub use super::dtype::{e4m3_to_f32, f32_to_e4m3, normal_values};
pub use crate::vocab::facts::{GpuFacts, PeerAccess};
pub use crate::vocab::launch::Launch;

/// GEMM element types a GPU backend may offer (`fp8` is E4M3).
pub const GPU_DTYPES: [Dtype; 5] = [Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16, Dtype::Fp8];

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
    /// C = Aᵀ·B with a plan from [`GpuApi::gemm_plan`].
    Gemm { plan: usize, a: DevBuf, b: DevBuf, c: DevBuf },
}

/// How a backend will run a GEMM of one dtype and shape.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmPlan {
    /// Handle for [`Op::Gemm`].
    pub id: usize,
    /// `cublas_gemm_ex`, `cublaslt`, `hipblas_gemm_ex`: stored in `method`.
    pub method: String,
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
    /// Prepare a GEMM (C = Aᵀ·B; A is m×k and B n×k, both k-contiguous; C
    /// column-major m×n).
    fn gemm_plan(&mut self, device: usize, dtype: Dtype, m: u64, n: u64, k: u64) -> Result<GemmPlan, String>;
    /// Enqueue `n` repetitions of each lane's operation, every lane on its
    /// own stream of `device`, all started by one event and joined by
    /// another; return the seconds between the two events. Device backends
    /// implement it with [`timing::time_lanes`].
    fn time(&mut self, device: usize, lanes: &[Op], n: u64) -> Result<f64, String>;
}

/// A GPU API shared by the benchmarks of one backend.
pub type SharedApi = Rc<RefCell<dyn GpuApi>>;

/// Which GPU benchmark: the GPU backends' own closed set of the
/// [`Bench`] table's rows (a `match` here stays exhaustive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Memcpy,
    MemcpyPeer,
    H2D,
    D2H,
    Gemm,
}

impl Kind {
    /// The GPU benchmark a table row is, if a GPU backend measures it.
    pub fn of(bench: Bench) -> Option<Kind> {
        Some(match bench {
            Bench::Memcpy => Kind::Memcpy,
            Bench::MemcpyPeer => Kind::MemcpyPeer,
            Bench::H2d => Kind::H2D,
            Bench::D2h => Kind::D2H,
            Bench::Gemm => Kind::Gemm,
            Bench::Stream
            | Bench::P2p
            | Bench::Collective
            | Bench::Links
            | Bench::Rdma
            | Bench::Nvbandwidth
            | Bench::Megatron
            | Bench::Exec => return None,
        })
    }

    pub fn bench(self) -> Bench {
        match self {
            Kind::Memcpy => Bench::Memcpy,
            Kind::MemcpyPeer => Bench::MemcpyPeer,
            Kind::H2D => Bench::H2d,
            Kind::D2H => Bench::D2h,
            Kind::Gemm => Bench::Gemm,
        }
    }

    pub fn name(self) -> &'static str {
        self.bench().name()
    }
}

/// The benchmarks among `names` that a GPU backend runs on `device`.
pub fn benchmarks(api: &SharedApi, names: &[Bench], device: usize) -> Vec<Box<dyn Benchmark>> {
    names
        .iter()
        .filter_map(|b| Kind::of(*b))
        .map(|kind| {
            Box::new(GpuBench { api: api.clone(), kind, device, cache: None, ramped: false }) as Box<dyn Benchmark>
        })
        .collect()
}

/// One GPU benchmark on one device.
pub struct GpuBench {
    api: SharedApi,
    kind: Kind,
    device: usize,
    /// Device buffers kept between points of the same size.
    cache: Option<(u64, Vec<DevBuf>)>,
    /// Whether the clock ramp-up ([`GpuApi::ramp_seconds`]) was done.
    ramped: bool,
}

impl Drop for GpuBench {
    fn drop(&mut self) {
        self.release();
    }
}

/// A per-point pattern offset, so a stale buffer from the previous point
/// cannot pass validation.
fn point_seed(p: &Point) -> u8 {
    (p.size_bytes.unwrap_or(0).trailing_zeros() as u8).wrapping_mul(7).wrapping_add(p.m.unwrap_or(0) as u8)
}

impl GpuBench {
    fn release(&mut self) {
        if let Some((_, bufs)) = self.cache.take() {
            let mut api = self.api.borrow_mut();
            for b in bufs {
                api.free(b);
            }
        }
    }

    /// Device buffers of `bytes` each, on the given devices; reused while
    /// the size stays the same.
    fn buffers(&mut self, bytes: u64, on: &[usize]) -> Result<Vec<DevBuf>, Outcome> {
        if let Some((b, bufs)) = &self.cache {
            if *b == bytes && bufs.iter().map(|x| x.device).eq(on.iter().copied()) {
                return Ok(bufs.clone());
            }
        }
        self.release();
        let want: Vec<(usize, u64)> = on.iter().map(|&d| (d, bytes)).collect();
        let bufs = self.alloc_checked(&want)?;
        self.cache = Some((bytes, bufs.clone()));
        Ok(bufs)
    }

    /// Allocate `(device, bytes)` buffers, or skip (with the reason) when a
    /// device lacks the memory; nothing stays allocated on failure.
    fn alloc_checked(&self, want: &[(usize, u64)]) -> Result<Vec<DevBuf>, Outcome> {
        let mut api = self.api.borrow_mut();
        for &(d, _) in want {
            let need: u64 = want.iter().filter(|(x, _)| *x == d).map(|(_, b)| b).sum();
            if let Ok((free, _)) = api.mem_info(d) {
                if need as f64 > 0.9 * free as f64 {
                    return Err(Outcome::Skipped(format!(
                        "needs {} on GPU {d}, only {} is free",
                        format_bytes(need),
                        format_bytes(free)
                    )));
                }
            }
        }
        let mut bufs = Vec::new();
        for &(d, bytes) in want {
            match api.alloc(d, bytes) {
                Ok(b) => bufs.push(b),
                Err(e) => {
                    bufs.into_iter().for_each(|b| api.free(b));
                    return Err(Outcome::Skipped(format!(
                        "could not allocate {} on GPU {d}: {e}",
                        format_bytes(bytes)
                    )));
                }
            }
        }
        Ok(bufs)
    }

    /// Measure `lanes` with the sampler (warm: n operations per timed call;
    /// cold: flush, then one timed operation, n times).
    fn measure(&mut self, sampler: &Sampler, lanes: &[Op], cold: bool) -> Result<Measurement, String> {
        let device = self.device;
        let mut api = self.api.borrow_mut();
        if !self.ramped {
            // Busy the GPU until its clocks have ramped, once per benchmark
            // and device, before the first point's own warm-up.
            let (ramp, start) = (api.ramp_seconds(), std::time::Instant::now());
            let mut n = 1;
            while start.elapsed().as_secs_f64() < ramp {
                let t = api.time(device, lanes, n)?;
                if t < 0.05 {
                    n *= 2;
                }
            }
            self.ramped = true;
        }
        sampler.measure(&mut |n| {
            if cold {
                timing::time_cold(&mut *api, device, lanes, n)
            } else {
                api.time(device, lanes, n)
            }
        })
    }
}

impl Benchmark for GpuBench {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn timer(&self) -> &'static str {
        self.api.borrow().timer()
    }

    fn points(&self, cfg: &BenchConfig) -> Vec<Point> {
        points::points(self.kind, &*self.api.borrow(), self.device, cfg)
    }

    fn run(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        // cudarc panics when a driver library lacks a symbol it binds (an old
        // driver, a partial install): that point fails with the message, and
        // the run goes on.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match self.kind {
            Kind::Gemm => self.run_gemm(p, sampler),
            _ => self.run_copy(p, sampler),
        }));
        run.unwrap_or_else(|e| Outcome::Failed(format!("the GPU library panicked: {}", crate::error::panic_text(&e))))
    }
}

#[cfg(test)]
pub(crate) mod emulated;
#[cfg(test)]
mod tests;
