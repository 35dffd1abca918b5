//! Point-to-point between two ranks, as in seed `000_*`'s MPI half:
//! - `send_recv` bandwidth: messages alternate direction between the pair
//!   (A→B, B→A, ...), one message per operation, `bytes_copied` = size;
//! - `bidirectional`: both ranks send and receive at once, `bytes_copied` =
//!   2 × size per operation;
//! - `latency` (ping-pong): one operation is one one-way message, so
//!   seconds / iterations is the one-way latency (half a round trip).

use super::BenchConfig;
use crate::vocab::rows::Point;

/// p2p points for the pairs (0, peer) for every other rank.
pub fn points(cfg: &BenchConfig, ranks: u32) -> Vec<Point> {
    let mut out = Vec::new();
    for peer in 1..ranks {
        let pair = format!("0<->{peer}");
        for (op, sizes) in
            [("send_recv", &cfg.p2p_sizes), ("bidirectional", &cfg.p2p_sizes), ("latency", &cfg.latency_sizes)]
        {
            for &size in sizes {
                out.push(Point {
                    bench: "p2p".into(),
                    op: op.into(),
                    variant: Some("host buffers".into()),
                    method: Some(if op == "latency" { "mpi_ping_pong" } else { "mpi_send_recv" }.into()),
                    size_bytes: Some(size),
                    ranks: Some(ranks),
                    peer: Some(pair.clone()),
                    bytes_copied: Some(if op == "bidirectional" { 2 * size } else { size }),
                    ..Point::default()
                });
            }
        }
    }
    out
}
