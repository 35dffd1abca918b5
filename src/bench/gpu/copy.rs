//! Device, peer and host ↔ device copies: buffers, the lanes a point
//! enqueues, and validation of every destination against the source
//! pattern (a short, misplaced or missing copy fails its point).

use super::{point_seed, DevBuf, GpuBench, Kind, Launch, Op, PeerAccess};
use crate::bench::{AlignedBuf, Measurement, Outcome, Sampler};
use crate::vocab::rows::Point;
use crate::vocab::units::format_bytes;

/// The `sm_kernel` copy kernel, compiled at run time by NVRTC (CUDA) or
/// hipRTC (HIP): 16-byte vectors over a grid-stride loop, eight loads in
/// flight per thread before their stores, then the remaining vectors and
/// any tail bytes. Its destination may be a peer GPU's memory.
///
/// Why eight, and the default launch ([`CopyArgs::new`]): on an H200, one
/// load at a time left the kernel at 0.92× the copy engine; a CUDA C sweep
/// of 1, 2, 4 and 8 loads × 1–16 blocks of 256–1024 threads per SM
/// (`scripts/cuda_memcpy_reference.cu`, 2026-11-26) found 8 loads in 16
/// blocks of 1024 threads per SM fastest at 256 MiB and 1 GiB (0.977× and
/// 0.966× the copy engine), and 4 loads in 8 blocks of 256 at 0.92×.
pub const COPY_KERNEL: &str = r#"
extern "C" __global__ void benchbook_copy(const uint4* __restrict__ src, uint4* __restrict__ dst,
        unsigned long long n16, const unsigned char* __restrict__ s8, unsigned char* __restrict__ d8,
        unsigned long long from8, unsigned long long to8) {
    const unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned long long j = first;
    for (; j + 7 * stride < n16; j += 8 * stride) {
        uint4 v[8];
#pragma unroll
        for (int u = 0; u < 8; u++) v[u] = src[j + u * stride];
#pragma unroll
        for (int u = 0; u < 8; u++) dst[j + u * stride] = v[u];
    }
    for (; j < n16; j += stride) dst[j] = src[j];
    for (unsigned long long t = from8 + first; t < to8; t += stride) d8[t] = s8[t];
}
"#;

/// The entry point of [`COPY_KERNEL`].
pub const COPY_KERNEL_NAME: &std::ffi::CStr = c"benchbook_copy";

/// The arguments of [`COPY_KERNEL`], in its parameter order: every one is
/// 8 bytes, so this is also the packed argument buffer HIP's `extra` takes.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CopyArgs {
    pub src: u64,
    pub dst: u64,
    pub n16: u64,
    pub s8: u64,
    pub d8: u64,
    pub from8: u64,
    pub to8: u64,
}

