//! Which importer reads a file, and why.
//!
//! Each format's `sniff` returns a [`Claim`]: the line that told it and
//! what that line showed. A file no layout claims, but which names a tool
//! (its banner, its binary: [`Format::markers`]), is tried as that tool and
//! refused naming the tool, the version it seems to be and the first line
//! that did not fit, never as "unknown format". [`explain`] prints all of
//! it for `import --explain`.

use std::path::Path;

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

/// A line naming a tool, where no layout of it claimed the file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Named {
    /// The format whose marker it holds.
    pub tool: &'static str,
    pub marker: &'static str,
    pub line: usize,
}

/// The first line of `text` holding one of `f`'s markers.
pub fn named(f: &dyn Format, text: &str) -> Option<Named> {
    let markers = f.markers();
    if markers.is_empty() {
        return None;
    }
    text.lines().take(MARKER_LINES).enumerate().find_map(|(i, l)| {
        markers.iter().find(|m| l.contains(*m)).map(|m| Named { tool: f.name(), marker: m, line: i + 1 })
    })
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
    let lines = || text.lines().take(MARKER_LINES).enumerate();
    lines()
        .filter_map(|(i, l)| marker(l).map(|m| (i, l, Some(m))))
        .chain(
            lines()
                .filter(|(_, l)| l.trim_start().to_ascii_lowercase().starts_with("version"))
                .map(|(i, l)| (i, l, None)),
        )
        .find_map(|(i, l, m)| version_token(l, m).map(|v| (i + 1, v)))
}

