//! Intel MPI Benchmarks, IMB-MPI1: each `# Benchmarking <name>` block with
//! its `# #processes = N` and its table.
//!
//! - `PingPong`, `PingPing`: `#bytes #repetitions t[usec] Mbytes/sec`; a
//!   p2p row per size, one message of `#bytes` per `t` (PingPong's `t` is
//!   half the round trip), op `pingpong` / `pingping`.
//! - `Sendrecv`, `Exchange`: `t_min t_max t_avg Mbytes/sec`; IMB counts
//!   2 × size (Sendrecv) and 4 × size (Exchange) per `t`, and so do the
//!   rows' `bytes_copied`; the time is `t_max`, the slowest rank, from
//!   which IMB computes its rate.
//! - Collectives (`Allreduce`, `Reduce`, `Reduce_scatter`, `Allgather`,
//!   `Allgatherv`, `Gather`, `Gatherv`, `Scatter`, `Scatterv`, `Alltoall`,
//!   `Alltoallv`, `Bcast`) and `Barrier`: `t_min t_max t_avg`; a collective
//!   row per size at `t_avg` (as OSU's collective latency), no bus factor.
//!
//! - `Uniband`, `Biband`: `#bytes #repetitions Mbytes/sec Msg/sec`, no time:
//!   over every pair at once, one operation is one message, 1 / `Msg/sec`.
//!
//! Mbytes/sec: versions and benchmarks differ (the IMB guide gives
//! PingPong's as 2^20 bytes/s; 2019's Uniband prints 10^6), so each
//! block's unit is read from its own arithmetic (bytes / time against the
//! printed rate), and the note says which. Other blocks (the `Multi-`
//! forms, IO and RMA parts) are left out with a warning naming the line.

use super::{last_line_incomplete, lines, num, record, Claim, ClaimIf, Format, ParseError, Parsed, Record};
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::Point;

pub struct Imb;

