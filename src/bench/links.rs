//! A link sweep between the nodes of an MPI job (one rank per node): the
//! first pass measures every pair once, n/2 pairs at a time
//! ([`crate::vocab::pairs::round_robin`]), each pair exchanging `size`
//! bytes both ways at once (one operation = one exchange, `bytes_copied`
//! = 2 × size); the second pass retests each endpoint of a slow link
//! against a mostly good node (fewer than half of its links suspect)
//! ([`crate::vocab::pairs::second_pass`]), so a bad node is told from a bad
//! cable. Measured at the largest p2p size (the bandwidth regime).

use super::BenchConfig;
use crate::vocab::benches::Bench;
use crate::vocab::pairs;
use crate::vocab::rows::Point;

use crate::vocab::pairs::{RETEST_OP, ROUND_OP};

/// The size a sweep measures at: the largest p2p size.
pub fn size(cfg: &BenchConfig) -> u64 {
    cfg.p2p_sizes.iter().copied().max().unwrap_or(1 << 20)
}

fn point(op: &str, variant: String, size: u64, ranks: u32, peer: String) -> Point {
    Point {
        bench: Bench::Links.name().into(),
        op: op.into(),
        variant: Some(variant),
        method: Some("mpi_sendrecv".into()),
        size_bytes: Some(size),
        ranks: Some(ranks),
        peer: Some(peer),
        bytes_copied: Some(2 * size),
        ..Point::default()
    }
}

/// The first pass: one point per round, its pairs in `peer`.
pub fn points(cfg: &BenchConfig, ranks: u32) -> Vec<Point> {
    let rounds = pairs::round_robin(ranks as usize);
    let k = rounds.len();
    let size = size(cfg);
    rounds
        .iter()
        .enumerate()
        .map(|(r, pairs)| point(ROUND_OP, format!("round {} of {k}", r + 1), size, ranks, pairs::label(pairs)))
        .collect()
}

/// A second-pass point: rank `a` against the good rank `good`, alone.
pub fn retest(size: u64, ranks: u32, a: usize, good: usize) -> Point {
    let pair = (a.min(good), a.max(good));
    point(RETEST_OP, format!("rank {a} against rank {good}"), size, ranks, pairs::label(&[pair]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_has_a_point_per_round_and_counts_both_directions() {
        let mut cfg = BenchConfig::preset(crate::bench::Preset::Quick);
        cfg.p2p_sizes = vec![4096, 1 << 20];
        let pts = points(&cfg, 5);
        assert_eq!(pts.len(), 5);
        assert!(pts.iter().all(|p| p.size_bytes == Some(1 << 20) && p.bytes_copied == Some(2 << 20)));
        let covered: usize = pts.iter().map(|p| pairs::parse(p.peer.as_deref().unwrap()).len()).sum();
        assert_eq!(covered, 10);
        let r = retest(64, 5, 3, 1);
        assert_eq!((r.op.as_str(), r.peer.as_deref()), (RETEST_OP, Some("1<->3")));
    }
}
