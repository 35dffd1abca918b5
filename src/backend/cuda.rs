//! The CUDA backend (feature `cuda`, on by default): NVIDIA GPUs through
//! cudarc's driver, NVRTC, cuBLAS and cuBLASLt bindings, all loaded at run
//! time (`dynamic-loading`), so the build needs no CUDA toolkit and the
//! binary runs where there is none: the backend then reports why it is
//! unavailable, and its benchmarks are recorded as skipped.
//!
//! Bindings: cudarc's CUDA 12.8 set. Every driver entry point used here
//! (`cuMemcpy*Async_v2`, `cuMemcpyPeerAsync`, `cuEventElapsedTime`,
//! `cuDevicePrimaryCtxRetain`, ...) is exported by every CUDA 12.x and 13.x
//! driver, so one binary runs on either. cuBLAS and NVRTC are looked up as
//! `libcublas.so`, `libcublas.so.12`, ...; on a CUDA 13 toolkit put its
//! `lib64` on `LD_LIBRARY_PATH` (the unversioned names live there).
//!
//! Only the device calls live here; what to measure, how to validate and
//! how to count bytes is [`crate::bench::gpu`], shared with HIP, and so is
//! the event-timing choreography ([`crate::bench::gpu::timing`]).
//!
//! This file is longer than 400 lines: it is the CUDA driver surface
//! (device discovery, the NVRTC copy kernel, enqueueing), one driver call
//! per step with its own error message, kept together so the calls can be
//! read against each other. cuBLAS and cuBLASLt (handles, matmul plans,
//! the GEMM call) are `cuda/blas.rs`.

use std::cell::RefCell;
use std::ffi::{c_void, CStr, CString};
use std::rc::Rc;

use cudarc::driver::sys as cu;

mod blas;
pub use blas::torch_workspace_bytes;
use blas::{GemmEx, LtPlan};

use crate::bench::gpu::blas::BlasCall;
use crate::bench::gpu::timing::{self, EventDevice};
use crate::bench::gpu::{
    CopyArgs, DevBuf, GemmPlan, GemmSpec, GpuApi, GpuFacts, Inventory, Op, PeerAccess, SharedApi, COPY_KERNEL,
    COPY_KERNEL_NAME,
};
use crate::vocab::kinds::{Dtype, Fp8Accum};

fn ck(what: &str, r: cu::CUresult) -> Result<(), String> {
    r.result().map_err(|e| format!("{what} failed: {:?}", e.0))
}

/// The file a library the process mapped was loaded from (`/proc/self/maps`),
/// for the manifest and `backends`: which cuBLAS was measured.
fn library_file(maps: &str, prefix: &str) -> String {
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|path| path.rsplit('/').next().is_some_and(|f| f.starts_with(prefix)))
        .map(str::to_string)
        .unwrap_or_else(|| "not loaded".into())
}

/// cuBLASLt's version, loading it (as the GEMMs will) to find out, or why
/// it cannot be loaded.
fn cublaslt_version() -> Result<String, String> {
    use cudarc::cublaslt::sys as lt;
    if !unsafe { lt::is_culib_present() } {
        return Err("not found (no libcublasLt.so; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH)".into());
    }
    let v = std::panic::catch_unwind(|| unsafe { lt::cublasLtGetVersion() }).unwrap_or(0);
    Ok(format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100))
}

/// NVRTC's version (it compiles the SM copy kernel), or why it cannot be loaded.
fn nvrtc_version() -> Result<String, String> {
    use cudarc::nvrtc::sys as rtc;
    if !unsafe { rtc::is_culib_present() } {
        return Err("not found (no libnvrtc.so; the SM copy kernel cannot be compiled)".into());
    }
    let (mut major, mut minor) = (0, 0);
    let _ =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| unsafe { rtc::nvrtcVersion(&mut major, &mut minor) }));
    Ok(format!("{major}.{minor}"))
}

/// The CUDA backend, probed on first use.
pub fn backend() -> super::GpuBackend {
    super::GpuBackend::new("cuda", || {
        CudaApi::open().map(|api| {
            let facts = api.facts_json();
            (Rc::new(RefCell::new(api)) as SharedApi, facts)
        })
    })
}

