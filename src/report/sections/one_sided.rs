//! One-sided transfers in the network section: the channel table, what a
//! flush after every operation costs, and one-sided against two-sided like
//! for like. Every figure a sentence gives is in one of these tables, and a
//! difference is called one only when the intervals (or, for plateaus, the
//! flatness the plateaus hold to) allow it. Template: `sections/network.md`.

use std::collections::BTreeMap;

use serde::Serialize;

use super::network::{ChannelRow, TransferRow};
use crate::analysis::{Curve, PointStat, Series};
use crate::analysis::findings::Said;
use crate::vocab::interval::RateInterval;
use crate::vocab::units::{format_bytes, format_sig3};

/// A flush after every operation against the least frequent flush, at the
/// largest size both measured.
#[derive(Debug, Clone, Serialize)]
pub struct FlushRow {
    pub op: String,
    pub size: String,
    pub every: u32,
    /// Gb/s with its 95 % interval where the point has one.
    pub every_gbits: String,
    pub batched: u32,
    pub batched_gbits: String,
    /// Relative change of the frequent flush against the batched one.
    pub change: String,
    pub verdict: String,
    /// Whether the intervals do not overlap (a difference this run resolves).
    pub resolved: bool,
}

/// The best one-way plateau of each semantics, side by side.
#[derive(Debug, Clone, Serialize)]
pub struct LikeForLike {
    pub one_sided: String,
    pub one_sided_gbits: String,
    pub two_sided: String,
    pub two_sided_gbits: String,
    pub ratio: String,
    /// The wider of the two plateaus' tolerances (`±43.0 %`).
    pub flat_to: String,
    pub resolved: bool,
    pub same_file: bool,
    /// From two files: the device both files' rows name.
    pub device: Option<String>,
    /// The two sources, when they differ.
    pub sources: String,
}

/// The rate interval of a point in Gb/s (the time interval inverted).
fn gbits_interval(p: &PointStat) -> RateInterval {
    p.gbps_copied.map_or(RateInterval::None, |g| p.rate_interval(g).scaled(8.0))
}

pub(super) fn with_interval(p: &PointStat) -> String {
    let g = p.gbps_copied.unwrap_or(0.0) * 8.0;
    match gbits_interval(p).show(format_sig3) {
        Some(ci) => format!("{} {ci}", format_sig3(g)),
        None => format!("{} (no interval)", format_sig3(g)),
    }
}

/// The channel table, and per one-channel put or get measured at several
/// flush rhythms the frequent flush against the batched one.
pub fn channels_and_flushes(curves: &[&Series]) -> (Vec<ChannelRow>, Vec<FlushRow>) {
    let mut rows = Vec::new();
    let mut by_op: BTreeMap<(String, String), Vec<(u32, &Curve)>> = BTreeMap::new();
    for s in curves {
        let c = &s.curve;
        let Some(os) = s.one_sided() else { continue };
        // The curve's one peak (Curve::peak), as every other table states it.
        if let Some((size, gbps, ..)) = c.peak() {
            rows.push(ChannelRow {
                key: s.key.clone(),
                curve: s.name().to_string(),
                channels: os.channels,
                strategy: os.strategy().replace('_', " "),
                sync_every: os.sync_every,
                peak_gbits: format_sig3(gbps * 8.0),
                per_channel_gbits: format_sig3(gbps * 8.0 / os.channels as f64),
                at: format_bytes(size),
                matched_size: "-".into(),
                matched_gbits: "-".into(),
                of_link: String::new(),
                peak_gbps: gbps,
            });
        }
        if os.channels == 1 {
            by_op.entry((c.run_id.clone(), c.op.clone())).or_default().push((os.sync_every, c));
        }
    }
    super::network::matched(curves, &mut rows);
    let mut flushes = Vec::new();
    for ((_, op), mut v) in by_op.into_iter().filter(|(_, v)| v.len() > 1) {
        v.sort_by_key(|(k, _)| *k);
        let ((k0, every), (k1, batched)) = (v[0], v[v.len() - 1]);
        let at = |c: &'_ Curve, size: u64| c.points.iter().find(|p| p.size_bytes == Some(size)).cloned();
        // The largest size both measured and both trust (Curve::trusts);
        // else the largest both measured, which is then not judged.
        let common: Vec<u64> =
            every.points.iter().filter_map(|p| p.size_bytes).filter(|&s| at(batched, s).is_some()).collect();
        let (te, tb) = (every.trusted(), batched.trusted());
        let ok = |t: &[(u64, f64, bool)], s: u64| t.iter().any(|&(size, _, trusted)| size == s && trusted);
        let trusted = common.iter().copied().filter(|&s| ok(&te, s) && ok(&tb, s)).max();
        let Some(size) = trusted.or(common.iter().copied().max()) else { continue };
        let (Some(a), Some(b)) = (at(every, size), at(batched, size)) else { continue };
        let (Some(ga), Some(gb)) = (a.gbps_copied, b.gbps_copied) else { continue };
        if gb <= 0.0 {
            continue;
        }
        let (resolved, verdict) = match trusted {
            Some(_) => flush_verdict(gbits_interval(&a).range(), gbits_interval(&b).range(), ga, gb),
            None => (false, "not judged: no size both measured with an interval they trust (see Precision)"),
        };
        flushes.push(FlushRow {
            op,
            size: format_bytes(size),
            every: k0,
            every_gbits: with_interval(&a),
            batched: k1,
            batched_gbits: with_interval(&b),
            change: format!("{:+.0} %", (ga / gb - 1.0) * 100.0),
            verdict: verdict.into(),
            resolved,
        });
    }
    (rows, flushes)
}

