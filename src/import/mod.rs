//! Importers: what other tools print becomes benchbook rows, with every
//! unit conversion and byte-counting rule written down on the row.
//!
//! Each format is one file with one [`Format`]: a cheap `sniff` for
//! auto-detection and a `parse` that turns text into [`Record`]s or a
//! [`ParseError`] naming the line and what was expected. Conventions:
//! - time → `seconds` per operation × `iterations` (the tool's average over
//!   its iterations, or one operation when it does not say);
//! - a tool that prints only a rate gets its time derived from bytes / rate,
//!   and the row's note says so;
//! - GB/s is 10^9 bytes/s; MB/s 10^6; MiB/s 2^20; Gb/s 10^9 bits/s;
//! - serving and training tools (vLLM, Megatron) give named metrics
//!   (schema v4): each number keeps its unit and direction, and the point's
//!   parameters (model, request rate, iteration) are named axes;
//! - `bytes_copied` is the byte count a tool's own bandwidth divides by
//!   (algbw for collectives, with `bw_factor` for busbw); `bytes_moved` is
//!   filled only where read + written is known (BabelStream, memcpy).

pub mod babelstream;
mod babelstream_units;
mod command;
pub mod cuda_copy_csv;
pub mod deepspeed_comm;
pub mod detect;
mod explain;
mod gate;
mod helpers;
pub mod imb;
mod launcher;
pub mod megatron;
pub mod nccl_json;
pub mod nccl_tests;
pub mod nvbandwidth;
mod nvbandwidth_json;
pub mod osu;
mod osu_title;
pub mod perftest;
pub mod rccl_json;
pub mod rocm_bandwidth;
pub mod seed_json;
pub mod sglang;
mod source;
#[cfg(test)]
mod test_format;
pub mod torch_allreduce;
pub mod torchtitan;
pub mod transferbench;
pub mod trtllm;
pub mod vllm;
pub mod vllm_serve_2023;
pub mod vllm_throughput;

pub(crate) use command::command_line;
pub use detect::Claim;
pub(crate) use detect::ClaimIf;
pub use explain::{explain, Explanation};
use gate::possible;
pub use gate::{metric_bound, MAX_GB_PER_S};
pub(crate) use helpers::*;
pub(crate) use launcher::{lines, strip_ansi};
pub use source::ImportSource;

use std::path::Path;

use crate::error::{Error, Result};
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub use crate::vocab::accounting::bus_factor;

/// One measurement read from a tool's output.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub params: Point,
    pub seconds_per_op: f64,
    pub iterations: Option<u64>,
    pub device: Option<String>,
    pub host: Option<String>,
    pub status: Status,
    /// A named metric's value (schema v4), in `params.unit`; `params.metric`
    /// is set and `seconds_per_op` is unused.
    pub value: Option<f64>,
    /// How the numbers were read and converted.
    pub note: String,
    /// 1-based line in the source file.
    pub line: usize,
}

/// What one file held.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    /// The format's name, e.g. `nccl-tests`.
    pub tool: String,
    /// How many records the file gave that passed the gate: `records.len()`
    /// where they are kept, and also where [`parse_each`] handed them out
    /// one at a time instead (an import streams them to the archive).
    pub record_count: usize,
    /// The `backend` column of its rows (`nccl`, `rdma`, `mpi`, ...).
    pub backend: String,
    pub tool_version: Option<String>,
    /// The command line that produced the output, when the file holds it.
    pub command: Option<String>,
    /// The tool's own settings line (nccl-tests' `# nThread ...`).
    pub settings: Option<String>,
    /// The link the log names (perftest's `Link type : IB` and device:
    /// `IB (mlx5_0)`): its type only, as no log states the rate.
    pub link: Option<String>,
    pub records: Vec<Record>,
    pub warnings: Vec<String>,
    /// The write-up family its format declares ([`Format::family`]).
    pub family: Option<Family>,
}

/// A parse failure at a line.
#[derive(Debug, Clone, PartialEq)]
pub struct ParseError {
    pub line: usize,
    pub message: String,
}

impl ParseError {
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        ParseError { line, message: message.into() }
    }
}

/// A foreign output format.
pub trait Format {
    /// Name for `--tool` and the `source` column.
    fn name(&self) -> &'static str;
    /// One line for `--help`.
    fn describe(&self) -> &'static str;
    /// The write-up its rows belong to (the report kind an import of it
    /// gets), or `None` for the generic report.
    fn family(&self) -> Option<Family>;
    /// Does `text` look like this format? The line that told, and why.
    fn sniff(&self, text: &str) -> Option<Claim>;
    /// Strings that name the tool (its banner, its binaries): a file that
    /// holds one but no layout `sniff` knows is tried as this tool and
    /// refused naming it ([`detect`]).
    fn markers(&self) -> &'static [&'static str] {
        &[]
    }
    /// Parse the whole text. `file_name` may hint at what the file holds.
    fn parse(&self, text: &str, file_name: &str) -> std::result::Result<Parsed, ParseError>;
    /// Parse, handing each record to `each` as soon as it is read, so that
    /// a file of millions of records never holds them all; the returned
    /// [`Parsed`] keeps no records. Formats whose logs grow large (one
    /// line per result) override it; the others parse whole.
    fn parse_each(
        &self,
        text: &str,
        file_name: &str,
        each: &mut dyn FnMut(Record),
    ) -> std::result::Result<Parsed, ParseError> {
        let mut p = self.parse(text, file_name)?;
        p.records.drain(..).for_each(each);
        Ok(p)
    }
}

