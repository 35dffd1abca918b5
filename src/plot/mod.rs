//! Charts with plotters. Text is drawn with an embedded DejaVu Sans
//! (registered through plotters' `ab_glyph` backend), so PNGs render the
//! same on a headless machine with no system fonts. SVG is the default
//! output (inlined into HTML reports); PNG on request.

/// Implement [`Chart`] for a type with a generic `draw` method, once for
/// each backend.
macro_rules! impl_chart {
    ($t:ty) => {
        impl $crate::plot::Chart for $t {
            fn name(&self) -> &str {
                &self.name
            }
            fn draw_svg(&self, root: DrawingArea<SVGBackend, Shift>) -> $crate::error::Result<()> {
                self.draw(root)
            }
            fn draw_png(&self, root: DrawingArea<BitMapBackend, Shift>) -> $crate::error::Result<()> {
                self.draw(root)
            }
        }
    };
}
pub(crate) use impl_chart;

pub mod bandwidth;
pub mod bars;
pub mod metric;
pub mod ratio;

pub use bandwidth::{bandwidth_chart, Line};
pub use bars::bar_chart;
pub use metric::MetricChart;
pub use ratio::{RatioChart, RatioSeries};

use std::path::Path;
use std::sync::Once;

use plotters::prelude::*;

use crate::error::{Error, Result};

pub(crate) const FONT: &str = "sans-serif";
static FONT_BYTES: &[u8] = include_bytes!("../../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

pub(crate) fn ensure_font() {
    REGISTER.call_once(|| {
        for style in [FontStyle::Normal, FontStyle::Bold] {
            // The font is embedded and known-good; failure here is a build bug.
            plotters::style::register_font(FONT, style, FONT_BYTES).unwrap_or_else(|_| panic!("embedded font parses"));
        }
    });
}

pub(crate) const COLORS: [RGBColor; 8] = [
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(214, 39, 40),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(227, 119, 194),
    RGBColor(127, 127, 127),
];

/// A chart, ready to render to SVG text or a PNG file.
pub trait Chart {
    fn name(&self) -> &str;
    fn draw_svg(&self, root: DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()>;
    fn draw_png(&self, root: DrawingArea<BitMapBackend, plotters::coord::Shift>) -> Result<()>;
}

pub(crate) fn plot_err(name: &str, e: impl std::fmt::Display) -> Error {
    Error::Plot { name: name.into(), message: e.to_string() }
}

pub const SIZE: (u32, u32) = (900, 540);

/// Render a chart to SVG text.
pub fn to_svg(chart: &dyn Chart) -> Result<String> {
    ensure_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, SIZE).into_drawing_area();
        chart.draw_svg(root)?;
    }
    Ok(out)
}

/// Render a chart to a PNG file.
pub fn to_png(chart: &dyn Chart, path: &Path) -> Result<()> {
    ensure_font();
    let root = BitMapBackend::new(path, SIZE).into_drawing_area();
    chart.draw_png(root)
}

/// Powers of two every 4 octaves (4 KiB, 64 KiB, 1 MiB, ...) inside [lo, hi].
pub(crate) fn pow2_ticks(lo: f64, hi: f64) -> Vec<f64> {
    (0..64).step_by(2).map(|e| (1u64 << e) as f64).filter(|v| *v >= lo && *v <= hi).collect()
}

/// Powers of ten (and 2×, 5×) inside [lo, hi].
pub(crate) fn pow10_ticks(lo: f64, hi: f64) -> Vec<f64> {
    let mut v = Vec::new();
    // Over many decades, 2× and 5× ticks would crowd the axis.
    let mults: &[f64] = if hi / lo > 1e4 { &[1.0] } else { &[1.0, 2.0, 5.0] };
    for e in -6..9 {
        for &m in mults {
            let x = m * 10f64.powi(e);
            if x >= lo && x <= hi {
                v.push(x);
            }
        }
    }
    v
}
