//! A host-memory stand-in for a GPU, for testing the shared GPU benchmark
//! code (points, accounting, validation, skips, cold mode) on machines
//! without one. Test-only: its times are host copies, never stored as
//! device results.

use std::collections::HashMap;
use std::time::Instant;

use super::*;
use crate::bench::dtype::{self, Dtype};
use crate::vocab::kinds::Fp8Accum;
use crate::vocab::launch::MAX_BLOCK;

#[derive(Default)]
pub struct Emulated {
    pub inv: Inventory,
    mem: HashMap<u64, Vec<u8>>,
    next: u64,
    /// Device memory each device reports as free.
    pub free_bytes: u64,
    /// Copies drop their last byte (a broken device).
    pub broken: bool,
    pub flushes: u64,
    pub plans: Vec<GemmSpec>,
    /// Candidate algorithms each plan offers (all compute alike here).
    pub algos_offered: usize,
    pub no_kernel_copy: bool,
    /// GEMMs write a transposed C.
    pub broken_gemm: bool,
    /// The kernel launches copies ran with (`None`: sized by the backend).
    pub launches: std::collections::BTreeSet<Option<Launch>>,
    pinned: Vec<Vec<u8>>,
    /// How its sensor behaves.
    pub sensor: EmulatedSensor,
}

/// The emulated device's sensor: it reports through the same sampler as
/// NVML, with fixed readings, or misbehaves as a broken NVML would.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub enum EmulatedSensor {
    /// 1410 MHz (its reference 1410), 1593 MHz memory, 250 W, 45 °C, the
    /// power-cap reason set, an energy counter at 250 W.
    #[default]
    Steady,
    /// Its clock at 1000 MHz against a 1410 MHz reference: below 75 %.
    Slow,
    /// Every read fails.
    Fails,
    /// Every read hangs.
    Hangs,
}

struct EmulatedReader {
    mode: EmulatedSensor,
    start: Instant,
}

impl crate::vocab::telemetry::Sensor for EmulatedReader {
    fn read(&mut self) -> Result<crate::vocab::telemetry::Reading, String> {
        let clock = match self.mode {
            EmulatedSensor::Steady => 1410.0,
            EmulatedSensor::Slow => 1000.0,
            EmulatedSensor::Fails => return Err("emulated NVML_ERROR_UNKNOWN".into()),
            EmulatedSensor::Hangs => {
                std::thread::sleep(std::time::Duration::from_secs(3600));
                return Err("emulated hang".into());
            }
        };
        Ok(crate::vocab::telemetry::Reading {
            clock_mhz: Some(clock),
            mem_clock_mhz: Some(1593.0),
            power_w: Some(250.0),
            temperature_c: Some(45.0),
            throttle: Some(0x4),
            energy_j: Some(250.0 * self.start.elapsed().as_secs_f64()),
            clock_ref_mhz: Some(1410.0),
            ..Default::default()
        })
    }
    fn describe(&self) -> String {
        "emulated sensor".into()
    }
}

impl Emulated {
    pub fn new(devices: usize) -> Self {
        Emulated {
            inv: Inventory {
                facts: (0..devices)
                    .map(|i| GpuFacts { ordinal: i, name: format!("Emulated GPU {i}"), ..Default::default() })
                    .collect(),
                peers: vec![vec![PeerAccess::Enabled; devices]; devices],
            },
            next: 0x1000,
            free_bytes: 1 << 30,
            ..Default::default()
        }
    }

    fn buf(&mut self, b: DevBuf) -> Result<&mut Vec<u8>, String> {
        self.mem.get_mut(&b.ptr).ok_or_else(|| format!("no allocation at {:#x}", b.ptr))
    }

    fn copy(&mut self, dst: DevBuf, src: DevBuf) -> Result<(), String> {
        let data = self.buf(src)?.clone();
        let broken = self.broken;
        let d = self.buf(dst)?;
        let n = if broken { data.len() - 1 } else { data.len() };
        d[..n].copy_from_slice(&data[..n]);
        Ok(())
    }

    fn gemm(&mut self, plan: usize, a: DevBuf, b: DevBuf, c: DevBuf) -> Result<(), String> {
        let spec = self.plans[plan];
        let (dt, m, n, k, layout) = (spec.dtype, spec.m, spec.n, spec.k, spec.setting.layout);
        let dec = |bytes: &[u8], i: u64| dtype::decode(dt, bytes, i as usize) as f32;
        let (av, bv) = (self.buf(a)?.clone(), self.buf(b)?.clone());
        let mut out = vec![0f32; (m * n) as usize];
        for i in 0..m {
            for j in 0..n {
                let at = if self.broken_gemm { j * m + i } else { blas::c_index(n, i, j) };
                let products = (0..k)
                    .map(|l| dec(&av, blas::a_index(layout, m, k, i, l)) * dec(&bv, blas::b_index(layout, n, k, l, j)));
                out[at as usize] = match spec.setting.accum {
                    None => products.sum(),
                    Some(accum) => hopper_fp8_dot(products, accum),
                };
            }
        }
        let (bytes, _) = dtype::encode(dt.gemm_output(), &out);
        self.buf(c)?.copy_from_slice(&bytes);
        Ok(())
    }
}

