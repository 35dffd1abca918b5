//! The one gate between every format and the archive: a record whose
//! numbers cannot be a measurement (misread, saturated, corrupt) is dropped
//! with a warning naming its line, whatever format read it.

use super::Record;
use crate::vocab::rows::Status;

/// A rate no interconnect or memory reaches (10^6 GB/s = 1 PB/s): a row
/// above it is a misread or corrupt number, never a measurement.
pub const MAX_GB_PER_S: f64 = 1e6;

/// The largest value a named metric in `unit` can hold, generously above
/// anything measured (a misread, saturated or corrupt number lies past
/// it): a week in ms, 10^10 tokens/s, 10^5 TFLOP/s per GPU, 100 %.
pub fn metric_bound(unit: &str) -> f64 {
    match unit {
        "ms" => 7.0 * 86_400e3,
        "s" => 7.0 * 86_400.0,
        "%" => 100.0,
        "TFLOP/s/GPU" | "TFLOP/s" => 1e5,
        "req/s" | "samples/s" => 1e8,
        "tokens/s" | "tokens/s/GPU" => 1e10,
        "GiB" | "GB" => 1e6,
        // Counts of requests or tokens, a loss: finite is the bound.
        _ => 1e15,
    }
}

/// Whether a record's numbers can be a measurement: false for a measured
/// record with a time that is not finite and positive, a rate above
/// [`MAX_GB_PER_S`], or a named metric that is negative, not finite or past
/// [`metric_bound`] (a bus factor that is not finite and positive is left
/// unknown), each with a warning naming its line and value. Formats parse
/// leniently; this is the one gate before the archive.
pub(super) fn possible(r: &mut Record, warnings: &mut Vec<String>) -> bool {
    if r.params.bw_factor.is_some_and(|f| !(f.is_finite() && f > 0.0)) {
        warnings.push(format!(
            "line {}: bus factor {} is not a positive number; left unknown",
            r.line,
            r.params.bw_factor.unwrap_or(f64::NAN)
        ));
        r.params.bw_factor = None;
    }
    if r.status != Status::Measured {
        return true;
    }
    if r.params.metric.is_some() {
        let unit = r.params.unit.as_deref().unwrap_or("");
        let why = match r.value {
            Some(v) if !v.is_finite() => Some(format!("{v} is not a finite number")),
            Some(v) if v < 0.0 => Some(format!("{v} {unit} is negative, and no rate, time, count or loss is")),
            Some(v) if v > metric_bound(unit) => {
                Some(format!("{v:e} {unit} is above any real measurement ({:e} {unit})", metric_bound(unit)))
            }
            Some(_) => None,
            None => Some("no value".into()),
        };
        if let Some(why) = &why {
            warnings.push(format!("line {}: {} {why}; row dropped", r.line, r.params.op));
        }
        return why.is_none();
    }
    let s = r.seconds_per_op;
    if !(s.is_finite() && s > 0.0) {
        warnings
            .push(format!("line {}: time {s} s per operation is not a positive finite number; row dropped", r.line));
        return false;
    }
    for bytes in [r.params.bytes_copied, r.params.bytes_moved].into_iter().flatten() {
        let gbps = bytes as f64 / s / 1e9;
        if gbps > MAX_GB_PER_S {
            warnings.push(format!(
                "line {}: {bytes} bytes in {s} s is {gbps:.3e} GB/s, above any real link ({MAX_GB_PER_S:e} GB/s); row dropped",
                r.line
            ));
            return false;
        }
    }
    true
}