/// A difference between two rates only where their 95 % intervals do not
/// overlap; none claimed without both intervals.
fn flush_verdict(ia: Option<(f64, f64)>, ib: Option<(f64, f64)>, ga: f64, gb: f64) -> (bool, &'static str) {
    match (ia, ib) {
        (Some(ia), Some(ib)) if ia.1 < ib.0 || ib.1 < ia.0 => {
            (true, if ga < gb { "the frequent flush is slower" } else { "the frequent flush is faster" })
        }
        (Some(_), Some(_)) => (false, "no difference this run can resolve: the intervals overlap"),
        _ => (false, "not judged: a point has no interval"),
    }
}

/// One-sided against two-sided, like for like: the best settled plateau of
/// each among one-way curves that share a file or name the same device
/// (a pair from two systems is no comparison of semantics, so none is
/// made). Each plateau is flat within its tolerance; a ratio inside the
/// wider of the two is no difference this run resolves.
pub fn like_for_like(curves: &[&Series]) -> Option<LikeForLike> {
    // One way against one way (not a bidirectional test, not a round trip),
    // as the op table says each is: (Gb/s, name, source, how flat its
    // plateau measured, device).
    let candidates = |one: bool| -> Vec<(f64, String, String, f64, String)> {
        let mut v: Vec<_> = curves
            .iter()
            .filter(|c| c.meaning.one_sided() == one && c.semantics() != "other" && c.meaning.one_way())
            .filter_map(|c| {
                let s = c.settled()?;
                let device = c.points.first().map(|p| p.device.clone()).unwrap_or_default();
                Some((s.plateau_gbps * 8.0, c.name().to_string(), c.source(), c.plateau_spread()?, device))
            })
            .collect();
        v.sort_by(|a, b| b.0.total_cmp(&a.0));
        v
    };
    let named = |d: &str| !crate::analysis::catalog::unnamed(d);
    let (ones, twos) = (candidates(true), candidates(false));
    let (o, t) = ones.iter().find_map(|o| {
        let t = twos.iter().find(|t| t.2 == o.2 || (named(&o.4) && t.4 == o.4))?;
        Some((o, t))
    })?;
    let noise = o.3.max(t.3);
    let ratio = o.0 / t.0;
    Some(LikeForLike {
        one_sided_gbits: format_sig3(o.0),
        two_sided_gbits: format_sig3(t.0),
        ratio: format!("{ratio:.2}×"),
        flat_to: format!("±{} %", format_sig3(noise * 100.0)),
        resolved: (ratio - 1.0).abs() > noise,
        same_file: o.2 == t.2,
        device: (o.2 != t.2).then(|| o.4.clone()),
        sources: if o.2 == t.2 { o.2.clone() } else { format!("{} and {}", o.2, t.2) },
        one_sided: o.1.clone(),
        two_sided: t.1.clone(),
    })
}

/// Whether a one-sided and a two-sided one-way curve both settled, but
/// every such pair comes from two systems (other files, other devices).
fn only_across_systems(curves: &[&Series]) -> bool {
    let settled =
        |one: bool| curves.iter().any(|c| c.meaning.one_sided() == one && c.meaning.one_way() && c.settled().is_some());
    settled(true) && settled(false)
}

