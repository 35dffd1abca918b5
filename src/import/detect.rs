//! Which importer reads a file, and why.
//!
//! Each format's `sniff` returns a [`Claim`]: the line that told it and
//! what that line showed. A file no layout claims, but which names a tool
//! (its banner, its binary: [`Format::markers`]), is tried as that tool and
//! refused naming the tool, the version it seems to be and the first line
//! that did not fit, never as "unknown format". [`super::explain`]
//! prints all of it for `import --explain`.

use serde::Serialize;

use super::Format;

/// Why a format claims a text: the 1-based line that told, and what it
/// showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Claim {
    pub line: usize,
    pub why: &'static str,
}

impl Claim {
    /// A claim at the first line for which `pred` holds.
    pub fn find(text: &str, why: &'static str, pred: impl Fn(&str) -> bool) -> Option<Claim> {
        text.lines().position(pred).map(|i| Claim { line: i + 1, why })
    }
}

/// `cond.claim(text, why, pred)`: [`Claim::find`] where the whole text
/// holds what the layout needs besides its claiming line (`cond`), else no
/// claim.
pub(crate) trait ClaimIf {
    fn claim(self, text: &str, why: &'static str, pred: impl Fn(&str) -> bool) -> Option<Claim>;
}

impl ClaimIf for bool {
    fn claim(self, text: &str, why: &'static str, pred: impl Fn(&str) -> bool) -> Option<Claim> {
        if self {
            Claim::find(text, why, pred)
        } else {
            None
        }
    }
}

/// A line naming a tool, where no layout of it claimed the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    pub marker: &'static str,
    pub line: usize,
}

/// The first line of `text` holding one of `f`'s markers.
pub fn named(f: &dyn Format, text: &str) -> Option<Named> {
    let markers = f.markers();
    if markers.is_empty() {
        return None;
    }
    text.lines()
        .take(MARKER_LINES)
        .enumerate()
        .find_map(|(i, l)| markers.iter().find(|m| l.contains(*m)).map(|m| Named { marker: m, line: i + 1 }))
}

/// How far into a file a tool's name is looked for (a banner or a command
/// line comes first; a 50 MiB log is not scanned twice for it).
const MARKER_LINES: usize = 2_000;

/// The version `text` seems to be of the tool `f` reads, with its line,
/// among the first lines: on a line that names the tool, a version-like
/// token (`2.13.9`) right after the name, after the word `version`, or
/// written `v7.3`; else the same on a line that starts with `Version`
/// (BabelStream's). Other numbers (`# Avg bus bandwidth : 0.51`) are not
/// versions.
pub fn version(f: &dyn Format, text: &str) -> Option<(usize, String)> {
    let marker = |l: &str| f.markers().iter().copied().find(|m| l.contains(m));
    let lines = || text.lines().take(MARKER_LINES).enumerate().map(|(i, l)| (i, super::strip_ansi(l)));
    let names_it = lines().any(|(_, l)| marker(&l).is_some());
    lines()
        .filter_map(|(i, l)| marker(&l).map(|m| (i, l.clone(), Some(m))))
        .chain(
            lines()
                .filter(|(_, l)| names_it && l.trim_start().to_ascii_lowercase().starts_with("version"))
                .map(|(i, l)| (i, l, None)),
        )
        .find_map(|(i, l, m)| version_token(&l, m).map(|v| (i + 1, v)))
}

/// The first line after line `from` that is neither blank nor a `#`
/// comment, quoted.
pub(crate) fn first_line_after(text: &str, from: usize) -> Option<(usize, String)> {
    let (i, _) =
        text.lines().enumerate().skip(from).find(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))?;
    quote_line(text, i + 1).map(|q| (i + 1, q))
}

/// Byte offset where line `n` (1-based) of `text` starts.
fn line_start(text: &str, n: usize) -> usize {
    text.split_inclusive('\n').take(n.saturating_sub(1)).map(str::len).sum()
}

