//! What a report says of latency curves: a smaller message that takes
//! longer than a larger one, and whether the noise covers it; and a step
//! between neighbouring sizes that the bytes do not explain.

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
    let (small, large) = (inv.small.size_bytes?, inv.large.size_bytes?);
    let mut also: Vec<u64> = pts
        .iter()
        .filter(|p| p.size_bytes.is_some_and(|s| s < large && s != small))
        .filter(|p| p.median_seconds > inv.large.median_seconds * 1.1)
        .filter_map(|p| p.size_bytes)
        .collect();
    also.sort_unstable();
    Some(Said::LatencyInversion {
        curve: curve.to_string(),
        small_bytes: small,
        small_s: inv.small.median_seconds,
        large_bytes: large,
        large_s: inv.large.median_seconds,
        ratio: inv.small.median_seconds / inv.large.median_seconds,
        overlap: inv.overlap,
        also,
    })
}

/// What a latency curve's small messages say: its largest inversion and
/// its largest step, where it has them.
pub fn small_message_notes(c: &crate::analysis::Series) -> impl Iterator<Item = Said> {
    [small_message_inversion(c), small_message_step(c)].into_iter().flatten()
}

/// The largest step among a latency curve's small messages.
pub fn small_message_step(c: &crate::analysis::Series) -> Option<Said> {
    latency_step(c.name(), small_messages(c))
}

/// The largest step between neighbouring sizes of a latency curve where
/// the time grows more than twice as fast as the bytes (time ratio over
/// size ratio above 2) and the two rerun intervals do not overlap. Below a
/// few KiB a message's time is mostly fixed cost, so it grows slower than
/// its bytes; a step like this is a cost that starts at the larger size.
pub fn latency_step<'a>(curve: &str, points: impl Iterator<Item = &'a crate::analysis::PointStat>) -> Option<Said> {
    let mut pts: Vec<&crate::analysis::PointStat> =
        points.filter(|p| p.size_bytes.is_some_and(|s| s > 0) && p.median_seconds > 0.0).collect();
    pts.sort_by_key(|p| p.size_bytes);
    let excess = |a: &crate::analysis::PointStat, b: &crate::analysis::PointStat| {
        (b.median_seconds / a.median_seconds) / (b.size_bytes.unwrap_or(1) as f64 / a.size_bytes.unwrap_or(1) as f64)
    };
    let apart = |a: &crate::analysis::PointStat, b: &crate::analysis::PointStat| matches!((a.ci_high_seconds, b.ci_low_seconds), (Some(high), Some(low)) if high < low);
    let (a, b) = pts
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|(a, b)| excess(a, b) > 2.0 && apart(a, b))
        .max_by(|x, y| excess(x.0, x.1).total_cmp(&excess(y.0, y.1)))?;
    Some(Said::LatencyStep {
        curve: curve.to_string(),
        small_bytes: a.size_bytes?,
        small_s: a.median_seconds,
        large_bytes: b.size_bytes?,
        large_s: b.median_seconds,
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
            Some(Said::LatencyInversion { small_bytes: 16, large_bytes: 64, overlap: false, ratio, also, .. }) => {
                assert!((ratio - 439.0 / 188.0).abs() < 1e-9);
                // 8 B and 32 B take longer than 64 B as well.
                assert_eq!(also, [8, 32]);
            }
            other => panic!("{other:?}"),
        }
        // Within 10 %: nothing to question; wide intervals: within the noise.
        assert!(latency_inversion("lat", [at(8, 105e-9, 0.05), at(64, 100e-9, 0.05)].iter()).is_none());
        let noisy = [at(8, 150e-9, 0.4), at(64, 100e-9, 0.4)];
        assert!(matches!(latency_inversion("lat", noisy.iter()), Some(Said::LatencyInversion { overlap: true, .. })));
    }

    #[test]
    fn a_step_the_bytes_do_not_explain_is_named_and_a_noisy_or_proportional_one_is_not() {
        // mpi-9ba4: 2 KiB 400 ns, 4 KiB 3.07 us (7.7x the time for 2x the bytes).
        let pts = [at(1024, 342e-9, 0.05), at(2048, 400e-9, 0.05), at(4096, 3.07e-6, 0.05), at(8192, 3.96e-6, 0.05)];
        match latency_step("lat", pts.iter()) {
            Some(Said::LatencyStep { small_bytes: 2048, large_bytes: 4096, .. }) => {}
            other => panic!("{other:?}"),
        }
        // Time in proportion to the bytes (or less): no step.
        let linear = [at(2048, 1e-6, 0.05), at(4096, 2e-6, 0.05), at(8192, 3.9e-6, 0.05)];
        assert!(latency_step("lat", linear.iter()).is_none());
        // A jump inside overlapping intervals: not named.
        let noisy = [at(2048, 1e-6, 0.7), at(4096, 5e-6, 0.7)];
        assert!(latency_step("lat", noisy.iter()).is_none());
    }
}
