//! perftest (`ib_write_bw`, `ib_read_bw`, `ib_send_bw` and their `_lat`
//! twins), including `-a` sweeps and bidirectional (`-b`) runs.
//!
//! Bandwidth tables print `BW average` in the unit of their header:
//! `Gb/sec` (10^9 bits/s, `--report_gbits`), or `MB/sec` / `MiB/sec`, which
//! perftest computes as 2^20 bytes/s (its `format_factor` is 0x100000 for
//! MB/sec and 125000000 for Gb/sec). The time per message is derived as
//! bytes / BW average; for a bidirectional run the average counts both
//! directions, so one operation is `2 × #bytes`. Latency tables give
//! `t_typical` (the median, used as the time) and min/max/avg in µs.

use super::{command_line, last_line_incomplete, lines, num, record, Claim, Format, ParseError, Parsed, Record};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::Point;

pub struct Perftest;

/// Bytes per second of one unit of a perftest bandwidth header.
fn unit_bytes_per_sec(header: &str) -> Option<(f64, &'static str)> {
    if header.contains("[Gb/sec]") {
        Some((1e9 / 8.0, "Gb/sec = 10^9 bits/s"))
    } else if header.contains("[MiB/sec]") {
        Some((1048576.0, "MiB/sec = 2^20 bytes/s"))
    } else if header.contains("[MB/sec]") {
        Some((1048576.0, "MB/sec, which perftest computes as 2^20 bytes/s"))
    } else if header.contains("[GB/sec]") {
        Some((1e9, "GB/sec = 10^9 bytes/s"))
    } else {
        None
    }
}

