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

use crate::bench::gpu::timing::{self, EventDevice};
use crate::bench::gpu::{
    CopyArgs, DevBuf, GemmPlan, GpuApi, GpuFacts, Inventory, Op, PeerAccess, SharedApi, COPY_KERNEL, COPY_KERNEL_NAME,
};
use crate::vocab::kinds::Dtype;

fn ck(what: &str, r: cu::CUresult) -> Result<(), String> {
    r.result().map_err(|e| format!("{what} failed: {:?}", e.0))
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
    cublas: Option<Result<cudarc::cublas::sys::cublasHandle_t, String>>,
    lt: Option<Result<cudarc::cublaslt::sys::cublasLtHandle_t, String>>,
    workspace: Option<(cu::CUdeviceptr, usize)>,
    cc: (i32, i32),
}

struct LtPlan {
    desc: cudarc::cublaslt::sys::cublasLtMatmulDesc_t,
    layouts: [cudarc::cublaslt::sys::cublasLtMatrixLayout_t; 3],
    algo: cudarc::cublaslt::sys::cublasLtMatmulAlgo_t,
}

enum PlanKind {
    GemmEx { dtype: Dtype, m: i32, n: i32, k: i32 },
    Lt(LtPlan),
}

/// The CUDA driver state of this process: one primary context per GPU.
pub struct CudaApi {
    devs: Vec<Device>,
    inv: Inventory,
    plans: Vec<(usize, PlanKind)>,
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
                    cublas: None,
                    lt: None,
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
        if d.kernel.is_none() {
            d.kernel = Some((|| {
                if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                    return Err("no NVRTC library (libnvrtc.so) to compile the copy kernel; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH".to_string());
                }
                let ptx = std::panic::catch_unwind(|| cudarc::nvrtc::compile_ptx(COPY_KERNEL))
                    .map_err(|p| format!("NVRTC panicked: {}", crate::error::panic_text(&p)))?
                    .map_err(|e| format!("NVRTC could not compile the copy kernel: {e:?}"))?;
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

    fn cublas(&mut self, device: usize) -> Result<cudarc::cublas::sys::cublasHandle_t, String> {
        use cudarc::cublas::sys as bl;
        self.enter(device)?;
        let d = &mut self.devs[device];
        if d.cublas.is_none() {
            d.cublas = Some(unsafe {
                if !bl::is_culib_present() {
                    Err("no cuBLAS library (libcublas.so) found; put the CUDA toolkit's lib64 on LD_LIBRARY_PATH"
                        .to_string())
                } else {
                    let mut h = std::ptr::null_mut();
                    match bl::cublasCreate_v2(&mut h) {
                        bl::cublasStatus_t::CUBLAS_STATUS_SUCCESS => {
                            bl::cublasSetStream_v2(h, d.streams[0] as _);
                            Ok(h)
                        }
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
                let bytes = 64 << 20;
                let mut p = 0;
                if unsafe { cu::cuMemAlloc_v2(&mut p, bytes) } == cu::CUresult::CUDA_SUCCESS {
                    d.workspace = Some((p, bytes));
                }
            }
        }
        d.lt.clone().expect("set above")
    }

    fn lt_plan(&mut self, device: usize, m: u64, n: u64, k: u64) -> Result<LtPlan, String> {
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
        unsafe {
            let mut desc = std::ptr::null_mut();
            st(
                "cublasLtMatmulDescCreate",
                lt::cublasLtMatmulDescCreate(
                    &mut desc,
                    lt::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    lt::cudaDataType_t::CUDA_R_32F,
                ),
            )?;
            // cublasOperation_t, an int32 attribute (cuBLASLt has no enum of its own).
            let t = cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T as i32;
            st(
                "cublasLtMatmulDescSetAttribute(TRANSA)",
                lt::cublasLtMatmulDescSetAttribute(
                    desc,
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                    &t as *const _ as *const c_void,
                    std::mem::size_of_val(&t),
                ),
            )?;
            // FP8 needs the "TN" layout: A is k×m (k-contiguous), B k×n.
            let mut layouts = [std::ptr::null_mut(); 3];
            let e4m3 = lt::cudaDataType_t::CUDA_R_8F_E4M3;
            st("cublasLtMatrixLayoutCreate(A)", lt::cublasLtMatrixLayoutCreate(&mut layouts[0], e4m3, k, m, k as i64))?;
            st("cublasLtMatrixLayoutCreate(B)", lt::cublasLtMatrixLayoutCreate(&mut layouts[1], e4m3, k, n, k as i64))?;
            st(
                "cublasLtMatrixLayoutCreate(C)",
                lt::cublasLtMatrixLayoutCreate(&mut layouts[2], lt::cudaDataType_t::CUDA_R_16BF, m, n, m as i64),
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
            let mut result = std::mem::MaybeUninit::<lt::cublasLtMatmulHeuristicResult_t>::zeroed();
            let mut found = 0;
            st(
                "cublasLtMatmulAlgoGetHeuristic",
                lt::cublasLtMatmulAlgoGetHeuristic(
                    h,
                    desc,
                    layouts[0],
                    layouts[1],
                    layouts[2],
                    layouts[2],
                    pref,
                    1,
                    result.as_mut_ptr(),
                    &mut found,
                ),
            )?;
            lt::cublasLtMatmulPreferenceDestroy(pref);
            if found == 0 {
                return Err(format!("cuBLASLt has no FP8 algorithm for {m}×{n}×{k} on this GPU"));
            }
            Ok(LtPlan { desc, layouts, algo: result.assume_init().algo })
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
        let device = self.plans.get(plan).ok_or("unknown GEMM plan")?.0;
        let (alpha, beta) = (1.0f32, 0.0f32);
        let gemm_ex = match &self.plans[plan].1 {
            PlanKind::GemmEx { dtype, m, n, k } => Some((*dtype, *m, *n, *k)),
            PlanKind::Lt(_) => None,
        };
        if let Some((dtype, m, n, k)) = gemm_ex {
            use cudarc::cublas::sys as bl;
            let h = self.cublas(device)?;
            let f32_ = bl::cudaDataType_t::CUDA_R_32F;
            let (ty, compute) = match dtype {
                Dtype::F32 => (f32_, bl::cublasComputeType_t::CUBLAS_COMPUTE_32F),
                Dtype::Tf32 => (f32_, bl::cublasComputeType_t::CUBLAS_COMPUTE_32F_FAST_TF32),
                Dtype::F16 => (bl::cudaDataType_t::CUDA_R_16F, bl::cublasComputeType_t::CUBLAS_COMPUTE_32F),
                Dtype::Bf16 => (bl::cudaDataType_t::CUDA_R_16BF, bl::cublasComputeType_t::CUBLAS_COMPUTE_32F),
                Dtype::F64 | Dtype::Fp8 => return Err(format!("cublasGemmEx is not planned for {dtype}")),
            };
            // C has the input type (f32 for tf32), accumulation in f32.
            let s = unsafe {
                bl::cublasSetStream_v2(h, stream as _);
                bl::cublasGemmEx(
                    h,
                    bl::cublasOperation_t::CUBLAS_OP_T,
                    bl::cublasOperation_t::CUBLAS_OP_N,
                    m,
                    n,
                    k,
                    &alpha as *const f32 as *const c_void,
                    a.ptr as *const c_void,
                    ty,
                    k,
                    b.ptr as *const c_void,
                    ty,
                    k,
                    &beta as *const f32 as *const c_void,
                    c.ptr as *mut c_void,
                    ty,
                    m,
                    compute,
                    bl::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                )
            };
            if s != bl::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
                return Err(format!("cublasGemmEx ({dtype}, {m}×{n}×{k}) failed: {s:?}"));
            }
            return Ok(());
        }
        use cudarc::cublaslt::sys as lt;
        let h = self.lt(device)?;
        let (ws, ws_bytes) = self.devs[device].workspace.unwrap_or((0, 0));
        let PlanKind::Lt(p) = &self.plans[plan].1 else { unreachable!("checked above") };
        let s = unsafe {
            lt::cublasLtMatmul(
                h,
                p.desc,
                &alpha as *const f32 as *const c_void,
                a.ptr as *const c_void,
                p.layouts[0],
                b.ptr as *const c_void,
                p.layouts[1],
                &beta as *const f32 as *const c_void,
                c.ptr as *const c_void,
                p.layouts[2],
                c.ptr as *mut c_void,
                p.layouts[2],
                &p.algo,
                ws as *mut c_void,
                ws_bytes,
                stream as _,
            )
        };
        if s != lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(format!("cublasLtMatmul (fp8) failed: {s:?}"));
        }
        Ok(())
    }
}

impl GpuApi for CudaApi {
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
            Dtype::F32 | Dtype::F16 => Ok("cublas_gemm_ex".into()),
            Dtype::Tf32 | Dtype::Bf16 if cc.0 >= 8 => Ok("cublas_gemm_ex".into()),
            Dtype::Tf32 | Dtype::Bf16 => {
                Err(format!("{dtype} tensor cores need compute capability 8.0; this GPU is {}.{}", cc.0, cc.1))
            }
            Dtype::Fp8 if cc >= (8, 9) => Ok("cublaslt".into()),
            Dtype::Fp8 => Err(format!("FP8 (E4M3) GEMM needs compute capability 8.9; this GPU is {}.{}", cc.0, cc.1)),
            Dtype::F64 => Err(format!("no CUDA GEMM for dtype `{dtype}`")),
        }
    }

    fn gemm_plan(&mut self, device: usize, dtype: Dtype, m: u64, n: u64, k: u64) -> Result<GemmPlan, String> {
        let method = self.gemm_method(device, dtype)?;
        let fits = |v: u64| i32::try_from(v).map_err(|_| format!("dimension {v} exceeds cuBLAS's 32-bit sizes"));
        let (mi, ni, ki) = (fits(m)?, fits(n)?, fits(k)?);
        let kind = if dtype == Dtype::Fp8 {
            if !m.is_multiple_of(16) || !n.is_multiple_of(16) || !k.is_multiple_of(16) {
                return Err(format!("cuBLASLt FP8 needs m, n, k divisible by 16; got {m}×{n}×{k}"));
            }
            PlanKind::Lt(self.lt_plan(device, m, n, k)?)
        } else {
            self.cublas(device)?;
            PlanKind::GemmEx { dtype, m: mi, n: ni, k: ki }
        };
        self.plans.push((device, kind));
        Ok(GemmPlan { id: self.plans.len() - 1, method })
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
