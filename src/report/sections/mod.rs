//! Section modules of the write-up report kinds ([`crate::report::Kind`]):
//! each is one Rust file here, building a Serialize view (and its charts),
//! and one partial template in `templates/sections/` of the same name. A
//! section without data is `None` or empty, and its partial prints nothing.
//!
//! The sections every kind shares (system, bandwidth, GPU, GEMM, workload,
//! methodology, provenance) are built by [`crate::report::context`] and
//! rendered by the partials of the same names.

use serde::Serialize;

use crate::analysis::specs::LinkLine;
use crate::analysis::{curves, PointStat, Spec, SpecBook};
use crate::archive::manifest::Manifest;
use crate::error::Result;
use crate::plot::{bandwidth_chart, Chart, Line};
use crate::report::context::OtherRow;
use crate::report::Kind;
use crate::vocab::benches::Bench;

pub mod launches;
pub mod links;
pub mod matrix;
pub mod network;
pub mod notes;
pub mod pairs;
pub mod reference;
pub mod runs;

/// The write-up sections of a report; all empty for `--kind run`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Sections {
    /// `memcpy-peer`, ...: the kind the report was rendered as.
    pub kind: String,
    /// What the kind is about, for the title.
    pub subject: String,
    /// Every run the report covers, when it covers more than one.
    pub runs: Vec<runs::RunRow>,
    pub notes: notes::Notes,
    pub links: Option<links::LinksSection>,
    pub network: Option<network::NetworkSection>,
    pub matrices: Vec<matrix::MatrixView>,
    pub reference: Option<reference::ReferenceSection>,
    /// Which GPU pairs the peer charts leave out, when they do.
    pub pairs_note: Option<String>,
    /// The chart of peer copies (and MPI transfers) against the link.
    pub peer_chart: Option<String>,
    /// The peer-write kernel sweep, grid × block, per GPU pair.
    pub launches: Vec<launches::LaunchTable>,
}

