//! Link rooflines: the published figure of the link or port a transfer
//! crosses (Infinity Fabric, NVLink, PCIe, EFA, RoCE), and each curve's
//! saturation stated against it as well as against its own plateau.
//! Template: `sections/links.md`.

use serde::Serialize;

use crate::analysis::specs::LinkLine;
use crate::analysis::Series;
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
