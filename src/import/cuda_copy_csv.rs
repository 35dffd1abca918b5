//! The CSV of benchbook's plain CUDA C copy reference,
//! `scripts/cuda_memcpy_reference.cu`: `test,bytes,seconds,GBps_once,GBps_rw`
//! with `#` comment lines, the first naming the device
//! (`# device NVIDIA H200, 132 SMs, L2 62914560 B`).
//!
//! `seconds` is the median time of one `cudaMemcpyAsync` (or one launch of
//! the copy kernel); `GBps_once` counts the bytes copied, `GBps_rw` read +
//! written (device-to-device only). Rows:
//! - `d2d_ce`: `memcpy` by the copy engine (`bytes_moved` = 2 × bytes);
//! - `d2d_sm_u{U}_b{B}x{T}`: `memcpy` by a copy kernel of that launch shape;
//! - `h2d_pinned`, `d2h_pageable`, ...: `h2d` / `d2h` with the host memory
//!   kind as the variant, each byte moved once (it crosses the link once).

use super::{record, Claim, Format, ParseError, Parsed};
use crate::vocab::benches::{Bench, Family};
use crate::vocab::rows::Point;

pub struct CudaCopyCsv;

const HEADER: &str = "test,bytes,seconds,GBps_once,GBps_rw";

impl Format for CudaCopyCsv {
    fn name(&self) -> &'static str {
        "cuda-copy-csv"
    }

    fn describe(&self) -> &'static str {
        "benchbook's CUDA C copy reference (scripts/cuda_memcpy_reference.cu): test,bytes,seconds,GBps_once,GBps_rw"
    }

    fn family(&self) -> Option<Family> {
        None
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "benchbook's CUDA C reference CSV header", |l| l.trim() == HEADER)
    }

    fn parse(&self, text: &str, _file_name: &str) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: "cuda".into(), ..Parsed::default() };
        let mut device: Option<String> = None;
        let mut header = false;
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let l = raw.trim();
            if l.is_empty() {
                continue;
            }
            if let Some(c) = l.strip_prefix('#') {
                // `# device NVIDIA H200, 132 SMs, ...`: the name up to the first comma.
                if let Some(d) = c.trim().strip_prefix("device ") {
                    device = d.split(',').next().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
                }
                continue;
            }
            if l == HEADER {
                header = true;
                continue;
            }
            if !header {
                return Err(ParseError::new(line, format!("expected the header `{HEADER}` before any row")));
            }
            let cells: Vec<&str> = l.split(',').map(str::trim).collect();
            if cells.len() != 5 {
                return Err(ParseError::new(line, format!("expected 5 comma-separated cells, found {}", cells.len())));
            }
            let (Ok(bytes), Some(seconds)) = (cells[1].parse::<u64>(), super::num(cells[2])) else {
                return Err(ParseError::new(line, format!("`{}`: bytes and seconds must be numbers", l)));
            };
            if bytes == 0 || seconds <= 0.0 {
                out.warnings.push(format!("line {line}: {} has {bytes} bytes in {seconds} s; skipped", cells[0]));
                continue;
            }
            // The printed rate must be the bytes over the time.
            if let Some(g) = super::num(cells[3]) {
                let ours = bytes as f64 / seconds / 1e9;
                if (ours - g).abs() > 0.01 * g + 0.01 {
                    out.warnings.push(format!("line {line}: GBps_once {g} but bytes / seconds = {ours:.3}"));
                }
            }
            let test = cells[0];
            let point = match test {
                "d2d_ce" => Point {
                    bench: Bench::Memcpy.name().into(),
                    op: "copy".into(),
                    variant: Some("cuda c".into()),
                    method: Some("copy_engine".into()),
                    ..copy(bytes, 2)
                },
                t if t.starts_with("d2d_sm_") => Point {
                    bench: Bench::Memcpy.name().into(),
                    op: "copy".into(),
                    variant: Some(format!("cuda c {}", &t["d2d_sm_".len()..])),
                    method: Some("sm_kernel".into()),
                    ..copy(bytes, 2)
                },
                t => {
                    let Some((dir, mem)) = t.split_once('_') else {
                        return Err(ParseError::new(line, format!("unknown test `{t}`")));
                    };
                    let bench = match Bench::of(dir) {
                        Some(b @ (Bench::H2d | Bench::D2h)) => b,
                        _ => return Err(ParseError::new(line, format!("unknown test `{t}`"))),
                    };
                    Point {
                        bench: bench.name().into(),
                        op: "copy".into(),
                        variant: Some(format!("{mem} cuda c")),
                        method: Some("copy_engine".into()),
                        ..copy(bytes, 1)
                    }
                }
            };
            let mut r = record(
                point,
                seconds,
                line,
                format!("cuda_memcpy_reference `seconds` (median s per copy, CUDA events); {test}"),
            );
            r.device = device.clone();
            out.records.push(r);
        }
        if !header {
            return Err(ParseError::new(1, format!("no `{HEADER}` header: not a cuda_memcpy_reference CSV")));
        }
        Ok(out)
    }
}

