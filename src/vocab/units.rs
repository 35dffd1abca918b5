//! Units: parsing sizes and sweeps the way users write them (`4K..2G`,
//! `64M`, `1GiB`), and formatting bytes, seconds and rates for humans.
//!
//! Convention, everywhere in benchbook: size suffixes K/M/G/T are binary
//! (KiB = 1024 bytes), as in every memcpy sweep of the seed write-ups, while
//! rates are decimal: 1 GB/s = 10^9 bytes per second, as nvbandwidth,
//! nccl-tests and STREAM print them.

use crate::error::{Error, Result};

/// Bytes per decimal gigabyte, the unit of every `gbps` value.
pub const GB: f64 = 1e9;

/// Parse one size: `4096`, `4K`, `4KiB`, `64M`, `2G`, `1T` (binary multiples).
pub fn parse_size(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    if t.is_empty() {
        return Err("empty size".into());
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '_')).unwrap_or(t.len());
    let (digits, suffix) = t.split_at(split);
    let digits: String = digits.chars().filter(|c| *c != '_').collect();
    if digits.is_empty() {
        return Err(format!("`{t}` does not start with a number"));
    }
    let value: u64 = digits.parse().map_err(|_| format!("`{t}`: number too large"))?;
    let shift = match suffix.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => return Err(format!("`{t}`: unknown suffix `{other}` (use K, M, G or T; they are powers of 1024)")),
    };
    value.checked_mul(1u64 << shift).ok_or_else(|| format!("`{t}` overflows 64 bits"))
}

/// Parse a size list: comma-separated sizes and power-of-two ranges
/// (`4K..2G` = every power of two from 4 KiB to 2 GiB inclusive).
/// The result is sorted and deduplicated.
pub fn parse_sizes(flag: &str, text: &str) -> Result<Vec<u64>> {
    parse_list(flag, text, "sizes")
}

/// [`parse_sizes`] and [`parse_counts`]: `noun` names the values in errors.
fn parse_list(flag: &str, text: &str, noun: &str) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((lo, hi)) = part.split_once("..") {
            let lo = parse_size(lo).map_err(|m| Error::config(flag, m))?;
            let hi = parse_size(hi).map_err(|m| Error::config(flag, m))?;
            if lo == 0 || lo > hi {
                return Err(Error::config(
                    flag,
                    format!("range `{part}` must go from a positive value up to a larger one, e.g. 4K..2G or 1..8"),
                ));
            }
            let mut s = lo;
            while s <= hi {
                out.push(s);
                match s.checked_mul(2) {
                    Some(next) => s = next,
                    None => break,
                }
            }
        } else {
            let s = parse_size(part).map_err(|m| Error::config(flag, m))?;
            if s == 0 {
                return Err(Error::config(flag, format!("{noun} must be positive (at least 1), not `{part}`")));
            }
            out.push(s);
        }
    }
    if out.is_empty() {
        return Err(Error::config(
            flag,
            format!("no {noun} given; write e.g. `4K..2G` or `1M,64M` (sizes), `1..8` (counts)"),
        ));
    }
    out.sort_unstable();
    out.dedup();
    Ok(out)
}

/// Parse a comma-separated list of positive integers, with `a..b` ranges
/// stepping by doubling (`1..8` = 1,2,4,8), as thread counts are swept.
pub fn parse_counts(flag: &str, text: &str) -> Result<Vec<u32>> {
    let sizes = parse_list(flag, text, "counts")?;
    sizes.into_iter().map(|s| u32::try_from(s).map_err(|_| Error::config(flag, format!("{s} is too large")))).collect()
}

/// `4096` → `4 KiB`, `2147483648` → `2 GiB`, `1536` → `1.5 KiB`.
pub fn format_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = bytes as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if (v - v.round()).abs() < 1e-9 {
        format!("{} {}", v.round() as u64, UNITS[i])
    } else {
        format!("{:.1} {}", v, UNITS[i])
    }
}

/// Seconds with an SI prefix: `3.2 µs`, `15.0 ms`, `1.20 s`.
pub fn format_seconds(seconds: f64) -> String {
    let a = seconds.abs();
    if a == 0.0 || !a.is_finite() {
        format!("{seconds} s")
    } else if a < 1e-6 {
        format!("{:.1} ns", seconds * 1e9)
    } else if a < 1e-3 {
        format!("{:.2} µs", seconds * 1e6)
    } else if a < 1.0 {
        format!("{:.2} ms", seconds * 1e3)
    } else {
        format!("{:.2} s", seconds)
    }
}

