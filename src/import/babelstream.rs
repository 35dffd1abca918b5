//! BabelStream: the text table and `--csv` output.
//!
//! Byte weights (arrays touched per element, read + written): Copy 2, Mul 2,
//! Add 3, Triad 3, Dot 2, Nstream 4. BabelStream's MBytes/sec (10^6 bytes/s)
//! is computed from the *minimum* runtime, so the row's time is the minimum:
//! its derived rate equals the printed one. The CSV states the element
//! count and size exactly. The text table prints the array size rounded
//! (`Array size: 268.4 MB`) and the min time to five decimals, so there the
//! array size is the power-of-two element count that prints as the header
//! says (BabelStream's default and the usual `--arraysize`), else the
//! header's value; the time is then derived from the printed rate, which is
//! exact, and checked against the printed min time.

use super::babelstream_units::{array_bytes, array_bytes_checked, table_unit, MIB};
use super::{last_line_incomplete, lines, num, record, Claim, Format, ParseError, Parsed, Record};
use crate::vocab::benches::Bench;
use crate::vocab::benches::Family;
use crate::vocab::rows::Point;

pub struct BabelStream;
pub struct BabelStreamCsv;

/// benchbook op name and byte weight of a BabelStream function.
fn kernel(function: &str) -> Option<(&'static str, u64)> {
    match function.to_ascii_lowercase().as_str() {
        "copy" => Some(("copy", 2)),
        "mul" | "scale" => Some(("scale", 2)),
        "add" => Some(("add", 3)),
        "triad" => Some(("triad", 3)),
        "dot" => Some(("dot", 2)),
        "nstream" => Some(("nstream", 4)),
        _ => None,
    }
}

fn point(op: &str, weight: u64, array_bytes: u64, moved: u64, dtype: &str) -> Point {
    Point {
        bench: Bench::Stream.name().into(),
        op: op.into(),
        dtype: Some(dtype.into()),
        size_bytes: Some(array_bytes),
        bytes_copied: Some(array_bytes),
        bytes_moved: Some(moved),
        flops: None,
        variant: Some(format!("weight {weight}")),
        ..Point::default()
    }
}

