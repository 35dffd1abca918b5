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
//! | `h2d` / `d2h` | `copy` | host ↔ device | size | 2 × size |
//! | `gemm` | `gemm` | C = Aᵀ·B (m×n, depth k) | — | A + B read, C written |
//!
//! Timing: a sample is `n` operations enqueued back to back on the device's
//! stream(s) between two device events (`timer` = `cuda_event` /
//! `hip_event`); the spine's sampler picks `n` so a sample lasts long enough
//! that launch overhead does not swamp small copies, and stores it in
//! `iterations`. Variant `cold` flushes the L2 cache before every single
//! operation and times each one alone (events around one operation, summed
//! over the sample), as nvbench's cold mode does.

use std::cell::RefCell;
use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::{BenchConfig, Benchmark, Outcome, Sampler};
use crate::rows::Point;
use crate::units::format_bytes;

/// Benchmarks only GPU backends implement (`memcpy` and `gemm` are shared
/// with the CPU backend).
pub const GPU_ONLY_BENCHES: [&str; 3] = ["memcpy-peer", "h2d", "d2h"];
/// Every benchmark a GPU backend implements.
pub const GPU_BENCHES: [&str; 5] = ["memcpy", "memcpy-peer", "h2d", "d2h", "gemm"];
/// GEMM element types a GPU backend may offer (`fp8` is E4M3).
pub const GPU_DTYPES: [&str; 5] = ["f32", "tf32", "f16", "bf16", "fp8"];
/// Device-copy methods: the DMA copy engine, or a copy kernel on the SMs/CUs.
pub const COPY_METHODS: [&str; 2] = ["copy_engine", "sm_kernel"];

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
    /// Device → device by a copy kernel on the SMs/CUs.
    KernelCopy { dst: DevBuf, src: DevBuf },
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

/// The element type of C for a GEMM of `dtype`, the same on every backend:
/// the input type, except f32 for `tf32` and bf16 for `fp8`.
pub fn gemm_out_dtype(dtype: &str) -> &str {
    match dtype {
        "tf32" => "f32",
        "fp8" => "bf16",
        other => other,
    }
}

/// What is known about peer access from one GPU to another.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PeerAccess {
    /// Peer access is enabled: copies go GPU to GPU over the fabric.
    Enabled,
    /// The driver says these GPUs cannot access each other; copies are
    /// staged by the driver (usually through host memory).
    Unsupported,
}

/// Facts about one device, for the manifest and reports.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GpuFacts {
    pub ordinal: usize,
    pub name: String,
    pub uuid: Option<String>,
    /// `sm_90` (CUDA) or `gfx942` (HIP).
    pub arch: Option<String>,
    pub memory_bytes: Option<u64>,
    /// SMs (CUDA) or compute units (HIP).
    pub multiprocessors: Option<u32>,
    pub l2_bytes: Option<u64>,
    pub pci_bus_id: Option<String>,
    /// Anything else the backend reads (clocks, power limit, partition mode).
    #[serde(default)]
    pub extra: std::collections::BTreeMap<String, String>,
}

/// What a backend found: its devices, and `peers[a][b]`, peer access from
/// GPU a to GPU b.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    pub facts: Vec<GpuFacts>,
    pub peers: Vec<Vec<PeerAccess>>,
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
    /// Whether `method` (a [`COPY_METHODS`] entry) can run here, or why not.
    fn copy_method(&mut self, device: usize, method: &str) -> Result<(), String>;
    /// The library call that will run a GEMM of `dtype`, or why none can.
    fn gemm_method(&self, device: usize, dtype: &str) -> Result<String, String>;
    /// Prepare a GEMM (C = Aᵀ·B; A is m×k and B n×k, both k-contiguous; C
    /// column-major m×n).
    fn gemm_plan(&mut self, device: usize, dtype: &str, m: u64, n: u64, k: u64) -> Result<GemmPlan, String>;
    /// Enqueue `n` repetitions of each lane's operation, every lane on its
    /// own stream of `device`, all started by one event and joined by
    /// another; return the seconds between the two events.
    fn time(&mut self, device: usize, lanes: &[Op], n: u64) -> Result<f64, String>;
}

/// A GPU API shared by the benchmarks of one backend.
pub type SharedApi = Rc<RefCell<dyn GpuApi>>;

/// Which GPU benchmark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Memcpy,
    MemcpyPeer,
    H2D,
    D2H,
    Gemm,
}

