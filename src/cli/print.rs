//! The one printer. Every command returns a value that serializes; this
//! module writes it as JSON, or as text through its [`Render`] form. Text
//! tables go through comfy-table without borders, in plain ASCII, so they
//! read like the aligned columns benchbook always printed. Every string a
//! text form shows that came from outside the program (run ids, labels,
//! notes, host and device names, file names, tools' warnings) goes through
//! [`terminal_safe`] first.

use std::borrow::Cow;
use std::io::{self, Write};
use std::path::Path;

use comfy_table::{presets, CellAlignment, ContentArrangement, Table};
use serde::Serialize;

/// How a command's value is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// The [`Render`] form.
    Text,
    /// One line of JSON on stdout.
    Json,
    /// Indented JSON on stdout.
    PrettyJson,
}

impl Form {
    /// JSON when `--json` was given, text otherwise.
    pub fn json(json: bool) -> Form {
        if json {
            Form::Json
        } else {
            Form::Text
        }
    }
}

/// Where a text form goes.
pub struct Term<'a> {
    /// Results (stdout).
    pub out: &'a mut dyn Write,
    /// Messages about them (stderr): run summaries, import notes, warnings.
    pub err: &'a mut dyn Write,
    /// `--quiet`: results and errors only, no chatter.
    pub quiet: bool,
}

/// The text form of a command's value.
pub trait Render {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()>;
}

/// Print `value` in `form`. JSON is printed whatever `quiet` says (it was
/// asked for); a text form decides what `quiet` leaves out. A closed pipe
/// (`benchbook list | head`) is not an error.
pub fn emit<T: Serialize + Render>(value: &T, form: Form, quiet: bool) {
    let (stdout, stderr) = (io::stdout(), io::stderr());
    let _ = match form {
        Form::Text => value.render(&mut Term { out: &mut stdout.lock(), err: &mut stderr.lock(), quiet }),
        Form::Json | Form::PrettyJson => {
            let text = if form == Form::PrettyJson {
                serde_json::to_string_pretty(value)
            } else {
                serde_json::to_string(value)
            };
            writeln!(stdout.lock(), "{}", text.expect("command outputs serialize to JSON"))
        }
    };
}

/// Whether `c` must not reach a terminal as itself: C0 controls (ESC
/// included), DEL, C1 controls, and the bidirectional overrides and
/// isolates that reorder what is shown.
fn unsafe_char(c: char) -> bool {
    c.is_control() || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `s` with every character a terminal would act on (escape sequences,
/// carriage returns, newlines, tabs, bidi overrides) written as a `\u{1b}`
/// escape instead; borrowed when there is none.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// [`terminal_safe`], owned: a table cell.
pub fn cell(s: &str) -> String {
    terminal_safe(s).into_owned()
}

/// A path, shown terminal-safe.
pub fn safe_path(p: &Path) -> String {
    terminal_safe(&p.display().to_string()).into_owned()
}

/// A table without borders, in ASCII: columns left-aligned and separated
/// by one space, except the `right` ones (numbers). Cells are shown as
/// given: callers pass them through [`terminal_safe`].
pub fn table(header: &[&str], right: &[usize]) -> Table {
    let mut t = Table::new();
    t.load_preset(presets::NOTHING).set_content_arrangement(ContentArrangement::Disabled).set_header(header.to_vec());
    for i in 0..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_padding((0, 1));
            if right.contains(&i) {
                c.set_cell_alignment(CellAlignment::Right);
            }
        }
    }
    t
}

/// Write `t`, one line per row, without trailing spaces.
pub fn write_table(w: &mut dyn Write, t: &Table) -> io::Result<()> {
    for line in t.lines() {
        writeln!(w, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_escaped() {
        assert!(matches!(terminal_safe("plain — text µs"), Cow::Borrowed(_)));
        assert_eq!(terminal_safe("a\x1b[2Jb"), "a\\u{1b}[2Jb");
        assert_eq!(terminal_safe("x\ny\r\t"), "x\\u{a}y\\u{d}\\u{9}");
        assert_eq!(terminal_safe("\u{9b}31m\u{7f}"), "\\u{9b}31m\\u{7f}");
        assert_eq!(terminal_safe("abc\u{202e}fed"), "abc\\u{202e}fed");
    }

    #[test]
    fn tables_align_like_formatted_columns() {
        let mut t = table(&["NAME", "N"], &[1]);
        t.add_row(vec!["a", "10"]);
        t.add_row(vec!["long name", "2"]);
        let mut out = Vec::new();
        write_table(&mut out, &t).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "NAME       N\na         10\nlong name  2\n");
    }
}
