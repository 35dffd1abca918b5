//! Host `memcpy`: one buffer copied into another by 1..N threads, each
//! thread copying its own contiguous chunk with the C library's memcpy.
//!
//! Byte counting: one operation *copies* `size` bytes (`bytes_copied`) and
//! *moves* `2 × size` bytes through memory (`bytes_moved`: read + written).
//! The seed scripts divide `size` by the time, i.e. bytes copied once.

use crate::vocab::benches::Bench;
use std::hint::black_box;

use super::team::{chunk, with_team};
use super::{place_anew, AlignedBuf, BenchConfig, Benchmark, Outcome, Sampler, SharedPtr};

/// The destination starts this many bytes past a page boundary; the source
/// starts on one. Recorded in `docs/schema.md` and the report's methodology.
pub const DST_OFFSET_BYTES: usize = 2048;
use crate::vocab::rows::Point;

/// The memcpy points for a size × thread sweep (shared with future backends).
pub fn points(cfg: &BenchConfig) -> Vec<Point> {
    let mut out = Vec::new();
    for &size in &cfg.memcpy_sizes {
        for &t in &cfg.threads {
            out.push(Point {
                bench: Bench::Memcpy.name().into(),
                op: "copy".into(),
                variant: Some("warm".into()),
                method: Some("libc_memcpy".into()),
                size_bytes: Some(size),
                threads: Some(t),
                bytes_copied: Some(size),
                bytes_moved: Some(2 * size),
                ..Point::default()
            });
        }
    }
    out
}

/// Byte i of the source: (31·i) xor (i / 4096), so that a short or
/// misplaced copy cannot reproduce it. 31·i mod 256 repeats every 4 KiB,
/// so page p is one of 256 pages (p mod 256), made once and copied in with
/// memcpy: byte by byte it took a tenth of a second at 256 MiB in a
/// release build, which every round of a large point paid, and half a
/// second at 64 MiB in a debug build (what Slurm's 60 s health-check limit
/// saw in the tests).
fn fill_pattern(src: &mut [u8]) {
    static PAGES: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    let pages = PAGES.get_or_init(|| {
        (0..256usize).flat_map(|page| (0..4096usize).map(move |j| j.wrapping_mul(31) as u8 ^ page as u8)).collect()
    });
    for (page, chunk) in src.chunks_mut(4096).enumerate() {
        let at = (page % 256) * 4096;
        chunk.copy_from_slice(&pages[at..at + chunk.len()]);
    }
}

/// Host memcpy on the CPU backend. Every step gets a fresh pair of buffers
/// (see [`place_anew`]).
#[derive(Default)]
pub struct CpuMemcpy {
    buffers: Option<(AlignedBuf<u8>, AlignedBuf<u8>)>,
}

impl Benchmark for CpuMemcpy {
    fn name(&self) -> &'static str {
        Bench::Memcpy.name()
    }

    fn points(&self, cfg: &BenchConfig) -> Vec<Point> {
        points(cfg)
    }

    fn run(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let (Some(size), Some(threads)) = (p.size_bytes, p.threads) else {
            return Outcome::Failed("memcpy point without size or threads".into());
        };
        let Ok(len) = usize::try_from(size) else {
            return Outcome::Skipped(format!("{size} bytes do not fit this machine's address space"));
        };
        let placed = place_anew(&mut self.buffers, 2 * size, || {
            Ok((AlignedBuf::new(len, 0, 0u8)?, AlignedBuf::new(len, DST_OFFSET_BYTES, 0u8)?))
        });
        if let Err(why) = placed {
            return Outcome::Skipped(why);
        }
        let (src, dst) = self.buffers.as_mut().expect("allocated above");
        let (src, dst) = (src.as_mut_slice(), dst.as_mut_slice());
        fill_pattern(src);
        // The destination is fresh, so already zero.
        let t = threads as usize;
        let s = SharedPtr(src.as_mut_ptr());
        let d = SharedPtr(dst.as_mut_ptr());
        let work = move |tid: usize, n: u64| {
            let r = chunk(len, t, tid, 64);
            for _ in 0..n {
                // black_box keeps the optimiser from merging repeated copies.
                let (sp, dp) = (black_box(s), black_box(d));
                unsafe { std::ptr::copy_nonoverlapping(sp.0.add(r.start), dp.0.add(r.start), r.len()) };
            }
        };
        let result = with_team(t, &work, |timed| sampler.measure(&mut |n| Ok(timed(n))));
        match result {
            Ok(m) if src == dst => Outcome::Measured(m),
            Ok(_) => Outcome::Failed("destination differs from source after the copy".into()),
            Err(e) => Outcome::Failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_pattern_is_the_bytewise_formula() {
        let mut v = vec![0u8; 3 * 4096 + 123];
        super::fill_pattern(&mut v);
        for (i, b) in v.iter().enumerate() {
            assert_eq!(*b, (i.wrapping_mul(31) ^ (i >> 12)) as u8, "byte {i}");
        }
    }
}
