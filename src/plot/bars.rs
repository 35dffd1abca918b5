//! Bar chart of a rate per labelled item (GFLOP/s per GEMM shape and dtype).

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{plot_err, COLORS, FONT};
use crate::error::Result;
use crate::units::format_sig3;

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
        bars: bars
            .into_iter()
            .filter(|(_, v)| v.is_finite() && *v >= 0.0)
            .collect(),
    }
}

impl BarChart {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let n = self.bars.len().max(1);
        let ymax = self.bars.iter().map(|b| b.1).fold(0.0, f64::max).max(1e-9) * 1.15;
        let labels: Vec<String> = self.bars.iter().map(|b| b.0.clone()).collect();
        let mut chart = ChartBuilder::on(&root)
            .caption(&self.title, (FONT, 20))
            .margin(12)
            .x_label_area_size(90)
            .y_label_area_size(70)
            .build_cartesian_2d(0f64..n as f64, 0f64..ymax)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(n * 2 + 1)
            .x_label_formatter(&|v| {
                let i = (*v - 0.5).round();
                if (*v - 0.5 - i).abs() < 1e-6 && i >= 0.0 {
                    labels.get(i as usize).cloned().unwrap_or_default()
                } else {
                    String::new()
                }
            })
            .x_label_style((FONT, 11).into_font().transform(FontTransform::Rotate90))
            .y_desc(self.y_label.as_str())
            .y_label_formatter(&|v| format_sig3(*v))
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 14))
            .draw()
            .map_err(|x| e(&x))?;
        chart
            .draw_series(self.bars.iter().enumerate().map(|(i, (_, v))| {
                let c = COLORS[i % COLORS.len()];
                Rectangle::new([(i as f64 + 0.15, 0.0), (i as f64 + 0.85, *v)], c.filled())
            }))
            .map_err(|x| e(&x))?;
        root.present().map_err(|x| e(&x))
    }
}

super::impl_chart!(BarChart);
