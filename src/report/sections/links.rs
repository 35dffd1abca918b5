//! Link rooflines: the published figure of the link or port a transfer
//! crosses (Infinity Fabric, NVLink, PCIe, EFA, RoCE), and each curve's
//! saturation stated against it as well as against its own plateau.
//! Template: `sections/links.md`.

use serde::Serialize;

use crate::analysis::specs::LinkLine;
use crate::analysis::{saturation, Curve};
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

/// The line a curve is held against: the smallest figure its peak does
/// not pass by more than 25 % (a curve far below a fast link is compared
/// with that link, never with a slower one it could not have used), else
/// the largest.
pub(crate) fn bounding(peak_gbps: f64, lines: &[LinkLine]) -> Option<&LinkLine> {
    let mut sorted: Vec<&LinkLine> = lines.iter().collect();
    sorted.sort_by(|a, b| a.gbps.total_cmp(&b.gbps));
    sorted.iter().find(|l| peak_gbps <= l.gbps * 1.25).or(sorted.last()).copied()
}

/// The section for `curves` (rates in GB/s from [`Curve::rate`]) against
/// `lines`; `None` without lines or curves.
pub fn links_section(curves: &[&Curve], lines: &[LinkLine], unit: &str) -> Option<LinksSection> {
    if lines.is_empty() || curves.is_empty() {
        return None;
    }
    let k = scale(unit);
    let cell = |c: Option<Crossing>| c.map(|c| c.to_string()).unwrap_or_default();
    let rows = curves
        .iter()
        .filter_map(|c| {
            let peak = c.rate().iter().map(|p| p.1).fold(f64::NAN, f64::max);
            let line = bounding(peak, lines)?;
            let s = saturation(c, Some(line.gbps))?;
            Some(LinkRow {
                curve: c.label.clone(),
                link: line.label.clone(),
                plateau: format!("{} {unit}", format_sig3(s.plateau_gbps * k)),
                plateau_pct: s.plateau_fraction.map(|f| format!("{:.0} %", f * 100.0)).unwrap_or_default(),
                peak_pct: s.peak_fraction.map(|f| format!("{:.0} %", f * 100.0)).unwrap_or_default(),
                p50: cell(s.roofline_50),
                p80: cell(s.roofline_80),
                p90: cell(s.roofline_90),
            })
        })
        .collect();
    Some(LinksSection {
        unit: unit.into(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn line(gbps: f64) -> LinkLine {
        LinkLine { label: format!("{gbps}"), gbps, source: String::new() }
    }

    #[test]
    fn a_curve_is_held_against_the_link_it_could_have_used() {
        let lines = [line(12.5), line(50.0)];
        assert_eq!(bounding(48.0, &lines).unwrap().gbps, 50.0);
        assert_eq!(bounding(11.0, &lines).unwrap().gbps, 12.5);
        assert_eq!(bounding(14.0, &lines).unwrap().gbps, 12.5, "within 25 % of the slower link");
        assert_eq!(bounding(90.0, &lines).unwrap().gbps, 50.0, "above every link: the fastest");
    }
}
