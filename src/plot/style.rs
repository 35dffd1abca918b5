//! One look per report: a palette that keeps a system's colour and an
//! operation's marker across every chart, and the markers themselves.

use plotters::prelude::*;

use super::{Chart, COLORS};

/// Colours and markers by key, in the order the keys were first seen
/// across a report's charts.
#[derive(Debug, Clone, Default)]
pub struct Palette {
    colours: Vec<String>,
    markers: Vec<String>,
}

impl Palette {
    /// The palette of these (colour, marker) keys.
    pub fn of<'a>(keys: impl IntoIterator<Item = &'a (String, String)>) -> Palette {
        let mut p = Palette::default();
        for (c, m) in keys {
            if !p.colours.contains(c) {
                p.colours.push(c.clone());
            }
            if !p.markers.contains(m) {
                p.markers.push(m.clone());
            }
        }
        p
    }

    /// The colour index of a key (wrapping past the palette's 8).
    pub fn colour(&self, key: &str) -> usize {
        self.colours.iter().position(|k| k == key).unwrap_or(self.colours.len()) % COLORS.len()
    }

    /// The marker index of a key.
    pub fn marker(&self, key: &str) -> usize {
        self.markers.iter().position(|k| k == key).unwrap_or(self.markers.len()) % MARKERS
    }
}

/// Give every chart of a report one palette: the same system is the same
/// colour, the same operation the same marker, in every chart.
pub fn share_palette(charts: &mut [Box<dyn Chart>]) {
    let keys: Vec<(String, String)> = charts.iter().flat_map(|c| c.style_keys()).collect();
    let palette = Palette::of(&keys);
    for c in charts {
        c.set_palette(&palette);
    }
}

/// Marker shapes: filled circle, triangle, square, cross, open circle,
/// open square; curves that overlap stay apart where colours alone would
/// not (and in greyscale print).
pub(crate) const MARKERS: usize = 6;

/// Draw marker `kind` at each point.
pub(crate) fn draw_markers<DB: DrawingBackend, CT: plotters::coord::CoordTranslate<From = (f64, f64)>>(
    chart: &mut ChartContext<'_, DB, CT>,
    kind: usize,
    color: RGBColor,
    pts: impl Iterator<Item = (f64, f64)>,
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let open = color.stroke_width(2);
    match kind % MARKERS {
        0 => chart.draw_series(pts.map(|p| Circle::new(p, 3, color.filled()))),
        1 => chart.draw_series(pts.map(|p| TriangleMarker::new(p, 5, color.filled()))),
        2 => chart.draw_series(pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-3, -3), (3, 3)], color.filled()))),
        3 => chart.draw_series(pts.map(|p| Cross::new(p, 4, open))),
        4 => chart.draw_series(pts.map(|p| Circle::new(p, 4, open))),
        _ => chart.draw_series(pts.map(|p| EmptyElement::at(p) + Rectangle::new([(-4, -4), (4, 4)], open))),
    }?;
    Ok(())
}

/// The marker of `kind` at pixel `at` of a plain drawing area (a legend).
pub(crate) fn draw_marker_at<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    kind: usize,
    color: RGBColor,
    at: (i32, i32),
) -> std::result::Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
    let open = color.stroke_width(2);
    match kind % MARKERS {
        0 => area.draw(&Circle::new(at, 3, color.filled())),
        1 => area.draw(&TriangleMarker::new(at, 5, color.filled())),
        2 => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-3, -3), (3, 3)], color.filled()))),
        3 => area.draw(&Cross::new(at, 4, open)),
        4 => area.draw(&Circle::new(at, 4, open)),
        _ => area.draw(&(EmptyElement::at(at) + Rectangle::new([(-4, -4), (4, 4)], open))),
    }
}
