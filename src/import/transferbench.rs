//! AMD TransferBench: the `p2p` preset's matrices (`Unidirectional copy peak
//! bandwidth GB/s`, a row `SRC ->` per source; `Bidirectional …`, rows `->`,
//! `<-` and `<->` per source) and the `a2a` preset's `SRC\DST` table (every
//! GPU sending to every other at once; `STotal`/`Actual` columns and the
//! `RTotal` row are sums, not transfers).
//!
//! Cells are GB/s (10^9 bytes/s) of one transfer. A GPU → GPU cell is a
//! `memcpy-peer` row, CPU → GPU `h2d`, GPU → CPU `d2h`; `peer` names the
//! printed endpoints (`GPU 01->GPU 00`). Unidirectional cells are op `copy`
//! of `Bytes Per Direction`; a bidirectional pair's `<->` sum is op
//! `copy_bidir` of 2 × that; its `->` and `<-` lines (each direction while
//! the other ran) are in the note only. a2a cells are op `copy`, variant
//! `all-to-all` (all pairs at once). The diagonal (a copy within one
//! device), CPU ↔ CPU cells and `N/A` are left out. Where the file gives no
//! byte count, one operation is normalized to 10^9 bytes. Config-file runs
//! (`Test N:` / `Transfer NN | … | SRC -> EXE -> DST` lines) give a row per
//! transfer: GPU → GPU, CPU → GPU and GPU → CPU as above, and the rest
//! (memset, read-only, a copy within one device, a broadcast) as
//! `transferbench` rows named so.

use super::{lines, num, record, Claim, ClaimIf, Format, ParseError, Parsed, Record, NORMALIZED_BYTES};
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::Point;

pub struct TransferBench;

/// What the table being read is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Table {
    Unidirectional,
    Bidirectional,
    AllToAll,
}

/// The endpoint labels of a header (`CPU 00`, `GPU 07`, or `GPU07`), in
/// order; other columns (`STotal`, `Actual`) end the list.
fn labels(toks: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = toks[i];
        if (t == "CPU" || t == "GPU") && toks.get(i + 1).is_some_and(|n| n.parse::<u32>().is_ok()) {
            out.push(format!("{t} {}", toks[i + 1]));
            i += 2;
        } else if let Some(n) =
            t.strip_prefix("GPU").or_else(|| t.strip_prefix("CPU")).filter(|n| n.parse::<u32>().is_ok())
        {
            out.push(format!("{} {n}", &t[..3]));
            i += 1;
        } else {
            break;
        }
    }
    out
}

/// A row's source label and the rest of its tokens (`CPU 00  ->  92.21 …`).
fn row_label<'a>(toks: &'a [&'a str]) -> Option<(String, &'a [&'a str])> {
    let first = *toks.first()?;
    if (first == "CPU" || first == "GPU") && toks.get(1).is_some_and(|n| n.parse::<u32>().is_ok()) {
        return Some((format!("{first} {}", toks[1]), &toks[2..]));
    }
    let n = first.strip_prefix("GPU").or_else(|| first.strip_prefix("CPU"))?;
    n.parse::<u32>().ok()?;
    Some((format!("{} {n}", &first[..3]), &toks[1..]))
}

/// A line with its box-drawing characters (`│ SRC\DST │ GPU 00 …`) as
/// spaces; other lines as they are.
fn unbox(line: &str) -> std::borrow::Cow<'_, str> {
    const BOX: [char; 11] = ['│', '┌', '┐', '└', '┘', '├', '┤', '┬', '┴', '┼', '─'];
    if line.contains(BOX) {
        line.replace(BOX, " ").into()
    } else {
        line.into()
    }
}

/// The number after `marker` on a line (`Bytes Per Direction 268435456`,
/// `[268435456 bytes per Transfer]`).
fn bytes_in(text: &str) -> Option<u64> {
    for l in text.lines() {
        if let Some(v) = l.trim().strip_prefix("Bytes Per Direction") {
            return v.split_whitespace().next()?.parse().ok();
        }
        if let Some(at) = l.find(" bytes per Transfer") {
            return l[..at].rsplit(['[', ' ']).next()?.parse().ok();
        }
    }
    None
}