/// The section's sentences: what the like-for-like table concludes, or
/// why it has nothing to compare.
pub fn observations(l: Option<&LikeForLike>, rows: &[TransferRow], curves: &[&Series]) -> Vec<Said> {
    match l {
        Some(l) => vec![Said::OneSided {
            one_sided: l.one_sided.clone(),
            two_sided: l.two_sided.clone(),
            resolved: l.resolved,
            ratio: l.ratio.clone(),
            flat_to: l.flat_to.clone(),
            same_file: l.same_file,
            device: l.device.clone(),
        }],
        None if only_across_systems(curves) => vec![Said::OneSidedNotCompared { across_systems: true }],
        None if rows.is_empty() => Vec::new(),
        None => vec![Said::OneSidedNotCompared { across_systems: false }],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::benches::Bench;

    /// A p2p series of `op` at `gbps` (bytes copied): the smallest flat
    /// region the plateau rule accepts.
    fn flat(op: &str, gbps: f64) -> Series {
        Series::new(flat_curve(op, gbps), format!("p2p {op}"), None)
    }

    fn flat_curve(op: &str, gbps: f64) -> Curve {
        let pts: Vec<PointStat> = crate::vocab::stats::fixtures::flat_tail(1 << 20, gbps)
            .into_iter()
            .map(|(size, _)| PointStat {
                bench: Bench::P2p.name().into(),
                op: op.into(),
                variant: Some("host buffers".into()),
                size_bytes: Some(size),
                samples: 10,
                gbps_copied: Some(gbps),
                summary: crate::vocab::stats::Summary { median: size as f64 / (gbps * 1e9), ..Default::default() },
                ..Default::default()
            })
            .collect();
        crate::analysis::series::series_of(&pts, |_| None).remove(0).curve
    }

    /// A p2p curve of `op` whose first three sizes run at `gbps` × (1 + jitter).
    fn jittered(op: &str, gbps: f64, jitter: [f64; 3]) -> Series {
        let mut c = flat_curve(op, gbps);
        for (p, j) in c.points.iter_mut().zip(jitter) {
            let g = gbps * (1.0 + j);
            p.gbps_copied = Some(g);
            p.median_seconds = p.size_bytes.unwrap() as f64 / (g * 1e9);
        }
        Series::new(c, format!("p2p {op}"), None)
    }

    proptest::proptest! {
        /// No sentence claims a difference the evidence does not support:
        /// a one-sided/two-sided ratio is called one only outside both
        /// plateaus' flatness, and a flush change only when the intervals
        /// are disjoint.
        #[test]
        fn no_sentence_claims_a_difference_the_noise_allows(
            a in 1.0f64..100.0, b in 1.0f64..100.0,
            ja in proptest::array::uniform3(-0.3f64..0.3), jb in proptest::array::uniform3(-0.3f64..0.3),
            lo_a in 0.5f64..1.0, hi_a in 1.0f64..2.0, lo_b in 0.5f64..1.0, hi_b in 1.0f64..2.0,
        ) {
            let (put, recv) = (jittered("put", a, ja), jittered("send_recv", b, jb));
            if let Some(l) = like_for_like(&[&put, &recv]) {
                let (sa, sb) = (put.summary.clone().unwrap(), recv.summary.clone().unwrap());
                let ratio = sa.plateau_gbps / sb.plateau_gbps;
                let noise = put.plateau_spread().unwrap().max(recv.plateau_spread().unwrap());
                let said = observations(Some(&l), &[], &[]);
                let claims = match &said[..] {
                    [Said::OneSided { resolved, .. }] => *resolved,
                    other => panic!("one sentence expected: {other:?}"),
                };
                proptest::prop_assert_eq!(claims, (ratio - 1.0).abs() > noise, "{:?} (ratio {}, noise {})", said, ratio, noise);
            }
            let (ia, ib) = ((a * lo_a, a * hi_a), (b * lo_b, b * hi_b));
            let (resolved, verdict) = flush_verdict(Some(ia), Some(ib), a, b);
            let disjoint = ia.1 < ib.0 || ib.1 < ia.0;
            proptest::prop_assert_eq!(resolved, disjoint);
            proptest::prop_assert_eq!(verdict.contains("slower") || verdict.contains("faster"), disjoint);
            proptest::prop_assert!(!flush_verdict(None, Some(ib), a, b).0, "no interval, no claim");
        }
    }

    /// A one-sided series of `op` flushed every `sync_every`, whose points
    /// from `wide_from` up have an interval wider than the trust rule takes.
    fn one_sided(op: &str, gbps: f64, sync_every: u32, wide_from: u64) -> Series {
        let mut c = flat_curve(op, gbps);
        for p in &mut c.points {
            p.axes = Some(format!(r#"{{"channels":1,"sync_every":{sync_every}}}"#));
            let m = p.size_bytes.unwrap() as f64 / (gbps * 1e9);
            p.median_seconds = m;
            let (lo, hi) = if p.size_bytes.unwrap() >= wide_from { (0.5, 2.0) } else { (0.99, 1.01) };
            (p.ci_low_seconds, p.ci_high_seconds) = (Some(m * lo), Some(m * hi));
            p.ci_basis = Some(crate::vocab::interval::Basis::Rounds);
            p.rounds = 3;
        }
        let mut s = Series::new(c, format!("p2p {op} {sync_every}"), None);
        s.key.variant = Some(format!("host buffers, flush every {sync_every}"));
        s
    }

    #[test]
    fn channel_rows_compare_at_the_largest_size_every_curve_trusts() {
        let sizes: Vec<u64> = flat_curve("put", 1.0).points.iter().filter_map(|p| p.size_bytes).collect();
        let cut = sizes[sizes.len() - 2];
        let (a, b) = (one_sided("put", 10.0, 1, u64::MAX), one_sided("put", 20.0, 64, cut));
        let (rows, _) = channels_and_flushes(&[&a, &b]);
        assert_eq!(rows.len(), 2);
        let below = sizes[sizes.len() - 3];
        for r in &rows {
            assert_eq!(r.matched_size, format_bytes(below), "{r:?}");
        }
        assert!(rows[0].matched_gbits.starts_with("80.0 ("), "{:?}", rows[0]);
        assert!(rows[1].matched_gbits.starts_with("160 ("), "{:?}", rows[1]);
        // No size trusted by both: the size most trust, the other's cell
        // marked; a get is never matched with puts.
        let c = one_sided("put", 10.0, 64, 0);
        let mut c2 = one_sided("put", 10.0, 16, 0);
        c2.key.variant = Some("host buffers, flush every 16".into());
        let g = one_sided("get", 10.0, 1, u64::MAX);
        let (rows, _) = channels_and_flushes(&[&a, &c, &c2, &g]);
        let largest = format_bytes(sizes[sizes.len() - 1]);
        assert_eq!(rows[0].matched_size, largest, "{rows:?}");
        assert!(rows[1].matched_gbits.contains("too uncertain"), "{rows:?}");
        assert!(!rows[0].matched_gbits.contains("too uncertain"), "{rows:?}");
        assert_eq!(rows[3].matched_size, "-", "a lone get has nothing to match: {rows:?}");
    }

    #[test]
    fn one_sided_meets_two_sided_like_for_like_and_only_beyond_the_noise() {
        let (put, bidir) = (flat("put", 10.0), flat("bidirectional", 20.0));
        // Within the flatness its plateau measured (its largest sizes
        // ±6 %): no difference claimed, and the bidirectional curve (both
        // ways counted) is never the comparator.
        let mut c = flat_curve("send_recv", 10.5);
        let n = c.points.len();
        for (p, j) in c.points[n - 3..].iter_mut().zip([1.06, 0.94, 1.0]) {
            let g = 10.5 * j;
            p.gbps_copied = Some(g);
            p.median_seconds = p.size_bytes.unwrap() as f64 / (g * 1e9);
        }
        let close = Series::new(c, "p2p send_recv".into(), None);
        assert!(close.plateau_spread().unwrap() > 0.05, "{:?}", close.plateau_spread());
        let l = like_for_like(&[&put, &close, &bidir]).unwrap();
        assert_eq!(l.ratio, "0.95×");
        assert!(!l.two_sided.contains("bidirectional"));
        let said = observations(Some(&l), &[], &[]);
        assert!(matches!(&said[..], [Said::OneSided { resolved: false, .. }]), "{said:?}");
        let slow = flat("send_recv", 5.0);
        let l = like_for_like(&[&put, &slow, &bidir]).unwrap();
        assert!(l.resolved);
        let said = observations(Some(&l), &[], &[]);
        assert!(matches!(&said[..], [Said::OneSided { resolved: true, ratio, .. }] if ratio == "2.00×"), "{said:?}");
    }

    #[test]
    fn curves_from_two_systems_are_not_set_side_by_side() {
        let from = |op: &str, gbps: f64, file: &str, device: &str| {
            let mut c = flat_curve(op, gbps);
            for p in &mut c.points {
                p.source = Some(format!("import:perftest:{file}"));
                p.device = device.into();
            }
            Series::new(c, format!("p2p {op}"), None)
        };
        // Two files, two devices: no ratio, and the sentence says why.
        let (put, recv) = (from("put", 10.0, "a.txt", "mlx5_3"), from("send_recv", 5.0, "b.txt", "unknown"));
        assert!(like_for_like(&[&put, &recv]).is_none());
        // Two files whose rows name no device: no shared system either.
        let unnamed = |op: &str, g: f64, f: &str| from(op, g, f, "unknown");
        assert!(like_for_like(&[&unnamed("put", 10.0, "a.txt"), &unnamed("send_recv", 5.0, "b.txt")]).is_none());
        let said = observations(None, &[], &[&put, &recv]);
        assert!(matches!(&said[..], [Said::OneSidedNotCompared { across_systems: true }]), "{said:?}");
        // Two files naming one device: compared, and the device is named.
        let recv = from("send_recv", 5.0, "b.txt", "mlx5_3");
        let l = like_for_like(&[&put, &recv]).unwrap();
        assert!(!l.same_file && l.device.as_deref() == Some("mlx5_3") && l.resolved, "{l:?}");
    }
}