/// A bandwidth unit: bytes per second of one, and its name as printed.
type Unit = (f64, &'static str);

impl Format for Perftest {
    fn name(&self) -> &'static str {
        "perftest"
    }

    fn describe(&self) -> &'static str {
        "perftest ib_{write,read,send}_{bw,lat}: sweeps (-a), bidirectional (-b), Gb/MB/MiB per second"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Network)
    }

    fn markers(&self) -> &'static [&'static str] {
        &[
            "ib_write_bw",
            "ib_read_bw",
            "ib_send_bw",
            "ib_atomic_bw",
            "ib_write_lat",
            "ib_read_lat",
            "ib_send_lat",
            "ib_atomic_lat",
            "raw_ethernet_bw",
            "RDMA_Write BW Test",
            "RDMA_Read BW Test",
            "Send BW Test",
            "RDMA_Write Latency Test",
            "Send Latency Test",
        ]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        if !text.contains("#bytes") {
            return None;
        }
        Claim::find(text, "perftest's table header (`#bytes` with `BW average[`, `t_typical[` or `t_avg[`)", |l| {
            l.contains("BW average[") || l.contains("t_typical[") || l.contains("t_avg[")
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read (a 50 MiB log is never held as
    /// records).
    fn parse_each(&self, text: &str, file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: Bench::Rdma.name().into(), ..Parsed::default() };
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut op = "unknown".to_string();
        let mut bidirectional = false;
        let mut device: Option<String> = None;
        let mut link_type: Option<String> = None;
        let mut side: Option<&str> = None;
        // The command line, after any shell prompt: perftest prints no version.
        let is_binary = |t: &str| {
            let b = t.rsplit('/').next().unwrap_or(t);
            b.starts_with("ib_") && (b.ends_with("_bw") || b.ends_with("_lat"))
        };
        out.command =
            all.iter().find_map(|(_, l)| command_line(l, is_binary).filter(|c| c.binary.is_some())).map(|c| c.text());
        let gpu_buffers = out
            .command
            .as_deref()
            .and_then(|c| {
                c.split_whitespace().find(|t| {
                    t.starts_with("--use_cuda") || t.starts_with("--use_rocm") || t.starts_with("--use_neuron")
                })
            })
            .map(|flag| format!("; GPU buffers ({})", flag.split('=').next().unwrap_or(flag)));
        // (column names, unit) of the current table
        let mut table: Option<(Vec<String>, Option<Unit>, usize)> = None;
        for &(no, line) in &all {
            let t = line.trim();
            if t.is_empty() || t.starts_with("---") {
                continue;
            }
            if t.ends_with("BW Test") || t.ends_with("Latency Test") {
                // " RDMA_Write BW Test", " Send Latency Test", "RDMA_Write Bidirectional BW Test"
                bidirectional = t.contains("Bidirectional");
                let kind = if t.ends_with("BW Test") { "bw" } else { "lat" };
                let base = t.split_whitespace().next().unwrap_or("").to_ascii_lowercase().replace("rdma_", "");
                op = format!("{base}_{kind}");
                continue;
            }
            // `--report-both`: each side's table under its own title.
            if t.starts_with("Local results") || t.starts_with("Remote results") {
                side = Some(if t.starts_with("Local") { "local" } else { "remote" });
                continue;
            }
            if let Some(rest) = t.strip_prefix("Link type") {
                let ty = rest.trim_start_matches([' ', ':', '\t']).trim();
                link_type = (!ty.is_empty()).then(|| ty.to_string());
                continue;
            }
            if let Some(rest) = t.strip_prefix("Dual-port") {
                if let Some(d) = rest.split("Device").nth(1) {
                    device = d.trim_start_matches([' ', ':', '\t']).split_whitespace().next().map(String::from);
                }
                continue;
            }
            if t.contains("Bidirectional") || t.contains("bidirectional") {
                bidirectional = true;
            }
            if t.starts_with("#bytes") {
                let cols: Vec<String> = t.split_whitespace().map(String::from).collect();
                // "BW peak[Gb/sec]" splits into two tokens; join names by their bracket.
                let mut names = Vec::new();
                let mut pending = String::new();
                for c in cols {
                    if pending.is_empty()
                        && !c.contains('[')
                        && !c.ends_with("percentile")
                        && c != "BW"
                        && c != "99%"
                        && c != "99.9%"
                    {
                        names.push(c);
                    } else {
                        if !pending.is_empty() {
                            pending.push(' ');
                        }
                        pending += &c;
                        if c.contains(']') {
                            names.push(std::mem::take(&mut pending));
                        }
                    }
                }
                let unit = unit_bytes_per_sec(t);
                if t.contains("BW average") && unit.is_none() {
                    return Err(ParseError::new(
                        no,
                        "expected a bandwidth unit in the header: [Gb/sec], [MB/sec] or [MiB/sec]",
                    ));
                }
                table = Some((names, unit, no));
                continue;
            }
            let Some((names, unit, hline)) = &table else { continue };
            let toks: Vec<&str> = t.split_whitespace().collect();
            let Some(bytes) = toks.first().and_then(|b| b.parse::<u64>().ok()) else { continue };
            if op == "unknown" {
                // No banner (an excerpt of the table): the command's or the
                // file's name says which test it is, or nothing does.
                op = out.command.as_deref().and_then(test_of).or_else(|| test_of(file_name)).ok_or_else(|| {
                    ParseError::new(
                        *hline,
                        "a perftest table without its banner (` RDMA_Write BW Test`) or command line: which test it is (write, read, send; bandwidth or latency) is not in the file; paste the banner, or name the file after the test (ib_write_bw.txt)",
                    )
                })?;
                out.warnings.push(format!(
                    "line {hline}: no perftest banner; the test ({op}) is taken from the command or file name"
                ));
            }
            if toks.len() < names.len() {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                return Err(ParseError::new(
                    no,
                    format!("expected {} columns as in the header on line {hline}, found {}", names.len(), toks.len()),
                ));
            }
            let col = |prefix: &str| names.iter().position(|n| n.starts_with(prefix)).and_then(|i| num(toks[i]));
            let iterations = col("#iterations").map(|v| v as u64);
            let (op_bytes, dir) = if bidirectional {
                let both = bytes
                    .checked_mul(2)
                    .ok_or_else(|| ParseError::new(no, format!("#bytes {bytes} × 2 directions overflows")))?;
                (both, "bidirectional")
            } else {
                (bytes, "unidirectional")
            };
            let mut r = if let (Some(avg), Some((per_unit, unit_text))) = (col("BW average"), unit) {
                let bps = avg * per_unit;
                if bps <= 0.0 {
                    out.warnings.push(format!("line {no}: BW average is {avg}; row skipped"));
                    continue;
                }
                // MsgRate [Mpps] × #bytes must give the same rate: a check on
                // the unit, which perftest's header names loosely.
                if let Some(mpps) = col("MsgRate").filter(|m| *m >= 0.01 && avg >= 10.0) {
                    let from_rate = mpps * 1e6 * bytes as f64;
                    let ratio = bps / from_rate;
                    if !((0.98..=1.02).contains(&ratio) || bidirectional && (1.96..=2.04).contains(&ratio)) {
                        out.warnings.push(format!(
                            "line {no}: BW average {avg} [{unit_text}] is {:.4e} bytes/s, but MsgRate {mpps} Mpps × {bytes} B is {from_rate:.4e}",
                            bps
                        ));
                    }
                }
                record(
                    Point {
                        bench: Bench::Rdma.name().into(),
                        op: op.clone(),
                        variant: Some(match side {
                            Some(side) => format!("{dir}, {side} results"),
                            None => dir.into(),
                        }),
                        size_bytes: Some(bytes),
                        bytes_copied: Some(op_bytes),
                        ..Point::default()
                    },
                    op_bytes as f64 / bps,
                    no,
                    format!(
                        "perftest BW average {avg} [{unit_text}]; time per message derived as bytes / BW average{}",
                        if bidirectional { "; both directions counted (2 × #bytes)" } else { "" }
                    ),
                )
            } else if let Some(typ) = col("t_typical") {
                record(
                    Point {
                        bench: Bench::Rdma.name().into(),
                        op: op.clone(),
                        variant: Some("latency".into()),
                        size_bytes: Some(bytes),
                        bytes_copied: Some(bytes),
                        ..Point::default()
                    },
                    typ * 1e-6,
                    no,
                    format!(
                        "perftest t_typical {typ} us (median) → s{}",
                        ["t_min", "t_max", "t_avg"]
                            .iter()
                            .filter_map(|c| col(c).map(|v| format!("; {c} {v} us")))
                            .collect::<String>()
                    ),
                )
            } else {
                return Err(ParseError::new(no, "expected a `BW average` or `t_typical` column"));
            };
            r.iterations = iterations;
            r.device = device.clone();
            if let Some(g) = &gpu_buffers {
                r.note += g;
            }
            each(r);
        }
        out.link = link_type.map(|t| match &device {
            Some(d) => format!("{t} ({d})"),
            None => t,
        });
        Ok(out)
    }
}

/// The test a perftest binary's name in `text` runs: `ib_write_bw` →
/// `write_bw`.
fn test_of(text: &str) -> Option<String> {
    let at = text.find("ib_")?;
    let name: String = text[at + 3..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
    let (verb, kind) = name.split_once('_')?;
    let kind = kind.split('_').next()?;
    (["write", "read", "send", "atomic"].contains(&verb) && ["bw", "lat"].contains(&kind))
        .then(|| format!("{verb}_{kind}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tests_are_named_by_their_binary() {
        assert_eq!(test_of("/opt/perftest/ib_write_bw -d mlx5_0 -a").as_deref(), Some("write_bw"));
        assert_eq!(test_of("ib_send_lat.txt").as_deref(), Some("send_lat"));
        assert_eq!(test_of("ib_frob_bw"), None);
        assert_eq!(test_of("output.log"), None);
    }

    /// Before 2016 (perftest's first src/perftest_parameters.h:141) the
    /// latency header had only `t_min t_max t_typical`; rows
    /// `" %-7lu %d %-7.2f %-7.2f %-7.2f"`. Values written here.
    #[test]
    fn the_old_three_column_latency_table() {
        let text = " Send Latency Test\n #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]\n 2       1000          1.02           5.11         1.07   \n 4       1000          1.03           4.20         1.08   \n";
        assert!(Perftest.sniff(text).is_some());
        let p = Perftest.parse(text, "x.log").unwrap();
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.records[0].params.op, "send_lat");
        assert!((p.records[0].seconds_per_op - 1.07e-6).abs() < 1e-12, "{}", p.records[0].note);
    }

    /// `--report-both` (send_bw.c at 26.04.17 L536-548): `Local results:`
    /// and `Remote results:`, each over its own table. Values written here.
    #[test]
    fn report_both_tables_are_told_apart() {
        let rule = "-".repeat(87);
        let head = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]";
        let text = format!(
            "                    Send BW Test\n\n Local results: \n{rule}\n{head}\n 65536      1000             11712.84            11709.71\t\t     0.187355\n{rule}\n\n Remote results: \n{rule}\n{head}\n 65536      1000             11700.00            11690.00\t\t     0.187040\n{rule}\n"
        );
        let p = Perftest.parse(&text, "x.log").unwrap();
        let variants: Vec<&str> = p.records.iter().filter_map(|r| r.params.variant.as_deref()).collect();
        assert_eq!(variants, ["unidirectional, local results", "unidirectional, remote results"]);
    }
}
