//! The HIP backend (feature `hip`): AMD GPUs through hip-sys, linked
//! against `libamdhip64` at build time (`HIP_PATH=/usr` with Debian's
//! `libamdhip64-dev`, or `/opt/rocm`). On a machine with the library and no
//! AMD GPU, `hipGetDeviceCount` answers `hipErrorNoDevice` and every HIP
//! benchmark is recorded as skipped with that reason.
//!
//! ABI: hip-sys's bindings were generated for HIP 5.4, and ROCm 6 changed
//! some structure layouts (`hipDeviceProp_t` among them). This file
//! therefore never passes a HIP structure: it uses only calls whose
//! arguments are scalars, pointers and enums whose values did not change
//! (`hipGetDeviceCount`, `hipDeviceGetName`, `hipDeviceTotalMem`,
//! `hipDeviceGetPCIBusId`, `hipDeviceGetAttribute` for the CUDA-compatible
//! attributes, `hipMalloc`/`hipFree`, `hipHostMalloc`/`hipHostFree`,
//! `hipMemcpy[Async]`, `hipMemcpyPeerAsync`, `hipMemsetAsync`,
//! `hipMemGetInfo`, streams and events, `hipDeviceCanAccessPeer`,
//! `hipDeviceEnablePeerAccess`, `hipRuntimeGetVersion`). The gfx
//! architecture and the partition modes come from sysfs (KFD topology and
//! amdgpu's `current_compute_partition` / `current_memory_partition`).
//!
//! GEMM goes through hipBLAS, loaded at run time ([`super::hipblas`]; Debian
//! ships none, so CI checks only that its absence is a clear skip). Not here
//! yet: FP8 (hipBLASLt), recorded as skipped with that reason. The
//! `sm_kernel` copy (also the peer-write kernel) is compiled by hipRTC,
//! loaded at run time ([`super::hiprtc`]). The
//! benchmark logic is [`crate::bench::gpu`], shared with CUDA, and so is the
//! event-timing choreography ([`crate::bench::gpu::timing`]).
//!
//! This file is longer than 400 lines: it is the whole HIP runtime surface
//! (device discovery from the runtime and sysfs, enqueueing, hipBLAS
//! plans), with the ABI caveats above applying to every call in it.

use std::cell::RefCell;
use std::ffi::{c_char as libc_char, c_void, CStr};
use std::rc::Rc;

use hip_sys::hiprt as hip;

use crate::bench::gpu::blas::BlasCall;
use crate::bench::gpu::timing::{self, EventDevice};
use crate::bench::gpu::{
    CopyArgs, DevBuf, GemmPlan, GemmSpec, GpuApi, GpuFacts, Inventory, Op, PeerAccess, SharedApi, COPY_KERNEL,
    COPY_KERNEL_NAME,
};
use crate::vocab::kinds::Dtype;

fn ck(what: &str, r: hip::hipError_t) -> Result<(), String> {
    if r == hip::hipError_t::hipSuccess {
        Ok(())
    } else {
        Err(format!("{what} failed: {r:?}"))
    }
}

/// The HIP backend, probed on first use.
pub fn backend() -> super::GpuBackend {
    super::GpuBackend::new("hip", || {
        HipApi::open().map(|api| {
            let facts = api.facts_json();
            (Rc::new(RefCell::new(api)) as SharedApi, facts)
        })
    })
}

struct Device {
    streams: Vec<hip::hipStream_t>,
    /// [start, stop, end of the second lane]
    events: Vec<hip::hipEvent_t>,
    flush: Option<(*mut c_void, usize)>,
    /// The copy kernel, compiled by hipRTC on first use.
    kernel: Option<Result<hip::hipFunction_t, String>>,
}

/// The HIP runtime state of this process.
pub struct HipApi {
    devs: Vec<Device>,
    inv: Inventory,
    runtime_version: i32,
    /// hipBLAS, loaded on first use; one handle per device.
    blas: Option<Result<super::hipblas::HipBlas, String>>,
    /// hipRTC, loaded on first use.
    rtc: Option<Result<super::hiprtc::HipRtc, String>>,
    handles: Vec<Option<*mut c_void>>,
    /// (device, dtype, m, n, k) per plan.
    plans: Vec<(usize, Dtype, BlasCall)>,
}

