//! nvbandwidth's `-j` JSON: a `nvbandwidth` object whose `testcases` hold
//! `bandwidth_matrix` cells (strings or numbers) and a description that
//! names the unit; 0.5–0.7 print their `Device N:` lines before it.

use super::nvbandwidth::{cell_record, unit_of, Unit};
use serde::Deserialize;
use serde_json::Value;

use super::{num, Claim, ClaimIf, Format, ParseError, Parsed, Record};
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
        (json_start(text).is_some() && text.contains("bandwidth_matrix")).claim(
            text,
            "a JSON document with `nvbandwidth` and `bandwidth_matrix`",
            |l| l.contains("\"nvbandwidth\""),
        )
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// Typed, so that a matrix cell is an `f64` as it is read (never a
    /// JSON value or a string), and a record per cell handed out at once.
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        // 0.5–0.7 print their `Device N: …` lines before the document.
        let (at, before) = json_start(text).unwrap_or((0, 0));
        let doc: Doc = serde_json::from_str(&text[at..])
            .map_err(|e| ParseError::new(e.line() + before, format!("expected nvbandwidth's JSON document: {e}")))?;
        let root = doc.nvbandwidth.ok_or_else(|| ParseError::new(1, "expected a top-level `nvbandwidth` object"))?;
        let text_of = |v: &Option<Value>| v.as_ref().and_then(|x| x.as_str()).map(str::to_string);
        let mut out = Parsed {
            tool: self.name().into(),
            backend: "cuda".into(),
            tool_version: text_of(&root.version)
                .or_else(|| text_of(&root.git_version))
                .map(|s| format!("nvbandwidth {s}")),
            ..Parsed::default()
        };
        if before > 0 {
            out.warnings.push(format!(
                "{before} lines before the JSON document (nvbandwidth 0.5–0.7 print the device list there) were not read"
            ));
        }
        let bytes = root.buffer_size.as_ref().and_then(|b| b.as_u64()).and_then(|mib| mib.checked_mul(1 << 20));
        if bytes.is_none() {
            out.warnings.push("buffer size not stated in the file; rows normalized to 10^9 bytes per operation".into());
        }
        let cases =
            root.testcases.ok_or_else(|| ParseError::new(1, "expected `nvbandwidth.testcases` to be an array"))?;
        for case in cases {
            let name = text_of(&case.name).unwrap_or_else(|| "unknown".into());
            if let Some(status) = case.status.as_ref().filter(|s| s.as_str() != Some("Passed")) {
                out.warnings.push(format!("test case {name}: status {status}"));
                continue;
            }
            let Some(matrix) = case.bandwidth_matrix else { continue };
            let unit = unit_of(case.bandwidth_description.as_deref().unwrap_or("")).unwrap_or(Unit::GbPerSec);
            for (r, row) in matrix.iter().enumerate() {
                for (c, cell) in row.iter().enumerate() {
                    if let Some(v) = cell.0 {
                        each(cell_record(&name, (&r.to_string(), &c.to_string()), v, unit, bytes, 1, None));
                    }
                }
            }
        }
        Ok(out)
    }
}

#[derive(Deserialize)]
struct Doc {
    nvbandwidth: Option<Root>,
}

#[derive(Deserialize)]
struct Root {
    version: Option<Value>,
    git_version: Option<Value>,
    #[serde(rename = "bufferSize")]
    buffer_size: Option<Value>,
    testcases: Option<Vec<Case>>,
}

#[derive(Deserialize)]
struct Case {
    name: Option<Value>,
    status: Option<Value>,
    bandwidth_description: Option<String>,
    bandwidth_matrix: Option<Vec<Vec<Cell>>>,
}

/// A matrix cell: nvbandwidth writes numbers as strings (`"55.6321"`),
/// `N/A` where a pair was not run; read straight to a number.
struct Cell(Option<f64>);

impl<'de> Deserialize<'de> for Cell {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Cell;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a number, or a string holding one")
            }
            fn visit_f64<E>(self, v: f64) -> Result<Cell, E> {
                Ok(Cell(Some(v).filter(|v| v.is_finite())))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Cell, E> {
                Ok(Cell(Some(v as f64)))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Cell, E> {
                Ok(Cell(Some(v as f64)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Cell, E> {
                Ok(Cell(num(v)))
            }
            fn visit_unit<E>(self) -> Result<Cell, E> {
                Ok(Cell(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Cell, E> {
                Ok(Cell(None))
            }
        }
        d.deserialize_any(V)
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
