//! The GPU section: what each GPU backend recorded about its devices,
//! versions and peer access, then the device, peer, host↔device and GEMM
//! measurements.

use crate::analysis::{Catalog, PointStat, Series, Spec};
use crate::archive::manifest::Manifest;
use crate::vocab::benches::Bench;
use crate::vocab::facts::{GpuBackendFacts, GpuFacts, PeerAccess};
use crate::vocab::source::RowOrigin;
use crate::vocab::units::{format_bytes, format_sig3};

use super::blocks::{bandwidth_section, gemm_section, roofline_of};
use super::prose::kv;
use super::{GpuDeviceRow, GpuSection, KeyValue};
use crate::vocab::units::FlopUnit;

/// The GPU section, or `None` when the run has neither GPU points nor GPU
/// devices in its manifest.
pub(super) fn gpu_section(
    manifest: &Manifest,
    gpu: &[PointStat],
    series: &[&Series],
    spec: Option<&Spec>,
    manifests: &[Manifest],
    catalog: &Catalog,
) -> Option<GpuSection> {
    // Every card of every run, once (by UUID where the run recorded one),
    // with the runs that used it: a report over two cards names both.
    let mut devices: Vec<(GpuDeviceRow, String, Vec<String>)> = Vec::new();
    for m in manifests.iter().chain(manifests.is_empty().then_some(manifest)) {
        let name = super::run_name(manifests, &m.run_id);
        for b in &m.backends {
            let Some(f) = b.gpu_facts() else { continue };
            for d in &f.devices {
                let id = d.uuid.clone().unwrap_or_else(|| format!("{} {} {}", m.host.hostname, d.ordinal, d.name));
                match devices.iter_mut().find(|(_, seen, _)| *seen == id) {
                    Some((.., runs)) if !runs.contains(&name) => runs.push(name.clone()),
                    Some(_) => {}
                    None => devices.push((device_row(&b.name, d), id, vec![name.clone()])),
                }
            }
        }
    }
    let devices: Vec<GpuDeviceRow> =
        devices.into_iter().map(|(row, _, runs)| GpuDeviceRow { runs: runs.join(", "), ..row }).collect();
    let mut versions = Vec::new();
    for b in &manifest.backends {
        let Some(f) = b.gpu_facts() else { continue };
        versions.extend(version_rows(&b.name, &f));
    }
    if gpu.is_empty() && devices.is_empty() {
        return None;
    }
    let roof = roofline_of(spec);
    Some(GpuSection {
        devices,
        versions,
        memcpy: bandwidth_section(series, &[Bench::Memcpy], "gpu-memcpy", catalog),
        peer: bandwidth_section(series, &[Bench::MemcpyPeer], Bench::MemcpyPeer.name(), catalog),
        host: bandwidth_section(series, &[Bench::H2d, Bench::D2h], "h2d-d2h", catalog),
        gemm: gemm_section(gpu, spec, "gpu-gemm", FlopUnit::Tera, manifests),
        roofline: roof.map(|r| r.0),
        host_link: host_link(series, spec),
        native: gpu.iter().any(|p| RowOrigin::parse(p.source.as_deref()) == RowOrigin::Native),
        imported_from: {
            let mut tools: Vec<String> =
                gpu.iter().filter_map(|p| RowOrigin::parse(p.source.as_deref()).tool().map(String::from)).collect();
            tools.sort();
            tools.dedup();
            tools
        },
    })
}

/// A host link and the host copies' plateaus against it.
#[derive(Debug, Clone, serde::Serialize)]
pub struct HostLink {
    pub label: String,
    pub gbps: String,
    pub source: String,
    /// (curve, plateau GB/s, share of the link) per settled curve.
    pub rows: Vec<(String, String, String)>,
}

