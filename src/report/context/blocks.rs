//! The blocks several report sections are made of: the size-swept
//! bandwidth block (memcpy, STREAM, collectives, MPI p2p and the GPU
//! copies), the GEMM block, MPI latency rows and the points of benchmarks
//! without a section of their own. (The sections themselves, and the one
//! list of them, are [`crate::report::sections`].)
//!
//! The file is longer than 400 lines because the bandwidth and GEMM
//! blocks share their table cells (`level_cell`, the interval and spread
//! cells), which live beside both.

use crate::analysis::{Catalog, Level, PointStat, Saturation, Series, Spec};
use crate::archive::manifest::Manifest;
use crate::vocab::benches::{Bench, RateUnit};
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

use super::prose::{median_with_ci, opt_size, pct};
use super::{
    BandwidthSection, BwRow, DtypeRow, DtypeTable, GemmRow, GemmSection, LatencyRow, LibraryRow, OtherRow, RooflineRef,
    SatRow,
};
use crate::analysis::findings::bandwidth::{
    bandwidth_observations, gemm_observations, link_observations, stream_observations,
};
use crate::vocab::gemm::GemmSetting;
use crate::vocab::units::FlopUnit;

/// The memory roofline of a spec, as shown and as a number (GB/s).
pub(super) fn roofline_of(spec: Option<&Spec>) -> Option<(RooflineRef, f64)> {
    let s = spec?;
    let m = s.memory.as_ref()?;
    Some((
        RooflineRef { name: s.name.clone(), gbps: format_sig3(m.bandwidth_gbps), source: m.source.clone() },
        m.bandwidth_gbps,
    ))
}

fn bw_rows(curves: &[&Series]) -> Vec<BwRow> {
    curves
        .iter()
        .flat_map(|c| {
            c.points.iter().map(move |p| BwRow {
                label: c.name().to_string(),
                size: opt_size(p.size_bytes),
                median_time: median_with_ci(p),
                gbps_copied: p.gbps_copied.map(format_sig3).unwrap_or_default(),
                gbits_copied: p.gbps_copied.map(|g| format_sig3(g * 8.0)).unwrap_or_default(),
                gbps_moved: p.gbps_moved.map(format_sig3).unwrap_or_default(),
                busbw: p.busbw_gbps.map(format_sig3).unwrap_or_default(),
                cv_pct: spread_pct(p),
                samples: p.samples,
            })
        })
        .collect()
}

fn sat_row(name: &str, s: &Saturation) -> SatRow {
    // One size: no curve, so nothing saturates.
    let cell = |c: crate::vocab::stats::Crossing| match (s.sizes, s.settled()) {
        (0 | 1, _) => "one size".to_string(),
        (_, false) => "not settled".to_string(),
        _ => c.to_string(),
    };
    let plateau = level_cell(&s.level(), format_sig3);
    // The level a key result states (the plateau, else the peak), and the
    // roofline the plateau's share was taken of.
    let level = if s.settled() { s.plateau_gbps } else { s.peak_gbps };
    let roofline = s.plateau_fraction.filter(|f| *f > 0.0).map(|f| s.plateau_gbps / f);
    SatRow {
        label: name.to_string(),
        peak_gbps: format_sig3(s.peak_gbps),
        peak_size: format_bytes(s.peak_size_bytes),
        plateau_gbps: plateau,
        peak_over_plateau: if s.settled() && s.plateau_gbps > 0.0 {
            format!("{}×", format_sig3(s.peak_gbps / s.plateau_gbps))
        } else {
            "-".into()
        },
        p50: cell(s.plateau_50),
        p80: cell(s.plateau_80),
        p90: cell(s.plateau_90),
        roofline_pct: s.plateau_fraction.map(pct).unwrap_or_else(|| "no roofline".into()),
        roofline_90: s.roofline_90.map(cell).unwrap_or_else(|| "no roofline".into()),
        once_gbps: format_sig3(level / 2.0),
        once_roofline_pct: roofline.map(|r| pct(level / 2.0 / r)).unwrap_or_else(|| "no roofline".into()),
    }
}

