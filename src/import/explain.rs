//! `import --explain`: for one file, every format's claim with its line,
//! the version, the blocks of lines that give rows, and why the file would
//! be refused; nothing is written.

use std::path::Path;

use serde::Serialize;

use super::detect::{named, quote_line, version, Claim, Named};

/// One format's answer to a file.
#[derive(Debug, Clone, Serialize)]
pub struct FormatAnswer {
    pub format: &'static str,
    /// Its layout claims the file.
    pub claim: Option<Claim>,
    /// No layout claims it, but a line names the tool.
    pub named: Option<Named>,
    /// The line of the claim (or of the name), as printed.
    pub quote: Option<String>,
}

/// The version a file states: as the importer read it, or, where it did
/// not, as a version-like token on a line naming the tool.
#[derive(Debug, Clone, Serialize)]
pub struct Version {
    pub text: String,
    /// The line it was found on, where known.
    pub line: Option<usize>,
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
    pub version: Option<Version>,
    pub blocks: Vec<Block>,
    pub warnings: Vec<String>,
    /// Why it was refused.
    pub error: Option<String>,
}

impl Explanation {
    /// A file that could not be read at all.
    pub fn refused(path: &Path, why: String) -> Explanation {
        Explanation {
            file: path.to_path_buf(),
            lines: 0,
            answers: Vec::new(),
            read_as: None,
            version: None,
            blocks: Vec::new(),
            warnings: Vec::new(),
            error: Some(why),
        }
    }
}

/// How `path` would be imported, without importing it.
pub fn explain(path: &Path, text: &str, tool: Option<&str>) -> Explanation {
    let all = super::formats();
    let mut answers: Vec<FormatAnswer> = all
        .iter()
        .map(|f| {
            let claim = f.sniff(text);
            let named = if claim.is_none() { named(f.as_ref(), text) } else { None };
            FormatAnswer { format: f.name(), claim, named, quote: None }
        })
        .collect();
    // A tool's name matters only where no layout claims the file.
    if answers.iter().any(|a| a.claim.is_some()) {
        answers.iter_mut().for_each(|a| a.named = None);
    }
    for a in &mut answers {
        let line = a.claim.as_ref().map(|c| c.line).or(a.named.as_ref().map(|n| n.line));
        a.quote = line.and_then(|l| quote_line(text, l));
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
    let (warnings, error, read) = match super::parse_each(path, text, tool, &mut |r| add_to_blocks(&mut blocks, &r)) {
        Ok(p) => (p.warnings, None, p.tool_version),
        Err(e) => (Vec::new(), Some(e.to_string()), None),
    };
    // What the importer read wins; the token on a line naming the tool is
    // the fallback (a refused file, or a format that reads no version).
    let version = read.map(|text| Version { text, line: None }).or_else(|| {
        chosen.and_then(|f| version(f.as_ref(), text)).map(|(line, text)| Version { text, line: Some(line) })
    });
    Explanation {
        file: path.to_path_buf(),
        lines: text.lines().count(),
        answers,
        read_as: chosen.map(|f| f.name().to_string()),
        version,
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