/// What `f` reads from `part` on its own: its rows and their first and
/// last line, or nothing when it reads none or fails.
fn rows_alone(f: &dyn Format, part: &str) -> Option<(usize, (usize, usize))> {
    let mut n = 0usize;
    let mut lines: Option<(usize, usize)> = None;
    f.parse_each(part, "", &mut |r| {
        n += 1;
        lines = Some(lines.map_or((r.line, r.line), |(a, b)| (a.min(r.line), b.max(r.line))));
    })
    .ok()?;
    lines.map(|l| (n, l))
}

/// A hint for a refusal: another tool's output starts after line `from`
/// (where `f` claimed the file), read on its own from its claiming line.
pub(crate) fn later_tool(text: &str, f: &dyn Format, from: usize) -> Option<String> {
    super::formats().into_iter().filter(|g| g.name() != f.name()).find_map(|g| {
        let c = g.sniff(text).filter(|c| c.line > from)?;
        let (n, _) = rows_alone(g.as_ref(), &text[line_start(text, c.line)..])?;
        Some(format!(
            "; from line {} the file holds {} output ({n} rows read on their own): a file holding two tools' output must be split",
            c.line,
            g.name()
        ))
    })
}

/// Another tool's output in the same file: the text before or after
/// `span` (the lines the chosen format read) that another format claims
/// and reads rows from on its own. Its name, lines and row count.
pub(crate) fn second_tool(
    all: &[Box<dyn Format>],
    chosen: &dyn Format,
    text: &str,
    span: (usize, usize),
) -> Option<(&'static str, (usize, usize), usize)> {
    let parts =
        [(&text[..line_start(text, span.0)], 0), (&text[line_start(text, span.1 + 1).min(text.len())..], span.1)];
    all.iter().filter(|f| f.name() != chosen.name()).find_map(|f| {
        parts.iter().filter(|(part, _)| f.sniff(part).is_some()).find_map(|&(part, offset)| {
            let (n, (a, b)) = rows_alone(f.as_ref(), part)?;
            Some((f.name(), (a + offset, b + offset), n))
        })
    })
}

/// A version token of `line`: digits and dots with at least one dot,
/// written `v1.2`, or following the word `version` or the tool's name
/// `marker`.
fn version_token(line: &str, marker: Option<&str>) -> Option<String> {
    // Two dots at most: `172.81.0.118` is an address, not a version.
    let is_version = |t: &str| {
        t.contains('.')
            && t.matches('.').count() <= 2
            && t.starts_with(|c: char| c.is_ascii_digit())
            && t.chars().all(|c| c.is_ascii_digit() || c == '.')
            && !t.contains("..")
    };
    let after_marker = marker.and_then(|m| line.find(m).map(|at| &line[at + m.len()..]));
    let toks: Vec<&str> = line
        .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '(' | ')' | '=' | '[' | ']' | '"' | '/'))
        .filter(|t| !t.is_empty())
        .collect();
    let first_after = after_marker
        .and_then(|rest| rest.split(|c: char| c.is_whitespace() || c == ',').find(|t| !t.is_empty()))
        .map(|t| t.trim_end_matches('.'))
        .filter(|t| is_version(t));
    let said = toks.windows(2).find_map(|w| {
        let v = w[1].trim_start_matches(['v', 'V']).trim_end_matches('.');
        (w[0].eq_ignore_ascii_case("version") && is_version(v)).then_some(v)
    });
    let prefixed = toks.iter().find_map(|t| {
        let v = t.strip_prefix(['v', 'V'])?.trim_end_matches('.');
        is_version(v).then_some(v)
    });
    first_after.or(said).or(prefixed).map(str::to_string)
}

