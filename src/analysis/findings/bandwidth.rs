//! What a report says of size-swept curves (memcpy, STREAM, collectives,
//! MPI and GPU links) and of GEMM peaks: each finding computed from the
//! series summary it states, never from a display name.

use super::{PlateauFlags, Said};
use crate::analysis::{PointStat, Saturation, Series};
use crate::vocab::benches::Bench;
use crate::vocab::stats::Crossing;
use crate::vocab::units::{format_sig3, FlopUnit};

/// The saturation sentence of a curve against its plateau, or why there is
/// none to state.
fn saturation_sentence(s: &Saturation, smallest: Option<u64>) -> Said {
    if s.sizes < 2 {
        Said::OneSize
    } else if !s.settled() {
        Said::NoLevel
    } else if s.plateau_50 == Crossing::FromStart {
        Said::AboveRamp { smallest, cached: s.hump().is_some() }
    } else {
        Said::Saturation { p50: s.plateau_50, p80: s.plateau_80, p90: s.plateau_90 }
    }
}

/// Observations on a family of size-swept curves (memcpy, or one stream op).
pub fn bandwidth_observations(series: &[&Series], roof: Option<(&str, f64)>, what: &str) -> Vec<Said> {
    let mut obs = Vec::new();
    let with: Vec<(&Series, &Saturation)> = series.iter().filter_map(|s| Some((*s, s.summary.as_ref()?))).collect();
    // The curve with the highest plateau, a settled one before any that is
    // not, and one benchbook measured before another tool's (a reference
    // on the same chart is compared in its own table, not described here).
    let native = |c: &Series| c.points.first().is_some_and(PointStat::native);
    let Some(&(curve, best)) = with.iter().max_by(|a, b| {
        (native(a.0), a.1.settled(), a.1.plateau_gbps)
            .partial_cmp(&(native(b.0), b.1.settled(), b.1.plateau_gbps))
            .unwrap_or(std::cmp::Ordering::Equal)
    }) else {
        return obs;
    };
    let peak_point = curve.points.iter().find(|p| p.size_bytes == Some(best.peak_size_bytes));
    // A peak above the memory roofline cannot come from memory: say so,
    // with the working set (the bytes one operation moves) a cache holds.
    let above_roof = match (roof, peak_point) {
        (Some((_, roof_gbps)), Some(p)) if best.peak_gbps > roof_gbps => {
            p.gbps_moved.map(|g| (roof_gbps, (g * 1e9 * p.median_seconds).round() as u64))
        }
        _ => None,
    };
    obs.push(Said::BandwidthPeak {
        what: what.into(),
        peak_gbps: best.peak_gbps,
        copied_gbps: peak_point.and_then(|p| p.gbps_copied),
        size_bytes: best.peak_size_bytes,
        label: curve.name().to_string(),
        above_roof,
        settled: best.settled(),
    });
    let flags = PlateauFlags::of(best);
    // One size is no plateau: the saturation sentence says so.
    if best.settled() {
        obs.push(Said::Plateau {
            plateau_gbps: best.plateau_gbps,
            sizes: best.plateau_sizes.clone(),
            tolerance: best.plateau_tolerance,
            flags,
        });
    } else if best.sizes > 1 {
        obs.push(Said::Unsettled {
            largest: best.plateau_sizes.clone(),
            level_gbps: best.plateau_gbps,
            rule: crate::vocab::stats::plateau_rule(),
            flags,
        });
    }
    // A cache peak above the level, unless the peak is a flagged jump.
    let peak_is_jump = best.plateau_jump.is_some_and(|(size, _)| size == best.peak_size_bytes);
    if let Some(ratio) = best.hump().filter(|_| !peak_is_jump) {
        obs.push(Said::CachePeak {
            size_bytes: best.peak_size_bytes,
            ratio,
            working_set_bytes: 2 * best.peak_size_bytes,
        });
    }
    let smallest = curve.points.first();
    obs.push(saturation_sentence(best, smallest.and_then(|p| p.size_bytes)));
    if let Some(small) = smallest {
        if let (Some(size), Some(g)) = (small.size_bytes, small.gbps_moved) {
            // Above the plateau the cache sentence has said why.
            if g < 0.5 * best.plateau_gbps {
                obs.push(Said::FixedCost { size_bytes: size, time_s: small.median_seconds });
            }
        }
    }
    obs.extend(convergence_sentence(series.iter().flat_map(|c| &c.points)));
    // Thread counts of the best curve's run and benchmark, each on its plateau.
    let by_threads: Vec<(u32, f64)> = with
        .iter()
        .filter(|(c, s)| s.settled() && s.plateau_jump.is_none() && c.run_id == curve.run_id && c.bench == curve.bench)
        .filter_map(|(c, s)| Some((c.threads?, s.plateau_gbps)))
        .collect();
    if let (Some(one), Some(most)) =
        (by_threads.iter().find(|(t, _)| *t == 1), by_threads.iter().max_by_key(|(t, _)| *t))
    {
        if most.0 > 1 {
            obs.push(Said::Threads { threads: most.0, most_gbps: most.1, one_gbps: one.1 });
        }
    }
    // The roofline of the best curve's own system (the catalog's rule).
    obs.push(match roof.filter(|(_, g)| curve.roofline_gbps == Some(*g)) {
        Some((name, gbps)) => Said::Roofline {
            fraction: best.plateau_gbps / gbps,
            name: name.to_string(),
            roofline_gbps: format_sig3(gbps),
            reach_90: best.roofline_90.filter(|c| *c != Crossing::Never),
        },
        None => Said::NoRoofline { device: curve.device.clone() },
    });
    obs
}