/// `gfx_target_version` 90402 → `gfx942`, 90010 → `gfx90a`.
pub fn gfx_name(target_version: u32) -> String {
    let (major, minor, step) = (target_version / 10000, (target_version / 100) % 100, target_version % 100);
    format!("gfx{major}{minor:x}{step:x}")
}

/// The KFD topology node whose PCI location matches `pci` (`0000:c1:00.0`),
/// as (gfx name, properties).
fn kfd_node(pci: &str) -> Option<(String, std::collections::BTreeMap<String, String>)> {
    let (domain, rest) = pci.split_once(':')?;
    let (bus, rest) = rest.split_once(':')?;
    let (dev, func) = rest.split_once('.')?;
    let location = (u32::from_str_radix(bus, 16).ok()? << 8)
        | (u32::from_str_radix(dev, 16).ok()? << 3)
        | u32::from_str_radix(func, 16).ok()?;
    let domain = u32::from_str_radix(domain, 16).ok()?;
    for node in std::fs::read_dir("/sys/class/kfd/kfd/topology/nodes").ok()?.flatten() {
        let Ok(text) = std::fs::read_to_string(node.path().join("properties")) else { continue };
        let props: std::collections::BTreeMap<String, String> = text
            .lines()
            .filter_map(|l| l.split_once(' ').map(|(k, v)| (k.to_string(), v.trim().to_string())))
            .collect();
        let get = |k: &str| props.get(k).and_then(|v| v.parse::<u32>().ok());
        if get("location_id") == Some(location) && get("domain").unwrap_or(0) == domain {
            return Some((get("gfx_target_version").map(gfx_name).unwrap_or_default(), props));
        }
    }
    None
}

