//! A matrix heatmap: one cell per (row, column) pair with its value written
//! in it, the chart of nvbandwidth's GPU(row) → GPU(column) tables and of
//! peer-copy matrices (seeds 000 and 003). Cells without a value (a GPU to
//! itself, a pair not measured) are grey and say `n/a`.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{is_narrow, legend_chars, plot_err, FONT, SIZE, TITLE_ROOM};
use crate::error::Result;
use crate::vocab::units::format_sig3;

/// The heatmap's content: `cells[r][c]` is the value from row `r` to
/// column `c`.
pub struct HeatmapChart {
    pub name: String,
    pub title: String,
    /// What a value is, with its unit: `GB/s (bytes copied once)`.
    pub unit: String,
    pub row_label: String,
    pub col_label: String,
    pub rows: Vec<String>,
    pub cols: Vec<String>,
    pub cells: Vec<Vec<Option<f64>>>,
    /// The link the cells are held against, in the cells' unit (the unit
    /// names it): the colour key then runs to at least it and marks it, so
    /// a cell's shade reads as its share of the link.
    pub link: Option<f64>,
}

/// Low to high: a light-to-dark blue ramp that prints in greyscale.
fn shade(t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let lerp = |a: f64, b: f64| (a + (b - a) * t).round() as u8;
    RGBColor(lerp(222.0, 8.0), lerp(235.0, 48.0), lerp(247.0, 107.0))
}

impl HeatmapChart {
    /// The grid's geometry at `width`: (left edge, top edge, cell size,
    /// colour key width). Cells are square and fill the space left of the
    /// colour key, below the title and column labels; a narrow chart grows
    /// downwards instead of shrinking its cells to fit a height.
    fn grid(&self, width: u32) -> (i32, i32, i32, i32) {
        let (nr, nc) = (self.rows.len().max(1) as i32, self.cols.len().max(1) as i32);
        // Room for the longest row label (about 7.5 px a character at 13 px).
        let longest = self.rows.iter().map(|r| r.chars().count()).max().unwrap_or(0) as i32;
        let left = (longest * 15 / 2 + 24).max(if is_narrow(width) { 40 } else { 90 });
        let top = super::title_height(&self.title, width, 20) as i32 + 34;
        let key_w = if is_narrow(width) { 80 } else { 150 };
        let across = (width as i32 - left - key_w - 20) / nc;
        let down = (SIZE.1 as i32 - TITLE_ROOM as i32 - 34 - 50) / nr;
        let cell = if is_narrow(width) { across.min(60) } else { across.min(down) };
        (left, top, cell.max(8), key_w)
    }

    /// The unit's lines under the key (wide) or under the grid (narrow).
    fn unit_lines(&self, width: u32) -> Vec<String> {
        super::wrap_at(&self.unit, legend_chars(width))
    }

