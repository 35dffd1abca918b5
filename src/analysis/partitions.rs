//! What N concurrent partitions add up to (`run --partitions N`): per point,
//! each partition's median speed, their sum with a bootstrap interval (each
//! partition's median drawn again by resampling its rounds, then each
//! round's samples, and the draws summed: the partitions ran at once as
//! independent instances), and the spread between the fastest and the
//! slowest partition.
//!
//! [`fold`] turns a partitioned run's rows into the rows of one instance
//! that did all the partitions' work, so a partitioned run compares point
//! by point with one instance on the whole machine (`compare`, the compare
//! report): per point, round and sample, the partitions' speeds are summed
//! (a throughput adds up) and a lower-is-better metric is averaged (the
//! latency a request sees on an average partition).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::vocab::partition::{partition_of, untagged_variant, without_partition};
use crate::vocab::rows::{Row, Status};
use crate::vocab::stats::{quantile_sorted, resampling_rng, RoundsResampler};

/// A point's bytes per operation, its rounds by partition, and whether its
/// bytes are read + written.
type PointRounds = (Option<u64>, BTreeMap<u64, BTreeMap<Option<u32>, Vec<f64>>>, bool);

/// One point's partitions, added up.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Aggregate {
    /// The point without its partition: `memcpy copy 16 MiB 1T`.
    pub point: String,
    /// Each partition's median speed (operations per second, or the
    /// metric's own unit), by partition.
    pub partitions: Vec<(u64, f64)>,
    /// Their sum, and its 95 % interval.
    pub total: f64,
    pub total_low: f64,
    pub total_high: f64,
    /// Bytes one operation counts (`bytes_moved` for memory benchmarks,
    /// `bytes_copied` for transfers, as their charts count them), to turn
    /// operations per second into GB/s; `None` for points without bytes.
    pub bytes_per_op: Option<u64>,
    /// Whether those bytes are read + written (a memory benchmark's), not
    /// copied once.
    pub read_written: bool,
    /// Fastest over slowest partition.
    pub spread: f64,
}

impl Aggregate {
    /// The sum as GB/s (10^9 bytes/s of the bytes each row counts).
    pub fn total_gbps(&self) -> Option<f64> {
        self.bytes_per_op.map(|b| self.total * b as f64 / 1e9)
    }
}

/// The aggregate of every point measured on two partitions or more: timed
/// points, and named metrics that are better higher (a throughput adds up;
/// a latency does not, and is left out).
pub fn aggregate(rows: &[Row], replicates: usize, seed: u64) -> Vec<Aggregate> {
    // point (without partition) → partition → round → speeds.
    let mut by_point: BTreeMap<String, PointRounds> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == Status::Measured) {
        let Some(k) = partition_of(r.params.axes.as_deref()) else { continue };
        // A timed row's speed (operations per second), or a named metric
        // that adds up across instances (higher is better: tokens/s, req/s).
        let speed = match (r.params.metric.as_deref(), r.seconds, r.iterations, r.value) {
            (None, Some(s), Some(n), _) if s > 0.0 && s.is_finite() && n > 0 => n as f64 / s,
            (Some(_), _, _, Some(v)) if v.is_finite() && r.params.better.as_deref() == Some("higher") => v,
            _ => continue,
        };
        let mut p = r.params.clone();
        p.variant = untagged_variant(p.variant.as_deref(), p.axes.as_deref());
        p.axes = without_partition(p.axes.as_deref());
        let e = by_point.entry(p.label()).or_default();
        // The bytes the overlays of the same point count: read + written
        // for memory benchmarks (memcpy, STREAM), copied once for transfers.
        let transfer = crate::vocab::benches::Bench::of(&r.params.bench)
            .is_some_and(|b| b.is_transfer() || b == crate::vocab::benches::Bench::Collective);
        e.0 = if transfer { r.params.bytes_copied } else { r.params.bytes_moved.or(r.params.bytes_copied) };
        e.2 = !transfer && r.params.bytes_moved.is_some();
        e.1.entry(k).or_default().entry(r.round).or_default().push(speed);
    }
    let mut rng = resampling_rng(seed);
    by_point
        .into_iter()
        .filter(|(_, (_, parts, _))| parts.len() >= 2)
        .map(|(point, (bytes_per_op, parts, read_written))| {
            // A partition's figure: the median of its rounds' medians.
            let mut parts: Vec<(u64, RoundsResampler)> = parts
                .iter()
                .filter_map(|(k, r)| Some((*k, RoundsResampler::new(&r.values().cloned().collect::<Vec<_>>())?)))
                .collect();
            let medians: Vec<(u64, f64)> = parts.iter().map(|(k, r)| (*k, r.figure())).collect();
            let total: f64 = medians.iter().map(|m| m.1).sum();
            let mut sums: Vec<f64> =
                (0..replicates.max(100)).map(|_| parts.iter_mut().map(|(_, r)| r.draw(&mut rng)).sum()).collect();
            sums.sort_by(f64::total_cmp);
            let (lo, hi) = medians.iter().fold((f64::INFINITY, 0.0f64), |(lo, hi), m| (lo.min(m.1), hi.max(m.1)));
            Aggregate {
                point,
                partitions: medians,
                total,
                total_low: quantile_sorted(&sums, 0.025),
                total_high: quantile_sorted(&sums, 0.975),
                bytes_per_op,
                read_written,
                spread: if lo > 0.0 { hi / lo } else { f64::NAN },
            }
        })
        .collect()
}