impl Format for BabelStream {
    fn name(&self) -> &'static str {
        "babelstream"
    }

    fn describe(&self) -> &'static str {
        "BabelStream text table (Function MBytes/sec Min Max Average)"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Memcpy)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["BabelStream", "GPU-STREAM"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "its banner names BabelStream", |l| l.contains("BabelStream"))
            .or_else(|| Claim::find(text, "its banner names GPU-STREAM", |l| l.contains("GPU-STREAM")))
            .or_else(|| {
                Claim::find(text, "its table header (`Function`, `MBytes/sec`)", |l| {
                    l.contains("Function") && l.contains("MBytes/sec")
                })
            })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read (a 50 MiB log is never held as
    /// records).
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: Bench::Stream.name().into(), ..Parsed::default() };
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut precision = "f64".to_string();
        let mut array_mb: Option<&str> = None;
        let mut in_table = false;
        let mut implementation: Option<String> = None;
        let mut device: Option<String> = None;
        let mut resized: Option<u64> = None;
        // The table's rate unit (bytes/s of one) and its name; MiB sizes.
        let mut rate: (f64, &str) = (1e6, "MBytes/sec (10^6 bytes/s)");
        let mut array_mib = false;
        // `--triad-only` (4.0+): `Running triad N times`, the exact element
        // count, and the runtime of all N runs.
        let (mut triad_runs, mut elements, mut runtime): (Option<u64>, Option<u64>, Option<(usize, f64)>) =
            (None, None, None);
        for &(no, line) in &all {
            let t = line.trim();
            if let Some(n) = t.strip_prefix("Running triad ").and_then(|r| r.strip_suffix(" times")) {
                triad_runs = n.trim().parse().ok().filter(|&n: &u64| n > 0);
            } else if let Some(n) = t.strip_prefix("Number of elements:") {
                elements = n.trim().parse().ok();
            } else if let Some(v) = t.strip_prefix("Runtime (seconds):") {
                runtime = num(v).filter(|s| *s > 0.0).map(|s| (no, s));
            } else if let Some(v) = t.strip_prefix("Bandwidth (GB/s):") {
                if let (Some(runs), Some((_, secs))) = (triad_runs, runtime) {
                    let elem = if precision == "f32" { 4 } else { 8 };
                    let array = elements.and_then(|n| n.checked_mul(elem)).ok_or_else(|| {
                        ParseError::new(no, "a `--triad-only` result without its `Number of elements:` line")
                    })?;
                    let moved = array.checked_mul(3).ok_or_else(|| ParseError::new(no, "array size overflows"))?;
                    let gbs = num(v).unwrap_or(f64::NAN);
                    let mut p = point("triad", 3, array, moved, &precision);
                    p.variant = Some("weight 3, triad-only".into());
                    let mut r = record(
                        p,
                        secs / runs as f64,
                        no,
                        format!(
                            "BabelStream --triad-only: {runs} triads in {secs} s (their total, so the time is their mean, not the min the table reports); bytes = 3 × {array}; printed {gbs} GB/s"
                        ),
                    );
                    r.iterations = Some(runs);
                    r.device = device.clone().or_else(|| implementation.clone());
                    each(r);
                }
            } else if let Some(v) = t.strip_prefix("Version:") {
                out.tool_version = Some(format!("BabelStream {}", v.trim()));
            } else if let Some(v) = t.strip_prefix("Implementation:") {
                implementation = Some(v.trim().to_string());
                out.backend = v.trim().to_ascii_lowercase();
            } else if let Some((_, name)) = t.strip_prefix("Using ").and_then(|v| v.split_once(" device ")) {
                // `Using HIP device AMD Instinct MI300A`: the device's own
                // name, without GPU-STREAM's `(compute_units=24)`.
                let name = name.trim();
                let name = match name.rsplit_once(" (compute_units=") {
                    Some((n, rest)) if rest.ends_with(')') => n,
                    _ => name,
                };
                device = Some(name.trim().to_string()).filter(|n| !n.is_empty());
            } else if let Some((_, to)) = t.strip_prefix("Resizing array from ").and_then(|v| v.split_once(" to ")) {
                // GPU-STREAM 0.0: `Resizing array from 50000000 to 49999872`,
                // the exact element count (its `Array size` is rounded).
                resized = to.trim().parse::<u64>().ok();
            } else if let Some(v) = t.strip_prefix("Precision:") {
                precision = if v.trim() == "float" { "f32".into() } else { "f64".into() };
            } else if let Some(v) = t.strip_prefix("Array size:") {
                array_mb = v.split_whitespace().next();
                // 3.4+'s `--mibibytes`: `Array size: 256.0 MiB (=0.2 GiB)`.
                array_mib = v.split_whitespace().nth(1) == Some("MiB");
            } else if t.starts_with("Function") {
                in_table = true;
                rate = table_unit(t).ok_or_else(|| {
                    ParseError::new(
                        no,
                        format!("a BabelStream table header with no rate unit BabelStream prints: `{t}`"),
                    )
                })?;
            } else if in_table && !t.is_empty() {
                let toks: Vec<&str> = t.split_whitespace().collect();
                let Some((op, weight)) = toks.first().and_then(|f| kernel(f)) else { continue };
                let (Some(mbs), Some(min)) = (toks.get(1).and_then(|v| num(v)), toks.get(2).and_then(|v| num(v)))
                else {
                    if truncated && no == all.len() {
                        out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                        continue;
                    }
                    return Err(ParseError::new(no, "expected `Function MBytes/sec Min Max Average` numbers"));
                };
                let elem = if precision == "f32" { 4 } else { 8 };
                // What the rate and min time say the array is, to tell MB
                // from MiB (GPU-STREAM 1.0 prints MiB as `MB`).
                let arith = mbs * rate.0 * min / weight as f64;
                let exact = resized
                    .and_then(|n| n.checked_mul(elem))
                    .map(|b| (b, format!("{} elements × {elem} B, from the `Resizing array` line", b / elem)));
                let sized = |mb: &str| {
                    if array_mib {
                        array_bytes(mb, elem, MIB)
                    } else {
                        array_bytes_checked(mb, elem, arith)
                    }
                };
                let (array, how) = match exact.or_else(|| array_mb.and_then(sized)) {
                    Some(found) => found,
                    None => {
                        let a = arith.round() as u64;
                        (a, "no `Array size:` line, so derived as rate × min time / weight".to_string())
                    }
                };
                let Some(moved) = weight.checked_mul(array) else {
                    return Err(ParseError::new(
                        no,
                        format!("array size {array} B × {weight} arrays overflows a byte count"),
                    ));
                };
                let seconds = moved as f64 / (mbs * rate.0);
                // The printed min has five decimals.
                if (seconds - min).abs() > 0.5e-5 + 1e-3 * min {
                    out.warnings.push(format!(
                        "line {no}: {op}: {moved} bytes at {mbs} {} take {seconds:.6} s, but the printed min time is {min} s",
                        rate.1
                    ));
                }
                let max_avg: String = [("max", toks.get(3)), ("average", toks.get(4))]
                    .iter()
                    .filter_map(|(k, v)| v.and_then(|v| num(v)).map(|v| format!("; {k} {v} s")))
                    .collect();
                let mut r = record(
                    point(op, weight, array, moved, &precision),
                    seconds,
                    no,
                    format!(
                        "BabelStream {mbs} {} from its min time (printed {min} s); time = bytes / rate{max_avg}; bytes = weight {weight} × array; array {how}",
                        rate.1
                    ),
                );
                // A CPU build names no device; its implementation (OpenMP) is
                // then the best the log says about what ran.
                r.device = device.clone().or_else(|| implementation.clone());
                each(r);
            }
        }
        Ok(out)
    }
}

