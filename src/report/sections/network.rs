//! The network write-up (seed 003): transfers in Gb/s against the ports
//! they cross, one-sided RDMA (write, read) beside two-sided send/receive
//! (perftest `send`, MPI and OSU point-to-point), collectives over rank
//! counts, and latency. Rows come from native MPI runs and from imported
//! perftest, OSU and nccl-tests logs alike. Template: `sections/network.md`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::{saturation, Curve, PointStat};
use crate::vocab::benches::{Bench, Family};
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

/// A one-sided curve with its channels, strategy and flush rhythm: the
/// aggregate and per-channel peak.
#[derive(Debug, Clone, Serialize)]
pub struct ChannelRow {
    pub curve: String,
    pub channels: u32,
    pub strategy: String,
    pub sync_every: u32,
    pub peak_gbits: String,
    pub per_channel_gbits: String,
    pub at: String,
    /// The peak against the link that bounds it (`44 % of EFA, one
    /// device: 100 Gb/s`); empty when no link applies (one host).
    pub of_link: String,
    /// The peak in GB/s, for [`ChannelRow::against`].
    #[serde(skip)]
    pub peak_gbps: f64,
}

impl ChannelRow {
    /// State the row's peak against the link named for the report (the
    /// same line the links table holds a curve against).
    pub fn against(&mut self, link: Option<&crate::analysis::specs::LinkLine>) {
        if let Some(l) = link {
            self.of_link = format!("{:.0} % of {}", self.peak_gbps / l.gbps * 100.0, l.label);
        }
    }
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
    /// The bandwidth chart, when there are bandwidth curves.
    pub chart: Option<String>,
    pub observations: Vec<String>,
    pub transfers: Vec<TransferRow>,
    pub collectives: Vec<CollectiveRow>,
    pub latency: Vec<NetLatencyRow>,
    /// One-sided curves by channels, strategy and flush rhythm.
    pub channels: Vec<ChannelRow>,
    /// Whether any channel row is stated against a link.
    pub channels_linked: bool,
}

/// Whether a point is a network transfer or latency this section shows.
pub fn is_network(p: &PointStat) -> bool {
    Bench::family_of(&p.bench) == Some(Family::Network)
}

/// Whether a curve is a point-to-point transfer over the network (verbs or
/// MPI), not a collective.
pub(crate) fn is_transfer(c: &Curve) -> bool {
    matches!(Bench::of(&c.bench), Some(Bench::Rdma | Bench::P2p))
}

pub(crate) fn is_latency(c: &Curve) -> bool {
    c.op == "latency" || c.op == "lat" || c.points.iter().any(|p| p.variant.as_deref() == Some("latency"))
}

