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

use super::{last_line_incomplete, lines, num, record, Claim, Format, ParseError, Parsed};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::{Point, Status};

pub struct Osu;

/// How a test's rows are read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Class {
    /// MB/s of one pair (`osu_bw`, `osu_put_bw`); `bibw`-style tests count
    /// both directions.
    Bandwidth,
    /// MB/s summed over `pairs` pairs sending at once (`osu_mbw_mr`), with
    /// a message rate column.
    MultiPair,
    /// µs per message between a pair (`osu_latency`, `osu_multi_lat`,
    /// one-sided `osu_put_latency` ...).
    Latency,
    /// µs per collective call, averaged over ranks.
    Collective,
}

/// What a title names: the op, how its rows are read, and for collectives
/// the call style (`non-blocking`, `persistent`), which is the variant's.
#[derive(Debug, Clone, PartialEq)]
struct Kind {
    op: String,
    class: Class,
    style: Option<&'static str>,
}

/// The test an OSU title names, e.g. "# OSU MPI Bandwidth Test v7.3",
/// "# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3", "# OSU MPI_Put
/// Latency Test v5.8", "# OSU MPI Multiple Bandwidth / Message Rate Test
/// v7.1", "# OSU MPI Non-blocking Allreduce Latency Test v5.6.3",
/// "# OSU MPI-CUDA Allreduce Persistent Latency Test v7.4". Ops are OSU's
/// program names without `osu_` for point-to-point tests (`bw`, `mbw_mr`,
/// `put_latency`), benchbook's collective names for collectives.
fn test_kind(title: &str) -> Option<Kind> {
    let t = title.trim_start_matches('#').trim();
    let body = t.strip_prefix("OSU")?.trim();
    // "MPI", "MPI-CUDA", ... or a one-sided call: "MPI_Put", "MPI_Get".
    let (api, rest) = body.split_once(' ')?;
    let rest = rest.split(" v").next().unwrap_or(rest).trim().to_ascii_lowercase();
    let rest = rest.strip_suffix(" test").unwrap_or(&rest).trim();
    let p2p = |op: String, class| Some(Kind { op, class, style: None });
    let measure = if rest.starts_with("bi-directional bandwidth") || rest.starts_with("bidirectional bandwidth") {
        Some(("bibw", Class::Bandwidth))
    } else if rest.starts_with("multiple bandwidth") {
        Some(("mbw_mr", Class::MultiPair))
    } else if rest.starts_with("bandwidth") {
        Some(("bw", Class::Bandwidth))
    } else if rest == "latency" {
        Some(("latency", Class::Latency))
    } else if rest.starts_with("multi latency") || rest.starts_with("multiple latency") {
        Some(("multi_lat", Class::Latency))
    } else if rest.starts_with("latency multi-threaded") {
        Some(("latency_mt", Class::Latency))
    } else {
        None
    };
    if let Some(call) = api.strip_prefix("MPI_") {
        // One-sided: OSU's program names, osu_put_bw, osu_acc_latency ...
        let short = match call.to_ascii_lowercase().as_str() {
            "put" => "put",
            "get" => "get",
            "accumulate" => "acc",
            "get_accumulate" => "get_acc",
            "fetch_and_op" => "fop",
            "compare_and_swap" => "cas",
            _ => return None,
        };
        let (what, class) = measure?;
        return p2p(format!("{short}_{what}"), class);
    }
    if let Some((op, class)) = measure {
        return p2p(op.to_string(), class);
    }
    let coll = rest.strip_suffix("latency")?.trim().replace(['-', ' '], "");
    let (coll, style) = if let Some(c) = coll.strip_prefix("nonblocking") {
        (c.to_string(), Some("non-blocking"))
    } else if let Some(c) = coll.strip_suffix("persistent") {
        (c.to_string(), Some("persistent"))
    } else {
        (coll, None)
    };
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
    let op = known.iter().find(|(k, _)| coll.starts_with(k)).map(|(_, op)| op.to_string()).unwrap_or(coll);
    Some(Kind { op, class: Class::Collective, style })
}