/// A curve's level as every table states it ([`Level`]): the plateau with
/// the sizes it spans and its tolerance, and the largest size whenever it is
/// not part of it (a jump, too uncertain, throttled), so that no size is left
/// out silently; or why the curve has not settled. `show` prints a rate in
/// the table's unit.
pub(crate) fn level_cell(level: &Level, show: impl Fn(f64) -> String) -> String {
    let sizes = |v: &[u64]| v.iter().map(|b| format_bytes(*b)).collect::<Vec<_>>();
    match level {
        Level::Single { gbps, .. } => format!("none: one size ({} there)", show(*gbps)),
        Level::Plateau { gbps, sizes: on, tolerance, jump, left_out, held_out } => {
            let mut cell = format!(
                "{} ({}, {} sizes within ±{})",
                show(*gbps),
                super::prose::span(&sizes(on)),
                on.len(),
                pct(*tolerance)
            );
            if let Some((size, rate)) = jump {
                cell += &format!("; {} jumps to {}, left out", format_bytes(*size), show(*rate));
            }
            if !left_out.is_empty() {
                cell += &format!("; {} left out as too uncertain", sizes(left_out).join(", "));
            }
            if !held_out.is_empty() {
                cell += &format!("; {} held out as throttled", sizes(held_out).join(", "));
            }
            cell
        }
        Level::NotSettled { largest, gbps, tolerance, left_out } => {
            let mut cell = format!(
                "not settled ({} at {}; fewer than {} sizes agree within ±{})",
                show(*gbps),
                sizes(largest).join(", "),
                crate::vocab::stats::PLATEAU_MIN_SIZES,
                pct(*tolerance)
            );
            if !left_out.is_empty() {
                cell += &format!("; {} left out as too uncertain", sizes(left_out).join(", "));
            }
            cell
        }
    }
}

/// The section of the size-swept curves of `benches` (the first names the
/// kind of observations), or `None` when there are none.
pub(super) fn bandwidth_section(
    series: &[&Series],
    benches: &[Bench],
    chart: &str,
    catalog: &Catalog,
) -> Option<BandwidthSection> {
    let bench = benches[0];
    // Latency curves are times, not bandwidths: they get their own table.
    let cs: Vec<&Series> = series.iter().copied().filter(|c| c.of_bench(benches) && c.is_bandwidth()).collect();
    if cs.is_empty() {
        return None;
    }
    // The roofline its curves' systems share, where they share one (each
    // table row states its own share either way).
    let roof = roofline_of(catalog.roofline_spec(&cs));
    let roof = roof.as_ref();
    let observations = match bench {
        Bench::Stream => stream_observations(&cs),
        Bench::Collective | Bench::P2p | Bench::MemcpyPeer | Bench::H2d => link_observations(&cs, bench),
        _ => bandwidth_observations(&cs, roof.map(|(r, g)| (r.name.as_str(), *g)), bench.name()),
    };
    Some(BandwidthSection {
        chart: chart.into(),
        roofline: roof.map(|r| r.0.clone()),
        observations,
        saturation: cs
            .iter()
            .filter_map(|c| Some((c, c.summary.as_ref()?)))
            .map(|(c, s)| {
                let mut row = sat_row(c.name(), s);
                // A collective without a bus factor (OSU's) charts its
                // algbw: the busbw columns say so for its row.
                if bench == Bench::Collective && !c.has_bus_factor() {
                    row.label += " (algbw: the log gives no bus factor)";
                }
                row
            })
            .collect(),
        table: bw_rows(&cs),
        peers: super::peers::peer_pairs(&cs),
        contrasts: super::peers::contrasts(&cs),
    })
}

/// The GEMM section, with rates in `unit`, or `None` without GEMM points.
pub(super) fn gemm_section(
    stats: &[PointStat],
    spec: Option<&Spec>,
    chart: &str,
    unit: FlopUnit,
    manifests: &[Manifest],
) -> Option<GemmSection> {
    let run_name = |run: &str| super::run::run_name(manifests, run);
    let started = |run: &str| manifests.iter().find(|m| m.run_id == run).map(|m| m.started_at.clone());
    let pts: Vec<&PointStat> = stats.iter().filter(|p| p.bench == Bench::Gemm).collect();
    if pts.is_empty() {
        return None;
    }
    let shape = PointStat::shape;
    let table: Vec<GemmRow> = pts
        .iter()
        .map(|p| {
            let dtype = p.dtype.clone().unwrap_or_default();
            GemmRow {
                run: run_name(&p.run_id),
                shape: shape(p),
                threads: p.threads.map(|t| t.to_string()).unwrap_or_default(),
                // The library, and the operand layout (and FP8 accumulation)
                // where the rows record one: `cublaslt, nn`.
                method: gemm_call(p, p.method.clone().unwrap_or_default()),
                gflops: p.gflops.map(|g| unit.show(g)).unwrap_or_default(),
                best_gflops: p.best_gflops.map(|g| unit.show(g)).unwrap_or_default(),
                median_time: median_with_ci(p),
                cv_pct: spread_pct(p),
                samples: p.samples,
                peak_pct: match (spec.and_then(|s| s.peak_tflops(&dtype)), p.gflops) {
                    (Some(peak), Some(g)) => pct(g / (peak * 1e3)),
                    _ => "no spec".into(),
                },
                dtype,
            }
        })
        .collect();
    let native: Vec<&PointStat> = pts.iter().copied().filter(|p| p.native()).collect();
    // benchbook's own points are described; another library's are
    // compared with them below (unless there are no others).
    let observations = gemm_observations(if native.is_empty() { &pts } else { &native }, unit);
    Some(GemmSection {
        chart: chart.into(),
        observations,
        table,
        by_dtype: dtype_tables(&native, spec, unit, &run_name),
        libraries: library_rows(&pts, spec, unit, &run_name, &started),
    })
}

