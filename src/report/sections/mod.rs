//! The sections of a report, in one list ([`SECTIONS`]): each is one
//! partial template `templates/sections/<name>.md` and, for the write-up
//! sections, one Rust file here that builds its Serialize view (and its
//! charts). A report kind is an ordered list of sections
//! ([`crate::report::Kind::sections`]), and its template is generated from
//! that list, one include per line. A section without data is `None` or
//! empty, and its partial prints nothing.
//!
//! The sections every kind shares (system, bandwidth, GPU, GEMM, workload,
//! methodology, provenance) are built from the blocks of
//! [`crate::report::context`], which this module does not use.
//!
//! A comparison's sections (`compare-*`) read its own context, and share `system`.
//!
//! Adding a section: its Rust file (when it has data of its own) and its
//! partial, one line in [`SECTIONS`], its place in the kinds that show it,
//! and the golden files.

use serde::Serialize;

use crate::analysis::specs::LinkLine;
use crate::analysis::{PointStat, Series, Spec, SpecBook};
use crate::archive::manifest::Manifest;
use crate::error::Result;
use crate::plot::{bandwidth_chart, Chart, Line};
use crate::report::context::said::Said;
use crate::report::Kind;
use crate::vocab::benches::Bench;
use crate::vocab::ops::Buffers;

pub mod key;
pub mod launches;
pub mod links;
pub mod matrix;
pub mod network;
pub mod notes;
pub mod one_sided;
pub mod pairs;
pub mod reference;
pub mod runs;

/// A section of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Header,
    KeyResults,
    Introduction,
    Runs,
    System,
    Setup,
    Gpu,
    HostMemcpy,
    Stream,
    Gemm,
    Collective,
    P2p,
    Network,
    Links,
    Launches,
    Matrix,
    Reference,
    Other,
    Workload,
    Telemetry,
    Discussion,
    Limitations,
    Skipped,
    Methodology,
    Reproducibility,
    Provenance,
    // A comparison's own sections (`--kind compare`), over its own context
    // (`report::compare::CompareContext`).
    CompareHeader,
    CompareSummary,
    CompareRuns,
    CompareSetup,
    CompareFamilies,
    ComparePartitions,
    CompareDetails,
    CompareNotes,
    CompareProvenance,
}

/// Every section, once: its partial's name and built-in text. The one list
/// a new section is registered in.
/// One entry of [`SECTIONS`]: the section, its name, its partial's text.
macro_rules! section {
    ($s:ident, $name:literal) => {
        (Section::$s, $name, include_str!(concat!("../../../templates/sections/", $name, ".md")))
    };
}

pub const SECTIONS: &[(Section, &str, &str)] = &[
    section!(Header, "header"),
    section!(KeyResults, "key-results"),
    section!(Introduction, "notes-introduction"),
    section!(Runs, "runs"),
    section!(System, "system"),
    section!(Setup, "notes-setup"),
    section!(Gpu, "gpu"),
    section!(HostMemcpy, "host-memcpy"),
    section!(Stream, "stream"),
    section!(Gemm, "gemm"),
    section!(Collective, "collective"),
    section!(P2p, "p2p"),
    section!(Network, "network"),
    section!(Links, "links"),
    section!(Launches, "launches"),
    section!(Matrix, "matrix"),
    section!(Reference, "reference"),
    section!(Other, "other"),
    section!(Workload, "workload"),
    section!(Telemetry, "telemetry"),
    section!(Discussion, "notes-discussion"),
    section!(Limitations, "notes-limitations"),
    section!(Skipped, "skipped"),
    section!(Methodology, "methodology"),
    section!(Reproducibility, "reproducibility"),
    section!(Provenance, "provenance"),
    section!(CompareHeader, "compare-header"),
    section!(CompareSummary, "compare-summary"),
    section!(CompareRuns, "compare-runs"),
    section!(CompareSetup, "compare-setup"),
    section!(CompareFamilies, "compare-families"),
    section!(ComparePartitions, "compare-partitions"),
    section!(CompareDetails, "compare-details"),
    section!(CompareNotes, "compare-notes"),
    section!(CompareProvenance, "compare-provenance"),
];

impl Section {
    /// The partial's name, `sections/<name>.md`.
    pub fn partial(self) -> String {
        let name = SECTIONS.iter().find(|(s, ..)| *s == self).map(|(_, n, _)| *n).expect("every section is registered");
        format!("sections/{name}.md")
    }
}

/// The template of a kind: one include per line, in the kind's order.
pub fn kind_template(sections: &[Section]) -> String {
    sections.iter().map(|s| format!("{{% include \"{}\" -%}}\n", s.partial())).collect()
}

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
    pub pairs_note: Option<Said>,
    /// The chart of peer copies (and MPI transfers) against the link.
    pub peer_chart: Option<String>,
    /// The peer-write kernel sweep, grid × block, per GPU pair.
    pub launches: Vec<launches::LaunchTable>,
    /// The headline numbers, at the top.
    pub key: Option<key::KeyResults>,
}