impl Kind {
    pub fn parse(name: &str) -> Option<Kind> {
        Some(match name {
            "memcpy" => Kind::Memcpy,
            "memcpy-peer" => Kind::MemcpyPeer,
            "h2d" => Kind::H2D,
            "d2h" => Kind::D2H,
            "gemm" => Kind::Gemm,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::Memcpy => "memcpy",
            Kind::MemcpyPeer => "memcpy-peer",
            Kind::H2D => "h2d",
            Kind::D2H => "d2h",
            Kind::Gemm => "gemm",
        }
    }
}

/// The benchmarks among `names` that a GPU backend runs on `device`.
pub fn benchmarks(api: &SharedApi, names: &[String], device: usize) -> Vec<Box<dyn Benchmark>> {
    names
        .iter()
        .filter_map(|n| Kind::parse(n))
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

/// The byte pattern every copy benchmark writes and checks: a short or
/// misplaced copy cannot reproduce it.
pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| ((i.wrapping_mul(31) ^ (i >> 12)) as u8).wrapping_add(seed)).collect()
}

fn check(what: &str, got: &[u8], want: &[u8]) -> Result<(), String> {
    match got.iter().zip(want).position(|(a, b)| a != b) {
        None if got.len() == want.len() => Ok(()),
        None => Err(format!("{what}: {} bytes read back, expected {}", got.len(), want.len())),
        Some(i) => Err(format!("{what}: byte {i} is {:#04x}, expected {:#04x}", got[i], want[i])),
    }
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
    fn measure(&mut self, sampler: &Sampler, lanes: &[Op], cold: bool) -> Result<super::Measurement, String> {
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
            if !cold {
                return api.time(device, lanes, n);
            }
            let mut total = 0.0;
            for _ in 0..n {
                api.flush_l2(device)?;
                total += api.time(device, lanes, 1)?;
            }
            Ok(total)
        })
    }

    fn run_copy(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let Some(size) = p.size_bytes.filter(|&s| s > 0) else {
            return Outcome::Failed("copy point without a size".into());
        };
        let Ok(len) = usize::try_from(size) else {
            return Outcome::Skipped(format!("{size} bytes do not fit this machine's address space"));
        };
        let method = p.method.as_deref().unwrap_or("copy_engine");
        if self.kind == Kind::Memcpy {
            if let Err(why) = self.api.borrow_mut().copy_method(self.device, method) {
                return Outcome::Skipped(why);
            }
        }
        let peer = match (self.kind, p.peer.as_deref().and_then(parse_pair)) {
            (Kind::MemcpyPeer, Some((a, b))) => Some((a, b)),
            (Kind::MemcpyPeer, None) => {
                let found = self.api.borrow().devices().len();
                return Outcome::Skipped(format!("memcpy-peer needs a second GPU; {found} GPU(s) found"));
            }
            _ => None,
        };
        let bidir = p.op == "copy_bidir";
        let devices: Vec<usize> = match (self.kind, peer) {
            (Kind::Memcpy, _) => vec![self.device, self.device],
            (Kind::MemcpyPeer, Some((a, b))) if bidir => vec![a, b, b, a],
            (Kind::MemcpyPeer, Some((a, b))) => vec![a, b],
            _ => vec![self.device],
        };
        let bufs = match self.buffers(size, &devices) {
            Ok(b) => b,
            Err(o) => return o,
        };
        let src_data = pattern(len, point_seed(p));
        let host_bytes = if matches!(self.kind, Kind::H2D | Kind::D2H) { Some(size) } else { None };
        // Host memory for h2d/d2h: pinned from the driver, or pageable from
        // the Rust allocator, placed on a page boundary.
        let pinned = p.variant.as_deref() == Some("pinned");
        let mut pageable: Option<super::AlignedBuf<u8>> = None;
        let mut pinned_ptr: Option<*mut u8> = None;
        if let Some(bytes) = host_bytes {
            if pinned {
                match self.api.borrow_mut().alloc_pinned(bytes) {
                    Ok(ptr) => pinned_ptr = Some(ptr),
                    Err(e) => return Outcome::Skipped(format!("could not pin {}: {e}", format_bytes(bytes))),
                }
            } else {
                if let Some(why) = super::memory_check(bytes) {
                    return Outcome::Skipped(why);
                }
                match super::AlignedBuf::new(len, 0, 0u8) {
                    Ok(b) => pageable = Some(b),
                    Err(e) => return Outcome::Skipped(e),
                }
            }
        }
        let host: Option<&mut [u8]> = match (pinned_ptr, pageable.as_mut()) {
            (Some(ptr), _) => Some(unsafe { std::slice::from_raw_parts_mut(ptr, len) }),
            (None, Some(b)) => Some(b.as_mut_slice()),
            _ => None,
        };
        let result = (|| -> Result<super::Measurement, String> {
            let mut api = self.api.borrow_mut();
            let zeros = vec![0u8; len];
            let lanes: Vec<Op> = match self.kind {
                Kind::Memcpy => {
                    api.upload(bufs[0], &src_data)?;
                    api.upload(bufs[1], &zeros)?;
                    if method == "sm_kernel" {
                        vec![Op::KernelCopy { dst: bufs[1], src: bufs[0] }]
                    } else {
                        vec![Op::CopyEngine { dst: bufs[1], src: bufs[0] }]
                    }
                }
                Kind::MemcpyPeer => {
                    api.upload(bufs[0], &src_data)?;
                    api.upload(bufs[1], &zeros)?;
                    let mut l = vec![Op::Peer { dst: bufs[1], src: bufs[0] }];
                    if bidir {
                        api.upload(bufs[2], &src_data)?;
                        api.upload(bufs[3], &zeros)?;
                        l.push(Op::Peer { dst: bufs[3], src: bufs[2] });
                    }
                    l
                }
                Kind::H2D => {
                    let h = host.expect("host buffer allocated for h2d");
                    h.copy_from_slice(&src_data);
                    api.upload(bufs[0], &zeros)?;
                    vec![Op::HostToDevice { dst: bufs[0], src: h.as_ptr() }]
                }
                Kind::D2H => {
                    let h = host.expect("host buffer allocated for d2h");
                    h.fill(0);
                    api.upload(bufs[0], &src_data)?;
                    vec![Op::DeviceToHost { dst: h.as_mut_ptr(), src: bufs[0] }]
                }
                Kind::Gemm => unreachable!("gemm has its own path"),
            };
            drop(api);
            let m = self.measure(sampler, &lanes, p.variant.as_deref() == Some("cold"))?;
            // Validate every destination against the source pattern.
            let mut api = self.api.borrow_mut();
            let mut got = vec![0u8; len];
            for op in &lanes {
                match *op {
                    Op::CopyEngine { dst, .. }
                    | Op::KernelCopy { dst, .. }
                    | Op::Peer { dst, .. }
                    | Op::HostToDevice { dst, .. } => {
                        api.download(dst, &mut got)?;
                        check(&format!("GPU {} destination after the copy", dst.device), &got, &src_data)?;
                    }
                    Op::DeviceToHost { dst, .. } => {
                        let h = unsafe { std::slice::from_raw_parts(dst, len) };
                        check("host destination after the copy", h, &src_data)?;
                    }
                    Op::Gemm { .. } => {}
                }
            }
            Ok(m)
        })();
        if let Some(ptr) = pinned_ptr {
            self.api.borrow_mut().free_pinned(ptr);
        }
        if !matches!(self.kind, Kind::Memcpy | Kind::MemcpyPeer) {
            self.release(); // h2d/d2h: one device buffer, not worth keeping
        }
        match result {
            Ok(m) => Outcome::Measured(m),
            Err(e) => Outcome::Failed(e),
        }
    }

    fn run_gemm(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let (Some(m), Some(n), Some(k), Some(dtype)) = (p.m, p.n, p.k, p.dtype.as_deref()) else {
            return Outcome::Failed("gemm point without m, n, k and dtype".into());
        };
        let plan = match self.api.borrow_mut().gemm_plan(self.device, dtype, m, n, k) {
            Ok(plan) => plan,
            Err(why) => return Outcome::Skipped(why),
        };
        let (in_size, out_size) = (dtype_bytes(dtype), dtype_bytes(gemm_out_dtype(dtype)));
        self.release();
        let d = self.device;
        let bufs = match self.alloc_checked(&[(d, m * k * in_size), (d, n * k * in_size), (d, m * n * out_size)]) {
            Ok(b) => b,
            Err(o) => return o,
        };
        let result = (|| -> Result<super::Measurement, String> {
            // Random normal inputs (never zeros), rounded to the dtype on the
            // host; the reference uses the rounded values.
            let a = normal_values(m * k, 1 + point_seed(p) as u64);
            let b = normal_values(n * k, 1001 + point_seed(p) as u64);
            let (a_bytes, a_vals) = encode(dtype, &a)?;
            let (b_bytes, b_vals) = encode(dtype, &b)?;
            {
                let mut api = self.api.borrow_mut();
                api.upload(bufs[0], &a_bytes)?;
                api.upload(bufs[1], &b_bytes)?;
            }
            let lanes = [Op::Gemm { plan: plan.id, a: bufs[0], b: bufs[1], c: bufs[2] }];
            let meas = self.measure(sampler, &lanes, p.variant.as_deref() == Some("cold"))?;
            let mut c = vec![0u8; (m * n * out_size) as usize];
            self.api.borrow_mut().download(bufs[2], &mut c)?;
            check_gemm(dtype, gemm_out_dtype(dtype), &a_vals, &b_vals, &c, m, n, k)?;
            Ok(meas)
        })();
        let mut api = self.api.borrow_mut();
        bufs.into_iter().for_each(|b| api.free(b));
        match result {
            Ok(m) => Outcome::Measured(m),
            Err(e) => Outcome::Failed(e),
        }
    }
}