impl HipApi {
    /// Initialise the runtime and open every GPU, or say why not.
    pub fn open() -> Result<HipApi, String> {
        unsafe {
            let mut count = 0;
            let r = hip::hipGetDeviceCount(&mut count);
            if r != hip::hipError_t::hipSuccess {
                return Err(format!("hipGetDeviceCount answered {r:?}: no usable AMD GPU on this machine"));
            }
            if count == 0 {
                return Err("the HIP runtime found no AMD GPU".into());
            }
            let mut runtime_version = 0;
            hip::hipRuntimeGetVersion(&mut runtime_version);
            let mut devs = Vec::new();
            let mut facts = Vec::new();
            for ordinal in 0..count {
                ck("hipSetDevice", hip::hipSetDevice(ordinal))?;
                let mut name = [0 as libc_char; 256];
                ck("hipDeviceGetName", hip::hipDeviceGetName(name.as_mut_ptr(), 255, ordinal))?;
                let name = CStr::from_ptr(name.as_ptr()).to_string_lossy().into_owned();
                let mut total = 0usize;
                ck("hipDeviceTotalMem", hip::hipDeviceTotalMem(&mut total, ordinal))?;
                let attr = |a: hip::hipDeviceAttribute_t| {
                    let mut v = 0;
                    (hip::hipDeviceGetAttribute(&mut v, a, ordinal) == hip::hipError_t::hipSuccess).then_some(v)
                };
                let cus = attr(hip::hipDeviceAttribute_t::hipDeviceAttributeMultiprocessorCount).map(|v| v as u32);
                let l2 = attr(hip::hipDeviceAttribute_t::hipDeviceAttributeL2CacheSize).map(|v| v as u64);
                let mut bus = [0 as libc_char; 64];
                let pci = (hip::hipDeviceGetPCIBusId(bus.as_mut_ptr(), 63, ordinal) == hip::hipError_t::hipSuccess)
                    .then(|| CStr::from_ptr(bus.as_ptr()).to_string_lossy().to_lowercase());
                let mut extra = std::collections::BTreeMap::new();
                let mut arch = None;
                if let Some(p) = &pci {
                    if let Some((gfx, props)) = kfd_node(p) {
                        arch = Some(gfx).filter(|g| !g.is_empty());
                        for k in ["simd_count", "simd_per_cu", "max_engine_clk_fcompute", "num_xcc"] {
                            if let Some(v) = props.get(k) {
                                extra.insert(k.to_string(), v.clone());
                            }
                        }
                    }
                    for f in ["current_compute_partition", "current_memory_partition"] {
                        if let Ok(v) = std::fs::read_to_string(format!("/sys/bus/pci/devices/{p}/{f}")) {
                            extra.insert(f.to_string(), v.trim().to_string());
                        }
                    }
                }
                let mut streams = Vec::new();
                for _ in 0..2 {
                    let mut s = std::ptr::null_mut();
                    ck(
                        "hipStreamCreateWithFlags",
                        hip::hipStreamCreateWithFlags(&mut s, 1 /* hipStreamNonBlocking */),
                    )?;
                    streams.push(s);
                }
                let mut events = Vec::new();
                for _ in 0..3 {
                    let mut e = std::ptr::null_mut();
                    ck("hipEventCreate", hip::hipEventCreate(&mut e))?;
                    events.push(e);
                }
                facts.push(GpuFacts {
                    ordinal: ordinal as usize,
                    name,
                    uuid: None,
                    arch,
                    memory_bytes: Some(total as u64),
                    multiprocessors: cus,
                    l2_bytes: l2,
                    pci_bus_id: pci,
                    extra,
                });
                devs.push(Device { streams, events, flush: None, kernel: None });
            }
            let n = devs.len();
            let mut peers = vec![vec![PeerAccess::Unsupported; n]; n];
            for (a, row) in peers.iter_mut().enumerate() {
                for b in (0..n).filter(|&b| b != a) {
                    let mut can = 0;
                    if hip::hipDeviceCanAccessPeer(&mut can, a as i32, b as i32) == hip::hipError_t::hipSuccess
                        && can == 1
                    {
                        hip::hipSetDevice(a as i32);
                        let r = hip::hipDeviceEnablePeerAccess(b as i32, 0);
                        if r == hip::hipError_t::hipSuccess || r == hip::hipError_t::hipErrorPeerAccessAlreadyEnabled {
                            row[b] = PeerAccess::Enabled;
                        }
                    }
                }
            }
            Ok(HipApi {
                handles: vec![None; devs.len()],
                devs,
                inv: Inventory { facts, peers },
                runtime_version,
                blas: None,
                rtc: None,
                plans: Vec::new(),
            })
        }
    }

    fn facts_json(&self) -> serde_json::Value {
        let v = self.runtime_version;
        self.inv.backend_facts(&[
            // HIP_VERSION = major * 10^7 + minor * 10^5 + patch.
            ("hip_runtime_version", format!("{}.{}.{}", v / 10_000_000, (v / 100_000) % 100, v % 100_000)),
            ("bindings", "hip-sys 0.1 (HIP 5.4 headers; only layout-stable calls are used)".into()),
        ])
    }

    fn enter(&self, device: usize) -> Result<&Device, String> {
        let d = self.devs.get(device).ok_or_else(|| format!("no HIP device {device}"))?;
        ck("hipSetDevice", unsafe { hip::hipSetDevice(device as i32) })?;
        Ok(d)
    }

    /// The copy kernel on `device`: compiled by hipRTC for its architecture
    /// and loaded as a module, once.
    fn kernel(&mut self, device: usize) -> Result<hip::hipFunction_t, String> {
        self.enter(device)?;
        if let Some(k) = &self.devs[device].kernel {
            return k.clone();
        }
        let arch = self.inv.facts.get(device).and_then(|f| f.arch.clone());
        let rtc = self.rtc.get_or_insert_with(super::hiprtc::HipRtc::open).as_ref().map_err(|e| e.clone());
        let k = rtc.and_then(|r| r.compile(COPY_KERNEL, arch.as_deref())).and_then(|code| unsafe {
            let mut module = std::ptr::null_mut();
            ck("hipModuleLoadData (copy kernel)", hip::hipModuleLoadData(&mut module, code.as_ptr() as *const c_void))?;
            let mut f = std::ptr::null_mut();
            ck("hipModuleGetFunction", hip::hipModuleGetFunction(&mut f, module, COPY_KERNEL_NAME.as_ptr()))?;
            Ok(f)
        });
        self.devs[device].kernel = Some(k.clone());
        k
    }

