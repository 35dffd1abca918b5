//! ml-engineering's `all_reduce_bench.py` (and its successor
//! `torch-dist-bench.py`): PyTorch's `dist.all_reduce` timed per payload.
//!
//! - The single-payload form: `The average bandwidth of all_reduce with a
//!   4.0GB payload (5 trials, 16 ranks):` then ` algbw: 44.947 GBps (359.6
//!   Gbps)` and ` busbw: …` (a fork adds `(std: 0.015)`). Its `GB` is
//!   decimal: M·N·4 / 10^9 bytes.
//! - The sweep: `The average bandwidth of all_reduce over 32 ranks (…):`
//!   and a markdown table `| payload | busbw | algbw |` whose payloads are
//!   binary (`32KiB`, `16GiB`).
//!
//! GBps is 10^9 bytes/s (the script's own legend). Rows are `collective`
//! `all_reduce` rows like nccl-tests': time = payload / algbw, and the bus
//! factor is nccl-tests' for the rank count, checked against the printed
//! busbw / algbw, or that ratio where the log does not give the ranks.
//! Launcher prefixes (`[host:0]:`) are read through.

use super::{lines, num, record, Claim, Format, ParseError, Parsed, Record};
use crate::vocab::accounting::bus_factor;
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::Point;

pub struct TorchAllReduce;

/// `4.0GB` → 4·10^9; `32KiB` → 32·2^10.
fn payload(tok: &str) -> Option<u64> {
    let t = tok.trim();
    for (unit, scale) in [("KiB", 1u64 << 10), ("MiB", 1 << 20), ("GiB", 1 << 30), ("TiB", 1 << 40)] {
        if let Some(v) = t.strip_suffix(unit) {
            return Some((num(v)? * scale as f64).round() as u64);
        }
    }
    for (unit, scale) in [("KB", 1e3), ("MB", 1e6), ("GB", 1e9), ("B", 1.0)] {
        if let Some(v) = t.strip_suffix(unit) {
            return Some((num(v)? * scale).round() as u64);
        }
    }
    None
}

/// `44.947 GBps` / `0.92GBps` → 44.947.
fn gbps(tok: &str) -> Option<f64> {
    num(tok.trim().trim_end_matches("GBps").trim())
}

/// The number before `word` in a line (`16 ranks` → 16).
fn before(line: &str, word: &str) -> Option<u32> {
    let at = line.find(word)?;
    line[..at].split_whitespace().last()?.trim_start_matches('(').parse().ok()
}

impl Format for TorchAllReduce {
    fn name(&self) -> &'static str {
        "all-reduce-bench"
    }

    fn describe(&self) -> &'static str {
        "ml-engineering all_reduce_bench.py / torch-dist-bench.py: PyTorch all_reduce algbw and busbw per payload"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["all_reduce_bench", "torch-dist-bench"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "`The average bandwidth of all_reduce` (all_reduce_bench.py)", |l| {
            l.contains("The average bandwidth of all_reduce")
        })
        .or_else(|| {
            Claim::find(text, "a `| payload |` table with `busbw` and `algbw`", |l| {
                l.contains("| payload |") && l.contains("busbw") && l.contains("algbw")
            })
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read (a sweep of any length is never held).
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "torch".into(), ..Parsed::default() };
        let mut count = 0usize;
        let mut ranks: Option<u32> = None;
        // The single-payload form: the payload, then its algbw and busbw.
        let mut single: Option<(u64, usize, Option<f64>)> = None;
        // The table's columns: (busbw, algbw) positions.
        let mut columns: Option<(usize, usize)> = None;
        let mut push = |out: &mut Parsed,
                        size: u64,
                        alg: f64,
                        bus: Option<f64>,
                        ranks: Option<u32>,
                        no: usize,
                        how: &str| {
            let own = bus.filter(|_| alg > 0.0).map(|b| b / alg);
            let mut factor = ranks.and_then(|n| bus_factor("all_reduce", n));
            if let (Some(f), Some(o)) = (factor, own) {
                // busbw is printed to 2-3 decimals: allow its rounding.
                if (f - o).abs() > 0.02 * f.max(o) + 0.01 {
                    out.warnings.push(format!(
                        "line {no}: the bus factor over {} ranks is {f:.4}, but busbw / algbw is {o:.4}; the row uses the printed ratio",
                        ranks.unwrap_or(0)
                    ));
                    factor = Some(o);
                }
            }
            count += 1;
            each(record(
                Point {
                    bench: Bench::Collective.name().into(),
                    op: "all_reduce".into(),
                    variant: Some("torch.distributed".into()),
                    size_bytes: Some(size),
                    ranks,
                    bytes_copied: Some(size),
                    bw_factor: factor.or(own),
                    ..Point::default()
                },
                size as f64 / (alg * 1e9),
                no,
                format!("all_reduce_bench algbw {alg} GBps (10^9 bytes/s); time = payload / algbw; payload {how}"),
            ));
        };
        for (no, line) in lines(text) {
            let t = line.trim();
            if let Some(at) = t.find("The average bandwidth of all_reduce") {
                let rest = &t[at..];
                ranks = before(rest, " ranks").or(ranks);
                if let Some(p) = rest.split(" with a ").nth(1).and_then(|r| r.split_whitespace().next()) {
                    let size =
                        payload(p).ok_or_else(|| ParseError::new(no, format!("payload `{p}` not understood")))?;
                    single = Some((size, no, None));
                }
                continue;
            }
            if let Some(at) = t.find("algbw:") {
                if let Some((size, _, _)) = single {
                    let v = t[at + 6..].split_whitespace().next().and_then(gbps);
                    single = Some((size, no, v));
                }
                continue;
            }
            if let Some(at) = t.find("busbw:") {
                if let Some((size, _, Some(alg))) = single.take() {
                    let bus = t[at + 6..].split_whitespace().next().and_then(gbps);
                    push(&mut out, size, alg, bus, ranks, no, "in decimal GB (10^9 bytes), as the script computes it");
                }
                continue;
            }
            if t.starts_with('|') {
                let cells: Vec<&str> = t.trim_matches('|').split('|').map(str::trim).collect();
                if cells.first() == Some(&"payload") {
                    let at = |name: &str| cells.iter().position(|c| *c == name);
                    columns = at("busbw").zip(at("algbw"));
                    continue;
                }
                let Some((b, a)) = columns else { continue };
                let Some(size) = cells.first().and_then(|c| payload(c)) else { continue };
                let Some(alg) = cells.get(a).and_then(|c| gbps(c)).filter(|v| *v > 0.0) else {
                    return Err(ParseError::new(no, format!("expected an algbw in GBps, found `{t}`")));
                };
                let bus = cells.get(b).and_then(|c| gbps(c));
                push(&mut out, size, alg, bus, ranks, no, "in binary units (KiB = 2^10 bytes), as the table prints it");
            }
        }
        if count == 0 {
            return Err(ParseError::new(1, "no all_reduce_bench result (an `algbw:` line or a `| payload |` table)"));
        }
        if ranks.is_none() {
            out.warnings.push("the rank count is not in the log; the bus factor is the printed busbw / algbw".into());
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payloads_read_decimal_and_binary_units() {
        assert_eq!(payload("4.0GB"), Some(4_000_000_000));
        assert_eq!(payload("32KiB"), Some(32768));
        assert_eq!(payload("16GiB"), Some(16 << 30));
        assert_eq!(gbps("0.92GBps"), Some(0.92));
        assert_eq!(before("(5 trials, 16 ranks):", " ranks"), Some(16));
        assert_eq!(before("all_reduce over 32 ranks (5 warmups", " ranks"), Some(32));
    }
}
