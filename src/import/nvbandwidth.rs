//! nvbandwidth: text (a bandwidth matrix per test case, `N/A` cells, a `SUM`
//! line) and JSON (`-j`).
//!
//! Cells are GB/s (10^9 bytes/s) of one copy between a row and a column
//! endpoint. nvbandwidth's output does not state the buffer size of older
//! versions; when the file does not say (`--bufferSize`/`-b` in a printed
//! command line, in MiB), rows are normalized to one GB per operation
//! (`bytes_copied` = 10^9, `size_bytes` null) so that the derived rate is the
//! printed one, and the note says so. `SUM` lines are checked against the
//! cells. A matrix titled in `(ns)` (`host_device_latency_sm`,
//! `device_to_device_latency_sm`) holds latencies: those cells become
//! latency rows (time = the printed ns, no bytes), never bandwidth. A cell
//! printed as `0.00` (a GPU to itself, in some versions) is kept as a
//! skipped point; `N/A` cells are not points.

use super::{
    last_line_incomplete, lines, num, record, Claim, ClaimIf, Format, ParseError, Parsed, Record, NORMALIZED_BYTES,
};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub struct Nvbandwidth;
pub use super::nvbandwidth_json::NvbandwidthJson;

fn buffer_bytes(text: &str) -> Option<u64> {
    // A command line such as "nvbandwidth -b 512" or "--bufferSize 512" (MiB).
    for l in text.lines() {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if let Some(p) = toks.iter().position(|t| *t == "-b" || *t == "--bufferSize") {
            if let Some(mib) = toks.get(p + 1).and_then(|v| v.parse::<u64>().ok()) {
                return mib.checked_mul(1 << 20);
            }
        }
        if let Some(v) = l.trim().strip_prefix("--bufferSize=") {
            return v.trim().parse::<u64>().ok().and_then(|m| m.checked_mul(1 << 20));
        }
    }
    None
}

/// What a matrix holds, from its title or JSON description.
#[derive(Clone, Copy, PartialEq, Default)]
pub(super) enum Unit {
    #[default]
    GbPerSec,
    Nanoseconds,
}

pub(super) fn unit_of(title: &str) -> Option<Unit> {
    if title.contains("(ns)") {
        Some(Unit::Nanoseconds)
    } else if title.contains("(GB/s)") {
        Some(Unit::GbPerSec)
    } else {
        None
    }
}

pub(super) fn cell_record(
    test: &str,
    (row, col): (&str, &str),
    value: f64,
    unit: Unit,
    bytes: Option<u64>,
    line: usize,
    device: Option<&String>,
) -> super::Record {
    let op_bytes = bytes.unwrap_or(NORMALIZED_BYTES);
    let variant = if test.contains("_sm") { "sm" } else { "ce" };
    let mut point = Point {
        bench: Bench::Nvbandwidth.name().into(),
        op: test.to_string(),
        variant: Some(variant.into()),
        size_bytes: bytes,
        peer: Some(format!("{row}->{col}")),
        ..Point::default()
    };
    let mut r = match unit {
        Unit::Nanoseconds => {
            point.variant = Some(format!("{variant} latency"));
            record(
                point,
                value * 1e-9,
                line,
                format!("nvbandwidth latency {value} ns → s (a latency test case: no bytes)"),
            )
        }
        Unit::GbPerSec => {
            point.bytes_copied = Some(op_bytes);
            let note = match bytes {
                Some(_) => format!("nvbandwidth {value} GB/s (10^9 bytes/s); time derived as buffer bytes / rate"),
                None => format!("nvbandwidth {value} GB/s (10^9 bytes/s); buffer size not in the file, so one operation is normalized to 10^9 bytes and time = 1 / rate"),
            };
            record(point, op_bytes as f64 / (value * 1e9), line, note)
        }
    };
    if value == 0.0 {
        r.status = Status::Skipped;
        r.seconds_per_op = f64::NAN;
        r.note = "nvbandwidth printed 0.00: this pair was not measured (a GPU to itself)".into();
    }
    r.device = device.cloned();
    r
}