    fn blas(&mut self) -> Result<&super::hipblas::HipBlas, String> {
        self.blas.get_or_insert_with(super::hipblas::HipBlas::open).as_ref().map_err(|e| e.clone())
    }

    fn blas_handle(&mut self, device: usize) -> Result<*mut c_void, String> {
        if let Some(h) = self.handles[device] {
            return Ok(h);
        }
        self.enter(device)?;
        let h = self.blas()?.create()?;
        self.handles[device] = Some(h);
        Ok(h)
    }

    fn enqueue(&mut self, device: usize, stream: hip::hipStream_t, op: &Op) -> Result<(), String> {
        use hip::hipMemcpyKind::*;
        unsafe {
            match *op {
                Op::CopyEngine { dst, src } => ck(
                    "hipMemcpyAsync (device to device)",
                    hip::hipMemcpyAsync(
                        dst.ptr as *mut c_void,
                        src.ptr as *const c_void,
                        src.bytes.min(dst.bytes) as usize,
                        hipMemcpyDeviceToDevice,
                        stream,
                    ),
                ),
                Op::Peer { dst, src } => ck(
                    "hipMemcpyPeerAsync",
                    hip::hipMemcpyPeerAsync(
                        dst.ptr as *mut c_void,
                        dst.device as i32,
                        src.ptr as *const c_void,
                        src.device as i32,
                        src.bytes.min(dst.bytes) as usize,
                        stream,
                    ),
                ),
                Op::HostToDevice { dst, src } => ck(
                    "hipMemcpyAsync (host to device)",
                    hip::hipMemcpyAsync(
                        dst.ptr as *mut c_void,
                        src as *const c_void,
                        dst.bytes as usize,
                        hipMemcpyHostToDevice,
                        stream,
                    ),
                ),
                Op::DeviceToHost { dst, src } => ck(
                    "hipMemcpyAsync (device to host)",
                    hip::hipMemcpyAsync(
                        dst as *mut c_void,
                        src.ptr as *const c_void,
                        src.bytes as usize,
                        hipMemcpyDeviceToHost,
                        stream,
                    ),
                ),
                Op::Gemm { plan, a, b, c } => {
                    let (_, dtype, call) = *self.plans.get(plan).ok_or("unknown GEMM plan")?;
                    let h = self.blas_handle(device)?;
                    let blas = self.blas()?;
                    // X is the B buffer, Y the A buffer (`BlasCall`).
                    blas.gemm((h, stream as *mut c_void), dtype, &call, (b.ptr as _, a.ptr as _, c.ptr as _))
                }
                Op::KernelCopy { dst, src, launch } => {
                    let f = self.kernel(device)?;
                    let cus = self.inv.facts.get(device).and_then(|f| f.multiprocessors).unwrap_or(1);
                    let (mut args, l) = CopyArgs::new(dst, src, launch, cus);
                    // Arguments through `extra` (a packed buffer), the form
                    // every HIP version accepts.
                    let mut size = std::mem::size_of::<CopyArgs>();
                    // The markers are HIP's tag values (hip_runtime_api.h
                    // defines them as `(void*)0x01` ...), not addresses.
                    #[allow(clippy::manual_dangling_ptr)]
                    let mut extra: [*mut c_void; 5] = [
                        1usize as *mut c_void, // HIP_LAUNCH_PARAM_BUFFER_POINTER
                        &mut args as *mut _ as *mut c_void,
                        2usize as *mut c_void, // HIP_LAUNCH_PARAM_BUFFER_SIZE
                        &mut size as *mut _ as *mut c_void,
                        3usize as *mut c_void, // HIP_LAUNCH_PARAM_END
                    ];
                    ck(
                        "hipModuleLaunchKernel (copy kernel)",
                        hip::hipModuleLaunchKernel(
                            f,
                            l.grid,
                            1,
                            1,
                            l.block,
                            1,
                            1,
                            0,
                            stream,
                            std::ptr::null_mut(),
                            extra.as_mut_ptr(),
                        ),
                    )
                }
            }
        }
    }
}

