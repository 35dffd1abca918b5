//! Which points a GPU sweep has, and what each one counts: bytes copied and
//! moved per copy, FLOPs and compulsory traffic per GEMM (see the table in
//! [`super`]).

use super::{GpuApi, Kind, Launch, PeerAccess};
use crate::bench::BenchConfig;
use crate::vocab::accounting::gemm_flops;
use crate::vocab::benches::Bench;
use crate::vocab::gemm::GemmSetting;
use crate::vocab::kinds::{CacheMode, CopyMethod, Dtype, Fp8Accum, GemmLayout};
use crate::vocab::rows::Point;

/// The points of benchmark `kind` on `device`, in the order they run.
pub fn points(kind: Kind, api: &dyn GpuApi, device: usize, cfg: &BenchConfig) -> Vec<Point> {
    let d = device;
    let base = |op: &str, size: u64| Point {
        bench: kind.name().into(),
        op: op.into(),
        size_bytes: Some(size),
        bytes_copied: Some(size),
        bytes_moved: Some(2 * size),
        method: Some("copy_engine".into()),
        ..Point::default()
    };
    let mut out = Vec::new();
    match kind {
        Kind::Memcpy => {
            for &size in &cfg.memcpy_sizes {
                for method in &cfg.gpu_copy_methods {
                    for cache in &cfg.gpu_cache_modes {
                        out.push(Point {
                            variant: Some(cache.name().into()),
                            method: Some(method.name().into()),
                            ..base("copy", size)
                        });
                    }
                }
            }
        }
        Kind::MemcpyPeer => {
            let count = api.devices().len();
            if count < 2 {
                // One point (without a pair) that records why the sweep cannot run.
                return vec![base("copy", cfg.memcpy_sizes.first().copied().unwrap_or(0))];
            }
            for to in (0..count).filter(|&j| j != d) {
                let access = match api.peer_access(d, to) {
                    PeerAccess::Enabled => "peer_access",
                    PeerAccess::Unsupported => "no_peer_access",
                };
                // One direction, then both: a sweep keeps its buffers.
                for op in ["copy", "copy_bidir"] {
                    for &size in &cfg.memcpy_sizes {
                        let mut p =
                            Point { variant: Some(access.into()), peer: Some(format!("{d}->{to}")), ..base(op, size) };
                        if op == "copy_bidir" {
                            p.bytes_copied = Some(2 * size);
                            p.bytes_moved = Some(4 * size);
                        }
                        out.push(p);
                    }
                }
                // The peer-write kernel (the NVLink IPC write-up): grid ×
                // block, into the next GPU only, so that a node of N GPUs
                // sweeps N pairs rather than N × (N − 1).
                if to == (d + 1) % count && cfg.gpu_copy_methods.contains(&CopyMethod::SmKernel) {
                    for &grid in &cfg.gpu_peer_grids {
                        for &block in &cfg.gpu_peer_blocks {
                            let launch = Launch { grid, block };
                            for &size in &cfg.memcpy_sizes {
                                out.push(Point {
                                    variant: Some(launch.label()),
                                    method: Some(CopyMethod::SmKernel.name().into()),
                                    peer: Some(format!("{d}->{to}")),
                                    axes: Some(launch.axes()),
                                    ..base("copy", size)
                                });
                            }
                        }
                    }
                }
            }
        }
        Kind::H2D | Kind::D2H => {
            for &size in &cfg.memcpy_sizes {
                for mem in ["pinned", "pageable"] {
                    // A copy across the host link moves each byte once.
                    out.push(Point { variant: Some(mem.into()), bytes_moved: Some(size), ..base("copy", size) });
                }
            }
        }
        Kind::Gemm => {
            for &[m, n, k] in &cfg.gpu_gemm_shapes {
                for dtype in &cfg.gpu_gemm_dtypes {
                    // A and B read in the input type, C written in the output type.
                    let moved = Some((m * k + n * k) * dtype.bytes() + m * n * dtype.gemm_output().bytes());
                    // FP8 runs TN in each accumulation mode; the rest in each layout.
                    let settings: Vec<GemmSetting> = if *dtype == Dtype::Fp8 {
                        cfg.gpu_fp8_accum.iter().map(|&a| GemmSetting::for_dtype(*dtype, GemmLayout::Tn, a)).collect()
                    } else {
                        cfg.gpu_gemm_layouts
                            .iter()
                            .map(|&l| GemmSetting::for_dtype(*dtype, l, Fp8Accum::Promoted))
                            .collect()
                    };
                    for setting in settings {
                        out.push(Point {
                            bench: Bench::Gemm.name().into(),
                            op: Bench::Gemm.name().into(),
                            variant: Some(CacheMode::Warm.name().into()),
                            dtype: Some(dtype.name().into()),
                            m: Some(m),
                            n: Some(n),
                            k: Some(k),
                            flops: Some(gemm_flops(m, n, k)),
                            bytes_moved: moved,
                            method: Some(api.gemm_method(d, *dtype).unwrap_or_else(|_| "none".into())),
                            axes: Some(setting.axes()),
                            ..Point::default()
                        });
                    }
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::emulated::Emulated;
    use super::*;

    #[test]
    fn sweeps_have_their_points_and_counts() {
        let mut cfg = BenchConfig::preset(crate::bench::Preset::Quick);
        cfg.memcpy_sizes = vec![4096, 1 << 16];
        cfg.gpu_copy_methods = vec![CopyMethod::CopyEngine, CopyMethod::SmKernel];
        cfg.gpu_cache_modes = vec![CacheMode::Warm, CacheMode::Cold];
        cfg.gpu_gemm_shapes = vec![[32, 16, 48]];
        cfg.gpu_gemm_dtypes = vec![crate::vocab::kinds::Dtype::Bf16, crate::vocab::kinds::Dtype::Fp8];
        let (one, three) = (Emulated::new(1), Emulated::new(3));
        assert_eq!(points(Kind::Memcpy, &one, 0, &cfg).len(), 8);
        let h2d = points(Kind::H2D, &one, 0, &cfg);
        assert_eq!(h2d.len(), 4);
        assert!(h2d.iter().all(|p| p.bytes_moved == p.size_bytes), "a host link is crossed once");
        let lone = points(Kind::MemcpyPeer, &one, 0, &cfg);
        assert!(lone.len() == 1 && lone[0].peer.is_none());
        cfg.gpu_peer_grids = vec![1, 128];
        cfg.gpu_peer_blocks = vec![256];
        let peer = points(Kind::MemcpyPeer, &three, 1, &cfg);
        // Two peers × (copy, copy_bidir) × 2 sizes, then the kernel sweep
        // into the next GPU only: 2 grids × 1 block × 2 sizes.
        assert_eq!(peer.len(), 2 * 2 * 2 + 2 * 2);
        let kernel: Vec<&Point> = peer.iter().filter(|p| p.method.as_deref() == Some("sm_kernel")).collect();
        assert!(kernel.iter().all(|p| p.peer.as_deref() == Some("1->2") && p.op == "copy"));
        assert_eq!(kernel[2].variant.as_deref(), Some("grid 128 × block 256"));
        assert_eq!(Launch::of(kernel[2]), Some(Launch { grid: 128, block: 256 }));
        assert_eq!((kernel[0].bytes_copied, kernel[0].bytes_moved), (Some(4096), Some(2 * 4096)));
        assert_eq!(points(Kind::MemcpyPeer, &three, 2, &cfg).iter().filter(|p| p.axes.is_some()).count(), 4);
        cfg.gpu_copy_methods = vec![CopyMethod::CopyEngine];
        assert!(points(Kind::MemcpyPeer, &three, 1, &cfg).iter().all(|p| p.axes.is_none()), "no kernel, no sweep");
        cfg.gpu_copy_methods = vec![CopyMethod::CopyEngine, CopyMethod::SmKernel];
        let peer = points(Kind::MemcpyPeer, &three, 1, &cfg);
        assert_eq!(peer[0].peer.as_deref(), Some("1->0"));
        assert_eq!(peer.last().unwrap().peer.as_deref(), Some("1->2"));
        let bidir = peer.iter().find(|p| p.op == "copy_bidir").unwrap();
        assert_eq!((bidir.bytes_copied, bidir.bytes_moved), (Some(2 * 4096), Some(4 * 4096)));
        let gemm = points(Kind::Gemm, &one, 0, &cfg);
        // bf16: A, B and C in two bytes; fp8: A and B in one, C in bf16.
        assert_eq!(gemm[0].bytes_moved, Some((32 * 48 + 16 * 48) * 2 + 32 * 16 * 2));
        assert_eq!(gemm[1].bytes_moved, Some(32 * 48 + 16 * 48 + 32 * 16 * 2));
        assert_eq!(gemm[1].method.as_deref(), Some("emulated_lt"));
    }
}
