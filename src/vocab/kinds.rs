//! The closed vocabularies, as enums: parsed once at the edge (flags,
//! files), with an error that names the value and the choices, and written
//! back to the archive as the same strings.

/// A value outside a closed vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{value}`; choose from: {choices}")]
pub struct UnknownName {
    pub what: &'static str,
    pub value: String,
    pub choices: String,
}

vocabulary!(
    /// Where a native row was measured (the `backend` column). Imported
    /// rows carry their tool's name instead (`nccl`, `rdma`, `torch`, ...).
    BackendKind, "backend" {
        Cpu = "cpu",
        Cuda = "cuda",
        Hip = "hip",
        Mpi = "mpi",
    }
);

vocabulary!(
    /// Element types of GEMM and STREAM (`fp8` is E4M3; `tf32` is f32
    /// storage with TensorFloat-32 math).
    Dtype, "dtype" {
        F64 = "f64",
        F32 = "f32",
        Tf32 = "tf32",
        F16 = "f16",
        Bf16 = "bf16",
        Fp8 = "fp8",
    }
);

vocabulary!(
    /// How a device-to-device copy is performed.
    CopyMethod, "copy method" {
        /// The DMA copy engine (`cuMemcpyDtoDAsync`).
        CopyEngine = "copy_engine",
        /// A copy kernel on the SMs/CUs.
        SmKernel = "sm_kernel",
    }
);

vocabulary!(
    /// How a GPU GEMM's operands are stored, named as the column-major BLAS
    /// call sees them (the GPU GEMM computes the row-major C = A·B, m×n):
    /// `nn` is what `torch.matmul` runs on row-major tensors (A m×k and B
    /// k×n, both row-major), `tn` what `torch.nn.functional.linear` and
    /// `torch._scaled_mm` run (B stored n×k, k-contiguous; the only FP8
    /// layout Hopper's tensor cores take), `nt` A stored k×m.
    GemmLayout, "GEMM layout" {
        Nn = "nn",
        Tn = "tn",
        Nt = "nt",
    }
);

vocabulary!(
    /// How an FP8 GEMM accumulates: `promoted` adds the tensor cores' partial
    /// sums into FP32 at intervals (cuBLASLt's default, `torch._scaled_mm`'s
    /// `use_fast_accum=False`); `fast` keeps them in the tensor cores'
    /// reduced-precision accumulator over the whole k (CUBLASLT_MATMUL_DESC_FAST_ACCUM).
    Fp8Accum, "FP8 accumulation" {
        Promoted = "promoted",
        Fast = "fast",
    }
);

vocabulary!(
    /// Cache state before each operation: `cold` flushes L2 first.
    CacheMode, "cache mode" {
        Warm = "warm",
        Cold = "cold",
    }
);

vocabulary!(
    /// Why sampling of a point stopped (the `stop` column, schema v3).
    StopReason, "stop reason" {
        Converged = "converged",
        MaxTime = "max_time",
        MaxSamples = "max_samples",
        Interrupted = "interrupted",
    }
);

impl Dtype {
    /// Bytes per stored element (`tf32` is stored as f32).
    pub fn bytes(self) -> u64 {
        match self {
            Dtype::F64 => 8,
            Dtype::F32 | Dtype::Tf32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
            Dtype::Fp8 => 1,
        }
    }

    /// The element type of C for a GEMM of this input type, the same on
    /// every backend: the input type, except f32 for tf32 and bf16 for fp8.
    pub fn gemm_output(self) -> Dtype {
        match self {
            Dtype::Tf32 => Dtype::F32,
            Dtype::Fp8 => Dtype::Bf16,
            other => other,
        }
    }
}

/// The words of a row's note that say a point will have fewer rounds than
/// the minimum because its operations are too slow for its share ("2 of 3
/// rounds fit: …"): the schedule writes them, the analysis finds them.
pub const ROUNDS_FIT: &str = "rounds fit:";

impl StopReason {
    /// The words a row's note starts with (schema v1/v2 kept the reason
    /// only there; the v2 → v3 migration reads it back with [`Self::from_note`]).
    pub fn words(self) -> &'static str {
        match self {
            StopReason::Converged => "converged",
            StopReason::MaxTime => "stopped at max time",
            StopReason::MaxSamples => "stopped at max samples",
            StopReason::Interrupted => "interrupted",
        }
    }

    /// The reason a v1/v2 note starts with, if any.
    pub fn from_note(note: &str) -> Option<StopReason> {
        StopReason::ALL.iter().copied().find(|r| note.starts_with(r.words()))
    }
}

/// Whether rows of `backend` were measured on a GPU: the native GPU
/// backends and the GPU tools whose output is imported. The one list every
/// stage uses.
pub fn backend_is_gpu(backend: &str) -> bool {
    matches!(backend, "cuda" | "hip" | "torch")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_errors_list_choices() {
        for d in Dtype::ALL {
            assert_eq!(Dtype::parse(d.name()), Ok(*d));
        }
        let e = CopyMethod::parse("dma").unwrap_err();
        assert_eq!(e.to_string(), "unknown copy method `dma`; choose from: copy_engine, sm_kernel");
    }

    #[test]
    fn stop_reasons_read_back_from_old_notes() {
        assert_eq!(StopReason::from_note("converged; rsd 0.31 %"), Some(StopReason::Converged));
        assert_eq!(StopReason::from_note("stopped at max time; rsd 2.000 %"), Some(StopReason::MaxTime));
        assert_eq!(StopReason::from_note("needs 4 GiB"), None);
    }
}
