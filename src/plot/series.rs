//! The charts of a report's series: each benchmark's size-swept bandwidth
//! chart (its y axis the benchmark's, its roofline the one its curves'
//! systems share), the GPU GEMM panels against each dtype's dense peak, the
//! CPU GEMM bars, and a series as a chart line (also for notebooks and the
//! write-up sections' own charts).

use super::bars::BarChart;
use super::{bandwidth_chart, bar_chart, BarPanel, BarSeries, Chart, GroupedBars, Line};
use crate::analysis::{Catalog, PointStat, Series, Spec};
use crate::vocab::benches::Bench;

/// A series as a chart line labelled `label`, its rates (and their error
/// bars) times `scale` (8 for Gb/s), of its system and operation.
pub fn line(c: &Series, label: String, scale: f64) -> Line {
    Line::with_errors(
        label,
        c.rate_with_bars().into_iter().map(|(x, g, e)| (x, g * scale, e.map(|(l, h)| (l * scale, h * scale)))),
    )
    .of(c.system(), c.op.as_str())
}

/// The size-swept bandwidth charts of a report, one per benchmark and
/// host or GPU, from the catalog's series: each chart's y axis is its
/// benchmark's, its roofline the one its curves' systems share.
pub fn bandwidth_charts(
    catalog: &Catalog,
    l2_of: &dyn Fn(&PointStat) -> Option<u64>,
    gpu_spec: Option<&Spec>,
) -> Vec<Box<dyn Chart>> {
    let mut charts: Vec<Box<dyn Chart>> = Vec::new();
    // Each chart's y axis is its first benchmark's (the table names the
    // bytes it counts); a memory roofline does not bound bus or link bandwidth.
    use Bench::{Collective, H2d, Memcpy, MemcpyPeer, P2p, Stream};
    let plans = [
        (Memcpy.name(), Memcpy, "memcpy bandwidth"),
        (Stream.name(), Stream, "stream bandwidth"),
        (Collective.name(), Collective, "collective bandwidth"),
        (P2p.name(), P2p, "p2p bandwidth"),
        ("gpu-memcpy", Memcpy, "GPU memcpy bandwidth"),
        (MemcpyPeer.name(), MemcpyPeer, "GPU peer copy bandwidth"),
        ("h2d-d2h", H2d, "host↔device bandwidth"),
    ];
    for (name, first, title) in plans {
        let of: Vec<&Series> =
            catalog.series.iter().filter(|s| s.is_bandwidth() && chart_of(s) == Some(name)).collect();
        // The roofline line: the spec its curves' systems share, if they
        // do (the catalog's rule, as the section's table states it).
        let roof = catalog.roofline_spec(&of).and_then(|s| s.memory.as_ref()).map(|m| {
            let g = m.bandwidth_gbps;
            (format!("roofline {g} GB/s"), g)
        });
        // A curve that counts other bytes than the chart's axis (an OSU
        // collective without a bus factor) says which in its legend entry.
        let axis = first.info().axis;
        let lines: Vec<Line> = of
            .iter()
            .map(|c| {
                let label = if c.rate_axis() == axis {
                    c.name().to_string()
                } else {
                    format!("{} [{}]", c.name(), c.rate_axis())
                };
                line(c, label, 1.0)
            })
            .collect();
        if lines.is_empty() {
            continue;
        }
        let chart = bandwidth_chart(
            name,
            &catalog.title(title, of.iter().map(|c| (c.run_id.as_str(), c.device.as_str()))),
            axis,
            lines,
            roof,
        );
        // The GPU copy's L2: a copy's working set (source + destination)
        // fits it up to half its size. The host copies' link line.
        let chart = match name {
            "gpu-memcpy" => chart.with_marks(
                of.iter()
                    .find_map(|c| l2_of(c.points.first()?))
                    .map(|l2| {
                        let label = format!(
                            "L2 {}: source + destination fit up to {} (computed, not measured)",
                            crate::vocab::units::format_bytes(l2),
                            crate::vocab::units::format_bytes(l2 / 2)
                        );
                        (label, (l2 / 2) as f64)
                    })
                    .into_iter()
                    .collect(),
            ),
            "h2d-d2h" => chart.with_links(
                gpu_spec.and_then(|s| s.host_line.clone()).map(|l| (l.label, l.gbps)).into_iter().collect(),
            ),
            _ => chart,
        };
        charts.push(Box::new(chart));
    }
    charts
}