/// Speeds of a point's partitions at one (round, sample), and the row
/// that stands for them.
struct Fold {
    template: Row,
    threads: u32,
    values: Vec<f64>,
}

/// A partitioned run's rows as one instance's (see the module's text).
/// Timed rows keep their iterations and take the time that gives the
/// summed speed; `threads` becomes the partitions' total. Only the
/// (round, sample) pairs every partition measured are kept, so a sum never
/// misses a partition. Rows without a partition pass through unchanged,
/// and a run with none comes back as it was.
pub fn fold(rows: &[Row]) -> Vec<Row> {
    let parts: std::collections::BTreeSet<u64> =
        rows.iter().filter_map(|r| partition_of(r.params.axes.as_deref())).collect();
    if parts.len() < 2 {
        return rows.to_vec();
    }
    let mut out = Vec::new();
    let mut folds: BTreeMap<(String, Option<u32>, Option<u32>), Fold> = BTreeMap::new();
    let mut points: BTreeMap<String, u32> = BTreeMap::new();
    for r in rows {
        let Some(k) = partition_of(r.params.axes.as_deref()) else {
            out.push(r.clone());
            continue;
        };
        let mut t = r.clone();
        t.params.variant = untagged_variant(t.params.variant.as_deref(), t.params.axes.as_deref());
        t.params.axes = without_partition(t.params.axes.as_deref());
        let label = t.params.label();
        let next = points.len() as u32;
        t.point = *points.entry(label.clone()).or_insert(next);
        if r.status != Status::Measured {
            // One partition's note stands for all.
            if k == *parts.first().unwrap_or(&0) {
                out.push(t);
            }
            continue;
        }
        let value = match (t.params.metric.as_deref(), t.seconds, t.iterations, t.value) {
            (None, Some(s), Some(n), _) if s > 0.0 && s.is_finite() && n > 0 => n as f64 / s,
            (Some(_), _, _, Some(v)) if v.is_finite() => v,
            _ => continue,
        };
        let threads = t.params.threads.unwrap_or(0);
        let e = folds.entry((label, t.round, t.sample)).or_insert_with(|| Fold {
            template: t,
            threads: 0,
            values: Vec::new(),
        });
        e.threads += threads;
        e.values.push(value);
    }
    for (_, f) in folds.into_iter().filter(|(_, f)| f.values.len() == parts.len()) {
        let mut r = f.template;
        if r.params.threads.is_some() {
            r.params.threads = Some(f.threads);
        }
        let sum: f64 = f.values.iter().sum();
        match r.params.metric.as_deref() {
            None => r.seconds = r.iterations.map(|n| n as f64 / sum),
            Some(_) if r.params.better.as_deref() == Some("higher") => r.value = Some(sum),
            Some(_) => r.value = Some(sum / f.values.len() as f64),
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand_distr::{Distribution, Normal};

    /// `k` samples of partition `part` at `speed` operations per second.
    fn rows(part: u64, speed: f64, k: usize, seed: u64) -> Vec<Row> {
        let mut rng = crate::vocab::stats::seeded_rng(seed);
        let noise = Normal::new(1.0, 0.01).unwrap();
        (0..k)
            .map(|i| {
                let mut r = Row::blank();
                r.status = Status::Measured;
                r.params.bench = "stream".into();
                r.params.op = "triad".into();
                r.params.size_bytes = Some(1 << 24);
                r.params.bytes_copied = Some(1 << 24);
                r.params.axes = Some(format!(r#"{{"partition":{part},"partition_cpus":"{part}"}}"#));
                r.params.variant = Some(format!("partition {part}, CPUs {part}"));
                r.sample = Some(i as u32);
                r.iterations = Some(10);
                r.seconds = Some(10.0 / (speed * noise.sample(&mut rng)));
                r
            })
            .collect()
    }

    #[test]
    fn two_partitions_add_up_with_an_interval_and_their_spread() {
        let mut all = rows(0, 100.0, 40, 1);
        all.extend(rows(1, 50.0, 40, 2));
        let a = aggregate(&all, 2000, 7);
        assert_eq!(a.len(), 1, "{a:?}");
        let a = &a[0];
        assert_eq!(a.partitions.len(), 2);
        assert!((a.total - 150.0).abs() < 2.0, "{a:?}");
        assert!(a.total_low < a.total && a.total < a.total_high && a.total_high - a.total_low < 5.0, "{a:?}");
        assert!((a.spread - 2.0).abs() < 0.05, "{a:?}");
        assert!((a.total_gbps().unwrap() - 150.0 * (1 << 24) as f64 / 1e9).abs() < 0.1);
        // One partition alone is not an aggregate.
        assert!(aggregate(&rows(0, 100.0, 10, 3), 200, 7).is_empty());
        // A throughput metric adds up; a latency is left out.
        let metric = |part: u64, name: &str, better: &str, v: f64| {
            let mut r = Row::blank();
            r.status = Status::Measured;
            r.params.bench = "exec".into();
            r.params.metric = Some(name.into());
            r.params.better = Some(better.into());
            r.params.axes = Some(format!(r#"{{"model":"7b","partition":{part},"partition_cpus":"{part}"}}"#));
            r.value = Some(v);
            r
        };
        let m = vec![
            metric(0, "tokens_per_s", "higher", 40.0),
            metric(1, "tokens_per_s", "higher", 60.0),
            metric(0, "ttft_ms", "lower", 5.0),
            metric(1, "ttft_ms", "lower", 7.0),
        ];
        let a = aggregate(&m, 200, 7);
        assert_eq!(a.len(), 1, "{a:?}");
        assert!(a[0].point.contains("tokens_per_s") && a[0].point.contains("7b"), "{}", a[0].point);
        assert_eq!((a[0].total, a[0].bytes_per_op), (100.0, None));
    }

    #[test]
    fn a_folded_run_reads_as_one_instance_doing_all_the_work() {
        let mut all = rows(0, 100.0, 5, 1);
        all.extend(rows(1, 50.0, 4, 2));
        for r in &mut all {
            r.params.threads = Some(1);
        }
        let f = fold(&all);
        // Samples 0-3 were measured by both partitions; sample 4 by one only.
        assert_eq!(f.len(), 4, "{f:?}");
        for r in &f {
            assert_eq!(r.params.axes, None);
            assert_eq!(r.params.variant, None);
            assert_eq!(r.params.threads, Some(2));
            let speed = r.iterations.unwrap() as f64 / r.seconds.unwrap();
            assert!((speed - 150.0).abs() < 5.0, "{speed}");
        }
        // Throughput adds up; a latency is averaged over partitions.
        let metric = |part: u64, name: &str, better: &str, v: f64| {
            let mut r = Row::blank();
            r.status = Status::Measured;
            r.params.bench = "exec".into();
            r.params.metric = Some(name.into());
            r.params.better = Some(better.into());
            r.params.axes = Some(format!(r#"{{"rate":8,"partition":{part},"partition_cpus":"{part}"}}"#));
            r.sample = Some(0);
            r.value = Some(v);
            r
        };
        let f = fold(&[
            metric(0, "req_per_s", "higher", 40.0),
            metric(1, "req_per_s", "higher", 60.0),
            metric(0, "ttfb_ms", "lower", 5.0),
            metric(1, "ttfb_ms", "lower", 7.0),
        ]);
        let get = |m: &str| f.iter().find(|r| r.params.metric.as_deref() == Some(m)).unwrap();
        assert_eq!(get("req_per_s").value, Some(100.0));
        assert_eq!(get("ttfb_ms").value, Some(6.0));
        assert_eq!(get("ttfb_ms").params.axes.as_deref(), Some(r#"{"rate":8}"#));
        // A run without partitions passes through.
        let plain = rows(0, 10.0, 3, 4).into_iter().map(|mut r| {
            r.params.axes = None;
            r
        });
        let plain: Vec<Row> = plain.collect();
        assert_eq!(fold(&plain), plain);
    }
}
