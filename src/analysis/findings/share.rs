//! What a headline figure is held against: a sweep's level against its
//! device's memory, its GPU link, its host link or the network port named;
//! a GEMM against its dtype's dense peak. The share, or why there is none,
//! and for a copy the same level counted once; a memcpy peak above memory
//! is explained by the cache that holds its working set.

use serde::Serialize;

use crate::analysis::specs::{LinkLine, Spec};
use crate::analysis::{PointStat, Series};
use crate::vocab::benches::Bench;
use crate::vocab::units::{format_bytes, format_sig3};

/// Where the figures a series is held against are looked up.
pub struct Figures<'a> {
    /// The published peaks of a device, by its name.
    pub spec_of: &'a dyn Fn(&PointStat) -> Option<&'a Spec>,
    /// The link named for a run (`--link ID`, or `--link RUN=ID`): what
    /// its transfers crossed.
    pub link: &'a dyn Fn(&str) -> Option<LinkLine>,
    /// Runs whose ranks all ran on one host (no network link crossed).
    pub one_host: &'a dyn Fn(&str) -> bool,
    /// The L2 cache of a point's GPU, as its run recorded it (bytes).
    pub l2_of: &'a dyn Fn(&PointStat) -> Option<u64>,
}

/// A headline number's share of a published figure.
#[derive(Debug, Clone, Serialize)]
pub struct Share {
    /// Whole percent.
    pub pct: String,
    /// The figure: `MI300X HBM3: 5300 GB/s`.
    pub of: String,
    pub below_half: bool,
    /// Above the figure itself, which no measurement of the same bytes or
    /// operations can pass: the report says so where it states it.
    pub above: bool,
}

/// Why a headline number has no share of a published figure.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum NoShare {
    /// A sweep counting bytes once, where rooflines count them twice.
    CountedOnce,
    /// No memory peak known for the device.
    NoPeak {
        device: String,
    },
    /// The device's spec names no link figure.
    NoLinkInSpec,
    NoLinkFigure {
        device: String,
    },
    /// Every rank on one host: no network link crossed.
    OneHost,
    /// No `--link` given.
    NoLinkNamed,
    /// A host↔GPU copy whose GPU's spec names no host link.
    NoHostLink {
        device: String,
    },
    /// A benchmark no one published figure bounds.
    NoSingleFigure,
    /// A collective's bus bandwidth: algbw times the tool's bus factor,
    /// which is no link's rate (see [`bus_factor`]); `link` is the GPU's
    /// link to one peer when the peak's busbw passes it.
    BusFactor {
        algbw: String,
        factor: String,
        ranks: u32,
        link: Option<String>,
    },
    /// No peak for this GEMM dtype.
    NoDtypePeak {
        dtype: String,
        device: String,
    },
}

pub fn share(value: f64, of: f64, label: String) -> Share {
    let f = value / of;
    // One decimal, as the tables that give the same share print it.
    Share { pct: format!("{:.1}", f * 100.0), of: label, below_half: f < 0.5, above: f > 1.0 }
}

/// The share of a curve's best rate, or why none is given.
pub fn curve_share(c: &Series, p: &PointStat, rate: f64, facts: &Figures) -> (Option<Share>, Option<NoShare>) {
    let bench = Bench::of(&c.bench);
    let gpu_buffers = c.buffers.on_gpu();
    let named = (facts.link)(&c.run_id);
    match bench {
        Some(Bench::Memcpy | Bench::Stream) => match (facts.spec_of)(p).and_then(|s| s.memory.as_ref()) {
            Some(m) if c.counts_moved() => {
                let name = (facts.spec_of)(p).map_or("", |s| s.name.as_str());
                let what = format!("{name} {} {} GB/s", m.kind.as_deref().unwrap_or("memory"), m.bandwidth_gbps);
                (Some(share(rate, m.bandwidth_gbps, what)), None)
            }
            Some(_) => (None, Some(NoShare::CountedOnce)),
            None => (None, Some(NoShare::NoPeak { device: p.device.clone() })),
        },
        // A link named for the run is what its transfers crossed: a log
        // names a link's type (or nothing), never its rate.
        Some(Bench::MemcpyPeer | Bench::P2p | Bench::Rdma) if named.is_some() => {
            let l = named.expect("matched as some");
            (Some(share(rate, l.gbps, l.label)), None)
        }
        // A copy between GPUs of one host crosses the GPU's link.
        Some(Bench::MemcpyPeer) => gpu_link(p, rate, facts),
        Some(Bench::P2p) if gpu_buffers && (facts.one_host)(&c.run_id) => gpu_link(p, rate, facts),
        Some(Bench::P2p | Bench::Rdma) if (facts.one_host)(&c.run_id) => (None, Some(NoShare::OneHost)),
        Some(Bench::P2p | Bench::Rdma) => (None, Some(NoShare::NoLinkNamed)),
        // A copy between host and GPU crosses the GPU's host link.
        Some(Bench::H2d | Bench::D2h) => match (facts.spec_of)(p).and_then(|s| s.host_line.as_ref()) {
            Some(l) => (Some(share(rate, l.gbps, l.label.clone())), None),
            None => (None, Some(NoShare::NoHostLink { device: p.device.clone() })),
        },
        // Every benchmark is listed: a new one is a compile error here
        // until someone decides what bounds it.
        Some(Bench::Collective) => (None, Some(bus_factor(p, facts).unwrap_or(NoShare::NoSingleFigure))),
        Some(Bench::Gemm | Bench::Links | Bench::Nvbandwidth | Bench::Megatron | Bench::Exec) | None => {
            (None, Some(NoShare::NoSingleFigure))
        }
    }
}

