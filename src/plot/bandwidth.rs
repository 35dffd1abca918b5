//! Log-log rate-vs-size chart with an optional dashed roofline, the chart
//! of the seed memcpy write-ups.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{plot_err, pow10_ticks, pow2_ticks, COLORS, FONT, SIZE};

/// Link lines: dark, and apart from the data colours.
const LINK_COLORS: [RGBColor; 3] = [RGBColor(60, 60, 60), RGBColor(170, 0, 120), RGBColor(0, 120, 120)];

/// Width of the legend column, pixels.
const LEGEND_WIDTH: u32 = 250;
use crate::error::Result;
use crate::vocab::units::{format_bytes, format_sig3};

/// One series: (size in bytes, rate) points, each with its 95 % interval
/// when known (drawn as an error bar).
#[derive(Debug, Clone, Default)]
pub struct Line {
    pub label: String,
    pub points: Vec<(f64, f64)>,
    /// Per point, (low, high) in the rate's unit; empty, or as long as `points`.
    pub errors: Vec<Option<(f64, f64)>>,
}

impl Line {
    /// A line of (x, y, interval) points.
    pub fn with_errors(label: String, points: impl IntoIterator<Item = (f64, f64, Option<(f64, f64)>)>) -> Line {
        let (points, errors) = points.into_iter().map(|(x, y, e)| ((x, y), e)).unzip();
        Line { label, points, errors }
    }

    /// (x, y, interval) per point.
    fn triples(&self) -> impl Iterator<Item = (f64, f64, Option<(f64, f64)>)> + '_ {
        self.points.iter().enumerate().map(|(i, &(x, y))| (x, y, self.errors.get(i).copied().flatten()))
    }
}

/// The bandwidth chart's content.
pub struct BandwidthChart {
    pub name: String,
    pub title: String,
    pub y_label: String,
    pub lines: Vec<Line>,
    pub roofline: Option<(String, f64)>,
    /// Link or port figures (label, value in the y unit), drawn dashed
    /// with a pattern of their own: a peer copy against its link.
    pub links: Vec<(String, f64)>,
}

/// Build a bandwidth chart; points with non-positive values are dropped
/// (a log axis cannot show them).
pub fn bandwidth_chart(
    name: &str,
    title: &str,
    y_label: &str,
    lines: Vec<Line>,
    roofline: Option<(String, f64)>,
) -> BandwidthChart {
    let lines = lines
        .into_iter()
        .map(|l| {
            let kept: Vec<_> = l
                .triples()
                .filter(|(x, y, _)| *x > 0.0 && *y > 0.0 && y.is_finite())
                .map(|(x, y, e)| (x, y, e.filter(|(lo, hi)| *lo > 0.0 && hi.is_finite())))
                .collect();
            Line::with_errors(l.label, kept)
        })
        .filter(|l| !l.points.is_empty())
        .collect();
    BandwidthChart {
        name: name.into(),
        title: title.into(),
        y_label: y_label.into(),
        lines,
        roofline: roofline.filter(|(_, v)| *v > 0.0),
        links: Vec::new(),
    }
}

/// Marker shapes, so that curves which overlap stay apart where colours
/// alone would not (and in greyscale print).
const MARKERS: usize = 4;

