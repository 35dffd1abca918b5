//! OSU Micro-Benchmarks: `osu_bw`, `osu_bibw`, `osu_latency` and the
//! collective latency tests (`osu_allreduce`, `osu_allgather`, ...), with
//! host or device buffers.
//!
//! OSU prints MB/s as 10^6 bytes/s. `osu_bibw` counts both directions, so
//! one operation is `2 × size`. Latencies are µs per operation (for the
//! collectives: the average over ranks, `Avg Latency(us)`). Collective rows
//! carry no `bw_factor`: OSU does not print the rank count.

use super::{last_line_incomplete, lines, num, record, Format, ParseError, Parsed};
use crate::vocab::rows::Point;

pub struct Osu;

fn test_kind(title: &str) -> Option<(String, &'static str)> {
    // "# OSU MPI Bandwidth Test v7.3", "# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3",
    // "# OSU MPI Latency Test v7.3", "# OSU MPI Allreduce Latency Test v7.3"
    let t = title.trim_start_matches('#').trim();
    let body = t.strip_prefix("OSU")?.trim();
    let body = body.split_once(' ').map(|(_, r)| r).unwrap_or(body); // drop "MPI" / "MPI-CUDA"
    let body = body.split(" v").next().unwrap_or(body).trim();
    if body.starts_with("Bi-Directional Bandwidth") {
        Some(("bibw".into(), "bw"))
    } else if body.starts_with("Bandwidth") {
        Some(("bw".into(), "bw"))
    } else if body == "Latency Test" {
        Some(("latency".into(), "lat"))
    } else if let Some(coll) = body.strip_suffix("Latency Test") {
        let c = coll.trim().to_ascii_lowercase().replace('-', "_");
        let op = match c.as_str() {
            "allreduce" => "all_reduce",
            "allgather" => "all_gather",
            "alltoall" => "all_to_all",
            "reduce_scatter" | "reducescatter" => "reduce_scatter",
            "broadcast" | "bcast" => "broadcast",
            other => return Some((other.to_string(), "coll")),
        };
        Some((op.into(), "coll"))
    } else {
        None
    }
}

impl Format for Osu {
    fn name(&self) -> &'static str {
        "osu"
    }

    fn describe(&self) -> &'static str {
        "OSU Micro-Benchmarks osu_bw, osu_bibw, osu_latency and collective latency tests, host or device buffers"
    }

    fn sniff(&self, text: &str) -> bool {
        text.lines().any(|l| l.trim_start().starts_with("# OSU"))
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "mpi".into(), ..Parsed::default() };
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut kind: Option<(String, &'static str)> = None;
        let mut buffers = "host".to_string();
        let mut columns: Vec<String> = Vec::new();
        for &(no, line) in &all {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            if t.starts_with("# OSU") {
                kind = test_kind(t);
                if kind.is_none() {
                    return Err(ParseError::new(no, format!("unknown OSU test `{t}`; expected a Bandwidth, Bi-Directional Bandwidth, Latency or collective Latency test")));
                }
                out.tool_version = t.split(" v").nth(1).map(|v| format!("OSU Micro-Benchmarks {v}"));
                continue;
            }
            if t.starts_with("# Send Buffer") || t.contains("Buffer on") {
                // "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)"
                let d = t.matches("DEVICE").count();
                let m = t.matches("MANAGED").count();
                buffers = match (d, m) {
                    (2, _) => "device".into(),
                    (0, 0) => "host".into(),
                    _ => t.trim_start_matches('#').trim().to_string(),
                };
                continue;
            }
            if t.starts_with("# Size") {
                columns = t.trim_start_matches('#').split_whitespace().map(String::from).collect();
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
            let Some((op, class)) = &kind else { continue };
            let toks: Vec<&str> = t.split_whitespace().collect();
            let Some(size) = toks.first().and_then(|s| s.parse::<u64>().ok()) else { continue };
            let Some(value) = toks.get(1).and_then(|v| num(v)) else {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                return Err(ParseError::new(no, format!("expected `size value` ({}), found `{t}`", columns.join(" "))));
            };
            let (bench, seconds, bytes, note) = match *class {
                "bw" => {
                    if value <= 0.0 {
                        out.warnings.push(format!("line {no}: bandwidth {value}; row skipped"));
                        continue;
                    }
                    let bytes = if op == "bibw" { 2 * size } else { size };
                    (
                        "p2p",
                        bytes as f64 / (value * 1e6),
                        bytes,
                        format!(
                            "OSU {value} MB/s (10^6 bytes/s); time per message derived as bytes / rate{}",
                            if op == "bibw" { "; both directions counted (2 × size)" } else { "" }
                        ),
                    )
                }
                "lat" => ("p2p", value * 1e-6, size, format!("OSU latency {value} us → s")),
                _ => (
                    "collective",
                    value * 1e-6,
                    size,
                    format!("OSU average latency {value} us → s; no bus factor (rank count not printed)"),
                ),
            };
            let mut r = record(
                Point {
                    bench: bench.into(),
                    op: op.clone(),
                    variant: Some(format!("{buffers} buffers")),
                    size_bytes: Some(size),
                    bytes_copied: Some(bytes),
                    ..Point::default()
                },
                seconds,
                no,
                note,
            );
            // Header names span several words ("Avg Latency(us)"), so count
            // from the end: `Iterations` is the last column when present.
            if columns.last().is_some_and(|c| c == "Iterations") && toks.len() > 2 {
                r.iterations = toks.last().and_then(|v| v.parse().ok());
            }
            out.records.push(r);
        }
        Ok(out)
    }
}
