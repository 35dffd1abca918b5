//! GPU GEMM: the row-major C = A·B in the point's layout ([`super::blas`]),
//! with random-normal inputs from a pool rounded to the dtype on the host,
//! the fastest of the library heuristic's first `--gemm-algos` candidates,
//! timed like any other lane, then checked against an f64 reference
//! ([`check_gemm`]) with a tolerance that follows how the dtype accumulates.

use super::blas::{self, Pool};
use super::{point_seed, DevBuf, GemmSpec, GpuApi, GpuBench, Op};
use crate::bench::dtype::{self, Dtype};
use crate::bench::{Measurement, Outcome, Sampler};
use crate::vocab::gemm::GemmSetting;
use crate::vocab::kinds::Fp8Accum;
use crate::vocab::rows::Point;

/// A plan kept across the rounds of a point: the plan's id and the
/// algorithm chosen for it (chosen once, in its first round).
#[derive(Debug, Clone)]
pub(super) struct KeptPlan {
    pub spec: GemmSpec,
    pub id: usize,
    pub algos: usize,
    pub chosen: Option<(usize, String)>,
}

/// One GEMM point's buffers on the device (A, B, C) and the pools its
/// check reads.
pub(super) struct Inputs {
    spec: GemmSpec,
    seed: u8,
    bufs: [DevBuf; 3],
    a: Pool,
    b: Pool,
    bytes: u64,
    last_use: u64,
}

/// GEMM inputs kept on the device across a sweep's rounds: filling and
/// uploading 8192² inputs every round cost more than timing them. At most a
/// quarter of the device's memory; the least recently used go first.
#[derive(Default)]
pub(super) struct InputCache {
    kept: Vec<Inputs>,
    clock: u64,
}

impl InputCache {
    /// Free everything kept.
    pub fn clear(&mut self, api: &mut dyn GpuApi) {
        for k in self.kept.drain(..) {
            k.bufs.into_iter().for_each(|b| api.free(b));
        }
    }