/// A version token of `line`: digits and dots with at least one dot,
/// written `v1.2`, or following the word `version` or the tool's name
/// `marker`.
fn version_token(line: &str, marker: Option<&str>) -> Option<String> {
    let is_version = |t: &str| {
        t.contains('.')
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

/// Tools benchbook has no importer for, by a line only they print: their
/// output is refused naming the tool and what to do instead.
const NOT_READ: [(&str, &str, &str); 7] = [
    (
        "HPL",
        "HPLinpack",
        "HPL's GFLOPS are not a benchmark benchbook's write-ups use; `benchbook run gemm` measures GEMM throughput",
    ),
    (
        "HPL",
        "T/V                N    NB",
        "HPL's GFLOPS are not a benchmark benchbook's write-ups use; `benchbook run gemm` measures GEMM throughput",
    ),
    (
        "gpu-burn",
        "gpu_burn",
        "gpu-burn is a stress test that prints no benchmark table; `benchbook fleet gate` checks a node's health",
    ),
    ("MLPerf's mllog", ":::MLLOG", "MLPerf results are read from the submission's result tables, not its log"),
    (
        "CUDA samples' bandwidthTest",
        "[CUDA Bandwidth Test]",
        "`benchbook run h2d d2h memcpy --backend cuda` measures the same copies, or import nvbandwidth's output",
    ),
    (
        "CUDA samples' p2pBandwidthLatencyTest",
        "P2P (Peer-to-Peer) GPU Bandwidth Latency Test",
        "`benchbook run memcpy-peer --backend cuda` measures peer copies, or import nvbandwidth's output",
    ),
    (
        "McCalpin STREAM",
        "STREAM version $Revision",
        "`benchbook run stream` measures host memory bandwidth; BabelStream's output imports",
    ),
];

/// A tool benchbook does not read, named by a line of `text`: its name,
/// the line, and what to do instead.
pub fn not_read(text: &str) -> Option<(&'static str, usize, &'static str)> {
    text.lines().take(MARKER_LINES).enumerate().find_map(|(i, l)| {
        NOT_READ.iter().find(|(_, m, _)| l.contains(m)).map(|(tool, _, instead)| (*tool, i + 1, *instead))
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

/// One format's answer to a file.
#[derive(Debug, Clone, Serialize)]
pub struct FormatAnswer {
    pub format: &'static str,
    /// Its layout claims the file.
    pub claim: Option<Claim>,
    /// No layout claims it, but a line names the tool.
    pub named: Option<Named>,
}

/// A run of consecutive records of one kind: which lines gave them.
#[derive(Debug, Clone, Serialize)]
pub struct Block {
    pub first_line: usize,
    pub last_line: usize,
    /// `bench op [variant] [dtype]`, or the metric's name.
    pub what: String,
    pub records: usize,
}

/// What `import --explain` prints for one file.
#[derive(Debug, Clone, Serialize)]
pub struct Explanation {
    pub file: std::path::PathBuf,
    pub lines: usize,
    /// Every format, in detection order.
    pub answers: Vec<FormatAnswer>,
    /// The format that read (or tried to read) it.
    pub read_as: Option<String>,
    pub version: Option<(usize, String)>,
    pub blocks: Vec<Block>,
    pub warnings: Vec<String>,
    /// Why it was refused.
    pub error: Option<String>,
}

/// How `path` would be imported, without importing it.
pub fn explain(path: &Path, text: &str, tool: Option<&str>) -> Explanation {
    let all = super::formats();
    let answers: Vec<FormatAnswer> = all
        .iter()
        .map(|f| {
            let claim = f.sniff(text);
            let named = if claim.is_none() { named(f.as_ref(), text) } else { None };
            FormatAnswer { format: f.name(), claim, named }
        })
        .collect();
    // A tool's name matters only where no layout claims the file.
    let mut answers = answers;
    if answers.iter().any(|a| a.claim.is_some()) {
        answers.iter_mut().for_each(|a| a.named = None);
    }
    let chosen = match tool {
        Some(t) => all.iter().find(|f| f.name() == t),
        None => answers
            .iter()
            .position(|a| a.claim.is_some())
            .or_else(|| answers.iter().position(|a| a.named.is_some()))
            .map(|i| &all[i]),
    };
    let mut blocks: Vec<Block> = Vec::new();
    let (warnings, error) = match super::parse_each(path, text, tool, &mut |r| add_to_blocks(&mut blocks, &r)) {
        Ok(p) => (p.warnings, None),
        Err(e) => (Vec::new(), Some(e.to_string())),
    };
    Explanation {
        file: path.to_path_buf(),
        lines: text.lines().count(),
        answers,
        read_as: chosen.map(|f| f.name().to_string()),
        version: chosen.and_then(|f| version(f.as_ref(), text)),
        blocks,
        warnings,
        error,
    }
}

/// Records of one bench and op (or of one tool's metrics) on lines at most
/// [`BLOCK_GAP`] apart are one block; its `what` lists their variants.
fn add_to_blocks(blocks: &mut Vec<Block>, r: &super::Record) {
    let p = &r.params;
    let kind = match &p.metric {
        Some(_) => format!("{} metrics", p.bench),
        None => format!("{} {}", p.bench, p.op),
    };
    let detail: Vec<&str> = [p.variant.as_deref(), p.dtype.as_deref()].into_iter().flatten().collect();
    let detail = detail.join(" ");
    match blocks.last_mut() {
        Some(b)
            if b.what.starts_with(&kind) && r.line <= b.last_line + BLOCK_GAP && r.line + BLOCK_GAP >= b.first_line =>
        {
            b.first_line = b.first_line.min(r.line);
            b.last_line = b.last_line.max(r.line);
            b.records += 1;
            if !detail.is_empty() && !b.what.contains(&detail) {
                b.what = if b.what == kind {
                    format!("{kind} ({detail})")
                } else {
                    format!("{}; {detail})", b.what.trim_end_matches(')'))
                };
            }
        }
        _ => {
            let what = if detail.is_empty() || p.metric.is_some() { kind } else { format!("{kind} ({detail})") };
            blocks.push(Block { first_line: r.line, last_line: r.line, what, records: 1 });
        }
    }
}

/// Lines between two records of one block at most (a launcher's chatter).
const BLOCK_GAP: usize = 3;

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
