//! CPU GEMM, C = A·B, through the `gemm` crate (the kernels behind faer),
//! in f32 and f64, column-major, with random-normal inputs (never zeros:
//! some hardware is faster on zeros, and a zero result validates nothing).
//!
//! Accounting: `flops` = 2·m·n·k per operation. `bytes_moved` is the
//! compulsory traffic (A and B read once, C written once), the denominator
//! of a roofline's arithmetic intensity; `bytes_copied` does not apply.

use crate::vocab::benches::Bench;
use rand::RngExt;

use super::dtype::{self, Dtype};
use super::{memory_check, try_alloc, BenchConfig, Benchmark, Outcome, Sampler};
use crate::vocab::accounting::gemm_flops;
use crate::vocab::rows::Point;

/// GEMM points: dtype × shape × threads.
pub fn points(cfg: &BenchConfig) -> Vec<Point> {
    let mut out = Vec::new();
    for dtype in &cfg.gemm_dtypes {
        let eb = dtype.bytes();
        for &[m, n, k] in &cfg.gemm_shapes {
            for &t in &cfg.threads {
                out.push(Point {
                    bench: Bench::Gemm.name().into(),
                    op: Bench::Gemm.name().into(),
                    method: Some("gemm_crate".into()),
                    dtype: Some(dtype.name().into()),
                    m: Some(m),
                    n: Some(n),
                    k: Some(k),
                    threads: Some(t),
                    bytes_moved: Some(eb * (m * k + k * n + m * n)),
                    flops: Some(gemm_flops(m, n, k)),
                    ..Point::default()
                });
            }
        }
    }
    out
}

trait Elem: Copy + Default + 'static + Send + Sync {
    fn from_f64(v: f64) -> Self;
    fn to_f64(self) -> f64;
    const ONE: Self;
    const ZERO: Self;
    /// The element type, for its tolerance ([`dtype::host_dot_tolerance`]).
    const DTYPE: Dtype;
}
impl Elem for f32 {
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
    const DTYPE: Dtype = Dtype::F32;
}
impl Elem for f64 {
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    const ONE: Self = 1.0;
    const ZERO: Self = 0.0;
    const DTYPE: Dtype = Dtype::F64;
}

fn run_typed<T: Elem>(m: usize, n: usize, k: usize, threads: usize, sampler: &Sampler) -> Outcome {
    let mut rng = dtype::seeded_rng(0x5eed ^ (m * 31 + n * 17 + k) as u64);
    let mut fill = |len: usize| -> Result<Vec<T>, String> {
        let mut v = try_alloc(len, T::ZERO)?;
        v.iter_mut().for_each(|x| *x = T::from_f64(dtype::normal(&mut rng)));
        Ok(v)
    };
    let (a, b) = match (fill(m * k), fill(k * n)) {
        (Ok(a), Ok(b)) => (a, b),
        (Err(e), _) | (_, Err(e)) => return Outcome::Skipped(e),
    };
    let mut c = match try_alloc(m * n, T::ZERO) {
        Ok(c) => c,
        Err(e) => return Outcome::Skipped(e),
    };
    let par = if threads > 1 { gemm::Parallelism::Rayon(threads) } else { gemm::Parallelism::None };
    let mut timed = |iters: u64| -> Result<f64, String> {
        let t = std::time::Instant::now();
        for _ in 0..iters {
            // SAFETY: column-major m×k, k×n and m×n buffers of exactly those
            // lengths; strides match; dst does not alias the inputs.
            unsafe {
                gemm::gemm(
                    m,
                    n,
                    k,
                    c.as_mut_ptr(),
                    m as isize,
                    1,
                    false,
                    a.as_ptr(),
                    m as isize,
                    1,
                    b.as_ptr(),
                    k as isize,
                    1,
                    T::ZERO,
                    T::ONE,
                    false,
                    false,
                    false,
                    par,
                );
            }
        }
        Ok(t.elapsed().as_secs_f64())
    };
    let result = sampler.measure(&mut timed);
    // Validate a few entries against an f64 dot product.
    let mut pick = dtype::seeded_rng(7);
    let tolerance = dtype::host_dot_tolerance(T::DTYPE);
    for _ in 0..8 {
        let i = pick.random_range(0..m);
        let j = pick.random_range(0..n);
        let (mut exact, mut scale) = (0.0f64, 0.0f64);
        for p in 0..k {
            let prod = a[i + p * m].to_f64() * b[p + j * k].to_f64();
            exact += prod;
            scale += prod.abs();
        }
        let got = c[i + j * m].to_f64();
        if (got - exact).abs() > tolerance * scale * (k as f64).sqrt() + 1e-30 {
            return Outcome::Failed(format!("C[{i},{j}] = {got}, expected {exact}"));
        }
    }
    match result {
        Ok(m) => Outcome::Measured(m),
        Err(e) => Outcome::Failed(e),
    }
}

/// GEMM on the CPU backend.
#[derive(Default)]
pub struct CpuGemm;

impl Benchmark for CpuGemm {
    fn name(&self) -> &'static str {
        Bench::Gemm.name()
    }

    fn points(&self, cfg: &BenchConfig) -> Vec<Point> {
        points(cfg)
    }

    fn run(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let (Some(m), Some(n), Some(k), Some(t)) = (p.m, p.n, p.k, p.threads) else {
            return Outcome::Failed("gemm point without m, n, k or threads".into());
        };
        let name = p.dtype.as_deref().unwrap_or("f32");
        let parsed = Dtype::parse(name).ok();
        let eb = parsed.map_or(8, Dtype::bytes);
        if let Some(why) = memory_check(eb * (m * k + k * n + m * n)) {
            return Outcome::Skipped(why);
        }
        let (m, n, k, t) = (m as usize, n as usize, k as usize, t as usize);
        match parsed {
            Some(Dtype::F32) => run_typed::<f32>(m, n, k, t, sampler),
            Some(Dtype::F64) => run_typed::<f64>(m, n, k, t, sampler),
            _ => Outcome::Skipped(format!("the CPU backend has no {name} GEMM")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flop_and_byte_accounting() {
        let mut cfg = BenchConfig::preset(super::super::Preset::Quick);
        cfg.gemm_shapes = vec![[16384, 8192, 1280]];
        cfg.gemm_dtypes = vec![Dtype::F32];
        cfg.threads = vec![1];
        let p = &points(&cfg)[0];
        assert_eq!(p.flops, Some(2.0 * 16384.0 * 8192.0 * 1280.0));
        assert_eq!(p.bytes_moved, Some(4 * (16384 * 1280 + 1280 * 8192 + 16384 * 8192)));
        assert_eq!(p.bytes_copied, None);
    }
}
