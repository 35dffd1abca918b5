//! A named metric against one of its parameters (tokens/s against model
//! size, requests/s against the request rate, the loss against the step):
//! one line per run and combination of the other parameters, with the 95 %
//! interval of each median drawn as a bar where the samples support one.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{is_narrow, legend_chars, legend_top, plot_err, COLORS, FONT, NARROW_PLOT, SIZE, TITLE_ROOM};
use crate::analysis::workload::MetricSeries;

use crate::error::Result;
use crate::vocab::units::{format_axis, format_sig3};

const LEGEND_WIDTH: u32 = 250;
/// The most series a history chart draws (the rest are in its table).
pub const HISTORY_LINES: usize = 8;

/// The metric chart's content.
pub struct MetricChart {
    pub name: String,
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    pub series: Vec<MetricSeries>,
    /// What the bars are, under the legend (where any point has one).
    pub bars_note: String,
}

/// The bars of a single run's metric chart.
const CI_BARS: &str = "bars: 95 % CI of the median";

impl MetricChart {
    /// `metric` of `stats` against parameter `x`, one line per run (named
    /// by `run_label`) and combination of the other parameters.
    pub fn of(
        name: &str,
        title: &str,
        stats: &[crate::analysis::workload::MetricStat],
        metric: &str,
        x: &str,
        run_label: &dyn Fn(&str) -> String,
    ) -> MetricChart {
        let unit = stats.iter().find(|s| s.metric == metric).map(|s| s.unit.as_str()).unwrap_or("");
        MetricChart {
            name: name.into(),
            title: title.into(),
            x_label: x.into(),
            y_label: format!("{metric} ({unit})"),
            series: crate::analysis::workload::series(stats, metric, x, run_label),
            bars_note: CI_BARS.into(),
        }
    }

    /// `benchbook history`'s chart: each series' run medians in run order
    /// (x: the run's place, 1 first), with each median's 95 % interval; one
    /// line per node, and per point when there are several. At most
    /// [`HISTORY_LINES`] lines, the series with a change first.
    pub fn history(name: &str, title: &str, series: &[crate::analysis::history::HistorySeries]) -> MetricChart {
        let several = series.iter().any(|s| s.point != series[0].point);
        let mut chosen: Vec<&crate::analysis::history::HistorySeries> = series.iter().collect();
        chosen.sort_by_key(|s| s.changes.is_empty());
        chosen.truncate(HISTORY_LINES);
        let unit = series.first().map_or("", |s| s.unit.as_str());
        MetricChart {
            name: name.into(),
            title: title.into(),
            x_label: "run (oldest first)".into(),
            y_label: unit.into(),
            series: chosen
                .into_iter()
                .map(|s| MetricSeries {
                    // A history line is one node's point across runs.
                    key: crate::analysis::workload::MetricKey {
                        run_id: s.node.clone(),
                        file: None,
                        params: vec![("point".into(), s.point.clone())],
                    },
                    label: if several { format!("{} {}", s.node, s.point) } else { s.node.clone() },
                    points: s
                        .runs
                        .iter()
                        .enumerate()
                        .map(|(i, r)| {
                            ((i + 1) as f64, r.value, r.low.zip(r.high).filter(|(l, h)| l.is_finite() && h.is_finite()))
                        })
                        .collect(),
                })
                .collect(),
            bars_note: CI_BARS.into(),
        }
    }

    /// Whether a note under the legend says what the bars are.
    fn has_bars(&self) -> bool {
        self.series.iter().any(|s| s.points.iter().any(|p| p.2.is_some()))
    }

    /// The legend's height below a narrow plot.
    fn legend_h(&self, width: u32) -> u32 {
        let labels = self.series.iter().map(|s| s.label.as_str());
        super::legend_height(labels, legend_chars(width), legend_top(width) as u32)
            + if self.has_bars() { 16 } else { 0 }
    }

    fn height_at(&self, width: u32) -> u32 {
        let body = if is_narrow(width) { NARROW_PLOT + self.legend_h(width) } else { SIZE.1 - TITLE_ROOM };
        super::title_height(&self.title, width, 20) + body
    }

