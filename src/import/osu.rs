//! OSU Micro-Benchmarks: `osu_bw`, `osu_bibw`, `osu_latency` and the
//! collective latency tests (`osu_allreduce`, `osu_allgather`, ...), with
//! host or device buffers.
//!
//! OSU prints MB/s as 10^6 bytes/s. `osu_bibw` counts both directions, so
//! one operation is `2 × size`. Latencies are µs per operation (for the
//! collectives: the average over ranks, `Avg Latency(us)`). Collective rows
//! carry no `bw_factor`: OSU does not print the rank count.

use super::{last_line_incomplete, lines, num, record, Format, ParseError, Parsed};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub struct Osu;

fn test_kind(title: &str) -> Option<(String, &'static str)> {
    // "# OSU MPI Bandwidth Test v7.3", "# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3",
    // "# OSU MPI Latency Test v7.3", "# OSU MPI Allreduce Latency Test v7.3",
    // "# OSU MPI-CUDA All-to-All Personalized Exchange Latency Test v7.5"
    let t = title.trim_start_matches('#').trim();
    let body = t.strip_prefix("OSU")?.trim();
    let body = body.split_once(' ').map(|(_, r)| r).unwrap_or(body); // drop "MPI" / "MPI-CUDA"
    let body = body.split(" v").next().unwrap_or(body).trim();
    if body.starts_with("Bi-Directional Bandwidth") {
        return Some(("bibw".into(), "bw"));
    } else if body.starts_with("Bandwidth") {
        return Some(("bw".into(), "bw"));
    } else if body == "Latency Test" {
        return Some(("latency".into(), "lat"));
    }
    let coll = body.strip_suffix("Latency Test")?.trim().to_ascii_lowercase().replace(['-', ' '], "");
    let coll = coll.trim_start_matches("nonblocking");
    // Longest names first: "allreduce" before "reduce".
    let known = [
        ("alltoall", "all_to_all"),
        ("allreduce", "all_reduce"),
        ("allgather", "all_gather"),
        ("reducescatter", "reduce_scatter"),
        ("broadcast", "broadcast"),
        ("bcast", "broadcast"),
        ("barrier", "barrier"),
        ("gather", "gather"),
        ("scatter", "scatter"),
        ("reduce", "reduce"),
    ];
    let op = known
        .iter()
        .find(|(k, _)| coll.starts_with(k))
        .map(|(_, op)| op.to_string())
        .unwrap_or_else(|| coll.to_string());
    Some((op, "coll"))
}

/// `host`, `device` or `managed` for OSU's H, D and M buffer letters.
fn buffer_word(letter: &str) -> Option<&'static str> {
    match letter {
        "H" => Some("host"),
        "D" => Some("device"),
        "M" => Some("managed"),
        _ => None,
    }
}

/// The variant for a send and a receive buffer location.
fn buffers_variant(send: &str, recv: &str) -> String {
    if send == recv {
        format!("{send} buffers")
    } else {
        format!("{send}→{recv} buffers")
    }
}

/// What the command line says: buffer locations and rank count.
struct Command {
    text: String,
    buffers: Option<String>,
    accelerated: bool,
    ranks: Option<u32>,
}

fn read_command(line: &str) -> Option<Command> {
    let c = super::command_line(line, |t| t.rsplit('/').next().is_some_and(|b| b.starts_with("osu_")))?;
    c.binary?;
    let args = c.args();
    // Positional buffer letters: `D D`, `H D`, ...
    let letters: Vec<&str> = args.iter().copied().filter(|a| buffer_word(a).is_some()).collect();
    let buffers = match letters.as_slice() {
        [s, r, ..] => Some(buffers_variant(buffer_word(s)?, buffer_word(r)?)),
        [one] => buffer_word(one).map(|w| format!("{w} buffers")),
        [] => None,
    };
    let accelerated = args.windows(2).any(|w| (w[0] == "-d" || w[0] == "--accelerator") && w[1] != "host");
    Some(Command { text: c.text(), buffers, accelerated, ranks: c.ranks })
}

