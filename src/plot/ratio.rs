//! The ratio chart of a comparison: how many times better NEW is than
//! BASE at each point, with its 95 % interval as a shaded band (sized
//! points, log size axis) or as a bar (other points, one row each, a
//! forest plot), the line of no change and the ±threshold lines a verdict
//! has to clear.

use std::collections::BTreeMap;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    is_narrow, legend_chars, legend_top, plot_err, pow2_ticks, COLORS, FONT, NARROW_PLOT, PANEL_HEIGHT, SIZE,
    TITLE_ROOM,
};
use crate::analysis::compare::{CurveGroup, PointComparison, RunComparison};
use crate::error::Result;
use crate::vocab::interval::Interval;
use crate::vocab::units::format_bytes;

const LEGEND_WIDTH: u32 = 250;
/// The most rows a forest plot draws; the caption says when more exist.
pub const MAX_ROWS: usize = 20;

/// One curve's ratios: (x, ratio, 95 % interval). x is a size in bytes on
/// a size chart, ignored on a forest chart.
#[derive(Debug, Clone)]
pub struct RatioSeries {
    pub label: String,
    pub points: Vec<(f64, f64, Option<Interval>)>,
}

/// The ratio chart's content.
pub struct RatioChart {
    pub name: String,
    pub title: String,
    pub y_label: String,
    pub threshold: f64,
    /// Sized points: one band per series against the size.
    pub series: Vec<RatioSeries>,
    /// Points without a size: one row each, (label, ratio, interval).
    pub rows: Vec<(String, f64, Option<Interval>)>,
}

impl RatioChart {
    /// The ratio chart of a comparison: one line per curve against size
    /// with its interval, or one row per point without a size.
    pub fn of_comparison(name: &str, title: &str, c: &RunComparison) -> RatioChart {
        let mut by_curve: BTreeMap<CurveGroup, Vec<&PointComparison>> = BTreeMap::new();
        let mut rows = Vec::new();
        for p in &c.points {
            match p.size_bytes {
                Some(_) => by_curve.entry(p.group()).or_default().push(p),
                None => rows.push((p.label.clone(), p.ratio, p.ci_low.zip(p.ci_high))),
            }
        }
        let series = by_curve
            .into_iter()
            .map(|((curve, _), ps)| RatioSeries {
                label: curve.to_string(),
                points: ps
                    .iter()
                    .map(|p| (p.size_bytes.unwrap_or(0) as f64, p.ratio, p.ci_low.zip(p.ci_high)))
                    .collect(),
            })
            .collect();
        RatioChart {
            name: name.into(),
            title: title.into(),
            y_label: "ratio (above 1: better than the baseline)".into(),
            threshold: c.threshold,
            series,
            // A chart shows sized points or the rest, not both on one axis.
            rows: if c.points.iter().any(|p| p.size_bytes.is_some()) { Vec::new() } else { rows },
        }
    }

    /// The legend's note: what the bands and dashes are.
    fn note(&self) -> String {
        format!("bands: 95 % CI; dashes: the ±{:.1} % threshold", self.threshold * 100.0)
    }

    /// The panels of sized series: one while they fit
    /// ([`super::bandwidth::MAX_CURVES`]), else as few as hold them, of
    /// even sizes, so that no colour is used twice in a panel.
    fn panels(&self) -> Vec<&[RatioSeries]> {
        let most = super::bandwidth::MAX_CURVES;
        let k = self.series.len().div_ceil(most).max(1);
        self.series.chunks(self.series.len().div_ceil(k).max(1)).collect()
    }

    /// The height of a legend of `series` and its note, below a narrow plot.
    fn legend_h(series: &[RatioSeries], width: u32) -> u32 {
        let labels = series.iter().map(|s| s.label.as_str());
        super::legend_height(labels, legend_chars(width), legend_top(width) as u32) + 16
    }

    /// The height of a panel of `series` at `width`: a narrow one is its
    /// plot and, below it, its legend and note.
    fn panel_height(&self, series: &[RatioSeries], width: u32, panels: usize) -> u32 {
        if is_narrow(width) {
            NARROW_PLOT + Self::legend_h(series, width)
        } else if panels <= 1 {
            SIZE.1 - TITLE_ROOM
        } else {
            PANEL_HEIGHT
        }
    }

    fn height_at(&self, width: u32) -> u32 {
        let panels = self.panels();
        let body = if self.series.is_empty() {
            SIZE.1 - TITLE_ROOM
        } else {
            panels.iter().map(|p| self.panel_height(p, width, panels.len())).sum()
        };
        super::title_height(&self.title, width, 18) + body
    }