impl BandwidthChart {
    /// Add link lines (label, value in the chart's y unit).
    pub fn with_links(mut self, links: Vec<(String, f64)>) -> Self {
        self.links.extend(links.into_iter().filter(|(_, v)| *v > 0.0 && v.is_finite()));
        self
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let xs = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0));
        let (xmin, xmax) = xs.fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        let medians: Vec<f64> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .chain(self.roofline.iter().chain(&self.links).map(|(_, r)| *r))
            .collect();
        let bars: Vec<(f64, f64)> = self.lines.iter().flat_map(|l| l.triples().filter_map(|(_, _, e)| e)).collect();
        let (ymin, ymax) = y_span(&medians, &bars);
        if xmin > xmax {
            // No data: an empty frame that says so.
            root.draw(&Text::new("no measured points", (20, 20), (FONT, 18).into_font())).map_err(|x| e(&x))?;
            return root.present().map_err(|x| e(&x));
        }
        let (xlo, xhi) = (xmin / 1.5, xmax * 1.5);
        // Fitted to the data (and lines), with a margin for the markers.
        let (ylo, yhi) = if ymax / ymin < 1.5 { (ymin / 1.5, ymax * 1.5) } else { (ymin / 1.2, ymax * 1.25) };
        // Few sizes: tick exactly those; many: every other octave.
        let mut sizes: Vec<f64> = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        let xticks = if sizes.len() <= 10 {
            // Skip a tick too close to the previous one to leave room for its label.
            let mut kept: Vec<f64> = Vec::new();
            for s in sizes {
                if kept.last().is_none_or(|k| s >= 2.5 * k) {
                    kept.push(s);
                }
            }
            kept
        } else {
            pow2_ticks(xlo, xhi, 9)
        };
        // The legend gets its own column, so it never covers data.
        let (plot_area, legend_area) = root.split_horizontally(SIZE.0 - LEGEND_WIDTH);
        let mut chart = ChartBuilder::on(&plot_area)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(70)
            .build_cartesian_2d(
                (xlo..xhi).log_scale().with_key_points(xticks),
                (ylo..yhi).log_scale().with_key_points(pow10_ticks(ylo, yhi)),
            )
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .x_desc("size (bytes, log scale)")
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| format_bytes(*v as u64))
            .y_label_formatter(&|v| format_sig3(*v))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE.mix(0.0))
            .draw()
            .map_err(|x| e(&x))?;
        for (i, line) in self.lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            chart
                .draw_series(LineSeries::new(line.points.iter().copied(), color.stroke_width(2)))
                .map_err(|x| e(&x))?;
            let bars = line.triples().filter_map(|(x, y, e)| e.map(|(lo, hi)| (x, y, lo, hi)));
            // An error bar: the interval as a thin vertical line with caps.
            let style = color.stroke_width(1);
            for (x, _, lo, hi) in bars {
                // A bar that runs past the axis is clipped at it and ends in
                // an open arrow instead of a cap: it goes on.
                let (clo, chi) = (lo.max(ylo), hi.min(yhi));
                chart
                    .draw_series(std::iter::once(PathElement::new(vec![(x, clo), (x, chi)], style)))
                    .map_err(|x| e(&x))?;
                let cap = |y: f64| EmptyElement::at((x, y)) + PathElement::new(vec![(-4, 0), (4, 0)], style);
                let arrow = |y: f64, dir: i32| {
                    EmptyElement::at((x, y)) + PathElement::new(vec![(-4, 6 * dir), (0, 0), (4, 6 * dir)], style)
                };
                let low = if clo > lo { arrow(clo, -1) } else { cap(lo) };
                let high = if chi < hi { arrow(chi, 1) } else { cap(hi) };
                chart.draw_series([low, high]).map_err(|x| e(&x))?;
            }
            let pts = line.points.iter().copied();
            match i % MARKERS {
                0 => chart.draw_series(pts.map(|p| Circle::new(p, 3, color.filled()))),
                1 => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 5, color.filled()))),
                2 => chart
                    .draw_series(pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], color.filled()))),
                _ => chart.draw_series(pts.map(|p| Cross::new(p, 4, color.stroke_width(2)))),
            }
            .map_err(|x| e(&x))?;
        }
        if let Some((_, r)) = &self.roofline {
            let style = BLACK.stroke_width(1);
            chart.draw_series(super::log_x_dashes(xlo, xhi, *r, style)).map_err(|x| e(&x))?;
        }
        for (i, (_, r)) in self.links.iter().enumerate() {
            let style = LINK_COLORS[i % LINK_COLORS.len()].stroke_width(2);
            chart.draw_series(super::log_x_dashes(xlo, xhi, *r, style)).map_err(|x| e(&x))?;
        }
        // Legend: one entry per line, then the roofline.
        let entries: Vec<(String, RGBColor)> =
            self.lines.iter().enumerate().map(|(i, l)| (l.label.clone(), COLORS[i % COLORS.len()])).collect();
        let mut y = super::draw_legend(&legend_area, &entries).map_err(|x| e(&x))?;
        let text = (FONT, 12).into_font();
        let dashed = self
            .roofline
            .iter()
            .map(|(l, _)| (l, BLACK))
            .chain(self.links.iter().enumerate().map(|(i, (l, _))| (l, LINK_COLORS[i % LINK_COLORS.len()])));
        for (label, color) in dashed {
            for x0 in (6..30).step_by(8) {
                legend_area
                    .draw(&PathElement::new(vec![(x0, y), (x0 + 4, y)], color.stroke_width(2)))
                    .map_err(|x| e(&x))?;
            }
            for part in super::wrap_label(label) {
                legend_area.draw(&Text::new(part, (36, y - 7), text.clone())).map_err(|x| e(&x))?;
                y += 15;
            }
            y += 5;
        }
        root.present().map_err(|x| e(&x))
    }
}

super::impl_chart!(BandwidthChart);

/// The y span a chart needs: every median and line, and error bars at most
/// a factor of 2 past the lowest and highest of those (log axes): one wide
/// interval must not squash the data into a corner; bars beyond are clipped.
fn y_span(medians: &[f64], bars: &[(f64, f64)]) -> (f64, f64) {
    let (lo, hi) = medians
        .iter()
        .filter(|v| v.is_finite() && **v > 0.0)
        .fold((f64::MAX, f64::MIN), |(a, b), y| (a.min(*y), b.max(*y)));
    if lo > hi {
        return (lo, hi);
    }
    let (mut ylo, mut yhi) = (lo, hi);
    for &(blo, bhi) in bars {
        ylo = ylo.min(blo.max(lo / 2.0));
        yhi = yhi.max(bhi.min(hi * 2.0));
    }
    (ylo, yhi)
}

#[cfg(test)]
mod y_span_tests {
    use super::y_span;

    #[test]
    fn one_wide_bar_does_not_stretch_the_axis() {
        // Data 10-100 GB/s; one interval runs to 10^4: the axis stops at 2x.
        assert_eq!(y_span(&[10.0, 50.0, 100.0], &[(40.0, 10_000.0)]), (10.0, 200.0));
        // Bars within reach count in full.
        assert_eq!(y_span(&[10.0, 100.0], &[(8.0, 120.0)]), (8.0, 120.0));
        assert_eq!(y_span(&[10.0, 100.0], &[(0.001, 100.0)]), (5.0, 100.0));
    }
}
