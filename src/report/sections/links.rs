//! Link rooflines: the published figure of the link or port a transfer
//! crosses (Infinity Fabric, NVLink, PCIe, EFA, RoCE), and each curve's
//! saturation stated against it as well as against its own plateau.
//! Template: `sections/links.md`. The section is built with the one it
//! bounds: peer copies (seed 000) or network transfers (seed 003).

use serde::Serialize;

use super::{Input, Sections};
use crate::analysis::findings::Said;
use crate::analysis::specs::LinkLine;
use crate::analysis::Series;
use crate::archive::manifest::Manifest;
use crate::plot::{bandwidth_chart, Chart};
use crate::vocab::benches::Bench;
use crate::vocab::ops::Buffers;
use crate::vocab::stats::Crossing;
use crate::vocab::units::format_sig3;

/// A link line as the report shows it.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRef {
    pub label: String,
    /// The figure in the section's unit.
    pub value: String,
    pub source: String,
}

/// One curve against the link that bounds it.
#[derive(Debug, Clone, Serialize)]
pub struct LinkRow {
    pub curve: String,
    pub link: String,
    pub plateau: String,
    pub plateau_pct: String,
    pub peak_pct: String,
    pub p50: String,
    pub p80: String,
    pub p90: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct LinksSection {
    /// `GB/s` or `Gb/s` (network rows, as network tools print them).
    pub unit: String,
    /// Which link each curve is held against, and why that one.
    pub rule: String,
    pub lines: Vec<LinkRef>,
    pub rows: Vec<LinkRow>,
}

/// Per GB/s, in the section's unit.
fn scale(unit: &str) -> f64 {
    if unit == "Gb/s" {
        8.0
    } else {
        1.0
    }
}

/// The section for each curve (rates in GB/s from [`Curve::rate`]) against
/// the link it crosses, chosen by the caller from the hardware (never by how
/// close a figure is to the rate); `lines` are every line drawn, `rule`
/// says how a curve's link was chosen. `None` without curves or lines.
pub fn links_section(
    curves: &[(&Series, LinkLine)],
    lines: &[LinkLine],
    unit: &str,
    rule: &str,
) -> Option<LinksSection> {
    if lines.is_empty() || curves.is_empty() {
        return None;
    }
    let k = scale(unit);
    let cell = |c: Option<Crossing>| c.map(|c| c.to_string()).unwrap_or_default();
    let rows = curves
        .iter()
        .filter_map(|(c, line)| {
            let s = c.against(line.gbps)?;
            Some(LinkRow {
                curve: c.name().to_string(),
                link: line.label.clone(),
                plateau: format!("{} {unit}", format_sig3(s.plateau_gbps * k)),
                plateau_pct: s.plateau_fraction.map(|f| format!("{:.1} %", f * 100.0)).unwrap_or_default(),
                peak_pct: s.peak_fraction.map(|f| format!("{:.1} %", f * 100.0)).unwrap_or_default(),
                p50: cell(s.roofline_50),
                p80: cell(s.roofline_80),
                p90: cell(s.roofline_90),
            })
        })
        .collect();
    Some(LinksSection {
        unit: unit.into(),
        rule: rule.into(),
        lines: lines
            .iter()
            .map(|l| LinkRef {
                label: l.label.clone(),
                value: format!("{} {unit}", format_sig3(l.gbps * k)),
                source: l.source.clone(),
            })
            .collect(),
        rows,
    })
}

/// The lines as a chart draws them: (label, value in `unit`).
pub fn chart_lines(lines: &[LinkLine], unit: &str) -> Vec<(String, f64)> {
    lines.iter().map(|l| (l.label.clone(), l.gbps * scale(unit))).collect()
}

/// The peer-copy links section and its chart.
pub(super) fn peer_links(input: &Input, cs: &[&Series], s: &mut Sections, charts: &mut Vec<Box<dyn Chart>>) {
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
            let line = match input.links.line(&c.run_id) {
                Some(named) => Some(named),
                None if c.buffers == Buffers::StagedThroughHost => host.clone(),
                None => pair.clone(),
            };
            line.map(|l| (c, l))
        })
        .collect();
    let mut lines: Vec<LinkLine> = Vec::new();
    for (_, l) in &on_gpu {
        if !lines.contains(l) {
            lines.push(l.clone());
        }
    }
    const RULE: &str = "Each copy between GPUs is held against the link it crosses: the one named for its run (--link), which a log that names no topology needs; else, with peer access, the GPU's link to one peer (one link in a fully connected mesh such as Infinity Fabric; all links one way through a switch such as NVSwitch); without it, the host's PCIe link it is staged through.";
    s.links = links_section(&on_gpu, &lines, "GB/s", RULE);
    if !of.is_empty() {
        const ID: &str = "peer-vs-link";
        s.peer_chart = Some(ID.into());
        // Against the link, only the curves held against one: MPI between
        // host buffers has its own chart in Point-to-point.
        let drawn: Vec<&Series> = if on_gpu.is_empty() { of.clone() } else { on_gpu.iter().map(|(c, _)| *c).collect() };
        charts.push(Box::new(
            bandwidth_chart(
                ID,
                &title(input, "peer copy and MPI bandwidth", &drawn),
                Bench::MemcpyPeer.info().axis,
                drawn.iter().map(|c| crate::plot::series::line(c, c.name().to_string(), 1.0)).collect(),
                None,
            )
            .with_links(if on_gpu.is_empty() { Vec::new() } else { chart_lines(&lines, "GB/s") }),
        ));
    }
}

/// The network section, the links its transfers crossed, and its chart.
pub(super) fn network_links(input: &Input, cs: &[&Series], s: &mut Sections, charts: &mut Vec<Box<dyn Chart>>) {
    const ID: &str = "network";
    s.network = super::network::network_section(cs, input.stats, ID, input.catalog);
    let of = super::network::transfer_curves(cs);
    // Ranks that all ran on one host talked through shared memory: no
    // network port bounds them, so none is drawn or compared.
    let local: Vec<&Manifest> = input.manifests.iter().filter(|m| super::one_host(m)).collect();
    let crossed: Vec<&Series> = of.iter().copied().filter(|c| !local.iter().any(|m| m.run_id == c.run_id)).collect();
    // Only a link named (`--link`) is drawn: a log names a link's type,
    // never its rate, and a figure picked by size could be any link.
    let held: Vec<(&Series, LinkLine)> =
        crossed.iter().filter_map(|c| input.links.line(&c.run_id).map(|l| (*c, l))).collect();
    let mut lines: Vec<LinkLine> = Vec::new();
    for (_, l) in &held {
        if !lines.contains(l) {
            lines.push(l.clone());
        }
    }
    s.links = links_section(
        &held,
        &lines,
        "Gb/s",
        "Each transfer that crossed a network port is held against the link named for its run (--link): a log names a link's type, never its rate.",
    );
    if let Some(n) = s.network.as_mut() {
        // One-sided peaks that crossed a port, against it.
        for r in n.channels.iter_mut() {
            if let Some((_, l)) = held.iter().find(|(c, _)| c.key == r.key) {
                r.against(Some(l));
            }
        }
        n.channels_linked = n.channels.iter().any(|r| !r.of_link.is_empty());
        let unheld: Vec<&Series> =
            crossed.iter().copied().filter(|c| input.links.of(&c.run_id).is_none()).collect();
        if !unheld.is_empty() {
            n.observations.push(unnamed_link(input, &unheld));
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
                of.iter().map(|c| crate::plot::series::line(c, c.name().to_string(), 8.0)).collect(),
                None,
            )
            .with_links(chart_lines(&lines, "Gb/s")),
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

