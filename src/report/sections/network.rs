//! The network write-up (seed 003): transfers in Gb/s against the ports
//! they cross, one-sided RDMA (write, read) beside two-sided send/receive
//! (perftest `send`, MPI and OSU point-to-point), collectives over rank
//! counts, and latency. Rows come from native MPI runs and from imported
//! perftest, OSU and nccl-tests logs alike. Template: `sections/network.md`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::{saturation, Curve, PointStat};
use crate::vocab::stats::sustained_crossing;
use crate::vocab::units::{format_bytes, format_seconds, format_sig3};

/// One transfer curve: its semantics, peak and plateau in Gb/s.
#[derive(Debug, Clone, Serialize)]
pub struct TransferRow {
    pub curve: String,
    pub semantics: String,
    pub peak_gbits: String,
    pub peak_size: String,
    pub plateau_gbits: String,
    /// The size from which the curve stays above 90 % of its plateau.
    pub p90: String,
    pub source: String,
}

/// A collective at its largest message size, for one rank count.
#[derive(Debug, Clone, Serialize)]
pub struct CollectiveRow {
    pub op: String,
    pub ranks: String,
    pub size: String,
    pub busbw_gbps: String,
    pub algbw_gbps: String,
    pub source: String,
}

/// A one-way latency at one size.
#[derive(Debug, Clone, Serialize)]
pub struct NetLatencyRow {
    pub curve: String,
    pub size: String,
    pub median: String,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct NetworkSection {
    /// The chart's file, when there are bandwidth curves.
    pub chart: Option<String>,
    pub observations: Vec<String>,
    pub transfers: Vec<TransferRow>,
    pub collectives: Vec<CollectiveRow>,
    pub latency: Vec<NetLatencyRow>,
}

/// Whether a point is a network transfer or latency this section shows.
pub fn is_network(p: &PointStat) -> bool {
    matches!(p.bench.as_str(), "rdma" | "p2p" | "collective")
}

fn is_latency(c: &Curve) -> bool {
    c.op == "latency" || c.op == "lat" || c.points.iter().any(|p| p.variant.as_deref() == Some("latency"))
}

/// What a transfer curve's operation means on the wire.
pub fn semantics(c: &Curve) -> &'static str {
    // perftest ops are named after the binary: `write_bw`, `read_lat`.
    let op = c.op.as_str();
    match c.bench.as_str() {
        "rdma" if op.starts_with("write") => "one-sided (RDMA write)",
        "rdma" if op.starts_with("read") => "one-sided (RDMA read)",
        "rdma" if op.starts_with("send") => "two-sided (verbs send/recv)",
        "rdma" if op.starts_with("atomic") => "one-sided (RDMA atomic)",
        "p2p" => "two-sided (MPI send/recv)",
        _ => "other",
    }
}

/// The file (or run) a curve's points were read from.
fn source(c: &Curve) -> String {
    c.points.iter().find_map(|p| p.source.clone()).unwrap_or_else(|| "measured by benchbook".into())
}

/// The transfer curves of `stats` (bandwidth, not latency, not
/// collectives), for the chart.
pub fn transfer_curves(curves: &[Curve]) -> Vec<&Curve> {
    curves.iter().filter(|c| matches!(c.bench.as_str(), "rdma" | "p2p") && !is_latency(c)).collect()
}