/// A rate with its 95 % interval: `746 (743–751)`, or why there is none;
/// an interval whose upper end passes `peak` (GFLOP/s, the dtype's dense
/// peak) says it bounds nothing there.
fn rate_with_ci(p: &PointStat, g: f64, unit: FlopUnit, peak: Option<f64>) -> String {
    let ci = p.rate_interval(g);
    let mut cell = match ci.show(|x| unit.show(x)) {
        Some(shown) if p.within_run_only() => format!("{} {shown} within one round", unit.show(g)),
        Some(shown) => format!("{} {shown}", unit.show(g)),
        None if p.samples < 2 => format!("{} (one sample)", unit.show(g)),
        None => format!("{} (no interval)", unit.show(g)),
    };
    if let (Some(peak), Some((_, high))) = (peak, ci.bounded()) {
        if high > peak {
            cell += &format!("; its upper end passes the {} dense peak: too wide to bound it", unit.show(peak));
        }
    }
    cell
}

/// The dense peak of a point's dtype on `spec`, GFLOP/s.
fn peak_of(spec: Option<&Spec>, p: &PointStat) -> Option<f64> {
    spec?.peak_tflops(p.dtype.as_deref()?).map(|t| t * 1e3)
}

fn dtype_rank(d: &str) -> (usize, String) {
    (crate::vocab::gemm::dtype_rank(d), d.to_string())
}

