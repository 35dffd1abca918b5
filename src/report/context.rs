//! The report context: a Serialize struct built from a run's manifest and
//! its analysed rows. Templates only format what is here; every sentence of
//! "observations" is computed from the data, so a report never says more
//! than its numbers back.

use serde::Serialize;

use crate::analysis::{curves, saturation, Curve, PointStat, Saturation, Spec};
use crate::archive::manifest::Manifest;
use crate::rows::Row;
use crate::units::{format_bytes, format_seconds, format_sig3};

#[derive(Debug, Clone, Serialize)]
pub struct KeyValue {
    pub key: String,
    pub value: String,
}

fn kv(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue { key: key.into(), value: value.into() }
}

#[derive(Debug, Clone, Serialize)]
pub struct RunSection {
    pub id: String,
    pub status: String,
    pub status_detail: Option<String>,
    pub label: Option<String>,
    pub source: String,
    pub started_at: String,
    pub ended_at: Option<String>,
    pub command: String,
    pub preset: Option<String>,
    pub points: u32,
    pub measured: u32,
    pub skipped: u32,
    pub failed: u32,
    pub rows: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct RooflineRef {
    pub name: String,
    pub gbps: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SatRow {
    pub label: String,
    pub peak_gbps: String,
    pub peak_size: String,
    pub plateau_gbps: String,
    pub p50: String,
    pub p80: String,
    pub p90: String,
    pub roofline_pct: String,
    pub roofline_90: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct BwRow {
    pub label: String,
    pub size: String,
    pub median_time: String,
    pub gbps_copied: String,
    pub gbps_moved: String,
    pub busbw: String,
    pub cv_pct: String,
    pub samples: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct BandwidthSection {
    pub chart: String,
    pub roofline: Option<RooflineRef>,
    pub observations: Vec<String>,
    pub saturation: Vec<SatRow>,
    pub table: Vec<BwRow>,
}

#[derive(Debug, Clone, Serialize)]
pub struct GemmRow {
    pub dtype: String,
    pub shape: String,
    pub threads: String,
    /// The library call (GPU GEMMs), e.g. `cublas_gemm_ex`.
    pub method: String,
    pub gflops: String,
    pub best_gflops: String,
    pub median_time: String,
    pub cv_pct: String,
    pub samples: u32,
    pub peak_pct: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct GemmSection {
    pub chart: String,
    pub observations: Vec<String>,
    pub table: Vec<GemmRow>,
}

/// One ping-pong latency point.
#[derive(Debug, Clone, Serialize)]
pub struct LatencyRow {
    pub peer: String,
    pub size: String,
    pub median: String,
    pub p20: String,
    pub p80: String,
    pub samples: u32,
}

/// A point of a benchmark without a section of its own.
#[derive(Debug, Clone, Serialize)]
pub struct OtherRow {
    pub bench: String,
    pub op: String,
    pub variant: String,
    pub size: String,
    pub peer: String,
    pub median_time: String,
    pub gbps_copied: String,
    pub note: String,
}

/// Where an imported run came from.
#[derive(Debug, Clone, Serialize)]
pub struct ImportInfo {
    pub file: String,
    pub tool: String,
    pub tool_version: String,
    pub command: String,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SkippedRow {
    pub bench: String,
    pub point: String,
    pub status: String,
    pub reason: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct Methodology {
    pub timers: String,
    pub stop_rule: String,
    pub converged: usize,
    pub stopped_early: usize,
    pub median_cv_pct: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct FileRow {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// One GPU as the backend described it at the start of the run.
#[derive(Debug, Clone, Serialize)]
pub struct GpuDeviceRow {
    pub backend: String,
    pub ordinal: String,
    pub name: String,
    pub arch: String,
    pub memory: String,
    pub multiprocessors: String,
    pub l2: String,
    pub details: String,
}

/// The GPU half of a run: device copies (seed 001), peer copies (seed
/// 000), host↔device transfers and GEMM (seed 002).
#[derive(Debug, Clone, Serialize)]
pub struct GpuSection {
    pub devices: Vec<GpuDeviceRow>,
    /// Driver/runtime versions and the peer-access matrix, per backend.
    pub versions: Vec<KeyValue>,
    pub memcpy: Option<BandwidthSection>,
    pub peer: Option<BandwidthSection>,
    pub host: Option<BandwidthSection>,
    pub gemm: Option<GemmSection>,
    pub roofline: Option<RooflineRef>,
}

/// Everything a run report template can use.
#[derive(Debug, Clone, Serialize)]
pub struct ReportContext {
    pub title: String,
    pub generated_at: String,
    pub benchbook_version: String,
    pub benchbook_commit: String,
    pub run: RunSection,
    pub system: Vec<KeyValue>,
    pub memcpy: Option<BandwidthSection>,
    pub gpu: Option<GpuSection>,
    pub stream: Option<BandwidthSection>,
    pub gemm: Option<GemmSection>,
    pub collective: Option<BandwidthSection>,
    pub p2p: Option<BandwidthSection>,
    pub latency: Vec<LatencyRow>,
    pub other: Vec<OtherRow>,
    /// Set for imported runs: the numbers are the tool's, not benchbook's.
    pub imported: Vec<ImportInfo>,
    pub skipped: Vec<SkippedRow>,
    pub methodology: Methodology,
    pub files: Vec<FileRow>,
    pub env: Vec<KeyValue>,
}

fn opt_size(s: Option<u64>) -> String {
    s.map(format_bytes).unwrap_or_else(|| "not reached".into())
}

fn pct(f: f64) -> String {
    format!("{} %", format_sig3(f * 100.0))
}

/// Quote an argv the way a shell would need it.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn roofline_of(spec: Option<&Spec>) -> Option<(RooflineRef, f64)> {
    let s = spec?;
    let m = s.memory.as_ref()?;
    Some((
        RooflineRef { name: s.name.clone(), gbps: format_sig3(m.bandwidth_gbps), source: m.source.clone() },
        m.bandwidth_gbps,
    ))
}

fn bw_rows(curves: &[Curve]) -> Vec<BwRow> {
    curves
        .iter()
        .flat_map(|c| {
            c.points.iter().map(move |p| BwRow {
                label: c.label.clone(),
                size: opt_size(p.size_bytes),
                median_time: format_seconds(p.summary.median),
                gbps_copied: p.gbps_copied.map(format_sig3).unwrap_or_default(),
                gbps_moved: p.gbps_moved.map(format_sig3).unwrap_or_default(),
                busbw: p.busbw_gbps.map(format_sig3).unwrap_or_default(),
                cv_pct: pct(p.summary.cv),
                samples: p.samples,
            })
        })
        .collect()
}

fn sat_row(s: &Saturation) -> SatRow {
    SatRow {
        label: s.label.clone(),
        peak_gbps: format_sig3(s.peak_gbps),
        peak_size: format_bytes(s.peak_size_bytes),
        plateau_gbps: format_sig3(s.plateau_gbps),
        p50: opt_size(s.plateau_50),
        p80: opt_size(s.plateau_80),
        p90: opt_size(s.plateau_90),
        roofline_pct: s.plateau_fraction.map(pct).unwrap_or_else(|| "no roofline".into()),
        roofline_90: if s.roofline_gbps.is_some() { opt_size(s.roofline_90) } else { "no roofline".into() },
    }
}

/// Observations on a family of size-swept curves (memcpy, or one stream op).
fn bandwidth_observations(
    curves: &[Curve],
    sats: &[Saturation],
    roof: Option<&(RooflineRef, f64)>,
    what: &str,
) -> Vec<String> {
    let mut obs = Vec::new();
    let Some((best_i, best)) = sats.iter().enumerate().max_by(|a, b| a.1.plateau_gbps.total_cmp(&b.1.plateau_gbps))
    else {
        return obs;
    };
    let curve = &curves[best_i];
    let peak_point = curve.points.iter().find(|p| p.size_bytes == Some(best.peak_size_bytes));
    obs.push(format!(
        "The highest median bandwidth of {what} is {} GB/s counting bytes read + written ({} GB/s counting bytes copied once), at {} ({}).",
        format_sig3(best.peak_gbps),
        peak_point.and_then(|p| p.gbps_copied).map(format_sig3).unwrap_or_else(|| "n/a".into()),
        format_bytes(best.peak_size_bytes),
        curve.label
    ));
    let largest: Vec<String> = best.plateau_sizes.iter().map(|b| format_bytes(*b)).collect();
    obs.push(format!(
        "At the largest sizes it settles at a plateau of {} GB/s (read + written), taken from {}: the largest sizes within 10 % of the largest one.",
        format_sig3(best.plateau_gbps),
        largest.join(", ")
    ));
    if best.peak_gbps > 1.25 * best.plateau_gbps {
        obs.push(format!(
            "At {} the rate is {}× the plateau: a working set of {} (source plus destination) is served from caches, not main memory.",
            format_bytes(best.peak_size_bytes),
            format_sig3(best.peak_gbps / best.plateau_gbps),
            format_bytes(2 * best.peak_size_bytes)
        ));
    }
    obs.push(format!(
        "50 % of the plateau is first reached at {}, 80 % at {}, 90 % at {}.",
        opt_size(best.plateau_50),
        opt_size(best.plateau_80),
        opt_size(best.plateau_90)
    ));
    if let Some(small) = curve.points.first() {
        if let (Some(size), Some(g)) = (small.size_bytes, small.gbps_moved) {
            let fraction = g / best.plateau_gbps;
            obs.push(format!(
                "The smallest size, {}, takes {} per operation and reaches {} of the plateau{}.",
                format_bytes(size),
                format_seconds(small.summary.median),
                pct(fraction),
                if fraction < 0.5 {
                    ": at this size fixed per-operation costs, not bandwidth, set the time"
                } else {
                    ""
                }
            ));
        }
    }
    let by_threads: Vec<(u32, f64)> =
        curves.iter().zip(sats).filter_map(|(c, s)| Some((c.threads?, s.plateau_gbps))).collect();
    if let (Some(one), Some(most)) =
        (by_threads.iter().find(|(t, _)| *t == 1), by_threads.iter().max_by_key(|(t, _)| *t))
    {
        if most.0 > 1 {
            obs.push(format!(
                "With {} threads the plateau is {}× the single-thread plateau.",
                most.0,
                format_sig3(most.1 / one.1)
            ));
        }
    }
    match roof {
        Some((r, gbps)) => obs.push(format!(
            "The plateau is {} of the {} memory roofline ({} GB/s, read + write); 90 % of the roofline is {}.",
            pct(best.plateau_gbps / gbps),
            r.name,
            r.gbps,
            best.roofline_90.map(|s| format!("first reached at {}", format_bytes(s))).unwrap_or_else(|| "never reached".into())
        )),
        None => obs.push(format!(
            "No memory roofline is known for {}; add a spec file under the archive's specs/ folder (or pass --spec) to see the fraction of peak.",
            curve.device
        )),
    }
    obs
}

fn bandwidth_section(
    stats: &[PointStat],
    benches: &[&str],
    chart: &str,
    roof: Option<&(RooflineRef, f64)>,
) -> Option<BandwidthSection> {
    let bench = benches[0];
    // Latency curves are times, not bandwidths: they get their own table.
    let cs: Vec<Curve> =
        curves(stats).into_iter().filter(|c| benches.contains(&c.bench.as_str()) && c.op != "latency").collect();
    if cs.is_empty() {
        return None;
    }
    let sats: Vec<Saturation> = cs.iter().filter_map(|c| saturation(c, roof.map(|r| r.1))).collect();
    let mut observations = Vec::new();
    if bench == "stream" {
        // In STREAM's own order, not alphabetical.
        for (op, _) in crate::bench::stream::KERNELS {
            let s: Vec<&Saturation> = cs.iter().zip(&sats).filter(|(c, _)| c.op == op).map(|(_, s)| s).collect();
            if let Some(best) = s.iter().max_by(|a, b| a.plateau_gbps.total_cmp(&b.plateau_gbps)) {
                observations.push(format!(
                    "{op}: plateau {} GB/s (BabelStream counting), peak {} GB/s at {} arrays ({}).",
                    format_sig3(best.plateau_gbps),
                    format_sig3(best.peak_gbps),
                    format_bytes(best.peak_size_bytes),
                    best.label
                ));
            }
        }
    } else if bench == "collective" || bench == "p2p" || bench == "memcpy-peer" || bench == "h2d" {
        for (c, s) in cs.iter().zip(&sats) {
            let ranks = c.points.first().and_then(|p| p.ranks).map(|r| format!(" over {r} ranks")).unwrap_or_default();
            // The small-message penalty, as seed 000 words it: the share of the
            // plateau reached around 100 KB (the largest size up to 128 KiB).
            let small = c.rate().into_iter().filter(|(b, _)| *b <= 128 * 1024).max_by_key(|(b, _)| *b);
            let mut o = format!(
                "{}{ranks}: {} peaks at {} GB/s at {}; the plateau ({} GB/s) is 80 % reached at {} and 90 % at {}.",
                c.label,
                if bench == "collective" { "bus bandwidth" } else { "bandwidth" },
                format_sig3(s.peak_gbps),
                format_bytes(s.peak_size_bytes),
                format_sig3(s.plateau_gbps),
                opt_size(s.plateau_80),
                opt_size(s.plateau_90)
            );
            if let Some((bytes, rate)) = small.filter(|_| s.plateau_gbps > 0.0) {
                o += &format!(" At {} it reaches {} of the plateau.", format_bytes(bytes), pct(rate / s.plateau_gbps));
            }
            observations.push(o);
        }
    } else {
        observations = bandwidth_observations(&cs, &sats, roof, bench);
    }
    Some(BandwidthSection {
        chart: chart.into(),
        roofline: roof.map(|r| r.0.clone()),
        observations,
        saturation: sats.iter().map(sat_row).collect(),
        table: bw_rows(&cs),
    })
}

/// GFLOP/s for CPUs; GPUs are quoted in TFLOP/s, as the seed 002 tables are.
#[derive(Clone, Copy)]
enum FlopUnit {
    Giga,
    Tera,
}

impl FlopUnit {
    fn show(self, gflops: f64) -> String {
        match self {
            FlopUnit::Giga => format_sig3(gflops),
            FlopUnit::Tera => format_sig3(gflops / 1e3),
        }
    }

    fn name(self) -> &'static str {
        match self {
            FlopUnit::Giga => "GFLOP/s",
            FlopUnit::Tera => "TFLOP/s",
        }
    }
}

fn gemm_section(stats: &[PointStat], spec: Option<&Spec>, chart: &str, unit: FlopUnit) -> Option<GemmSection> {
    let pts: Vec<&PointStat> = stats.iter().filter(|p| p.bench == "gemm").collect();
    if pts.is_empty() {
        return None;
    }
    let shape = |p: &PointStat| format!("{}×{}×{}", p.m.unwrap_or(0), p.n.unwrap_or(0), p.k.unwrap_or(0));
    let table: Vec<GemmRow> = pts
        .iter()
        .map(|p| {
            let dtype = p.dtype.clone().unwrap_or_default();
            GemmRow {
                shape: shape(p),
                threads: p.threads.map(|t| t.to_string()).unwrap_or_default(),
                method: p.method.clone().unwrap_or_default(),
                gflops: p.gflops.map(|g| unit.show(g)).unwrap_or_default(),
                best_gflops: p.best_gflops.map(|g| unit.show(g)).unwrap_or_default(),
                median_time: format_seconds(p.summary.median),
                cv_pct: pct(p.summary.cv),
                samples: p.samples,
                peak_pct: match (spec.and_then(|s| s.peak_tflops(&dtype)), p.gflops) {
                    (Some(peak), Some(g)) => pct(g / (peak * 1e3)),
                    _ => "no spec".into(),
                },
                dtype,
            }
        })
        .collect();
    let mut observations = Vec::new();
    let mut dtypes: Vec<String> = pts.iter().filter_map(|p| p.dtype.clone()).collect();
    dtypes.sort();
    dtypes.dedup();
    let mut best_by_dtype = Vec::new();
    for d in &dtypes {
        let of: Vec<&&PointStat> = pts.iter().filter(|p| p.dtype.as_ref() == Some(d)).collect();
        let gf = |p: &PointStat| p.gflops.unwrap_or(0.0);
        if let Some(best) = of.iter().max_by(|a, b| gf(a).total_cmp(&gf(b))) {
            let avg = of.iter().map(|p| gf(p)).sum::<f64>() / of.len() as f64;
            let with = match (best.threads, best.method.as_deref()) {
                (Some(t), _) => format!(" with {t} thread(s)"),
                (None, Some(m)) => format!(" ({m})"),
                _ => String::new(),
            };
            observations.push(format!(
                "{d}: peak {} {u} at {}{with}; average over the {} measured points {} {u}.",
                unit.show(gf(best)),
                shape(best),
                of.len(),
                unit.show(avg),
                u = unit.name()
            ));
            best_by_dtype.push((d.clone(), gf(best)));
        }
    }
    if let (Some(f32b), Some(f64b)) =
        (best_by_dtype.iter().find(|(d, _)| d == "f32"), best_by_dtype.iter().find(|(d, _)| d == "f64"))
    {
        if f64b.1 > 0.0 {
            observations.push(format!("Peak f32 throughput is {}× peak f64 throughput.", format_sig3(f32b.1 / f64b.1)));
        }
    }
    Some(GemmSection { chart: chart.into(), observations, table })
}

/// Build the context of a run report.
/// Whether a point was measured on a GPU: by benchbook's CUDA or HIP
/// backend, or by PyTorch (the seed scripts, `scripts/torch_reference.py`).
pub fn is_gpu(p: &PointStat) -> bool {
    matches!(p.backend.as_str(), "cuda" | "hip" | "torch")
}

fn gpu_section(manifest: &Manifest, gpu: &[PointStat], spec: Option<&Spec>) -> Option<GpuSection> {
    let mut devices = Vec::new();
    let mut versions = Vec::new();
    for b in &manifest.backends {
        let Some(f) = &b.facts else { continue };
        for (k, v) in f.as_object().into_iter().flatten() {
            match k.as_str() {
                "devices" => {
                    let ds: Vec<crate::bench::gpu::GpuFacts> = serde_json::from_value(v.clone()).unwrap_or_default();
                    for d in ds {
                        devices.push(GpuDeviceRow {
                            backend: b.name.clone(),
                            ordinal: d.ordinal.to_string(),
                            name: d.name,
                            arch: d.arch.unwrap_or_default(),
                            memory: d.memory_bytes.map(format_bytes).unwrap_or_default(),
                            multiprocessors: d.multiprocessors.map(|m| m.to_string()).unwrap_or_default(),
                            l2: d.l2_bytes.map(format_bytes).unwrap_or_default(),
                            details: d
                                .uuid
                                .into_iter()
                                .chain(d.pci_bus_id.map(|p| format!("PCI {p}")))
                                .chain(d.extra.iter().map(|(k, v)| format!("{k} {v}")))
                                .collect::<Vec<_>>()
                                .join(", "),
                        });
                    }
                }
                "peer_access" => {
                    let m: Vec<Vec<String>> = serde_json::from_value(v.clone()).unwrap_or_default();
                    let rows: Vec<String> = m
                        .iter()
                        .enumerate()
                        .map(|(i, r)| {
                            let cells: Vec<&str> = r
                                .iter()
                                .enumerate()
                                .map(|(j, c)| {
                                    if i == j {
                                        "-"
                                    } else if c == "enabled" {
                                        "P2P"
                                    } else {
                                        "no"
                                    }
                                })
                                .collect();
                            format!("GPU {i}: {}", cells.join(" "))
                        })
                        .collect();
                    versions.push(kv(&format!("{} peer access", b.name), rows.join("; ")));
                }
                _ => {
                    versions.push(kv(&format!("{} {k}", b.name), v.as_str().map(String::from).unwrap_or(v.to_string())))
                }
            }
        }
    }
    if gpu.is_empty() && devices.is_empty() {
        return None;
    }
    let roof = roofline_of(spec);
    Some(GpuSection {
        devices,
        versions,
        memcpy: bandwidth_section(gpu, &["memcpy"], "gpu-memcpy.svg", roof.as_ref()),
        peer: bandwidth_section(gpu, &["memcpy-peer"], "memcpy-peer.svg", None),
        host: bandwidth_section(gpu, &["h2d", "d2h"], "h2d-d2h.svg", None),
        gemm: gemm_section(gpu, spec, "gpu-gemm.svg", FlopUnit::Tera),
        roofline: roof.map(|r| r.0),
    })
}

pub fn build(
    manifest: &Manifest,
    all_stats: &[PointStat],
    not_measured: &[Row],
    spec: Option<&Spec>,
    gpu_spec: Option<&Spec>,
) -> ReportContext {
    let (gpu_stats, stats): (Vec<PointStat>, Vec<PointStat>) = all_stats.iter().cloned().partition(is_gpu);
    let stats = &stats[..];
    let roof = roofline_of(spec);
    let h = &manifest.host;
    let imported: Vec<ImportInfo> = manifest
        .config
        .get("import")
        .and_then(|v| v.as_array())
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    let text = |k: &str| i.get(k).and_then(|v| v.as_str()).unwrap_or("not in the file").to_string();
                    ImportInfo {
                        file: text("file"),
                        tool: text("tool"),
                        tool_version: text("tool_version"),
                        command: text("command"),
                        warnings: i
                            .get("warnings")
                            .and_then(|w| w.as_array())
                            .map(|w| w.iter().filter_map(|x| x.as_str().map(String::from)).collect())
                            .unwrap_or_default(),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let mut devices: Vec<String> = stats.iter().map(|p| p.device.clone()).collect();
    devices.sort();
    devices.dedup();
    let mut system = if !imported.is_empty() {
        vec![
            kv("Measured by", {
                let mut tools: Vec<String> = imported.iter().map(|i| i.tool.clone()).collect();
                tools.dedup();
                tools.join(", ")
            }),
            kv("Devices (from the logs)", devices.join("; ")),
            kv("Imported on", format!("{} ({})", h.hostname, h.os)),
        ]
    } else {
        vec![
            kv("Host", h.hostname.clone()),
            kv("CPU", format!("{} ({} logical CPUs)", h.cpu_model, h.logical_cpus)),
            kv("Memory", h.memory_bytes.map(format_bytes).unwrap_or_else(|| "unknown".into())),
            kv("OS / kernel", format!("{} / {}", h.os, h.kernel)),
            kv("Architecture", h.arch.clone()),
        ]
    };
    for b in manifest.backends.iter().filter(|_| imported.is_empty()) {
        let v = match &b.probe {
            crate::backend::Probe::Available { devices } => {
                format!("available: {}", devices.join("; "))
            }
            crate::backend::Probe::Unavailable { reason } => format!("unavailable: {reason}"),
        };
        system.push(kv(&format!("Backend {}", b.name), v));
    }
    if let Some(s) = spec {
        system.push(kv("Roofline spec", s.name.clone()));
    }
    if let Some(s) = gpu_spec {
        system.push(kv("GPU roofline spec", s.name.clone()));
    }
    let converged = all_stats.iter().filter(|p| p.note.as_deref().is_some_and(|n| n.starts_with("converged"))).count();
    let mut cvs: Vec<f64> = all_stats.iter().map(|p| p.summary.cv).filter(|c| c.is_finite()).collect();
    cvs.sort_by(f64::total_cmp);
    let mut timers: Vec<String> = Vec::new();
    for p in all_stats {
        let t = match p.backend.as_str() {
            "cpu" => "steady_clock (CLOCK_MONOTONIC via std::time::Instant)",
            "cuda" => "cuda_event (CUDA events around n back-to-back operations on the stream)",
            "hip" => "hip_event (HIP events around n back-to-back operations on the stream)",
            other => other,
        };
        if !timers.iter().any(|x| x == t) {
            timers.push(t.to_string());
        }
    }
    let stop_rule = manifest
        .config
        .get("stop")
        .and_then(|v| serde_json::from_value::<crate::bench::StopRule>(v.clone()).ok())
        .map(|r| r.describe())
        .unwrap_or_else(|| "not recorded (imported run)".into());
    let c = &manifest.counts;
    ReportContext {
        title: match &manifest.label {
            Some(l) => format!("benchbook report: {l}"),
            None => format!("benchbook report: {}", manifest.run_id),
        },
        generated_at: crate::archive::manifest::now_rfc3339(),
        benchbook_version: manifest.tool.version.clone(),
        benchbook_commit: match (&manifest.tool.git_commit, manifest.tool.git_dirty) {
            (Some(c), Some(true)) => format!("{c} (with uncommitted changes)"),
            (Some(c), _) => c.clone(),
            (None, _) => "unknown".into(),
        },
        run: RunSection {
            id: manifest.run_id.clone(),
            status: manifest.effective_status().as_str().into(),
            status_detail: manifest.status_detail.clone(),
            label: manifest.label.clone(),
            source: manifest.source.clone(),
            started_at: manifest.started_at.clone(),
            ended_at: manifest.ended_at.clone(),
            command: shell_join(&manifest.argv),
            preset: manifest.config.get("preset").and_then(|v| v.as_str()).map(String::from),
            points: c.points,
            measured: c.measured,
            skipped: c.skipped,
            failed: c.failed,
            rows: c.rows,
        },
        system,
        memcpy: bandwidth_section(stats, &["memcpy"], "memcpy.svg", roof.as_ref()),
        gpu: gpu_section(manifest, &gpu_stats, gpu_spec),
        stream: bandwidth_section(stats, &["stream"], "stream.svg", roof.as_ref()),
        gemm: gemm_section(stats, spec, "gemm.svg", FlopUnit::Giga),
        collective: bandwidth_section(stats, &["collective"], "collective.svg", None),
        p2p: bandwidth_section(stats, &["p2p"], "p2p.svg", None),
        latency: stats
            .iter()
            .filter(|p| p.bench == "p2p" && p.op == "latency")
            .map(|p| LatencyRow {
                peer: p.peer.clone().unwrap_or_default(),
                size: p.size_bytes.map(format_bytes).unwrap_or_default(),
                median: format_seconds(p.summary.median),
                p20: format_seconds(p.summary.p20),
                p80: format_seconds(p.summary.p80),
                samples: p.samples,
            })
            .collect(),
        other: stats
            .iter()
            .filter(|p| !["memcpy", "stream", "gemm", "collective", "p2p"].contains(&p.bench.as_str()))
            .map(|p| OtherRow {
                bench: p.bench.clone(),
                op: p.op.clone(),
                variant: p.variant.clone().unwrap_or_default(),
                size: p.size_bytes.map(format_bytes).unwrap_or_else(|| "-".into()),
                peer: p.peer.clone().unwrap_or_default(),
                median_time: format_seconds(p.summary.median),
                gbps_copied: p.gbps_copied.map(format_sig3).unwrap_or_default(),
                note: p.note.clone().unwrap_or_default(),
            })
            .collect(),
        imported,
        skipped: not_measured
            .iter()
            .map(|r| SkippedRow {
                bench: r.params.bench.clone(),
                point: match (&r.params.method, r.backend.as_str()) {
                    // GPU points: which method, and on which GPU.
                    (Some(m), "cuda" | "hip") => {
                        format!("{} ({m}), {}", r.params.label(), crate::rows::short_device(&r.device))
                    }
                    _ => r.params.label(),
                },
                status: r.status.as_str().into(),
                reason: r.note.clone().unwrap_or_default(),
            })
            .collect(),
        methodology: Methodology {
            timers: if timers.is_empty() { "none (no measured points)".into() } else { timers.join("; ") },
            stop_rule,
            converged,
            stopped_early: all_stats.len() - converged,
            median_cv_pct: if cvs.is_empty() {
                "n/a".into()
            } else {
                pct(crate::analysis::stats::quantile_sorted(&cvs, 0.5))
            },
        },
        files: manifest
            .files
            .iter()
            .map(|f| FileRow { path: f.path.clone(), bytes: f.bytes, sha256: f.sha256.clone() })
            .collect(),
        env: manifest.env.iter().map(|(k, v)| kv(k, v.clone())).collect(),
    }
}
