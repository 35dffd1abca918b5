//! The network write-up (seed 003): transfers in Gb/s against the ports
//! they cross, one-sided RDMA (write, read) beside two-sided send/receive
//! (perftest `send`, MPI and OSU point-to-point), collectives over rank
//! counts, and latency. Rows come from native MPI runs and from imported
//! perftest, OSU and nccl-tests logs alike. Template: `sections/network.md`.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::analysis::findings::latency::{small_message_notes, small_messages};
use crate::analysis::{PointStat, Series, SeriesKey};
use crate::vocab::benches::Bench;
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
    /// The size every one-sided curve of the run measured with a point the
    /// report trusts (the largest such), where the rows compare like for
    /// like; `-` when there is none.
    pub matched_size: String,
    /// The curve's rate at the matched size, Gb/s with its interval.
    pub matched_gbits: String,
    /// The peak against the link that bounds it (`44 % of EFA, one
    /// device: 100 Gb/s`); empty when no link applies (one host).
    pub of_link: String,
    /// The peak in GB/s, for [`ChannelRow::against`].
    #[serde(skip)]
    pub peak_gbps: f64,
    /// The series it is (rows join on it, never on the name).
    #[serde(skip)]
    pub key: SeriesKey,
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
    /// `one way` or `round trip`: what the figure counts (the op table's).
    pub counts: &'static str,
    pub source: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct NetworkSection {
    /// The bandwidth chart, when there are bandwidth curves.
    pub chart: Option<String>,
    pub observations: Vec<crate::analysis::findings::Said>,
    pub transfers: Vec<TransferRow>,
    pub collectives: Vec<CollectiveRow>,
    /// How many rank counts the collectives ran at (one: no scaling shown).
    pub rank_counts: usize,
    pub latency: Vec<NetLatencyRow>,
    /// Latency curves whose smaller message takes longer (`Said::LatencyInversion`).
    pub latency_notes: Vec<crate::analysis::findings::Said>,
    /// One-sided curves by channels, strategy and flush rhythm.
    pub channels: Vec<ChannelRow>,
    /// Whether any channel row is stated against a link.
    pub channels_linked: bool,
    /// A flush after every operation against the least frequent flush.
    pub flushes: Vec<super::one_sided::FlushRow>,
    /// The best one-way one-sided plateau against the best two-sided one.
    pub like_for_like: Option<super::one_sided::LikeForLike>,
}

/// The transfer curves of `stats` (bandwidth, not latency, not
/// collectives), for the chart.
pub fn transfer_curves<'a>(curves: &[&'a Series]) -> Vec<&'a Series> {
    curves.iter().copied().filter(|c| c.is_transfer() && c.is_bandwidth()).collect()
}

