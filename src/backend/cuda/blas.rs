//! The CUDA backend's BLAS half: cuBLAS and cuBLASLt handles, the
//! cuBLASLt matmul plans with their candidate algorithms (and the
//! `cublasGemmEx` candidate `torch.matmul` would call), and the GEMM
//! enqueue; the driver half is `backend/cuda.rs`.

use super::*;

/// A cuBLASLt matmul, described once: the descriptor, the layouts of X, Y
/// and C ([`BlasCall`]), the heuristic's candidate algorithms and the one in
/// use.
pub(super) struct LtPlan {
    pub(super) device: usize,
    pub(super) dtype: Dtype,
    pub(super) desc: cudarc::cublaslt::sys::cublasLtMatmulDesc_t,
    pub(super) layouts: [cudarc::cublaslt::sys::cublasLtMatrixLayout_t; 3],
    pub(super) algos: Vec<cudarc::cublaslt::sys::cublasLtMatmulAlgo_t>,
    /// One more candidate after `algos`: `cublasGemmEx` with cuBLAS's own
    /// choice of kernel, the call `torch.matmul` makes (not for FP8, and
    /// only where cuBLAS loads). Its selection can reach kernels the Lt
    /// heuristic does not offer: on an H200, bf16 4096³ ran at 0.87× of
    /// `torch.matmul` with any of the Lt heuristic's first 32.
    pub(super) gemm_ex: Option<GemmEx>,
    pub(super) chosen: usize,
}

/// The `cublasGemmEx` form of a plan.
#[derive(Clone, Copy)]
pub(super) struct GemmEx {
    pub(super) call: BlasCall,
    pub(super) ty: cudarc::cublas::sys::cudaDataType_t,
    pub(super) compute: cudarc::cublas::sys::cublasComputeType_t,
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

impl CudaApi {
    /// The device's cuBLAS handle. Its stream and workspace (cuBLASLt's,
    /// which the workspace needs allocated first) are set at each call:
    /// setting the stream resets the workspace.
    pub(super) fn cublas(&mut self, device: usize) -> Result<cudarc::cublas::sys::cublasHandle_t, String> {
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

    pub(super) fn lt(&mut self, device: usize) -> Result<cudarc::cublaslt::sys::cublasLtHandle_t, String> {
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

    pub(super) fn lt_plan(&mut self, device: usize, spec: &GemmSpec, want: u32) -> Result<LtPlan, String> {
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

    pub(super) fn gemm(
        &mut self,
        plan: usize,
        stream: cu::CUstream,
        a: DevBuf,
        b: DevBuf,
        c: DevBuf,
    ) -> Result<(), String> {
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
    pub(super) fn algo_name(algo: &cudarc::cublaslt::sys::cublasLtMatmulAlgo_t) -> String {
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
