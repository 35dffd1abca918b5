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

use super::{last_line_incomplete, lines, num, record, Format, ParseError, Parsed};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub struct Nvbandwidth;
pub struct NvbandwidthJson;

const NORMALIZED_BYTES: u64 = 1_000_000_000;

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
#[derive(Clone, Copy, PartialEq)]
enum Unit {
    GbPerSec,
    Nanoseconds,
}

fn unit_of(title: &str) -> Option<Unit> {
    if title.contains("(ns)") {
        Some(Unit::Nanoseconds)
    } else if title.contains("(GB/s)") {
        Some(Unit::GbPerSec)
    } else {
        None
    }
}

fn cell_record(
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

    fn sniff(&self, text: &str) -> bool {
        text.contains("nvbandwidth Version") || (text.contains("Running ") && text.contains("bandwidth (GB/s)"))
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "cuda".into(), ..Parsed::default() };
        let bytes = buffer_bytes(text);
        if bytes.is_none() {
            out.warnings.push("buffer size not stated in the file; rows normalized to 10^9 bytes per operation".into());
        }
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut test: Option<String> = None;
        let mut col_ids: Vec<String> = Vec::new();
        let mut in_matrix = false;
        let mut unit = Unit::GbPerSec;
        let mut sum_cells = 0.0;
        let mut devices: Vec<String> = Vec::new();
        for &(no, line) in &all {
            let t = line.trim();
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
                test = Some(name.trim_end_matches('.').to_string());
                in_matrix = false;
                col_ids.clear();
                sum_cells = 0.0;
                continue;
            }
            if let Some(u) = unit_of(t).filter(|_| test.is_some() && !in_matrix && col_ids.is_empty()) {
                unit = u;
                in_matrix = true;
                continue;
            }
            if let Some(rest) = t.strip_prefix("SUM ") {
                let printed = rest.split_whitespace().last().and_then(num);
                if let Some(p) = printed {
                    if unit == Unit::GbPerSec && (p - sum_cells).abs() > 0.01 * p.abs() + 0.05 {
                        out.warnings.push(format!("line {no}: SUM says {p}, the cells add up to {sum_cells:.2}"));
                    }
                }
                in_matrix = false;
                col_ids.clear();
                continue;
            }
            if !in_matrix || t.is_empty() {
                continue;
            }
            let toks: Vec<&str> = t.split_whitespace().collect();
            if col_ids.is_empty() {
                col_ids = toks.iter().map(|s| s.to_string()).collect();
                continue;
            }
            let Some(test_name) = &test else {
                return Err(ParseError::new(no, "expected a `Running <testcase>.` line before the matrix"));
            };
            if toks.len() != col_ids.len() + 1 {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                return Err(ParseError::new(
                    no,
                    format!("expected a row id and {} cells, found {} fields", col_ids.len(), toks.len()),
                ));
            }
            let row_id = toks[0];
            for (c, cell) in toks[1..].iter().enumerate() {
                match num(cell) {
                    Some(v) => {
                        sum_cells += v;
                        let dev = row_id.parse::<usize>().ok().and_then(|i| devices.get(i)).or(devices.first());
                        out.records.push(cell_record(test_name, (row_id, &col_ids[c]), v, unit, bytes, no, dev));
                    }
                    None if *cell == "N/A" => {}
                    None => return Err(ParseError::new(no, format!("expected a number or N/A, found `{cell}`"))),
                }
            }
        }
        Ok(out)
    }
}

impl Format for NvbandwidthJson {
    fn name(&self) -> &'static str {
        "nvbandwidth-json"
    }

    fn describe(&self) -> &'static str {
        "nvbandwidth -j JSON output (testcases with bandwidth_matrix)"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Peer)
    }

    fn sniff(&self, text: &str) -> bool {
        text.trim_start().starts_with('{') && text.contains("\"nvbandwidth\"") && text.contains("bandwidth_matrix")
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let v: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| ParseError::new(e.line(), format!("expected nvbandwidth's JSON document: {e}")))?;
        let root =
            v.get("nvbandwidth").ok_or_else(|| ParseError::new(1, "expected a top-level `nvbandwidth` object"))?;
        let mut out = Parsed {
            tool: self.name().into(),
            backend: "cuda".into(),
            tool_version: root
                .get("version")
                .or_else(|| root.get("git_version"))
                .and_then(|x| x.as_str())
                .map(|s| format!("nvbandwidth {s}")),
            ..Parsed::default()
        };
        let bytes = root.get("bufferSize").and_then(|b| b.as_u64()).and_then(|mib| mib.checked_mul(1 << 20));
        if bytes.is_none() {
            out.warnings.push("buffer size not stated in the file; rows normalized to 10^9 bytes per operation".into());
        }
        let cases = root
            .get("testcases")
            .and_then(|t| t.as_array())
            .ok_or_else(|| ParseError::new(1, "expected `nvbandwidth.testcases` to be an array"))?;
        for case in cases {
            let name = case.get("name").and_then(|n| n.as_str()).unwrap_or("unknown");
            if case.get("status").and_then(|s| s.as_str()).is_some_and(|s| s != "Passed") {
                out.warnings.push(format!("test case {name}: status {}", case["status"]));
                continue;
            }
            let Some(matrix) = case.get("bandwidth_matrix").and_then(|m| m.as_array()) else { continue };
            let description = case.get("bandwidth_description").and_then(|d| d.as_str()).unwrap_or("");
            let unit = unit_of(description).unwrap_or(Unit::GbPerSec);
            for (r, row) in matrix.iter().enumerate() {
                for (c, cell) in row.as_array().into_iter().flatten().enumerate() {
                    let v = cell.as_f64().or_else(|| cell.as_str().and_then(num));
                    if let Some(v) = v {
                        out.records.push(cell_record(name, (&r.to_string(), &c.to_string()), v, unit, bytes, 1, None));
                    }
                }
            }
        }
        Ok(out)
    }
}