/// A rate with three significant figures, e.g. `12.3`, `1234`, `0.0456`.
/// A parameter value as an axis shows it: whole numbers as integers
/// (`8`, not `8.00`), anything else as [`format_sig3`].
pub fn format_axis(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format_sig3(v)
    }
}

/// A confidence as a percentage with enough decimals that what it misses
/// shows: `99.38 %`, and `99.99971 %` (not `100.00 %`) for a Bonferroni
/// correction over 17,000 tests.
pub fn format_confidence(c: f64) -> String {
    let miss = 100.0 * (1.0 - c);
    if !(miss > 0.0 && miss < 0.01) {
        return format!("{:.2} %", 100.0 * c);
    }
    let decimals = (-miss.log10()).ceil() as usize + 1;
    format!("{:.*} %", decimals.min(12), 100.0 * c)
}

pub fn format_sig3(v: f64) -> String {
    if !v.is_finite() {
        return "n/a".into();
    }
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a == 0.0 {
        "0".into()
    } else {
        let digits = (2 - a.log10().floor() as i32).max(0) as usize;
        format!("{v:.digits$}")
    }
}

/// Quote an argv the way a shell would need it.
pub fn shell_join(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty() && a.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c)) {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// A fraction as a percentage, three significant digits: `12.5 %`.
pub fn format_pct(f: f64) -> String {
    format!("{} %", format_sig3(f * 100.0))
}

/// A relative half-width as a percentage, two significant digits at most.
pub fn format_ci_pct(r: f64) -> String {
    let pct = r * 100.0;
    if pct < 0.01 {
        "< 0.01 %".into()
    } else if pct < 1.0 {
        format!("{pct:.2} %")
    } else {
        format!("{pct:.1} %")
    }
}

/// GFLOP/s for CPUs; GPUs are quoted in TFLOP/s, as the seed 002 tables are.
#[derive(Clone, Copy)]
pub enum FlopUnit {
    Giga,
    Tera,
}

impl FlopUnit {
    pub fn show(self, gflops: f64) -> String {
        format_sig3(self.value(gflops))
    }

    /// A rate in GFLOP/s, in this unit.
    pub fn value(self, gflops: f64) -> f64 {
        match self {
            FlopUnit::Giga => gflops,
            FlopUnit::Tera => gflops / 1e3,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FlopUnit::Giga => "GFLOP/s",
            FlopUnit::Tera => "TFLOP/s",
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn confidences_show_what_they_miss() {
        assert_eq!(super::format_confidence(0.95), "95.00 %");
        assert_eq!(super::format_confidence(1.0 - 0.05 / 8.0), "99.38 %");
        assert_eq!(super::format_confidence(1.0 - 0.05 / 17_000.0), "99.99971 %");
        assert_eq!(super::format_confidence(1.0), "100.00 %");
    }

    use super::*;

    #[test]
    fn sizes_parse_binary_suffixes() {
        assert_eq!(parse_size("4K").unwrap(), 4096);
        assert_eq!(parse_size("4KiB").unwrap(), 4096);
        assert_eq!(parse_size("2G").unwrap(), 2 << 30);
        assert_eq!(parse_size("1_000").unwrap(), 1000);
        assert!(parse_size("4Q").unwrap_err().contains("unknown suffix"));
        assert!(parse_size("K").is_err());
        assert!(parse_size("99999999999999999999").is_err());
        assert!(parse_size("20000000T").is_err());
    }

    #[test]
    fn sweep_is_powers_of_two_inclusive() {
        let s = parse_sizes("--sizes", "4K..64K").unwrap();
        assert_eq!(s, vec![4096, 8192, 16384, 32768, 65536]);
        let s = parse_sizes("--sizes", "1M, 4K..8K ,1M").unwrap();
        assert_eq!(s, vec![4096, 8192, 1 << 20]);
        let e = parse_sizes("--sizes", "2G..4K").unwrap_err().to_string();
        assert!(e.starts_with("--sizes:"), "{e}");
        assert!(parse_sizes("--sizes", "").is_err());
    }

    #[test]
    fn counts_accept_ranges() {
        assert_eq!(parse_counts("--threads", "1..8").unwrap(), vec![1, 2, 4, 8]);
        assert_eq!(parse_counts("--threads", "3,1").unwrap(), vec![1, 3]);
    }

    #[test]
    fn formatting() {
        assert_eq!(format_bytes(4096), "4 KiB");
        assert_eq!(format_bytes(1536), "1.5 KiB");
        assert_eq!(format_bytes(2 << 30), "2 GiB");
        assert_eq!(format_seconds(2.5e-6), "2.50 µs");
        assert_eq!(format_sig3(1234.4), "1234");
        assert_eq!(format_sig3(0.04561), "0.0456");
    }
}