/// Why a collective's peak busbw is held against no link: nccl-tests'
/// busbw is algbw × a bus factor (2(n−1)/n for all-reduce, (n−1)/n for
/// all-gather, reduce-scatter and all-to-all), the bytes a ring moves per
/// rank. An algorithm that reduces inside the switch (NVLink SHARP) moves
/// fewer, so busbw can pass the link it crossed: the
/// sentence names that link when the GPU's spec gives one and busbw
/// passes it (an 8-GPU H100 all-reduce printing 483 GB/s over NVLink's
/// 450 GB/s one way).
pub fn bus_factor(p: &PointStat, facts: &Figures) -> Option<NoShare> {
    let (bus, alg) = (p.busbw_gbps?, p.gbps_copied?);
    if alg <= 0.0 || (bus / alg - 1.0).abs() < 0.01 {
        return None;
    }
    let line = (facts.spec_of)(p).and_then(|s| s.link.as_ref()).and_then(|l| l.pair_line());
    Some(NoShare::BusFactor {
        algbw: crate::vocab::units::format_sig3(alg),
        factor: format!("{:.2}", bus / alg),
        ranks: p.ranks.unwrap_or(0),
        link: line.filter(|l| bus > l.gbps).map(|l| l.label),
    })
}

/// A copy between GPUs against the GPU's link to one peer.
fn gpu_link(p: &PointStat, rate: f64, facts: &Figures) -> (Option<Share>, Option<NoShare>) {
    match (facts.spec_of)(p).and_then(|s| s.link.as_ref()) {
        Some(l) => match l.pair_line() {
            Some(line) => (Some(share(rate, line.gbps, line.label.clone())), None),
            None => (None, Some(NoShare::NoLinkInSpec)),
        },
        None => (None, Some(NoShare::NoLinkFigure { device: p.device.clone() })),
    }
}

/// Why a memcpy peak above its device's memory roofline is possible: its
/// working set (the bytes one copy reads and writes) fits a cache.
#[derive(Debug, Clone, Serialize)]
pub struct FromCache {
    /// The memory roofline it exceeds, GB/s.
    pub roofline: String,
    pub working_set: String,
    /// The GPU's L2, where its run recorded it.
    pub l2: Option<String>,
    /// Above the roofline by less than the point resolves (its interval
    /// reaches below the roofline, or one printed number within 2 % of
    /// it): at the roofline, not shown to be above it.
    pub marginal: bool,
}

pub fn from_cache(c: &Series, p: &PointStat, rate: f64, facts: &Figures) -> Option<FromCache> {
    if Bench::of(&c.bench) != Some(Bench::Memcpy) || !c.counts_moved() {
        return None;
    }
    let roof = (facts.spec_of)(p)?.memory.as_ref()?.bandwidth_gbps;
    // What the point resolves: its interval's low end, or for one number
    // (an import) 2 %, the last digit such tools print at this scale.
    let low = match p.rate_interval(rate).bounded() {
        Some((lo, _)) => lo,
        None => rate / 1.02,
    };
    (rate > roof).then(|| FromCache {
        marginal: low <= roof,
        roofline: format_sig3(roof),
        working_set: p
            .gbps_moved
            .map(|g| format_bytes((g * 1e9 * p.median_seconds).round() as u64))
            .unwrap_or_else(|| "?".into()),
        l2: (facts.l2_of)(p).map(format_bytes),
    })
}

/// A device memcpy level counting bytes read + written, counted once (as
/// GPU copy tools and the seed 001 scripts print it): half of it, and half
/// its share of the same figure (`figure`, GB/s).
pub fn counted_once(c: &Series, level: f64, figure: Option<f64>) -> Option<(String, Option<String>)> {
    if Bench::of(&c.bench) != Some(Bench::Memcpy) || !c.buffers.on_gpu() || !c.counts_moved() {
        return None;
    }
    let once = level / 2.0;
    Some((format_sig3(once), figure.map(|f| format!("{:.1}", once / f * 100.0))))
}
