//! nvbandwidth's `-j` JSON: a `nvbandwidth` object whose `testcases` hold
//! `bandwidth_matrix` cells (strings or numbers) and a description that
//! names the unit; 0.5–0.7 print their `Device N:` lines before it.

use super::nvbandwidth::{cell_record, unit_of, Unit};
use super::{num, Claim, Format, ParseError, Parsed};
use crate::vocab::benches::Family;

pub struct NvbandwidthJson;

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

    fn markers(&self) -> &'static [&'static str] {
        &["\"nvbandwidth\""]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        (json_start(text).is_some() && text.contains("bandwidth_matrix"))
            .then(|| {
                Claim::find(text, "a JSON document with `nvbandwidth` and `bandwidth_matrix`", |l| {
                    l.contains("\"nvbandwidth\"")
                })
            })
            .flatten()
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        // 0.5–0.7 print their `Device N: …` lines before the document.
        let (at, before) = json_start(text).unwrap_or((0, 0));
        let v: serde_json::Value = serde_json::from_str(&text[at..])
            .map_err(|e| ParseError::new(e.line() + before, format!("expected nvbandwidth's JSON document: {e}")))?;
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
        if before > 0 {
            out.warnings.push(format!(
                "{before} lines before the JSON document (nvbandwidth 0.5–0.7 print the device list there) were not read"
            ));
        }
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

/// Where nvbandwidth's JSON document starts: its byte offset and the lines
/// before it, which must not look like JSON themselves (`Device 0: …`).
fn json_start(text: &str) -> Option<(usize, usize)> {
    let mut at = 0;
    for (i, line) in text.split_inclusive('\n').enumerate() {
        let t = line.trim();
        if t.starts_with('{') {
            return Some((at, i));
        }
        if t.starts_with(['[', '"', '}']) || i >= 64 {
            return None;
        }
        at += line.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0.5–0.7 print `Device N: …` before the `-j` document (v0.7
    /// nvbandwidth.cpp prints the device list before JsonOutput::print).
    #[test]
    fn json_after_the_device_lines() {
        let doc = r#"{"nvbandwidth": {"version": "v0.7", "testcases": [{"name": "host_to_device_memcpy_ce", "status": "Passed",
"bandwidth_description": "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", "bandwidth_matrix": [["55.63", "55.60"]], "sum": 111.23}]}}"#;
        let text = format!("Device 0: NVIDIA H100 80GB HBM3 (00000000:19:00)\nDevice 1: NVIDIA H100 80GB HBM3 (00000000:3b:00)\n\n{doc}\n");
        assert_eq!(json_start(&text).map(|(_, lines)| lines), Some(3));
        assert!(NvbandwidthJson.sniff(&text).is_some());
        let p = NvbandwidthJson.parse(&text, "x.json").unwrap();
        assert_eq!(p.records.len(), 2);
        assert!(p.warnings.iter().any(|w| w.contains("3 lines before the JSON document")), "{:?}", p.warnings);
        assert_eq!(json_start("[1, 2]"), None);
    }
}
