//! Grouped horizontal bars: one group per shape (top-down, in the order
//! given), one bar per series (a dtype, or a dtype of one run) in the
//! series' colour, with the legend naming them, and each series' published
//! peak drawn as a dashed tick across its bars.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{is_narrow, legend_chars, plot_err, Chart, COLORS, FONT};
use crate::error::Result;
use crate::vocab::units::format_sig3;

/// One series: a value per group (`None`: not measured there) and the peak
/// it is held against.
#[derive(Debug, Clone, Default)]
pub struct BarSeries {
    pub name: String,
    pub values: Vec<Option<f64>>,
    pub peak: Option<f64>,
    /// Per group, the value's 95 % interval (low, high; high may be
    /// infinite), drawn as an error bar; empty, or as long as `values`.
    pub intervals: Vec<Option<(f64, f64)>>,
    /// Per group, whether the value was measured throttled (drawn pale,
    /// outlined); empty, or as long as `values`.
    pub throttled: Vec<bool>,
}

pub struct GroupedBars {
    pub name: String,
    pub title: String,
    pub x_label: String,
    /// One panel per run (its caption, its groups, its series); a series
    /// name keeps its colour across panels.
    pub panels: Vec<BarPanel>,
    /// What a peak tick is (`dense peak of the dtype (spec)`).
    pub peak_label: String,
}

/// One panel: the groups (shapes) top-down and a value per series.
#[derive(Debug, Clone)]
pub struct BarPanel {
    pub caption: String,
    pub groups: Vec<String>,
    pub series: Vec<BarSeries>,
}

/// The legend's words for error bars and throttled bars.
const ERROR_BARS: &str = "error bar: 95 % interval of the rate";
const THROTTLED: &str = "pale, outlined: measured throttled";

/// The width of the legend column, pixels.
const LEGEND: u32 = 190;
/// Pixels per bar, and per group (its gap and label).
const BAR_PX: u32 = 13;
const GAP_PX: u32 = 14;
/// Pixels a panel takes besides its bars: caption and x axis.
const PANEL_EXTRA: u32 = 95;

