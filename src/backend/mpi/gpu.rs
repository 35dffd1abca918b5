//! What the MPI library says about GPU buffers (CUDA- or ROCm-aware MPI),
//! and the reason the MPI backend records for device-buffer points it does
//! not measure.

use serde::{Deserialize, Serialize};

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

/// Why device-buffer points are not measured, in words a reader can act on.
pub(super) fn device_buffer_reason(aware: Option<GpuAwareness>) -> String {
    let say = |v: Option<bool>, api: &str| match v {
        Some(true) => format!("reports {api} support"),
        Some(false) => format!("reports no {api} support"),
        None => format!("cannot say whether it supports {api}"),
    };
    let (cuda, rocm) = aware.map_or((None, None), |a| (a.cuda, a.rocm));
    format!(
        "device buffers: not measured. benchbook's MPI runs pass host buffers only so far; this MPI library {} (MPIX_Query_cuda_support / ompi_info) and {} (MPIX_Query_rocm_support). GPU buffers need a GPU on every rank and a CUDA- or ROCm-aware MPI",
        say(cuda, "CUDA"),
        say(rocm, "ROCm"),
    )
}
