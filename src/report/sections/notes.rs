//! The narrative of a report (`report --notes FILE.md`): the prose a
//! write-up has around its numbers. Each `## Heading` of the file becomes a
//! section placed where the write-ups put it: introduction first, setup
//! after the system table, discussion after the results, limitations last.
//! Text before the first heading is the introduction. Templates:
//! `sections/notes.md` (introduction and setup, selected by place) and
//! the end of each kind template.
//!
//! The notes are the user's Markdown: they keep their formatting, and raw
//! HTML in them is escaped like any other input (see `render::markdown`).

use std::path::Path;

use serde::Serialize;

use crate::error::{Error, Result};

/// One section of the notes.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct NotePart {
    pub title: String,
    /// Markdown, its own headings demoted below the section's.
    pub body: String,
}

/// The notes, by where they go.
#[derive(Debug, Clone, Serialize, Default, PartialEq)]
pub struct Notes {
    pub file: Option<String>,
    pub introduction: Vec<NotePart>,
    pub setup: Vec<NotePart>,
    pub discussion: Vec<NotePart>,
    pub limitations: Vec<NotePart>,
}

#[derive(Clone, Copy)]
enum Place {
    Introduction,
    Setup,
    Discussion,
    Limitations,
}

fn place(title: &str) -> Place {
    let t = title.to_lowercase();
    let any = |words: &[&str]| words.iter().any(|w| t.contains(w));
    if any(&["introduction", "overview", "summary", "background", "motivation"]) {
        Place::Introduction
    } else if any(&["setup", "set-up", "hardware", "system", "configuration", "environment", "testbed"]) {
        Place::Setup
    } else if any(&["limitation", "caveat", "threats", "known issue"]) {
        Place::Limitations
    } else {
        Place::Discussion
    }
}

impl Notes {
    /// Split Markdown notes at their `## ` headings.
    pub fn parse(text: &str) -> Notes {
        let mut notes = Notes::default();
        let mut title: Option<String> = None;
        let mut body = String::new();
        let flush = |title: Option<String>, body: &mut String, notes: &mut Notes| {
            let text = std::mem::take(body).trim().to_string();
            if text.is_empty() && title.is_none() {
                return;
            }
            let part = NotePart { title: title.clone().unwrap_or_else(|| "Introduction".into()), body: text };
            match title.as_deref().map(place).unwrap_or(Place::Introduction) {
                Place::Introduction => notes.introduction.push(part),
                Place::Setup => notes.setup.push(part),
                Place::Discussion => notes.discussion.push(part),
                Place::Limitations => notes.limitations.push(part),
            }
        };
        let mut fence = false;
        for line in text.lines() {
            if line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~") {
                fence = !fence;
            }
            if !fence {
                if let Some(h) = line.strip_prefix("## ") {
                    flush(title.take(), &mut body, &mut notes);
                    title = Some(h.trim().to_string());
                    continue;
                }
                if line.starts_with("# ") {
                    // The file's own title: the report has one already.
                    continue;
                }
                // Deeper headings sit under the section's `##`.
                if line.starts_with("###") {
                    body += line;
                    body.push('\n');
                    continue;
                }
            }
            body += line;
            body.push('\n');
        }
        flush(title, &mut body, &mut notes);
        notes
    }

    /// Read a notes file; the error names it.
    pub fn read(path: &Path) -> Result<Notes> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let mut n = Notes::parse(&text);
        n.file = Some(path.display().to_string());
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headings_go_where_the_write_ups_put_them() {
        let n = Notes::parse(
            "# My title\nWhy we ran this.\n\n## Hardware\n8 GPUs.\n\n## What we saw\nIt was fast.\n\
             ```\n## not a heading\n```\n## Limitations\nOne node only.\n### Detail\nx\n",
        );
        assert_eq!(n.introduction, [NotePart { title: "Introduction".into(), body: "Why we ran this.".into() }]);
        assert_eq!(n.setup[0].title, "Hardware");
        assert_eq!(n.discussion[0].title, "What we saw");
        assert!(n.discussion[0].body.contains("## not a heading"), "{:?}", n.discussion);
        assert_eq!(n.limitations[0].title, "Limitations");
        assert!(n.limitations[0].body.contains("### Detail"));
    }

    #[test]
    fn an_empty_file_has_no_sections_and_a_missing_one_is_named() {
        assert_eq!(Notes::parse("\n\n"), Notes::default());
        let e = Notes::read(Path::new("/nonexistent/notes.md")).unwrap_err().to_string();
        assert!(e.contains("/nonexistent/notes.md"), "{e}");
    }
}