/// What a transfer curve's operation means on the wire.
pub fn semantics(c: &Curve) -> &'static str {
    // perftest ops are named after the binary: `write_bw`, `read_lat`.
    let op = c.op.as_str();
    match Bench::of(&c.bench) {
        Some(Bench::Rdma) if op.starts_with("write") => "one-sided (RDMA write)",
        Some(Bench::Rdma) if op.starts_with("read") => "one-sided (RDMA read)",
        Some(Bench::Rdma) if op.starts_with("send") => "two-sided (verbs send/recv)",
        Some(Bench::Rdma) if op.starts_with("atomic") => "one-sided (RDMA atomic)",
        Some(Bench::P2p) if op == "put" => "one-sided (MPI put)",
        Some(Bench::P2p) if op == "get" => "one-sided (MPI get)",
        Some(Bench::P2p) if op == "put_round_trip" => "one-sided round trip (MPI put + fence)",
        Some(Bench::P2p) => "two-sided (MPI send/recv)",
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
    curves.iter().filter(|c| is_transfer(c) && !is_latency(c)).collect()
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
    for p in stats.iter().filter(|p| p.bench == Bench::Collective && p.busbw_gbps.is_some()) {
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
        .filter(|c| is_transfer(c) && is_latency(c))
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
    let (channels, mut sync_notes) = one_sided(&transfers_c);
    let mut observations = observations(&transfers_c, &transfers);
    observations.append(&mut sync_notes);
    Some(NetworkSection {
        chart: (!transfers_c.is_empty()).then(|| chart.to_string()),
        observations,
        transfers,
        collectives,
        latency,
        channels,
        channels_linked: false,
    })
}

/// The one-sided parameters of a curve, when its points carry them.
fn one_sided_params(c: &Curve) -> Option<crate::vocab::one_sided::OneSided> {
    let p = c.points.first()?;
    p.axes.as_ref()?;
    Some(crate::vocab::one_sided::OneSided::of(&p.params()))
}

/// The channel table, and what flushing after every operation costs: for
/// each one-channel put or get measured at several rhythms, the bandwidth
/// at its largest common size with a flush after every operation against
/// the least frequent flush.
fn one_sided(curves: &[&Curve]) -> (Vec<ChannelRow>, Vec<String>) {
    let mut rows = Vec::new();
    let mut by_op: BTreeMap<(String, String), Vec<(u32, &Curve)>> = BTreeMap::new();
    for c in curves {
        let Some(os) = one_sided_params(c) else { continue };
        let best =
            c.points.iter().filter_map(|p| Some((p.gbps_copied?, p.size_bytes?))).max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some((gbps, size)) = best {
            rows.push(ChannelRow {
                curve: c.label.clone(),
                channels: os.channels,
                strategy: os.strategy().replace('_', " "),
                sync_every: os.sync_every,
                peak_gbits: format_sig3(gbps * 8.0),
                per_channel_gbits: format_sig3(gbps * 8.0 / os.channels as f64),
                at: format_bytes(size),
                of_link: String::new(),
                peak_gbps: gbps,
            });
        }
        if os.channels == 1 {
            by_op.entry((c.run_id.clone(), c.op.clone())).or_default().push((os.sync_every, c));
        }
    }
    let mut notes = Vec::new();
    for ((_, op), mut v) in by_op.into_iter().filter(|(_, v)| v.len() > 1) {
        v.sort_by_key(|(k, _)| *k);
        let ((k0, every), (k1, batched)) = (v[0], v[v.len() - 1]);
        let at =
            |c: &Curve, size: u64| c.points.iter().find(|p| p.size_bytes == Some(size)).and_then(|p| p.gbps_copied);
        let common = every.points.iter().filter_map(|p| p.size_bytes).filter(|&s| at(batched, s).is_some()).max();
        let Some(size) = common else { continue };
        let (Some(a), Some(b)) = (at(every, size), at(batched, size)) else { continue };
        if b > 0.0 {
            notes.push(format!(
                "MPI {op} at {}: a flush every {k0} operation{} reaches {} Gb/s, one flush per {k1} {} Gb/s ({:+.0} %).",
                format_bytes(size),
                if k0 == 1 { "" } else { "s" },
                format_sig3(a * 8.0),
                format_sig3(b * 8.0),
                (a / b - 1.0) * 100.0
            ));
        }
    }
    (rows, notes)
}

/// Whether a curve moves data one way (like for like with another one-way
/// curve): not a bidirectional test, not a round trip.
fn one_way(c: &Curve) -> bool {
    let bidir = c.op.contains("bidir") || c.op.contains("bibw") || c.label.contains("bidirectional");
    !bidir && !semantics(c).contains("round trip")
}

/// One-sided against two-sided, like for like: the best settled plateau of
/// each among one-way curves, a ratio stated only when it is outside the
/// plateaus' own noise, and whether they come from one file (a fair
/// comparison) or several.
fn observations(curves: &[&Curve], rows: &[TransferRow]) -> Vec<String> {
    let best = |one: bool| -> Option<(f64, String, String, f64)> {
        curves
            .iter()
            .filter(|c| semantics(c).starts_with("one-sided") == one && semantics(c) != "other" && one_way(c))
            .filter_map(|c| {
                let s = saturation(c, None)?;
                s.settled().then(|| (s.plateau_gbps * 8.0, c.label.clone(), source(c), s.plateau_tolerance))
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
            // Each plateau is flat within its tolerance; a ratio inside the
            // wider of the two is no difference this run can resolve.
            let noise = o.3.max(t.3);
            let ratio = o.0 / t.0;
            let verdict = if (ratio - 1.0).abs() <= noise {
                format!(
                    "their ratio, {ratio:.2}×, is within the ±{} % the plateaus are flat to: no difference this run can resolve",
                    format_sig3(noise * 100.0)
                )
            } else {
                format!("one-sided reaches {ratio:.2}× two-sided")
            };
            v.push(format!(
                "Moving data one way, the best one-sided plateau is {} Gb/s ({}) and the best two-sided {} Gb/s ({}): {verdict}, {same}.",
                format_sig3(o.0),
                o.1,
                format_sig3(t.0),
                t.1,
            ));
        }
        (Some(x), None) | (None, Some(x)) => {
            v.push(format!("The best settled one-way plateau is {} Gb/s ({}).", format_sig3(x.0), x.1));
        }
        (None, None) if !rows.is_empty() => {
            v.push(
                "No one-way transfer curve settles on a plateau (two sizes within their noise), so none is stated."
                    .into(),
            );
        }
        (None, None) => {}
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::specs::LinkLine;

    #[test]
    fn channel_peaks_are_stated_against_the_named_link_whatever_their_rate() {
        let line = |label: &str, gbits: f64| LinkLine { label: label.into(), gbps: gbits / 8.0, source: "spec".into() };
        let (one_dev, four_dev) =
            (line("EFA, one device: 100 Gb/s", 100.0), line("EFA, four devices: 400 Gb/s", 400.0));
        let row = |gbps: f64| ChannelRow {
            curve: "p2p put".into(),
            channels: 4,
            strategy: "split".into(),
            sync_every: 64,
            peak_gbits: format_sig3(gbps * 8.0),
            per_channel_gbits: format_sig3(gbps * 2.0),
            at: "16 MiB".into(),
            of_link: String::new(),
            peak_gbps: gbps,
        };
        let mut one = row(11.0); // 88 Gb/s
        one.against(Some(&one_dev));
        assert_eq!(one.of_link, "88 % of EFA, one device: 100 Gb/s");
        let mut four = row(11.0); // the same rate, held against the link named
        four.against(Some(&four_dev));
        assert_eq!(four.of_link, "22 % of EFA, four devices: 400 Gb/s");
        let mut none = row(40.0);
        none.against(None);
        assert!(none.of_link.is_empty());
    }

    /// A p2p curve of `op` at `gbps` (bytes copied) over three sizes.
    fn flat(op: &str, gbps: f64) -> Curve {
        let pts: Vec<PointStat> = [1u64 << 20, 2 << 20, 4 << 20]
            .iter()
            .map(|&size| PointStat {
                bench: Bench::P2p.name().into(),
                op: op.into(),
                variant: Some("host buffers".into()),
                size_bytes: Some(size),
                samples: 10,
                gbps_copied: Some(gbps),
                summary: crate::vocab::stats::Summary { median: size as f64 / (gbps * 1e9), ..Default::default() },
                ..Default::default()
            })
            .collect();
        crate::analysis::curves(&pts).remove(0)
    }

    #[test]
    fn one_sided_meets_two_sided_like_for_like_and_only_beyond_the_noise() {
        let (put, bidir) = (flat("put", 10.0), flat("bidirectional", 20.0));
        // Within the plateaus' 10 %: no difference claimed, and the
        // bidirectional curve (both ways counted) is never the comparator.
        let close = flat("send_recv", 10.5);
        let text = observations(&[&put, &close, &bidir], &[]).join(" ");
        assert!(text.contains("no difference this run can resolve") && text.contains("0.95×"), "{text}");
        assert!(!text.contains("bidirectional"), "{text}");
        let slow = flat("send_recv", 5.0);
        let text = observations(&[&put, &slow, &bidir], &[]).join(" ");
        assert!(text.contains("one-sided reaches 2.00× two-sided"), "{text}");
    }
}