    /// The ticks of a log x axis: the measured x values when few (thinned
    /// so that labels never run together), else 1, 2 and 5 per decade.
    fn log_ticks(&self, width: u32) -> Vec<f64> {
        let mut xs: Vec<f64> = self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0)).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        if xs.len() > 12 {
            let (lo, hi) = (xs[0] / 1.3, xs[xs.len() - 1] * 1.3);
            return super::pow10_ticks(lo, hi);
        }
        let apart = if is_narrow(width) { 2.5 } else { 1.6 };
        let mut kept: Vec<f64> = Vec::new();
        for x in xs {
            if kept.last().is_none_or(|k| x >= apart * k) {
                kept.push(x);
            }
        }
        kept
    }

    /// Whether x spans enough (≥ 16×, all positive) to read best on a log axis.
    fn log_x(&self) -> bool {
        let xs = || self.series.iter().flat_map(|s| s.points.iter().map(|p| p.0));
        let (lo, hi) = xs().fold((f64::MAX, f64::MIN), |(a, b), x| (a.min(x), b.max(x)));
        lo > 0.0 && hi / lo >= 16.0
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let pts = || self.series.iter().flat_map(|s| s.points.iter());
        let (xmin, xmax) = pts().fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.0), b.max(p.0)));
        let lows = pts().map(|p| p.2.map_or(p.1, |c| c.0));
        let highs = pts().map(|p| p.2.map_or(p.1, |c| c.1));
        let ymin = lows.fold(f64::MAX, f64::min);
        let ymax = highs.fold(f64::MIN, f64::max);
        if xmin > xmax {
            root.draw(&Text::new("no measured points", (20, 20), (FONT, 18).into_font())).map_err(|x| e(&x))?;
            return root.present().map_err(|x| e(&x));
        }
        // Start y at 0 for non-negative metrics (throughputs read honestly
        // against zero); pad otherwise.
        let span = (ymax - ymin).abs().max(ymax.abs() * 0.05).max(1e-12);
        let (ylo, yhi) = if ymin >= 0.0 { (0.0, ymax + 0.08 * span) } else { (ymin - 0.08 * span, ymax + 0.08 * span) };
        let width = root.dim_in_pixel().0;
        let body = super::title_strip(&root, &self.title, 20).map_err(|x| e(&x))?;
        let (plot_area, legend_area) = super::plot_and_legend(&body, LEGEND_WIDTH, self.legend_h(width));
        let mut builder = ChartBuilder::on(&plot_area);
        builder.margin(12).x_label_area_size(45).y_label_area_size(70);
        let ticks = if is_narrow(width) { 4 } else { 10 };
        if self.log_x() {
            let mut chart = builder
                .build_cartesian_2d(
                    (xmin / 1.3..xmax * 1.3).log_scale().with_key_points(self.log_ticks(width)),
                    ylo..yhi,
                )
                .map_err(|x| e(&x))?;
            self.mesh_and_lines(&mut chart, &format!("{} (log scale)", self.x_label), ticks).map_err(|x| e(&x))?;
        } else {
            let pad = ((xmax - xmin) * 0.05).max(0.5);
            let mut chart = builder.build_cartesian_2d(xmin - pad..xmax + pad, ylo..yhi).map_err(|x| e(&x))?;
            self.mesh_and_lines(&mut chart, &self.x_label, ticks).map_err(|x| e(&x))?;
        }
        let entries: Vec<(String, RGBColor)> =
            self.series.iter().enumerate().map(|(i, s)| (s.label.clone(), COLORS[i % COLORS.len()])).collect();
        let y =
            super::draw_legend(&legend_area, &entries, legend_top(width), legend_chars(width)).map_err(|x| e(&x))?;
        if self.has_bars() {
            legend_area
                .draw(&Text::new(self.bars_note.clone(), (6, y + 4), (FONT, 11).into_font()))
                .map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))
    }

    fn mesh_and_lines<DB: DrawingBackend, X>(
        &self,
        chart: &mut ChartContext<'_, DB, Cartesian2d<X, plotters::coord::types::RangedCoordf64>>,
        x_desc: &str,
        x_ticks: usize,
    ) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>>
    where
        X: Ranged<ValueType = f64> + plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        chart
            .configure_mesh()
            .x_desc(x_desc)
            .y_desc(self.y_label.as_str())
            .x_labels(x_ticks)
            .x_label_formatter(&|v| format_axis(*v))
            .y_label_formatter(&|v| format_sig3(*v))
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
            .light_line_style(WHITE.mix(0.0))
            .draw()?;
        for (i, s) in self.series.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.0, p.1)).collect();
            chart.draw_series(LineSeries::new(line.iter().copied(), color.stroke_width(2)))?;
            chart.draw_series(line.iter().map(|p| Circle::new(*p, 3, color.filled())))?;
            chart.draw_series(s.points.iter().filter_map(|p| {
                p.2.map(|(lo, hi)| PathElement::new(vec![(p.0, lo), (p.0, hi)], color.stroke_width(1)))
            }))?;
        }
        Ok(())
    }
}

super::impl_chart!(MetricChart);