/// [`Format::parse`] for a format that implements [`Format::parse_each`].
pub(crate) fn collect(f: &dyn Format, text: &str, file_name: &str) -> std::result::Result<Parsed, ParseError> {
    let mut records = Vec::new();
    let mut p = f.parse_each(text, file_name, &mut |r| records.push(r))?;
    p.records = records;
    Ok(p)
}

/// Every format, in detection order (most specific first).
pub fn formats() -> Vec<Box<dyn Format>> {
    vec![
        Box::new(rccl_json::NcclTestsJson),
        Box::new(nvbandwidth::NvbandwidthJson),
        Box::new(seed_json::SeedJson),
        Box::new(cuda_copy_csv::CudaCopyCsv),
        Box::new(nccl_json::NcclTestsJson3),
        Box::new(imb::Imb),
        Box::new(nccl_tests::NcclTests),
        Box::new(perftest::Perftest),
        Box::new(osu::Osu),
        Box::new(rocm_bandwidth::RocmBandwidth),
        Box::new(transferbench::TransferBench),
        Box::new(nvbandwidth::Nvbandwidth),
        Box::new(babelstream::BabelStreamCsv),
        Box::new(babelstream::BabelStream),
        Box::new(vllm::VllmServeJson),
        Box::new(sglang::SglangServe),
        Box::new(vllm::VllmServe),
        Box::new(vllm_throughput::VllmThroughput),
        Box::new(vllm_serve_2023::VllmServe2023),
        Box::new(trtllm::TrtllmBench),
        Box::new(torch_allreduce::TorchAllReduce),
        Box::new(deepspeed_comm::DeepspeedComm),
        Box::new(megatron::Megatron),
        Box::new(torchtitan::Torchtitan),
        #[cfg(test)]
        Box::new(test_format::TestSteps),
    ]
}

/// A log's bytes as text. UTF-8 (with or without a byte-order mark) and
/// UTF-16 with a byte-order mark are read; CRLF line ends are read as lines.
/// UTF-16 without a mark is refused by name; other invalid UTF-8 is
/// replaced, with a warning naming the first line it is on.
pub fn decode<'a>(path: &Path, data: &'a [u8]) -> Result<(std::borrow::Cow<'a, str>, Option<String>)> {
    let refuse = |line: usize, message: String| Error::Import { path: path.to_path_buf(), line, message };
    let utf16 = |bytes: &[u8], big: bool, name: &str| -> Result<(std::borrow::Cow<'a, str>, Option<String>)> {
        if !bytes.len().is_multiple_of(2) {
            return Err(refuse(1, format!("{name} file with an odd number of bytes (cut short?)")));
        }
        let units = bytes.chunks_exact(2).map(|c| {
            if big {
                u16::from_be_bytes([c[0], c[1]])
            } else {
                u16::from_le_bytes([c[0], c[1]])
            }
        });
        let text = char::decode_utf16(units)
            .collect::<std::result::Result<String, _>>()
            .map_err(|e| refuse(1, format!("not valid {name}: {e}")))?;
        Ok((text.into(), Some(format!("read as {name} (byte-order mark)"))))
    };
    match data {
        [0xEF, 0xBB, 0xBF, rest @ ..] => return decode(path, rest),
        [0xFF, 0xFE, rest @ ..] => return utf16(rest, false, "UTF-16LE"),
        [0xFE, 0xFF, rest @ ..] => return utf16(rest, true, "UTF-16BE"),
        _ => {}
    }
    let head = &data[..data.len().min(4096)];
    let nuls = head.iter().filter(|b| **b == 0).count();
    if nuls * 4 > head.len() && !head.is_empty() {
        return Err(refuse(
            1,
            "looks like UTF-16 without a byte-order mark (every other byte is 0); convert it with `iconv -f UTF-16LE -t UTF-8`".into(),
        ));
    }
    match std::str::from_utf8(data) {
        Ok(s) => Ok((s.into(), None)),
        Err(e) => {
            let line = data[..e.valid_up_to()].iter().filter(|b| **b == b'\n').count() + 1;
            Ok((
                String::from_utf8_lossy(data),
                Some(format!("line {line}: bytes that are not UTF-8 were replaced with U+FFFD")),
            ))
        }
    }
}

/// Parse `text` as `tool`, or as the first format that recognizes it.
pub fn parse(path: &Path, text: &str, tool: Option<&str>) -> Result<Parsed> {
    let mut records = Vec::new();
    let mut parsed = parse_each(path, text, tool, &mut |r| records.push(r))?;
    parsed.records = records;
    Ok(parsed)
}

