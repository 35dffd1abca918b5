//! What launchers put in front of a tool's lines: Open MPI's
//! `--tag-output` (`[1,0]<stdout>:`), Ray-based launchers' (SkyPilot)
//! `(head, rank=0, pid=3808) `, and `srun -l`'s task label (`  0: `);
//! and what loggers put around their fields (ANSI colours). Formats read
//! the lines without them.

use std::borrow::Cow;

/// Lines with 1-based numbers, launcher tags removed: Open MPI's
/// `--tag-output` writes `[1,0]<stdout>:` before each line, Ray-based
/// launchers (SkyPilot) `(head, rank=0, pid=3808) `, and both can stack.
pub(crate) fn lines(text: &str) -> Vec<(usize, &str)> {
    text.lines().enumerate().map(|(i, l)| (i + 1, strip_tag(strip_ray_prefix(l)))).collect()
}

fn strip_ray_prefix(line: &str) -> &str {
    if line.starts_with('(') {
        if let Some(end) = line.find(") ") {
            if end < 120 && line[..end].contains("pid=") {
                return &line[end + 2..];
            }
        }
    }
    line
}

fn strip_tag(line: &str) -> &str {
    if line.starts_with('[') {
        for tag in [">:", "]:"] {
            if let Some(pos) = line.find(tag) {
                let head = &line[..pos];
                if pos < 40 && (head.contains("<stdout") || head.contains("<stderr") || head.contains(',')) {
                    return &line[pos + tag.len()..];
                }
            }
        }
    }
    line
}

/// `text` without ANSI escape sequences (`ESC [ ... letter`).
pub(crate) fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// The length of an `srun -l` task label at the start of `line`: the task
/// id right-aligned in a field (`" 0: "`, `"12: "`), then `": "`, or `":"`
/// at the end of an empty line.
fn task_label_len(line: &str) -> Option<usize> {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || digits > 6 {
        return None;
    }
    let rest = &t[digits..];
    let colon = if rest.starts_with(": ") {
        2
    } else if rest.trim_end() == ":" {
        1
    } else {
        return None;
    };
    Some(line.len() - t.len() + digits + colon)
}

/// `text` without `srun -l` task labels, and how many lines had one. The
/// labels are removed only when at least 4 in 5 lines have one (a log
/// copied into an issue may lose the label of its first line, or gain an
/// elision `...` or a line of prose), so a table whose rows happen to
/// start `1: ` is left alone.
pub(crate) fn strip_task_labels(text: &str) -> (Cow<'_, str>, Option<usize>) {
    let nonblank = text.lines().filter(|l| !l.trim().is_empty()).count();
    let labelled = text.lines().filter(|l| task_label_len(l).is_some()).count();
    if labelled < 3 || labelled * 5 < nonblank * 4 {
        return (Cow::Borrowed(text), None);
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        match task_label_len(line) {
            Some(n) => out.push_str(&line[n..]),
            None => out.push_str(line),
        }
    }
    (Cow::Owned(out), Some(labelled))
}

/// `text` without a markdown fence glued to the end of its last non-empty
/// line (a log pasted into an issue or a README: `mfu: 23.46%```), and
/// that line's number when there was one. A line that is only a fence is
/// left as it is: the formats skip lines they do not know.
pub(crate) fn unglue_fence(text: &str) -> (std::borrow::Cow<'_, str>, Option<usize>) {
    let trimmed = text.trim_end();
    let Some(start) = trimmed.rfind('\n').map_or(Some(0), |i| Some(i + 1)) else { return (text.into(), None) };
    let last = &trimmed[start..];
    let body = last.trim_end_matches('`');
    if last.len() - body.len() < 3 || body.trim().is_empty() {
        return (text.into(), None);
    }
    let line = trimmed[..start].matches('\n').count() + 1;
    (format!("{}{}\n", &trimmed[..start], body.trim_end()).into(), Some(line))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launcher_tags_are_stripped() {
        assert_eq!(strip_tag("[1,0]<stdout>:#  size"), "#  size");
        assert_eq!(strip_tag("[1,0]<stderr>: x"), " x");
        assert_eq!(strip_tag("[not a tag] text"), "[not a tag] text");
        assert_eq!(strip_tag(strip_ray_prefix("(head, rank=0, pid=38) [1,0]<stdout>:# x")), "# x");
    }

    #[test]
    fn task_labels_go_only_when_nearly_every_line_has_one() {
        let log = " 0: # nThread 1\n 0: #  size\n 0:      8388608  2097152\n 0:\n12: # Avg bus bandwidth : 1\n";
        let (text, n) = strip_task_labels(log);
        assert_eq!(n, Some(5));
        assert_eq!(text, "# nThread 1\n#  size\n     8388608  2097152\n\n# Avg bus bandwidth : 1\n");
        // A first line that lost its label is read as it is.
        let (text, _) = strip_task_labels("# nThread 1\n0: a\n0: b\n0: c\n0: d\n0: e\n0: f\n0: g\n0: h\n0: i\n");
        assert!(text.starts_with("# nThread 1\na\nb\n"));
        // Rows that happen to start `N: `, among lines that do not, stay.
        let table = "Device 0: A100\n1: x\n2: y\n3: z\nSUM 4\nother\n";
        assert_eq!(strip_task_labels(table), (Cow::Borrowed(table), None));
        // Times of day are not labels.
        assert_eq!(task_label_len("12:34:56 step 1"), None);
        assert_eq!(task_label_len("  3: x"), Some(5));
    }
}

#[cfg(test)]
mod fence_tests {
    #[test]
    fn a_fence_glued_to_the_last_line_is_cut_and_its_line_named() {
        let (t, line) = super::unglue_fence("step: 1  loss: 9.1\nstep: 2  mfu: 23.46%```\n");
        assert_eq!((t.as_ref(), line), ("step: 1  loss: 9.1\nstep: 2  mfu: 23.46%\n", Some(2)));
        // A fence on a line of its own, or no fence: unchanged.
        for text in ["step: 1  loss: 9.1\n```\n", "step: 1  loss: 9.1\n", "", "```"] {
            assert_eq!(super::unglue_fence(text), (text.into(), None), "{text:?}");
        }
    }
}