    fn range(&self) -> (f64, f64) {
        let all = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| (p.1, p.2)))
            .chain(self.rows.iter().map(|r| (r.1, r.2)));
        let (mut lo, mut hi) = (1.0 - 2.0 * self.threshold, 1.0 + 2.0 * self.threshold);
        for (r, ci) in all {
            let (a, b) = ci.unwrap_or((r, r));
            if a.is_finite() && b.is_finite() {
                lo = lo.min(a);
                hi = hi.max(b);
            }
        }
        let pad = (hi - lo) * 0.08;
        ((lo - pad).max(0.0), hi + pad)
    }

    /// One panel of sized series: ratio against size, the line of no
    /// change, the threshold dashes, each series' band, and the legend.
    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        series: &[RatioSeries],
        caption: Option<String>,
        (xlo, xhi): (f64, f64),
        (ylo, yhi): (f64, f64),
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let grey = RGBColor(110, 110, 110);
        let width = area.dim_in_pixel().0;
        let (plot_area, legend_area) = super::plot_and_legend(area, LEGEND_WIDTH, Self::legend_h(series, width));
        let ticks = pow2_ticks(xlo, xhi, if is_narrow(width) { 5 } else { 9 });
        let mut builder = ChartBuilder::on(&plot_area);
        if let Some(c) = &caption {
            builder.caption(c, (FONT, 15));
        }
        let mut chart = builder
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d((xlo..xhi).log_scale().with_key_points(ticks), ylo..yhi)?;
        chart
            .configure_mesh()
            .x_desc("size (bytes, log scale)")
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| format_bytes(*v as u64))
            .y_label_formatter(&|v| format!("{v:.2}"))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        let hline = |y: f64, style: ShapeStyle| PathElement::new(vec![(xlo, y), (xhi, y)], style);
        chart.draw_series([hline(1.0, grey.stroke_width(1))])?;
        for t in [1.0 - self.threshold, 1.0 + self.threshold] {
            chart.draw_series(super::log_x_dashes(xlo, xhi, t, grey.stroke_width(1)))?;
        }
        for (i, s) in series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let band: Vec<(f64, f64, f64)> =
                s.points.iter().filter_map(|p| p.2.map(|(lo, hi)| (p.0, lo, hi))).collect();
            if band.len() > 1 {
                let poly: Vec<(f64, f64)> =
                    band.iter().map(|b| (b.0, b.2)).chain(band.iter().rev().map(|b| (b.0, b.1))).collect();
                chart.draw_series([Polygon::new(poly, color.mix(0.2).filled())])?;
            } else {
                chart.draw_series(
                    band.iter().map(|b| PathElement::new(vec![(b.0, b.1), (b.0, b.2)], color.stroke_width(2))),
                )?;
            }
            let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
            chart.draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2)))?;
            chart.draw_series(line.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
        }
        let entries: Vec<(String, RGBColor)> =
            series.iter().enumerate().map(|(i, s)| (s.label.clone(), COLORS[i % COLORS.len()])).collect();
        let y = super::draw_legend(&legend_area, &entries, legend_top(width), legend_chars(width))?;
        legend_area.draw(&Text::new(self.note(), (6, y + 4), (FONT, 11).into_font()))?;
        Ok(())
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (ylo, yhi) = self.range();
        let grey = RGBColor(110, 110, 110);
        let width = root.dim_in_pixel().0;
        let body = super::title_strip(&root, &self.title, 18).map_err(|x| e(&x))?;
        if !self.series.is_empty() {
            let xs = self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| *x > 0.0);
            let (xmin, xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
            let panels = self.panels();
            let mut rest = body;
            for (k, series) in panels.iter().enumerate() {
                let (area, below) = rest.split_vertically(self.panel_height(series, width, panels.len()));
                rest = below;
                let caption = (panels.len() > 1).then(|| format!("{} of {}", k + 1, panels.len()));
                self.draw_panel(&area, series, caption, (xmin / 1.5, xmax * 1.5), (ylo, yhi)).map_err(|x| e(&x))?;
            }
            return root.present().map_err(|x| e(&x));
        }
        if self.rows.is_empty() {
            body.draw(&Text::new("no compared points", (20, 20), (FONT, 18).into_font())).map_err(|x| e(&x))?;
            return root.present().map_err(|x| e(&x));
        }
        // Forest plot: one row per point, labels on the left.
        let rows = &self.rows[..self.rows.len().min(MAX_ROWS)];
        let n = rows.len();
        // The label column: 250 px wide, or 150 on a phone.
        let (column, most) = if is_narrow(width) { (150, 20) } else { (250, 34) };
        let label = |i: usize| super::shorten(&rows[i].0, most);
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(column)
            .build_cartesian_2d(ylo..yhi, -0.5..(n as f64 - 0.5))
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc(self.y_label.as_str())
            .y_labels(n)
            .y_label_formatter(&|v| {
                let i = v.round();
                if (v - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                    label(n - 1 - i as usize)
                } else {
                    String::new()
                }
            })
            .x_labels(if is_narrow(width) { 5 } else { 10 })
            .x_label_formatter(&|v| format!("{v:.2}"))
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|x| e(&x))?;
        let vline = |x: f64| PathElement::new(vec![(x, -0.5), (x, n as f64 - 0.5)], grey.stroke_width(1));
        chart.draw_series([vline(1.0), vline(1.0 - self.threshold), vline(1.0 + self.threshold)]).map_err(|x| e(&x))?;
        let color = COLORS[0];
        for (i, (_, r, ci)) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            if let Some((lo, hi)) = ci {
                chart
                    .draw_series([PathElement::new(vec![(*lo, y), (*hi, y)], color.stroke_width(2))])
                    .map_err(|x| e(&x))?;
            }
            chart.draw_series([Circle::new((*r, y), 4, color.filled())]).map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))
    }
}

super::impl_chart!(RatioChart);
