//! rocm-bandwidth-test: its `Device: N, <name>` list, its per-size tables
//! of one copy (`==== Unidirectional Benchmark Result ====`, `-s`/`-d`), and its
//! `Unidirectional` / `Bidirectional copy peak bandwidth GB/s` matrices
//! (`D/D` header, a row per source device, `N/A` where a pair was not run).
//!
//! Cells are GB/s (10^9 bytes/s). A cell between two GPUs becomes a
//! `memcpy-peer` row (op `copy`, or `copy_bidir` whose rate already sums
//! both directions), a CPU → GPU cell an `h2d` row and a GPU → CPU cell a
//! `d2h` row, with `peer` `<src>-><dst>` in the tool's device numbering
//! (CPU NUMA agents first). The buffer size is not printed, so one
//! operation is normalized to 10^9 bytes (time = 1 / rate), as for
//! nvbandwidth. The diagonal (a device's copy within itself, which the
//! tool counts as read plus written) and CPU ↔ CPU cells are left out, with
//! a warning saying how many.

use std::collections::BTreeMap;

use super::{lines, num, record, Claim, ClaimIf, Format, ParseError, Parsed, Record, NORMALIZED_BYTES};
use crate::vocab::benches::Family;
use crate::vocab::rows::Point;

pub struct RocmBandwidth;

/// One device of the list: its name, whether it is a GPU, and whether the
/// line said so (a UUID or PCI address) or only named the device.
#[derive(Debug, Clone)]
struct Device {
    name: String,
    gpu: bool,
    stated: bool,
}

/// A CPU agent's name as ROCm prints it (`AMD EPYC 7763 64-Core
/// Processor`, `AMD Ryzen AI Max+ 395 w/ Radeon 8060S`).
fn cpu_name(name: &str) -> bool {
    ["Processor", "CPU", "EPYC", "Xeon", "Ryzen", "Threadripper", "Opteron"].iter().any(|m| name.contains(m))
}

/// One copy's per-size table: direction, source and destination.
struct Pair {
    bidir: bool,
    src: Option<(u32, bool)>,
    dst: Option<(u32, bool)>,
}

/// `================ Src Device Id: 0 Src Device Type: Cpu ================`
/// → (0, not a GPU).
fn endpoint(t: &str, side: &str) -> Option<(u32, bool)> {
    let rest = t.trim_matches('=').trim();
    let id = rest.strip_prefix(side)?.trim_start().strip_prefix("Device Id:")?;
    let mut toks = id.split_whitespace();
    let index = toks.next()?.parse().ok()?;
    let kind = id.split("Device Type:").nth(1)?.split_whitespace().next()?;
    Some((index, kind.eq_ignore_ascii_case("Gpu")))
}

impl Pair {
    /// A row `1 KB  avg-µs  avg-GB/s  min-µs  peak-GB/s` (2.3.11+'s
    /// printRecord: sizes under 1 KiB in `Bytes`, then whole `KB`, `MB`).
    /// The row's time is the minimum, so its rate is the printed peak; a
    /// bidirectional copy moves the size both ways (the tool's data size is
    /// 2 × size), and a copy within one device is left out.
    fn row(&self, no: usize, t: &str, devices: &BTreeMap<u32, Device>) -> Option<Record> {
        let ((src, src_gpu), (dst, dst_gpu)) = (self.src?, self.dst?);
        let toks: Vec<&str> = t.split_whitespace().collect();
        let [n, unit, _avg_us, _avg_bw, min_us, peak] = toks[..] else { return None };
        let scale: u64 = match unit {
            "Bytes" => 1,
            "KB" => 1 << 10,
            "MB" => 1 << 20,
            _ => return None,
        };
        let size = n.parse::<u64>().ok()?.checked_mul(scale)?;
        let (min_us, peak) = (num(min_us).filter(|v| *v > 0.0)?, num(peak)?);
        if src == dst {
            return None;
        }
        let bench = super::copy_bench(src_gpu, dst_gpu)?;
        let bytes = if self.bidir { size.checked_mul(2)? } else { size };
        let (op, variant) = if self.bidir { ("copy_bidir", "bidirectional") } else { ("copy", "unidirectional") };
        let mut r = record(
            Point {
                bench: bench.name().into(),
                op: op.into(),
                variant: Some(variant.into()),
                size_bytes: Some(size),
                peer: Some(format!("{src}->{dst}")),
                bytes_copied: Some(bytes),
                ..Point::default()
            },
            min_us * 1e-6,
            no,
            format!(
                "rocm-bandwidth-test min time {min_us} us for {bytes} bytes{} (peak {peak} GB/s, 10^9 bytes/s)",
                if self.bidir { ", both directions" } else { "" }
            ),
        );
        let gpu_end = if src_gpu { src } else { dst };
        r.device = devices.get(&gpu_end).map(|d| d.name.clone());
        Some(r)
    }
}