/// Tools benchbook has no importer for, by lines only they print: their
/// output is refused naming the tool and what to do instead.
const NOT_READ: [(&str, &[&str], &str); 6] = [
    (
        "HPL",
        &["HPLinpack", "T/V                N    NB"],
        "HPL's GFLOPS are not a benchmark benchbook's write-ups use; `benchbook run gemm` measures GEMM throughput",
    ),
    (
        "gpu-burn",
        // Its binary, or its progress lines when no command line names it.
        &["gpu_burn", "proc'd: "],
        "gpu-burn is a stress test that prints no benchmark table; `benchbook fleet gate` checks a node's health",
    ),
    ("MLPerf's mllog", &[":::MLLOG"], "MLPerf results are read from the submission's result tables, not its log"),
    (
        "CUDA samples' bandwidthTest",
        &["[CUDA Bandwidth Test]"],
        "`benchbook run h2d d2h memcpy --backend cuda` measures the same copies, or import nvbandwidth's output",
    ),
    (
        "CUDA samples' p2pBandwidthLatencyTest",
        &["P2P (Peer-to-Peer) GPU Bandwidth Latency Test"],
        "`benchbook run memcpy-peer --backend cuda` measures peer copies, or import nvbandwidth's output",
    ),
    (
        "McCalpin STREAM",
        &["STREAM version $Revision"],
        "`benchbook run stream` measures host memory bandwidth; BabelStream's output imports",
    ),
];

/// A tool benchbook does not read, named by a line of `text`: its name,
/// the line, and what to do instead.
pub fn not_read(text: &str) -> Option<(&'static str, usize, &'static str)> {
    text.lines().take(MARKER_LINES).enumerate().find_map(|(i, l)| {
        NOT_READ
            .iter()
            .find(|(_, marks, _)| marks.iter().any(|m| l.contains(m)))
            .map(|(tool, _, instead)| (*tool, i + 1, *instead))
    })
}

/// ` 2.13.9` after a tool's name, or nothing.
pub(crate) fn version_suffix(v: &Option<(usize, String)>) -> String {
    v.as_ref().map(|(_, v)| format!(" {v}")).unwrap_or_default()
}

/// A line quoted in a message: trimmed, at most 100 characters.
pub(crate) fn quote_line(text: &str, line: usize) -> Option<String> {
    let l = text.lines().nth(line.checked_sub(1)?)?.trim();
    (!l.is_empty()).then(|| {
        let mut q: String = l.chars().take(100).collect();
        if q.len() < l.len() {
            q.push('…');
        }
        q
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_tokens() {
        let v = |l: &str, m: Option<&str>| version_token(l, m);
        assert_eq!(v("# OSU NCCL-CUDA Bandwidth Test v7.3", Some("# OSU")).as_deref(), Some("7.3"));
        assert_eq!(v("nvbandwidth Version: v0.7", Some("nvbandwidth")).as_deref(), Some("0.7"));
        assert_eq!(v("# nccl-tests version 2.13.9 nccl-headers=22105", None).as_deref(), Some("2.13.9"));
        assert_eq!(v("RocmBandwidthTest Version: 2.6.0", Some("RocmBandwidthTest")).as_deref(), Some("2.6.0"));
        assert_eq!(v("TransferBench v1.50 (with NIC support)", None).as_deref(), Some("1.50"));
        assert_eq!(
            v("# Intel(R) MPI Benchmarks 2021.2, MPI-1 part", Some("Intel(R) MPI Benchmarks")).as_deref(),
            Some("2021.2")
        );
        assert_eq!(v("# Avg bus bandwidth    : 0.507636", Some("# Avg bus bandwidth")), None);
        assert_eq!(v("# Using devices", None), None);
        assert_eq!(v("version 1..2 b", None), None);
        assert_eq!(v("~# ib_read_lat 172.81.0.118", Some("ib_read_lat")), None);
    }

    #[test]
    fn quoted_lines_are_cut() {
        let long = "x".repeat(150);
        let q = quote_line(&format!("a\n{long}\n"), 2).unwrap();
        assert_eq!(q.chars().count(), 101);
        assert_eq!(quote_line("a\n\n", 2), None);
        assert_eq!(quote_line("a", 0), None);
    }
}
