//! hipBLAS, loaded at run time (Debian ships no hipBLAS to link against;
//! ROCm installs `libhipblas.so.N` under `/opt/rocm/lib`). Only
//! `hipblasCreate`, `hipblasSetStream` and `hipblasGemmEx` are used, with
//! every enum passed as a plain `int`, so a version mismatch shows up as a
//! `HIPBLAS_STATUS_INVALID_ENUM` / `_NOT_SUPPORTED` status, never as a
//! crash; and a wrong result fails the shared GEMM validation.
//!
//! Two generations of `hipblasGemmEx`, same argument positions:
//! - hipBLAS ≤ 1 (ROCm 5): types and the compute type are `hipblasDatatype_t`
//!   (`HIPBLAS_R_32F` = 151, `HIPBLAS_R_16F` = 150, `HIPBLAS_R_16B` = 168);
//! - hipBLAS 2 (ROCm 6) as `hipblasGemmEx_v2`, hipBLAS ≥ 3 (ROCm 7) as
//!   `hipblasGemmEx`: `hipDataType` (`HIP_R_32F` = 0, `HIP_R_16F` = 2,
//!   `HIP_R_16BF` = 14) and `hipblasComputeType_t` (`HIPBLAS_COMPUTE_32F` = 2,
//!   `HIPBLAS_COMPUTE_32F_FAST_TF32` = 6).

use std::ffi::{c_int, c_void};

use libloading::Library;

use crate::bench::gpu::blas::BlasCall;
use crate::vocab::kinds::Dtype;

type Handle = *mut c_void;
type GemmEx = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const c_void,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    c_int,
    c_int,
    *const c_void,
    *mut c_void,
    c_int,
    c_int,
    c_int,
    c_int,
) -> c_int;

const OP_N: c_int = 111;
const OP_T: c_int = 112;
const GEMM_DEFAULT: c_int = 160;

/// Which `hipblasGemmEx` enum set the loaded library speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Api {
    /// `hipblasDatatype_t` everywhere (ROCm 5).
    Legacy,
    /// `hipDataType` + `hipblasComputeType_t` (ROCm 6 `_v2`, ROCm 7).
    V2,
}

pub struct HipBlas {
    lib: Library,
    gemm_symbol: &'static str,
    api: Api,
    pub library: String,
}

impl HipBlas {
    /// Load hipBLAS, or say why not.
    pub fn open() -> Result<HipBlas, String> {
        let names = ["libhipblas.so.3", "libhipblas.so.2", "libhipblas.so.1", "libhipblas.so.0", "libhipblas.so"];
        let (lib, library) = names
            .iter()
            .find_map(|&n| unsafe { Library::new(n) }.ok().map(|l| (l, n.to_string())))
            .ok_or_else(|| {
                "no hipBLAS library (libhipblas.so) found; install ROCm's hipblas and put /opt/rocm/lib on LD_LIBRARY_PATH"
                    .to_string()
            })?;
        let has = |s: &str| unsafe { lib.get::<*const c_void>(s.as_bytes()) }.is_ok();
        let (gemm_symbol, api) = if has("hipblasGemmEx_v2") {
            ("hipblasGemmEx_v2", Api::V2)
        } else if library.ends_with(".so.0") || library.ends_with(".so.1") {
            ("hipblasGemmEx", Api::Legacy)
        } else {
            ("hipblasGemmEx", Api::V2)
        };
        for s in ["hipblasCreate", "hipblasSetStream", gemm_symbol] {
            if !has(s) {
                return Err(format!("{library} has no {s}"));
            }
        }
        Ok(HipBlas { lib, gemm_symbol, api, library })
    }

    pub fn create(&self) -> Result<Handle, String> {
        let f = unsafe { self.lib.get::<unsafe extern "C" fn(*mut Handle) -> c_int>(b"hipblasCreate") }
            .map_err(|e| e.to_string())?;
        let mut h = std::ptr::null_mut();
        match unsafe { f(&mut h) } {
            0 => Ok(h),
            s => Err(format!("hipblasCreate returned status {s}")),
        }
    }

    /// Whether this hipBLAS can run `dtype`, or why not.
    pub fn supports(&self, dtype: Dtype) -> Result<(), String> {
        match (dtype, self.api) {
            (Dtype::F32 | Dtype::F16 | Dtype::Bf16, _) | (Dtype::Tf32, Api::V2) => Ok(()),
            (Dtype::Tf32, Api::Legacy) => Err(format!("{} (ROCm 5 API) has no TF32 compute type", self.library)),
            (Dtype::Fp8, _) => Err("FP8 GEMM on AMD needs hipBLASLt, which this build does not bind".into()),
            (Dtype::F64, _) => Err(format!("no hipBLAS GEMM for dtype `{dtype}`")),
        }
    }

    /// C = Aᵀ·B (m×n, depth k; A and B k-contiguous), C in the input type,
    /// f32 accumulation, on `stream`.
    pub fn gemm(
        &self,
        (h, stream): (Handle, *mut c_void),
        dtype: Dtype,
        call: &BlasCall,
        (x, y, c): (*const c_void, *const c_void, *mut c_void),
    ) -> Result<(), String> {
        // Sizes were checked to fit 32 bits when the plan was made.
        let int = |v: u64| v as c_int;
        let (m, n, k) = (int(call.rows), int(call.cols), int(call.depth));
        let op = |t: bool| if t { OP_T } else { OP_N };
        self.supports(dtype)?;
        let (ty, compute) = match (self.api, dtype) {
            (Api::Legacy, Dtype::F32) => (151, 151),
            (Api::Legacy, Dtype::F16) => (150, 151),
            (Api::Legacy, Dtype::Bf16) => (168, 151),
            (Api::V2, Dtype::F32) => (0, 2),
            (Api::V2, Dtype::Tf32) => (0, 6),
            (Api::V2, Dtype::F16) => (2, 2),
            (Api::V2, Dtype::Bf16) => (14, 2),
            // `supports` refused these above.
            (_, Dtype::F64 | Dtype::Fp8) | (Api::Legacy, Dtype::Tf32) => return Err(format!("no GEMM for {dtype}")),
        };
        let (alpha, beta) = (1.0f32, 0.0f32);
        unsafe {
            let set = self
                .lib
                .get::<unsafe extern "C" fn(Handle, *mut c_void) -> c_int>(b"hipblasSetStream")
                .map_err(|e| e.to_string())?;
            let s = set(h, stream);
            if s != 0 {
                return Err(format!("hipblasSetStream returned status {s}"));
            }
            let f = self.lib.get::<GemmEx>(self.gemm_symbol.as_bytes()).map_err(|e| e.to_string())?;
            let s = f(
                h,
                op(call.trans_x),
                op(call.trans_y),
                m,
                n,
                k,
                &alpha as *const f32 as *const c_void,
                x,
                ty,
                int(call.x.2),
                y,
                ty,
                int(call.y.2),
                &beta as *const f32 as *const c_void,
                c,
                ty,
                int(call.ldc),
                compute,
                GEMM_DEFAULT,
            );
            if s != 0 {
                return Err(format!("{} ({dtype}, {m}×{n}×{k}) returned status {s}", self.gemm_symbol));
            }
        }
        Ok(())
    }
}