/// The bandwidth chart a series is drawn in, by its benchmark and whether
/// its point belongs to a GPU section. Every benchmark is listed: a new one
/// is a compile error here until it has a chart or is decided to have none
/// (a write-up section may draw it: peer links, the network, matrices).
fn chart_of(s: &Series) -> Option<&'static str> {
    let gpu = s.points.first().is_some_and(PointStat::is_gpu);
    match Bench::of(&s.bench)? {
        Bench::Memcpy if gpu => Some("gpu-memcpy"),
        Bench::Memcpy => Some(Bench::Memcpy.name()),
        Bench::Stream if !gpu => Some(Bench::Stream.name()),
        Bench::Collective if !gpu => Some(Bench::Collective.name()),
        Bench::P2p if !gpu => Some(Bench::P2p.name()),
        Bench::MemcpyPeer if gpu => Some(Bench::MemcpyPeer.name()),
        Bench::H2d | Bench::D2h if gpu => Some("h2d-d2h"),
        Bench::Stream | Bench::Collective | Bench::P2p | Bench::MemcpyPeer | Bench::H2d | Bench::D2h => None,
        Bench::Gemm | Bench::Links | Bench::Rdma | Bench::Nvbandwidth | Bench::Megatron | Bench::Exec => None,
    }
}

/// The GPU GEMM chart: one group of bars per shape (smallest to largest
/// work), one bar per dtype (and run, when several ran GEMMs) in its own
/// colour, each dtype's dense peak marked. benchbook's own points only;
/// other libraries' are compared in the section's table.
pub fn gpu_gemm_chart(
    catalog: &Catalog,
    stats: &[PointStat],
    spec: Option<&Spec>,
    name: &dyn Fn(&str) -> String,
) -> Option<GroupedBars> {
    let pts: Vec<&PointStat> =
        stats.iter().filter(|p| p.bench == Bench::Gemm).filter(|p| p.native() && p.gflops.is_some()).collect();
    if pts.is_empty() {
        return None;
    }
    let mut runs: Vec<&str> = pts.iter().map(|p| p.run_id.as_str()).collect();
    runs.sort_unstable();
    runs.dedup();
    let panels = runs
        .iter()
        .map(|run| {
            let of: Vec<&&PointStat> = pts.iter().filter(|p| p.run_id == *run).collect();
            let mut shapes: Vec<(u64, u64, u64)> = of.iter().filter_map(|p| Some((p.m?, p.n?, p.k?))).collect();
            shapes.sort_by_key(|(m, n, k)| (m * n * k, *m, *n, *k));
            shapes.dedup();
            let mut dtypes: Vec<(usize, String)> = of
                .iter()
                .filter_map(|p| {
                    let d = p.dtype.clone()?;
                    Some((crate::vocab::gemm::dtype_rank(&d), d))
                })
                .collect();
            dtypes.sort();
            dtypes.dedup();
            let series = dtypes
                .iter()
                .map(|(_, dtype)| {
                    let at: Vec<Option<&PointStat>> = shapes
                        .iter()
                        .map(|&(m, n, k)| {
                            of.iter()
                                .find(|p| {
                                    p.dtype.as_ref() == Some(dtype) && (p.m, p.n, p.k) == (Some(m), Some(n), Some(k))
                                })
                                .map(|p| **p)
                        })
                        .collect();
                    let tflops = |p: &PointStat| p.gflops.map(|g| g / 1e3);
                    BarSeries {
                        name: dtype.clone(),
                        values: at.iter().map(|p| p.and_then(tflops)).collect(),
                        peak: spec.and_then(|s| s.peak_tflops(dtype)),
                        intervals: at.iter().map(|p| p.and_then(|p| p.rate_interval(tflops(p)?).range())).collect(),
                        throttled: at.iter().map(|p| p.is_some_and(|p| p.held_out())).collect(),
                    }
                })
                .collect();
            let groups = shapes
                .iter()
                .map(|&(m, n, k)| match crate::vocab::gemm::shape_role(m, n, k) {
                    Some(r) if !r.starts_with("square") => format!("{} {r}", crate::vocab::gemm::shape(m, n, k)),
                    _ => crate::vocab::gemm::shape(m, n, k),
                })
                .collect();
            BarPanel { caption: format!("run {}", name(run)), groups, series }
        })
        .collect();
    Some(GroupedBars {
        name: "gpu-gemm".into(),
        title: catalog.title("GPU GEMM throughput", pts.iter().map(|p| (p.run_id.as_str(), p.device.as_str()))),
        x_label: "TFLOP/s (2·m·n·k per median time)".into(),
        panels,
        peak_label: match spec {
            Some(s) => format!("dense peak of the dtype ({})", s.name),
            None => "dense peak of the dtype".into(),
        },
    })
}

/// The CPU GEMM chart: one bar per dtype, shape and thread count.
pub fn cpu_gemm_chart(stats: &[PointStat]) -> Option<BarChart> {
    let gemm: Vec<(String, f64)> = stats
        .iter()
        .filter(|p| p.bench == Bench::Gemm)
        .filter_map(|p| {
            let by = match p.threads {
                Some(t) => format!("{t}T"),
                None => crate::vocab::rows::short_device(&p.device).to_string(),
            };
            let shape = crate::vocab::gemm::shape(p.m?, p.n?, p.k?);
            Some((format!("{} {shape} {by}", p.dtype.as_deref()?), p.gflops?))
        })
        .collect();
    (!gemm.is_empty()).then(|| bar_chart(Bench::Gemm.name(), "GEMM throughput", "GFLOP/s", gemm))
}