/// How many points met the noise target, when some did not: their medians
/// carry the spread the CV column shows. Imported points (no stop reason)
/// are left out.
/// Points measured in rounds are judged by their interval instead: how
/// many are wider than ±1 %.
pub fn convergence_sentence<'a>(points: impl Iterator<Item = &'a PointStat>) -> Option<Said> {
    use crate::vocab::kinds::StopReason;
    let points: Vec<&PointStat> = points.collect();
    let rounds = |p: &&PointStat| p.ci_basis == Some(crate::vocab::interval::Basis::Rounds);
    if points.iter().any(rounds) {
        // Every point with an interval counts, whatever its basis; those
        // resting on one round are named, as their interval is narrower
        // than a rerun's.
        let all: Vec<(f64, bool)> = points.iter().filter_map(|p| Some((p.ci_relative()?, rounds(p)))).collect();
        let wide: Vec<f64> = all.iter().map(|(w, _)| *w).filter(|w| *w > 0.01).collect();
        return (!wide.is_empty()).then(|| Said::WideIntervals {
            wide: wide.len(),
            of: all.len(),
            widest: wide.iter().copied().fold(0.0, f64::max),
            one_round: all.iter().filter(|(_, r)| !r).count(),
        });
    }
    let stops: Vec<StopReason> = points.iter().filter_map(|p| p.stop).collect();
    let met = stops.iter().filter(|s| **s == StopReason::Converged).count();
    (met < stops.len()).then(|| Said::NoiseTarget {
        met,
        of: stops.len(),
        reasons: stops
            .iter()
            .filter(|s| **s != StopReason::Converged)
            .map(|s| s.words().to_string())
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect(),
    })
}