impl GroupedBars {
    /// Every series name, in first-seen order: the colours.
    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = Vec::new();
        for s in self.panels.iter().flat_map(|p| &p.series) {
            if !names.contains(&s.name.as_str()) {
                names.push(&s.name);
            }
        }
        names
    }

    fn panel_height(p: &BarPanel) -> u32 {
        let g = p.groups.len().max(1) as u32;
        g * (p.series.len().max(1) as u32 * BAR_PX + GAP_PX) + PANEL_EXTRA
    }

    fn xmax(&self) -> f64 {
        let series = || self.panels.iter().flat_map(|p| &p.series);
        let values = series().flat_map(|s| s.values.iter().flatten().copied().chain(s.peak));
        let most = values.fold(0.0, f64::max).max(1e-9);
        // An interval's end widens the axis by at most a third: a wide one
        // is clipped (and uncapped) rather than squash every bar.
        let ends = series().flat_map(|s| s.intervals.iter().flatten().map(|i| i.1)).filter(|h| h.is_finite());
        ends.fold(most, |m, h| m.max(h.min(most * 4.0 / 3.0))) * 1.08
    }

    /// Whether any series has a peak tick (the legend names it).
    fn has_peaks(&self) -> bool {
        self.panels.iter().flat_map(|p| &p.series).any(|s| s.peak.is_some())
    }

    /// The legend's notes under the series: the peak tick, error bars and
    /// throttled bars, where the chart has them.
    fn notes(&self) -> Vec<&str> {
        let all = || self.panels.iter().flat_map(|p| &p.series);
        let mut notes = Vec::new();
        if self.has_peaks() {
            notes.push(self.peak_label.as_str());
        }
        if all().any(|s| s.intervals.iter().any(Option::is_some)) {
            notes.push(ERROR_BARS);
        }
        if all().any(|s| s.throttled.iter().any(|t| *t)) {
            notes.push(THROTTLED);
        }
        notes
    }

    /// The legend's height below a narrow chart's panels.
    fn legend_h(&self, width: u32) -> u32 {
        super::legend_height(self.names().into_iter().chain(self.notes()), legend_chars(width), 16)
    }

    /// The longest group label a panel prints at `width`: its label
    /// column takes at most 40 % of a narrow chart (7 px a character).
    fn label_chars(width: u32) -> usize {
        if is_narrow(width) {
            (width as usize * 40 / 100 - 16) / 7
        } else {
            (300 - 16) / 7
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let width = root.dim_in_pixel().0;
        let body = super::title_strip(&root, &self.title, 20).map_err(|x| e(&x))?;
        let (mut rest, legend) = super::plot_and_legend(&body, LEGEND, self.legend_h(width));
        let names = self.names();
        let xmax = self.xmax();
        let most = Self::label_chars(width);
        let longest =
            self.panels.iter().flat_map(|p| &p.groups).map(|l| l.chars().count().min(most)).max().unwrap_or(4) as u32;
        for panel in &self.panels {
            let (area, below) = rest.split_vertically(Self::panel_height(panel));
            rest = below;
            self.draw_panel(&area, panel, &names, xmax, longest).map_err(|x| e(&x))?;
        }
        // The legend: each series' colour and name, then the peak tick.
        let text = (FONT, 12).into_font();
        let chars = legend_chars(width);
        let mut y = if is_narrow(width) { 16 } else { 30 };
        for (j, name) in names.iter().enumerate() {
            let colour = COLORS[j % COLORS.len()];
            legend.draw(&Rectangle::new([(6, y - 5), (26, y + 5)], colour.filled())).map_err(|x| e(&x))?;
            for part in super::wrap_at(name, chars) {
                legend.draw(&Text::new(part, (34, y - 7), text.clone())).map_err(|x| e(&x))?;
                y += 15;
            }
            y += 5;
        }
        for note in self.notes() {
            let glyph: Vec<PathElement<(i32, i32)>> = match note {
                ERROR_BARS => vec![
                    PathElement::new(vec![(6, y), (26, y)], BLACK.stroke_width(1)),
                    PathElement::new(vec![(6, y - 4), (6, y + 4)], BLACK.stroke_width(1)),
                    PathElement::new(vec![(26, y - 4), (26, y + 4)], BLACK.stroke_width(1)),
                ],
                THROTTLED => vec![PathElement::new(
                    vec![(6, y - 5), (26, y - 5), (26, y + 5), (6, y + 5), (6, y - 5)],
                    BLACK.stroke_width(1),
                )],
                // The peak tick: a short dashed vertical.
                _ => (y - 8..y + 8)
                    .step_by(6)
                    .map(|y0| PathElement::new(vec![(16, y0), (16, y0 + 3)], BLACK.stroke_width(2)))
                    .collect(),
            };
            for g in glyph {
                legend.draw(&g).map_err(|x| e(&x))?;
            }
            for part in super::wrap_at(note, chars) {
                legend.draw(&Text::new(part, (34, y - 7), text.clone())).map_err(|x| e(&x))?;
                y += 15;
            }
            y += 5;
        }
        root.present().map_err(|x| e(&x))
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &BarPanel,
        names: &[&str],
        xmax: f64,
        longest: u32,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let g = panel.groups.len().max(1);
        let k = panel.series.len().max(1);
        // One unit per bar plus one for the gap after each group; group i
        // (from the top) is centred at `centre(i)`.
        let per = k as f64 + 1.0;
        let centre = |i: usize| (g - 1 - i) as f64 * per + 0.5 + k as f64 / 2.0;
        let centres: Vec<f64> = (0..g).map(centre).collect();
        let width = area.dim_in_pixel().0;
        let most = Self::label_chars(width);
        let mut chart = ChartBuilder::on(area)
            .caption(super::shorten(&panel.caption, (width as usize).saturating_sub(24) / 8), (FONT, 15))
            .margin(10)
            .x_label_area_size(40)
            .y_label_area_size(longest * 7 + 16)
            .build_cartesian_2d(0f64..xmax, 0f64..(g as f64 * per))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_desc(self.x_label.as_str())
            .x_labels(if is_narrow(width) { 4 } else { 10 })
            .x_label_formatter(&|v| format_sig3(*v))
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 14))
            .draw()?;
        // Each group's label, right-aligned left of the axis at its centre.
        let style = (FONT, 12).into_font().into_text_style(area).pos(Pos::new(HPos::Right, VPos::Center));
        chart.draw_series(panel.groups.iter().zip(&centres).map(|(label, c)| {
            EmptyElement::at((0.0, *c)) + Text::new(super::shorten(label, most), (-8, 0), style.clone())
        }))?;
        for (j, s) in panel.series.iter().enumerate() {
            let c = names.iter().position(|n| *n == s.name).unwrap_or(j);
            let colour = COLORS[c % COLORS.len()];
            for (i, v) in s.values.iter().enumerate() {
                // Group i from the top; bar j from the top within it.
                let y0 = (g - 1 - i) as f64 * per + (k - 1 - j) as f64 + 0.5;
                let Some(v) = v else { continue };
                if s.throttled.get(i).copied().unwrap_or(false) {
                    let pale = Rectangle::new([(0.0, y0 + 0.1), (*v, y0 + 0.9)], colour.mix(0.35).filled());
                    chart.draw_series([
                        pale,
                        Rectangle::new([(0.0, y0 + 0.1), (*v, y0 + 0.9)], BLACK.stroke_width(1)),
                    ])?;
                } else {
                    chart.draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y0 + 0.1), (*v, y0 + 0.9)],
                        colour.filled(),
                    )))?;
                }
                if let Some((lo, hi)) = s.intervals.get(i).copied().flatten() {
                    // Clipped at the axis's end; an open end has no cap.
                    let (c, hi_c) = (y0 + 0.5, hi.min(xmax));
                    let style = BLACK.stroke_width(1);
                    chart.draw_series([PathElement::new(vec![(lo, c), (hi_c, c)], style)])?;
                    let caps = [lo].into_iter().chain((hi <= xmax).then_some(hi));
                    chart.draw_series(caps.map(|x| PathElement::new(vec![(x, y0 + 0.3), (x, y0 + 0.7)], style)))?;
                }
                if let Some(p) = s.peak {
                    let dash = (0..4).step_by(2).map(move |d| {
                        let a = y0 + d as f64 * 0.25;
                        PathElement::new(vec![(p, a), (p, a + 0.25)], BLACK.stroke_width(2))
                    });
                    chart.draw_series(dash)?;
                }
            }
        }
        Ok(())
    }
}