impl Format for TransferBench {
    fn name(&self) -> &'static str {
        "transferbench"
    }

    fn describe(&self) -> &'static str {
        "AMD TransferBench p2p and a2a presets: unidirectional, bidirectional and all-to-all tables (GB/s)"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Peer)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["TransferBench", "SRC\\DST", "SRC+EXE\\DST"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        // Documentation copies escape the backslash (`SRC\\DST`).
        let table = |l: &str| {
            let l = l.replace("\\\\", "\\");
            l.contains("SRC+EXE\\DST") || (l.contains("SRC\\DST") && l.contains("STotal"))
        };
        let config = || {
            text.contains("Executor:")
                .claim(text, "a config-file run (`Executor:`, `Transfer 00`)", |l| transfer_line(l.trim_start()))
        };
        Claim::find(text, "its name (`TransferBench`)", |l| l.contains("TransferBench"))
            .or_else(config)
            .or_else(|| Claim::find(text, "a `SRC\\DST` table", table))
            .or_else(|| {
                text.contains("Test ").claim(text, "1.0x's `Link NN: SRC -> EXE -> DST | r GB/s` lines", |l| {
                    l.trim_start().starts_with("Link ") && l.contains("GB/s") && l.contains("->")
                })
            })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per cell as it is read.
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let out = Parsed { tool: self.name().into(), backend: "hip".into(), ..Parsed::default() };
        let mut count = 0usize;
        let size = bytes_in(text);
        let mut table: Option<(Table, Vec<String>)> = None;
        let mut pending: Option<Table> = None;
        let mut config_line = None;
        for (no, line) in lines(text) {
            // Releases since 1.6x draw the a2a table in box characters.
            let unboxed = unbox(line);
            let t = unboxed.trim();
            if t.starts_with("Unidirectional copy peak bandwidth") {
                pending = Some(Table::Unidirectional);
                continue;
            }
            if t.starts_with("Bidirectional copy peak bandwidth") {
                pending = Some(Table::Bidirectional);
                continue;
            }
            if config_line.is_none() && (t.starts_with("Test 1:") || transfer_line(t)) {
                config_line = Some(no);
            }
            let toks: Vec<&str> = t.split_whitespace().collect();
            if let Some(first) = toks.first() {
                let head = first.replace("\\\\", "\\");
                if head == "SRC+EXE\\DST" || head == "SRC\\DST" {
                    let kind = match pending.take() {
                        Some(k) => k,
                        None if head == "SRC\\DST" => Table::AllToAll,
                        None => Table::Unidirectional,
                    };
                    table = Some((kind, labels(&toks[1..])));
                    continue;
                }
            }
            let Some((kind, columns)) = &table else { continue };
            // Other lines (`Averages`, `RTotal`, elisions) are not cells.
            let Some((src, rest)) = row_label(&toks) else { continue };
            let (direction, values) = match rest.first() {
                Some(&a) if a == "->" || a == "<-" || a == "<->" => (a, &rest[1..]),
                _ => ("->", rest),
            };
            // Bidirectional: only the `<->` sum is a row of its own.
            if *kind == Table::Bidirectional && direction != "<->" {
                continue;
            }
            if values.len() < columns.len() {
                return Err(ParseError::new(
                    no,
                    format!("a TransferBench row of {} cells where its header has {}", values.len(), columns.len()),
                ));
            }
            for (dst, cell) in columns.iter().zip(values) {
                let Some(gbps) = num(cell).filter(|g| *g > 0.0) else { continue };
                if *dst == src {
                    continue;
                }
                let gpu = |l: &str| l.starts_with("GPU");
                let Some(bench) = super::copy_bench(gpu(&src), gpu(dst)) else { continue };
                let (op, variant, per) = match kind {
                    Table::Unidirectional => ("copy", "unidirectional", 1),
                    Table::Bidirectional => ("copy_bidir", "bidirectional", 2),
                    Table::AllToAll => ("copy", "all-to-all", 1),
                };
                let bytes = size.map_or(NORMALIZED_BYTES, |s| s.saturating_mul(per));
                let how = match size {
                    Some(s) => {
                        format!("{s} bytes per transfer{}", if per == 2 { ", both directions summed" } else { "" })
                    }
                    None => "byte count not in the file, so one operation is normalized to 10^9 bytes".into(),
                };
                count += 1;
                each(record(
                    Point {
                        bench: bench.name().into(),
                        op: op.into(),
                        variant: Some(variant.into()),
                        size_bytes: size,
                        peer: Some(format!("{src}->{dst}")),
                        bytes_copied: Some(bytes),
                        ..Point::default()
                    },
                    bytes as f64 / (gbps * 1e9),
                    no,
                    format!(
                        "TransferBench {gbps} GB/s (10^9 bytes/s), {src} {direction} {dst}; {how}; time = bytes / rate"
                    ),
                ));
            }
        }
        if count == 0 && config_line.is_some() {
            count += config_runs(text, each)?;
        }
        if count == 0 {
            return Err(ParseError::new(
                config_line.unwrap_or(1),
                "no TransferBench p2p or a2a table (`SRC+EXE\\DST` or `SRC\\DST` header) and no `Transfer NN | … GB/s | … bytes | SRC -> EXE -> DST` line",
            ));
        }
        Ok(out)
    }
}