/// One line per STREAM kernel, in STREAM's own order (not alphabetical):
/// the best curve's plateau and peak.
pub fn stream_observations(curves: &[&Series]) -> Vec<Said> {
    let mut observations = Vec::new();
    // The four STREAM kernels in their order, then any other a tool ran
    // (BabelStream's dot), so that no curve of the table goes unsaid.
    let mut ops: Vec<&str> = crate::vocab::accounting::STREAM_KERNELS.iter().map(|(op, _)| *op).collect();
    for c in curves {
        if !ops.contains(&c.op.as_str()) {
            ops.push(c.op.as_str());
        }
    }
    for op in ops {
        let s: Vec<(&str, &Saturation)> =
            curves.iter().filter(|c| c.op == op).filter_map(|c| Some((c.name(), c.summary.as_ref()?))).collect();
        // A settled curve before one that is not, then the higher level.
        let best = s.iter().max_by(|(_, a), (_, b)| {
            (a.settled(), a.plateau_gbps)
                .partial_cmp(&(b.settled(), b.plateau_gbps))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        if let Some((name, best)) = best {
            observations.push(Said::StreamKernel {
                op: op.to_string(),
                plateau_gbps: best.plateau_gbps,
                peak_gbps: best.peak_gbps,
                size_bytes: best.peak_size_bytes,
                label: name.to_string(),
                sizes: best.sizes,
                settled: best.settled(),
            });
        }
    }
    observations
}

/// One line per link curve (collectives, MPI p2p, GPU peer and host↔device
/// copies): peak, plateau, and where the curve ramps to it; every number is
/// one the saturation table shows.
pub fn link_observations(curves: &[&Series], bench: Bench) -> Vec<Said> {
    curves
        .iter()
        .filter_map(|c| Some((c, c.summary.as_ref()?)))
        .map(|(c, s)| Said::Link {
            label: c.name().to_string(),
            // A collective's name carries its ranks (SeriesKey::ranks).
            ranks: if c.key.ranks.is_some() { None } else { c.points.first().and_then(|p| p.ranks) },
            // Bus bandwidth only where the rows carry a bus factor (an OSU
            // collective gives none: its rate is algbw).
            bus: bench == Bench::Collective && c.has_bus_factor(),
            peak_gbps: s.peak_gbps,
            size_bytes: s.peak_size_bytes,
            plateau_gbps: s.plateau_gbps,
            level_at: s.plateau_sizes.last().copied().unwrap_or(s.peak_size_bytes),
            largest: c.rate().last().map_or(s.peak_size_bytes, |(size, _)| *size),
            sizes: s.sizes,
            settled: s.settled(),
            p80: s.plateau_80,
            p90: s.plateau_90,
            // A level below the peak by more than a quarter: mid-size
            // messages run faster than large ones (the table's peak / plateau).
            hump: s.hump(),
            hump_at_smallest: c.rate().first().map(|(size, _)| *size) == Some(s.peak_size_bytes),
            flags: PlateauFlags::of(s),
        })
        .collect()
}

/// Per dtype (alphabetical): the peak, with its shape and threads (both in
/// the table beside it).
pub fn gemm_observations(pts: &[&PointStat], unit: FlopUnit) -> Vec<Said> {
    let shape = PointStat::shape;
    let mut observations = Vec::new();
    let mut dtypes: Vec<String> = pts.iter().filter_map(|p| p.dtype.clone()).collect();
    dtypes.sort();
    dtypes.dedup();
    for d in &dtypes {
        let of: Vec<&&PointStat> = pts.iter().filter(|p| p.dtype.as_ref() == Some(d)).collect();
        let gf = |p: &PointStat| p.gflops.unwrap_or(0.0);
        // A point measured throttled is no peak, as in Key results and the
        // dtype summary (unless every point of the dtype was).
        let steady: Vec<&&PointStat> = of.iter().copied().filter(|p| !p.held_out()).collect();
        let from = if steady.is_empty() { &of } else { &steady };
        if let Some(best) = from.iter().max_by(|a, b| gf(a).total_cmp(&gf(b))) {
            observations.push(Said::GemmPeak {
                dtype: d.clone(),
                rate: unit.value(gf(best)),
                unit: unit.name().into(),
                shape: shape(best),
                threads: best.threads,
                method: best.method.clone(),
                points: of.len(),
            });
        }
    }
    observations
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Curve;
    use crate::vocab::stats::fixtures::flat_tail;
    use proptest::prelude::*;

    /// A memcpy curve of (size, GB/s moved) points, converged or not.
    fn curve(points: &[(u64, f64)], converged: bool) -> Curve {
        use crate::vocab::kinds::StopReason;
        let pts: Vec<PointStat> = points
            .iter()
            .map(|(size, g)| PointStat {
                bench: Bench::Memcpy.name().into(),
                op: "copy".into(),
                size_bytes: Some(*size),
                threads: Some(1),
                gbps_moved: Some(*g),
                gbps_copied: Some(g / 2.0),
                stop: Some(if converged { StopReason::Converged } else { StopReason::MaxTime }),
                summary: crate::vocab::stats::Summary { median: 2.0 * *size as f64 / (g * 1e9), ..Default::default() },
                ..Default::default()
            })
            .collect();
        crate::analysis::series::series_of(&pts, |_| None).remove(0).curve
    }

    fn observations(points: &[(u64, f64)], converged: bool) -> Vec<Said> {
        let s = Series::new(curve(points, converged), "memcpy copy".into(), None);
        bandwidth_observations(&[&s], None, "memcpy")
    }

    fn has(o: &[Said], pred: impl Fn(&Said) -> bool) -> bool {
        o.iter().any(pred)
    }

    #[test]
    fn a_cache_hump_is_never_called_a_saturation() {
        // This machine's shape: 2700 % of the plateau at 4 KiB.
        let mut shape = vec![(4096, 190.0), (1 << 20, 95.0)];
        shape.extend(flat_tail(1 << 27, 22.0));
        let o = observations(&shape, false);
        assert!(has(&o, |s| *s == Said::AboveRamp { smallest: Some(4096), cached: true }), "{o:?}");
        assert!(!has(&o, |s| matches!(s, Said::Saturation { .. })), "{o:?}");
        assert!(has(&o, |s| matches!(s, Said::CachePeak { size_bytes: 4096, .. })), "{o:?}");
        assert!(!has(&o, |s| matches!(s, Said::FixedCost { .. })), "no '905 % of the plateau': {o:?}");
        assert!(has(&o, |s| matches!(s, Said::NoiseTarget { met: 0, of, .. } if *of == shape.len())), "{o:?}");
    }

    #[test]
    fn hostile_curves_get_only_what_they_support() {
        // One point.
        let one = observations(&[(1 << 20, 50.0)], true);
        assert!(has(&one, |s| *s == Said::OneSize), "{one:?}");
        assert!(!has(&one, |s| matches!(s, Said::Unsettled { .. })), "{one:?}");
        // Still rising at its end: no plateau claimed.
        let rising = observations(&[(4096, 1.0), (65536, 10.0), (1 << 20, 40.0)], true);
        assert!(has(&rising, |s| matches!(s, Said::Unsettled { largest, .. } if largest == &[1 << 20])), "{rising:?}");
        assert!(!has(&rising, |s| matches!(s, Said::Plateau { .. } | Said::Saturation { .. })), "{rising:?}");
        assert!(!has(&rising, |s| matches!(s, Said::NoiseTarget { .. })), "every point converged: {rising:?}");
        // Flat: everything reaches the plateau from the start.
        let flat = observations(&flat_tail(4096, 10.0), true);
        assert!(has(&flat, |s| matches!(s, Said::AboveRamp { cached: false, .. })), "{flat:?}");
        // A dip past the first crossing: the saturation size follows it.
        let mut dip = vec![(1, 5.0), (2, 95.0), (4, 30.0)];
        dip.extend(flat_tail(8, 100.0));
        let dip = observations(&dip, true);
        assert!(has(&dip, |s| matches!(s, Said::Saturation { p90: Crossing::At(8), .. })), "{dip:?}");
    }

    proptest! {
        #[test]
        fn every_sentence_rests_on_the_saturation_it_states(
            rates in proptest::collection::vec(0.01f64..1000.0, 1..24),
            converged in any::<bool>(),
        ) {
            let points: Vec<(u64, f64)> = rates.iter().enumerate().map(|(i, r)| (4096u64 << i, *r)).collect();
            let sat = Series::new(curve(&points, converged), "memcpy copy".into(), None).summary.unwrap();
            let o = observations(&points, converged);
            // Exactly one plateau sentence, settled or not; none for one size.
            let plateau = o.iter().filter(|s| matches!(s, Said::Plateau { .. } | Said::Unsettled { .. })).count();
            prop_assert_eq!(plateau, usize::from(sat.sizes > 1), "{:?}", o);
            for s in &o {
                match s {
                    Said::Saturation { .. } => prop_assert!(sat.settled(), "{:?}", s),
                    Said::CachePeak { ratio, .. } => prop_assert!(sat.settled() && *ratio > crate::vocab::stats::HUMP_RATIO, "{:?}", s),
                    Said::Plateau { plateau_gbps, sizes, tolerance, .. } => {
                        prop_assert_eq!(*plateau_gbps, sat.plateau_gbps);
                        // The rule, from its owner: enough sizes, each within the tolerance.
                        use crate::vocab::stats::{PLATEAU_MIN_SIZES, PLATEAU_TOLERANCE};
                        prop_assert!(sizes.len() >= PLATEAU_MIN_SIZES && *tolerance <= PLATEAU_TOLERANCE + 1e-12, "{:?}", s);
                        for size in sizes {
                            let r = points.iter().find(|p| p.0 == *size).unwrap().1;
                            let within = (r - plateau_gbps).abs() <= PLATEAU_TOLERANCE * plateau_gbps + 1e-9;
                            prop_assert!(within, "{} at {}", r, size);
                        }
                    }
                    Said::Unsettled { level_gbps, .. } => prop_assert_eq!(*level_gbps, sat.plateau_gbps),
                    Said::FixedCost { size_bytes, .. } => prop_assert_eq!(*size_bytes, 4096),
                    _ => {}
                }
            }
        }
    }
}