/// The OSU title on a line: from `# OSU` on. Every rank of an `osu_xccl_*`
/// test prints `#Using NCCL` first, and the title may follow one on the
/// same line when their output interleaves.
fn title_at(line: &str) -> Option<&str> {
    let t = line.trim_start();
    if t.starts_with("# OSU") {
        return Some(t);
    }
    let at = t.find("# OSU ")?;
    xccl_line(&t[..at]).then(|| &t[at..])
}

/// `#Using NCCL` / `#Using RCCL` lines (one per rank of an `osu_xccl_*`
/// test), possibly several glued together.
fn xccl_line(t: &str) -> bool {
    let rest =
        t.replace("#Using NCCL", "").replace("#Using RCCL", "").replace("Using NCCL", "").replace("Using RCCL", "");
    rest.len() < t.len() && rest.trim().is_empty()
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

    fn markers(&self) -> &'static [&'static str] {
        &["# OSU", "osu_"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "an OSU banner (`# OSU ...`)", |l| title_at(l).is_some())
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
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
        for &(no, line) in &all {
            let t = line.trim();
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
            out.records.push(r);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kind(title: &str) -> Option<(String, Class, Option<&'static str>)> {
        test_kind(title).map(|k| (k.op, k.class, k.style))
    }

    #[test]
    fn titles_name_their_test() {
        let p2p = |op: &str, c| Some((op.to_string(), c, None));
        assert_eq!(kind("# OSU MPI-CUDA Bi-Directional Bandwidth Test v7.3"), p2p("bibw", Class::Bandwidth));
        assert_eq!(kind("# OSU MPI Multiple Bandwidth / Message Rate Test v5.6.2"), p2p("mbw_mr", Class::MultiPair));
        assert_eq!(kind("# OSU MPI Multi Latency Test v7.1"), p2p("multi_lat", Class::Latency));
        assert_eq!(kind("# OSU MPI_Put Bandwidth Test v5.6.3"), p2p("put_bw", Class::Bandwidth));
        assert_eq!(kind("# OSU MPI_Put Bi-directional Bandwidth Test v7.0"), p2p("put_bibw", Class::Bandwidth));
        assert_eq!(kind("# OSU MPI_Get latency Test v5.6.3"), p2p("get_latency", Class::Latency));
        assert_eq!(kind("# OSU MPI_Accumulate latency Test v5.6.3"), p2p("acc_latency", Class::Latency));
        assert_eq!(
            kind("# OSU MPI Non-blocking Allreduce Latency Test v5.6.3"),
            Some(("all_reduce".into(), Class::Collective, Some("non-blocking")))
        );
        assert_eq!(
            kind("# OSU MPI-CUDA Allreduce Persistent Latency Test v7.4"),
            Some(("all_reduce".into(), Class::Collective, Some("persistent")))
        );
        assert_eq!(kind("# OSU MPI Reduce Latency Test v7.4"), Some(("reduce".into(), Class::Collective, None)));
        assert_eq!(kind("# OSU MPI_Frobnicate latency Test v1"), None);
        assert_eq!(kind("# OSU"), None);
        assert_eq!(kind("# OSU NCCL-CUDA Bandwidth Test v7.4"), p2p("bw", Class::Bandwidth));
        assert_eq!(kind("# OSU RCCL-ROCM Bi-Directional Bandwidth Test v7.5"), p2p("bibw", Class::Bandwidth));
        assert_eq!(
            kind("# OSU NCCL-CUDA All-to-All Personalized Exchange Latency Test v7.5"),
            Some(("all_to_all".into(), Class::Collective, None))
        );
    }

    #[test]
    fn xccl_rank_lines_are_not_rows() {
        assert!(xccl_line("#Using NCCL"));
        assert!(xccl_line("#Using NCCL#Using NCCL"));
        assert!(!xccl_line("# Size  Bandwidth (MB/s)"));
        assert_eq!(
            title_at("#Using NCCL# OSU NCCL-CUDA Bandwidth Test v7.4"),
            Some("# OSU NCCL-CUDA Bandwidth Test v7.4")
        );
        assert_eq!(title_at("1024  # OSU"), None);
    }
}
