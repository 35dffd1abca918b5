//! OSU Micro-Benchmarks: the point-to-point tests (`osu_bw`, `osu_bibw`,
//! `osu_latency`, `osu_multi_lat`, `osu_mbw_mr`), the one-sided ones
//! (`osu_put_bw`, `osu_get_latency`, `osu_acc_latency`, ...) and the
//! collective latency tests, blocking, non-blocking (`osu_iallreduce`) and
//! persistent (`osu_allreduce_persistent`), with host or device buffers,
//! and the NCCL/RCCL-backed `osu_xccl_*` tests of OMB 7.2+ (method
//! `osu_xccl (nccl)`; their ranks print `#Using NCCL` lines first).
//!
//! OSU prints MB/s as 10^6 bytes/s. `osu_bibw` counts both directions, so
//! one operation is `2 × size`; `osu_mbw_mr` sums over its pairs, so one
//! operation is one message from every pair (`pairs × size`), and its
//! message rate is pairs / time. Latencies are µs per operation (for the
//! collectives: the average over ranks, `Avg Latency(us)`, or a
//! non-blocking test's `Overall(us)`). A collective's call style is its
//! variant's (`host buffers, non-blocking`); its op is the collective's.
//! Collective rows carry no `bw_factor`: OSU does not print the rank count.

use super::osu_title::{plot_title, test_kind, title_at, xccl_line, Class, Kind};
use super::{last_line_incomplete, lines, num, record, Claim, Format, ParseError, Parsed, Record};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub struct Osu;

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

    fn markers(&self) -> &'static [&'static str] {
        &["# OSU", "osu_"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "an OSU banner (`# OSU ...`)", |l| title_at(l).is_some())
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read (a 50 MiB log is never held as
    /// records).
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "mpi".into(), ..Parsed::default() };
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let command =
            all.iter().find_map(|(_, l)| (!l.trim_start().starts_with('#')).then(|| read_command(l)).flatten());
        out.command = command.as_ref().map(|c| c.text.clone());
        let mut kind: Option<Kind> = None;
        // `osu_mbw_mr`: how many pairs send at once ("# [ pairs: 32 ]").
        let mut pairs: Option<u64> = None;
        // Buffers: the explicit header line, else the command line's
        // letters, else an accelerator run (`-d cuda`, or an MPI-CUDA /
        // MPI-ROCM title, which OSU prints only then), else host.
        let mut stated: Option<String> = None;
        let mut title_accelerated = false;
        let mut xccl: Option<&str> = None;
        let mut columns: Vec<String> = Vec::new();
        // `-G tty` (6.2+): after the table, gnuplot draws each size's
        // per-iteration values; its axis ticks are rows of numbers.
        let mut plot: Option<(usize, u64)> = None;
        for &(no, line) in &all {
            let t = line.trim();
            if let Some((from, size)) = plot {
                if t == "Iteration Count" || no == all.len() {
                    out.warnings.push(format!(
                        "lines {from}-{no}: the `-G tty` plot of size {size}'s per-iteration values (drawn by gnuplot) is not read; the table's row is"
                    ));
                    plot = None;
                }
                continue;
            }
            if let Some(size) = plot_title(t) {
                plot = Some((no, size));
                continue;
            }
            if t.is_empty() || xccl_line(t) {
                continue;
            }
            if let Some(t) = title_at(t) {
                kind = test_kind(t);
                if kind.is_none() {
                    return Err(ParseError::new(no, format!("unknown OSU test `{t}`; expected a point-to-point Bandwidth, Bi-Directional Bandwidth, Multiple Bandwidth / Message Rate or Latency test, a one-sided MPI_Put/MPI_Get/MPI_Accumulate test, or a collective Latency test")));
                }
                title_accelerated =
                    ["MPI-CUDA", "MPI-ROCM", "MPI-OPENACC", "MPI-SYCL", "NCCL", "RCCL"].iter().any(|a| t.contains(a));
                // `osu_xccl_*` (OMB 7.2+): the test runs through NCCL or RCCL.
                xccl = ["NCCL", "RCCL"]
                    .into_iter()
                    .find(|x| t.split_whitespace().nth(2).is_some_and(|api| api.starts_with(x)));
                if let Some(x) = xccl {
                    out.backend = x.to_ascii_lowercase();
                }
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
            if let Some(rest) = t.strip_prefix("# [ pairs:") {
                pairs = rest.split(']').next().and_then(|n| n.trim().parse().ok()).filter(|&n: &u64| n > 0);
                continue;
            }
            if t.starts_with("# Size") || t.starts_with("# Avg Latency") {
                columns = t.trim_start_matches('#').split_whitespace().map(String::from).collect();
                if columns.iter().any(|c| c == "Transmit") {
                    // 6.1+'s derived datatypes (`-D`): the payload is the
                    // `Transmit Size`, not the size the row starts with.
                    return Err(ParseError::new(
                        no,
                        "a derived-datatype run (`-D`, a `Transmit Size` column) is not read: its bytes per message differ from the size each row starts with",
                    ));
                }
                continue;
            }
            if t.starts_with('#') {
                continue;
            }
            let Some(Kind { op, class, style }) = &kind else { continue };
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
            let per_op = match class {
                Class::MultiPair => match pairs {
                    Some(p) => p,
                    None => return Err(ParseError::new(
                        no,
                        "expected a `# [ pairs: N ]` line before the rows of a Multiple Bandwidth / Message Rate test",
                    )),
                },
                _ if op.ends_with("bibw") => 2,
                _ => 1,
            };
            let bytes = match size {
                Some(s) if *class == Class::Bandwidth || *class == Class::MultiPair => Some(
                    s.checked_mul(per_op)
                        .ok_or_else(|| ParseError::new(no, format!("size {s} × {per_op} overflows")))?,
                ),
                other => other,
            };
            let (bench, seconds, note) = match (*class, bytes) {
                (Class::Bandwidth, Some(bytes)) => (
                    Bench::P2p,
                    bytes as f64 / (value * 1e6),
                    format!(
                        "OSU {value} MB/s (10^6 bytes/s); time per message derived as bytes / rate{}",
                        if per_op == 2 { "; both directions counted (2 × size)" } else { "" }
                    ),
                ),
                (Class::MultiPair, Some(bytes)) => (
                    Bench::P2p,
                    bytes as f64 / (value * 1e6),
                    format!(
                        "OSU {value} MB/s (10^6 bytes/s) summed over {per_op} pairs; one operation is one message from every pair ({per_op} × size bytes), time derived as bytes / rate; messages/s = pairs / time"
                    ),
                ),
                (Class::Latency, _) => (Bench::P2p, value * 1e-6, format!("OSU latency {value} us → s")),
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
            let variant = match style {
                Some(style) => format!("{buffers}, {style}"),
                None => buffers,
            };
            let ranks = match class {
                Class::MultiPair => pairs.and_then(|p| u32::try_from(p.saturating_mul(2)).ok()),
                _ if op == "multi_lat" || bench == Bench::Collective => command.as_ref().and_then(|c| c.ranks),
                _ => Some(2),
            };
            let mut r = record(
                Point {
                    bench: bench.name().into(),
                    op: op.clone(),
                    variant: Some(variant),
                    size_bytes: size,
                    ranks,
                    bytes_copied: bytes,
                    method: xccl.map(|x| format!("osu_xccl ({})", x.to_ascii_lowercase())),
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
            each(r);
        }
        Ok(out)
    }
}