    /// Free the least recently used inputs until `need` more bytes fit in `cap`.
    fn make_room(&mut self, api: &mut dyn GpuApi, need: u64, cap: u64) {
        while !self.kept.is_empty() && self.kept.iter().map(|k| k.bytes).sum::<u64>() + need > cap {
            let oldest = (0..self.kept.len()).min_by_key(|&i| self.kept[i].last_use).expect("not empty");
            let k = self.kept.swap_remove(oldest);
            k.bufs.into_iter().for_each(|b| api.free(b));
        }
    }
}

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
        let spec = GemmSpec { dtype: dt, m, n, k, setting: GemmSetting::of(p) };
        let plan = match self.gemm_plans.iter().position(|kp| kp.spec == spec) {
            Some(i) => i,
            None => match self.api.borrow_mut().gemm_plan(self.device, &spec, self.gemm_algos) {
                Ok(plan) => {
                    self.gemm_plans.push(KeptPlan { spec, id: plan.id, algos: plan.algos, chosen: None });
                    self.gemm_plans.len() - 1
                }
                Err(why) => return Outcome::Skipped(why),
            },
        };
        self.release();
        // Inputs are written once per point (then kept): one-time work.
        let start = std::time::Instant::now();
        let input = match self.gemm_input(&spec, point_seed(p)) {
            Ok(i) => i,
            Err(o) => return o,
        };
        self.setup += start.elapsed().as_secs_f64();
        let result = (|| -> Result<Measurement, String> {
            let bufs = self.gemm_inputs.kept[input].bufs;
            let lanes = [Op::Gemm { plan: self.gemm_plans[plan].id, a: bufs[0], b: bufs[1], c: bufs[2] }];
            if self.gemm_plans[plan].chosen.is_none() {
                let start = std::time::Instant::now();
                let chosen = self.choose_algo(plan, &lanes)?;
                self.gemm_plans[plan].chosen = Some(chosen);
                self.setup += start.elapsed().as_secs_f64();
            }
            // C is poisoned before every round, so each round's check reads
            // what this round wrote.
            let out_size = dt.gemm_output().bytes();
            self.api.borrow_mut().upload(bufs[2], &vec![0xff; (m * n * out_size) as usize])?;
            let meas = self.measure(sampler, &lanes, false)?;
            let mut c = vec![0u8; (m * n * out_size) as usize];
            self.api.borrow_mut().download(bufs[2], &mut c)?;
            // Logical A(i, l) and B(l, j) have the pool's values at their
            // row-major indices i·k + l and l·n + j.
            let kept = &self.gemm_inputs.kept[input];
            check_gemm(&spec, &|i, l| kept.a.value(i * k + l), &|l, j| kept.b.value(l * n + j), &c)?;
            Ok(meas)
        })();
        match result {
            Ok(mut meas) => {
                let kept = &self.gemm_plans[plan];
                if let Some((i, name)) = &kept.chosen {
                    meas.detail = Some(if kept.algos > 1 {
                        format!("{name}, fastest of {} candidates timed (#{})", kept.algos, i + 1)
                    } else {
                        format!("{name}, the heuristic's first choice")
                    });
                }
                Outcome::Measured(meas)
            }
            Err(e) => Outcome::Failed(e),
        }
    }

    /// The index in the input cache of `spec`'s inputs, on the device:
    /// random normal values (never zeros) rounded to the dtype on the host
    /// (the reference uses the rounded values), filled and uploaded once per
    /// point and kept across its rounds while they fit the cache's share of
    /// device memory. A point that does not fit is skipped with the reason.
    fn gemm_input(&mut self, spec: &GemmSpec, seed: u8) -> Result<usize, Outcome> {
        self.gemm_inputs.clock += 1;
        let clock = self.gemm_inputs.clock;
        if let Some(i) = self.gemm_inputs.kept.iter().position(|k| k.spec == *spec && k.seed == seed) {
            self.gemm_inputs.kept[i].last_use = clock;
            return Ok(i);
        }
        let (dt, m, n, k, layout) = (spec.dtype, spec.m, spec.n, spec.k, spec.setting.layout);
        let (in_size, out_size) = (dt.bytes(), dt.gemm_output().bytes());
        let sizes = [m * k * in_size, n * k * in_size, m * n * out_size];
        let need: u64 = sizes.iter().sum();
        let d = self.device;
        {
            let mut api = self.api.borrow_mut();
            let total = api.mem_info(d).map(|(_, t)| t).unwrap_or(0);
            self.gemm_inputs.make_room(&mut *api, need, total / 4);
        }
        let want = sizes.map(|b| (d, b));
        let bufs = match self.alloc_checked(&want) {
            Ok(b) => b,
            Err(_) if !self.gemm_inputs.kept.is_empty() => {
                // Give back every kept input and try once more.
                self.gemm_inputs.clear(&mut *self.api.borrow_mut());
                self.alloc_checked(&want)?
            }
            Err(o) => return Err(o),
        };
        let a = Pool::new(dt, 1 + seed as u64);
        let b = Pool::new(dt, 1001 + seed as u64);
        let a_bytes = a.fill(m, k, |i, l| blas::a_index(layout, m, k, i, l));
        // B's logical rows are its k rows, so `nn` (the default) fills both
        // operands in storage order.
        let b_bytes = b.fill(k, n, |l, j| blas::b_index(layout, n, k, l, j));
        let uploaded = {
            let mut api = self.api.borrow_mut();
            api.upload(bufs[0], &a_bytes).and_then(|_| api.upload(bufs[1], &b_bytes))
        };
        if let Err(e) = uploaded {
            let mut api = self.api.borrow_mut();
            bufs.into_iter().for_each(|x| api.free(x));
            return Err(Outcome::Failed(e));
        }
        let bufs = [bufs[0], bufs[1], bufs[2]];
        self.gemm_inputs.kept.push(Inputs { spec: *spec, seed, bufs, a, b, bytes: need, last_use: clock });
        Ok(self.gemm_inputs.kept.len() - 1)
    }

    /// Time each candidate algorithm of a plan (after the clock ramp: three
    /// short timed batches each, the median kept) and use the fastest.
    fn choose_algo(&mut self, plan: usize, lanes: &[Op]) -> Result<(usize, String), String> {
        let kept = self.gemm_plans[plan].clone();
        let mut api = self.api.borrow_mut();
        if kept.algos <= 1 {
            return Ok((0, api.gemm_use_algo(kept.id, 0)?));
        }
        drop(api);
        self.ramp(lanes)?;
        let mut api = self.api.borrow_mut();
        let mut best: Option<(f64, usize)> = None;
        let mut first_error = None;
        for i in 0..kept.algos {
            api.gemm_use_algo(kept.id, i)?;
            // A candidate that fails (some need more workspace than their
            // heuristic said) is left out, not the point.
            let one = match api.time(self.device, lanes, 1) {
                Ok(t) => t,
                Err(e) => {
                    first_error.get_or_insert(e);
                    continue;
                }
            };
            let n = ((0.01 / one.max(1e-7)) as u64).clamp(1, 1000);
            let mut t: Vec<f64> = (0..3).filter_map(|_| api.time(self.device, lanes, n).ok()).collect();
            if t.is_empty() {
                continue;
            }
            let med = crate::vocab::stats::median_unsorted(&mut t) / n as f64;
            if best.is_none_or(|(b, _)| med < b) {
                best = Some((med, i));
            }
        }
        let (_, i) =
            best.ok_or_else(|| first_error.unwrap_or_else(|| "none of the heuristic's algorithms ran".into()))?;
        Ok((i, api.gemm_use_algo(kept.id, i)?))
    }
}