impl CopyArgs {
    /// The arguments and the launch that copy `src` into `dst` on a device
    /// of `units` SMs/CUs: the point's launch, or blocks of 1024 threads,
    /// one per 8192 vectors (eight per thread), up to 16 blocks per unit
    /// (the fastest shape of the sweep in [`COPY_KERNEL`]'s notes).
    pub fn new(dst: DevBuf, src: DevBuf, launch: Option<Launch>, units: u32) -> (CopyArgs, Launch) {
        let bytes = src.bytes.min(dst.bytes);
        let n16 = bytes / 16;
        let args = CopyArgs { src: src.ptr, dst: dst.ptr, n16, s8: src.ptr, d8: dst.ptr, from8: n16 * 16, to8: bytes };
        let launch = launch
            .unwrap_or(Launch { grid: n16.div_ceil(8 * 1024).clamp(1, units.max(1) as u64 * 16) as u32, block: 1024 });
        (args, launch)
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

/// `"0->1"` → (0, 1).
fn parse_pair(text: &str) -> Option<(usize, usize)> {
    let (a, b) = text.split_once("->")?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

/// Source patterns kept across a sweep's rounds (a point's pattern depends
/// on its size only): writing 2 GiB of pattern on the host every round cost
/// more than the round's copies. At most [`Patterns::CAP`] bytes, and only
/// while the host has room for twice that.
#[derive(Default)]
pub(super) struct Patterns {
    kept: Vec<(usize, u8, std::rc::Rc<Vec<u8>>)>,
}

impl Patterns {
    const CAP: usize = 4 << 30;

    /// The pattern of `len` bytes with `seed`, and whether the cache keeps
    /// it (later rounds then find it written).
    fn get(&mut self, len: usize, seed: u8) -> (std::rc::Rc<Vec<u8>>, bool) {
        if let Some((_, _, p)) = self.kept.iter().find(|(l, s, _)| *l == len && *s == seed) {
            return (p.clone(), true);
        }
        let p = std::rc::Rc::new(pattern(len, seed));
        let total: usize = self.kept.iter().map(|k| k.0).sum::<usize>() + len;
        let keep = total <= Self::CAP && crate::bench::memory_check(2 * total as u64).is_none();
        if keep {
            self.kept.push((len, seed, p.clone()));
        }
        (p, keep)
    }
}

impl GpuBench {
    pub(super) fn run_copy(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let Some(size) = p.size_bytes.filter(|&s| s > 0) else {
            return Outcome::Failed("copy point without a size".into());
        };
        let Ok(len) = usize::try_from(size) else {
            return Outcome::Skipped(format!("{size} bytes do not fit this machine's address space"));
        };
        let method = p.method.as_deref().unwrap_or("copy_engine");
        if matches!(self.kind, Kind::Memcpy | Kind::MemcpyPeer) {
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
        // The peer-write kernel runs on GPU a and stores into GPU b's
        // memory: that needs b mapped into a (peer access).
        let launch = Launch::of(p);
        if let (Some((a, b)), "sm_kernel") = (peer, method) {
            if self.api.borrow().peer_access(a, b) != PeerAccess::Enabled {
                return Outcome::Skipped(format!(
                    "GPU {a} cannot address GPU {b}'s memory (no peer access), so a kernel on {a} cannot write it"
                ));
            }
        }
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
        // Writing a pattern the cache keeps is one-time work, not a round's.
        let start = std::time::Instant::now();
        let (src_data, kept) = self.patterns.borrow_mut().get(len, point_seed(p));
        if kept {
            self.setup += start.elapsed().as_secs_f64();
        }
        let host_bytes = if matches!(self.kind, Kind::H2D | Kind::D2H) { Some(size) } else { None };
        // Host memory for h2d/d2h: pinned from the driver, or pageable from
        // the Rust allocator, placed on a page boundary.
        let pinned = p.variant.as_deref() == Some("pinned");
        let mut pageable: Option<AlignedBuf<u8>> = None;
        let mut pinned_ptr: Option<*mut u8> = None;
        if let Some(bytes) = host_bytes {
            if pinned {
                match self.api.borrow_mut().alloc_pinned(bytes) {
                    Ok(ptr) => pinned_ptr = Some(ptr),
                    Err(e) => return Outcome::Skipped(format!("could not pin {}: {e}", format_bytes(bytes))),
                }
            } else {
                if let Some(why) = crate::bench::memory_check(bytes) {
                    return Outcome::Skipped(why);
                }
                match AlignedBuf::new(len, 0, 0u8) {
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
        let result = (|| -> Result<Measurement, String> {
            let mut api = self.api.borrow_mut();
            let zeros = vec![0u8; len];
            let lanes: Vec<Op> = match self.kind {
                Kind::Memcpy => {
                    api.upload(bufs[0], &src_data)?;
                    api.upload(bufs[1], &zeros)?;
                    if method == "sm_kernel" {
                        vec![Op::KernelCopy { dst: bufs[1], src: bufs[0], launch }]
                    } else {
                        vec![Op::CopyEngine { dst: bufs[1], src: bufs[0] }]
                    }
                }
                Kind::MemcpyPeer => {
                    api.upload(bufs[0], &src_data)?;
                    api.upload(bufs[1], &zeros)?;
                    let mut l = vec![if method == "sm_kernel" {
                        Op::KernelCopy { dst: bufs[1], src: bufs[0], launch }
                    } else {
                        Op::Peer { dst: bufs[1], src: bufs[0] }
                    }];
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
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_parse_and_checks_name_the_first_wrong_byte() {
        assert_eq!(parse_pair("0->1"), Some((0, 1)));
        assert_eq!(parse_pair(" 3 -> 12 "), Some((3, 12)));
        assert_eq!(parse_pair("0-1"), None);
        let want = pattern(64, 5);
        assert!(check("d", &want, &want).is_ok());
        let mut got = want.clone();
        got[9] ^= 1;
        assert!(check("d", &got, &want).unwrap_err().starts_with("d: byte 9 is"));
        assert!(check("d", &want[..63], &want).unwrap_err().contains("63 bytes read back, expected 64"));
        assert_ne!(pattern(64, 5), pattern(64, 6));
    }

    #[test]
    fn copy_kernel_arguments_cover_every_byte_once() {
        let buf = |ptr: u64, bytes: u64| DevBuf { device: 0, ptr, bytes };
        let (a, l) = CopyArgs::new(buf(0x2000, 100), buf(0x1000, 100), None, 132);
        // 6 vectors of 16 bytes, then bytes 96..100 one by one.
        assert_eq!((a.src, a.dst, a.n16, a.from8, a.to8), (0x1000, 0x2000, 6, 96, 100));
        assert_eq!(l, Launch { grid: 1, block: 1024 });
        let (_, l) = CopyArgs::new(buf(0, 1 << 30), buf(1 << 31, 1 << 30), None, 132);
        assert_eq!(l, Launch { grid: 132 * 16, block: 1024 }, "capped at 16 blocks per SM");
        let fixed = Launch { grid: 128, block: 1024 };
        assert_eq!(
            CopyArgs::new(buf(0, 64), buf(64, 32), Some(fixed), 132),
            (CopyArgs { src: 64, dst: 0, n16: 2, s8: 64, d8: 0, from8: 32, to8: 32 }, fixed)
        );
        assert_eq!(std::mem::size_of::<CopyArgs>(), 56);
    }
}
