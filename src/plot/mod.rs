//! Charts with plotters, as SVG (inlined into HTML reports). Text is laid
//! out with an embedded DejaVu Sans (registered through plotters'
//! `ab_glyph`), and PNGs are that same SVG rasterised by resvg with the
//! same font: one look on a headless machine with no system fonts, at any
//! scale.

/// Implement [`Chart`] for a type with a generic `draw` method, once for
/// each backend.
macro_rules! impl_chart {
    ($t:ty) => {
        impl $crate::plot::Chart for $t {
            fn name(&self) -> &str {
                &self.name
            }
            fn size_at(&self, width: u32) -> (u32, u32) {
                (width, self.height_at(width))
            }
            fn draw_svg(&self, root: DrawingArea<SVGBackend, Shift>) -> $crate::error::Result<()> {
                self.draw(root)
            }
        }
    };
}
pub(crate) use impl_chart;

pub mod bandwidth;
pub mod bars;
pub mod grouped;
pub mod heatmap;
mod layout;
pub mod metric;
pub mod ratio;
pub mod series;
mod style;

pub use bandwidth::{bandwidth_chart, Line};
pub use bars::bar_chart;
pub use grouped::{BarPanel, BarSeries, GroupedBars};
pub use heatmap::HeatmapChart;
pub(crate) use layout::{
    draw_legend, legend_chars, legend_height, legend_top, plot_and_legend, shorten, wrap_at, NARROW_PLOT, PANEL_HEIGHT,
};
pub use metric::MetricChart;
pub use ratio::{RatioChart, RatioSeries};
pub(crate) use style::{draw_marker_at, draw_markers};
pub use style::{share_palette, Palette};

use std::sync::Once;

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
///
/// A chart lays itself out for the width it is drawn at (its drawing
/// area's): at [`SIZE`]'s width for a desktop page, print and PNG, and at
/// [`NARROW_WIDTH`] for a phone, where its legend goes below the plot and
/// its axes carry fewer ticks, so that the page shows it whole at about
/// its own size instead of a desktop chart cut or shrunk past reading.
pub trait Chart {
    fn name(&self) -> &str;
    /// Its size in pixels laid out `width` pixels wide: small multiples
    /// are taller than one panel, and a narrow chart's legend adds height.
    fn size_at(&self, width: u32) -> (u32, u32);
    /// Its size at the desktop width.
    fn size(&self) -> (u32, u32) {
        self.size_at(SIZE.0)
    }
    /// The (colour, marker) keys of its curves, for a [`Palette`] shared
    /// by every chart of a report; none for charts without curves.
    fn style_keys(&self) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Take the report's palette: a system keeps one colour and an
    /// operation one marker across every chart.
    fn set_palette(&mut self, _palette: &Palette) {}
    fn draw_svg(&self, root: DrawingArea<SVGBackend, plotters::coord::Shift>) -> Result<()>;
}

pub(crate) fn plot_err(name: &str, e: impl std::fmt::Display) -> Error {
    Error::Plot { name: name.into(), message: e.to_string() }
}

pub const SIZE: (u32, u32) = (900, 540);

/// The width of a chart's phone rendering, pixels: a 400 px screen, less
/// its page margins, shows it at about its own size, text 9 px and up.
pub const NARROW_WIDTH: u32 = 380;

/// Whether a chart drawn `width` pixels wide takes the narrow layout.
pub(crate) fn is_narrow(width: u32) -> bool {
    width < 600
}

