//! Published numbers beside the measured ones: the seed write-up a kind
//! mirrors, its tables as `data/reference/` holds them ("published, not
//! measured here"), and where a run measured the same thing (a GEMM of the
//! same dtype and shape) the two side by side. Template:
//! `sections/reference.md`.

use crate::vocab::benches::Bench;
use serde::Serialize;

use crate::analysis::reference::RefRow;
use crate::analysis::{PointStat, Series};
use crate::error::Result;
use crate::report::sections::{Built, Input, Plugin};
use crate::report::Kind;

/// The section: in each write-up, after its measured sections.
pub const SECTION: Plugin = Plugin {
    name: "reference",
    template: include_str!("../../../templates/sections/reference.md"),
    after: &[
        (Kind::Memcpy, "stream"),
        (Kind::MemcpyPeer, "matrix"),
        (Kind::Gemm, "workload"),
        (Kind::Network, "matrix"),
    ],
    build: |input: &Input, _: &[&Series]| -> Result<Built> {
        Built::view(&reference_section(input.kind, &crate::analysis::reference::load()?, input.stats))
    },
};
use crate::vocab::units::{format_bytes, format_sig3};

#[derive(Debug, Clone, Serialize)]
pub struct RefView {
    pub table: String,
    pub quantity: String,
    pub device: String,
    /// dtype, shape or size, where the row has them.
    pub params: String,
    pub value: String,
    pub kind: String,
    pub note: String,
}

/// A published figure and what this report's runs measured for it.
#[derive(Debug, Clone, Serialize)]
pub struct Beside {
    pub what: String,
    /// The seed's table (and row) it is printed in: the seed prints some
    /// shapes in more than one table.
    pub published_in: String,
    pub published: String,
    pub published_device: String,
    pub measured: String,
    pub measured_device: String,
    /// The run it was measured in (benchbook's own first, then the
    /// report's run order).
    pub measured_run: String,
    pub ratio: String,
}

/// A row of the scaling table recomputed from the published throughputs.
#[derive(Debug, Clone, Serialize)]
pub struct ScalingView {
    pub table: String,
    pub quantity: String,
    pub device: String,
    pub gpus: u32,
    pub value: String,
    pub speedup: String,
    pub efficiency: String,
    pub published_efficiency: String,
    /// Whether the printed efficiency is the printed throughputs' (within
    /// the rounding of a one-decimal percentage); `None` where none is printed.
    pub agrees: Option<bool>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReferenceSection {
    pub document: String,
    pub title: String,
    pub rows: Vec<RefView>,
    pub beside: Vec<Beside>,
    /// Present when a published table varies the GPU count.
    pub scaling: Vec<ScalingView>,
}

/// Efficiency recomputed from printed values differs from the printed one by
/// their rounding at most: half a unit in the last of four significant
/// digits of each throughput, and 0.05 points of a one-decimal percentage.
const EFFICIENCY_TOLERANCE_PCT: f64 = 0.1;

fn scaling_views(rows: &[RefRow]) -> Vec<ScalingView> {
    crate::analysis::reference::scaling(rows)
        .into_iter()
        .map(|r| {
            let pct = 100.0 * r.efficiency;
            ScalingView {
                table: r.table,
                quantity: r.quantity,
                device: r.device,
                gpus: r.gpus,
                value: format!("{} {}", r.value_text, r.unit),
                speedup: format!("{:.2}×", r.speedup),
                efficiency: format!("{pct:.1} %"),
                published_efficiency: r
                    .published_efficiency_pct
                    .map(|p| format!("{p} %"))
                    .unwrap_or_else(|| "not printed".into()),
                agrees: r.published_efficiency_pct.map(|p| (p - pct).abs() <= EFFICIENCY_TOLERANCE_PCT),
            }
        })
        .collect()
}

/// The seed document a kind mirrors (its id's prefix).
fn document_of(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::MemcpyPeer => Some("000_"),
        Kind::Memcpy => Some("001_"),
        Kind::Gemm => Some("002_"),
        Kind::Network => Some("003_"),
        Kind::Compare => Some("004_"),
        Kind::Run => None,
    }
}

fn params(r: &RefRow) -> String {
    let mut p = Vec::new();
    if let Some(d) = &r.dtype {
        p.push(d.clone());
    }
    if let (Some(m), Some(n), Some(k)) = (r.m, r.n, r.k) {
        p.push(crate::vocab::gemm::shape(m, n, k));
    }
    if let Some(s) = r.size_bytes {
        p.push(format_bytes(s));
    }
    p.join(", ")
}

/// `f16` and `fp16` are one dtype.
fn same_dtype(a: &str, b: &str) -> bool {
    let norm = |s: &str| s.to_lowercase().replace("fp", "f").replace("float", "f");
    norm(a) == norm(b)
}

pub fn reference_section(kind: Kind, rows: &[RefRow], stats: &[PointStat]) -> Option<ReferenceSection> {
    let prefix = document_of(kind)?;
    let mine: Vec<&RefRow> = rows.iter().filter(|r| r.document.starts_with(prefix)).collect();
    let first = mine.first()?;
    let beside = mine
        .iter()
        .filter(|r| r.quantity == "gemm_throughput" && r.unit == "TFLOP/s")
        .filter_map(|r| {
            let published = r.value?;
            // benchbook's own measurement first, another tool's only where
            // benchbook has none.
            // Of several runs, the best-evidenced: not held out, then the
            // most rounds (a single round's median moves most on a rerun),
            // then the Runs table's order.
            let native = |p: &&PointStat| p.native();
            let mut ordered: Vec<&PointStat> = stats.iter().filter(native).collect();
            ordered.sort_by_key(|p| (p.held_out(), std::cmp::Reverse(p.rounds)));
            ordered.extend(stats.iter().filter(|p| !native(p)));
            let p = ordered.into_iter().find(|p| {
                p.bench == Bench::Gemm
                    && p.gflops.is_some()
                    && (p.m, p.n, p.k) == (r.m, r.n, r.k)
                    && r.m.is_some()
                    && match (&r.dtype, &p.dtype) {
                        (Some(a), Some(b)) => same_dtype(a, b),
                        _ => false,
                    }
            })?;
            let measured = p.gflops? / 1e3;
            Some(Beside {
                what: format!("GEMM {}", params(r)),
                published_in: format!("{}, row {}", r.table, r.row),
                published: format!("{} TFLOP/s", r.value_text),
                published_device: r.device.clone(),
                measured: format!("{} TFLOP/s", format_sig3(measured)),
                measured_device: match p.device.as_str() {
                    "" | "unknown" => "device not named in the log".to_string(),
                    d => d.to_string(),
                },
                measured_run: p.run_id.clone(),
                ratio: format!("{:.2}×", measured / published),
            })
        })
        .collect();
    let own: Vec<RefRow> = mine.iter().map(|r| (*r).clone()).collect();
    Some(ReferenceSection {
        scaling: scaling_views(&own),
        document: first.document.clone(),
        title: first.title.clone(),
        rows: mine
            .iter()
            .map(|r| RefView {
                table: r.table.clone(),
                quantity: r.quantity.clone(),
                device: r.device.clone(),
                params: params(r),
                value: format!("{} {}", r.value_text, r.unit),
                kind: r.kind.clone(),
                note: r.note.clone().unwrap_or_default(),
            })
            .collect(),
        beside,
    })
}
