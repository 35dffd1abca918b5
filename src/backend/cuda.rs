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
//! This file is longer than 400 lines: it is the whole CUDA driver surface
//! (device discovery, the NVRTC copy kernel, cuBLAS and cuBLASLt plans,
//! enqueueing), one driver call per step with its own error message, kept
//! together so the calls can be read against each other.

use std::cell::RefCell;
use std::ffi::{c_void, CStr, CString};
use std::rc::Rc;

use cudarc::driver::sys as cu;

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

/// A cuBLASLt matmul, described once: the descriptor, the layouts of X, Y
/// and C ([`BlasCall`]), the heuristic's candidate algorithms and the one in
/// use.
struct LtPlan {
    device: usize,
    dtype: Dtype,
    desc: cudarc::cublaslt::sys::cublasLtMatmulDesc_t,
    layouts: [cudarc::cublaslt::sys::cublasLtMatrixLayout_t; 3],
    algos: Vec<cudarc::cublaslt::sys::cublasLtMatmulAlgo_t>,
    /// One more candidate after `algos`: `cublasGemmEx` with cuBLAS's own
    /// choice of kernel, the call `torch.matmul` makes (not for FP8, and
    /// only where cuBLAS loads). Its selection can reach kernels the Lt
    /// heuristic does not offer: on an H200, bf16 4096³ ran at 0.87× of
    /// `torch.matmul` with any of the Lt heuristic's first 32.
    gemm_ex: Option<GemmEx>,
    chosen: usize,
}

/// The `cublasGemmEx` form of a plan.
#[derive(Clone, Copy)]
struct GemmEx {
    call: BlasCall,
    ty: cudarc::cublas::sys::cudaDataType_t,
    compute: cudarc::cublas::sys::cublasComputeType_t,
}