fn host_link(series: &[&Series], spec: Option<&Spec>) -> Option<HostLink> {
    let line = spec?.host_line.as_ref()?;
    let rows = series
        .iter()
        .filter(|c| c.of_bench(&[Bench::H2d, Bench::D2h]) && c.is_bandwidth())
        .filter_map(|c| {
            let s = c.against(line.gbps).filter(|s| s.settled())?;
            let pct = format!("{:.1} %", s.plateau_fraction? * 100.0);
            Some((c.name().to_string(), format_sig3(s.plateau_gbps), pct))
        })
        .collect::<Vec<_>>();
    (!rows.is_empty()).then(|| HostLink {
        label: line.label.clone(),
        gbps: format_sig3(line.gbps),
        source: line.source.clone(),
        rows,
    })
}

/// The L2 cache of point `p`'s GPU, as its run's manifest recorded it
/// (devices are named `GPU <ordinal>: <name>` in rows).
pub fn l2_of(manifests: &[Manifest], p: &PointStat) -> Option<u64> {
    let l2 = |m: &Manifest, ours: &dyn Fn(&GpuFacts) -> bool| {
        m.backends
            .iter()
            .filter_map(|b| b.gpu_facts())
            .flat_map(|f| f.devices)
            .find_map(|d| ours(&d).then_some(d.l2_bytes).flatten())
    };
    let own = manifests.iter().find(|m| m.run_id == p.run_id).and_then(|m| {
        l2(m, &|d: &GpuFacts| p.device == d.name || p.device.starts_with(&format!("GPU {}:", d.ordinal)))
    });
    // An imported run records no device facts: the L2 is the model's, so
    // another run of the report on a card of the same name gives it.
    own.or_else(|| manifests.iter().find_map(|m| l2(m, &|d: &GpuFacts| p.device == d.name)))
}

fn device_row(backend: &str, d: &GpuFacts) -> GpuDeviceRow {
    GpuDeviceRow {
        backend: backend.to_string(),
        ordinal: d.ordinal.to_string(),
        name: d.name.clone(),
        arch: d.arch.clone().unwrap_or_default(),
        memory: d.memory_bytes.map(format_bytes).unwrap_or_default(),
        multiprocessors: d.multiprocessors.map(|m| m.to_string()).unwrap_or_default(),
        l2: d.l2_bytes.map(format_bytes).unwrap_or_default(),
        runs: String::new(),
        details: d
            .uuid
            .iter()
            .cloned()
            .chain(d.pci_bus_id.as_ref().map(|p| format!("PCI {p}")))
            .chain(d.extra.iter().map(|(k, v)| format!("{k} {v}")))
            .collect::<Vec<_>>()
            .join(", "),
    }
}

/// A backend's fact rows in the order of their keys, as the manifest sorts
/// them: the versions, with the peer-access matrix where `peer_access`
/// sorts among them.
fn version_rows(backend: &str, f: &GpuBackendFacts) -> Vec<KeyValue> {
    let version = |(k, v): (&String, &serde_json::Value)| {
        kv(&format!("{backend} {k}"), v.as_str().map(String::from).unwrap_or(v.to_string()))
    };
    let mut rows: Vec<KeyValue> = f.versions.iter().filter(|(k, _)| k.as_str() < "peer_access").map(version).collect();
    if !f.peer_access.is_empty() {
        rows.push(kv(&format!("{backend} peer access"), peer_matrix(&f.peer_access)));
    }
    rows.extend(f.versions.iter().filter(|(k, _)| k.as_str() > "peer_access").map(version));
    rows
}

/// `GPU 0: - P2P; GPU 1: P2P -`: `P2P` where peer access is enabled, `no`
/// where it is not, `-` from a GPU to itself.
fn peer_matrix(m: &[Vec<PeerAccess>]) -> String {
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
                    } else if *c == PeerAccess::Enabled {
                        "P2P"
                    } else {
                        "no"
                    }
                })
                .collect();
            format!("GPU {i}: {}", cells.join(" "))
        })
        .collect();
    rows.join("; ")
}