impl Format for Nvbandwidth {
    fn name(&self) -> &'static str {
        Bench::Nvbandwidth.name()
    }

    fn describe(&self) -> &'static str {
        "nvbandwidth text output: matrices per test case, N/A cells, SUM lines"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Peer)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["nvbandwidth"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "its banner (`nvbandwidth Version`)", |l| l.contains("nvbandwidth Version")).or_else(|| {
            text.contains("Running ").claim(text, "a `Running TESTCASE` line and a `bandwidth (GB/s)` matrix", |l| {
                l.contains("bandwidth (GB/s)")
            })
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per cell as each matrix ends (a 50 MiB log is never held
    /// as records).
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "cuda".into(), ..Parsed::default() };
        let mut count = 0usize;
        let bytes = buffer_bytes(text);
        if bytes.is_none() {
            out.warnings.push("buffer size not stated in the file; rows normalized to 10^9 bytes per operation".into());
        }
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut devices: Vec<String> = Vec::new();
        // The test case a `Running` line announced, until its matrix takes it.
        let mut running: Option<String> = None;
        // A `Running` line whose matrix has not come (yet).
        let mut pending: Option<Announced> = None;
        let mut stopped: Vec<Announced> = Vec::new();
        let mut matrix: Option<Matrix> = None;
        for &(no, line) in &all {
            // A log pasted into an issue outside a code fence may be quoted.
            let t = line.trim();
            let t = t.strip_prefix('>').map_or(t, str::trim);
            if t.starts_with("```") {
                continue;
            }
            if is_elision(t) {
                out.warnings.push(format!("line {no}: `{t}` marks lines the copy left out; nothing there is imported"));
                if let Some(m) = &mut matrix {
                    m.elided = true;
                }
                continue;
            }
            if let Some(v) = t.strip_prefix("nvbandwidth Version:") {
                out.tool_version = Some(format!("nvbandwidth {}", v.trim()));
                continue;
            }
            if let Some(rest) = t.strip_prefix("Device ") {
                if let Some((_, name)) = rest.split_once(':') {
                    devices.push(name.split(" (").next().unwrap_or(name).trim().to_string());
                }
                continue;
            }
            if let Some(name) = t.strip_prefix("Running ") {
                if let Some(m) = matrix.take() {
                    count += m.finish(None, bytes, &devices, &mut out, each);
                }
                stopped.extend(pending.take());
                let name = name.trim_end_matches('.').to_string();
                pending = Some((name.clone(), no, None));
                running = Some(name);
                continue;
            }
            if let Some(u) = unit_of(t).filter(|_| matrix.as_ref().is_none_or(|m| !m.col_ids.is_empty())) {
                if let Some(m) = matrix.take() {
                    count += m.finish(None, bytes, &devices, &mut out, each);
                }
                pending = None;
                matrix = Some(Matrix { name: running.take(), unit: u, title_line: no, ..Matrix::default() });
                continue;
            }
            // 0.7's `--perfFormatter` prints `&&&& PERF <key> <sum> +GB/s`
            // where the `SUM` line was.
            let perf = t.strip_prefix("&&&& PERF ").map(|r| r.trim_end_matches("+GB/s").trim_end_matches("-ns").trim());
            if let Some(rest) = t.strip_prefix("SUM ").or(perf) {
                let mut toks = rest.split_whitespace();
                let name = toks.next().filter(|n| num(n).is_none()).map(String::from);
                let printed = rest.split_whitespace().last().and_then(num);
                if let Some(m) = matrix.take() {
                    if let (Some(p), false, Unit::GbPerSec) = (printed, m.elided, m.unit) {
                        let sum: f64 = m.cells.iter().map(|c| c.value).sum();
                        if (p - sum).abs() > 0.01 * p.abs() + 0.05 {
                            out.warnings.push(format!("line {no}: SUM says {p}, the cells add up to {sum:.2}"));
                        }
                    }
                    count += m.finish(name, bytes, &devices, &mut out, each);
                }
                continue;
            }
            let Some(m) = &mut matrix else {
                if let Some((_, _, why @ None)) = &mut pending {
                    if ["ASSERT", "rror", "ail", "nvalid", "abort"].iter().any(|w| t.contains(w)) {
                        *why = Some((no, t.to_string()));
                    }
                }
                continue;
            };
            if t.is_empty() {
                continue;
            }
            let toks: Vec<&str> = t.split_whitespace().collect();
            if m.col_ids.is_empty() {
                m.col_ids = toks.iter().map(|s| s.to_string()).collect();
                continue;
            }
            if toks.len() != m.col_ids.len() + 1 {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                return Err(ParseError::new(
                    no,
                    format!("expected a row id and {} cells, found {} fields", m.col_ids.len(), toks.len()),
                ));
            }
            for (c, cell) in toks[1..].iter().enumerate() {
                match num(cell) {
                    Some(value) => {
                        m.cells.push(Cell { row: toks[0].to_string(), col: m.col_ids[c].clone(), value, line: no })
                    }
                    None if *cell == "N/A" => {}
                    None => return Err(ParseError::new(no, format!("expected a number or N/A, found `{cell}`"))),
                }
            }
        }
        if let Some(m) = matrix.take() {
            count += m.finish(None, bytes, &devices, &mut out, each);
        }
        stopped.extend(pending.take());
        for (name, at, why) in stopped {
            let why = why.map_or("nothing after it says why".to_string(), |(l, t)| format!("line {l}: `{t}`"));
            let message = format!("test case {name} (line {at}) printed no matrix: {why}");
            if count == 0 {
                return Err(ParseError::new(at, message));
            }
            out.warnings.push(message);
        }
        Ok(out)
    }
}

