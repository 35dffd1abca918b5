//! What a report says of latency curves: a smaller message that takes
//! longer than a larger one, and whether the noise covers it.

use super::Said;

/// The largest message a latency is read at: small messages, up to 4 KiB
/// (beyond it a latency curve measures bandwidth).
pub const SMALL_MESSAGE_BYTES: u64 = 4096;

/// A latency curve's points at small messages ([`SMALL_MESSAGE_BYTES`]).
pub fn small_messages(c: &crate::analysis::Series) -> impl Iterator<Item = &crate::analysis::PointStat> {
    c.points.iter().filter(|p| p.size_bytes.is_some_and(|s| s <= SMALL_MESSAGE_BYTES))
}

/// The largest inversion among a latency curve's small messages.
pub fn small_message_inversion(c: &crate::analysis::Series) -> Option<Said> {
    latency_inversion(c.name(), small_messages(c))
}

/// A latency curve's largest inversion (`analysis::curves::latency_inversion`)
/// as the sentence that states it.
pub fn latency_inversion<'a>(
    curve: &str,
    points: impl Iterator<Item = &'a crate::analysis::PointStat>,
) -> Option<Said> {
    let pts: Vec<&crate::analysis::PointStat> = points.collect();
    let inv = crate::analysis::curves::latency_inversion(&pts)?;
    Some(Said::LatencyInversion {
        curve: curve.to_string(),
        small_bytes: inv.small.size_bytes?,
        small_s: inv.small.median_seconds,
        large_bytes: inv.large.size_bytes?,
        large_s: inv.large.median_seconds,
        ratio: inv.small.median_seconds / inv.large.median_seconds,
        overlap: inv.overlap,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::PointStat;

    fn at(size: u64, s: f64, half_width: f64) -> PointStat {
        PointStat {
            size_bytes: Some(size),
            median_seconds: s,
            ci_low_seconds: Some(s * (1.0 - half_width)),
            ci_high_seconds: Some(s * (1.0 + half_width)),
            ..PointStat::default()
        }
    }

    #[test]
    fn the_largest_latency_inversion_is_named_with_whether_the_noise_covers_it() {
        // mpi-9ba4's small sizes: 16 B over 64 B is the largest inversion.
        let pts = [
            at(8, 383e-9, 0.05),
            at(16, 439e-9, 0.05),
            at(32, 436e-9, 0.05),
            at(64, 188e-9, 0.05),
            at(128, 204e-9, 0.05),
        ];
        match latency_inversion("lat", pts.iter()) {
            Some(Said::LatencyInversion { small_bytes: 16, large_bytes: 64, overlap: false, ratio, .. }) => {
                assert!((ratio - 439.0 / 188.0).abs() < 1e-9)
            }
            other => panic!("{other:?}"),
        }
        // Within 10 %: nothing to question; wide intervals: within the noise.
        assert!(latency_inversion("lat", [at(8, 105e-9, 0.05), at(64, 100e-9, 0.05)].iter()).is_none());
        let noisy = [at(8, 150e-9, 0.4), at(64, 100e-9, 0.4)];
        assert!(matches!(latency_inversion("lat", noisy.iter()), Some(Said::LatencyInversion { overlap: true, .. })));
    }
}