/// What the write-up sections are built from.
pub struct Input<'a> {
    pub kind: Kind,
    pub manifests: &'a [Manifest],
    /// The points the charts draw (after `--pairs`).
    pub stats: &'a [PointStat],
    /// Every point (matrices show every pair).
    pub all: &'a [PointStat],
    pub book: &'a SpecBook,
    pub spec: Option<&'a Spec>,
    /// The link the network transfers crossed (`--link`).
    pub link: Option<&'a crate::analysis::specs::Interconnect>,
    /// Whose rows each curve holds, each system's spec, and every series
    /// of `stats` (built once).
    pub catalog: &'a crate::analysis::Catalog,
}

/// Build the write-up sections the kind lists, in its order, and their
/// charts.
pub fn build(input: &Input, notes: notes::Notes, pairs_note: Option<Said>) -> Result<(Sections, Vec<Box<dyn Chart>>)> {
    let kind = input.kind;
    let mut charts: Vec<Box<dyn Chart>> = Vec::new();
    let cs: Vec<&Series> = input.catalog.series.iter().collect();
    let mut s = Sections {
        kind: kind.name().into(),
        subject: kind.subject_of(input.stats, shared_memory_only(input.manifests)),
        runs: runs::rows(input.manifests),
        notes,
        pairs_note,
        ..Sections::default()
    };
    // The matrices first: the peer links state them against the link.
    let sections = kind.sections();
    if sections.contains(&Section::Matrix) {
        let (views, heatmaps) = matrix::matrices(input.all);
        s.matrices = views;
        charts.extend(heatmaps.into_iter().map(|h| Box::new(h) as Box<dyn Chart>));
    }
    for section in sections.iter().copied() {
        match section {
            Section::Launches => s.launches = launches::tables(&cs),
            Section::KeyResults => s.key = key::for_report(input, &sections, &cs),
            // Links are built with the section they bound: peer copies
            // (seed 000) or network transfers (seed 003).
            Section::Links if kind == Kind::MemcpyPeer => peer_links(input, &cs, &mut s, &mut charts),
            Section::Network => network_links(input, &cs, &mut s, &mut charts),
            Section::Reference => {
                s.reference = reference::reference_section(kind, &crate::analysis::reference::load()?, input.stats)
            }
            _ => {}
        }
    }
    Ok((s, charts))
}

/// The peer-copy links section and its chart, and the matrices' share of
/// the widest link.
fn peer_links(input: &Input, cs: &[&Series], s: &mut Sections, charts: &mut Vec<Box<dyn Chart>>) {
    let of: Vec<&Series> =
        cs.iter().copied().filter(|c| c.of_bench(&[Bench::MemcpyPeer, Bench::P2p]) && c.is_bandwidth()).collect();
    let pair = input.spec.and_then(|s| s.link.as_ref()).and_then(|l| l.pair_line());
    // The GPU's own host link where its spec names one.
    let host = input
        .spec
        .and_then(|s| s.host_line.clone())
        .or_else(|| input.book.interconnect_lines("host").into_iter().next());
    // Only transfers between GPU buffers cross a GPU link; MPI between
    // host buffers is drawn beside them but not held against it. A copy
    // between GPUs without peer access is staged through the host: PCIe.
    let on_gpu: Vec<(&Series, LinkLine)> = of
        .iter()
        .copied()
        .filter(|c| c.buffers.on_gpu())
        .filter_map(|c| {
            let line = if c.buffers == Buffers::StagedThroughHost { host.clone() } else { pair.clone() };
            line.map(|l| (c, l))
        })
        .collect();
    let mut lines: Vec<LinkLine> = Vec::new();
    for (_, l) in &on_gpu {
        if !lines.contains(l) {
            lines.push(l.clone());
        }
    }
    const RULE: &str = "Each copy between GPUs is held against the link it crosses: with peer access, the GPU's link to one peer (one link in a fully connected mesh such as Infinity Fabric; all links one way through a switch such as NVSwitch); without it, the host's PCIe link it is staged through.";
    s.links = links::links_section(&on_gpu, &lines, "GB/s", RULE);
    // A matrix cell is one pair of GPUs: held against the same pair line.
    if let Some(l) = &pair {
        for m in s.matrices.iter_mut().filter(|m| m.unit == "GB/s") {
            m.link =
                Some(format!("{:.0}–{:.0} % of {}", m.range.0 / l.gbps * 100.0, m.range.1 / l.gbps * 100.0, l.label));
        }
    }
    if !of.is_empty() {
        const ID: &str = "peer-vs-link";
        s.peer_chart = Some(ID.into());
        charts.push(Box::new(
            bandwidth_chart(
                ID,
                &title(input, "peer copy and MPI bandwidth", &of),
                Bench::MemcpyPeer.info().axis,
                of.iter().map(|c| line_of(c, 1.0)).collect(),
                None,
            )
            .with_links(if on_gpu.is_empty() { Vec::new() } else { links::chart_lines(&lines, "GB/s") }),
        ));
    }
}