/// A per-point pattern offset, so a stale buffer from the previous point
/// cannot pass validation.
fn point_seed(p: &Point) -> u8 {
    (p.size_bytes.unwrap_or(0).trailing_zeros() as u8).wrapping_mul(7).wrapping_add(p.m.unwrap_or(0) as u8)
}

/// `"0->1"` → (0, 1).
fn parse_pair(text: &str) -> Option<(usize, usize)> {
    let (a, b) = text.split_once("->")?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// Bytes per element of a GEMM dtype.
pub fn dtype_bytes(dtype: &str) -> u64 {
    match dtype {
        "f64" => 8,
        "f32" | "tf32" => 4,
        "f16" | "bf16" => 2,
        _ => 1, // fp8
    }
}

/// Deterministic N(0, 1) values (xorshift + Box–Muller).
pub fn normal_values(count: u64, seed: u64) -> Vec<f32> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        ((s >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    };
    let mut out = Vec::with_capacity(count as usize);
    while (out.len() as u64) < count {
        let (u1, u2) = (next(), next());
        let r = (-2.0 * u1.ln()).sqrt();
        let t = 2.0 * std::f64::consts::PI * u2;
        out.push((r * t.cos()) as f32);
        if (out.len() as u64) < count {
            out.push((r * t.sin()) as f32);
        }
    }
    out
}

/// f32 → FP8 E4M3 (OCP "fn" variant: no infinities, max 448), round to
/// nearest even, saturating.
pub fn f32_to_e4m3(x: f32) -> u8 {
    let sign = if x.is_sign_negative() { 0x80u8 } else { 0 };
    let a = x.abs();
    if a.is_nan() {
        return 0x7f;
    }
    if a >= 448.0 {
        return sign | 0x7e;
    }
    // Smallest subnormal is 2^-9; values are multiples of 2^(e-3).
    let e = if a < 2f32.powi(-6) { -6 } else { a.log2().floor() as i32 };
    let quantum = 2f32.powi(e - 3);
    let q = (a / quantum).round_ties_even() * quantum;
    // Rounding may carry into the next binade; re-derive the fields.
    if q == 0.0 {
        return sign;
    }
    let e2 = if q < 2f32.powi(-6) { -7 } else { q.log2().floor() as i32 };
    if e2 < -6 {
        let mant = (q / 2f32.powi(-9)) as u8;
        sign | mant
    } else {
        let mant = ((q / 2f32.powi(e2) - 1.0) * 8.0).round() as u8;
        sign | (((e2 + 7) as u8) << 3) | (mant & 7)
    }
}

/// FP8 E4M3 → f32.
pub fn e4m3_to_f32(b: u8) -> f32 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let e = ((b >> 3) & 0xf) as i32;
    let m = (b & 7) as f32;
    if e == 0xf && b & 7 == 7 {
        return f32::NAN;
    }
    sign * if e == 0 { m / 8.0 * 2f32.powi(-6) } else { (1.0 + m / 8.0) * 2f32.powi(e - 7) }
}