/// `Device: 2,  AMD Instinct MI100,  GPU-4a6f…,  23:0.0` → (2, MI100, GPU).
fn device_line(t: &str) -> Option<(u32, Device)> {
    let rest = t.strip_prefix("Device:")?;
    let (index, rest) = rest.split_once(',')?;
    let fields: Vec<&str> = rest.split(',').map(str::trim).collect();
    let name = fields.first()?.to_string();
    // GPUs carry a UUID (`GPU-…`) and a PCI address; CPU agents only a name.
    let gpu = fields.len() > 1 && fields[1..].iter().any(|f| f.starts_with("GPU-") || f.contains(':'));
    Some((index.trim().parse().ok()?, Device { name, gpu, stated: fields.len() > 1 }))
}

impl Format for RocmBandwidth {
    fn name(&self) -> &'static str {
        "rocm-bandwidth-test"
    }

    fn describe(&self) -> &'static str {
        "rocm-bandwidth-test: unidirectional and bidirectional copy peak bandwidth matrices (GB/s)"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Peer)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["RocmBandwidthTest", "rocm-bandwidth-test", "rocm_bandwidth_test", "copy peak bandwidth"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        text.contains("D/D")
            .claim(text, "a `copy peak bandwidth GB/s` matrix with a `D/D` corner", |l| {
                l.contains("copy peak bandwidth GB/s")
            })
            .or_else(|| {
                text.contains("Peak BW(GB/s)").claim(
                    text,
                    "a per-size `Benchmark Result` table of one copy (`-s`/`-d`)",
                    |l| l.contains("Benchmark Result"),
                )
            })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per cell, once the device kinds are known.
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "hip".into(), ..Parsed::default() };
        let mut count = 0usize;
        let mut devices: BTreeMap<u32, Device> = BTreeMap::new();
        // The matrix being read: bidirectional or not, and its columns.
        let mut matrix: Option<(bool, Vec<u32>)> = None;
        let (mut diagonal, mut cpu_cpu) = (0usize, 0usize);
        // (line, bidirectional, source, destination, GB/s or none).
        let mut cells: Vec<(usize, bool, u32, u32, Option<f64>)> = Vec::new();
        // A per-size table of one copy (`-s SRC -d DST`, or `-t`): its
        // direction, then its source and destination (id, is a GPU).
        let mut pair: Option<Pair> = None;
        for (no, line) in lines(text) {
            let t = line.trim();
            if t.starts_with('=') && t.contains("Benchmark Result") {
                pair = Some(Pair { bidir: t.contains("Bidirectional"), src: None, dst: None });
                matrix = None;
                continue;
            }
            if let Some(p) = pair.as_mut() {
                if let Some(end) = endpoint(t, "Src") {
                    p.src = Some(end);
                    continue;
                }
                if let Some(end) = endpoint(t, "Dst") {
                    p.dst = Some(end);
                    continue;
                }
                if let Some(r) = p.row(no, t, &devices) {
                    count += 1;
                    each(r);
                    continue;
                }
            }
            if let Some(v) = t.strip_prefix("RocmBandwidthTest Version:") {
                out.tool_version = Some(format!("rocm-bandwidth-test {}", v.trim()));
                continue;
            }
            if let Some((i, d)) = device_line(t) {
                devices.insert(i, d);
                continue;
            }
            if t.ends_with("copy peak bandwidth GB/s") {
                // 2.0.x spells it `Bdirectional`.
                matrix = Some((t.starts_with("Bidirectional") || t.starts_with("Bdirectional"), Vec::new()));
                continue;
            }
            if t.starts_with("Inter-Device") {
                // A topology table (access, NUMA distance), not bandwidth.
                matrix = None;
                continue;
            }
            let Some((bidir, columns)) = matrix.as_mut() else { continue };
            if let Some(head) = t.strip_prefix("D/D") {
                *columns = head.split_whitespace().filter_map(|c| c.parse().ok()).collect();
                continue;
            }
            let toks: Vec<&str> = t.split_whitespace().collect();
            let Some(src) = toks.first().and_then(|v| v.parse::<u32>().ok()) else { continue };
            if columns.is_empty() || toks.len() != columns.len() + 1 {
                if columns.is_empty() {
                    continue;
                }
                return Err(ParseError::new(
                    no,
                    format!("a matrix row of {} cells where the `D/D` header has {}", toks.len() - 1, columns.len()),
                ));
            }
            for (&dst, cell) in columns.iter().zip(&toks[1..]) {
                // N/A (never run), PASS/FAIL (validation): not a rate.
                cells.push((no, *bidir, src, dst, num(cell).filter(|g| *g > 0.0)));
            }
        }
        // Without the device list (an excerpt), the CPU agents are the
        // leading devices whose copies among themselves are all N/A: the
        // tool lists CPU agents first and never copies between them.
        let inferred = devices.is_empty();
        // A list condensed to names (no UUID or PCI address on any line):
        // a device whose name is not a CPU's is a GPU.
        if !inferred && devices.values().all(|d| !d.stated) {
            for d in devices.values_mut() {
                d.gpu = !cpu_name(&d.name);
            }
            out.warnings.push(format!(
                "the `Device:` list gives names only (no UUID or PCI address): {} taken as GPUs by their names",
                devices.iter().filter(|(_, d)| d.gpu).map(|(i, _)| i.to_string()).collect::<Vec<_>>().join(", ")
            ));
        }
        let cpus = if inferred {
            let na = |a: u32, b: u32| cells.iter().all(|c| !(c.2 == a && c.3 == b) || c.4.is_none());
            let mut k = 1u32;
            while cells.iter().any(|c| c.2 == k) && (0..k).all(|i| na(i, k) && na(k, i)) {
                k += 1;
            }
            out.warnings.push(format!(
                "no `Device:` list in the file: device{} taken as CPU agent{} (the tool lists CPU agents first, and their copies among themselves are N/A), the rest as GPUs",
                if k == 1 { " 0".to_string() } else { format!("s 0–{}", k - 1) },
                if k == 1 { "" } else { "s" }
            ));
            k
        } else {
            0
        };
        let gpu = |i: u32| if inferred { i >= cpus } else { devices.get(&i).is_some_and(|d| d.gpu) };
        for (no, bidir, src, dst, gbps) in cells {
            let Some(gbps) = gbps else { continue };
            if src == dst {
                diagonal += 1;
                continue;
            }
            let op = if bidir { "copy_bidir" } else { "copy" };
            let Some(bench) = super::copy_bench(gpu(src), gpu(dst)) else {
                cpu_cpu += 1;
                continue;
            };
            let both = if bidir { "; both directions at once, their bytes summed (as the tool counts)" } else { "" };
            let mut r = record(
                Point {
                    bench: bench.name().into(),
                    op: op.into(),
                    variant: Some(if bidir { "bidirectional" } else { "unidirectional" }.into()),
                    peer: Some(format!("{src}->{dst}")),
                    bytes_copied: Some(NORMALIZED_BYTES),
                    ..Point::default()
                },
                NORMALIZED_BYTES as f64 / (gbps * 1e9),
                no,
                format!(
                    "rocm-bandwidth-test {gbps} GB/s (10^9 bytes/s), device {src} to device {dst}{both}; buffer size not printed, so one operation is normalized to 10^9 bytes and time = 1 / rate"
                ),
            );
            let gpu_end = if gpu(src) { src } else { dst };
            r.device = devices.get(&gpu_end).map(|d| d.name.clone());
            count += 1;
            each(r);
        }
        if diagonal > 0 {
            out.warnings.push(format!(
                "{diagonal} diagonal cells (a device's copy within itself, counted read + written) are not imported"
            ));
        }
        if cpu_cpu > 0 {
            out.warnings.push(format!("{cpu_cpu} CPU ↔ CPU cells are not imported (no GPU in the copy)"));
        }
        if count == 0 {
            return Err(ParseError::new(1, "no bandwidth matrix cell between a GPU and another device"));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_say_whether_they_are_gpus() {
        let (i, d) = device_line("Device: 2,  AMD Instinct MI100,  GPU-4a6fa69c0466a0f6,  23:0.0").unwrap();
        assert_eq!((i, d.name.as_str(), d.gpu), (2, "AMD Instinct MI100", true));
        let (_, cpu) = device_line("Device: 0,  AMD EPYC 7763 64-Core Processor").unwrap();
        assert!(!cpu.gpu);
    }
}
