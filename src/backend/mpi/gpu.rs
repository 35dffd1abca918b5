//! GPU buffers for MPI: what the library says it takes (CUDA- or ROCm-aware
//! MPI), the GPU memory a rank hands it (allocated by the `cuda` or `hip`
//! backend), and the reason recorded when device-buffer points cannot run.

use serde::{Deserialize, Serialize};

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::two_sided::Buffers;

/// Whether Open MPI says it was built CUDA-aware (`ompi_info`), if it can tell.
pub fn cuda_aware() -> Option<bool> {
    let out = std::process::Command::new("ompi_info").args(["--parsable", "--all"]).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines().find(|l| l.contains("opal_built_with_cuda_support:value")).map(|l| l.trim().ends_with("true"))
}

/// What the MPI library says it can do with GPU buffers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct GpuAwareness {
    /// `MPIX_Query_cuda_support()`, or Open MPI's `ompi_info` when the
    /// library has no such call; `None` when neither can tell.
    pub cuda: Option<bool>,
    /// `MPIX_Query_rocm_support()`; `None` when the library has no such call.
    pub rocm: Option<bool>,
}

/// Call an `int f(void)` MPI extension if this process's MPI library has it
/// (Open MPI's `mpi-ext.h` queries, looked up at run time so that the build
/// does not depend on them). Must run after `MPI_Init`.
fn mpix_query(name: &std::ffi::CStr) -> Option<bool> {
    // SAFETY: dlsym on the whole process; the symbol, where it exists, is
    // the MPI extension `int MPIX_Query_*_support(void)`.
    unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr());
        if f.is_null() {
            return None;
        }
        let f: extern "C" fn() -> std::os::raw::c_int = std::mem::transmute(f);
        Some(f() != 0)
    }
}

/// Ask the running MPI library about CUDA and ROCm buffers.
pub fn gpu_awareness() -> GpuAwareness {
    GpuAwareness {
        cuda: mpix_query(c"MPIX_Query_cuda_support").or_else(cuda_aware),
        rocm: mpix_query(c"MPIX_Query_rocm_support"),
    }
}

/// Which GPU backend's buffers this MPI library takes, or why none.
pub(super) fn choose(aware: Option<GpuAwareness>) -> Result<&'static str, String> {
    let a = aware.unwrap_or(GpuAwareness { cuda: None, rocm: None });
    if a.cuda == Some(true) {
        if cfg!(feature = "cuda") {
            return Ok("cuda");
        }
        return Err("this benchbook was built without the `cuda` feature".into());
    }
    if a.rocm == Some(true) {
        if cfg!(feature = "hip") {
            return Ok("hip");
        }
        return Err("this benchbook was built without the `hip` feature".into());
    }
    Err("GPU buffers need a CUDA- or ROCm-aware MPI".into())
}

/// Every rank learns what rank 0 found the library to support, opens the
/// GPU backend it names and picks its GPU (its rank on the node, modulo the
/// GPUs). Device-buffer points run only if every rank has one; otherwise
/// every rank gets `Err`, with the first rank's reason (`rank 1: ...`).
pub(super) fn open_device(
    world: &SimpleCommunicator,
    found: Option<GpuAwareness>,
) -> (Option<GpuAwareness>, Result<DeviceSide, String>) {
    let code = |v: Option<bool>| v.map_or(0u8, |b| 1 + b as u8);
    let mut bytes = found.map_or([0u8; 2], |a| [code(a.cuda), code(a.rocm)]);
    world.process_at_rank(0).broadcast_into(&mut bytes[..]);
    let decode = |c: u8| (c != 0).then_some(c == 2);
    let aware = Some(GpuAwareness { cuda: decode(bytes[0]), rocm: decode(bytes[1]) });
    // Every rank holds the same answer, so a library that takes no GPU
    // buffers stops every rank alike, without asking the others.
    let backend = match choose(aware) {
        Ok(b) => b,
        Err(why) => return (aware, Err(why)),
    };
    let local_rank = world.split_shared(0).rank().max(0) as usize;
    let mine = DeviceSide::open(backend, local_rank);
    let why = mine.as_ref().err().map(|e| format!("rank {}: {e}", world.rank())).unwrap_or_default();
    let whys = super::gather_bytes(world, why.into_bytes());
    if !super::any(world, mine.is_err()) {
        return (aware, mine);
    }
    let first = whys
        .and_then(|all| all.into_iter().find(|w| !w.is_empty()))
        .map(|w| String::from_utf8_lossy(&w).into_owned())
        .unwrap_or_else(|| "another rank has no GPU memory to offer".into());
    (aware, Err(first))
}

/// Why device-buffer points are not measured, in words a reader can act on:
/// what the MPI library says, and what stopped them (`why`).
pub(super) fn device_buffer_reason(aware: Option<GpuAwareness>, why: &str) -> String {
    let say = |v: Option<bool>, api: &str| match v {
        Some(true) => format!("reports {api} support"),
        Some(false) => format!("reports no {api} support"),
        None => format!("cannot say whether it supports {api}"),
    };
    let (cuda, rocm) = aware.map_or((None, None), |a| (a.cuda, a.rocm));
    format!(
        "device buffers: not measured. This MPI library {} (MPIX_Query_cuda_support / ompi_info) and {} (MPIX_Query_rocm_support); {why}",
        say(cuda, "CUDA"),
        say(rocm, "ROCm"),
    )
}