/// One table per run and dtype, as seed 002 gives its GEMMs: each shape
/// with what it is, its time and rate with their intervals and its share
/// of the dtype's dense peak, fastest first; the dtype's average and peak.
fn dtype_tables(
    pts: &[&PointStat],
    spec: Option<&Spec>,
    unit: FlopUnit,
    run_name: &dyn Fn(&str) -> String,
) -> Vec<DtypeTable> {
    let mut keys: Vec<(String, String)> =
        pts.iter().filter_map(|p| Some((p.run_id.clone(), p.dtype.clone()?))).collect();
    keys.sort_by_key(|(run, d)| (run.clone(), dtype_rank(d)));
    keys.dedup();
    // The shapes a run measured in every one of its dtypes (those each
    // dtype counts: not measured throttled): an average over them compares
    // dtypes like for like, where each dtype's own set may differ.
    let counted_shapes = |run: &str, dtype: &str| -> std::collections::BTreeSet<(u64, u64, u64)> {
        let of: Vec<&&PointStat> =
            pts.iter().filter(|p| p.run_id == run && p.dtype.as_deref() == Some(dtype) && p.gflops.is_some()).collect();
        let steady: Vec<&&PointStat> = of.iter().copied().filter(|p| !p.held_out()).collect();
        let counted = if steady.is_empty() { of } else { steady };
        counted.iter().map(|p| (p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0))).collect()
    };
    let mut common: std::collections::BTreeMap<String, std::collections::BTreeSet<(u64, u64, u64)>> =
        Default::default();
    for (run, dtype) in &keys {
        let shapes = counted_shapes(run, dtype);
        common.entry(run.clone()).and_modify(|c| c.retain(|s| shapes.contains(s))).or_insert(shapes);
    }
    let dtypes_of = |run: &str| keys.iter().filter(|(r, _)| r == run).count();
    keys.iter()
        .cloned()
        .filter_map(|(run, dtype)| {
            let mut of: Vec<(&PointStat, f64)> = pts
                .iter()
                .filter(|p| p.run_id == run && p.dtype.as_deref() == Some(dtype.as_str()))
                .filter_map(|p| Some((*p, p.gflops?)))
                .collect();
            if of.is_empty() {
                return None;
            }
            of.sort_by(|a, b| b.1.total_cmp(&a.1));
            let peak = spec.and_then(|s| Some((s.name.clone(), s.peak_tflops(&dtype)?)));
            let share = |g: f64| peak.as_ref().map(|(_, t)| pct(g / (t * 1e3))).unwrap_or_else(|| "no spec".into());
            let rows = of
                .iter()
                .map(|(p, g)| {
                    let (m, n, k) = (p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0));
                    let mut role = crate::vocab::gemm::shape_role(m, n, k).unwrap_or_default().to_string();
                    if p.held_out() {
                        role += if role.is_empty() { "measured throttled" } else { "; measured throttled" };
                    }
                    DtypeRow {
                        shape: crate::vocab::gemm::shape(m, n, k),
                        role,
                        median_time: median_with_ci(p),
                        rate: rate_with_ci(p, *g, unit, peak_of(spec, p)),
                        peak_pct: share(*g),
                        rounds: p.rounds,
                        samples: p.samples,
                    }
                })
                .collect();
            // The average and peak leave out points measured throttled, as
            // plateaus and key results do (all of them, if all were).
            let steady: Vec<&(&PointStat, f64)> = of.iter().filter(|(p, _)| !p.held_out()).collect();
            let left_out = if steady.is_empty() { 0 } else { of.len() - steady.len() };
            let counted: Vec<&(&PointStat, f64)> = if steady.is_empty() { of.iter().collect() } else { steady };
            let mean = counted.iter().map(|(_, g)| g).sum::<f64>() / counted.len() as f64;
            let (best_p, best) = *counted[0];
            let shared = common.get(&run).filter(|_| dtypes_of(&run) > 1);
            let like: Vec<f64> = counted
                .iter()
                .filter(|(p, _)| {
                    shared.is_some_and(|c| c.contains(&(p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0))))
                })
                .map(|(_, g)| *g)
                .collect();
            let like_mean = (!like.is_empty()).then(|| like.iter().sum::<f64>() / like.len() as f64);
            Some(DtypeTable {
                run: run_name(&run),
                peak: peak.as_ref().map(|(_, t)| format_sig3(*t)),
                peak_of: peak.as_ref().map(|(name, _)| name.clone()),
                average: unit.show(mean),
                average_pct: share(mean),
                common_shapes: like.len(),
                common_average: like_mean.map_or("-".into(), |m| format!("{} ({})", unit.show(m), share(m))),
                best: unit.show(best),
                best_at: best_p.shape(),
                best_pct: share(best),
                one_round: of.iter().filter(|(p, _)| p.rounds < 2).count(),
                shapes: of.len(),
                left_out,
                dtype,
                rows,
            })
        })
        .collect()
}

/// benchbook's GEMMs beside another library's (imported `torch.matmul`,
/// `F.linear`, `_scaled_mm`) of the same dtype and shape, each with its
/// operand layout. Each imported run is paired with the benchbook run
/// that started nearest to it (the one measured in the same session).
fn library_rows(
    pts: &[&PointStat],
    spec: Option<&Spec>,
    unit: FlopUnit,
    run_name: &dyn Fn(&str) -> String,
    started: &dyn Fn(&str) -> Option<String>,
) -> Vec<LibraryRow> {
    let seconds =
        |run: &str| started(run).and_then(|t| chrono::DateTime::parse_from_rfc3339(&t).ok()).map(|t| t.timestamp());
    let mut native_runs: Vec<&str> = pts.iter().filter(|p| p.native()).map(|p| p.run_id.as_str()).collect();
    native_runs.sort_unstable();
    native_runs.dedup();
    let nearest = |theirs: &str| -> Option<&str> {
        let t = seconds(theirs)?;
        native_runs.iter().copied().min_by_key(|r| seconds(r).map_or(i64::MAX, |s| (s - t).abs()))
    };
    let layout = |p: &PointStat| gemm_call(p, p.method.clone().or_else(|| p.variant.clone()).unwrap_or_default());
    let same = |a: &PointStat, b: &PointStat| (a.dtype.as_ref(), a.m, a.n, a.k) == (b.dtype.as_ref(), b.m, b.n, b.k);
    let mut rows: Vec<LibraryRow> = Vec::new();
    for ours in pts.iter().filter(|p| p.native()) {
        let Some(g) = ours.gflops else { continue };
        for theirs in pts.iter().filter(|p| !p.native() && same(ours, p)) {
            if nearest(&theirs.run_id) != Some(ours.run_id.as_str()) {
                continue;
            }
            let Some(t) = theirs.gflops else { continue };
            rows.push(LibraryRow {
                dtype: ours.dtype.clone().unwrap_or_default(),
                shape: ours.shape(),
                run: run_name(&ours.run_id),
                ours: rate_with_ci(ours, g, unit, peak_of(spec, ours))
                    + if ours.held_out() { "; measured throttled" } else { "" },
                ours_call: layout(ours),
                theirs: unit.show(t),
                theirs_call: layout(theirs),
                // Where some of its rounds ran power-capped the headline is
                // the full-clock rounds'; the capped rounds' ratio beside it
                // shows how much of the ratio is the clock (the other tool's
                // clock was not read).
                ratio: match ours.capped.as_ref().filter(|c| !c.all && c.median_seconds > 0.0) {
                    Some(c) => format!(
                        "{:.2}× (its power-capped rounds: {:.2}×)",
                        g / t,
                        g * ours.median_seconds / c.median_seconds / t
                    ),
                    None => format!("{:.2}×", g / t),
                },
            });
        }
    }
    rows.sort_by_key(|r| (dtype_rank(&r.dtype), r.shape.clone(), r.run.clone(), r.theirs_call.clone()));
    rows
}