/// Draw `title` centred across the top of `root`, wrapped onto as many
/// lines as it needs at `px` (never clipped); returns the area below it.
pub(crate) fn title_strip<DB: DrawingBackend>(
    root: &DrawingArea<DB, plotters::coord::Shift>,
    title: &str,
    px: u32,
) -> std::result::Result<DrawingArea<DB, plotters::coord::Shift>, DrawingAreaErrorKind<DB::ErrorType>> {
    let (w, _) = root.dim_in_pixel();
    // plotters draws text at about 0.81 of the size asked; DejaVu Sans
    // averages under 0.62 em a character.
    let lines = title_lines(title, w, px);
    let step = px as i32 + 4;
    let style = (FONT, px).into_font().into_text_style(root).pos(Pos::new(HPos::Center, VPos::Top));
    for (i, l) in lines.iter().enumerate() {
        root.draw(&Text::new(l.clone(), (w as i32 / 2, 8 + i as i32 * step), style.clone()))?;
    }
    Ok(root.clone().split_vertically(title_height(title, w, px)).1)
}

/// A title's lines across `width` pixels at `px`: plotters draws text at
/// about 0.81 of the size asked, and DejaVu Sans averages under 0.62 em a
/// character.
fn title_lines(title: &str, width: u32, px: u32) -> Vec<String> {
    let per_line = (width.saturating_sub(24)) as f64 / (px as f64 * 0.81 * 0.62);
    wrap_at(title, (per_line as usize).max(10))
}

/// The height [`title_strip`] takes.
pub(crate) fn title_height(title: &str, width: u32, px: u32) -> u32 {
    12 + title_lines(title, width, px).len() as u32 * (px + 4)
}

/// The room a one-line title takes, pixels.
pub(crate) const TITLE_ROOM: u32 = 36;

/// Render a chart to SVG text, at the desktop width.
pub fn to_svg(chart: &dyn Chart) -> Result<String> {
    to_svg_at(chart, SIZE.0)
}

/// Render a chart to SVG text laid out `width` pixels wide.
pub fn to_svg_at(chart: &dyn Chart, width: u32) -> Result<String> {
    ensure_font();
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, chart.size_at(width)).into_drawing_area();
        chart.draw_svg(root)?;
    }
    Ok(out)
}

/// A chart for a web page: its desktop rendering `wide` ([`to_svg`]'s),
/// marked `class="wide"`, and its phone rendering, `class="narrow"`, of
/// which the page's style sheet shows one by the screen's width.
pub fn to_page_svg(chart: &dyn Chart, wide: &str) -> Result<String> {
    let wide = wide.replacen("<svg ", "<svg class=\"wide\" ", 1);
    let narrow = to_svg_at(chart, NARROW_WIDTH)?.replacen("<svg ", "<svg class=\"narrow\" ", 1);
    Ok(wide + &narrow)
}

/// The scale and resolution of `--png`: twice the SVG's pixels, marked
/// 300 dpi, so that a 900 px chart prints 6 inches wide, sharp.
pub const PNG_SCALE: f32 = 2.0;
pub const PNG_DPI: u32 = 300;

/// Rasterise a chart's SVG (the same one the HTML inlines) to PNG bytes at
/// `scale`, marked `dpi`, with text in the embedded font.
pub fn to_png(chart: &dyn Chart, scale: f32, dpi: u32) -> Result<Vec<u8>> {
    svg_to_png(chart.name(), &to_svg(chart)?, scale, dpi)
}

/// Rasterise SVG text to PNG bytes (see [`to_png`]).
pub fn svg_to_png(name: &str, svg: &str, scale: f32, dpi: u32) -> Result<Vec<u8>> {
    use resvg::{tiny_skia, usvg};
    let mut opt = usvg::Options::default();
    {
        let db = opt.fontdb_mut();
        db.load_font_data(FONT_BYTES.to_vec());
        // The SVG names the generic family; it is the embedded font.
        db.set_sans_serif_family("DejaVu Sans");
    }
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| plot_err(name, e))?;
    let size = tree.size().to_int_size().scale_by(scale).ok_or_else(|| plot_err(name, "empty chart"))?;
    let mut pixmap =
        tiny_skia::Pixmap::new(size.width(), size.height()).ok_or_else(|| plot_err(name, "chart too large"))?;
    pixmap.fill(tiny_skia::Color::WHITE);
    resvg::render(&tree, tiny_skia::Transform::from_scale(scale, scale), &mut pixmap.as_mut());
    // Opaque white underneath: premultiplied RGBA is plain RGBA here.
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, size.width(), size.height());
        enc.set_color(png::ColorType::Rgba);
        enc.set_depth(png::BitDepth::Eight);
        let per_metre = (dpi as f64 / 0.0254).round() as u32;
        enc.set_pixel_dims(Some(png::PixelDimensions { xppu: per_metre, yppu: per_metre, unit: png::Unit::Meter }));
        let mut w = enc.write_header().map_err(|e| plot_err(name, e))?;
        w.write_image_data(pixmap.data()).map_err(|e| plot_err(name, e))?;
    }
    Ok(out)
}

