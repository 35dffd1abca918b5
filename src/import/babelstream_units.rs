//! BabelStream's sizes and rates as it prints them: the table header's
//! rate unit, and the array size behind a rounded `Array size: 268.4 MB`.

use super::num;

/// [`array_bytes`], unless the printed MB are MiB: when MBytes/sec × the
/// min time (`arith`, bytes) agrees with `mb` × 2^20 within 1 % and
/// [`array_bytes`]'s reading is more than 2 % off it.
pub(super) fn array_bytes_checked(mb: &str, elem: u64, arith: f64) -> Option<(u64, String)> {
    let (bytes, how) = array_bytes(mb, elem, MB)?;
    let off = |b: f64| (b - arith).abs() / arith.max(1.0);
    let value = num(mb)?;
    let mib = ((value * 1048576.0 / elem as f64).round() as u64).checked_mul(elem)?;
    if arith > 0.0 && off(mib as f64) < 0.01 && off(bytes as f64) > 0.02 {
        return Some((
            mib,
            format!(
                "{mb} MB read as MiB (2^20 bytes), as older GPU-STREAM prints them: its MBytes/sec × min time gives {arith:.0} bytes, not {bytes}"
            ),
        ));
    }
    Some((bytes, how))
}

/// 10^6 and 2^20 bytes, and their names.
pub(super) const MB: (f64, &str) = (1e6, "MB");
pub(super) const MIB: (f64, &str) = (1_048_576.0, "MiB");

/// The rate unit of a BabelStream table header, as bytes/s of one and its
/// name: `MBytes/sec` (every release), `MiBytes/sec` (3.4+'s
/// `--mibibytes`), or the `MB/s` … `TiB/s` of builds after 5.0.
pub(super) fn table_unit(header: &str) -> Option<(f64, &'static str)> {
    let units: [(&str, f64, &'static str); 10] = [
        ("MBytes/sec", 1e6, "MBytes/sec (10^6 bytes/s)"),
        ("MiBytes/sec", 1_048_576.0, "MiBytes/sec (2^20 bytes/s)"),
        ("GBytes/sec", 1e9, "GBytes/sec (10^9 bytes/s)"),
        ("GiBytes/sec", 1_073_741_824.0, "GiBytes/sec (2^30 bytes/s)"),
        ("MB/s", 1e6, "MB/s (10^6 bytes/s)"),
        ("MiB/s", 1_048_576.0, "MiB/s (2^20 bytes/s)"),
        ("GB/s", 1e9, "GB/s (10^9 bytes/s)"),
        ("GiB/s", 1_073_741_824.0, "GiB/s (2^30 bytes/s)"),
        ("TB/s", 1e12, "TB/s (10^12 bytes/s)"),
        ("TiB/s", 1_099_511_627_776.0, "TiB/s (2^40 bytes/s)"),
    ];
    let toks: Vec<&str> = header.split_whitespace().collect();
    units.iter().find(|(u, _, _)| toks.contains(u)).map(|&(_, per, name)| (per, name))
}

/// The array size in bytes that BabelStream's rounded `Array size: <mb> MB`
/// (or `MiB`) stands for, and how it was read: the power-of-two element
/// count that prints as `mb`, else `mb` × the unit rounded to whole
/// elements.
pub(super) fn array_bytes(mb: &str, elem: u64, (unit, unit_name): (f64, &str)) -> Option<(u64, String)> {
    let value = num(mb).filter(|v| *v > 0.0)?;
    let decimals = mb.split_once('.').map_or(0, |(_, d)| d.len()) as i32;
    let half_ulp = 0.5 * 10f64.powi(-decimals);
    for k in 0..48u32 {
        let bytes = (1u64 << k) * elem;
        if ((bytes as f64 / unit) - value).abs() <= half_ulp + 1e-9 {
            return Some((
                bytes,
                format!("{mb} {unit_name} read as 2^{k} elements × {elem} B, the power of two that prints so"),
            ));
        }
    }
    let bytes = ((value * unit / elem as f64).round() as u64).checked_mul(elem)?;
    Some((bytes, format!("{mb} {unit_name} from the header (± {half_ulp} {unit_name} as printed)")))
}