impl GpuApi for HipApi {
    fn timer(&self) -> &'static str {
        "hip_event"
    }

    fn sensor(&self, _device: usize) -> crate::vocab::telemetry::SensorOpener {
        Box::new(|| {
            Err("AMD GPU telemetry is not available in this build: reading amd-smi / rocm-smi's library is not \
                 wired up yet, so HIP points carry no clocks, power or energy"
                .to_string())
        })
    }

    fn inventory(&self) -> &Inventory {
        &self.inv
    }

    fn mem_info(&mut self, device: usize) -> Result<(u64, u64), String> {
        self.enter(device)?;
        let (mut free, mut total) = (0usize, 0usize);
        ck("hipMemGetInfo", unsafe { hip::hipMemGetInfo(&mut free, &mut total) })?;
        Ok((free as u64, total as u64))
    }

    fn alloc(&mut self, device: usize, bytes: u64) -> Result<DevBuf, String> {
        self.enter(device)?;
        let mut p = std::ptr::null_mut();
        ck("hipMalloc", unsafe { hip::hipMalloc(&mut p, bytes as usize) })?;
        Ok(DevBuf { device, ptr: p as u64, bytes })
    }

    fn free(&mut self, buf: DevBuf) {
        if self.enter(buf.device).is_ok() {
            unsafe { hip::hipFree(buf.ptr as *mut c_void) };
        }
    }

    fn alloc_pinned(&mut self, bytes: u64) -> Result<*mut u8, String> {
        self.enter(0)?;
        let mut p = std::ptr::null_mut();
        // hipHostMallocPortable: pinned for every GPU, not only the current one.
        ck("hipHostMalloc", unsafe { hip::hipHostMalloc(&mut p, bytes as usize, 0x1) })?;
        Ok(p as *mut u8)
    }

    fn free_pinned(&mut self, ptr: *mut u8) {
        unsafe { hip::hipHostFree(ptr as *mut c_void) };
    }

    fn upload(&mut self, dst: DevBuf, src: &[u8]) -> Result<(), String> {
        self.enter(dst.device)?;
        ck("hipMemcpy (upload)", unsafe {
            hip::hipMemcpy(
                dst.ptr as *mut c_void,
                src.as_ptr() as *const c_void,
                src.len(),
                hip::hipMemcpyKind::hipMemcpyHostToDevice,
            )
        })
    }

    fn download(&mut self, src: DevBuf, dst: &mut [u8]) -> Result<(), String> {
        self.enter(src.device)?;
        ck("hipMemcpy (download)", unsafe {
            hip::hipMemcpy(
                dst.as_mut_ptr() as *mut c_void,
                src.ptr as *const c_void,
                dst.len(),
                hip::hipMemcpyKind::hipMemcpyDeviceToHost,
            )
        })
    }

    fn ramp_seconds(&self) -> f64 {
        // MI300X/MI350X clocks take hundreds of milliseconds to ramp.
        1.5
    }

    fn flush_l2(&mut self, device: usize) -> Result<(), String> {
        self.enter(device)?;
        // MI300X's 256 MiB Infinity Cache sits behind L2; flush past both.
        let bytes = (self.inv.facts[device].l2_bytes.unwrap_or(8 << 20) as usize).max(256 << 20) * 2;
        let d = &mut self.devs[device];
        if d.flush.is_none() {
            let mut p = std::ptr::null_mut();
            ck("hipMalloc (cache flush buffer)", unsafe { hip::hipMalloc(&mut p, bytes) })?;
            d.flush = Some((p, bytes));
        }
        let (p, n) = d.flush.expect("set above");
        unsafe {
            ck("hipMemsetAsync (cache flush)", hip::hipMemsetAsync(p, 0, n, d.streams[0]))?;
            ck("hipStreamSynchronize", hip::hipStreamSynchronize(d.streams[0]))
        }
    }

    fn copy_method(&mut self, device: usize, method: &str) -> Result<(), String> {
        match method {
            "copy_engine" => Ok(()),
            "sm_kernel" => self.kernel(device).map(|_| ()),
            other => Err(format!("unknown copy method `{other}`")),
        }
    }

    fn gemm_method(&self, _device: usize, dtype: Dtype) -> Result<String, String> {
        match &self.blas {
            Some(Ok(b)) => b.supports(dtype).map(|_| "hipblas_gemm_ex".into()),
            Some(Err(e)) => Err(e.clone()),
            // Not loaded yet: name the call the plan will try.
            None if dtype == Dtype::Fp8 => {
                Err("FP8 GEMM on AMD needs hipBLASLt, which this build does not bind".into())
            }
            None => Ok("hipblas_gemm_ex".into()),
        }
    }

    fn gemm_plan(&mut self, device: usize, spec: &GemmSpec, _algos: u32) -> Result<GemmPlan, String> {
        self.blas()?.supports(spec.dtype)?;
        self.blas_handle(device)?;
        for v in [spec.m, spec.n, spec.k] {
            i32::try_from(v).map_err(|_| format!("dimension {v} exceeds hipBLAS's 32-bit sizes"))?;
        }
        let call = BlasCall::of(spec.setting.layout, spec.m, spec.n, spec.k);
        self.plans.push((device, spec.dtype, call));
        Ok(GemmPlan { id: self.plans.len() - 1, method: "hipblas_gemm_ex".into(), algos: 1 })
    }

    fn time(&mut self, device: usize, lanes: &[Op], n: u64) -> Result<f64, String> {
        timing::time_lanes(&mut Timed { api: self, device }, lanes, n)
    }
}