/// A dashed horizontal line at `y` across a log x axis from `xlo` to
/// `xhi`, drawn by hand: plotters 0.3 has no dashed style for log axes.
pub(crate) fn log_x_dashes(
    xlo: f64,
    xhi: f64,
    y: f64,
    style: ShapeStyle,
) -> impl Iterator<Item = PathElement<(f64, f64)>> {
    let steps = 60;
    (0..steps).step_by(2).map(move |s| {
        let a = xlo * (xhi / xlo).powf(s as f64 / steps as f64);
        let b = xlo * (xhi / xlo).powf((s + 1) as f64 / steps as f64);
        PathElement::new(vec![(a, y), (b, y)], style)
    })
}

/// Powers of two inside [lo, hi], every 2, 4, 6... octaves: the
/// smallest even step that leaves at most `max` labels, so that labels of
/// a 4 B – 16 GiB sweep never run together.
pub(crate) fn pow2_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    let within = |step: usize| -> Vec<f64> {
        (0..63).step_by(step).map(|e| (1u64 << e) as f64).filter(|v| *v >= lo && *v <= hi).collect()
    };
    (2..=62).step_by(2).map(within).find(|t| t.len() <= max.max(1)).unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn png_is_the_svg_at_twice_its_pixels_marked_300_dpi_with_its_text_drawn() {
        let line = |l: &str| Line::with_errors(l.into(), [(1024.0, 5.0, Some((4.0, 6.0))), (1e6, 20.0, None)]);
        let chart = bandwidth_chart("c", "a title", "GB/s", vec![line("one"), line("two")], None);
        let png = to_png(&chart, PNG_SCALE, PNG_DPI).unwrap();
        let mut dec = png::Decoder::new(std::io::Cursor::new(png)).read_info().unwrap();
        let info = dec.info().clone();
        assert_eq!((info.width, info.height), (chart.size().0 * 2, chart.size().1 * 2));
        let dims = info.pixel_dims.unwrap();
        assert_eq!((dims.unit, (dims.xppu as f64 * 0.0254).round()), (png::Unit::Meter, 300.0));
        let mut buf = vec![0; dec.output_buffer_size().unwrap()];
        dec.next_frame(&mut buf).unwrap();
        // The title strip (top 70 px at 2×) holds dark pixels: text was drawn
        // with the embedded font, not dropped for want of a system one.
        let row = info.width as usize * 4;
        let dark = buf[..row * 70].chunks(4).filter(|p| p[0] < 100 && p[1] < 100 && p[2] < 100).count();
        assert!(dark > 200, "{dark} dark pixels in the title strip");
        // A broken SVG is an error naming the chart, not a panic.
        let e = svg_to_png("broken", "<svg", 2.0, 300).unwrap_err();
        assert!(e.to_string().contains("broken"), "{e}");
    }

    #[test]
    fn size_ticks_thin_out_on_wide_sweeps() {
        let wide = pow2_ticks(2.0, 3e10, 9);
        assert!(wide.len() <= 9 && wide.len() >= 5, "{wide:?}");
        assert_eq!(pow2_ticks(1000.0, 1e7, 9), [1024.0, 4096.0, 16384.0, 65536.0, 262144.0, 1048576.0, 4194304.0]);
    }
}