pub fn network_section(curves: &[Curve], stats: &[PointStat], chart: &str) -> Option<NetworkSection> {
    let transfers_c = transfer_curves(curves);
    let transfers: Vec<TransferRow> = transfers_c
        .iter()
        .filter_map(|c| {
            let s = saturation(c, None)?;
            let rate = c.rate();
            Some(TransferRow {
                curve: c.label.clone(),
                semantics: semantics(c).into(),
                peak_gbits: format_sig3(s.peak_gbps * 8.0),
                peak_size: format_bytes(s.peak_size_bytes),
                plateau_gbits: if s.settled() { format_sig3(s.plateau_gbps * 8.0) } else { "not settled".into() },
                p90: if s.sizes < 2 {
                    "one size".into()
                } else {
                    sustained_crossing(&rate, s.plateau_gbps, 0.9).to_string()
                },
                source: source(c),
            })
        })
        .collect();
    // Collectives: at each (op, ranks), the largest message size measured.
    let mut by: BTreeMap<(String, u32, String), &PointStat> = BTreeMap::new();
    for p in stats.iter().filter(|p| p.bench == "collective" && p.busbw_gbps.is_some()) {
        let key = (p.op.clone(), p.ranks.unwrap_or(0), p.source.clone().unwrap_or_default());
        let e = by.entry(key).or_insert(p);
        if p.size_bytes > e.size_bytes {
            *e = p;
        }
    }
    let collectives: Vec<CollectiveRow> = by
        .into_iter()
        .map(|((op, ranks, src), p)| CollectiveRow {
            op,
            ranks: if ranks == 0 { "not stated".into() } else { ranks.to_string() },
            size: p.size_bytes.map(format_bytes).unwrap_or_default(),
            busbw_gbps: p.busbw_gbps.map(format_sig3).unwrap_or_default(),
            algbw_gbps: p.gbps_copied.map(format_sig3).unwrap_or_default(),
            source: if src.is_empty() { "measured by benchbook".into() } else { src },
        })
        .collect();
    let latency: Vec<NetLatencyRow> = curves
        .iter()
        .filter(|c| matches!(c.bench.as_str(), "rdma" | "p2p") && is_latency(c))
        .flat_map(|c| {
            // The small messages latency is about: up to 4 KiB.
            c.points.iter().filter(|p| p.size_bytes.is_some_and(|s| s <= 4096)).map(move |p| NetLatencyRow {
                curve: c.label.clone(),
                size: p.size_bytes.map(format_bytes).unwrap_or_default(),
                median: format_seconds(p.summary.median),
                source: source(c),
            })
        })
        .collect();
    if transfers.is_empty() && collectives.is_empty() && latency.is_empty() {
        return None;
    }
    Some(NetworkSection {
        chart: (!transfers_c.is_empty()).then(|| chart.to_string()),
        observations: observations(&transfers_c, &transfers),
        transfers,
        collectives,
        latency,
    })
}

/// One-sided against two-sided: the best settled plateau of each, and
/// whether they come from one file (a fair comparison) or several.
fn observations(curves: &[&Curve], rows: &[TransferRow]) -> Vec<String> {
    let best = |one: bool| -> Option<(f64, String, String)> {
        curves
            .iter()
            .filter(|c| semantics(c).starts_with("one-sided") == one && semantics(c) != "other")
            .filter_map(|c| {
                let s = saturation(c, None)?;
                s.settled().then(|| (s.plateau_gbps * 8.0, c.label.clone(), source(c)))
            })
            .max_by(|a, b| a.0.total_cmp(&b.0))
    };
    let mut v = Vec::new();
    match (best(true), best(false)) {
        (Some(o), Some(t)) => {
            let same = if o.2 == t.2 {
                "both from one file".to_string()
            } else {
                format!(
                    "from different files ({} and {}), so the gap may be the systems', not the semantics'",
                    o.2, t.2
                )
            };
            v.push(format!(
                "The best one-sided plateau is {} Gb/s ({}), the best two-sided {} Gb/s ({}): one-sided reaches {:.2}× two-sided, {same}.",
                format_sig3(o.0),
                o.1,
                format_sig3(t.0),
                t.1,
                o.0 / t.0
            ));
        }
        (Some(x), None) | (None, Some(x)) => {
            v.push(format!("The best settled plateau is {} Gb/s ({}).", format_sig3(x.0), x.1));
        }
        (None, None) if !rows.is_empty() => {
            v.push("No transfer curve settles on a plateau (two sizes within their noise), so none is stated.".into());
        }
        (None, None) => {}
    }
    v
}
