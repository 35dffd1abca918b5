//! How a chart's text and legend fit its width: labels wrapped or
//! shortened, never cut, and the legend beside the plot on a desktop or
//! below it on a phone ([`super::NARROW_WIDTH`]).

use plotters::prelude::*;

use super::{is_narrow, FONT, TITLE_ROOM};

/// The plot's height in a narrow rendering (its legend goes below), pixels.
pub(crate) const NARROW_PLOT: u32 = 320;

/// Height of one panel of small multiples, pixels.
pub(crate) const PANEL_HEIGHT: u32 = 430;

/// Where [`draw_legend`] starts a legend at `width`: at the top of its band
/// below a narrow plot; beside a wide one, level with the plot's top.
pub(crate) fn legend_top(width: u32) -> i32 {
    if is_narrow(width) {
        12
    } else {
        60 - TITLE_ROOM as i32
    }
}

/// Characters of legend text per line at `width`: a 250 px column beside
/// the plot, or the chart's whole width below it.
pub(crate) fn legend_chars(width: u32) -> usize {
    if is_narrow(width) {
        (width.saturating_sub(40) / 6).max(LEGEND_CHARS as u32) as usize
    } else {
        LEGEND_CHARS
    }
}

/// The height a legend of `labels` takes, each wrapped at `chars` (15 px
/// a line, 5 between entries), from its first entry at `top`.
pub(crate) fn legend_height<'a>(labels: impl IntoIterator<Item = &'a str>, chars: usize, top: u32) -> u32 {
    top + labels.into_iter().map(|l| wrap_at(l, chars).len() as u32 * 15 + 5).sum::<u32>() + 8
}

/// Split `area` into its plot and its legend: a `column` px column on the
/// right when wide, a band of `legend_h` px below the plot when narrow.
pub(crate) fn plot_and_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    column: u32,
    legend_h: u32,
) -> (DrawingArea<DB, plotters::coord::Shift>, DrawingArea<DB, plotters::coord::Shift>) {
    let (w, h) = area.dim_in_pixel();
    if is_narrow(w) {
        area.split_vertically(h.saturating_sub(legend_h))
    } else {
        area.split_horizontally(w.saturating_sub(column))
    }
}
/// Characters of legend text per line: the legend column (250 px) at 12 px
/// DejaVu Sans, after the colour swatch.
const LEGEND_CHARS: usize = 28;

/// `text` in at most `most` characters: a longer one keeps its head and
/// its tail (where what tells it from its neighbours usually is), joined
/// by an ellipsis.
pub(crate) fn shorten(text: &str, most: usize) -> String {
    let n = text.chars().count();
    if n <= most {
        return text.to_string();
    }
    let head: String = text.chars().take(most / 2 - 1).collect();
    let tail: String = text.chars().skip(n - most / 2).collect();
    format!("{head}…{tail}")
}

/// `text` wrapped at spaces into lines of at most `max` characters; a
/// word longer than a line (a run id) is broken after a `-` or `_` where
/// it can, else at the line's end, and continues on the next line: never
/// cut, so that two runs' labels stay told apart.
pub(crate) fn wrap_at(text: &str, max: usize) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    for word in text.split_whitespace() {
        if !cur.is_empty() && cur.chars().count() + 1 + word.chars().count() > max {
            lines.push(std::mem::take(&mut cur));
        }
        if !cur.is_empty() {
            cur.push(' ');
        }
        let mut rest: Vec<char> = word.chars().collect();
        // Break what does not fit on this line.
        while cur.chars().count() + rest.len() > max {
            let room = max - cur.chars().count();
            let at = rest[..room].iter().rposition(|c| *c == '-' || *c == '_').map_or(room, |i| i + 1);
            // A break point too early wastes the line: start a fresh one.
            if at < room / 2 && !cur.is_empty() {
                lines.push(std::mem::take(&mut cur).trim_end().to_string());
                continue;
            }
            cur.extend(&rest[..at]);
            lines.push(std::mem::take(&mut cur));
            rest.drain(..at);
        }
        cur.extend(rest);
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    lines
}

/// Draw legend entries (label, colour) down the legend area from y =
/// `top`, each label wrapped at `chars` ([`legend_chars`]); returns the y
/// below.
pub(crate) fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    entries: &[(String, RGBColor)],
    top: i32,
    chars: usize,
) -> std::result::Result<i32, DrawingAreaErrorKind<DB::ErrorType>> {
    let text = (FONT, 12).into_font();
    let mut y = top;
    for (label, color) in entries {
        area.draw(&PathElement::new(vec![(6, y), (30, y)], color.stroke_width(3)))?;
        for line in wrap_at(label, chars) {
            area.draw(&Text::new(line, (36, y - 7), text.clone()))?;
            y += 15;
        }
        y += 5;
    }
    Ok(y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn wrap_at_legend(label: &str) -> Vec<String> {
        wrap_at(label, LEGEND_CHARS)
    }

    proptest! {
        #[test]
        fn legend_lines_fit_and_keep_every_short_word(words in proptest::collection::vec("[a-zA-Z0-9_<>→#()]{1,40}", 0..12)) {
            let label = words.join(" ");
            let lines = wrap_at_legend(&label);
            prop_assert!(lines.iter().all(|l| l.chars().count() <= LEGEND_CHARS), "{lines:?}");
            // Nothing is cut: the lines hold every character of every word.
            let kept: String = lines.concat().chars().filter(|c| *c != ' ').collect();
            prop_assert_eq!(kept, words.concat());
            let joined = lines.join(" ");
            for w in words.iter().filter(|w| w.chars().count() <= LEGEND_CHARS) {
                prop_assert!(joined.contains(w.as_str()), "{w} lost: {lines:?}");
            }
        }
    }

    #[test]
    fn a_long_legend_wraps_at_spaces() {
        assert_eq!(
            wrap_at_legend("glibc-default #1: memcpy copy, 1 thread"),
            ["glibc-default #1: memcpy", "copy, 1 thread"]
        );
        assert_eq!(wrap_at_legend("short"), ["short"]);
        // A run id continues on the next line, broken after a dash.
        assert_eq!(
            wrap_at_legend("memcpy copy (20261122T014545Z-memcpy-rounds-a-2c86)"),
            ["memcpy copy", "(20261122T014545Z-memcpy-", "rounds-a-2c86)"]
        );
    }
}