/// The library and the operand layout (and FP8 accumulation) a GEMM point
/// ran: `cublaslt, nn`. benchbook's own GPU rows from builds before layouts
/// were recorded (schema v6) ran one layout, `tn`, which they get from that
/// build, never a default; an imported row without one names none.
fn gemm_call(p: &PointStat, lib: String) -> String {
    match GemmSetting::recorded(&p.params()) {
        Some(s) => format!("{lib}, {}", s.label()),
        None if p.native() && crate::vocab::kinds::backend_is_gpu(&p.backend) => {
            format!("{lib}, {} (the pre-v6 build's only layout)", GemmSetting::of(&p.params()).label())
        }
        None => lib,
    }
}

/// A point's CV, or `n/a` where one sample (an imported figure) has no
/// spread to state.
fn spread_pct(p: &PointStat) -> String {
    if p.samples < 2 {
        "n/a (1 sample)".into()
    } else {
        pct(p.summary.cv)
    }
}

/// The one-way latencies of MPI ping-pong.
pub(super) fn latency_rows(stats: &[PointStat], catalog: &Catalog) -> Vec<LatencyRow> {
    stats
        .iter()
        .filter(|p| p.is_p2p_latency())
        .map(|p| LatencyRow {
            curve: catalog.name_of(p),
            peer: p.peer.clone().unwrap_or_else(|| "-".into()),
            size: p.size_bytes.map(format_bytes).unwrap_or_default(),
            median: super::prose::median_with_ci(p),
            p20: if p.samples < 2 { "n/a".into() } else { format_seconds(p.summary.p20) },
            p80: if p.samples < 2 { "n/a".into() } else { format_seconds(p.summary.p80) },
            samples: p.samples,
        })
        .collect()
}

/// The MPI latency curves (of `stats`' runs) whose smaller message takes
/// longer than a larger one, among small messages as the network section
/// reads them.
pub(super) fn latency_notes(
    stats: &[PointStat],
    series: &[crate::analysis::Series],
) -> Vec<crate::analysis::findings::Said> {
    series
        .iter()
        .filter(|c| c.points.first().is_some_and(|p| p.is_p2p_latency()))
        .filter(|c| stats.iter().any(|p| p.run_id == c.run_id))
        .flat_map(crate::analysis::findings::latency::small_message_notes)
        .collect()
}

/// Points of benchmarks without a section of their own (the table's
/// `section`: host memcpy, STREAM, GEMM, collectives, point-to-point).
pub(super) fn other_rows(stats: &[PointStat]) -> Vec<OtherRow> {
    stats
        .iter()
        .filter(|p| Bench::of(&p.bench).is_none_or(|b| b.info().section.is_none()))
        .map(|p| OtherRow {
            bench: p.bench.clone(),
            op: p.op.clone(),
            variant: p.variant.clone().unwrap_or_default(),
            size: p.size_bytes.map(format_bytes).unwrap_or_else(|| "-".into()),
            peer: p.peer.clone().unwrap_or_default(),
            median_time: super::prose::time_shown(p).unwrap_or_else(|| format_seconds(p.median_seconds)),
            // Network tools (perftest, OSU) print their rates in Gb/s.
            rate: match p.gbps_copied {
                Some(g) if Bench::of(&p.bench).is_some_and(|b| b.info().unit == RateUnit::Gbps) => {
                    format!("{} GB/s = {} Gb/s", format_sig3(g), format_sig3(g * 8.0))
                }
                Some(g) => format!("{} GB/s", format_sig3(g)),
                None => "- (a time, no bytes)".into(),
            },
            note: p.note.clone().unwrap_or_default(),
        })
        .collect()
}
