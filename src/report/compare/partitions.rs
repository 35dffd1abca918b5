//! The partitions section: a group whose runs split the machine into N
//! partitions measuring at once (`--partitions N`), against the baseline's
//! one instance on the whole machine. The comparison itself is the pair's
//! (the partitioned runs are read folded: speeds summed, latencies
//! averaged); this section adds what the folding hides: each partition's
//! own median, the sum with its interval, and the spread between the
//! fastest and the slowest partition, as a table and bars.

use serde::Serialize;

use super::ChartRef;
use crate::analysis::compare::LoadedRun;
use crate::analysis::partitions::{aggregate, Aggregate};
use crate::plot::{bar_chart, Chart};
use crate::vocab::partition::cpu_list;
use crate::vocab::rows::Row;
use crate::vocab::units::format_sig3;

/// Bars a chart holds: the points with the largest sums beyond it are in
/// the table only.
const MAX_POINTS: usize = 6;

#[derive(Debug, Clone, Serialize)]
pub struct PartitionRow {
    pub point: String,
    /// Each partition's median: "P0 1.21 GB/s · P1 1.19 GB/s".
    pub each: String,
    pub total: String,
    pub total_ci: String,
    /// Fastest over slowest partition, "1.02×".
    pub spread: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct PartitionSection {
    pub name: String,
    pub base: String,
    pub partitions: usize,
    /// Each partition's CPU set: "0 | 1".
    pub cpus: String,
    pub runs: usize,
    pub table: Vec<PartitionRow>,
    pub bars: Option<ChartRef>,
}

/// A partition's speed (or metric) as a table prints it: GB/s of the
/// bytes its charts count (read + written for memory benchmarks, copied once for transfers), operations per second, or the metric.
fn rate(a: &Aggregate, v: f64, unit: &str) -> String {
    match a.bytes_per_op {
        Some(b) => format!("{} GB/s", format_sig3(v * b as f64 / 1e9)),
        None if unit.is_empty() => format!("{} op/s", format_sig3(v)),
        None => format!("{} {unit}", format_sig3(v)),
    }
}

/// The section of group `i` (named `name`), if its runs are partitioned.
pub fn section(
    i: usize,
    name: &str,
    base: &str,
    group: &[LoadedRun],
    charts: &mut Vec<Box<dyn Chart>>,
) -> Option<PartitionSection> {
    let n = group.iter().map(LoadedRun::partitions).max()?;
    if n < 2 {
        return None;
    }
    // Every run's partitions pooled: a partition's figure is the median of
    // its rounds' medians over all the group's runs.
    let rows: Vec<Row> = group.iter().flat_map(|r| r.partition_rows.iter().cloned()).collect();
    let unit_of = |point: &str| {
        rows.iter()
            .find(|r| r.params.metric.is_some() && point.split(' ').next() == r.params.metric.as_deref())
            .and_then(|r| r.params.unit.clone())
            .unwrap_or_default()
    };
    let aggs = aggregate(&rows, 2000, 0x5eed);
    let table: Vec<PartitionRow> = aggs
        .iter()
        .map(|a| {
            let unit = unit_of(&a.point);
            PartitionRow {
                point: a.point.clone(),
                each: a
                    .partitions
                    .iter()
                    .map(|(k, v)| format!("P{k} {}", rate(a, *v, &unit)))
                    .collect::<Vec<_>>()
                    .join(" · "),
                total: rate(a, a.total, &unit),
                total_ci: format!("{} – {}", rate(a, a.total_low, &unit), rate(a, a.total_high, &unit)),
                spread: format!("{:.2}×", a.spread),
            }
        })
        .collect();
    let mut largest: Vec<&Aggregate> = aggs.iter().filter(|a| a.bytes_per_op.is_some()).collect();
    largest.sort_by(|x, y| y.total_gbps().unwrap_or(0.0).total_cmp(&x.total_gbps().unwrap_or(0.0)));
    largest.truncate(MAX_POINTS);
    let bars = (!largest.is_empty()).then(|| {
        let id = format!("partitions-{i}");
        let bars = largest
            .iter()
            .flat_map(|a| {
                a.partitions
                    .iter()
                    .map(move |(k, v)| (format!("P{k} {}", a.point), v * a.bytes_per_op.unwrap_or(0) as f64 / 1e9))
            })
            .collect();
        // The axis names the bytes its bars count: all read + written, all
        // copied once, or each point its own way.
        let axis = match (largest.iter().all(|a| a.read_written), largest.iter().any(|a| a.read_written)) {
            (true, _) => crate::vocab::benches::AXIS_MOVED,
            (false, false) => crate::vocab::benches::AXIS_ONCE,
            _ => "GB/s (read + written for memory, copied once for transfers)",
        };
        charts.push(Box::new(bar_chart(&id, &format!("{name}: each partition"), axis, bars)));
        let shown = if aggs.iter().filter(|a| a.bytes_per_op.is_some()).count() > largest.len() {
            format!("the {} points with the largest sums (every point is in the table)", largest.len())
        } else {
            "every point with a byte count".to_string()
        };
        ChartRef {
            id,
            alt: format!("each partition's median rate, {name}"),
            caption: format!(
                "Each partition's median rate at {shown}, GB/s counting bytes as the overlays above do (read + written for memcpy and STREAM, copied once for transfers); the partitions ran at once."
            ),
        }
    });
    let sets: Vec<Vec<usize>> = group[0].manifest.config.partitions().to_vec();
    Some(PartitionSection {
        name: name.into(),
        base: base.into(),
        partitions: n,
        cpus: sets.iter().map(|s| cpu_list(s)).collect::<Vec<_>>().join(" | "),
        runs: group.len(),
        table,
        bars,
    })
}