/// Build the write-up sections of `kind` and their charts. `stats` are the
/// points the charts draw (after `--pairs`); `all` every point (matrices
/// show every pair).
#[allow(clippy::too_many_arguments)]
pub fn build(
    kind: Kind,
    manifests: &[Manifest],
    stats: &[PointStat],
    all: &[PointStat],
    book: &SpecBook,
    spec: Option<&Spec>,
    notes: notes::Notes,
    pairs_note: Option<String>,
) -> Result<(Sections, Vec<Box<dyn Chart>>)> {
    let mut charts: Vec<Box<dyn Chart>> = Vec::new();
    let cs = curves(stats);
    let mut s = Sections {
        kind: kind.name().into(),
        subject: kind.subject().into(),
        runs: runs::rows(manifests),
        notes,
        pairs_note,
        ..Sections::default()
    };
    let title =
        |t: &str, of: &[&crate::analysis::Curve]| crate::report::chart_title(t, of.iter().map(|c| c.device.as_str()));
    if matches!(kind, Kind::MemcpyPeer | Kind::Network) {
        let (views, heatmaps) = matrix::matrices(all);
        s.matrices = views;
        charts.extend(heatmaps.into_iter().map(|h| Box::new(h) as Box<dyn Chart>));
    }
    if kind == Kind::MemcpyPeer {
        s.launches = launches::tables(&cs);
        let of: Vec<&crate::analysis::Curve> = cs
            .iter()
            .filter(|c| (c.bench == Bench::MemcpyPeer || c.bench == Bench::P2p) && c.op != "latency" && c.op != "lat")
            .collect();
        let mut lines: Vec<LinkLine> = spec.and_then(|s| s.link.as_ref()).map(|l| l.lines()).unwrap_or_default();
        if of.iter().any(|c| c.label.contains("no_peer_access")) {
            lines.extend(book.interconnect_lines("host"));
        }
        // Only transfers between GPU buffers cross a GPU link; MPI between
        // host buffers is drawn beside them but not held against it.
        let on_gpu: Vec<&crate::analysis::Curve> = of.iter().copied().filter(|c| gpu_buffers(c)).collect();
        s.links = links::links_section(&on_gpu, &lines, "GB/s");
        // A pair of a fully connected mesh has one link; through a switch,
        // all of them: the matrix is stated against the widest figure.
        if let Some(l) = lines.iter().filter(|l| !l.label.starts_with("PCIe")).max_by(|a, b| a.gbps.total_cmp(&b.gbps))
        {
            for m in s.matrices.iter_mut().filter(|m| m.unit == "GB/s") {
                m.link = Some(format!(
                    "That is {:.0}–{:.0} % of {}.",
                    m.range.0 / l.gbps * 100.0,
                    m.range.1 / l.gbps * 100.0,
                    l.label
                ));
            }
        }
        if !of.is_empty() {
            s.peer_chart = Some("peer-vs-link.svg".into());
            charts.push(Box::new(
                bandwidth_chart(
                    "peer-vs-link",
                    &title("peer copy and MPI bandwidth", &of),
                    "GB/s (bytes copied once)",
                    of.iter().map(|c| line_of(c, 1.0)).collect(),
                    None,
                )
                .with_links(if on_gpu.is_empty() {
                    Vec::new()
                } else {
                    links::chart_lines(&lines, "GB/s")
                }),
            ));
        }
    }
    if kind == Kind::Network {
        s.network = network::network_section(&cs, stats, "network.svg");
        let of = network::transfer_curves(&cs);
        // Ranks that all ran on one host talked through shared memory: no
        // network port bounds them, so none is drawn or compared.
        let local: Vec<&Manifest> = manifests.iter().filter(|m| one_host(m)).collect();
        let crossed: Vec<&crate::analysis::Curve> =
            of.iter().copied().filter(|c| !local.iter().any(|m| m.run_id == c.run_id)).collect();
        let lines = if crossed.is_empty() { Vec::new() } else { book.interconnect_lines("network") };
        s.links = links::links_section(&crossed, &lines, "Gb/s");
        if let Some(n) = s.network.as_mut() {
            // One-sided peaks that crossed a port, against it.
            for r in n.channels.iter_mut().filter(|r| crossed.iter().any(|c| c.label == r.curve)) {
                r.against(&lines);
            }
            n.channels_linked = n.channels.iter().any(|r| !r.of_link.is_empty());
            for m in local.iter().filter(|m| of.iter().any(|c| c.run_id == m.run_id)) {
                n.observations.push(format!(
                    "Every rank of run {} ran on one host ({}): its transfers went through shared memory, not a network port, so no port line is drawn for them.",
                    m.run_id, m.host.hostname
                ));
            }
        }
        if !of.is_empty() {
            charts.push(Box::new(
                bandwidth_chart(
                    "network",
                    &title("network bandwidth", &of),
                    "Gb/s (10^9 bits/s)",
                    of.iter().map(|c| line_of(c, 8.0)).collect(),
                    None,
                )
                .with_links(links::chart_lines(&lines, "Gb/s")),
            ));
        }
    }
    s.reference = reference::reference_section(kind, &crate::analysis::reference::load()?, stats);
    Ok((s, charts))
}

/// Whether a curve moved GPU memory: a GPU backend's copy, or an MPI
/// benchmark on device buffers (OSU `D D`, GPU-aware MPI).
fn gpu_buffers(c: &crate::analysis::Curve) -> bool {
    c.bench == Bench::MemcpyPeer
        || c.points.iter().any(|p| {
            crate::vocab::kinds::backend_is_gpu(&p.backend)
                || p.variant.as_deref().is_some_and(|v| v.contains("device"))
        })
}

/// Whether every MPI rank of a native run ran on one host.
fn one_host(m: &Manifest) -> bool {
    m.config.mpi().is_some_and(|mpi| mpi.one_host())
}

/// A curve as a chart line, its rates times `scale` (8 for Gb/s).
fn line_of(c: &crate::analysis::Curve, scale: f64) -> Line {
    Line::with_errors(
        c.label.clone(),
        c.rate_with_ci().into_iter().map(|(x, g, e)| (x as f64, g * scale, e.map(|(l, h)| (l * scale, h * scale)))),
    )
}

/// Drop from "Other measurements" the rows a write-up section shows.
pub fn trim_other(kind: Kind, s: &Sections, other: &mut Vec<OtherRow>) {
    if kind == Kind::Network {
        other.retain(|o| o.bench != Bench::Rdma);
    }
    if matches!(kind, Kind::MemcpyPeer | Kind::Network) {
        other.retain(|o| !(o.bench == Bench::Nvbandwidth && s.matrices.iter().any(|m| m.title == o.op)));
    }
}