impl Format for Osu {
    fn name(&self) -> &'static str {
        "osu"
    }

    fn describe(&self) -> &'static str {
        "OSU Micro-Benchmarks osu_bw, osu_bibw, osu_latency and collective latency tests, host or device buffers"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn sniff(&self, text: &str) -> bool {
        text.lines().any(|l| l.trim_start().starts_with("# OSU"))
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "mpi".into(), ..Parsed::default() };
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let command =
            all.iter().find_map(|(_, l)| (!l.trim_start().starts_with('#')).then(|| read_command(l)).flatten());
        out.command = command.as_ref().map(|c| c.text.clone());
        let mut kind: Option<(String, &'static str)> = None;
        // Buffers: the explicit header line, else the command line's
        // letters, else an accelerator run (`-d cuda`, or an MPI-CUDA /
        // MPI-ROCM title, which OSU prints only then), else host.
        let mut stated: Option<String> = None;
        let mut title_accelerated = false;
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
                title_accelerated = ["MPI-CUDA", "MPI-ROCM", "MPI-OPENACC", "MPI-SYCL"].iter().any(|a| t.contains(a));
                out.tool_version = t.split(" v").nth(1).map(|v| format!("OSU Micro-Benchmarks {v}"));
                continue;
            }
            if t.contains("Buffer on") {
                // "# Send Buffer on DEVICE (D) and Receive Buffer on HOST (H)"
                let places: Vec<&str> = t
                    .split("Buffer on")
                    .skip(1)
                    .filter_map(|p| p.split_whitespace().next())
                    .filter_map(|w| match w {
                        "HOST" => Some("host"),
                        "DEVICE" => Some("device"),
                        "MANAGED" => Some("managed"),
                        _ => None,
                    })
                    .collect();
                if let [send, recv] = places.as_slice() {
                    stated = Some(buffers_variant(send, recv));
                } else {
                    out.warnings.push(format!("line {no}: buffer locations not understood: `{t}`"));
                }
                continue;
            }
            if t.starts_with("# Size") || t.starts_with("# Avg Latency") {
                columns = t.trim_start_matches('#').split_whitespace().map(String::from).collect();
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
            let Some((op, class)) = &kind else { continue };
            let toks: Vec<&str> = t.split_whitespace().collect();
            // `osu_barrier` prints one value and no size.
            let sizeless = columns.first().is_some_and(|c| c == "Avg");
            let (size, value) = if sizeless {
                (None, toks.first().and_then(|v| num(v)))
            } else {
                let Some(size) = toks.first().and_then(|s| s.parse::<u64>().ok()) else { continue };
                (Some(size), toks.get(1).and_then(|v| num(v)))
            };
            let Some(value) = value else {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                if sizeless {
                    continue;
                }
                return Err(ParseError::new(no, format!("expected `size value` ({}), found `{t}`", columns.join(" "))));
            };
            let bytes = match size {
                Some(s) if op == "bibw" => Some(
                    s.checked_mul(2)
                        .ok_or_else(|| ParseError::new(no, format!("size {s} × 2 directions overflows")))?,
                ),
                other => other,
            };
            let (bench, seconds, note) = match (*class, bytes) {
                ("bw", Some(bytes)) => (
                    Bench::P2p,
                    bytes as f64 / (value * 1e6),
                    format!(
                        "OSU {value} MB/s (10^6 bytes/s); time per message derived as bytes / rate{}",
                        if op == "bibw" { "; both directions counted (2 × size)" } else { "" }
                    ),
                ),
                ("lat", _) => (Bench::P2p, value * 1e-6, format!("OSU latency {value} us → s")),
                _ => (Bench::Collective, value * 1e-6, format!("OSU average latency {value} us → s; no bus factor")),
            };
            let buffers = stated
                .clone()
                .or_else(|| command.as_ref().and_then(|c| c.buffers.clone()))
                .or_else(|| {
                    (title_accelerated || command.as_ref().is_some_and(|c| c.accelerated))
                        .then(|| "device buffers".into())
                })
                .unwrap_or_else(|| "host buffers".into());
            let mut r = record(
                Point {
                    bench: bench.name().into(),
                    op: op.clone(),
                    variant: Some(buffers),
                    size_bytes: size,
                    ranks: if bench == Bench::P2p { Some(2) } else { command.as_ref().and_then(|c| c.ranks) },
                    bytes_copied: bytes,
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
            if columns.last().is_some_and(|c| c == "Validation") {
                match toks.last() {
                    Some(&"Pass") => r.note += "; validation passed",
                    Some(v) => {
                        r.status = Status::Failed;
                        r.note = format!("OSU validation: {v}");
                    }
                    None => {}
                }
            }
            out.records.push(r);
        }
        Ok(out)
    }
}