/// The network section, the links its transfers crossed, and its chart.
fn network_links(input: &Input, cs: &[&Series], s: &mut Sections, charts: &mut Vec<Box<dyn Chart>>) {
    const ID: &str = "network";
    s.network = network::network_section(cs, input.stats, ID, input.catalog);
    let of = network::transfer_curves(cs);
    // Ranks that all ran on one host talked through shared memory: no
    // network port bounds them, so none is drawn or compared.
    let local: Vec<&Manifest> = input.manifests.iter().filter(|m| one_host(m)).collect();
    let crossed: Vec<&Series> = of.iter().copied().filter(|c| !local.iter().any(|m| m.run_id == c.run_id)).collect();
    // Only the link named (`--link`) is drawn: a log names a link's type,
    // never its rate, and a figure picked by size could be any link.
    let lines: Vec<LinkLine> =
        if crossed.is_empty() { Vec::new() } else { input.link.map(|l| l.line()).into_iter().collect() };
    let held: Vec<(&Series, LinkLine)> = crossed.iter().flat_map(|c| lines.first().map(|l| (*c, l.clone()))).collect();
    s.links = links::links_section(
        &held,
        &lines,
        "Gb/s",
        "Each transfer that crossed a network port is held against the link named for this report (--link): a log names a link's type, never its rate.",
    );
    if let Some(n) = s.network.as_mut() {
        // One-sided peaks that crossed a port, against it.
        for r in n.channels.iter_mut().filter(|r| crossed.iter().any(|c| c.key == r.key)) {
            r.against(lines.first());
        }
        n.channels_linked = n.channels.iter().any(|r| !r.of_link.is_empty());
        if !crossed.is_empty() && lines.is_empty() {
            n.observations.push(unnamed_link(input, &crossed));
        }
        for m in local.iter().filter(|m| of.iter().any(|c| c.run_id == m.run_id)) {
            n.observations.push(Said::SharedMemory { run_id: m.run_id.clone(), host: m.host.hostname.clone() });
        }
    }
    if !of.is_empty() {
        charts.push(Box::new(
            bandwidth_chart(
                ID,
                &title(
                    input,
                    match (crossed.is_empty(), crossed.len() == of.len()) {
                        (true, _) => "MPI bandwidth over shared memory",
                        (false, true) => "network bandwidth",
                        (false, false) => "network and shared-memory bandwidth",
                    },
                    &of,
                ),
                "Gb/s (10^9 bits/s)",
                of.iter().map(|c| line_of(c, 8.0)).collect(),
                None,
            )
            .with_links(links::chart_lines(&lines, "Gb/s")),
        ));
    }
}

/// The sentence for transfers that crossed a link nobody named: what the
/// logs say of it, and how to name it.
fn unnamed_link(input: &Input, crossed: &[&Series]) -> Said {
    let known: Vec<String> = input
        .book
        .interconnects
        .iter()
        .filter(|i| i.applies.iter().any(|a| a == "network"))
        .map(|i| i.id.clone())
        .collect();
    let runs: std::collections::BTreeSet<&str> = crossed.iter().map(|c| c.run_id.as_str()).collect();
    let mut named: Vec<String> = Vec::new();
    for m in input.manifests.iter().filter(|m| runs.contains(m.run_id.as_str())) {
        if let crate::vocab::config::RunConfig::Import { import } = &m.config {
            for l in import.iter().filter_map(|f| f.link.as_ref()) {
                if !named.contains(l) {
                    named.push(l.clone());
                }
            }
        }
    }
    Said::UnnamedLink { named, known }
}

fn title(input: &Input, t: &str, of: &[&Series]) -> String {
    input.catalog.title(t, of.iter().map(|c| (c.run_id.as_str(), c.device.as_str())))
}

/// Whether every run is an MPI run whose ranks all ran on one host.
pub(super) fn shared_memory_only(manifests: &[Manifest]) -> bool {
    !manifests.is_empty() && manifests.iter().all(one_host)
}

/// Whether every MPI rank of a native run ran on one host.
pub(super) fn one_host(m: &Manifest) -> bool {
    m.config.mpi().is_some_and(|mpi| mpi.one_host())
}

/// A curve as a chart line, its rates times `scale` (8 for Gb/s).
fn line_of(c: &Series, scale: f64) -> Line {
    Line::with_errors(
        c.name().to_string(),
        c.rate_with_bars().into_iter().map(|(x, g, e)| (x, g * scale, e.map(|(l, h)| (l * scale, h * scale)))),
    )
    .of(c.system(), c.op.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_partial_is_registered_once_and_kind_templates_are_one_include_per_line() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("templates/sections");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().trim_end_matches(".md").to_string())
            .collect();
        files.sort();
        let mut registered: Vec<String> = SECTIONS.iter().map(|(_, n, _)| n.to_string()).collect();
        registered.sort();
        assert_eq!(files, registered, "a partial without a registration, or a registration without a partial");
        for k in Kind::ALL {
            let t = kind_template(&k.sections());
            assert_eq!(t.lines().count(), k.sections().len(), "{k}");
            assert!(t.lines().all(|l| l.starts_with("{% include \"sections/") && l.ends_with(".md\" -%}")), "{t}");
        }
    }
}
