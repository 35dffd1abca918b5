//! Series: what a report, a comparison and a notebook say about a curve,
//! computed once. A [`Series`] is one curve (points that differ only by
//! size) with its typed identity ([`SeriesKey`]), what it measures
//! ([`Meaning`], from the op table `vocab::ops`), where its buffers live
//! ([`Buffers`]), its name (the catalog's, unique across the report) and
//! its summary (peak, [`crate::analysis::Level`], roofline share against
//! its own system's memory: [`Saturation`]).
//!
//! [`crate::analysis::Catalog::series`] builds every series of a report
//! once. Report sections filter them; they never group points into curves,
//! compute a saturation, or read a label.

use serde::Serialize;

use super::curves::{Curve, Saturation};
use super::summary::PointStat;
use crate::vocab::benches::Bench;
use crate::vocab::ops::{Buffers, Meaning};

/// A series' identity: its system (run and device) and every field that
/// sets one curve apart from another there. Compare joins on
/// [`SeriesKey::measurement`], so pinned and pageable copies, or warm and
/// cold ones, never merge.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct SeriesKey {
    // Field order is the series order of every report (derived `Ord`).
    pub run_id: String,
    pub bench: String,
    pub op: String,
    pub device: String,
    pub threads: Option<u32>,
    /// The ranks of a collective (its bus bandwidth depends on them: the
    /// same collective over 8 and 16 ranks is two curves).
    pub ranks: Option<u32>,
    pub dtype: Option<String>,
    pub variant: Option<String>,
    /// The copy method (`copy_engine`, `sm_kernel`) on a GPU.
    pub method: Option<String>,
    /// The GPU pair (`0->1`) on a GPU.
    pub peer: Option<String>,
    /// Whether a GPU backend measured it (GPU curves also split by method
    /// and pair, and name their device).
    pub gpu: bool,
}

impl SeriesKey {
    /// The key of a point's series.
    pub fn of(p: &PointStat) -> SeriesKey {
        Self::of_params(&p.params(), &p.backend, &p.run_id, &p.device)
    }

    /// The key of the series a point's parameters belong to.
    pub fn of_params(p: &crate::vocab::rows::Point, backend: &str, run_id: &str, device: &str) -> SeriesKey {
        let gpu = crate::vocab::kinds::backend_is_gpu(backend);
        SeriesKey {
            run_id: run_id.into(),
            device: device.into(),
            bench: p.bench.clone(),
            op: p.op.clone(),
            variant: p.variant.clone(),
            threads: p.threads,
            ranks: if Bench::of(&p.bench) == Some(Bench::Collective) { p.ranks } else { None },
            dtype: p.dtype.clone(),
            method: if gpu { p.method.clone() } else { None },
            peer: if gpu { p.peer.clone() } else { None },
            gpu,
        }
    }

    /// The key without its system: what one series of two runs shares.
    pub fn measurement(&self) -> SeriesKey {
        SeriesKey {
            run_id: String::new(),
            device: if self.gpu { String::new() } else { self.device.clone() },
            ..self.clone()
        }
    }

    /// The base name: what sets it apart within one system (benchmark, op,
    /// variant, threads, GPU copy method and pair). The one place a
    /// curve's name is spelled; the catalog adds its system where a report
    /// holds several ([`crate::analysis::Catalog::name_of`]).
    pub fn base_name(&self) -> String {
        let mut label = format!("{} {}", self.bench, self.op);
        if let Some(v) = self.variant.as_deref().filter(|v| *v != "warm") {
            label += &format!(" {v}");
        }
        if let Some(t) = self.threads {
            label += &format!(", {t} thread{}", if t == 1 { "" } else { "s" });
        }
        if let Some(r) = self.ranks {
            label += &format!(", {r} ranks");
        }
        if let Some(m) = &self.method {
            label += &format!(", {m}");
        }
        match (&self.peer, &self.method) {
            (Some(pair), _) => label += &format!(", GPU {}", pair.replace("->", "→")),
            // A GPU curve without a pair runs on one device: "GPU 0".
            (None, Some(_)) => label += &format!(", {}", crate::vocab::rows::short_device(&self.device)),
            (None, None) => {}
        }
        label
    }

    /// What it measures ([`crate::vocab::ops::meaning`]); an op the table
    /// has no row for reads as a one-way bandwidth (the test over every
    /// archive and importer keeps that from happening).
    pub fn meaning(&self) -> Meaning {
        crate::vocab::ops::meaning(&self.bench, &self.op, self.variant.as_deref(), false).unwrap_or(Meaning {
            quantity: crate::vocab::ops::Quantity::Bandwidth,
            direction: crate::vocab::ops::Direction::OneWay,
            sides: crate::vocab::ops::Sides::NotATransfer,
            call: "",
        })
    }
}

