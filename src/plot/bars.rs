//! Bar chart of a rate per labelled item (GFLOP/s per GEMM shape and dtype).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{plot_err, COLORS, FONT, SIZE, TITLE_ROOM};
use crate::error::Result;
use crate::vocab::units::format_sig3;

pub struct BarChart {
    pub name: String,
    pub title: String,
    pub y_label: String,
    pub bars: Vec<(String, f64)>,
}

pub fn bar_chart(name: &str, title: &str, y_label: &str, bars: Vec<(String, f64)>) -> BarChart {
    BarChart {
        name: name.into(),
        title: title.into(),
        y_label: y_label.into(),
        bars: bars.into_iter().filter(|(_, v)| v.is_finite() && *v >= 0.0).collect(),
    }
}

impl BarChart {
    fn height_at(&self, width: u32) -> u32 {
        super::title_height(&self.title, width, 20) + SIZE.1 - TITLE_ROOM
    }

    /// Horizontal bars: long labels (`f32 1024×1024×1024 2T`) read on the y axis.
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let n = self.bars.len().max(1);
        let xmax = self.bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-9) * 1.12;
        // The label column takes at most 45 % of the width (7 px a
        // character); a longer label keeps both ends.
        let most = ((root.dim_in_pixel().0 * 45 / 100).saturating_sub(16) / 7).max(8) as usize;
        let labels: Vec<String> = self.bars.iter().map(|b| super::shorten(&b.0, most)).collect();
        let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(4) as u32;
        let body = super::title_strip(&root, &self.title, 20).map_err(|x| e(&x))?;
        let mut chart = ChartBuilder::on(&body)
            .margin(12)
            .x_label_area_size(45)
            .y_label_area_size(longest * 7 + 16)
            .build_cartesian_2d(0f64..xmax, 0f64..n as f64)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(n * 2 + 1)
            .y_label_formatter(&|v| {
                // Bars are drawn top-down in input order; label their centres.
                let i = (*v - 0.5).round();
                if (*v - 0.5 - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < n {
                    labels.get(n - 1 - i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_desc(self.y_label.as_str())
            .x_labels(if super::is_narrow(root.dim_in_pixel().0) { 4 } else { 10 })
            .x_label_formatter(&|v| format_sig3(*v))
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(|x| e(&x))?;
        chart
            .draw_series(self.bars.iter().enumerate().map(|(i, (label, v))| {
                let c = COLORS[label_group(label, &labels) % COLORS.len()];
                let y = (n - 1 - i) as f64;
                Rectangle::new([(0.0, y + 0.15), (*v, y + 0.85)], c.filled())
            }))
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))
    }
}

/// Bars share a colour per first word of their label (the dtype).
fn label_group(label: &str, all: &[String]) -> usize {
    let key = label.split_whitespace().next().unwrap_or("");
    let mut groups: Vec<&str> = Vec::new();
    for l in all {
        let k = l.split_whitespace().next().unwrap_or("");
        if !groups.contains(&k) {
            groups.push(k);
        }
    }
    groups.iter().position(|g| *g == key).unwrap_or(0)
}

super::impl_chart!(BarChart);
