//! nvbandwidth: text (a bandwidth matrix per test case, `N/A` cells, a `SUM`
//! line) and JSON (`-j`).
//!
//! Cells are GB/s (10^9 bytes/s) of one copy between a row and a column
//! endpoint. nvbandwidth's output does not state the buffer size of older
//! versions; when the file does not say (`--bufferSize`/`-b` in a printed
//! command line, in MiB), rows are normalized to one GB per operation
//! (`bytes_copied` = 10^9, `size_bytes` null) so that the derived rate is the
//! printed one, and the note says so. `SUM` lines are checked against the
//! cells.

use super::{last_line_incomplete, lines, num, record, Format, ParseError, Parsed};
use crate::vocab::rows::Point;

pub struct Nvbandwidth;
pub struct NvbandwidthJson;

const NORMALIZED_BYTES: u64 = 1_000_000_000;

fn buffer_bytes(text: &str) -> Option<u64> {
    // A command line such as "nvbandwidth -b 512" or "--bufferSize 512" (MiB).
    for l in text.lines() {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if let Some(p) = toks.iter().position(|t| *t == "-b" || *t == "--bufferSize") {
            if let Some(mib) = toks.get(p + 1).and_then(|v| v.parse::<u64>().ok()) {
                return Some(mib << 20);
            }
        }
        if let Some(v) = l.trim().strip_prefix("--bufferSize=") {
            return v.trim().parse::<u64>().ok().map(|m| m << 20);
        }
    }
    None
}

fn cell_record(
    test: &str,
    row: &str,
    col: &str,
    gbps: f64,
    bytes: Option<u64>,
    line: usize,
    device: Option<&String>,
) -> super::Record {
    let op_bytes = bytes.unwrap_or(NORMALIZED_BYTES);
    let note = match bytes {
        Some(_) => format!("nvbandwidth {gbps} GB/s (10^9 bytes/s); time derived as buffer bytes / rate"),
        None => format!("nvbandwidth {gbps} GB/s (10^9 bytes/s); buffer size not in the file, so one operation is normalized to 10^9 bytes and time = 1 / rate"),
    };
    let mut r = record(
        Point {
            bench: "nvbandwidth".into(),
            op: test.to_string(),
            variant: Some(if test.contains("_sm") { "sm".into() } else { "ce".into() }),
            size_bytes: bytes,
            peer: Some(format!("{row}->{col}")),
            bytes_copied: Some(op_bytes),
            ..Point::default()
        },
        op_bytes as f64 / (gbps * 1e9),
        line,
        note,
    );
    r.device = device.cloned();
    r
}

impl Format for Nvbandwidth {
    fn name(&self) -> &'static str {
        "nvbandwidth"
    }

    fn describe(&self) -> &'static str {
        "nvbandwidth text output: matrices per test case, N/A cells, SUM lines"
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
                sum_cells = 0.0;
                continue;
            }
            if t.contains("bandwidth (GB/s)") {
                in_matrix = true;
                col_ids.clear();
                continue;
            }
            if let Some(rest) = t.strip_prefix("SUM ") {
                let printed = rest.split_whitespace().last().and_then(num);
                if let Some(p) = printed {
                    if (p - sum_cells).abs() > 0.01 * p.abs() + 0.05 {
                        out.warnings.push(format!("line {no}: SUM says {p}, the cells add up to {sum_cells:.2}"));
                    }
                }
                in_matrix = false;
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
                    Some(v) if v > 0.0 => {
                        sum_cells += v;
                        let dev = row_id.parse::<usize>().ok().and_then(|i| devices.get(i)).or(devices.first());
                        out.records.push(cell_record(test_name, row_id, &col_ids[c], v, bytes, no, dev));
                    }
                    Some(_) => {}
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
        let bytes = root.get("bufferSize").and_then(|b| b.as_u64()).map(|mib| mib << 20);
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
            for (r, row) in matrix.iter().enumerate() {
                for (c, cell) in row.as_array().into_iter().flatten().enumerate() {
                    let v = cell.as_f64().or_else(|| cell.as_str().and_then(num));
                    if let Some(v) = v.filter(|v| *v > 0.0) {
                        out.records.push(cell_record(name, &r.to_string(), &c.to_string(), v, bytes, 1, None));
                    }
                }
            }
        }
        Ok(out)
    }
}
