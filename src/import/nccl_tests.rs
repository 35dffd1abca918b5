//! nccl-tests / rccl-tests text output, and rccl-tests' JSON lines
//! (`--output_file x.json`).
//!
//! The text table is read by its header: the first `time algbw busbw`
//! group is out-of-place, the second in-place; `#wrong` (newer) or `error`
//! (older) follows each; `root` is optional. `size` is the byte count that
//! algbw divides by (algbw = size / time), so it becomes `bytes_copied`, and
//! the collective's bus factor (busbw = algbw × factor) becomes `bw_factor`,
//! checked against the printed busbw/algbw. The `# Avg bus bandwidth` footer
//! is checked against the rows.

use super::{bus_factor, dtype, last_line_incomplete, lines, num, record, Format, ParseError, Parsed};
use crate::vocab::rows::{Point, Status};

pub struct NcclTests;

const COLLECTIVES: [&str; 9] =
    ["all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", "gather", "scatter"];

fn normalize_op(name: &str) -> String {
    let n = name.trim().trim_end_matches("_perf").to_ascii_lowercase().replace('-', "_");
    match n.as_str() {
        "allreduce" => "all_reduce".into(),
        "allgather" => "all_gather".into(),
        "reducescatter" => "reduce_scatter".into(),
        "alltoall" | "all_to_all" => "all_to_all".into(),
        _ => n,
    }
}

/// Which collective a section measures: the "Collective test starting"
/// line, else the file name.
fn collective_from(text: &str) -> Option<String> {
    let lower = text.to_ascii_lowercase();
    COLLECTIVES.iter().find(|c| lower.contains(*c)).map(|c| normalize_op(c))
}

struct Header {
    cols: Vec<String>,
    line: usize,
}

impl Header {
    fn index(&self, name: &str, nth: usize) -> Option<usize> {
        self.cols.iter().enumerate().filter(|(_, c)| c.as_str() == name).map(|(i, _)| i).nth(nth)
    }
}