/// Relative error of the accumulation of a GEMM of `input` (per unit of
/// Σ|a·b|): f32 accumulation for every type but FP8, TF32 also rounding the
/// inputs; FP8 on Hopper's tensor cores keeps about 14 significand bits
/// in its accumulator (DeepSeek-V3 technical report, §3.3.2), added into
/// f32 at intervals when promoted and never with fast accumulation.
pub fn accumulation_eps(input: Dtype, accum: Option<Fp8Accum>) -> f64 {
    match (input, accum) {
        (Dtype::Tf32, _) => dtype::eps(Dtype::Tf32),
        (Dtype::Fp8, Some(Fp8Accum::Fast)) => 2f64.powi(-9),
        (Dtype::Fp8, _) => 2f64.powi(-12),
        _ => 16.0 * dtype::eps(Dtype::F32),
    }
}

/// Check 32 spread entries of the row-major C (of type
/// `input.gemm_output()`) against an f64 reference computed from the values
/// the device was given (`a(i, l)`, `b(l, j)`). The bound scales with Σ|a·b|
/// by [`accumulation_eps`], plus the output rounding; it stays far below
/// |c| ≈ √k for N(0, 1) inputs, so a zero, stale or transposed C fails.
pub fn check_gemm(
    spec: &GemmSpec,
    a: &dyn Fn(u64, u64) -> f32,
    b: &dyn Fn(u64, u64) -> f32,
    c: &[u8],
) -> Result<(), String> {
    let (input, m, n, k) = (spec.dtype, spec.m, spec.n, spec.k);
    let out = input.gemm_output();
    let acc = accumulation_eps(input, spec.setting.accum);
    for s in 0..32u64 {
        let i = (s * 7919 + 13) % m;
        let j = (s * 104_729 + 7) % n;
        let (mut r, mut mag) = (0.0f64, 0.0f64);
        for l in 0..k {
            let p = a(i, l) as f64 * b(l, j) as f64;
            r += p;
            mag += p.abs();
        }
        let got = dtype::decode(out, c, blas::c_index(n, i, j) as usize);
        let tol = acc * mag + 2.0 * dtype::eps(out) * r.abs() + 1e-6;
        if !(got - r).abs().le(&tol) {
            let how = match spec.setting.accum {
                Some(a) => format!(" ({} accumulation)", a.name()),
                None => String::new(),
            };
            return Err(format!(
                "C[{i},{j}] = {got:.6e}, reference {r:.6e} (tolerance {tol:.2e}): the {input}{how} GEMM result is wrong"
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
        let av = dtype::normal_values(m * k, 1);
        let bv = dtype::normal_values(n * k, 2);
        let a = |i: u64, l: u64| av[(i * k + l) as usize];
        let b = |l: u64, j: u64| bv[(j * k + l) as usize];
        let mut c = vec![0f32; (m * n) as usize];
        for i in 0..m {
            for j in 0..n {
                c[blas::c_index(n, i, j) as usize] = (0..k).map(|l| a(i, l) * b(l, j)).sum();
            }
        }
        let spec = GemmSpec {
            dtype: Dtype::F32,
            m,
            n,
            k,
            setting: GemmSetting::for_dtype(Dtype::F32, crate::vocab::kinds::GemmLayout::Nn, Fp8Accum::Promoted),
        };
        let bytes = |c: &[f32]| c.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
        check_gemm(&spec, &a, &b, &bytes(&c)).unwrap();
        let zeros = vec![0f32; c.len()];
        assert!(check_gemm(&spec, &a, &b, &bytes(&zeros)).is_err());
        // Column-major instead of row-major C.
        let mut t = c.clone();
        for i in 0..m {
            for j in 0..n {
                t[(j * m + i) as usize] = c[blas::c_index(n, i, j) as usize];
            }
        }
        assert!(check_gemm(&spec, &a, &b, &bytes(&t)).is_err());
    }

    #[test]
    fn fp8_tolerance_follows_the_accumulation() {
        assert!(
            accumulation_eps(Dtype::Fp8, Some(Fp8Accum::Fast)) > accumulation_eps(Dtype::Fp8, Some(Fp8Accum::Promoted))
        );
        assert!(accumulation_eps(Dtype::Fp8, Some(Fp8Accum::Promoted)) > accumulation_eps(Dtype::Bf16, None));
    }
}