/// One series of a report ([`crate::analysis::Catalog::series`]): its curve
/// (read through `Deref`: `s.points`, `s.rate()`), its identity, meaning,
/// buffers, name and summary.
#[derive(Debug, Clone, Serialize)]
pub struct Series {
    /// Its name, as every chart, table and sentence gives it ([`Series::name`]).
    name: String,
    pub key: SeriesKey,
    pub meaning: Meaning,
    pub buffers: Buffers,
    pub curve: Curve,
    /// The curve's summary against its own system's memory roofline
    /// (memcpy and STREAM curves, whose rates count bytes read + written,
    /// where the system's spec gives one); `None` without a rate.
    pub summary: Option<Saturation>,
    /// The memory roofline it is held against (GB/s), when it is.
    pub roofline_gbps: Option<f64>,
}

impl std::ops::Deref for Series {
    type Target = Curve;
    fn deref(&self) -> &Curve {
        &self.curve
    }
}

impl Series {
    /// A series of `curve`, named `name`, held against `memory_gbps` where
    /// its rates count bytes read + written.
    pub fn new(curve: Curve, name: String, memory_gbps: Option<f64>) -> Series {
        let key = SeriesKey::of(&curve.points[0]);
        let meaning = key.meaning();
        let p = &curve.points[0];
        let buffers = Buffers::of(&p.backend, &p.bench, p.variant.as_deref());
        let roofline_gbps =
            memory_gbps.filter(|_| matches!(Bench::of(&key.bench), Some(Bench::Memcpy | Bench::Stream)));
        let summary = super::curves::saturation(&curve, roofline_gbps);
        Series { name, key, meaning, buffers, curve, summary, roofline_gbps }
    }

    /// Its name, as every chart, table and sentence of the report gives it.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Its summary held against a link's rate instead of memory (a copy
    /// against the link it crosses): the same plateau and peak, with the
    /// shares and crossings of `gbps`.
    pub fn against(&self, gbps: f64) -> Option<Saturation> {
        super::curves::saturation(&self.curve, Some(gbps))
    }

    /// The summary, where the curve settled on a plateau.
    pub fn settled(&self) -> Option<&Saturation> {
        self.summary.as_ref().filter(|s| s.settled())
    }

    /// How flat its settled plateau measured: the largest relative
    /// deviation of a plateau size's rate from the plateau level (0.002:
    /// every size within ±0.2 %). The plateau rule's tolerance bounds it;
    /// this is what the sizes did.
    pub fn plateau_spread(&self) -> Option<f64> {
        let level = self.settled()?.plateau_gbps;
        self.plateau_rates()
            .into_iter()
            .map(|r| (r / level - 1.0).abs())
            .fold(None, |m: Option<f64>, d| Some(m.map_or(d, |m| m.max(d))))
    }

    /// Whether its plateau's sizes still rise: each at or above the one
    /// before, the last over 2 % above the first (the level is then a
    /// lower bound, a curve the plateau rule's tolerance let settle).
    pub fn plateau_rising(&self) -> bool {
        let r = self.plateau_rates();
        r.len() >= 2 && r.windows(2).all(|w| w[1] >= w[0]) && r[r.len() - 1] > 1.02 * r[0]
    }

    /// The rates of its plateau's sizes, smallest size first (none without
    /// a summary).
    fn plateau_rates(&self) -> Vec<f64> {
        let Some(s) = self.summary.as_ref() else { return Vec::new() };
        let rates = self.curve.rate_with_ci();
        s.plateau_sizes.iter().filter_map(|z| rates.iter().find(|(y, ..)| y == z).map(|(_, r, _)| *r)).collect()
    }

    /// A bandwidth series (not a latency, a compute rate or a metric).
    pub fn is_bandwidth(&self) -> bool {
        self.meaning.is_bandwidth()
    }

    /// A point-to-point transfer over the network (verbs or MPI), not a
    /// collective.
    pub fn is_transfer(&self) -> bool {
        matches!(Bench::of(&self.bench), Some(Bench::Rdma | Bench::P2p))
    }

    /// What its operation means on the wire (the op table's call), or
    /// `other`.
    pub fn semantics(&self) -> &'static str {
        match self.meaning.call {
            "" => "other",
            call => call,
        }
    }

    /// The file (or run) its points were read from.
    pub fn source(&self) -> String {
        self.points.iter().find_map(|p| p.source.clone()).unwrap_or_else(|| "measured by benchbook".into())
    }

    /// Its one-sided parameters (channels, flush rhythm), when its points
    /// carry them.
    pub fn one_sided(&self) -> Option<crate::vocab::one_sided::OneSided> {
        let p = self.points.first()?;
        p.axes.as_ref()?;
        Some(crate::vocab::one_sided::OneSided::of(&p.params()))
    }

    /// Whether it is one of `benches`.
    pub fn of_bench(&self, benches: &[Bench]) -> bool {
        benches.iter().any(|b| self.curve.bench == *b)
    }
}