/// The cuBLAS workspace PyTorch gives a handle on this compute capability
/// (`CUBLAS_WORKSPACE_CONFIG`'s default in PyTorch's CublasHandlePool.cpp,
/// which its cuBLASLt calls share): `:4096:8` (32 MiB) on Hopper and later,
/// as cuBLAS's documentation recommends there, and `:4096:2:16:8`
/// (8 MiB + 128 KiB) before.
pub fn torch_workspace_bytes(cc: (i32, i32)) -> usize {
    if cc.0 >= 9 {
        4096 * 8 * 1024
    } else {
        4096 * 1024 * 2 + 16 * 1024 * 8
    }
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

    /// The device's cuBLAS handle. Its stream and workspace (cuBLASLt's,
    /// which the workspace needs allocated first) are set at each call:
    /// setting the stream resets the workspace.
    fn cublas(&mut self, device: usize) -> Result<cudarc::cublas::sys::cublasHandle_t, String> {
        use cudarc::cublas::sys as bl;
        self.lt(device)?;
        let d = &mut self.devs[device];
        if d.cublas.is_none() {
            d.cublas = Some(unsafe {
                if !bl::is_culib_present() {
                    Err("no cuBLAS library (libcublas.so) found".to_string())
                } else {
                    let mut h = std::ptr::null_mut();
                    match bl::cublasCreate_v2(&mut h) {
                        bl::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(h),
                        s => Err(format!("cublasCreate failed: {s:?}")),
                    }
                }
            });
        }
        d.cublas.clone().expect("set above")
    }

    fn lt(&mut self, device: usize) -> Result<cudarc::cublaslt::sys::cublasLtHandle_t, String> {
        use cudarc::cublaslt::sys as lt;
        self.enter(device)?;
        let d = &mut self.devs[device];
        if d.lt.is_none() {
            d.lt = Some(unsafe {
                if !lt::is_culib_present() {
                    Err("no cuBLASLt library (libcublasLt.so) found; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH"
                        .to_string())
                } else {
                    let mut h = std::ptr::null_mut();
                    match lt::cublasLtCreate(&mut h) {
                        lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS => Ok(h),
                        s => Err(format!("cublasLtCreate failed: {s:?}")),
                    }
                }
            });
            if d.workspace.is_none() {
                let bytes = torch_workspace_bytes(d.cc);
                let mut p = 0;
                if unsafe { cu::cuMemAlloc_v2(&mut p, bytes) } == cu::CUresult::CUDA_SUCCESS {
                    d.workspace = Some((p, bytes));
                }
            }
        }
        d.lt.clone().expect("set above")
    }

    fn lt_plan(&mut self, device: usize, spec: &GemmSpec, want: u32) -> Result<LtPlan, String> {
        use cudarc::cublaslt::sys as lt;
        let h = self.lt(device)?;
        let ws = self.devs[device].workspace.map(|w| w.1).unwrap_or(0);
        let st = |what: &str, s: lt::cublasStatus_t| {
            if s == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
                Ok(())
            } else {
                Err(format!("{what} failed: {s:?}"))
            }
        };
        let call = BlasCall::of(spec.setting.layout, spec.m, spec.n, spec.k);
        use lt::cudaDataType_t as T;
        let (input, output, compute) = match spec.dtype {
            Dtype::F32 => (T::CUDA_R_32F, T::CUDA_R_32F, lt::cublasComputeType_t::CUBLAS_COMPUTE_32F),
            Dtype::Tf32 => (T::CUDA_R_32F, T::CUDA_R_32F, lt::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32),
            Dtype::F16 => (T::CUDA_R_16F, T::CUDA_R_16F, lt::cublasComputeType_t::CUBLAS_COMPUTE_32F),
            Dtype::Bf16 => (T::CUDA_R_16BF, T::CUDA_R_16BF, lt::cublasComputeType_t::CUBLAS_COMPUTE_32F),
            Dtype::Fp8 => (T::CUDA_R_8F_E4M3, T::CUDA_R_16BF, lt::cublasComputeType_t::CUBLAS_COMPUTE_32F),
            Dtype::F64 => return Err("no CUDA GEMM planned for f64".into()),
        };
        unsafe {
            let mut desc = std::ptr::null_mut();
            st("cublasLtMatmulDescCreate", lt::cublasLtMatmulDescCreate(&mut desc, compute, T::CUDA_R_32F))?;
            let mut layouts = [std::ptr::null_mut(); 3];
            // What follows can fail; the descriptor and layouts made so far
            // are destroyed then (a skipped plan is a normal outcome).
            let built = (|| -> Result<Vec<lt::cublasLtMatmulAlgo_t>, String> {
                // Attributes by their bytes: TRANSA/TRANSB are int32
                // (cublasOperation_t), FAST_ACCUM an int8.
                let set = |attr: lt::cublasLtMatmulDescAttributes_t, value: &[u8]| {
                    st(
                        &format!("cublasLtMatmulDescSetAttribute({attr:?})"),
                        lt::cublasLtMatmulDescSetAttribute(desc, attr, value.as_ptr() as *const c_void, value.len()),
                    )
                };
                use lt::cublasLtMatmulDescAttributes_t as D;
                let op = |t: bool| (t as i32).to_ne_bytes();
                set(D::CUBLASLT_MATMUL_DESC_TRANSA, &op(call.trans_x))?;
                set(D::CUBLASLT_MATMUL_DESC_TRANSB, &op(call.trans_y))?;
                if spec.dtype == Dtype::Fp8 {
                    set(D::CUBLASLT_MATMUL_DESC_FAST_ACCUM, &[(spec.setting.accum == Some(Fp8Accum::Fast)) as u8])?;
                }
                let (x, y) = (call.x, call.y);
                st(
                    "cublasLtMatrixLayoutCreate(X)",
                    lt::cublasLtMatrixLayoutCreate(&mut layouts[0], input, x.0, x.1, x.2 as i64),
                )?;
                st(
                    "cublasLtMatrixLayoutCreate(Y)",
                    lt::cublasLtMatrixLayoutCreate(&mut layouts[1], input, y.0, y.1, y.2 as i64),
                )?;
                st(
                    "cublasLtMatrixLayoutCreate(C)",
                    lt::cublasLtMatrixLayoutCreate(&mut layouts[2], output, call.rows, call.cols, call.ldc as i64),
                )?;
                let mut pref = std::ptr::null_mut();
                st("cublasLtMatmulPreferenceCreate", lt::cublasLtMatmulPreferenceCreate(&mut pref))?;
                st(
                    "cublasLtMatmulPreferenceSetAttribute",
                    lt::cublasLtMatmulPreferenceSetAttribute(
                        pref,
                        lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                        &ws as *const usize as *const c_void,
                        std::mem::size_of::<usize>(),
                    ),
                )?;
                let want = want.max(1) as usize;
                let mut results: Vec<lt::cublasLtMatmulHeuristicResult_t> = vec![std::mem::zeroed(); want];
                let mut found = 0;
                let r = lt::cublasLtMatmulAlgoGetHeuristic(
                    h,
                    desc,
                    layouts[0],
                    layouts[1],
                    layouts[2],
                    layouts[2],
                    pref,
                    want as i32,
                    results.as_mut_ptr(),
                    &mut found,
                );
                lt::cublasLtMatmulPreferenceDestroy(pref);
                st("cublasLtMatmulAlgoGetHeuristic", r)?;
                let algos: Vec<_> = results
                    .iter()
                    .take(found.max(0) as usize)
                    .filter(|r| r.state == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS)
                    .map(|r| r.algo)
                    .collect();
                if algos.is_empty() {
                    return Err(format!(
                        "cuBLASLt has no {} algorithm for {}×{}×{} ({}) on this GPU",
                        spec.dtype,
                        spec.m,
                        spec.n,
                        spec.k,
                        spec.setting.label()
                    ));
                }
                Ok(algos)
            })();
            match built {
                Ok(algos) => Ok(LtPlan { device, dtype: spec.dtype, desc, layouts, algos, gemm_ex: None, chosen: 0 }),
                Err(e) => {
                    for l in layouts.into_iter().filter(|l| !l.is_null()) {
                        lt::cublasLtMatrixLayoutDestroy(l);
                    }
                    lt::cublasLtMatmulDescDestroy(desc);
                    Err(e)
                }
            }
        }
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

    fn gemm(&mut self, plan: usize, stream: cu::CUstream, a: DevBuf, b: DevBuf, c: DevBuf) -> Result<(), String> {
        use cudarc::cublaslt::sys as lt;
        let device = self.plans.get(plan).ok_or("unknown GEMM plan")?.device;
        let h = self.lt(device)?;
        let (ws, ws_bytes) = self.devs[device].workspace.unwrap_or((0, 0));
        let (alpha, beta) = (1.0f32, 0.0f32);
        if let (Some(ex), true) = (self.plans[plan].gemm_ex, self.plans[plan].chosen == self.plans[plan].algos.len()) {
            use cudarc::cublas::sys as bl;
            let h = self.cublas(device)?;
            let c32 = |v: u64| v as i32; // sizes were checked to fit when planned
            let op = |t: bool| if t { bl::cublasOperation_t::CUBLAS_OP_T } else { bl::cublasOperation_t::CUBLAS_OP_N };
            let k = ex.call;
            // X is the B buffer, Y the A buffer ([`BlasCall`]).
            let ws = self.devs[device].workspace;
            let s = unsafe {
                // Setting the stream resets cuBLAS's workspace to its default
                // pool: give it PyTorch's workspace again, as PyTorch does.
                bl::cublasSetStream_v2(h, stream as _);
                if let Some((p, bytes)) = ws {
                    bl::cublasSetWorkspace_v2(h, p as *mut c_void, bytes);
                }
                bl::cublasGemmEx(
                    h,
                    op(k.trans_x),
                    op(k.trans_y),
                    c32(k.rows),
                    c32(k.cols),
                    c32(k.depth),
                    &alpha as *const f32 as *const c_void,
                    b.ptr as *const c_void,
                    ex.ty,
                    c32(k.x.2),
                    a.ptr as *const c_void,
                    ex.ty,
                    c32(k.y.2),
                    &beta as *const f32 as *const c_void,
                    c.ptr as *mut c_void,
                    ex.ty,
                    c32(k.ldc),
                    ex.compute,
                    bl::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            };
            if s != bl::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
                return Err(format!("cublasGemmEx ({}) failed: {s:?}", self.plans[plan].dtype));
            }
            return Ok(());
        }
        let p = &self.plans[plan];
        // X is the B buffer, Y the A buffer ([`BlasCall`]).
        let s = unsafe {
            lt::cublasLtMatmul(
                h,
                p.desc,
                &alpha as *const f32 as *const c_void,
                b.ptr as *const c_void,
                p.layouts[0],
                a.ptr as *const c_void,
                p.layouts[1],
                &beta as *const f32 as *const c_void,
                c.ptr as *const c_void,
                p.layouts[2],
                c.ptr as *mut c_void,
                p.layouts[2],
                &p.algos[p.chosen],
                ws as *mut c_void,
                ws_bytes,
                stream as _,
            )
        };
        if s != lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(format!("cublasLtMatmul ({}) failed: {s:?}", p.dtype));
        }
        Ok(())
    }

    /// How cuBLASLt names an algorithm: its id, tile, stages and split-k.
    fn algo_name(algo: &cudarc::cublaslt::sys::cublasLtMatmulAlgo_t) -> String {
        use cudarc::cublaslt::sys as lt;
        // These four attributes are 32-bit integers.
        let get = |attr: lt::cublasLtMatmulAlgoConfigAttributes_t| -> Option<i32> {
            let mut v = 0i32;
            let mut written = 0usize;
            let s = unsafe {
                lt::cublasLtMatmulAlgoConfigGetAttribute(algo, attr, &mut v as *mut i32 as *mut c_void, 4, &mut written)
            };
            (s == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS).then_some(v)
        };
        use lt::cublasLtMatmulAlgoConfigAttributes_t as A;
        let mut out = format!("algo {}", get(A::CUBLASLT_ALGO_CONFIG_ID).map_or("?".into(), |v| v.to_string()));
        for (name, attr) in [
            ("tile", A::CUBLASLT_ALGO_CONFIG_TILE_ID),
            ("stages", A::CUBLASLT_ALGO_CONFIG_STAGES_ID),
            ("split-k", A::CUBLASLT_ALGO_CONFIG_SPLITK_NUM),
        ] {
            if let Some(v) = get(attr) {
                out += &format!(" {name} {v}");
            }
        }
        out
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
