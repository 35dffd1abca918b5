//! STREAM-style kernels on `f64` arrays (Copy, Scale, Add, Triad), threaded
//! like STREAM's OpenMP loops: each thread owns a contiguous chunk.
//!
//! Byte counting follows BabelStream: `bytes_moved` = arrays touched × array
//! bytes, with weights Copy 2, Scale 2, Add 3, Triad 3. `bytes_copied` is the
//! bytes one operation writes (one array), the payload it produces.

use crate::vocab::benches::Bench;
use std::hint::black_box;

use super::team::{chunk, with_team};
use super::{place_anew, AlignedBuf, BenchConfig, Benchmark, Outcome, Sampler, SharedPtr};
use crate::vocab::rows::Point;

/// The scalar of Scale and Triad, as in BabelStream.
pub const SCALAR: f64 = 0.4;
/// Kernels and their BabelStream byte weights (arrays touched per element).
pub use crate::vocab::accounting::STREAM_KERNELS as KERNELS;

/// The stream points: array size × kernel × threads.
pub fn points(cfg: &BenchConfig) -> Vec<Point> {
    let mut out = Vec::new();
    for &array_bytes in &cfg.stream_sizes {
        let array_bytes = array_bytes / 8 * 8;
        for (op, weight) in KERNELS {
            for &t in &cfg.threads {
                out.push(Point {
                    bench: Bench::Stream.name().into(),
                    op: op.into(),
                    dtype: Some("f64".into()),
                    method: Some("rust_loop".into()),
                    size_bytes: Some(array_bytes),
                    threads: Some(t),
                    bytes_copied: Some(array_bytes),
                    bytes_moved: Some(weight * array_bytes),
                    flops: Some(
                        match op {
                            "copy" => 0.0,
                            "triad" => 2.0,
                            _ => 1.0,
                        } * (array_bytes / 8) as f64,
                    ),
                    ..Point::default()
                });
            }
        }
    }
    out
}

/// STREAM on the CPU backend.
#[derive(Default)]
pub struct CpuStream {
    arrays: Option<[AlignedBuf<f64>; 3]>,
}

fn kernel(op: &str, a: *mut f64, b: *mut f64, c: *mut f64, r: std::ops::Range<usize>) {
    // Slices over this thread's chunk only; chunks of different threads are
    // disjoint, so these &mut never alias across threads.
    let len = r.len();
    unsafe {
        let a = std::slice::from_raw_parts_mut(a.add(r.start), len);
        let b = std::slice::from_raw_parts_mut(b.add(r.start), len);
        let c = std::slice::from_raw_parts_mut(c.add(r.start), len);
        match op {
            "copy" => c.copy_from_slice(a),
            "scale" => b.iter_mut().zip(c.iter()).for_each(|(b, c)| *b = SCALAR * c),
            "add" => c.iter_mut().zip(a.iter().zip(b.iter())).for_each(|(c, (a, b))| *c = a + b),
            _ => a.iter_mut().zip(b.iter().zip(c.iter())).for_each(|(a, (b, c))| *a = b + SCALAR * c),
        }
    }
}

/// What every element must hold after `op` ran on fresh arrays.
fn expected(op: &str) -> (f64, f64, f64) {
    let (a, b, c) = (0.1, 0.2, 0.0);
    match op {
        "copy" => (a, b, a),
        "scale" => (a, SCALAR * c, c),
        "add" => (a, b, a + b),
        _ => (b + SCALAR * c, b, c),
    }
}

impl Benchmark for CpuStream {
    fn name(&self) -> &'static str {
        Bench::Stream.name()
    }

    fn points(&self, cfg: &BenchConfig) -> Vec<Point> {
        points(cfg)
    }

    fn run(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let (Some(bytes), Some(threads)) = (p.size_bytes, p.threads) else {
            return Outcome::Failed("stream point without size or threads".into());
        };
        let len = (bytes / 8) as usize;
        // Arrays a, b, c start 0, 1 and 2 KiB past a page boundary, so no
        // two of them alias modulo 4 KiB; every step places them anew.
        let alloc = |i: usize| AlignedBuf::new(len, i * 1024, 0.0f64);
        if let Err(why) = place_anew(&mut self.arrays, 3 * bytes, || Ok([alloc(0)?, alloc(1)?, alloc(2)?])) {
            return Outcome::Skipped(why);
        }
        let [a, b, c] = self.arrays.as_mut().expect("allocated above");
        let (a, b, c) = (a.as_mut_slice(), b.as_mut_slice(), c.as_mut_slice());
        a.fill(0.1);
        b.fill(0.2);
        c.fill(0.0);
        let t = threads as usize;
        let (pa, pb, pc) = (SharedPtr(a.as_mut_ptr()), SharedPtr(b.as_mut_ptr()), SharedPtr(c.as_mut_ptr()));
        let op = p.op.clone();
        let work = |tid: usize, n: u64| {
            let r = chunk(len, t, tid, 8);
            for _ in 0..n {
                let (a, b, c) = black_box((pa, pb, pc));
                kernel(&op, a.0, b.0, c.0, r.clone());
            }
        };
        let result = with_team(t, &work, |timed| sampler.measure(&mut |n| Ok(timed(n))));
        let (ea, eb, ec) = expected(&p.op);
        let ok = |v: &[f64], e: f64| v.iter().all(|x| (x - e).abs() <= 1e-12);
        match result {
            Ok(m) if ok(a, ea) && ok(b, eb) && ok(c, ec) => Outcome::Measured(m),
            Ok(_) => Outcome::Failed(format!("{} produced wrong values", p.op)),
            Err(e) => Outcome::Failed(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn babelstream_byte_weights() {
        let mut cfg = BenchConfig::preset(super::super::Preset::Quick);
        cfg.stream_sizes = vec![800];
        cfg.threads = vec![1];
        let p = points(&cfg);
        let moved: Vec<(String, u64)> = p.iter().map(|p| (p.op.clone(), p.bytes_moved.unwrap())).collect();
        assert_eq!(
            moved,
            vec![("copy".into(), 1600), ("scale".into(), 1600), ("add".into(), 2400), ("triad".into(), 2400)]
        );
        assert!(p.iter().all(|p| p.bytes_copied == Some(800)));
        assert_eq!(p[3].flops, Some(200.0));
    }
}
