//! Point-to-point between two ranks, as in seed `000_*`'s MPI half:
//! - `send_recv` bandwidth: messages alternate direction between the pair
//!   (A→B, B→A, ...), one message per operation, `bytes_copied` = size;
//! - `bidirectional`: both ranks send and receive at once, `bytes_copied` =
//!   2 × size per operation;
//! - `latency` (ping-pong): one operation is one one-way message, so
//!   seconds / iterations is the one-way latency (half a round trip).
//!
//! One-sided (RMA on an MPI window), as in seed `003_*`'s WRITE half:
//! - `put` / `get`: rank 0 writes into (reads from) its peer's window under
//!   a passive-target lock, the peer's CPU takes no part; one operation is
//!   one message of `size` bytes, and a flush completes them every
//!   `sync_every` operations (and at the end of every timed batch), so
//!   `sync_every = 1` is the write-up's quiet-after-every-write;
//! - `put` over N channels: `split` cuts one `size`-byte message into N
//!   concurrent puts (`bytes_copied` = size), `round_robin` puts N whole
//!   buffers at once, one per channel (`bytes_copied` = N × size); per
//!   channel bandwidth is the aggregate / N. Within one job a channel is an
//!   outstanding operation, not a separate NIC;
//! - `put_round_trip`: the two-sided pattern with puts: messages alternate
//!   direction, each closed by a fence (one operation = one one-way
//!   message, like `send_recv`).
//!
//! The one-sided parameters are in the row's `axes` (`channels`,
//! `strategy`, `sync_every`) and, for curves and tables, in its `variant`.

use super::BenchConfig;
use crate::vocab::benches::Bench;
use crate::vocab::rows::Point;

pub use crate::vocab::one_sided::OneSided;

/// p2p points for the pairs (0, peer) for every other rank.
pub fn points(cfg: &BenchConfig, ranks: u32) -> Vec<Point> {
    let mut out = Vec::new();
    for peer in 1..ranks {
        let pair = format!("0<->{peer}");
        out.extend(two_sided_points(cfg, ranks, &pair, "host buffers"));
        out.extend(one_sided_points(cfg, ranks, &pair));
    }
    out
}

/// The two-sided points again on GPU memory (`device buffers (cuda)`),
/// between rank 0 and rank 1: each rank's buffers on its own GPU, handed
/// to a GPU-aware MPI.
pub fn device_points(cfg: &BenchConfig, ranks: u32, backend: &str) -> Vec<Point> {
    two_sided_points(cfg, ranks, "0<->1", &device_variant(backend))
}

/// The variant of device-buffer points of a GPU backend.
pub fn device_variant(backend: &str) -> String {
    format!("device buffers ({backend})")
}

/// send_recv, bidirectional and latency for one pair, on `variant` buffers.
fn two_sided_points(cfg: &BenchConfig, ranks: u32, pair: &str, variant: &str) -> Vec<Point> {
    let mut out = Vec::new();
    for (op, sizes) in
        [("send_recv", &cfg.p2p_sizes), ("bidirectional", &cfg.p2p_sizes), ("latency", &cfg.latency_sizes)]
    {
        for &size in sizes {
            out.push(Point {
                bench: Bench::P2p.name().into(),
                op: op.into(),
                variant: Some(variant.into()),
                method: Some(if op == "latency" { "mpi_ping_pong" } else { "mpi_send_recv" }.into()),
                size_bytes: Some(size),
                ranks: Some(ranks),
                peer: Some(pair.to_string()),
                bytes_copied: Some(if op == "bidirectional" { 2 * size } else { size }),
                ..Point::default()
            });
        }
    }
    out
}