struct Device {
    ctx: cu::CUcontext,
    streams: Vec<cu::CUstream>,
    /// [start, stop, end of the second lane]
    events: Vec<cu::CUevent>,
    flush: Option<(cu::CUdeviceptr, usize)>,
    kernel: Option<Result<cu::CUfunction, String>>,
    multiprocessors: u32,
    lt: Option<Result<cudarc::cublaslt::sys::cublasLtHandle_t, String>>,
    cublas: Option<Result<cudarc::cublas::sys::cublasHandle_t, String>>,
    workspace: Option<(cu::CUdeviceptr, usize)>,
    cc: (i32, i32),
}

/// The CUDA driver state of this process: one primary context per GPU.
pub struct CudaApi {
    devs: Vec<Device>,
    inv: Inventory,
    plans: Vec<LtPlan>,
    driver_version: i32,
    nvml_driver: Result<String, String>,
}

impl CudaApi {
    /// Load the driver, initialise it and open every GPU, or say why not.
    pub fn open() -> Result<CudaApi, String> {
        if !unsafe { cu::is_culib_present() } {
            return Err("no CUDA driver library (libcuda.so) on this machine".into());
        }
        unsafe {
            ck("cuInit", cu::cuInit(0))?;
            let mut count = 0;
            ck("cuDeviceGetCount", cu::cuDeviceGetCount(&mut count))?;
            if count == 0 {
                return Err("the CUDA driver found no GPU".into());
            }
            let mut driver_version = 0;
            ck("cuDriverGetVersion", cu::cuDriverGetVersion(&mut driver_version))?;
            let nvml = super::nvml::Nvml::open();
            let mut devs = Vec::new();
            let mut facts = Vec::new();
            for ordinal in 0..count {
                let mut dev = 0;
                ck("cuDeviceGet", cu::cuDeviceGet(&mut dev, ordinal))?;
                let attr = |a: cu::CUdevice_attribute| {
                    let mut v = 0;
                    cu::cuDeviceGetAttribute(&mut v, a, dev).result().ok().map(|_| v)
                };
                use cu::CUdevice_attribute::*;
                let cc = (
                    attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap_or(0),
                    attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).unwrap_or(0),
                );
                let mut name = [0i8; 256];
                ck("cuDeviceGetName", cu::cuDeviceGetName(name.as_mut_ptr() as *mut _, 255, dev))?;
                let name = CStr::from_ptr(name.as_ptr() as *const _).to_string_lossy().into_owned();
                let mut total = 0usize;
                ck("cuDeviceTotalMem", cu::cuDeviceTotalMem_v2(&mut total, dev))?;
                let mut uuid = std::mem::MaybeUninit::<cu::CUuuid>::zeroed();
                let uuid = (cu::cuDeviceGetUuid(uuid.as_mut_ptr(), dev) == cu::CUresult::CUDA_SUCCESS).then(|| {
                    let b = uuid.assume_init().bytes;
                    let h: Vec<String> = b.iter().map(|x| format!("{:02x}", *x as u8)).collect();
                    format!(
                        "GPU-{}-{}-{}-{}-{}",
                        h[0..4].concat(),
                        h[4..6].concat(),
                        h[6..8].concat(),
                        h[8..10].concat(),
                        h[10..16].concat()
                    )
                });
                let mut bus = [0i8; 64];
                let pci = (cu::cuDeviceGetPCIBusId(bus.as_mut_ptr() as *mut _, 63, dev) == cu::CUresult::CUDA_SUCCESS)
                    .then(|| CStr::from_ptr(bus.as_ptr() as *const _).to_string_lossy().into_owned());
                let mut extra = std::collections::BTreeMap::new();
                if let Some(v) = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE) {
                    extra.insert("sm_clock_attr_khz".into(), v.to_string());
                }
                if let Some(v) = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE) {
                    extra.insert("mem_clock_attr_khz".into(), v.to_string());
                }
                if let Some(v) = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH) {
                    extra.insert("mem_bus_width_bits".into(), v.to_string());
                }
                match (&nvml, &pci) {
                    (Ok(n), Some(p)) => extra.extend(n.device_facts(p)),
                    (Err(e), _) => {
                        extra.insert("nvml".into(), e.clone());
                    }
                    _ => {}
                }
                let mut ctx = std::ptr::null_mut();
                ck("cuDevicePrimaryCtxRetain", cu::cuDevicePrimaryCtxRetain(&mut ctx, dev))?;
                ck("cuCtxSetCurrent", cu::cuCtxSetCurrent(ctx))?;
                let mut streams = Vec::new();
                let mut events = Vec::new();
                for _ in 0..2 {
                    let mut s = std::ptr::null_mut();
                    ck(
                        "cuStreamCreate",
                        cu::cuStreamCreate(&mut s, cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32),
                    )?;
                    streams.push(s);
                }
                for _ in 0..3 {
                    let mut e = std::ptr::null_mut();
                    ck("cuEventCreate", cu::cuEventCreate(&mut e, cu::CUevent_flags::CU_EVENT_DEFAULT as u32))?;
                    events.push(e);
                }
                let l2 = attr(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).map(|v| v as u64);
                let sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map(|v| v as u32);
                facts.push(GpuFacts {
                    ordinal: ordinal as usize,
                    name,
                    uuid,
                    arch: Some(format!("sm_{}{}", cc.0, cc.1)),
                    memory_bytes: Some(total as u64),
                    multiprocessors: sms,
                    l2_bytes: l2,
                    pci_bus_id: pci,
                    extra,
                });
                devs.push(Device {
                    ctx,
                    streams,
                    events,
                    flush: None,
                    kernel: None,
                    multiprocessors: sms.unwrap_or(1),
                    lt: None,
                    cublas: None,
                    workspace: None,
                    cc,
                });
            }
            // Enable peer access wherever the driver allows it, and record
            // the matrix (the seeds' peer numbers depend on it).
            let n = devs.len();
            let mut peers = vec![vec![PeerAccess::Unsupported; n]; n];
            for a in 0..n {
                for b in (0..n).filter(|&b| b != a) {
                    let mut can = 0;
                    let (mut da, mut db) = (0, 0);
                    cu::cuDeviceGet(&mut da, a as i32);
                    cu::cuDeviceGet(&mut db, b as i32);
                    if cu::cuDeviceCanAccessPeer(&mut can, da, db) == cu::CUresult::CUDA_SUCCESS && can == 1 {
                        cu::cuCtxSetCurrent(devs[a].ctx);
                        let r = cu::cuCtxEnablePeerAccess(devs[b].ctx, 0);
                        if r == cu::CUresult::CUDA_SUCCESS || r == cu::CUresult::CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
                        {
                            peers[a][b] = PeerAccess::Enabled;
                        }
                    }
                }
            }
            Ok(CudaApi {
                devs,
                inv: Inventory { facts, peers },
                plans: Vec::new(),
                driver_version,
                nvml_driver: nvml
                    .as_ref()
                    .map_err(|e| e.clone())
                    .and_then(|n| n.driver_version().ok_or_else(|| "unknown".into())),
            })
        }
    }

    fn facts_json(&self) -> serde_json::Value {
        // Load cuBLASLt and NVRTC first, as the benchmarks will, so that the
        // process's map of loaded files (read once) lists them.
        let (lt, rtc) = (cublaslt_version(), nvrtc_version());
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        let with_file = |v: Result<String, String>, prefix: &str| match v {
            Ok(v) => format!("{v} ({})", library_file(&maps, prefix)),
            Err(why) => why,
        };
        let (major, minor) = (self.driver_version / 1000, (self.driver_version % 1000) / 10);
        self.inv.backend_facts(&[
            ("cuda_driver_api_version", format!("{major}.{minor}")),
            (
                "driver_version",
                match &self.nvml_driver {
                    Ok(v) => v.clone(),
                    Err(e) => format!("unknown ({e})"),
                },
            ),
            ("bindings", "cudarc 0.19, CUDA 12.8 API (runs on 12.x and 13.x drivers)".into()),
            ("libcuda", library_file(&maps, "libcuda.so")),
            ("cublaslt", with_file(lt, "libcublasLt.so")),
            ("nvrtc", with_file(rtc, "libnvrtc.so")),
        ])
    }

    fn enter(&self, device: usize) -> Result<&Device, String> {
        let d = self.devs.get(device).ok_or_else(|| format!("no CUDA device {device}"))?;
        ck("cuCtxSetCurrent", unsafe { cu::cuCtxSetCurrent(d.ctx) })?;
        Ok(d)
    }

    fn kernel(&mut self, device: usize) -> Result<cu::CUfunction, String> {
        self.enter(device)?;
        let d = &mut self.devs[device];
        let cc = d.cc;
        if d.kernel.is_none() {
            d.kernel = Some((|| {
                if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                    return Err("no NVRTC library (libnvrtc.so) to compile the copy kernel; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH".to_string());
                }
                // PTX for this GPU's own architecture, as nvcc -arch would
                // build it (NVRTC's default is an old virtual architecture,
                // which the driver then JIT-compiles); an NVRTC too old for
                // the GPU falls back to its default.
                let compile = |arch: Option<String>| {
                    let options = arch.into_iter().collect();
                    let opts = cudarc::nvrtc::CompileOptions { options, ..Default::default() };
                    std::panic::catch_unwind(|| cudarc::nvrtc::compile_ptx_with_opts(COPY_KERNEL, opts))
                        .map_err(|p| format!("NVRTC panicked: {}", crate::error::panic_text(&p)))?
                        .map_err(|e| format!("NVRTC could not compile the copy kernel: {e:?}"))
                };
                let ptx =
                    compile(Some(format!("--gpu-architecture=compute_{}{}", cc.0, cc.1))).or_else(|_| compile(None))?;
                let src = CString::new(ptx.to_src()).map_err(|e| e.to_string())?;
                unsafe {
                    let mut module = std::ptr::null_mut();
                    ck(
                        "cuModuleLoadData (copy kernel PTX)",
                        cu::cuModuleLoadData(&mut module, src.as_ptr() as *const c_void),
                    )?;
                    let mut f = std::ptr::null_mut();
                    ck("cuModuleGetFunction", cu::cuModuleGetFunction(&mut f, module, COPY_KERNEL_NAME.as_ptr()))?;
                    Ok(f)
                }
            })());
        }
        d.kernel.clone().expect("set above")
    }

    fn enqueue(&mut self, device: usize, stream: cu::CUstream, op: &Op) -> Result<(), String> {
        unsafe {
            match *op {
                Op::CopyEngine { dst, src } => ck(
                    "cuMemcpyDtoDAsync",
                    cu::cuMemcpyDtoDAsync_v2(dst.ptr, src.ptr, src.bytes.min(dst.bytes) as usize, stream),
                ),
                Op::Peer { dst, src } => ck(
                    "cuMemcpyPeerAsync",
                    cu::cuMemcpyPeerAsync(
                        dst.ptr,
                        self.devs[dst.device].ctx,
                        src.ptr,
                        self.devs[src.device].ctx,
                        src.bytes.min(dst.bytes) as usize,
                        stream,
                    ),
                ),
                Op::HostToDevice { dst, src } => ck(
                    "cuMemcpyHtoDAsync",
                    cu::cuMemcpyHtoDAsync_v2(dst.ptr, src as *const c_void, dst.bytes as usize, stream),
                ),
                Op::DeviceToHost { dst, src } => ck(
                    "cuMemcpyDtoHAsync",
                    cu::cuMemcpyDtoHAsync_v2(dst as *mut c_void, src.ptr, src.bytes as usize, stream),
                ),
                Op::KernelCopy { dst, src, launch } => {
                    let f = self.kernel(device)?;
                    let sms = self.devs[device].multiprocessors;
                    let (mut a, l) = CopyArgs::new(dst, src, launch, sms);
                    let mut params: [*mut c_void; 7] = [
                        &mut a.src as *mut _ as *mut c_void,
                        &mut a.dst as *mut _ as *mut c_void,
                        &mut a.n16 as *mut _ as *mut c_void,
                        &mut a.s8 as *mut _ as *mut c_void,
                        &mut a.d8 as *mut _ as *mut c_void,
                        &mut a.from8 as *mut _ as *mut c_void,
                        &mut a.to8 as *mut _ as *mut c_void,
                    ];
                    ck(
                        "cuLaunchKernel (copy kernel)",
                        cu::cuLaunchKernel(
                            f,
                            l.grid,
                            1,
                            1,
                            l.block,
                            1,
                            1,
                            0,
                            stream,
                            params.as_mut_ptr(),
                            std::ptr::null_mut(),
                        ),
                    )
                }
                Op::Gemm { plan, a, b, c } => self.gemm(plan, stream, a, b, c),
            }
        }
    }
}

