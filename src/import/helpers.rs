//! Helpers shared by the formats: numbers and dtypes as tools print them,
//! and the records they become.

use crate::vocab::rows::{Point, Status};

use super::Record;

/// Bytes one operation is normalized to where a matrix tool does not print
/// its buffer size (nvbandwidth, rocm-bandwidth-test, TransferBench): time
/// = 1 / rate, so the derived rate is the printed one.
pub(crate) const NORMALIZED_BYTES: u64 = 1_000_000_000;

/// The benchmark of a copy between two endpoints of one node: GPU → GPU a
/// peer copy, CPU → GPU `h2d`, GPU → CPU `d2h`; none between CPUs.
pub(crate) fn copy_bench(src_gpu: bool, dst_gpu: bool) -> Option<crate::vocab::benches::Bench> {
    use crate::vocab::benches::Bench;
    match (src_gpu, dst_gpu) {
        (true, true) => Some(Bench::MemcpyPeer),
        (false, true) => Some(Bench::H2d),
        (true, false) => Some(Bench::D2h),
        (false, false) => None,
    }
}

/// Whether the final line of `text` was cut off (no trailing newline).
pub(crate) fn last_line_incomplete(text: &str) -> bool {
    !text.is_empty() && !text.ends_with('\n')
}

/// A number as tools print them; `None` for `N/A` and friends.
pub(crate) fn num(tok: &str) -> Option<f64> {
    tok.trim().parse::<f64>().ok().filter(|v| v.is_finite())
}

/// What to add when `tok` is not a number: a placeholder (`xxx.xx`,
/// `XXX.XX`, `xxx`) means a documentation template, not a measurement.
pub(crate) fn placeholder_hint(tok: &str) -> &'static str {
    let t = tok.trim();
    if !t.is_empty() && t.contains(['x', 'X']) && t.chars().all(|c| matches!(c, 'x' | 'X' | '.' | ',')) {
        " (a placeholder: the file is a documentation template, with no measurement in it)"
    } else {
        ""
    }
}

/// Normalize a tool's dtype name to benchbook's (`float` → `f32`).
pub(crate) fn dtype(name: &str) -> String {
    match name.to_ascii_lowercase().as_str() {
        "float" | "float32" | "fp32" => "f32".into(),
        "double" | "float64" | "fp64" => "f64".into(),
        "half" | "float16" | "fp16" => "f16".into(),
        "bfloat16" | "bf16" => "bf16".into(),
        "int8" | "char" => "i8".into(),
        "uint8" => "u8".into(),
        "int32" | "int" => "i32".into(),
        "uint32" => "u32".into(),
        "int64" => "i64".into(),
        "uint64" => "u64".into(),
        other => other.into(),
    }
}

/// A record for a point with a time per operation.
pub(crate) fn record(params: Point, seconds_per_op: f64, line: usize, note: impl Into<String>) -> Record {
    Record {
        params,
        seconds_per_op,
        iterations: None,
        device: None,
        host: None,
        status: Status::Measured,
        value: None,
        note: note.into(),
        line,
    }
}

/// One named metric's value as a tool printed it: `value` in `unit`,
/// better `better`.
pub(crate) struct MetricValue<'a> {
    pub name: &'a str,
    pub value: f64,
    pub unit: &'a str,
    pub better: crate::vocab::metrics::Better,
}

/// A record of a named metric at the point's named parameters (`tool`
/// becomes the row's `bench`).
pub(crate) fn metric_record(
    tool: &str,
    m: MetricValue,
    params: &crate::vocab::metrics::Params,
    line: usize,
    note: impl Into<String>,
) -> Record {
    let point = Point {
        bench: tool.into(),
        op: m.name.into(),
        metric: Some(m.name.into()),
        axes: crate::vocab::metrics::params_text(params),
        unit: Some(m.unit.into()),
        better: Some(m.better.as_str().into()),
        ..Point::default()
    };
    Record { value: Some(m.value), ..record(point, f64::NAN, line, note) }
}
