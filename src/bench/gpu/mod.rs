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
//! | `h2d` / `d2h` | `copy` | host ↔ device | size | size (each byte crosses the link once) |
//! | `gemm` | `gemm` | C = A·B (m×n, depth k; layout in [`blas`]) | — | A + B read, C written |
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
//! Layout: [`api`] is the backend contract, this file the benchmark object;
//! [`points`] says which points a sweep has, `copy` measures and validates
//! the copies, `gemm` the GEMMs; element types live in [`super::dtype`].

use super::{BenchConfig, Benchmark, Measurement, Outcome, Sampler};
use crate::vocab::benches::Bench;
use crate::vocab::kinds::Dtype;
use crate::vocab::rows::Point;
use crate::vocab::units::format_bytes;

mod api;
pub mod blas;
mod copy;
mod gemm;
pub mod points;
pub mod timing;

pub use self::api::{DevBuf, GemmPlan, GemmSpec, GpuApi, Inventory, Op, SharedApi};
pub use self::copy::{pattern, CopyArgs, COPY_KERNEL, COPY_KERNEL_NAME};
pub use self::gemm::check_gemm;
pub use super::dtype::{e4m3_to_f32, f32_to_e4m3, normal_values};
pub use crate::vocab::facts::{GpuFacts, PeerAccess};
pub use crate::vocab::launch::Launch;

/// GEMM element types a GPU backend may offer (`fp8` is E4M3).
pub const GPU_DTYPES: [Dtype; 5] = [Dtype::F32, Dtype::Tf32, Dtype::F16, Dtype::Bf16, Dtype::Fp8];

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

/// The benchmarks among `names` that a GPU backend runs on `device`; GEMMs
/// time `gemm_algos` of the library's candidates ([`GpuApi::gemm_plan`]).
pub fn benchmarks(api: &SharedApi, names: &[Bench], device: usize, gemm_algos: u32) -> Vec<Box<dyn Benchmark>> {
    let patterns = std::rc::Rc::new(std::cell::RefCell::new(copy::Patterns::default()));
    names
        .iter()
        .filter_map(|b| Kind::of(*b))
        .map(|kind| {
            Box::new(GpuBench {
                api: api.clone(),
                kind,
                device,
                cache: None,
                ramped: false,
                gemm_algos: gemm_algos.max(1),
                gemm_plans: Vec::new(),
                gemm_inputs: gemm::InputCache::default(),
                patterns: patterns.clone(),
                setup: 0.0,
            }) as Box<dyn Benchmark>
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
    /// GEMM candidates to time per plan (`--gemm-algos`).
    gemm_algos: u32,
    /// GEMM plans kept across a point's rounds, with the algorithm chosen.
    gemm_plans: Vec<gemm::KeptPlan>,
    /// GEMM inputs kept on the device across a point's rounds.
    gemm_inputs: gemm::InputCache,
    /// Copy source patterns kept across rounds, shared by the device's
    /// copy benchmarks (h2d and d2h copy the same patterns).
    patterns: std::rc::Rc<std::cell::RefCell<copy::Patterns>>,
    /// Seconds of one-time work in the current step (clock ramp, choosing
    /// a GEMM algorithm), which its measurement reports.
    setup: f64,
}

impl Drop for GpuBench {
    fn drop(&mut self) {
        self.release();
        let mut api = self.api.borrow_mut();
        self.gemm_inputs.clear(&mut *api);
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
        self.ramp(lanes)?;
        let device = self.device;
        let mut api = self.api.borrow_mut();
        sampler.measure(&mut |n| {
            if cold {
                timing::time_cold(&mut *api, device, lanes, n)
            } else {
                api.time(device, lanes, n)
            }
        })
    }
}

impl GpuBench {
    /// Busy the GPU with `lanes` until its clocks have ramped, once per
    /// benchmark and device, before the first point's own warm-up.
    fn ramp(&mut self, lanes: &[Op]) -> Result<(), String> {
        if self.ramped {
            return Ok(());
        }
        let mut api = self.api.borrow_mut();
        let (ramp, start) = (api.ramp_seconds(), std::time::Instant::now());
        let mut n = 1;
        while start.elapsed().as_secs_f64() < ramp {
            let t = api.time(self.device, lanes, n)?;
            if t < 0.05 {
                n *= 2;
            }
        }
        self.ramped = true;
        self.setup += start.elapsed().as_secs_f64();
        Ok(())
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
        self.setup = 0.0;
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match self.kind {
            Kind::Gemm => self.run_gemm(p, sampler),
            _ => self.run_copy(p, sampler),
        }));
        match run {
            Ok(Outcome::Measured(mut m)) => {
                m.setup_seconds = self.setup;
                Outcome::Measured(m)
            }
            Ok(other) => other,
            Err(e) => Outcome::Failed(format!("the GPU library panicked: {}", crate::error::panic_text(&e))),
        }
    }
}

#[cfg(test)]
pub(crate) mod emulated;
#[cfg(test)]
mod tests;
