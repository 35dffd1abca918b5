//! GPU GEMM: C = Aᵀ·B with random-normal inputs rounded to the dtype on the
//! host ([`crate::bench::dtype`]), timed like any other lane, then checked
//! against an f64 reference ([`check_gemm`]).

use super::{point_seed, GpuBench, Op};
use crate::bench::dtype::{self, Dtype};
use crate::bench::{Measurement, Outcome, Sampler};
use crate::vocab::rows::Point;

impl GpuBench {
    pub(super) fn run_gemm(&mut self, p: &Point, sampler: &Sampler) -> Outcome {
        let (Some(m), Some(n), Some(k), Some(name)) = (p.m, p.n, p.k, p.dtype.as_deref()) else {
            return Outcome::Failed("gemm point without m, n, k and dtype".into());
        };
        // A point's dtype came from a typed configuration; a name this
        // build does not know fails here, never runs as another type.
        let Ok(dt) = Dtype::parse(name) else {
            return Outcome::Failed(format!("no GPU encoding for dtype `{name}`"));
        };
        let plan = match self.api.borrow_mut().gemm_plan(self.device, dt, m, n, k) {
            Ok(plan) => plan,
            Err(why) => return Outcome::Skipped(why),
        };
        let (in_size, out_size) = (dt.bytes(), dt.gemm_output().bytes());
        self.release();
        let d = self.device;
        let bufs = match self.alloc_checked(&[(d, m * k * in_size), (d, n * k * in_size), (d, m * n * out_size)]) {
            Ok(b) => b,
            Err(o) => return o,
        };
        let result = (|| -> Result<Measurement, String> {
            // Random normal inputs (never zeros), rounded to the dtype on the
            // host; the reference uses the rounded values.
            let a = dtype::normal_values(m * k, 1 + point_seed(p) as u64);
            let b = dtype::normal_values(n * k, 1001 + point_seed(p) as u64);
            let (a_bytes, a_vals) = dtype::encode(dt, &a);
            let (b_bytes, b_vals) = dtype::encode(dt, &b);
            {
                let mut api = self.api.borrow_mut();
                api.upload(bufs[0], &a_bytes)?;
                api.upload(bufs[1], &b_bytes)?;
            }
            let lanes = [Op::Gemm { plan: plan.id, a: bufs[0], b: bufs[1], c: bufs[2] }];
            let meas = self.measure(sampler, &lanes, p.variant.as_deref() == Some("cold"))?;
            let mut c = vec![0u8; (m * n * out_size) as usize];
            self.api.borrow_mut().download(bufs[2], &mut c)?;
            check_gemm(dt, &a_vals, &b_vals, &c, m, n, k)?;
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

/// Check 32 spread entries of C (of type `input.gemm_output()`) against an
/// f64 reference computed from the values the device was given. The bound
/// scales with Σ|a·b| (accumulation in the compute type; TF32 also rounds
/// inputs) plus the output rounding, which is far below |c| ≈ √k for
/// N(0, 1) inputs: a zero, stale or transposed C fails.
pub fn check_gemm(input: Dtype, a: &[f32], b: &[f32], c: &[u8], m: u64, n: u64, k: u64) -> Result<(), String> {
    let out = input.gemm_output();
    let (m, n, k) = (m as usize, n as usize, k as usize);
    let acc = match input {
        Dtype::Tf32 => dtype::eps(Dtype::Tf32),
        _ => 16.0 * dtype::eps(Dtype::F32),
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
        let got = dtype::decode(out, c, i + j * m);
        let tol = acc * mag + 2.0 * dtype::eps(out) * r.abs() + 1e-6;
        if !(got - r).abs().le(&tol) {
            return Err(format!(
                "C[{i},{j}] = {got:.6e}, reference {r:.6e} (tolerance {tol:.2e}): the {input} GEMM result is wrong"
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gemm_check_rejects_zeros_and_transposes() {
        let (m, n, k) = (8u64, 6u64, 64u64);
        let a = dtype::normal_values(m * k, 1);
        let b = dtype::normal_values(n * k, 2);
        let mut c = vec![0f32; (m * n) as usize];
        for i in 0..m as usize {
            for j in 0..n as usize {
                c[i + j * m as usize] = (0..k as usize).map(|l| a[i * k as usize + l] * b[j * k as usize + l]).sum();
            }
        }
        let bytes = |c: &[f32]| c.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        check_gemm(Dtype::F32, &a, &b, &bytes(&c), m, n, k).unwrap();
        let zeros = vec![0f32; c.len()];
        assert!(check_gemm(Dtype::F32, &a, &b, &bytes(&zeros), m, n, k).is_err());
        // Row-major instead of column-major C.
        let mut t = c.clone();
        for i in 0..m as usize {
            for j in 0..n as usize {
                t[i * n as usize + j] = c[i + j * m as usize];
            }
        }
        assert!(check_gemm(Dtype::F32, &a, &b, &bytes(&t), m, n, k).is_err());
    }
}
