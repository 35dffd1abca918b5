//! Byte and FLOP accounting shared by the benchmarks and the importers, so a
//! measured row and an imported one count the same bytes the same way.

/// STREAM kernels and the arrays each touches per element (BabelStream's
/// weights: Copy and Scale read one array and write one; Add and Triad read
/// two and write one). Bytes moved = weight × array bytes.
pub const STREAM_KERNELS: [(&str, u64); 4] = [("copy", 2), ("scale", 2), ("add", 3), ("triad", 3)];

/// nccl-tests' bus-bandwidth factor for a collective over `ranks`
/// (busbw = algbw × factor), or `None` where it is not known: an unknown
/// collective, or no rank count.
pub fn bus_factor(op: &str, ranks: u32) -> Option<f64> {
    let n = ranks as f64;
    if ranks == 0 {
        return None;
    }
    match op {
        "all_reduce" => Some(2.0 * (n - 1.0) / n),
        "all_gather" | "reduce_scatter" | "all_to_all" | "alltoall" => Some((n - 1.0) / n),
        "broadcast" | "reduce" | "sendrecv" | "send_recv" | "hypercube" => Some(1.0),
        _ => None,
    }
}

/// FLOPs of one GEMM C(m×n) = A(m×k)·B(k×n): one multiply and one add per
/// term.
pub fn gemm_flops(m: u64, n: u64, k: u64) -> f64 {
    2.0 * m as f64 * n as f64 * k as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bus_factors_match_nccl_tests() {
        assert_eq!(bus_factor("all_reduce", 8), Some(1.75));
        assert_eq!(bus_factor("all_gather", 4), Some(0.75));
        assert_eq!(bus_factor("broadcast", 8), Some(1.0));
        assert_eq!(bus_factor("all_reduce", 0), None);
        assert_eq!(bus_factor("mystery", 8), None);
    }
}