/// One HIP device for the shared event timing ([`timing::time_lanes`]).
struct Timed<'a> {
    api: &'a mut HipApi,
    device: usize,
}

impl EventDevice for Timed<'_> {
    type Stream = hip::hipStream_t;
    type Event = hip::hipEvent_t;

    fn resources(&mut self) -> Result<([hip::hipStream_t; 2], [hip::hipEvent_t; 3]), String> {
        let d = self.api.enter(self.device)?;
        Ok(([d.streams[0], d.streams[1]], [d.events[0], d.events[1], d.events[2]]))
    }

    fn record(&mut self, event: hip::hipEvent_t, stream: hip::hipStream_t) -> Result<(), String> {
        ck("hipEventRecord", unsafe { hip::hipEventRecord(event, stream) })
    }

    fn wait(&mut self, stream: hip::hipStream_t, event: hip::hipEvent_t) -> Result<(), String> {
        ck("hipStreamWaitEvent", unsafe { hip::hipStreamWaitEvent(stream, event, 0) })
    }

    fn enqueue(&mut self, stream: hip::hipStream_t, op: &Op) -> Result<(), String> {
        self.api.enqueue(self.device, stream, op)
    }

    fn synchronize(&mut self, event: hip::hipEvent_t) -> Result<(), String> {
        ck("hipEventSynchronize", unsafe { hip::hipEventSynchronize(event) })
    }

    fn elapsed_ms(&mut self, start: hip::hipEvent_t, end: hip::hipEvent_t) -> Result<f32, String> {
        let mut ms = 0f32;
        ck("hipEventElapsedTime", unsafe { hip::hipEventElapsedTime(&mut ms, start, end) })?;
        Ok(ms)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn gfx_names() {
        assert_eq!(super::gfx_name(90402), "gfx942");
        assert_eq!(super::gfx_name(90010), "gfx90a");
        assert_eq!(super::gfx_name(90500), "gfx950");
    }
}