/// Host values → device bytes of `dtype`, and the values the device sees.
fn encode(dtype: &str, v: &[f32]) -> Result<(Vec<u8>, Vec<f32>), String> {
    Ok(match dtype {
        "f32" | "tf32" => (v.iter().flat_map(|x| x.to_le_bytes()).collect(), v.to_vec()),
        "f16" => {
            let h: Vec<half::f16> = v.iter().map(|&x| half::f16::from_f32(x)).collect();
            (h.iter().flat_map(|x| x.to_le_bytes()).collect(), h.iter().map(|x| x.to_f32()).collect())
        }
        "bf16" => {
            let h: Vec<half::bf16> = v.iter().map(|&x| half::bf16::from_f32(x)).collect();
            (h.iter().flat_map(|x| x.to_le_bytes()).collect(), h.iter().map(|x| x.to_f32()).collect())
        }
        "fp8" => {
            let q: Vec<u8> = v.iter().map(|&x| f32_to_e4m3(x)).collect();
            let vals = q.iter().map(|&b| e4m3_to_f32(b)).collect();
            (q, vals)
        }
        other => return Err(format!("no GPU encoding for dtype `{other}`")),
    })
}

fn decode(dtype: &str, bytes: &[u8], i: usize) -> f64 {
    match dtype {
        "f16" => half::f16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
        "bf16" => half::bf16::from_le_bytes([bytes[2 * i], bytes[2 * i + 1]]).to_f64(),
        _ => f32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes")) as f64,
    }
}

/// Unit roundoff of a dtype's significand.
fn eps(dtype: &str) -> f64 {
    match dtype {
        "f64" => f64::EPSILON,
        "f32" => f32::EPSILON as f64,
        "tf32" => 2f64.powi(-10),
        "f16" => 2f64.powi(-10),
        "bf16" => 2f64.powi(-7),
        _ => 2f64.powi(-3),
    }
}

