//! Collectives (all_reduce, all_gather, reduce_scatter, all_to_all,
//! broadcast) as nccl-tests defines them, independent of the library that
//! runs them. `size_bytes` is nccl-tests' size: the bytes algbw divides by.
//! The send and receive buffer sizes per rank follow from it, and
//! `bw_factor` gives busbw = algbw × factor. Elements are f32. Inputs are
//! rank-dependent patterns with a known result, so a broken collective
//! fails validation instead of reporting a fast time.

use super::BenchConfig;
use crate::vocab::accounting::bus_factor;
use crate::vocab::benches::Bench;
use crate::vocab::rows::Point;

/// The collectives benchbook runs, in order.
pub const COLLECTIVES: [&str; 5] = ["all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"];

/// f32 elements.
pub const ELEM_BYTES: u64 = 4;

/// Send and receive element counts per rank for a collective of `size_bytes` over `n` ranks.
pub fn counts(op: &str, size_bytes: u64, n: u64) -> (usize, usize) {
    let total = (size_bytes / ELEM_BYTES) as usize;
    let n = n as usize;
    match op {
        // recv = everyone's send
        "all_gather" => (total / n, total),
        // send = everyone's recv
        "reduce_scatter" => (total, total / n),
        _ => (total, total),
    }
}

/// Round a size down so that every rank's chunk is whole: a multiple of
/// 4 bytes × n. Zero means the size is too small for this many ranks.
pub fn usable_size(size: u64, n: u64) -> u64 {
    size / (ELEM_BYTES * n) * (ELEM_BYTES * n)
}

/// Points: collective × size, for `ranks` ranks.
pub fn points(cfg: &BenchConfig, ranks: u32) -> Vec<Point> {
    let mut out = Vec::new();
    for op in COLLECTIVES {
        for &size in &cfg.collective_sizes {
            let size = usable_size(size, ranks as u64).max(ELEM_BYTES * ranks as u64);
            out.push(Point {
                bench: Bench::Collective.name().into(),
                op: op.into(),
                method: Some(format!("mpi_{}", op.replace('_', ""))),
                variant: Some("host buffers".into()),
                dtype: Some("f32".into()),
                size_bytes: Some(size),
                ranks: Some(ranks),
                bytes_copied: Some(size),
                bw_factor: bus_factor(op, ranks),
                ..Point::default()
            });
        }
    }
    out.extend(all_to_all_scaling(cfg, ranks));
    out
}

/// all_to_all over the first k ranks of the job, for k = 2, 4, 8, ...
/// below `ranks` (the whole job is measured above): the write-up's
/// all-to-all against node count, within one job. Each point's `ranks` is
/// its k; its variant names k of the job's ranks.
pub fn all_to_all_scaling(cfg: &BenchConfig, ranks: u32) -> Vec<Point> {
    let mut out = Vec::new();
    let op = "all_to_all";
    for k in (1..).map(|e| 1u32 << e).take_while(|&k| k < ranks) {
        for &size in &cfg.collective_sizes {
            let size = usable_size(size, k as u64).max(ELEM_BYTES * k as u64);
            out.push(Point {
                bench: Bench::Collective.name().into(),
                op: op.into(),
                method: Some("mpi_alltoall".into()),
                variant: Some(format!("host buffers, {k} of {ranks} ranks")),
                dtype: Some("f32".into()),
                size_bytes: Some(size),
                ranks: Some(k),
                bytes_copied: Some(size),
                bw_factor: bus_factor(op, k),
                ..Point::default()
            });
        }
    }
    out
}

/// Fill rank `rank`'s send buffer with the pattern for `op` (n ranks).
pub fn fill_send(op: &str, rank: usize, n: usize, send: &mut [f32]) {
    let chunk = (send.len() / n).max(1);
    for (i, x) in send.iter_mut().enumerate() {
        *x = match op {
            "all_reduce" => (rank + 1) as f32,
            "all_gather" => rank as f32,
            // chunk j of rank r: (r + 1) × (j + 1)
            "reduce_scatter" => ((rank + 1) * (i / chunk + 1)) as f32,
            // chunk j of rank r goes to rank j: tag it with both
            "all_to_all" => (rank * 1000 + i / chunk) as f32,
            // only the root's contents matter
            _ => {
                if rank == 0 {
                    42.0
                } else {
                    0.0
                }
            }
        };
    }
}