pub fn network_section(
    curves: &[&Series],
    stats: &[PointStat],
    chart: &str,
    catalog: &crate::analysis::Catalog,
) -> Option<NetworkSection> {
    let transfers_c = transfer_curves(curves);
    let transfers: Vec<TransferRow> = transfers_c
        .iter()
        .filter_map(|c| {
            let s = c.summary.as_ref()?;
            Some(TransferRow {
                curve: c.name().to_string(),
                semantics: c.semantics().into(),
                peak_gbits: format_sig3(s.peak_gbps * 8.0),
                peak_size: format_bytes(s.peak_size_bytes),
                plateau_gbits: if s.settled() { format_sig3(s.plateau_gbps * 8.0) } else { "not settled".into() },
                p90: match (s.sizes, s.settled()) {
                    (0 | 1, _) => "one size".into(),
                    (_, false) => "not settled".into(),
                    _ => s.plateau_90.to_string(),
                },
                source: c.source(),
            })
        })
        .collect();
    // Collectives: per curve (the catalog's name: op, variant, system) and
    // rank count, the largest message size measured; one without a bus
    // factor (OSU's) with its algorithm bandwidth only.
    let mut by: BTreeMap<(String, u32, String), &PointStat> = BTreeMap::new();
    for p in stats.iter().filter(|p| p.bench == Bench::Collective && (p.busbw_gbps.or(p.gbps_copied)).is_some()) {
        let name = catalog.name_of(p);
        let key = (name, p.ranks.unwrap_or(0), p.source.clone().unwrap_or_default());
        let e = by.entry(key).or_insert(p);
        if p.size_bytes > e.size_bytes {
            *e = p;
        }
    }
    let collectives: Vec<CollectiveRow> = by
        .into_iter()
        .map(|((op, ranks, src), p)| CollectiveRow {
            op: op.clone(),
            ranks: if ranks == 0 { "not stated".into() } else { ranks.to_string() },
            size: p.size_bytes.map(format_bytes).unwrap_or_default(),
            busbw_gbps: {
                let cell = p.busbw_gbps.map(format_sig3).unwrap_or_else(|| "no bus factor".into());
                // A point its curve leaves out ([`Series::trusts`]) says so
                // where it is printed, as the Observations list it.
                let curve = curves.iter().find(|c| c.run_id == p.run_id && c.name() == op);
                match (curve, p.size_bytes) {
                    (Some(c), Some(size)) if p.samples > 1 && !c.trusts(size) => {
                        format!("{cell} (too uncertain: left out of its curve's level)")
                    }
                    _ => cell,
                }
            },
            algbw_gbps: p.gbps_copied.map(format_sig3).unwrap_or_default(),
            source: if src.is_empty() { "measured by benchbook".into() } else { src },
        })
        .collect();
    let latency: Vec<NetLatencyRow> = curves
        .iter()
        .filter(|c| c.is_transfer() && c.meaning.is_latency())
        .flat_map(|c| {
            // The small messages latency is about: up to 4 KiB.
            small_messages(c).map(move |p| NetLatencyRow {
                curve: c.name().to_string(),
                size: p.size_bytes.map(format_bytes).unwrap_or_default(),
                median: format_seconds(p.median_seconds),
                counts: match c.meaning.direction {
                    crate::vocab::ops::Direction::RoundTrip => "round trip",
                    _ => "one way",
                },
                source: c.source(),
            })
        })
        .collect();
    let latency_notes: Vec<_> = curves
        .iter()
        .filter(|c| c.is_transfer() && c.meaning.is_latency())
        .flat_map(|c| small_message_notes(c))
        .collect();
    if transfers.is_empty() && collectives.is_empty() && latency.is_empty() {
        return None;
    }
    let (channels, flushes) = super::one_sided::channels_and_flushes(&transfers_c);
    let like_for_like = super::one_sided::like_for_like(&transfers_c);
    let observations = super::one_sided::observations(like_for_like.as_ref(), &transfers, &transfers_c);
    Some(NetworkSection {
        latency_notes,
        chart: (!transfers_c.is_empty()).then(|| chart.to_string()),
        observations,
        transfers,
        rank_counts: collectives.iter().map(|c| c.ranks.as_str()).collect::<std::collections::BTreeSet<_>>().len(),
        collectives,
        latency,
        channels,
        channels_linked: false,
        flushes,
        like_for_like,
    })
}

/// Fill each channel row's rate at its matched size: among the one-sided
/// curves of one run and operation (puts with puts, gets with gets), the
/// largest size every one of them measured with a point the report trusts
/// (Curve::trusted); where no size is trusted by all, the size most of them
/// trust (the larger on a tie), and a cell whose point is not trusted there
/// says so. Peaks fall at different sizes, so only these cells compare the
/// rows like for like.
pub(super) fn matched(curves: &[&Series], rows: &mut [ChannelRow]) {
    use super::one_sided::with_interval;
    let mut groups: BTreeMap<(&str, &str), Vec<&Series>> = BTreeMap::new();
    for s in curves.iter().copied().filter(|s| s.one_sided().is_some()) {
        groups.entry((s.curve.run_id.as_str(), s.curve.op.as_str())).or_default().push(s);
    }
    for group in groups.values().filter(|g| g.len() > 1) {
        let trusted = |s: &Series| -> Vec<u64> {
            s.curve.trusted().into_iter().filter(|&(_, _, t)| t).map(|(size, ..)| size).collect()
        };
        let sets: Vec<Vec<u64>> = group.iter().map(|s| trusted(s)).collect();
        let mut sizes: Vec<u64> = sets.iter().flatten().copied().collect();
        sizes.sort_unstable();
        sizes.dedup();
        // Every curve trusting it, else the largest size most of them
        // (more than half) trust, else the one the most trust: a size low
        // enough for all can sit below where the settings part.
        let trusting = |size: &u64| sets.iter().filter(|t| t.contains(size)).count();
        let all = sizes.iter().copied().filter(|z| trusting(z) == group.len()).max();
        let most = sizes.iter().copied().filter(|z| 2 * trusting(z) > group.len()).max();
        let Some(size) = all.or(most).or_else(|| sizes.iter().copied().max_by_key(|z| (trusting(z), *z))) else {
            continue;
        };
        for (s, t) in group.iter().zip(&sets) {
            let Some(row) = rows.iter_mut().find(|r| r.key == s.key) else { continue };
            row.matched_size = format_bytes(size);
            row.matched_gbits = match s.curve.points.iter().find(|p| p.size_bytes == Some(size)) {
                Some(p) if t.contains(&size) => with_interval(p),
                Some(p) => format!("{} (too uncertain there: see Precision)", with_interval(p)),
                None => "not measured there".into(),
            };
        }
    }
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
            matched_size: "-".into(),
            matched_gbits: "-".into(),
            of_link: String::new(),
            peak_gbps: gbps,
            key: SeriesKey::default(),
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
}