/// A config-file run's result line: `Transfer 00 |`, `Transfer 0    │`
/// (1.6x), `Transfer 00  ,` (CSV) or `Transfer 00 \|` (escaped in docs).
fn transfer_line(t: &str) -> bool {
    t.strip_prefix("Transfer ").is_some_and(|r| {
        let n = r.trim_start();
        n.starts_with(|c: char| c.is_ascii_digit())
            && n.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start().starts_with(['|', '│', ',', '\\'])
    })
}

/// The kind of a config-file endpoint list: `G1` (a GPU), `C0` (a CPU),
/// `N` (none: a memset source or a read-only destination), or several
/// (`G0G1`, a broadcast).
fn endpoint(e: &str) -> (&'static str, usize) {
    let n = e.chars().filter(|c| c.is_ascii_uppercase()).count();
    let kind = match e.chars().next() {
        Some('G') => "GPU",
        Some('C') => "CPU",
        _ => "none",
    };
    (kind, n)
}

/// A config-file run: each `Transfer NN | r GB/s | t ms | b bytes | SRC ->
/// EXE:CUs -> DST` line of each `Test N:` is a row, its time from the
/// printed rate (three decimals, more precise than the printed ms).
fn config_runs(text: &str, each: &mut dyn FnMut(Record)) -> Result<usize, ParseError> {
    let mut test = 0u32;
    let mut test_bytes: Option<u64> = None;
    let mut count = 0usize;
    for (no, line) in lines(text) {
        // Cells are separated by `|` (escaped `\|` in documentation), by
        // `│` in the bordered tables of 1.6x, by `,` in CSV mode (1.51+).
        let t = line.replace("\\|", "|").replace('│', "|");
        let t = if t.contains('|') { t } else { t.replace(',', "|") };
        let t = t.trim();
        // `Test 3:`, or 1.01–1.03's `Test 3: [67108864 bytes]`.
        if let Some((n, rest)) = t.strip_prefix("Test ").and_then(|r| r.split_once(':')) {
            if let Ok(n) = n.trim().parse() {
                test = n;
                test_bytes = rest.trim().strip_prefix('[').and_then(|b| b.split_whitespace().next()?.parse().ok());
                continue;
            }
        }
        let cells: Vec<&str> = t.split('|').map(str::trim).collect();
        let rate_of = |c: &str| num(c.trim_end_matches("GB/s").trim());
        // 1.01–1.03: `Link 00: G00 -> [GPU 00:04] -> G01 | r GB/s | t ms | link`.
        let link =
            t.strip_prefix("Link ").and_then(|r| r.split_once(':')).filter(|(n, _)| n.trim().parse::<u32>().is_ok());
        let (rate, bytes, route) = match link {
            Some((_, rest)) => {
                let route = rest.split('|').next().unwrap_or("").trim();
                // 1.04–1.10 print the bytes on the line, not after `Test N:`.
                let on_line = cells.iter().find_map(|c| c.strip_suffix("bytes")?.trim().parse::<u64>().ok());
                (cells.get(1).and_then(|c| rate_of(c)), on_line.or(test_bytes), Some(route))
            }
            None if transfer_line(t) => (
                cells.get(1).and_then(|c| rate_of(c)),
                cells.get(3).and_then(|c| c.trim_end_matches("bytes").trim().parse::<u64>().ok()),
                cells.get(4).copied(),
            ),
            None => continue,
        };
        let (Some(rate), Some(bytes), Some(route)) = (rate, bytes, route) else {
            return Err(ParseError::new(
                no,
                format!("expected `Transfer NN | r GB/s | t ms | b bytes | SRC -> EXE -> DST`, found `{t}`"),
            ));
        };
        if rate <= 0.0 || bytes == 0 {
            continue;
        }
        let parts: Vec<&str> = route.split("->").map(str::trim).collect();
        let (src, dst) = (parts.first().copied().unwrap_or(""), parts.last().copied().unwrap_or(""));
        let ((sk, sn), (dk, dn)) = (endpoint(src), endpoint(dst));
        let (bench, op) = match (sk, dk) {
            ("GPU", "GPU") if sn == 1 && dn == 1 && src != dst => (Bench::MemcpyPeer.name(), "copy"),
            ("CPU", "GPU") if dn == 1 => (Bench::H2d.name(), "copy"),
            ("GPU", "CPU") if sn == 1 => (Bench::D2h.name(), "copy"),
            ("none", _) => ("transferbench", "memset"),
            (_, "none") => ("transferbench", "read"),
            _ if dn > 1 => ("transferbench", "broadcast"),
            _ => ("transferbench", "copy"),
        };
        count += 1;
        each(record(
            Point {
                bench: bench.into(),
                op: op.into(),
                variant: Some(format!("config test {test}")),
                size_bytes: Some(bytes),
                peer: Some(route.to_string()),
                bytes_copied: Some(bytes),
                ..Point::default()
            },
            bytes as f64 / (rate * 1e9),
            no,
            format!("TransferBench config test {test}: {rate} GB/s (10^9 bytes/s) for {bytes} bytes, {route}; time = bytes / rate"),
        ));
    }
    Ok(count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_labels_and_row_labels_read_both_spacings() {
        let toks: Vec<&str> = "CPU 00 CPU 01 GPU 00 GPU07 STotal Actual".split_whitespace().collect();
        assert_eq!(labels(&toks), ["CPU 00", "CPU 01", "GPU 00", "GPU 07"]);
        let row: Vec<&str> = "GPU 01 <-> 1.0".split_whitespace().collect();
        assert_eq!(row_label(&row).map(|(l, r)| (l, r.len())), Some(("GPU 01".into(), 2)));
        assert_eq!(bytes_in("Summary: [268435456 bytes per Transfer] [GFX:8]"), Some(268435456));
        assert_eq!(bytes_in("Bytes Per Direction 4194304\n"), Some(4194304));
    }

    /// 1.04–1.10 (v1.04 TransferBench.cpp L240-448): `Test N:` without
    /// bytes, and a bytes column on each `Link` line. Values written here.
    #[test]
    fn link_lines_with_their_own_byte_count() {
        let text = "TransferBench v1.04\nTest 1:\n Link 00: G00 -> [GPU 00:04] -> G01 |    48.512 GB/s |    1.383 ms |     67108864 bytes | LOCAL-XGMI-1\n";
        let p = crate::import::collect(&TransferBench, text, "x.log").unwrap();
        assert_eq!(p.records.len(), 1);
        let r = &p.records[0];
        assert_eq!((r.params.bench.as_str(), r.params.bytes_copied), ("memcpy-peer", Some(67108864)));
        assert!((67108864.0 / r.seconds_per_op / 1e9 / 48.512 - 1.0).abs() < 1e-9);
    }
}
