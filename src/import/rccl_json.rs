//! rccl-tests' JSON lines (`--output_file x.json`): one object per size and
//! in-place flag.

use super::nccl_tests::normalize_op;
use super::{bus_factor, dtype, last_line_incomplete, num, record, Claim, Format, ParseError, Parsed};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

/// rccl-tests JSON lines: one object per (size, in-place) with
/// `name, size, time, algBw, busBw, inPlace, gpus, type, redop, #wrong`.
pub struct NcclTestsJson;

impl Format for NcclTestsJson {
    fn name(&self) -> &'static str {
        "rccl-tests-json"
    }

    fn describe(&self) -> &'static str {
        "rccl-tests --output_file JSON lines (one object per size and in-place flag)"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        let (i, first) = text.lines().enumerate().find(|(_, l)| !l.trim().is_empty())?;
        (first.trim_start().starts_with('{') && first.contains("\"algBw\"") && first.contains("\"busBw\""))
            .then_some(Claim { line: i + 1, why: "a JSON line with `algBw` and `busBw`" })
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "rccl".into(), ..Parsed::default() };
        let truncated = last_line_incomplete(text);
        let n_lines = text.lines().count();
        for (i, line) in text.lines().enumerate() {
            let no = i + 1;
            if line.trim().is_empty() {
                continue;
            }
            let v: serde_json::Value = match serde_json::from_str(line) {
                Ok(v) => v,
                Err(_) if truncated && no == n_lines => {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                Err(e) => return Err(ParseError::new(no, format!("expected one JSON object per line: {e}"))),
            };
            let get_f = |k: &str| v.get(k).and_then(|x| x.as_f64().or_else(|| x.as_str().and_then(num)));
            let (Some(size), Some(time_us)) = (get_f("size"), get_f("time")) else {
                return Err(ParseError::new(no, "expected numeric `size` and `time` fields"));
            };
            let op = normalize_op(v.get("name").and_then(|x| x.as_str()).unwrap_or("unknown_collective"));
            let gpus = get_f("gpus").map(|g| g as u32);
            let wrong = get_f("#wrong").unwrap_or(0.0);
            let in_place = get_f("inPlace").unwrap_or(0.0) > 0.0;
            let mut r = record(
                Point {
                    bench: Bench::Collective.name().into(),
                    op: op.clone(),
                    variant: Some(if in_place { "in-place" } else { "out-of-place" }.into()),
                    dtype: v.get("type").and_then(|x| x.as_str()).map(dtype),
                    size_bytes: Some(size as u64),
                    ranks: gpus,
                    bytes_copied: Some(size as u64),
                    bw_factor: gpus.and_then(|g| bus_factor(&op, g)).or_else(|| {
                        match (get_f("algBw"), get_f("busBw")) {
                            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
                            _ => None,
                        }
                    }),
                    ..Point::default()
                },
                time_us * 1e-6,
                no,
                "rccl-tests JSON time (us) → s; algbw = size / time",
            );
            if wrong > 0.0 {
                r.status = Status::Failed;
                r.note = format!("{wrong} wrong elements reported");
            }
            out.records.push(r);
        }
        Ok(out)
    }
}