/// How a block's rows are read.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Shape {
    /// One message per `t` (PingPong, PingPing).
    Pair { op: &'static str },
    /// `per` × size per `t_max` (Sendrecv 2, Exchange 4).
    Multi { op: &'static str, per: u64 },
    /// A collective call per `t_avg`.
    Collective { op: &'static str },
    /// No time column: `Msg/sec` over every pair at once (Uniband,
    /// Biband); one operation is one message, 1 / `Msg/sec`.
    Band { op: &'static str },
}

fn shape(name: &str) -> Option<Shape> {
    Some(match name.to_ascii_lowercase().as_str() {
        "pingpong" => Shape::Pair { op: "pingpong" },
        "pingping" => Shape::Pair { op: "pingping" },
        "uniband" => Shape::Band { op: "uniband" },
        "biband" => Shape::Band { op: "biband" },
        "sendrecv" => Shape::Multi { op: "sendrecv", per: 2 },
        "exchange" => Shape::Multi { op: "exchange", per: 4 },
        "allreduce" => Shape::Collective { op: "all_reduce" },
        "reduce" => Shape::Collective { op: "reduce" },
        "reduce_scatter" | "reduce_scatter_block" => Shape::Collective { op: "reduce_scatter" },
        "allgather" | "allgatherv" => Shape::Collective { op: "all_gather" },
        "gather" | "gatherv" => Shape::Collective { op: "gather" },
        "scatter" | "scatterv" => Shape::Collective { op: "scatter" },
        "alltoall" | "alltoallv" => Shape::Collective { op: "all_to_all" },
        "bcast" => Shape::Collective { op: "broadcast" },
        "barrier" => Shape::Collective { op: "barrier" },
        _ => return None,
    })
}

/// One block being read.
struct Block {
    name: String,
    shape: Option<Shape>,
    processes: Option<u32>,
    columns: Vec<String>,
    /// Bytes per "Mbyte" of the rate column, once the block's first row
    /// with a rate decided it.
    mbyte: Option<f64>,
}

impl Block {
    fn col(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c == name)
    }
}

impl Format for Imb {
    fn name(&self) -> &'static str {
        "imb"
    }

    fn describe(&self) -> &'static str {
        "Intel MPI Benchmarks IMB-MPI1: PingPong, PingPing, Sendrecv, Exchange, collectives and Barrier"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["Intel(R) MPI Benchmarks", "Intel (R) MPI Benchmark", "IMB-MPI1", "IMB-NBC", "IMB-RMA", "IMB-EXT"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        // The banner may be cut from an excerpt; the block header and its
        // process count, or the table header, are IMB's own (perftest
        // prints `#iterations`, not `#repetitions`).
        let blocks = || {
            (text.contains("MPI Benchmark") || text.contains("#processes =")).claim(
                text,
                "a `# Benchmarking` block with IMB's banner or `#processes =`",
                |l| l.trim_start().starts_with("# Benchmarking "),
            )
        };
        blocks().or_else(|| {
            Claim::find(text, "IMB's table header (`#bytes #repetitions ... [usec]`)", |l| {
                l.contains("#bytes") && l.contains("#repetitions") && l.contains("[usec]")
            })
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read (a 50 MiB log is never held as records).
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "mpi".into(), ..Parsed::default() };
        let mut count = 0usize;
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut block: Option<Block> = None;
        for (no, line) in unwrap_lines(&all) {
            let t = line.trim();
            if t.is_empty() {
                continue;
            }
            if t.starts_with('#') && t.contains("IMB-P2P part") {
                return Err(ParseError::new(
                    no,
                    "IMB-P2P is not read: its Mbytes/sec and Msg/sec add up every rank's messages over the slowest rank's time (src_c/P2P), which no IMB-MPI1 row means",
                ));
            }
            if out.tool_version.is_none() && t.starts_with('#') && t.contains("MPI Benchmark") {
                let v = t.trim_start_matches('#').trim();
                out.tool_version = Some(v.split(", MPI-1").next().unwrap_or(v).trim().to_string());
            }
            // `# Benchmarking Sendrecv`, or an excerpt's own `Sendrecv:`.
            let named = t.strip_prefix("# Benchmarking ").or_else(|| {
                let n = t.trim_end_matches([':', '：']);
                (n.len() < t.len() && !n.contains(char::is_whitespace) && shape(n).is_some()).then_some(n)
            });
            if let Some(name) = named {
                let name = name.trim().to_string();
                let shape = shape(&name);
                if shape.is_none() {
                    out.warnings.push(format!("line {no}: IMB block `{name}` is not imported (no row shape for it)"));
                }
                block = Some(Block { name, shape, processes: None, columns: Vec::new(), mbyte: None });
                continue;
            }
            let Some(b) = block.as_mut() else { continue };
            if let Some(rest) = t.strip_prefix("# #processes =") {
                b.processes = rest.split_whitespace().next().and_then(|n| n.parse().ok());
                continue;
            }
            if t.starts_with("#bytes") || t.starts_with("#repetitions") {
                b.columns = t.split_whitespace().map(String::from).collect();
                continue;
            }
            if t.starts_with('#') || b.columns.is_empty() {
                // A rule, a comment, or text between blocks.
                continue;
            }
            let Some(shape) = b.shape else { continue };
            let toks: Vec<&str> = t.split_whitespace().collect();
            let sized = b.col("#bytes").is_some();
            let value = |name: &str| b.col(name).and_then(|i| toks.get(i)).and_then(|v| num(v));
            let size = if sized { toks.first().and_then(|v| v.parse::<u64>().ok()) } else { None };
            let reps = b.col("#repetitions").and_then(|i| toks.get(i)).and_then(|v| v.parse::<u64>().ok());
            let time_col = match shape {
                Shape::Pair { .. } => "t[usec]",
                Shape::Multi { .. } => "t_max[usec]",
                Shape::Collective { .. } => "t_avg[usec]",
                Shape::Band { .. } => "Msg/sec",
            };
            let usec = match shape {
                Shape::Band { .. } => value("Msg/sec").filter(|m| *m > 0.0).map(|m| 1e6 / m),
                _ => value(time_col),
            };
            let (Some(usec), true) = (usec, !sized || size.is_some()) else {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                // A line of other text after the table ends it.
                if toks.first().is_some_and(|v| v.parse::<f64>().is_err()) {
                    block = None;
                    continue;
                }
                return Err(ParseError::new(
                    no,
                    format!("IMB {}: expected `{}` numbers, found `{t}`", b.name, b.columns.join(" ")),
                ));
            };
            let printed_rate = value("Mbytes/sec");
            let spread = match (value("t_min[usec]"), value("t_max[usec]"), value("t_avg[usec]")) {
                (Some(lo), Some(hi), Some(avg)) => format!("; t_min {lo} us, t_max {hi} us, t_avg {avg} us"),
                _ => String::new(),
            };
            let (bench, op, per) = match shape {
                Shape::Pair { op } => (Bench::P2p, op, 1),
                Shape::Multi { op, per } => (Bench::P2p, op, per),
                Shape::Collective { op } => (Bench::Collective, op, 1),
                Shape::Band { op } => (Bench::P2p, op, 1),
            };
            let bytes = size
                .map(|s| s.checked_mul(per).ok_or_else(|| ParseError::new(no, format!("size {s} × {per} overflows"))))
                .transpose()?;
            // The rate column's unit, from the first row that can tell.
            let mut rate_note = String::new();
            if let (Some(rate), Some(bytes)) = (printed_rate, bytes) {
                if rate > 0.0 && bytes > 0 && usec > 0.0 {
                    let per_sec = bytes as f64 / (usec * 1e-6);
                    let mbyte = *b.mbyte.get_or_insert(
                        if (per_sec / 1048576.0 / rate - 1.0).abs() < (per_sec / 1e6 / rate - 1.0).abs() {
                            1048576.0
                        } else {
                            1e6
                        },
                    );
                    let unit = if mbyte == 1e6 { "10^6" } else { "2^20" };
                    rate_note = format!("; IMB printed {rate} Mbytes/sec ({unit} bytes/s, as its arithmetic shows)");
                    // `t` is printed to 2 decimals: below 10 us that alone is
                    // more than 0.05 % off.
                    if (per_sec / mbyte / rate - 1.0).abs() > 0.02 && usec >= 10.0 {
                        out.warnings.push(format!(
                            "line {no}: {} bytes in {usec} us is {:.2} Mbytes/sec, but IMB printed {rate}",
                            bytes,
                            per_sec / mbyte
                        ));
                    }
                }
            }
            let counted = match shape {
                Shape::Multi { per, .. } => format!("; IMB counts {per} × size per operation"),
                Shape::Band { .. } => {
                    "; one operation is one message of all the pairs sending at once: time = 1 / Msg/sec".to_string()
                }
                _ => String::new(),
            };
            let what = match shape {
                Shape::Band { .. } => format!("IMB {} {} Msg/sec → {usec:.6} us per message", b.name, 1e6 / usec),
                _ => format!("IMB {} {time_col} {usec} us → s", b.name),
            };
            let mut r = record(
                Point {
                    bench: bench.name().into(),
                    op: op.into(),
                    variant: Some("host buffers".into()),
                    size_bytes: size,
                    ranks: b.processes,
                    bytes_copied: bytes,
                    ..Point::default()
                },
                usec * 1e-6,
                no,
                format!("{what}{counted}{spread}{rate_note}"),
            );
            r.iterations = reps;
            count += 1;
            each(r);
        }
        if count == 0 {
            return Err(ParseError::new(
                all.len().max(1),
                "no IMB result rows (a `# Benchmarking <name>` block with its `#bytes #repetitions ...` table)",
            ));
        }
        Ok(out)
    }
}

/// The log's lines with e-mail wrapping undone: a line that is one token
/// continues the table line before it when that line is a table header
/// or a row shorter than the header (`Mbytes/sec` and its values wrapped
/// onto lines of their own).
fn unwrap_lines<'a>(all: &[(usize, &'a str)]) -> Vec<(usize, std::borrow::Cow<'a, str>)> {
    let mut out: Vec<(usize, std::borrow::Cow<'a, str>)> = Vec::new();
    let mut width = 0usize;
    for &(no, line) in all {
        let t = line.trim();
        let one = !t.is_empty() && !t.contains(char::is_whitespace) && !t.starts_with('#');
        if one && width > 0 {
            if let Some((_, last)) = out.last_mut() {
                let lt = last.trim();
                let header = lt.starts_with("#bytes") || lt.starts_with("#repetitions");
                let short_row = lt.split_whitespace().next().is_some_and(|v| v.parse::<f64>().is_ok())
                    && lt.split_whitespace().count() < width;
                if (header && !t.starts_with('-')) || (short_row && t.parse::<f64>().is_ok()) {
                    *last = format!("{lt} {t}").into();
                    if header {
                        width += 1;
                    }
                    continue;
                }
            }
        }
        if t.starts_with("#bytes") || t.starts_with("#repetitions") {
            width = t.split_whitespace().count();
        }
        out.push((no, line.into()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_mail_wrapped_tables_are_joined_again() {
        let text = "#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec]\nMbytes/sec\n0 1000 4.06 4.06 4.06\n0.00\n------\n";
        let all = super::super::lines(text);
        let joined: Vec<String> = unwrap_lines(&all).into_iter().map(|(_, l)| l.into_owned()).collect();
        assert_eq!(
            joined,
            [
                "#bytes #repetitions t_min[usec] t_max[usec] t_avg[usec] Mbytes/sec",
                "0 1000 4.06 4.06 4.06 0.00",
                "------"
            ]
        );
    }

    #[test]
    fn names_map_to_row_shapes() {
        assert_eq!(shape("PingPong"), Some(Shape::Pair { op: "pingpong" }));
        assert_eq!(shape("Exchange"), Some(Shape::Multi { op: "exchange", per: 4 }));
        assert_eq!(shape("Allreduce"), Some(Shape::Collective { op: "all_reduce" }));
        assert_eq!(shape("Biband"), Some(Shape::Band { op: "biband" }));
        assert_eq!(shape("Multi-PingPong"), None);
    }
}
