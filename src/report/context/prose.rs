//! Number formats shared by every section. (What the sections say is
//! decided in [`crate::analysis::findings`].)

use crate::vocab::units::format_bytes;
pub(crate) use crate::vocab::units::{format_ci_pct as ci_pct, format_pct as pct};

use super::KeyValue;

pub(super) fn kv(key: &str, value: impl Into<String>) -> KeyValue {
    KeyValue { key: key.into(), value: value.into() }
}

pub(super) fn opt_size(s: Option<u64>) -> String {
    s.map(format_bytes).unwrap_or_else(|| "not reached".into())
}

/// Sizes as a span: `64 MiB`, `64 MiB and 128 MiB`, `64 MiB to 256 MiB`.
pub(super) fn span(sizes: &[String]) -> String {
    match sizes {
        [] => String::new(),
        [one] => one.clone(),
        [a, b] => format!("{a} and {b}"),
        [a, .., b] => format!("{a} to {b}"),
    }
}

/// What stands for a point's time where it has none of its own: a tool
/// that printed only a rate, with no size in the file, has a time per
/// operation that would rest on an assumed size (nvbandwidth's 10^9 bytes).
pub(crate) fn time_shown(p: &crate::analysis::PointStat) -> Option<String> {
    let imported = crate::vocab::source::RowOrigin::parse(p.source.as_deref()).tool().is_some();
    (imported && p.size_bytes.is_none() && p.gbps_copied.is_some()).then(|| "n/a (the tool printed a rate)".into())
}

/// A point's median time with its 95 % interval: `1.23 ms ± 0.8 %`;
/// `(1 round)` when the interval rests on one round's samples only (on a
/// GPU `(1 round: within-run)`: see the Methodology's rerun interval),
/// `(no CI)` below six samples of one round, and `n/a` for an imported
/// rate whose size the file does not give.
pub(crate) fn median_with_ci(p: &crate::analysis::PointStat) -> String {
    if let Some(none) = time_shown(p) {
        return none;
    }
    let t = crate::vocab::units::format_seconds(p.median_seconds);
    match (p.interval(), p.ci_relative()) {
        (Some(ci), Some(r)) if ci.basis == crate::vocab::interval::Basis::Rounds => format!("{t} ± {}", ci_pct(r)),
        (Some(_), Some(r)) if p.within_run_only() => format!("{t} ± {} (1 round: within-run)", ci_pct(r)),
        (Some(_), Some(r)) => format!("{t} ± {} (1 round)", ci_pct(r)),
        _ => format!("{t} (no CI)"),
    }
}