impl Chart for GroupedBars {
    fn name(&self) -> &str {
        &self.name
    }
    fn size_at(&self, width: u32) -> (u32, u32) {
        let h: u32 = self.panels.iter().map(Self::panel_height).sum();
        let legend = if is_narrow(width) { self.legend_h(width) } else { 0 };
        (width, super::title_height(&self.title, width, 20) + h.max(300) + legend)
    }
    fn draw_svg(&self, root: DrawingArea<SVGBackend, Shift>) -> Result<()> {
        self.draw(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bar_its_group_label_and_the_legend_reach_the_svg() {
        let chart = GroupedBars {
            name: "g".into(),
            title: "GEMM".into(),
            x_label: "TFLOP/s".into(),
            panels: vec![BarPanel {
                caption: "run-a".into(),
                groups: vec!["4096×4096×4096".into(), "8192×8192×8192".into()],
                series: vec![
                    BarSeries {
                        name: "bf16".into(),
                        values: vec![Some(650.0), Some(760.0)],
                        peak: Some(989.4),
                        ..Default::default()
                    },
                    BarSeries {
                        name: "fp8".into(),
                        values: vec![None, Some(1290.0)],
                        peak: Some(1978.9),
                        ..Default::default()
                    },
                ],
            }],
            peak_label: "dense peak of the dtype".into(),
        };
        let svg = crate::plot::to_svg(&chart).unwrap();
        for text in ["run-a", "4096×4096×4096", "8192×8192×8192", "bf16", "fp8", "dense peak"] {
            assert!(svg.contains(text), "{text} missing");
        }
        // Three bars (fp8 at 4096³ was not measured), two legend swatches
        // and the background.
        assert_eq!(svg.matches("<rect").count(), 6, "{svg}");
        assert!(!svg.contains(ERROR_BARS) && !svg.contains(THROTTLED), "no notes for what is not drawn");
        // With an interval and a throttled bar, the legend says what each is.
        let mut marked = chart;
        marked.panels[0].series[0].intervals = vec![Some((600.0, 700.0)), None];
        marked.panels[0].series[0].throttled = vec![false, true];
        let svg = crate::plot::to_svg(&marked).unwrap();
        assert!(svg.contains("95 % interval") && svg.contains("pale, outlined"), "{svg}");
        // The narrow rendering holds every label too, legend below.
        let narrow = crate::plot::to_svg_at(&marked, crate::plot::NARROW_WIDTH).unwrap();
        for text in ["run-a", "bf16", "fp8", "dense peak", "pale, outlined: measured throttled"] {
            assert!(narrow.contains(text), "{text} missing at narrow width");
        }
    }
}