/// One-sided points for one pair: put and get at every `sync_every`, then
/// put over every channel count above 1 with both strategies (at the
/// largest `sync_every`, the batched form), then the put round trip.
fn one_sided_points(cfg: &BenchConfig, ranks: u32, pair: &str) -> Vec<Point> {
    let mut shapes: Vec<(&str, OneSided)> = Vec::new();
    for &sync_every in &cfg.p2p_sync_every {
        for op in ["put", "get"] {
            shapes.push((op, OneSided { channels: 1, round_robin: false, sync_every }));
        }
    }
    let batched = cfg.p2p_sync_every.iter().copied().max().unwrap_or(1);
    for &channels in cfg.p2p_channels.iter().filter(|&&c| c > 1) {
        for round_robin in [false, true] {
            shapes.push(("put", OneSided { channels, round_robin, sync_every: batched }));
        }
    }
    let mut out = Vec::new();
    for (op, os) in shapes {
        for &size in &cfg.p2p_sizes {
            // A split message is cut into whole, equal chunks.
            if !os.round_robin && size < os.channels as u64 {
                continue;
            }
            out.push(Point {
                bench: Bench::P2p.name().into(),
                op: op.into(),
                variant: Some(format!("host buffers, {}", os.label())),
                method: Some(format!("mpi_{op}")),
                size_bytes: Some(size),
                ranks: Some(ranks),
                peer: Some(pair.to_string()),
                bytes_copied: Some(os.bytes(size)),
                axes: Some(os.axes()),
                ..Point::default()
            });
        }
    }
    for &size in &cfg.p2p_sizes {
        out.push(Point {
            bench: Bench::P2p.name().into(),
            op: "put_round_trip".into(),
            variant: Some("host buffers".into()),
            method: Some("mpi_put_fence".into()),
            size_bytes: Some(size),
            ranks: Some(ranks),
            peer: Some(pair.to_string()),
            bytes_copied: Some(size),
            ..Point::default()
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Preset;

    fn cfg(channels: &[u32], sync: &[u32]) -> BenchConfig {
        let mut c = BenchConfig::preset(Preset::Quick);
        c.p2p_sizes = vec![3, 4096];
        c.latency_sizes = vec![8];
        c.p2p_channels = channels.to_vec();
        c.p2p_sync_every = sync.to_vec();
        c
    }

    #[test]
    fn one_sided_points_count_their_bytes_and_keep_their_parameters() {
        let pts = points(&cfg(&[1, 4], &[1, 64]), 2);
        let put = |ch: u32, rr: bool, sync: u32, size: u64| {
            pts.iter()
                .find(|p| {
                    p.op == "put"
                        && p.size_bytes == Some(size)
                        && OneSided::of(p) == OneSided { channels: ch, round_robin: rr, sync_every: sync }
                })
                .cloned()
        };
        // One channel: both flush rhythms.
        assert_eq!(put(1, false, 1, 4096).unwrap().bytes_copied, Some(4096));
        assert!(put(1, false, 64, 4096).is_some());
        // Four channels only at the batched rhythm; round robin moves 4 buffers.
        assert_eq!(put(4, true, 64, 4096).unwrap().bytes_copied, Some(4 * 4096));
        assert_eq!(put(4, false, 64, 4096).unwrap().bytes_copied, Some(4096));
        assert!(put(4, false, 1, 4096).is_none());
        // 3 bytes cannot be split four ways; round robin still runs.
        assert!(put(4, false, 64, 3).is_none());
        assert!(put(4, true, 64, 3).is_some());
        // Labels differ wherever parameters do, so curves never merge.
        let mut labels: Vec<_> = pts.iter().filter(|p| p.op == "put").map(|p| p.variant.clone()).collect();
        labels.sort();
        labels.dedup();
        assert_eq!(labels.len(), 4, "{labels:?}");
        let axes = put(4, true, 64, 4096).unwrap().axes.unwrap();
        assert_eq!(axes, r#"{"channels":4,"strategy":"round_robin","sync_every":64}"#);
        assert!(pts.iter().any(|p| p.op == "get" && p.method.as_deref() == Some("mpi_get")));
        assert_eq!(pts.iter().filter(|p| p.op == "put_round_trip").count(), 2);
    }

    #[test]
    fn every_peer_gets_the_one_sided_points() {
        let pts = points(&cfg(&[1], &[8]), 4);
        for peer in ["0<->1", "0<->2", "0<->3"] {
            assert!(pts.iter().any(|p| p.op == "put" && p.peer.as_deref() == Some(peer)), "{peer}");
        }
    }
}