impl Format for BabelStreamCsv {
    fn name(&self) -> &'static str {
        "babelstream-csv"
    }

    fn describe(&self) -> &'static str {
        "BabelStream --csv (function,num_times,n_elements,sizeof,max_mbytes_per_sec,min_runtime,max_runtime,avg_runtime)"
    }

    fn family(&self) -> Option<Family> {
        Some(Family::Memcpy)
    }

    fn markers(&self) -> &'static [&'static str] {
        &["BabelStream", "GPU-STREAM"]
    }

    fn sniff(&self, text: &str) -> Option<Claim> {
        Claim::find(text, "its CSV header (`function,num_times,n_elements,sizeof`)", |l| {
            l.trim().starts_with("function,num_times,n_elements,sizeof")
        })
    }

    fn parse(&self, text: &str, file_name: &str) -> Result<Parsed, ParseError> {
        super::collect(self, text, file_name)
    }

    /// A record per row as it is read (a 50 MiB log is never held as
    /// records).
    fn parse_each(&self, text: &str, _file_name: &str, each: &mut dyn FnMut(Record)) -> Result<Parsed, ParseError> {
        let mut out = Parsed { tool: self.name().into(), backend: Bench::Stream.name().into(), ..Parsed::default() };
        let all = lines(text);
        let truncated = last_line_incomplete(text);
        let mut header: Vec<String> = Vec::new();
        for &(no, line) in &all {
            let t = line.trim();
            if t.starts_with("function,") {
                header = t.split(',').map(|s| s.trim().to_string()).collect();
                continue;
            }
            if header.is_empty() || t.is_empty() {
                continue;
            }
            let f: Vec<&str> = t.split(',').map(str::trim).collect();
            let col = |name: &str| header.iter().position(|h| h == name).and_then(|i| f.get(i).copied());
            let Some((op, weight)) = f.first().and_then(|name| kernel(name)) else { continue };
            let parsed = (|| {
                let n: u64 = col("n_elements")?.parse().ok()?;
                let size: u64 = col("sizeof")?.parse().ok()?;
                let min = num(col("min_runtime")?)?;
                Some((n, size, min))
            })();
            let Some((n, size, min)) = parsed else {
                if truncated && no == all.len() {
                    out.warnings.push(format!("line {no}: incomplete last line dropped (file truncated?)"));
                    continue;
                }
                return Err(ParseError::new(no, format!("expected numbers under {}", header.join(","))));
            };
            let Some((array, moved)) = n.checked_mul(size).and_then(|a| Some((a, a.checked_mul(weight)?))) else {
                return Err(ParseError::new(no, format!("{n} elements × {size} B × {weight} overflows a byte count")));
            };
            let dtype = if size == 4 { "f32" } else { "f64" };
            let mut r = record(
                point(op, weight, array, moved, dtype),
                min,
                no,
                format!(
                    "BabelStream CSV min_runtime {min} s (its rate uses the minimum); bytes = weight {weight} × {n} elements × {size} B"
                ),
            );
            if let Some(mbs) = col("max_mbytes_per_sec").and_then(num) {
                let ours = moved as f64 / min / 1e6;
                if (ours - mbs).abs() > 0.01 * mbs {
                    out.warnings.push(format!(
                        "line {no}: {op}: max_mbytes_per_sec {mbs}, bytes / min_runtime gives {ours:.1}"
                    ));
                }
            }
            if let Some(times) = col("num_times") {
                r.note += &format!("; best of {times} runs");
            }
            each(r);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Written here in GPU-STREAM 1.0's layout: its default array of
    /// 52,428,800 doubles (419,430,400 bytes) printed as `400.0 MB`, the
    /// rate in 10^6 bytes/s from the min time.
    const GPU_STREAM_1_0: &str = "GPU-STREAM\nVersion: 1.0\nImplementation: CUDA\nRunning kernels 10 times\n\
Precision: double\nArray size: 400.0 MB (=0.4 GB)\nTotal size: 1200.0 MB (=1.2 GB)\nUsing CUDA device Tesla K40m\n\
Driver: 7050\nFunction    MBytes/sec  Min (sec)   Max         Average\n\
Copy        183157.380  0.00458     0.00462     0.00460\n\
Triad       183157.380  0.00687     0.00690     0.00689\n";

    /// 3.4's `--mibibytes` table (printing code: v3.4 main.cpp L68-74,
    /// L227-294): MiB sizes and MiBytes/sec rates; values written here.
    #[test]
    fn mibibytes_tables_are_read_in_mib() {
        let text = "BabelStream\nVersion: 3.4\nImplementation: CUDA\nRunning kernels 100 times\nPrecision: double\n\
Array size: 256.0 MiB (=0.2 GiB)\nTotal size: 768.0 MiB (=0.8 GiB)\n\
Function    MiBytes/sec Min (sec)   Max         Average     \n\
Copy        1280000.000 0.00040     0.00042     0.00041     \n";
        let p = BabelStream.parse(text, "x.log").unwrap();
        let r = &p.records[0];
        assert_eq!(r.params.size_bytes, Some(1 << 28));
        let rate = r.params.bytes_moved.unwrap() as f64 / r.seconds_per_op;
        assert!((rate / (1_280_000.0 * 1_048_576.0) - 1.0).abs() < 1e-12, "{}", r.note);
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn mb_that_the_rate_shows_are_mib_are_read_as_mib() {
        assert!(BabelStream.sniff(GPU_STREAM_1_0).is_some());
        let p = BabelStream.parse(GPU_STREAM_1_0, "gpu-stream.log").unwrap();
        assert_eq!(p.records.len(), 2);
        for r in &p.records {
            assert_eq!(r.params.size_bytes, Some(419_430_400), "{}", r.note);
            assert!(r.note.contains("read as MiB"), "{}", r.note);
        }
        assert!(p.warnings.is_empty(), "{:?}", p.warnings);
    }

    #[test]
    fn mb_that_the_rate_shows_are_decimal_stay_decimal() {
        // The same layout, but an array of 50,000,000 doubles: 400.0 MB of
        // 10^6 bytes, which the rate × min time confirms.
        let text = GPU_STREAM_1_0
            .replace("183157.380  0.00458", "174672.489  0.00458")
            .replace("183157.380  0.00687", "174672.489  0.00687");
        let p = BabelStream.parse(&text, "gpu-stream.log").unwrap();
        assert_eq!(p.records[0].params.size_bytes, Some(400_000_000), "{}", p.records[0].note);
    }
}
