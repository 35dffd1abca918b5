//! The ratio chart of a comparison: how many times better NEW is than
//! BASE at each point, with its 95 % interval as a shaded band (sized
//! points, log size axis) or as a bar (other points, one row each, a
//! forest plot), the line of no change and the ±threshold lines a verdict
//! has to clear.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{plot_err, pow2_ticks, COLORS, FONT, SIZE};
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

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let (ylo, yhi) = self.range();
        let grey = RGBColor(110, 110, 110);
        if !self.series.is_empty() {
            let xs = self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).filter(|x| *x > 0.0);
            let (xmin, xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
            let (xlo, xhi) = (xmin / 1.5, xmax * 1.5);
            let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
            let mut chart = ChartBuilder::on(&plot_area)
                .caption(&self.title, (FONT, 18))
                .margin(12)
                .x_label_area_size(45)
                .y_label_area_size(70)
                .build_cartesian_2d((xlo..xhi).log_scale().with_key_points(pow2_ticks(xlo, xhi, 9)), ylo..yhi)
                .map_err(|x| e(&x))?;
            chart
                .configure_mesh()
                .x_desc("size (bytes, log scale)")
                .y_desc(self.y_label.as_str())
                .x_label_formatter(&|v| format_bytes(*v as u64))
                .y_label_formatter(&|v| format!("{v:.2}"))
                .label_style((FONT, 13))
                .axis_desc_style((FONT, 14))
                .light_line_style(WHITE.mix(0.0))
                .draw()
                .map_err(|x| e(&x))?;
            let hline = |y: f64, style: ShapeStyle| PathElement::new(vec![(xlo, y), (xhi, y)], style);
            chart.draw_series([hline(1.0, grey.stroke_width(1))]).map_err(|x| e(&x))?;
            for t in [1.0 - self.threshold, 1.0 + self.threshold] {
                chart.draw_series(super::log_x_dashes(xlo, xhi, t, grey.stroke_width(1))).map_err(|x| e(&x))?;
            }
            for (i, s) in self.series.iter().enumerate() {
                let color = COLORS[i % COLORS.len()];
                let band: Vec<(f64, f64, f64)> =
                    s.points.iter().filter_map(|p| p.2.map(|(lo, hi)| (p.0, lo, hi))).collect();
                if band.len() > 1 {
                    let poly: Vec<(f64, f64)> =
                        band.iter().map(|b| (b.0, b.2)).chain(band.iter().rev().map(|b| (b.0, b.1))).collect();
                    chart.draw_series([Polygon::new(poly, color.mix(0.2).filled())]).map_err(|x| e(&x))?;
                } else {
                    chart
                        .draw_series(
                            band.iter().map(|b| PathElement::new(vec![(b.0, b.1), (b.0, b.2)], color.stroke_width(2))),
                        )
                        .map_err(|x| e(&x))?;
                }
                let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
                chart.draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2))).map_err(|x| e(&x))?;
                chart.draw_series(line.iter().map(|p| Circle::new(*p, 3, color.filled()))).map_err(|x| e(&x))?;
            }
            let entries: Vec<(String, RGBColor)> =
                self.series.iter().enumerate().map(|(i, s)| (s.label.clone(), COLORS[i % COLORS.len()])).collect();
            let y = super::draw_legend(&legend_area, &entries).map_err(|x| e(&x))?;
            let note = format!("bands: 95 % CI; dashes: ±{:.3} threshold", self.threshold);
            legend_area.draw(&Text::new(note, (6, y + 4), (FONT, 11).into_font())).map_err(|x| e(&x))?;
            return root.present().map_err(|x| e(&x));
        }
        if self.rows.is_empty() {
            root.draw(&Text::new("no compared points", (20, 20), (FONT, 18).into_font())).map_err(|x| e(&x))?;
            return root.present().map_err(|x| e(&x));
        }
        // Forest plot: one row per point, labels on the left.
        let rows = &self.rows[..self.rows.len().min(MAX_ROWS)];
        let n = rows.len();
        let label = |i: usize| {
            let l = &rows[i].0;
            // Too long for the label column: keep both ends, where the
            // point's name and what tells it from its neighbours are.
            let n = l.chars().count();
            if n > 34 {
                let head: String = l.chars().take(16).collect();
                let tail: String = l.chars().skip(n - 17).collect();
                format!("{head}…{tail}")
            } else {
                l.clone()
            }
        };
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, (FONT, 18))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(250)
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