/// Check 32 spread entries of C against an f64 reference computed from the
/// values the device was given. The bound scales with Σ|a·b| (accumulation
/// in the compute type; TF32 also rounds inputs) plus the output rounding,
/// which is far below |c| ≈ √k for N(0, 1) inputs: a zero, stale or
/// transposed C fails.
#[allow(clippy::too_many_arguments)]
pub fn check_gemm(
    dtype: &str,
    out: &str,
    a: &[f32],
    b: &[f32],
    c: &[u8],
    m: u64,
    n: u64,
    k: u64,
) -> Result<(), String> {
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let acc = match dtype {
        "tf32" => eps("tf32"),
        _ => 16.0 * eps("f32"),
    };
    for s in 0..32usize {
        let i = (s * 7919 + 13) % m;
        let j = (s * 104_729 + 7) % n;
        let (mut r, mut mag) = (0.0f64, 0.0f64);
        for l in 0..k {
            let p = a[i * k + l] as f64 * b[j * k + l] as f64;
            r += p;
            mag += p.abs();
        }
        let got = decode(out, c, i + j * m);
        let tol = acc * mag + 2.0 * eps(out) * r.abs() + 1e-6;
        if !(got - r).abs().le(&tol) {
            return Err(format!(
                "C[{i},{j}] = {got:.6e}, reference {r:.6e} (tolerance {tol:.2e}): the {dtype} GEMM result is wrong"
            ));
        }
    }
    Ok(())
}

impl Benchmark for GpuBench {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn timer(&self) -> &'static str {
        self.api.borrow().timer()
    }

    fn points(&self, cfg: &BenchConfig) -> Vec<Point> {
        let api = self.api.borrow();
        let d = self.device;
        let base = |op: &str, size: u64| Point {
            bench: self.kind.name().into(),
            op: op.into(),
            size_bytes: Some(size),
            bytes_copied: Some(size),
            bytes_moved: Some(2 * size),
            method: Some("copy_engine".into()),
            ..Point::default()
        };
        let mut out = Vec::new();
        match self.kind {
            Kind::Memcpy => {
                for &size in &cfg.memcpy_sizes {
                    for method in &cfg.gpu_copy_methods {
                        for cache in &cfg.gpu_cache_modes {
                            out.push(Point {
                                variant: Some(cache.clone()),
                                method: Some(method.clone()),
                                ..base("copy", size)
                            });
                        }
                    }
                }
            }
            Kind::MemcpyPeer => {
                let count = api.devices().len();
                if count < 2 {
                    // One point (without a pair) that records why the sweep cannot run.
                    return vec![base("copy", cfg.memcpy_sizes.first().copied().unwrap_or(0))];
                }
                for to in (0..count).filter(|&j| j != d) {
                    let access = match api.peer_access(d, to) {
                        PeerAccess::Enabled => "peer_access",
                        PeerAccess::Unsupported => "no_peer_access",
                    };
                    // One direction, then both: a sweep keeps its buffers.
                    for op in ["copy", "copy_bidir"] {
                        for &size in &cfg.memcpy_sizes {
                            let mut p = Point {
                                variant: Some(access.into()),
                                peer: Some(format!("{d}->{to}")),
                                ..base(op, size)
                            };
                            if op == "copy_bidir" {
                                p.bytes_copied = Some(2 * size);
                                p.bytes_moved = Some(4 * size);
                            }
                            out.push(p);
                        }
                    }
                }
            }
            Kind::H2D | Kind::D2H => {
                for &size in &cfg.memcpy_sizes {
                    for mem in ["pinned", "pageable"] {
                        out.push(Point { variant: Some(mem.into()), ..base("copy", size) });
                    }
                }
            }
            Kind::Gemm => {
                for &[m, n, k] in &cfg.gpu_gemm_shapes {
                    for dtype in &cfg.gpu_gemm_dtypes {
                        let (i, o) = (dtype_bytes(dtype), dtype_bytes(gemm_out_dtype(dtype)));
                        out.push(Point {
                            bench: "gemm".into(),
                            op: "gemm".into(),
                            variant: Some("warm".into()),
                            dtype: Some(dtype.clone()),
                            m: Some(m),
                            n: Some(n),
                            k: Some(k),
                            flops: Some(2.0 * m as f64 * n as f64 * k as f64),
                            bytes_moved: Some((m * k + n * k) * i + m * n * o),
                            method: Some(api.gemm_method(d, dtype).unwrap_or_else(|_| "none".into())),
                            ..Point::default()
                        });
                    }
                }
            }
        }
        out
    }

    fn run(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        // cudarc panics when a driver library lacks a symbol it binds (an old
        // driver, a partial install): that point fails with the message, and
        // the run goes on.
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match self.kind {
            Kind::Gemm => self.run_gemm(p, sampler),
            _ => self.run_copy(p, sampler),
        }));
        run.unwrap_or_else(|e| Outcome::Failed(format!("the GPU library panicked: {}", crate::backend::panic_text(&e))))
    }
}