/// The FP8 dot product as Hopper's tensor cores compute it, by what has
/// been published of them (DeepSeek-V3 technical report, §3.3.2): each MMA
/// instruction adds a 32-long chunk of products into an accumulator that
/// keeps about 14 significand bits (13 stored, truncated); `promoted` adds
/// that accumulator into an f32 total every 128 products (4 instructions),
/// as cuBLASLt does unless fast accumulation is on.
pub(crate) fn hopper_fp8_dot(products: impl Iterator<Item = f32>, accum: Fp8Accum) -> f32 {
    let narrow = |x: f32| f32::from_bits(x.to_bits() & !((1u32 << (23 - 13)) - 1));
    let (mut total, mut partial, mut chunk) = (0f32, 0f32, 0f32);
    for (l, p) in products.enumerate() {
        chunk += p;
        if (l + 1) % 32 == 0 {
            partial = narrow(partial + chunk);
            chunk = 0.0;
        }
        if accum == Fp8Accum::Promoted && (l + 1) % 128 == 0 {
            total += partial;
            partial = 0.0;
        }
    }
    total + narrow(partial + chunk)
}

impl GpuApi for Emulated {
    fn timer(&self) -> &'static str {
        "steady_clock"
    }
    fn sensor(&self, _device: usize) -> crate::vocab::telemetry::SensorOpener {
        let mode = self.sensor;
        Box::new(move || {
            Ok(Box::new(EmulatedReader { mode, start: Instant::now() }) as Box<dyn crate::vocab::telemetry::Sensor>)
        })
    }
    fn inventory(&self) -> &Inventory {
        &self.inv
    }
    fn mem_info(&mut self, _device: usize) -> Result<(u64, u64), String> {
        Ok((self.free_bytes, self.free_bytes))
    }
    fn alloc(&mut self, device: usize, bytes: u64) -> Result<DevBuf, String> {
        let ptr = self.next;
        self.next += bytes.max(1).next_multiple_of(256);
        self.mem.insert(ptr, vec![0xAB; bytes as usize]);
        Ok(DevBuf { device, ptr, bytes })
    }
    fn free(&mut self, buf: DevBuf) {
        assert!(self.mem.remove(&buf.ptr).is_some(), "double free of {:#x}", buf.ptr);
    }
    fn alloc_pinned(&mut self, bytes: u64) -> Result<*mut u8, String> {
        self.pinned.push(vec![0; bytes as usize]);
        Ok(self.pinned.last_mut().unwrap().as_mut_ptr())
    }
    fn free_pinned(&mut self, ptr: *mut u8) {
        let i = self.pinned.iter().position(|v| std::ptr::eq(v.as_ptr(), ptr)).expect("pinned pointer");
        self.pinned.remove(i);
    }
    fn upload(&mut self, dst: DevBuf, src: &[u8]) -> Result<(), String> {
        self.buf(dst)?[..src.len()].copy_from_slice(src);
        Ok(())
    }
    fn download(&mut self, src: DevBuf, dst: &mut [u8]) -> Result<(), String> {
        let n = dst.len();
        dst.copy_from_slice(&self.buf(src)?[..n]);
        Ok(())
    }
    fn ramp_seconds(&self) -> f64 {
        0.0
    }
    fn flush_l2(&mut self, _device: usize) -> Result<(), String> {
        self.flushes += 1;
        Ok(())
    }
    fn copy_method(&mut self, _device: usize, method: &str) -> Result<(), String> {
        if method == "sm_kernel" && self.no_kernel_copy {
            return Err("no copy kernel on the emulated device".into());
        }
        Ok(())
    }
    fn gemm_method(&self, _device: usize, dtype: Dtype) -> Result<String, String> {
        Ok(if dtype == Dtype::Fp8 { "emulated_lt" } else { "emulated_gemm" }.into())
    }
    fn gemm_plan(&mut self, device: usize, spec: &GemmSpec, algos: u32) -> Result<GemmPlan, String> {
        let method = self.gemm_method(device, spec.dtype)?;
        self.plans.push(*spec);
        Ok(GemmPlan { id: self.plans.len() - 1, method, algos: (algos as usize).min(self.algos_offered.max(1)) })
    }
    fn gemm_use_algo(&mut self, _plan: usize, index: usize) -> Result<String, String> {
        Ok(format!("emulated algo {index}"))
    }
    fn time(&mut self, _device: usize, lanes: &[Op], n: u64) -> Result<f64, String> {
        let t = Instant::now();
        for _ in 0..n {
            for op in lanes {
                match *op {
                    Op::KernelCopy { launch: Some(l), .. } if l.block == 0 || l.block > MAX_BLOCK || l.grid == 0 => {
                        return Err(format!("invalid launch {}", l.label()))
                    }
                    Op::CopyEngine { dst, src } | Op::KernelCopy { dst, src, .. } | Op::Peer { dst, src } => {
                        if let Op::KernelCopy { launch, .. } = *op {
                            self.launches.insert(launch);
                        }
                        self.copy(dst, src)?
                    }
                    Op::HostToDevice { dst, src } => {
                        let data = unsafe { std::slice::from_raw_parts(src, dst.bytes as usize) }.to_vec();
                        self.upload(dst, &data)?;
                    }
                    Op::DeviceToHost { dst, src } => {
                        let out = unsafe { std::slice::from_raw_parts_mut(dst, src.bytes as usize) };
                        self.download(src, out)?;
                    }
                    Op::Gemm { plan, a, b, c } => self.gemm(plan, a, b, c)?,
                }
            }
        }
        Ok(t.elapsed().as_secs_f64().max(1e-9))
    }
}