/// A copy of `bytes`, each byte moved `moved` times.
fn copy(bytes: u64, moved: u64) -> Point {
    Point {
        size_bytes: Some(bytes),
        bytes_copied: Some(bytes),
        bytes_moved: bytes.checked_mul(moved),
        ..Point::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_every_kind_with_their_bytes_and_device() {
        let text = "# device NVIDIA H200, 132 SMs, L2 62914560 B\n\
                    test,bytes,seconds,GBps_once,GBps_rw\n\
                    d2d_ce,1048576,5.08471967e-06,206.22,412.44\n\
                    d2d_sm_u8_b16x1024,268435456,1.3e-4,2064.9,4129.8\n\
                    h2d_pinned,67108864,1.2092e-3,55.50,\n";
        let p = CudaCopyCsv.parse(text, "cuda_c.csv").unwrap();
        assert!(CudaCopyCsv.sniff(text).is_some());
        assert_eq!(p.records.len(), 3);
        let ce = &p.records[0];
        assert_eq!(ce.params.bench, "memcpy");
        assert_eq!(ce.params.bytes_moved, Some(2 * 1048576));
        assert_eq!(ce.device.as_deref(), Some("NVIDIA H200"));
        assert_eq!(p.records[1].params.method.as_deref(), Some("sm_kernel"));
        assert_eq!(p.records[1].params.variant.as_deref(), Some("cuda c u8_b16x1024"));
        let h2d = &p.records[2];
        assert_eq!((h2d.params.bench.as_str(), h2d.params.variant.as_deref()), ("h2d", Some("pinned cuda c")));
        assert_eq!(h2d.params.bytes_moved, Some(67108864));
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn a_rate_that_disagrees_with_its_time_is_warned_and_bad_rows_name_their_line() {
        let text = "test,bytes,seconds,GBps_once,GBps_rw\nd2d_ce,1000000000,1.0,5.0,10.0\n";
        let p = CudaCopyCsv.parse(text, "x.csv").unwrap();
        assert!(p.warnings[0].contains("line 2"), "{:?}", p.warnings);
        let e = CudaCopyCsv.parse("test,bytes,seconds,GBps_once,GBps_rw\nd2d_ce,abc,1,1,1\n", "x.csv").unwrap_err();
        assert_eq!(e.line, 2);
        let e = CudaCopyCsv.parse("d2d_ce,1,1,1,1\n", "x.csv").unwrap_err();
        assert!(e.message.contains("header"), "{}", e.message);
        let e = CudaCopyCsv.parse("test,bytes,seconds,GBps_once,GBps_rw\nx2y_pinned,1,1,1,1\n", "x.csv").unwrap_err();
        assert!(e.message.contains("unknown test"), "{}", e.message);
    }
}