/// Check rank `rank`'s receive buffer after `op` over n ranks. Returns the
/// first wrong element, if any.
pub fn check_recv(op: &str, rank: usize, n: usize, recv: &[f32]) -> Option<String> {
    let chunk = (recv.len() / n).max(1);
    let tri = (n * (n + 1) / 2) as f32;
    for (i, &x) in recv.iter().enumerate() {
        let want = match op {
            "all_reduce" => tri,
            "all_gather" => (i / chunk) as f32,
            "reduce_scatter" => (rank + 1) as f32 * tri,
            "all_to_all" => ((i / chunk) * 1000 + rank) as f32,
            _ => 42.0,
        };
        if x != want {
            return Some(format!("{op}: rank {rank} element {i} is {x}, expected {want}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulate each collective in plain Rust over n ranks with the fill
    /// patterns: `check_recv` must accept the right answer and reject a
    /// wrong one, or validation would prove nothing.
    #[test]
    fn patterns_validate_the_right_result_only() {
        let n = 4;
        let size = 4 * 4 * 8; // 8 elements per chunk
        for op in COLLECTIVES {
            let (s, r) = counts(op, size, n as u64);
            let sends: Vec<Vec<f32>> = (0..n)
                .map(|rank| {
                    let mut v = vec![0.0; s];
                    fill_send(op, rank, n, &mut v);
                    v
                })
                .collect();
            for rank in 0..n {
                let recv: Vec<f32> = match op {
                    "all_reduce" => (0..r).map(|i| sends.iter().map(|v| v[i]).sum()).collect(),
                    "all_gather" => sends.iter().flatten().copied().collect(),
                    "reduce_scatter" => (0..r).map(|i| sends.iter().map(|v| v[rank * r + i]).sum()).collect(),
                    "all_to_all" => {
                        (0..n).flat_map(|src| sends[src][rank * (s / n)..(rank + 1) * (s / n)].to_vec()).collect()
                    }
                    _ => sends[0].clone(),
                };
                assert_eq!(recv.len(), r, "{op}");
                assert_eq!(check_recv(op, rank, n, &recv), None, "{op} rank {rank}");
                let mut bad = recv.clone();
                bad[r - 1] += 1.0;
                assert!(check_recv(op, rank, n, &bad).is_some(), "{op}: a wrong element must be caught");
            }
        }
    }

    #[test]
    fn bus_factors_and_sizes() {
        let mut cfg = BenchConfig::preset(super::super::Preset::Quick);
        cfg.collective_sizes = vec![1000];
        let p = points(&cfg, 4);
        assert_eq!(p[0].size_bytes, Some(992), "rounded to a multiple of 4 B × 4 ranks");
        assert_eq!(p[0].bw_factor, Some(1.5));
        assert_eq!(p.iter().find(|p| p.op == "broadcast").unwrap().bw_factor, Some(1.0));
        assert_eq!(counts("all_gather", 992, 4), (62, 248));
    }

    #[test]
    fn all_to_all_scales_over_the_first_ranks() {
        let mut cfg = BenchConfig::preset(super::super::Preset::Quick);
        cfg.collective_sizes = vec![4096];
        let sub = all_to_all_scaling(&cfg, 8);
        let ks: Vec<u32> = sub.iter().filter_map(|p| p.ranks).collect();
        assert_eq!(ks, vec![2, 4], "2 and 4 of 8; the whole job is measured with the others");
        assert_eq!(sub[0].bw_factor, Some(0.5));
        assert_eq!(sub[1].variant.as_deref(), Some("host buffers, 4 of 8 ranks"));
        assert!(all_to_all_scaling(&cfg, 2).is_empty());
        let all = points(&cfg, 4);
        assert_eq!(all.iter().filter(|p| p.op == "all_to_all").count(), 2, "4 ranks, and 2 of them");
    }
}