    fn height_at(&self, width: u32) -> u32 {
        if !is_narrow(width) {
            return super::title_height(&self.title, width, 20) + SIZE.1 - TITLE_ROOM;
        }
        let (_, top, cell, _) = self.grid(width);
        let grid = (self.rows.len().max(1) as i32 * cell).max(200);
        (top + grid + 36 + 15 * self.unit_lines(width).len() as i32 + 8) as u32
    }

    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<()> {
        let e = |x: &dyn std::fmt::Display| plot_err(&self.name, x);
        root.fill(&WHITE).map_err(|x| e(&x))?;
        let values: Vec<f64> = self.cells.iter().flatten().flatten().copied().filter(|v| v.is_finite()).collect();
        // The ramp starts at zero, so a 1 % spread does not look like a
        // 2× one: only a pair well below the others stands out.
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min).min(0.0);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let hi = self.link.map_or(hi, |l| hi.max(l));
        super::title_strip(&root, &self.title, 20).map_err(|x| e(&x))?;
        let width = root.dim_in_pixel().0;
        let (nr, nc) = (self.rows.len().max(1), self.cols.len().max(1));
        let (left, top, cell, _) = self.grid(width);
        // Values 11 px and up (legible on a phone), where a cell holds one.
        let small = (FONT, (cell / 4).clamp(11, 14)).into_font();
        let label = (FONT, 13).into_font();
        for (r, row) in self.cells.iter().enumerate() {
            for c in 0..nc {
                let (x0, y0) = (left + c as i32 * cell, top + r as i32 * cell);
                let v = row.get(c).copied().flatten().filter(|v| v.is_finite());
                let t = match v {
                    Some(v) if hi > lo => (v - lo) / (hi - lo),
                    Some(_) => 1.0,
                    None => 0.0,
                };
                let fill = if v.is_some() { shade(t) } else { RGBColor(215, 215, 215) };
                root.draw(&Rectangle::new([(x0, y0), (x0 + cell - 1, y0 + cell - 1)], fill.filled()))
                    .map_err(|x| e(&x))?;
                if cell >= 24 {
                    let text = v.map(format_sig3).unwrap_or_else(|| "n/a".into());
                    let color = if t > 0.55 { WHITE } else { BLACK };
                    let style = small.clone().color(&color).pos(plotters::style::text_anchor::Pos::new(
                        plotters::style::text_anchor::HPos::Center,
                        plotters::style::text_anchor::VPos::Center,
                    ));
                    root.draw(&Text::new(text, (x0 + cell / 2, y0 + cell / 2), style)).map_err(|x| e(&x))?;
                }
            }
        }
        use plotters::style::text_anchor::{HPos, Pos, VPos};
        let centred = label.clone().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
        for (c, name) in self.cols.iter().enumerate() {
            root.draw(&Text::new(name.clone(), (left + c as i32 * cell + cell / 2, top - 8), centred.clone()))
                .map_err(|x| e(&x))?;
        }
        // Row labels end just left of the grid, whatever their length.
        let right = label.clone().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
        for (r, name) in self.rows.iter().enumerate() {
            root.draw(&Text::new(name.clone(), (left - 8, top + r as i32 * cell + cell / 2), right.clone()))
                .map_err(|x| e(&x))?;
        }
        let axis = (FONT, 14).into_font();
        root.draw(&Text::new(self.col_label.clone(), (left, top - 34), axis.clone())).map_err(|x| e(&x))?;
        root.draw(&Text::new(self.row_label.clone(), (10, top + nr as i32 * cell + 12), axis)).map_err(|x| e(&x))?;
        // Colour key: the ramp with its low and high values, and the unit.
        let kx = left + nc as i32 * cell + 30;
        for i in 0..100 {
            let y = top + (99 - i) * 2;
            root.draw(&Rectangle::new([(kx, y), (kx + 20, y + 2)], shade(i as f64 / 99.0).filled()))
                .map_err(|x| e(&x))?;
        }
        if lo.is_finite() {
            root.draw(&Text::new(format_sig3(hi), (kx + 26, top - 2), label.clone())).map_err(|x| e(&x))?;
            root.draw(&Text::new(format_sig3(lo), (kx + 26, top + 190), label.clone())).map_err(|x| e(&x))?;
        }
        // The link: a red tick across the key at its value, named beside it.
        if let Some(l) = self.link.filter(|l| hi > lo && l.is_finite()) {
            let y = top + 200 - (((l - lo) / (hi - lo)) * 200.0).round() as i32;
            root.draw(&PathElement::new(vec![(kx - 4, y), (kx + 24, y)], RED.stroke_width(2))).map_err(|x| e(&x))?;
            let tag = format!("link {}", format_sig3(l));
            root.draw(&Text::new(tag, (kx + 26, y + 13), label.clone().color(&RED))).map_err(|x| e(&x))?;
        }
        // The unit: under the key, or on a phone under the grid.
        let (ux, uy) =
            if is_narrow(width) { (10, top + (nr as i32 * cell).max(200) + 36) } else { (kx - 10, top + 215) };
        for (i, part) in self.unit_lines(width).into_iter().enumerate() {
            root.draw(&Text::new(part, (ux, uy + 15 * i as i32), label.clone())).map_err(|x| e(&x))?;
        }
        root.present().map_err(|x| e(&x))
    }
}

super::impl_chart!(HeatmapChart);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heatmap_writes_every_value_and_marks_missing_cells() {
        let chart = HeatmapChart {
            name: "m".into(),
            title: "peer <bandwidth>".into(),
            unit: "GB/s".into(),
            row_label: "from GPU".into(),
            col_label: "to GPU".into(),
            rows: vec!["0".into(), "1".into()],
            cols: vec!["0".into(), "1".into()],
            cells: vec![vec![None, Some(370.9)], vec![Some(371.2), None]],
            link: None,
        };
        let svg = crate::plot::to_svg(&chart).unwrap();
        assert!(svg.contains("371") && svg.contains("n/a") && svg.contains("&lt;bandwidth&gt;"), "{svg}");
        assert!(!svg.contains("link 450"));
        // Against a link the key runs to it and marks it.
        let chart = HeatmapChart { link: Some(450.0), ..chart };
        let svg = crate::plot::to_svg(&chart).unwrap();
        assert!(svg.contains("link 450") && svg.matches("450").count() >= 2, "{svg}");
    }
}