#[cfg(test)]
pub(crate) mod emulated;

#[cfg(test)]
mod tests {
    use super::emulated::Emulated;
    use super::*;
    use crate::bench::{runner, RowMeta, RowSink, StopRule};
    use crate::rows::{Row, Status};

    fn cfg() -> BenchConfig {
        let mut c = BenchConfig::preset(crate::bench::Preset::Quick);
        c.memcpy_sizes = vec![4096, 1 << 16];
        c.gpu_cache_modes = vec!["warm".into(), "cold".into()];
        c.gpu_gemm_shapes = vec![[32, 16, 48]];
        c.gpu_gemm_dtypes = GPU_DTYPES.iter().map(|s| s.to_string()).collect();
        c
    }

    fn sampler() -> Sampler {
        Sampler::new(StopRule {
            warmup_seconds: 0.0,
            min_samples: 3,
            min_seconds: 0.0,
            max_seconds: 0.05,
            target_rsd: 0.5,
            sample_seconds: 0.0001,
            max_samples: 5,
        })
    }

    fn api(devices: usize) -> (Rc<RefCell<Emulated>>, SharedApi) {
        let e = Rc::new(RefCell::new(Emulated::new(devices)));
        let shared: SharedApi = e.clone();
        (e, shared)
    }

    struct Sink(Vec<Row>);
    impl RowSink for Sink {
        fn write_point(&mut self, rows: Vec<Row>) -> crate::Result<()> {
            self.0.extend(rows);
            Ok(())
        }
    }