impl Format for NcclTests {
    fn name(&self) -> &'static str {
        "nccl-tests"
    }

    fn describe(&self) -> &'static str {
        "nccl-tests / rccl-tests text output (*_perf), any collective, old and new column layouts"
    }

    fn sniff(&self, text: &str) -> bool {
        lines(text).iter().any(|(_, l)| {
            let t: Vec<&str> = l.trim_start_matches('#').split_whitespace().collect();
            l.starts_with('#') && t.contains(&"size") && t.contains(&"algbw") && t.contains(&"busbw")
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed {
            tool: self.name().into(),
            backend: if text.contains("rccl") || text.contains("RCCL") { "rccl".into() } else { "nccl".into() },
            ..Parsed::default()
        };
        let all = lines(text);
        let n_lines = all.len();
        let truncated = last_line_incomplete(text);
        let mut header: Option<Header> = None;
        let mut op = collective_from(file_name);
        let mut iters: Option<u64> = None;
        let mut ranks: Vec<u32> = Vec::new();
        let mut devices: Vec<(u32, String, String)> = Vec::new();
        let mut busbw_sum = 0.0;
        let mut busbw_n = 0usize;
        let mut rows_since_footer = 0usize;
        for &(no, line) in &all {
            let trimmed = line.trim();
            if trimmed.is_empty() {
                continue;
            }
            if let Some(rest) = trimmed.strip_prefix('#') {
                let rest = rest.trim();
                let toks: Vec<&str> = rest.split_whitespace().collect();
                if let Some(name) = rest.strip_prefix("Collective test starting:") {
                    op = Some(normalize_op(name));
                    header = None;
                } else if toks.contains(&"size") && toks.contains(&"algbw") {
                    header = Some(Header { cols: toks.iter().map(|s| s.to_string()).collect(), line: no });
                } else if rest.starts_with("nThread") {
                    // "# nThread 1 nGpus 1 ... warmup iters: 5 iters: 20 ..."
                    // The plain `iters:`, not `warmup iters:` or `agg iters:`.
                    let pos =
                        (1..toks.len()).find(|&p| toks[p] == "iters:" && !["warmup", "agg"].contains(&toks[p - 1]));
                    iters = pos.and_then(|p| toks.get(p + 1)).and_then(|v| v.parse().ok());
                    out.command.get_or_insert_with(|| rest.to_string());
                } else if rest.starts_with("Rank") && rest.contains("device") {
                    // "#  Rank  0 Group  0 Pid 1234 on host1 device  0 [0x07] NVIDIA H100 80GB HBM3"
                    let rank = toks.get(1).and_then(|r| r.parse().ok()).unwrap_or(0);
                    let host =
                        toks.iter().position(|t| *t == "on").and_then(|p| toks.get(p + 1)).unwrap_or(&"").to_string();
                    let name = rest.rsplit_once(']').map(|(_, n)| n.trim().to_string()).unwrap_or_default();
                    if !ranks.contains(&rank) {
                        ranks.push(rank);
                        devices.push((rank, host, name));
                    }
                } else if let Some(v) = rest.strip_prefix("Avg bus bandwidth") {
                    // Each table ends with its own footer: check it against that table.
                    if let Some(avg) = v.trim_start_matches([' ', ':']).split_whitespace().next().and_then(num) {
                        if busbw_n > 0 {
                            let ours = busbw_sum / busbw_n as f64;
                            if (ours - avg).abs() > 0.02 * avg.abs() + 0.01 {
                                out.warnings.push(format!("line {no}: footer says average bus bandwidth {avg}, the table's rows average {ours:.4}"));
                            }
                        }
                    }
                    busbw_sum = 0.0;
                    busbw_n = 0;
                    rows_since_footer = 0;
                } else if rest.starts_with("nccl-tests version") || rest.starts_with("rccl-tests version") {
                    out.tool_version = Some(rest.to_string());
                }
                continue;
            }
            if trimmed.starts_with("NCCL version") || trimmed.starts_with("RCCL version") {
                out.tool_version.get_or_insert_with(|| trimmed.to_string());
                continue;
            }
            let Some(h) = &header else { continue };
            let toks: Vec<&str> = trimmed.split_whitespace().collect();
            if toks.first().and_then(|t| t.parse::<u64>().ok()).is_none() {
                continue; // NCCL INFO lines and the like between rows
            }
            if toks.len() != h.cols.len() {
                if truncated && no == n_lines {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                return Err(ParseError::new(
                    no,
                    format!(
                        "expected {} columns as in the header on line {} ({}), found {}",
                        h.cols.len(),
                        h.line,
                        h.cols.join(" "),
                        toks.len()
                    ),
                ));
            }
            let size: u64 = toks[h.index("size", 0).unwrap_or(0)]
                .parse()
                .map_err(|_| ParseError::new(no, "size is not an integer"))?;
            let count = h.index("count", 0).and_then(|i| toks[i].parse::<u64>().ok());
            let ty = h.index("type", 0).map(|i| dtype(toks[i]));
            let redop = h.index("redop", 0).map(|i| toks[i].to_string());
            let root = h.index("root", 0).and_then(|i| toks[i].parse::<i64>().ok());
            let n_ranks = ranks.len().max(1) as u32;
            let op_name = op.clone().unwrap_or_else(|| "unknown_collective".into());
            for (nth, variant) in [(0, "out-of-place"), (1, "in-place")] {
                let (Some(ti), Some(ai), Some(bi)) =
                    (h.index("time", nth), h.index("algbw", nth), h.index("busbw", nth))
                else {
                    continue;
                };
                let Some(time_us) = num(toks[ti]) else { continue };
                let (algbw, busbw) = (num(toks[ai]), num(toks[bi]));
                let check = h.index("#wrong", nth).or_else(|| h.index("error", nth)).map(|i| toks[i]);
                let mut status = Status::Measured;
                let mut note = format!(
                    "nccl-tests {variant} time {time_us} us → s; algbw = size / time; busbw = algbw × bw_factor"
                );
                match check.map(|c| (c, num(c))) {
                    Some((_, Some(w))) if h.index("#wrong", nth).is_some() && w > 0.0 => {
                        status = Status::Failed;
                        note = format!("{w} wrong elements reported by nccl-tests");
                    }
                    Some((c, None)) if c == "N/A" => note += "; results not checked (-c 0)",
                    _ => {}
                }
                let factor = bus_factor(&op_name, n_ranks);
                if let (Some(a), Some(b), Some(f)) = (algbw, busbw, factor) {
                    if a >= 1.0 && ((b / a) - f).abs() > 0.02 * f + 0.01 {
                        out.warnings.push(format!(
                            "line {no}: busbw/algbw = {:.3}, but {op_name} over {n_ranks} ranks has factor {f:.3}",
                            b / a
                        ));
                    }
                }
                if let Some(b) = busbw {
                    busbw_sum += b;
                    busbw_n += 1;
                }
                rows_since_footer += 1;
                let mut r = record(
                    Point {
                        bench: "collective".into(),
                        op: op_name.clone(),
                        variant: Some(variant.into()),
                        dtype: ty.clone(),
                        size_bytes: Some(size),
                        ranks: Some(n_ranks),
                        peer: root.filter(|r| *r >= 0).map(|r| format!("root {r}")),
                        bytes_copied: Some(size),
                        bw_factor: factor.or_else(|| match (algbw, busbw) {
                            (Some(a), Some(b)) if a > 0.0 => Some(b / a),
                            _ => None,
                        }),
                        ..Point::default()
                    },
                    time_us * 1e-6,
                    no,
                    note,
                );
                if let Some(rop) = &redop {
                    r.note += &format!("; redop {rop}");
                }
                if let Some(c) = count {
                    r.note += &format!("; count {c}");
                }
                r.iterations = iters;
                r.status = status;
                if let Some((_, host, name)) = devices.first() {
                    r.device = Some(name.clone()).filter(|n| !n.is_empty());
                    r.host = Some(host.clone()).filter(|h| !h.is_empty());
                }
                out.records.push(r);
            }
        }
        if op.is_none() {
            out.warnings.push("could not tell which collective this is (no `Collective test starting` line, and the file name does not say); rows use op `unknown_collective`".into());
        }
        if rows_since_footer > 0 {
            out.warnings
                .push("no `# Avg bus bandwidth` footer after the last table: the run may have been cut short".into());
        }
        if header.is_none() && out.records.is_empty() {
            return Err(ParseError::new(
                n_lines.max(1),
                "expected a `#  size  count  type ... time  algbw  busbw` header line",
            ));
        }
        Ok(out)
    }
}

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

    fn sniff(&self, text: &str) -> bool {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        first.trim_start().starts_with('{') && first.contains("\"algBw\"") && first.contains("\"busBw\"")
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
                    bench: "collective".into(),
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