impl GpuApi for CudaApi {
    fn sensor(&self, device: usize) -> crate::vocab::telemetry::SensorOpener {
        let pci = self.inv.facts.get(device).and_then(|f| f.pci_bus_id.clone());
        Box::new(move || {
            let pci = pci.ok_or("the CUDA driver gave no PCI bus id to find this GPU in NVML")?;
            super::nvml::NvmlSensor::open(&pci).map(|s| Box::new(s) as Box<dyn crate::vocab::telemetry::Sensor>)
        })
    }

    fn timer(&self) -> &'static str {
        "cuda_event"
    }

    fn inventory(&self) -> &Inventory {
        &self.inv
    }

    fn mem_info(&mut self, device: usize) -> Result<(u64, u64), String> {
        self.enter(device)?;
        let (mut free, mut total) = (0usize, 0usize);
        ck("cuMemGetInfo", unsafe { cu::cuMemGetInfo_v2(&mut free, &mut total) })?;
        Ok((free as u64, total as u64))
    }

    fn alloc(&mut self, device: usize, bytes: u64) -> Result<DevBuf, String> {
        self.enter(device)?;
        let mut ptr = 0;
        ck("cuMemAlloc", unsafe { cu::cuMemAlloc_v2(&mut ptr, bytes as usize) })?;
        Ok(DevBuf { device, ptr, bytes })
    }

    fn free(&mut self, buf: DevBuf) {
        if self.enter(buf.device).is_ok() {
            unsafe { cu::cuMemFree_v2(buf.ptr) };
        }
    }

    fn alloc_pinned(&mut self, bytes: u64) -> Result<*mut u8, String> {
        self.enter(0)?;
        let mut p = std::ptr::null_mut();
        // PORTABLE: pinned for every GPU's context, not only device 0's.
        const CU_MEMHOSTALLOC_PORTABLE: u32 = 0x01;
        ck("cuMemHostAlloc", unsafe { cu::cuMemHostAlloc(&mut p, bytes as usize, CU_MEMHOSTALLOC_PORTABLE) })?;
        Ok(p as *mut u8)
    }

    fn free_pinned(&mut self, ptr: *mut u8) {
        if self.enter(0).is_ok() {
            unsafe { cu::cuMemFreeHost(ptr as *mut c_void) };
        }
    }

    fn upload(&mut self, dst: DevBuf, src: &[u8]) -> Result<(), String> {
        self.enter(dst.device)?;
        ck("cuMemcpyHtoD", unsafe { cu::cuMemcpyHtoD_v2(dst.ptr, src.as_ptr() as *const c_void, src.len()) })
    }

    fn download(&mut self, src: DevBuf, dst: &mut [u8]) -> Result<(), String> {
        self.enter(src.device)?;
        ck("cuMemcpyDtoH", unsafe { cu::cuMemcpyDtoH_v2(dst.as_mut_ptr() as *mut c_void, src.ptr, dst.len()) })
    }

    fn flush_l2(&mut self, device: usize) -> Result<(), String> {
        self.enter(device)?;
        let l2 = self.inv.facts[device].l2_bytes.unwrap_or(64 << 20).max(1 << 20) as usize;
        let d = &mut self.devs[device];
        if d.flush.is_none() {
            // Twice the L2 size: writing it evicts every line of a copy.
            let mut p = 0;
            ck("cuMemAlloc (L2 flush buffer)", unsafe { cu::cuMemAlloc_v2(&mut p, 2 * l2) })?;
            d.flush = Some((p, 2 * l2));
        }
        let (p, n) = d.flush.expect("set above");
        unsafe {
            ck("cuMemsetD8Async (L2 flush)", cu::cuMemsetD8Async(p, 0, n, d.streams[0]))?;
            ck("cuStreamSynchronize", cu::cuStreamSynchronize(d.streams[0]))
        }
    }

    fn copy_method(&mut self, device: usize, method: &str) -> Result<(), String> {
        match method {
            "copy_engine" => Ok(()),
            "sm_kernel" => self.kernel(device).map(|_| ()),
            other => Err(format!("unknown copy method `{other}`")),
        }
    }

    fn gemm_method(&self, device: usize, dtype: Dtype) -> Result<String, String> {
        let cc = self.devs.get(device).map(|d| d.cc).unwrap_or((0, 0));
        match dtype {
            Dtype::F32 | Dtype::F16 => Ok("cublaslt".into()),
            Dtype::Tf32 | Dtype::Bf16 if cc.0 >= 8 => Ok("cublaslt".into()),
            Dtype::Tf32 | Dtype::Bf16 => {
                Err(format!("{dtype} tensor cores need compute capability 8.0; this GPU is {}.{}", cc.0, cc.1))
            }
            Dtype::Fp8 if cc >= (8, 9) => Ok("cublaslt".into()),
            Dtype::Fp8 => Err(format!("FP8 (E4M3) GEMM needs compute capability 8.9; this GPU is {}.{}", cc.0, cc.1)),
            Dtype::F64 => Err(format!("no CUDA GEMM for dtype `{dtype}`")),
        }
    }

    fn gemm_plan(&mut self, device: usize, spec: &GemmSpec, algos: u32) -> Result<GemmPlan, String> {
        let method = self.gemm_method(device, spec.dtype)?;
        let (m, n, k) = (spec.m, spec.n, spec.k);
        for v in [m, n, k] {
            i32::try_from(v).map_err(|_| format!("dimension {v} exceeds cuBLAS's 32-bit sizes"))?;
        }
        if spec.dtype == Dtype::Fp8 && (!m.is_multiple_of(16) || !n.is_multiple_of(16) || !k.is_multiple_of(16)) {
            return Err(format!("cuBLASLt FP8 needs m, n, k divisible by 16; got {m}×{n}×{k}"));
        }
        let mut plan = self.lt_plan(device, spec, algos)?;
        if algos > 1 && spec.dtype != Dtype::Fp8 {
            use cudarc::cublas::sys::{cublasComputeType_t as C, cudaDataType_t as T};
            let (ty, compute) = match spec.dtype {
                Dtype::F32 => (T::CUDA_R_32F, C::CUBLAS_COMPUTE_32F),
                Dtype::Tf32 => (T::CUDA_R_32F, C::CUBLAS_COMPUTE_32F_FAST_TF32),
                Dtype::F16 => (T::CUDA_R_16F, C::CUBLAS_COMPUTE_32F),
                _ => (T::CUDA_R_16BF, C::CUBLAS_COMPUTE_32F),
            };
            if self.cublas(device).is_ok() {
                plan.gemm_ex =
                    Some(GemmEx { call: BlasCall::of(spec.setting.layout, spec.m, spec.n, spec.k), ty, compute });
            }
        }
        let found = plan.algos.len() + plan.gemm_ex.is_some() as usize;
        self.plans.push(plan);
        Ok(GemmPlan { id: self.plans.len() - 1, method, algos: found })
    }

    fn gemm_use_algo(&mut self, plan: usize, index: usize) -> Result<String, String> {
        let p = self.plans.get_mut(plan).ok_or("unknown GEMM plan")?;
        let name = match p.algos.get(index) {
            Some(algo) => Self::algo_name(algo),
            None if index == p.algos.len() && p.gemm_ex.is_some() => {
                "cublasGemmEx, cuBLAS's own kernel choice (the call torch.matmul makes)".into()
            }
            None => return Err(format!("the plan has {} algorithms, not {}", p.algos.len(), index + 1)),
        };
        p.chosen = index;
        Ok(name)
    }

    fn gemm_workspace_bytes(&self, device: usize) -> Option<u64> {
        self.devs.get(device).and_then(|d| d.workspace).map(|w| w.1 as u64)
    }

    fn time(&mut self, device: usize, lanes: &[Op], n: u64) -> Result<f64, String> {
        timing::time_lanes(&mut Timed { api: self, device }, lanes, n)
    }
}