/// A test case a `Running` line announced: name, line, and the line that
/// says why no matrix followed (an ASSERT, an error), if one does.
type Announced = (String, usize, Option<(usize, String)>);

/// A line standing for lines a copy left out: `...`, `[...]`, `…`.
fn is_elision(t: &str) -> bool {
    t.contains(['.', '…']) && t.chars().all(|c| matches!(c, '.' | '…' | '[' | ']' | ' '))
}

/// One cell of a matrix being read.
struct Cell {
    row: String,
    col: String,
    value: f64,
    line: usize,
}

/// A matrix being read: its test case (from the `Running` line before it,
/// or the `SUM` line after it), its unit, column ids and cells.
#[derive(Default)]
struct Matrix {
    name: Option<String>,
    unit: Unit,
    title_line: usize,
    col_ids: Vec<String>,
    cells: Vec<Cell>,
    /// Whether the copy left rows out (a `...` line inside it).
    elided: bool,
}

impl Matrix {
    /// Its cells become records, named by the `Running` line, else the
    /// `SUM` line (`sum_name`).
    fn finish(
        self,
        sum_name: Option<String>,
        bytes: Option<u64>,
        devices: &[String],
        out: &mut Parsed,
        each: &mut dyn FnMut(Record),
    ) -> usize {
        let name = self.name.or(sum_name).unwrap_or_else(|| {
            out.warnings.push(format!(
                "matrix at line {}: no `Running` or `SUM` line names its test case; rows use op `unnamed_testcase`",
                self.title_line
            ));
            "unnamed_testcase".into()
        });
        let n = self.cells.len();
        for c in self.cells {
            let dev = c.row.parse::<usize>().ok().and_then(|i| devices.get(i)).or(devices.first());
            each(cell_record(&name, (&c.row, &c.col), c.value, self.unit, bytes, c.line, dev));
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0.7's hidden `--perfFormatter` (output.cpp) prints `&&&& PERF <key>
    /// <sum> +GB/s` where the `SUM` line was. Values written here.
    #[test]
    fn perf_formatter_lines_end_a_matrix() {
        let text = "nvbandwidth Version: v0.7\nBuilt from Git version: v0.7\n\nRunning host_to_device_memcpy_ce.\n\
memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)\n           0         1\n 0     55.63     55.60\n\n\
&&&& PERF host_to_device_memcpy_ce 111.23 +GB/s\n";
        assert!(Nvbandwidth.sniff(text).is_some());
        let p = crate::import::collect(&Nvbandwidth, text, "x.log").unwrap();
        assert_eq!(p.records.len(), 2);
        assert!(p.records.iter().all(|r| r.params.op == "host_to_device_memcpy_ce"), "{:?}", p.records[0].params);
        assert!(p.warnings.iter().all(|w| !w.contains("PERF")), "{:?}", p.warnings);
    }
}
