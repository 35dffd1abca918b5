//! DeepSpeed's communication benchmarks (`benchmarks/communication/
//! all_reduce.py` and friends, run directly or through forks such as
//! EleutherAI's cookbook): blocks `---- Performance of <op> on <N> devices
//! ----` with rows `Size (Bytes)  Description  Duration  Throughput  BusBW`.
//!
//! The exact byte count is the Description's `<elements>x<element bytes>`
//! (the Size column is rounded and, despite its `GB`, in 1024 steps). The
//! Duration is per call, in the header's `(us)` or the cell's own unit
//! (`3176.620 ms`). Throughput and BusBW are in Gbps (bits, the default) or
//! GBps (`--raw`), as the header says; DeepSpeed's all_reduce Throughput is
//! 2 × size / time, twice nccl-tests' algbw, so rows keep nccl-tests'
//! accounting: time = duration, algbw = size / time, and the bus factor for
//! the op and rank count, checked against the printed BusBW. Lines between
//! rows (launcher prefixes, runtime warnings) are read through; a file with
//! several blocks numbers them in the variant.

use super::{lines, num, record, Claim, Format, ParseError, Parsed, Record};
use crate::vocab::accounting::bus_factor;
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::Point;

pub struct DeepspeedComm;

/// `8501054668x4` → its product.
fn elements(tok: &str) -> Option<u64> {
    let (n, size) = tok.split_once('x')?;
    n.parse::<u64>().ok()?.checked_mul(size.parse().ok()?)
}

/// Seconds in one `unit`.
fn seconds_in(unit: &str) -> Option<f64> {
    match unit {
        "s" => Some(1.0),
        "ms" => Some(1e-3),
        "us" => Some(1e-6),
        "ns" => Some(1e-9),
        _ => None,
    }
}

impl Format for DeepspeedComm {
    fn name(&self) -> &'static str {
        "deepspeed-comm"
    }

    fn describe(&self) -> &'static str {
        "DeepSpeed communication benchmarks (benchmarks/communication): per-size duration, throughput and busbw"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["---- Performance of ", "ds_bench", "communication/all_reduce.py"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        if !text.contains("Size (Bytes)") {
            return None;
        }
        Claim::find(text, "a `---- Performance of OP` block with a `Size (Bytes)` table", |l| {
            l.contains("---- Performance of ")
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read.
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "torch".into(), ..Parsed::default() };
        let mut count = 0usize;
        // The block being read: op, ranks, duration unit, bytes/s per rate unit.
        let mut block: Option<(String, u32, Option<f64>, f64)> = None;
        let mut blocks = 0u32;
        let mut rows = Vec::new();
        for (no, line) in lines(text) {
            if let Some(at) = line.find("---- Performance of ") {
                let rest = &line[at + 20..];
                let op = rest.split_whitespace().next().unwrap_or("").to_string();
                let ranks = rest.split(" on ").nth(1).and_then(|r| r.split_whitespace().next()?.parse().ok());
                let Some(ranks) = ranks else {
                    return Err(ParseError::new(
                        no,
                        format!("expected `Performance of <op> on <N> devices`: `{}`", line.trim()),
                    ));
                };
                blocks += 1;
                block = Some((op, ranks, None, 1e9));
                continue;
            }
            let Some((op, ranks, unit, rate)) = block.as_mut() else { continue };
            if let Some(at) = line.find("Size (Bytes)") {
                let h = &line[at..];
                *unit = h.split("Duration").nth(1).and_then(|d| {
                    let d = d.trim_start();
                    d.strip_prefix('(').and_then(|u| seconds_in(u.split(')').next()?))
                });
                *rate = if h.contains("(Gbps)") { 1e9 / 8.0 } else { 1e9 };
                continue;
            }
            let toks: Vec<&str> = line.split_whitespace().collect();
            let Some(d) = toks.iter().position(|t| elements(t).is_some()) else { continue };
            let bytes = elements(toks[d]).unwrap_or(0);
            let mut i = d + 1;
            let Some(duration) = toks.get(i).and_then(|v| num(v)) else { continue };
            i += 1;
            let per = match toks.get(i).and_then(|u| seconds_in(u)) {
                Some(s) => {
                    i += 1;
                    s
                }
                None => match unit {
                    Some(s) => *s,
                    None => return Err(ParseError::new(no, "a duration with no unit, under a header that gives none")),
                },
            };
            let busbw = toks.get(i + 1).and_then(|v| num(v));
            rows.push((no, op.clone(), *ranks, blocks, bytes, duration * per, busbw.map(|b| b * *rate), *rate));
        }
        for (no, op, ranks, k, bytes, seconds, busbw, rate) in rows {
            if seconds.is_nan() || seconds <= 0.0 || bytes == 0 {
                continue;
            }
            let alg = bytes as f64 / seconds;
            let own = busbw.filter(|b| *b > 0.0).map(|b| b / alg);
            let mut factor = bus_factor(&op, ranks);
            if let (Some(f), Some(o)) = (factor, own) {
                // BusBW is printed to 3 decimals: small rows round to 0.
                if (f - o).abs() > 0.05 * f && busbw.is_some_and(|b| b / rate >= 1.0) {
                    out.warnings.push(format!(
                        "line {no}: the bus factor of {op} over {ranks} ranks is {f:.4}, but the printed BusBW / (size / time) is {o:.4}; the row uses the printed ratio"
                    ));
                    factor = Some(o);
                }
            }
            let variant = if blocks > 1 { format!("deepspeed.comm, block {k}") } else { "deepspeed.comm".to_string() };
            count += 1;
            each(record(
                Point {
                    bench: Bench::Collective.name().into(),
                    op: op.clone(),
                    variant: Some(variant),
                    size_bytes: Some(bytes),
                    ranks: Some(ranks),
                    bytes_copied: Some(bytes),
                    bw_factor: factor.or(own),
                    ..Point::default()
                },
                seconds,
                no,
                format!(
                    "DeepSpeed comm: {bytes} bytes (elements × element size, from the Description) in {seconds:.6} s per call; algbw = size / time (DeepSpeed's own Throughput for all_reduce is 2 × that); rates printed in {}",
                    if rate == 1e9 { "GBps (10^9 bytes/s)" } else { "Gbps (10^9 bits/s)" }
                ),
            ));
        }
        if count == 0 {
            return Err(ParseError::new(
                1,
                "no DeepSpeed communication benchmark rows (`<size> <elements>x<bytes> <duration> …`)",
            ));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptions_give_exact_bytes() {
        assert_eq!(elements("8501054668x4"), Some(34_004_218_672));
        assert_eq!(elements("16x4"), Some(64));
        assert_eq!(elements("GB"), None);
        assert_eq!(seconds_in("ms"), Some(1e-3));
    }
}