/// Every series of `stats`, each named by its key's base name
/// ([`SeriesKey::base_name`]; a report's catalog names them in full,
/// [`crate::analysis::Catalog::series`]) and held against the memory
/// roofline `memory(point)` gives its system. What notebooks and tools
/// outside a report read.
pub fn series_of(stats: &[PointStat], memory: impl Fn(&PointStat) -> Option<f64>) -> Vec<Series> {
    named(stats, |p| SeriesKey::of(p).base_name(), memory)
}

/// Every series of `stats`, named by `name(first point)` and told apart
/// where two names are the same, each held against `memory(point)`.
pub(crate) fn named(
    stats: &[PointStat],
    name: impl Fn(&PointStat) -> String,
    memory: impl Fn(&PointStat) -> Option<f64>,
) -> Vec<Series> {
    let curves = super::curves::curves(stats);
    let mut names: Vec<String> = curves.iter().map(|c| name(&c.points[0])).collect();
    distinct(&curves, &mut names);
    curves
        .into_iter()
        .zip(names)
        .map(|(c, n)| {
            let roof = memory(&c.points[0]);
            Series::new(c, n, roof)
        })
        .collect()
}

/// Series of several files or devices can share a name (`rdma write_bw
/// unidirectional` from two perftest logs): those get their device, then
/// their run, appended, so that no two legend entries read the same.
fn distinct(curves: &[Curve], names: &mut [String]) {
    for pass in 0..2 {
        let before: Vec<String> = names.to_vec();
        for (i, c) in curves.iter().enumerate() {
            if before.iter().filter(|l| **l == before[i]).count() > 1 {
                let extra =
                    if pass == 0 { crate::vocab::rows::short_device(&c.device).to_string() } else { c.run_id.clone() };
                names[i] = format!("{} ({extra})", names[i]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn copy(variant: &str) -> PointStat {
        PointStat {
            run_id: "r".into(),
            bench: "d2h".into(),
            backend: "cuda".into(),
            device: "GPU 0: NVIDIA H200".into(),
            op: "copy".into(),
            variant: Some(variant.into()),
            method: Some("copy_engine".into()),
            size_bytes: Some(1 << 20),
            ..PointStat::default()
        }
    }

    #[test]
    fn pinned_and_pageable_are_two_series_with_two_names() {
        let (a, b) = (SeriesKey::of(&copy("pinned")), SeriesKey::of(&copy("pageable")));
        assert_ne!(a.measurement(), b.measurement());
        assert_eq!(a.base_name(), "d2h copy pinned, copy_engine, GPU 0");
        assert_ne!(a.base_name(), b.base_name());
        // Two runs of one series share their measurement key.
        let mut other = copy("pinned");
        other.run_id = "s".into();
        other.device = "GPU 1: NVIDIA H200".into();
        assert_eq!(SeriesKey::of(&other).measurement(), a.measurement());
    }

    /// A p2p curve at `rates` GB/s over 1 MiB, 2 MiB, …, one printed number each.
    fn curve(rates: &[f64]) -> Series {
        let pts: Vec<PointStat> = rates
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let size = (1u64 << 20) << i;
                PointStat {
                    run_id: "r".into(),
                    bench: "p2p".into(),
                    op: "bw".into(),
                    size_bytes: Some(size),
                    samples: 1,
                    gbps_copied: Some(*g),
                    median_seconds: size as f64 / (g * 1e9),
                    ..PointStat::default()
                }
            })
            .collect();
        series_of(&pts, |_| None).remove(0)
    }

    #[test]
    fn a_plateau_still_rising_across_its_sizes_is_told_from_a_flat_one() {
        // osu_bw on 2 × A100 over NV4: 82.9 → 93.1 GB/s across 2-32 MiB, a
        // plateau only within the rule's ±10 %.
        let rising = curve(&[61.1, 73.7, 82.9, 87.5, 91.0, 92.2, 93.1]);
        assert!(rising.settled().is_some(), "{:?}", rising.summary);
        assert!(rising.plateau_rising());
        assert!(rising.plateau_spread().unwrap() > 0.05);
        let flat = curve(&[40.0, 80.0, 91.0, 90.5, 91.2, 90.8, 91.0]);
        assert!(flat.settled().is_some());
        assert!(!flat.plateau_rising());
        assert!(flat.plateau_spread().unwrap() < 0.01);
    }
}