/// [`parse`], handing each record that passes the gate to `each` as it is
/// read (see [`Format::parse_each`]); the result keeps no records, and
/// `record_count` says how many there were.
pub fn parse_each(path: &Path, text: &str, tool: Option<&str>, each: &mut dyn FnMut(Record)) -> Result<Parsed> {
    // `srun -l` labels every line with its task (`  0: `): read what the
    // task printed.
    let (text, labels) = launcher::strip_task_labels(text);
    // A log pasted into an issue may end in a markdown fence glued to its
    // last line (`mfu: 23.46%```): that is not part of the log.
    let (text, glued) = launcher::unglue_fence(text.as_ref());
    let text = text.as_ref();
    let all = formats();
    let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    // A file no layout claims but that names a tool is tried as that tool.
    let mut named = None;
    let format = match tool {
        Some(t) => all.iter().find(|f| f.name() == t).ok_or_else(|| {
            Error::config(
                "--tool",
                format!("unknown tool `{t}`; known: {}", all.iter().map(|f| f.name()).collect::<Vec<_>>().join(", ")),
            )
        })?,
        None => match all.iter().find(|f| f.sniff(text).is_some()) {
            Some(f) => f,
            None => all
                .iter()
                .find_map(|f| detect::named(f.as_ref(), text).map(|n| (f, n)))
                .map(|(f, n)| {
                    named = Some(n);
                    f
                })
                .ok_or_else(|| match detect::not_read(text) {
                    Some((tool, line, instead)) => Error::Import {
                        path: path.to_path_buf(),
                        line,
                        message: format!("this is {tool}'s output, which benchbook has no importer for: {instead}"),
                    },
                    None => Error::UnknownFormat {
                        path: path.to_path_buf(),
                        tried: all.iter().map(|f| f.name()).collect::<Vec<_>>().join(", "),
                    },
                })?,
        },
    };
    let mut dropped = Vec::new();
    let mut count = 0;
    // The lines the records came from, to tell one tool's output from two.
    let mut span: Option<(usize, usize)> = None;
    let mut parsed = format
        .parse_each(text, file_name, &mut |mut r| {
            if possible(&mut r, &mut dropped) {
                count += 1;
                span = Some(span.map_or((r.line, r.line), |(a, b)| (a.min(r.line), b.max(r.line))));
                each(r);
            }
        })
        .map_err(|e| refusal(path, text, format.as_ref(), named.as_ref(), e))?;
    if tool.is_none() {
        if let Some((other, lines, n)) = span.and_then(|s| detect::second_tool(&all, format.as_ref(), text, s)) {
            let (a, b) = span.unwrap_or_default();
            return Err(Error::Import {
                path: path.to_path_buf(),
                line: lines.0,
                message: format!(
                    "the file holds the output of two tools: {} (lines {a}–{b}, {count} rows) and {other} (lines {}–{}, {n} rows); split it and import each part, or pass --tool to read one",
                    format.name(),
                    lines.0,
                    lines.1
                ),
            });
        }
    }
    parsed.family = format.family();
    if let Some(n) = &named {
        parsed.warnings.push(format!(
            "line {}: read as {} because it names the tool (`{}`); no layout's header claimed the file",
            n.line,
            format.name(),
            n.marker
        ));
    }
    parsed.record_count = count;
    if let Some(n) = labels {
        parsed.warnings.push(format!("{n} lines carried a launcher's task label (`srun -l`); read without it"));
    }
    if let Some(line) = glued {
        parsed.warnings.push(format!(
            "line {line}: a markdown fence (```) glued to the end of the log's last line was left out: it is not part of the log"
        ));
    }
    parsed.warnings.extend(dropped);
    if count == 0 {
        let end = ParseError::new(text.lines().count(), format!("no {} results found in the file", format.name()));
        return Err(refusal(path, text, format.as_ref(), named.as_ref(), end));
    }
    Ok(parsed)
}

/// A parse failure as the user reads it: the tool and the version the file
/// seems to be, the error, and the line that did not fit.
fn refusal(path: &Path, text: &str, f: &dyn Format, named: Option<&detect::Named>, e: ParseError) -> Error {
    let version = detect::version_suffix(&detect::version(f, text));
    // An error at the end of the file (nothing was read) points at the
    // first line after the one that named or claimed the tool instead.
    let from = named.map(|n| n.line).or_else(|| f.sniff(text).map(|c| c.line)).unwrap_or(0);
    let seen = if e.line >= text.lines().count() {
        detect::first_line_after(text, from)
            .map(|(n, q)| format!("; the first line after line {from} that gave nothing is line {n}: `{q}`"))
    } else {
        detect::quote_line(text, e.line).map(|q| format!("; line {} reads `{q}`", e.line))
    }
    .unwrap_or_default();
    let seen = seen + &detect::later_tool(text, f, from).unwrap_or_default();
    let message = match named {
        Some(n) => format!(
            "looks like {}{version} (line {} names it: `{}`), but no layout benchbook reads matches: {}{seen}. \
docs/importers.md lists the versions read",
            f.name(),
            n.line,
            n.marker,
            e.message
        ),
        None => format!("as {}{version}: {}{seen}", f.name(), e.message),
    };
    Error::Import { path: path.to_path_buf(), line: e.line, message }
}
