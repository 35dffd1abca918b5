//! Log-log rate-vs-size chart with an optional dashed roofline, the chart
//! of the seed memcpy write-ups.
//!
//! The file is longer than 400 lines because panels, error bars, links,
//! size marks and the legend that names them all are drawn here.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{
    is_narrow, legend_chars, plot_err, pow10_ticks, pow2_ticks, Chart, Palette, COLORS, FONT, NARROW_PLOT,
    PANEL_HEIGHT, SIZE, TITLE_ROOM,
};

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
    /// The system (run and device) the curve belongs to: its colour, in
    /// every chart of a report, when a chart holds several systems.
    pub system: Option<String>,
    /// The operation: its marker, and its panel when a chart has more
    /// curves than one panel holds.
    pub op: Option<String>,
}

impl Line {
    /// A line of (x, y, interval) points.
    pub fn with_errors(label: String, points: impl IntoIterator<Item = (f64, f64, Option<(f64, f64)>)>) -> Line {
        let (points, errors) = points.into_iter().map(|(x, y, e)| ((x, y), e)).unzip();
        Line { label, points, errors, system: None, op: None }
    }

    /// The same line, of this system and operation.
    pub fn of(mut self, system: impl Into<String>, op: impl Into<String>) -> Line {
        self.system = Some(system.into());
        self.op = Some(op.into());
        self
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
    /// Sizes marked by a dotted vertical line (label, size in bytes): a
    /// cache capacity.
    pub marks: Vec<(String, f64)>,
    /// The report's palette (else one of this chart's own keys).
    pub palette: Option<Palette>,
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
            Line { system: l.system.clone(), op: l.op.clone(), ..Line::with_errors(l.label, kept) }
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
        marks: Vec::new(),
        palette: None,
    }
}

/// The colour of size marks (a dark grey).
const MARK_COLOR: RGBColor = RGBColor(90, 90, 90);

/// The most curves one panel holds; past that, small multiples.
pub const MAX_CURVES: usize = 8;

impl BandwidthChart {
    /// Add link lines (label, value in the chart's y unit).
    pub fn with_links(mut self, links: Vec<(String, f64)>) -> Self {
        self.links.extend(links.into_iter().filter(|(_, v)| *v > 0.0 && v.is_finite()));
        self
    }

    /// Add size marks (label, size in bytes), drawn dotted and vertical.
    pub fn with_marks(mut self, marks: Vec<(String, f64)>) -> Self {
        self.marks.extend(marks.into_iter().filter(|(_, v)| *v > 0.0 && v.is_finite()));
        self
    }

    /// (colour key, marker key) per line: the colour follows the system
    /// when the chart holds several, else the curve itself; the marker
    /// follows the operation.
    fn keys(&self) -> Vec<(String, String)> {
        let systems: std::collections::BTreeSet<&str> = self.lines.iter().filter_map(|l| l.system.as_deref()).collect();
        let by_system = systems.len() > 1 && self.lines.iter().all(|l| l.system.is_some());
        self.lines
            .iter()
            .map(|l| {
                let colour = if by_system { l.system.clone() } else { None };
                (colour.unwrap_or_else(|| l.label.clone()), l.op.clone().unwrap_or_else(|| l.label.clone()))
            })
            .collect()
    }

    /// The panels: lists of (line, colour, marker). One panel while the
    /// curves fit ([`MAX_CURVES`]); else small multiples, one operation
    /// per panel, operations sharing the first panel with room. A colour a
    /// panel would hold twice (one system's several operations) goes to
    /// the first one free in that panel.
    pub fn panels(&self) -> Vec<Vec<(usize, usize, usize)>> {
        let keys = self.keys();
        let own;
        let palette = match &self.palette {
            Some(p) => p,
            None => {
                own = Palette::of(&keys);
                &own
            }
        };
        let colour: Vec<usize> = keys.iter().map(|(c, _)| palette.colour(c)).collect();
        let panels = if self.lines.len() <= MAX_CURVES {
            vec![(0..self.lines.len()).collect()]
        } else {
            let mut groups: Vec<(&str, Vec<usize>)> = Vec::new();
            for (i, (_, m)) in keys.iter().enumerate() {
                match groups.iter_mut().find(|g| g.0 == m) {
                    Some(g) => g.1.push(i),
                    None => groups.push((m, vec![i])),
                }
            }
            let mut ps: Vec<Vec<usize>> = Vec::new();
            for (_, g) in groups {
                // First fit: a small group joins the first panel with room.
                for chunk in g.chunks(MAX_CURVES) {
                    match ps.iter_mut().find(|p| p.len() + chunk.len() <= MAX_CURVES) {
                        Some(p) => p.extend(chunk),
                        None => ps.push(chunk.to_vec()),
                    }
                }
            }
            ps
        };
        panels
            .into_iter()
            .map(|p| {
                // A taken colour moves to one no other curve of the panel
                // holds by right, so that every system keeps its own.
                let owned: Vec<usize> = p.iter().map(|i| colour[*i]).collect();
                let mut used: Vec<usize> = Vec::new();
                p.into_iter()
                    .map(|i| {
                        let mut c = colour[i];
                        if used.contains(&c) {
                            let free = |k: &usize| !used.contains(k);
                            c = (0..COLORS.len())
                                .find(|k| free(k) && !owned.contains(k))
                                .or_else(|| (0..COLORS.len()).find(free))
                                .unwrap_or(c);
                        }
                        used.push(c);
                        (i, c, palette.marker(&keys[i].1))
                    })
                    .collect()
            })
            .collect()
    }