/// One CUDA device for the shared event timing ([`timing::time_lanes`]):
/// start on stream 0; stream 1 waits for it; both run; stream 0 waits for
/// stream 1's end; stop on stream 0.
struct Timed<'a> {
    api: &'a mut CudaApi,
    device: usize,
}

impl EventDevice for Timed<'_> {
    type Stream = cu::CUstream;
    type Event = cu::CUevent;

    fn resources(&mut self) -> Result<([cu::CUstream; 2], [cu::CUevent; 3]), String> {
        let d = self.api.enter(self.device)?;
        Ok(([d.streams[0], d.streams[1]], [d.events[0], d.events[1], d.events[2]]))
    }

    fn record(&mut self, event: cu::CUevent, stream: cu::CUstream) -> Result<(), String> {
        ck("cuEventRecord", unsafe { cu::cuEventRecord(event, stream) })
    }

    fn wait(&mut self, stream: cu::CUstream, event: cu::CUevent) -> Result<(), String> {
        ck("cuStreamWaitEvent", unsafe { cu::cuStreamWaitEvent(stream, event, 0) })
    }

    fn enqueue(&mut self, stream: cu::CUstream, op: &Op) -> Result<(), String> {
        self.api.enqueue(self.device, stream, op)
    }

    fn synchronize(&mut self, event: cu::CUevent) -> Result<(), String> {
        ck("cuEventSynchronize", unsafe { cu::cuEventSynchronize(event) })
    }

    fn elapsed_ms(&mut self, start: cu::CUevent, end: cu::CUevent) -> Result<f32, String> {
        let mut ms = 0f32;
        ck("cuEventElapsedTime", unsafe { cu::cuEventElapsedTime(&mut ms, start, end) })?;
        Ok(ms)
    }
}