    /// Every GPU benchmark through the real runner: rows, accounting, validation.
    fn run_all(shared: &SharedApi, names: &[&str], device: usize) -> Vec<Row> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut benches = benchmarks(shared, &names, device);
        let meta =
            RowMeta { run_id: "t".into(), backend: "emulated".into(), device: "e0".into(), host: "h".into(), rank: 0 };
        let mut c = cfg();
        c.stop = sampler().rule;
        let mut sink = Sink(Vec::new());
        runner::run_benchmarks(&mut benches, &c, &meta, 0, &mut sink, &indicatif::ProgressBar::hidden()).unwrap();
        sink.0
    }

    #[test]
    fn copies_count_bytes_once_and_read_plus_written() {
        let (_, shared) = api(2);
        let rows = run_all(&shared, &["memcpy", "memcpy-peer", "h2d", "d2h"], 0);
        assert!(
            rows.iter().all(|r| r.status == Status::Measured),
            "{:?}",
            rows.iter().find(|r| r.status != Status::Measured)
        );
        for r in &rows {
            let (size, p) = (r.params.size_bytes.unwrap(), &r.params);
            let once = if p.op == "copy_bidir" { 2 * size } else { size };
            assert_eq!(p.bytes_copied, Some(once), "{}", p.label());
            assert_eq!(p.bytes_moved, Some(2 * once), "{}", p.label());
            assert_eq!(r.timer.as_deref(), Some("steady_clock"));
            assert!(r.iterations.unwrap() >= 1);
        }
        let benches: std::collections::BTreeSet<_> = rows.iter().map(|r| r.params.bench.as_str()).collect();
        assert_eq!(benches.into_iter().collect::<Vec<_>>(), ["d2h", "h2d", "memcpy", "memcpy-peer"]);
        // memcpy: 2 sizes × 2 methods × 2 cache modes; peer: 2 sizes × 2 directions.
        let points = |b: &str| {
            rows.iter()
                .filter(|r| r.params.bench == b)
                .map(|r| r.point)
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        };
        assert_eq!((points("memcpy"), points("memcpy-peer"), points("h2d")), (8, 4, 4));
        assert!(rows
            .iter()
            .any(|r| r.params.peer.as_deref() == Some("0->1") && r.params.variant.as_deref() == Some("peer_access")));
        assert!(rows.iter().any(|r| r.params.variant.as_deref() == Some("pageable")));
    }

    #[test]
    fn a_broken_copy_fails_validation_instead_of_reporting_a_time() {
        let (e, shared) = api(1);
        e.borrow_mut().broken = true;
        let rows = run_all(&shared, &["memcpy"], 0);
        assert!(!rows.is_empty() && rows.iter().all(|r| r.status == Status::Failed));
        assert!(rows[0].note.as_deref().unwrap().contains("expected"), "{:?}", rows[0].note);
    }

    #[test]
    fn one_gpu_skips_peer_copies_with_the_reason() {
        let (_, shared) = api(1);
        let rows = run_all(&shared, &["memcpy-peer"], 0);
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0].status, Status::Skipped);
        assert!(rows[0].note.as_deref().unwrap().contains("1 GPU(s) found"), "{:?}", rows[0].note);
    }

    #[test]
    fn too_little_device_memory_and_missing_methods_are_skips() {
        let (e, shared) = api(1);
        e.borrow_mut().free_bytes = 10_000;
        e.borrow_mut().no_kernel_copy = true;
        let rows = run_all(&shared, &["memcpy"], 0);
        let note = |size: u64, m: &str| {
            rows.iter()
                .find(|r| r.params.size_bytes == Some(size) && r.params.method.as_deref() == Some(m))
                .unwrap()
                .clone()
        };
        assert_eq!(note(4096, "copy_engine").status, Status::Measured);
        let big = note(1 << 16, "copy_engine");
        assert!(big.status == Status::Skipped && big.note.unwrap().contains("free"));
        let kernel = note(4096, "sm_kernel");
        assert!(kernel.status == Status::Skipped && kernel.note.unwrap().contains("no copy kernel"));
    }

    #[test]
    fn cold_mode_flushes_before_every_operation() {
        let (e, shared) = api(1);
        let mut c = cfg();
        c.gpu_copy_methods = vec!["copy_engine".into()];
        c.gpu_cache_modes = vec!["cold".into()];
        c.memcpy_sizes = vec![4096];
        let mut b = benchmarks(&shared, &["memcpy".into()], 0).pop().unwrap();
        let p = &b.points(&c)[0];
        let Outcome::Measured(m) = b.run(p, &sampler()) else { panic!("cold memcpy did not measure") };
        let timed_ops: u64 = m.samples.iter().map(|s| s.iterations).sum();
        // Warm-up calls flush too, so at least one flush per timed operation.
        assert!(e.borrow().flushes >= timed_ops, "{} flushes for {timed_ops} operations", e.borrow().flushes);
    }

    #[test]
    fn gemm_rows_carry_flops_method_and_validate() {
        let (_, shared) = api(1);
        let rows = run_all(&shared, &["gemm"], 0);
        assert!(
            rows.iter().all(|r| r.status == Status::Measured),
            "{:?}",
            rows.iter().find(|r| r.status != Status::Measured)
        );
        let fp8 = rows.iter().find(|r| r.params.dtype.as_deref() == Some("fp8")).unwrap();
        assert_eq!(fp8.params.method.as_deref(), Some("emulated_lt"));
        assert_eq!(fp8.params.flops, Some(2.0 * 32.0 * 16.0 * 48.0));
        // A + B in one byte each, C in bf16.
        assert_eq!(fp8.params.bytes_moved, Some(32 * 48 + 16 * 48 + 32 * 16 * 2));
    }

    /// Emulated-device rows for every GPU benchmark, written to a real
    /// archive under the `cuda` backend name (the device name says it is
    /// emulated). The numbers are host copies, never a GPU's.
    fn write_emulated_run(archive: &crate::archive::Archive, label: &str) -> crate::archive::RunDir {
        use crate::archive::manifest::BackendInfo;
        use crate::archive::{Manifest, RunStatus};
        let device = "GPU 0: Emulated GPU 0 (host memory, not a GPU measurement)";
        let (e, shared) = api(2);
        let facts = serde_json::json!({"devices": e.borrow().inv.facts, "peer_access": [["unsupported", "enabled"], ["enabled", "unsupported"]]});
        let backends = vec![BackendInfo {
            name: "cuda".into(),
            probe: crate::backend::Probe::Available { devices: vec![device.into()] },
            facts: Some(facts),
        }];
        let run_id = crate::archive::manifest::new_run_id(label);
        let mut c = cfg();
        c.stop = sampler().rule;
        c.memcpy_sizes = vec![4096, 1 << 14, 1 << 16, 1 << 18];
        let config = serde_json::to_value(&c).unwrap();
        let mut m = Manifest::begin(&run_id, "native", config, backends);
        m.label = Some(label.into());
        let mut writer = archive.create_run(m).unwrap();
        let names: Vec<String> = GPU_BENCHES.iter().map(|s| s.to_string()).collect();
        let mut benches = benchmarks(&shared, &names, 0);
        let meta = RowMeta { run_id, backend: "cuda".into(), device: device.into(), host: "h".into(), rank: 0 };
        runner::run_benchmarks(&mut benches, &c, &meta, 0, &mut writer, &indicatif::ProgressBar::hidden()).unwrap();
        writer
            .finish(
                RunStatus::Complete,
                Some("emulated GPU: a test fixture of the GPU report's shape, not a measurement".into()),
            )
            .unwrap()
    }

    /// Writes the committed GPU-shaped fixture run that the golden GPU
    /// report test renders. Not a test: run it on purpose with
    /// `cargo test --lib write_gpu_fixture -- --ignored`, delete the old
    /// fixture run, then re-bless the golden files.
    #[test]
    #[ignore = "writes tests/fixtures/archive; run on purpose"]
    fn write_gpu_fixture() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
        write_emulated_run(&crate::archive::Archive::new(root), "emulated-gpu");
    }

    /// The GPU report path end to end: emulated rows, read back, analysed
    /// and rendered. Only the report's structure is checked.
    #[test]
    fn gpu_rows_render_the_gpu_report_sections() {
        let tmp = tempfile::tempdir().unwrap();
        let run = write_emulated_run(&crate::archive::Archive::new(tmp.path()), "gpu-report");
        let rep = crate::report::build(&run, tmp.path(), &crate::report::ReportOptions::default()).unwrap();
        let md = crate::report::render_markdown(&crate::report::engine(None).unwrap(), &rep.context).unwrap();
        for want in [
            "## GPUs",
            "### Device memcpy",
            "### Peer memcpy",
            "### Host ↔ device",
            "### GPU GEMM",
            "Emulated GPU 1",
            "GPU 0: - P2P",
            "copy\\_bidir peer\\_access, copy\\_engine, GPU 0→1",
        ] {
            assert!(md.contains(want), "no `{want}` in:\n{md}");
        }
        assert!(!md.contains("## Host memcpy"), "GPU rows must not land in the host section");
        if std::env::var_os("BENCHBOOK_DUMP_REPORT").is_some() {
            println!("{md}");
        }
        let charts: Vec<&str> = rep.charts.iter().map(|c| c.name()).collect();
        for want in ["gpu-memcpy", "memcpy-peer", "h2d-d2h", "gpu-gemm"] {
            assert!(charts.contains(&want), "{charts:?}");
        }
    }

    #[test]
    fn a_broken_gemm_fails() {
        let (e, shared) = api(1);
        e.borrow_mut().broken_gemm = true;
        let rows = run_all(&shared, &["gemm"], 0);
        assert!(rows.iter().all(|r| r.status == Status::Failed), "{:?}", rows[0]);
        assert!(rows[0].note.as_deref().unwrap().contains("GEMM result is wrong"));
    }

    #[test]
    fn e4m3_round_trips_its_own_values() {
        for b in 0u8..=255 {
            let v = e4m3_to_f32(b);
            if v.is_nan() {
                continue;
            }
            let back = f32_to_e4m3(v);
            assert_eq!(e4m3_to_f32(back), v, "byte {b:#04x} → {v} → {back:#04x}");
        }
        assert_eq!(e4m3_to_f32(f32_to_e4m3(1000.0)), 448.0);
        // 0.3 lies between 0.28125 and 0.3125 (quantum 2^-5 in [0.25, 0.5)).
        assert_eq!(e4m3_to_f32(f32_to_e4m3(0.3)), 0.3125);
        // Below the smallest subnormal step (2^-9) rounds to it or to zero.
        assert_eq!(e4m3_to_f32(f32_to_e4m3(-0.001)), -0.001953125);
    }

    #[test]
    fn normal_values_look_normal() {
        let v = normal_values(100_000, 3);
        let mean = v.iter().map(|&x| x as f64).sum::<f64>() / v.len() as f64;
        let var = v.iter().map(|&x| (x as f64 - mean).powi(2)).sum::<f64>() / v.len() as f64;
        assert!(mean.abs() < 0.02 && (var - 1.0).abs() < 0.03, "mean {mean} var {var}");
        assert!(v.iter().all(|x| *x != 0.0));
    }

    #[test]
    fn gemm_check_rejects_zeros_and_transposes() {
        let (m, n, k) = (8u64, 6u64, 64u64);
        let a = normal_values(m * k, 1);
        let b = normal_values(n * k, 2);
        let mut c = vec![0f32; (m * n) as usize];
        for i in 0..m as usize {
            for j in 0..n as usize {
                c[i + j * m as usize] = (0..k as usize).map(|l| a[i * k as usize + l] * b[j * k as usize + l]).sum();
            }
        }
        let bytes = |c: &[f32]| c.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        check_gemm("f32", "f32", &a, &b, &bytes(&c), m, n, k).unwrap();
        let zeros = vec![0f32; c.len()];
        assert!(check_gemm("f32", "f32", &a, &b, &bytes(&zeros), m, n, k).is_err());
        // Row-major instead of column-major C.
        let mut t = c.clone();
        for i in 0..m as usize {
            for j in 0..n as usize {
                t[i * n as usize + j] = c[i + j * m as usize];
            }
        }
        assert!(check_gemm("f32", "f32", &a, &b, &bytes(&t), m, n, k).is_err());
    }
}