    /// Every legend label of a panel: its curves, then the roofline,
    /// links and marks.
    fn legend_labels<'a>(&'a self, panel: &'a [(usize, usize, usize)]) -> impl Iterator<Item = &'a str> + 'a {
        let curves = panel.iter().map(|(i, _, _)| self.lines[*i].label.as_str());
        let dashed = self.roofline.iter().chain(&self.links).chain(&self.marks).map(|(l, _)| l.as_str());
        curves.chain(dashed)
    }

    /// The height of a panel's legend below a narrow plot (from y = 16).
    fn legend_h(&self, panel: &[(usize, usize, usize)], width: u32) -> u32 {
        super::legend_height(self.legend_labels(panel), legend_chars(width), 16)
    }

    /// The height of each panel at `width`: one fills the chart and
    /// several stack; a narrow panel is its plot and its legend below.
    fn panel_heights(&self, width: u32) -> Vec<u32> {
        let panels = self.panels();
        let n = panels.len();
        panels
            .iter()
            .map(|p| match () {
                _ if is_narrow(width) => NARROW_PLOT + self.legend_h(p, width),
                _ if n <= 1 => SIZE.1 - TITLE_ROOM,
                _ => PANEL_HEIGHT,
            })
            .collect()
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
        // Fitted to the data (and lines), with a margin for the markers;
        // every panel shares the axes, so that panels compare by eye.
        let (ylo, yhi) = if ymax / ymin < 1.5 { (ymin / 1.5, ymax * 1.5) } else { (ymin / 1.2, ymax * 1.25) };
        let body = super::title_strip(&root, &self.title, 20).map_err(|x| e(&x))?;
        let panels = self.panels();
        let n = panels.len();
        let heights = self.panel_heights(root.dim_in_pixel().0);
        let mut rest = body;
        for (k, panel) in panels.iter().enumerate() {
            let (area, below) = rest.split_vertically(heights[k]);
            rest = below;
            let caption = (n > 1).then(|| {
                let mut ops: Vec<String> = Vec::new();
                for (i, _, _) in panel {
                    let op = self.lines[*i].op.clone().unwrap_or_else(|| self.lines[*i].label.clone());
                    if !ops.contains(&op) {
                        ops.push(op);
                    }
                }
                format!("{} of {n}: {}", k + 1, ops.join(", "))
            });
            self.draw_panel(&area, panel, caption.as_deref(), (xlo, xhi), (ylo, yhi)).map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))
    }

    fn draw_panel<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        panel: &[(usize, usize, usize)],
        caption: Option<&str>,
        (xlo, xhi): (f64, f64),
        (ylo, yhi): (f64, f64),
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        let width = area.dim_in_pixel().0;
        let (most_ticks, apart) = if is_narrow(width) { (5, 6.0) } else { (9, 2.5) };
        // Few sizes: tick exactly those; many: every other octave.
        let mut sizes: Vec<f64> = self.lines.iter().flat_map(|l| l.points.iter().map(|p| p.0)).collect();
        sizes.sort_by(f64::total_cmp);
        sizes.dedup();
        let xticks = if sizes.len() <= 10 {
            // Skip a tick too close to the previous one to leave room for its label.
            let mut kept: Vec<f64> = Vec::new();
            for s in sizes {
                if kept.last().is_none_or(|k| s >= apart * k) {
                    kept.push(s);
                }
            }
            kept
        } else {
            pow2_ticks(xlo, xhi, most_ticks)
        };
        // The legend gets its own column (on a phone, its own band below),
        // so it never covers data.
        let chars = legend_chars(width);
        let (plot_area, legend_area) = super::plot_and_legend(area, LEGEND_WIDTH, self.legend_h(panel, width));
        let mut builder = ChartBuilder::on(&plot_area);
        if let Some(c) = caption {
            builder.caption(super::shorten(c, (width as usize).saturating_sub(24) / 8), (FONT, 15));
        }
        let mut chart = builder.margin(12).x_label_area_size(45).y_label_area_size(70).build_cartesian_2d(
            (xlo..xhi).log_scale().with_key_points(xticks),
            (ylo..yhi).log_scale().with_key_points(pow10_ticks(ylo, yhi)),
        )?;
        chart
            .configure_mesh()
            .x_desc("size (bytes, log scale)")
            .y_desc(self.y_label.as_str())
            .x_label_formatter(&|v| format_bytes(*v as u64))
            .y_label_formatter(&|v| format_sig3(*v))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for &(i, c, m) in panel {
            let line = &self.lines[i];
            let color = COLORS[c];
            chart.draw_series(LineSeries::new(line.points.iter().copied(), color.stroke_width(2)))?;
            let bars = line.triples().filter_map(|(x, y, e)| e.map(|(lo, hi)| (x, y, lo, hi)));
            // An error bar: the interval as a thin vertical line with caps.
            let style = color.stroke_width(1);
            for (x, _, lo, hi) in bars {
                // A bar that runs past the axis is clipped at it and ends in
                // an open arrow instead of a cap: it goes on.
                let (clo, chi) = (lo.max(ylo), hi.min(yhi));
                chart.draw_series(std::iter::once(PathElement::new(vec![(x, clo), (x, chi)], style)))?;
                let cap = |y: f64| EmptyElement::at((x, y)) + PathElement::new(vec![(-4, 0), (4, 0)], style);
                let arrow = |y: f64, dir: i32| {
                    EmptyElement::at((x, y)) + PathElement::new(vec![(-4, 6 * dir), (0, 0), (4, 6 * dir)], style)
                };
                let low = if clo > lo { arrow(clo, -1) } else { cap(lo) };
                let high = if chi < hi { arrow(chi, 1) } else { cap(hi) };
                chart.draw_series([low, high])?;
            }
            super::draw_markers(&mut chart, m, color, line.points.iter().copied())?;
        }
        if let Some((_, r)) = &self.roofline {
            let style = BLACK.stroke_width(1);
            chart.draw_series(super::log_x_dashes(xlo, xhi, *r, style))?;
        }
        for (i, (_, r)) in self.links.iter().enumerate() {
            let style = LINK_COLORS[i % LINK_COLORS.len()].stroke_width(2);
            chart.draw_series(super::log_x_dashes(xlo, xhi, *r, style))?;
        }
        // A mark inside the x range: dots from the bottom to the top.
        for (_, x) in self.marks.iter().filter(|(_, x)| *x > xlo && *x < xhi) {
            let style = MARK_COLOR.stroke_width(1);
            let steps = 80;
            chart.draw_series((0..steps).step_by(2).map(|s| {
                let y = |s: i32| ylo * (yhi / ylo).powf(s as f64 / steps as f64);
                PathElement::new(vec![(*x, y(s)), (*x, y(s + 1))], style)
            }))?;
        }
        // Legend: one entry per line (its colour and marker), then the
        // roofline and links.
        let text = (FONT, 12).into_font();
        let mut y = if is_narrow(width) { 16 } else { 40 };
        for &(i, c, m) in panel {
            legend_area.draw(&PathElement::new(vec![(6, y), (30, y)], COLORS[c].stroke_width(3)))?;
            super::draw_marker_at(&legend_area, m, COLORS[c], (18, y))?;
            for part in super::wrap_at(&self.lines[i].label, chars) {
                legend_area.draw(&Text::new(part, (36, y - 7), text.clone()))?;
                y += 15;
            }
            y += 5;
        }
        let dashed = self
            .roofline
            .iter()
            .map(|(l, _)| (l, BLACK))
            .chain(self.links.iter().enumerate().map(|(i, (l, _))| (l, LINK_COLORS[i % LINK_COLORS.len()])));
        for (label, color) in dashed {
            for x0 in (6..30).step_by(8) {
                legend_area.draw(&PathElement::new(vec![(x0, y), (x0 + 4, y)], color.stroke_width(2)))?;
            }
            for part in super::wrap_at(label, chars) {
                legend_area.draw(&Text::new(part, (36, y - 7), text.clone()))?;
                y += 15;
            }
            y += 5;
        }
        for (label, _) in &self.marks {
            for y0 in (y - 8..y + 8).step_by(4) {
                legend_area.draw(&PathElement::new(vec![(18, y0), (18, y0 + 2)], MARK_COLOR.stroke_width(1)))?;
            }
            for part in super::wrap_at(label, chars) {
                legend_area.draw(&Text::new(part, (36, y - 7), text.clone()))?;
                y += 15;
            }
            y += 5;
        }
        Ok(())
    }
}

impl Chart for BandwidthChart {
    fn name(&self) -> &str {
        &self.name
    }
    fn size_at(&self, width: u32) -> (u32, u32) {
        (width, super::title_height(&self.title, width, 20) + self.panel_heights(width).iter().sum::<u32>())
    }
    fn style_keys(&self) -> Vec<(String, String)> {
        self.keys()
    }
    fn set_palette(&mut self, palette: &Palette) {
        self.palette = Some(palette.clone());
    }
    fn draw_svg(&self, root: DrawingArea<SVGBackend, Shift>) -> Result<()> {
        self.draw(root)
    }
}

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
#[path = "bandwidth_tests.rs"]
mod tests;