/// GPU memory for the device-buffer points: the `cuda` or `hip` backend's
/// API, and the GPU this rank uses (its rank on the node, modulo the GPUs).
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(super) struct DeviceSide {
    backend: &'static str,
    device: usize,
    api: crate::bench::gpu::SharedApi,
    _backend: crate::backend::GpuBackend,
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl DeviceSide {
    /// Open `backend` and pick this rank's GPU.
    pub(super) fn open(backend: &'static str, local_rank: usize) -> Result<DeviceSide, String> {
        let b = match backend {
            #[cfg(feature = "cuda")]
            "cuda" => crate::backend::cuda::backend(),
            #[cfg(feature = "hip")]
            "hip" => crate::backend::hip::backend(),
            other => return Err(format!("no `{other}` backend in this build")),
        };
        let api = b.api()?;
        let count = api.borrow().devices().len();
        if count == 0 {
            return Err(format!("the {backend} backend found no GPU on this rank"));
        }
        Ok(DeviceSide { backend, device: local_rank % count, api, _backend: b })
    }

    pub(super) fn backend(&self) -> &'static str {
        self.backend
    }

    /// A send and a receive buffer of `len` bytes on this rank's GPU.
    pub(super) fn buffers(&self, len: usize) -> Result<Box<dyn Buffers>, String> {
        let mut api = self.api.borrow_mut();
        let send = api.alloc(self.device, len as u64)?;
        match api.alloc(self.device, len as u64) {
            Ok(recv) => Ok(Box::new(DeviceBuffers { api: self.api.clone(), send, recv, len })),
            Err(e) => {
                api.free(send);
                Err(e)
            }
        }
    }
}

/// Two buffers on one GPU, freed when dropped.
#[cfg(any(feature = "cuda", feature = "hip"))]
pub(super) struct DeviceBuffers {
    api: crate::bench::gpu::SharedApi,
    send: crate::bench::gpu::DevBuf,
    recv: crate::bench::gpu::DevBuf,
    len: usize,
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl Buffers for DeviceBuffers {
    fn ptrs(&mut self) -> (*mut std::ffi::c_void, *mut std::ffi::c_void) {
        (self.send.ptr as *mut std::ffi::c_void, self.recv.ptr as *mut std::ffi::c_void)
    }
    fn len(&self) -> usize {
        self.len
    }
    fn fill_send(&mut self, byte: u8) -> Result<(), String> {
        self.api.borrow_mut().upload(self.send, &vec![byte; self.len])
    }
    fn mismatch(&mut self, want: u8) -> Result<Option<(usize, u8)>, String> {
        let mut out = vec![0u8; self.len];
        self.api.borrow_mut().download(self.recv, &mut out)?;
        Ok(super::two_sided::first_mismatch(&out, want))
    }
}

#[cfg(any(feature = "cuda", feature = "hip"))]
impl Drop for DeviceBuffers {
    fn drop(&mut self) {
        let mut api = self.api.borrow_mut();
        api.free(self.send);
        api.free(self.recv);
    }
}

/// Without the `cuda` and `hip` features there is no GPU memory to hand out
/// ([`choose`] says so before this is reached).
#[cfg(not(any(feature = "cuda", feature = "hip")))]
pub(super) enum DeviceSide {}

#[cfg(not(any(feature = "cuda", feature = "hip")))]
impl DeviceSide {
    pub(super) fn open(_backend: &'static str, _local_rank: usize) -> Result<DeviceSide, String> {
        Err("this benchbook was built without the `cuda` and `hip` features".into())
    }
    pub(super) fn backend(&self) -> &'static str {
        match *self {}
    }
    pub(super) fn buffers(&self, _len: usize) -> Result<Box<dyn Buffers>, String> {
        match *self {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_buffers_follow_what_the_library_reports() {
        let aware = |cuda, rocm| Some(GpuAwareness { cuda, rocm });
        assert!(choose(None).unwrap_err().contains("CUDA- or ROCm-aware"));
        assert!(choose(aware(Some(false), None)).is_err());
        let cuda = choose(aware(Some(true), None));
        if cfg!(feature = "cuda") {
            assert_eq!(cuda, Ok("cuda"));
        } else {
            assert!(cuda.unwrap_err().contains("without the `cuda` feature"));
        }
        let rocm = choose(aware(Some(false), Some(true)));
        if cfg!(feature = "hip") {
            assert_eq!(rocm, Ok("hip"));
        } else {
            assert!(rocm.unwrap_err().contains("without the `hip` feature"));
        }
        let why = device_buffer_reason(aware(Some(false), None), "GPU buffers need a CUDA- or ROCm-aware MPI");
        assert!(why.starts_with("device buffers: not measured. This MPI library reports no CUDA support"), "{why}");
        assert!(why.contains("cannot say whether it supports ROCm"), "{why}");
    }
}
