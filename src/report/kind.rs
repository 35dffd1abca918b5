//! Report kinds: the generic per-run report, one kind per seed write-up,
//! and the A-vs-B comparison. A kind is an ordered list of sections
//! ([`Kind::sections`]), data from which its template is generated: one
//! include of a `templates/sections/` partial per line, in the order its
//! write-up has them; sections without data print nothing.

use serde::{Deserialize, Serialize};

use crate::analysis::workload::MetricStat;
use crate::analysis::PointStat;
use crate::archive::manifest::Manifest;
use crate::report::sections::Section;
use crate::vocab::benches::{Bench, Family};

/// What a report is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    /// One report per run: every section its data supports (the default
    /// for runs that mix benchmarks of several write-ups).
    #[default]
    Run,
    /// Device (and host) memcpy against size, with the HBM roofline and
    /// saturation sizes (seed 001).
    Memcpy,
    /// GPU-to-GPU copies: link rooflines, pair curves, the peer matrix
    /// heatmap, and MPI send/recv beside them (seed 000).
    MemcpyPeer,
    /// GEMM throughput against published peaks and other GPUs, training
    /// throughput and scaling efficiency (seed 002).
    Gemm,
    /// Network: send/recv vs one-sided, bandwidth in Gb/s against link
    /// lines (EFA, RoCE), collectives over ranks, latency (seed 003).
    Network,
    /// Runs against the first: overlay, ratio chart with its 95 % band,
    /// verdicts, environment differences and variability (seed 004).
    Compare,
}

/// The sections of the plain run report.
const RUN: [Section; 15] = {
    use Section::*;
    [
        Header,
        System,
        HostMemcpy,
        Gpu,
        Stream,
        Gemm,
        Collective,
        P2p,
        Other,
        Workload,
        Telemetry,
        Skipped,
        Methodology,
        Reproducibility,
        Provenance,
    ]
};

impl Kind {
    /// Every kind, in the order `--help` lists them.
    pub const ALL: [Kind; 6] = [Kind::Run, Kind::Memcpy, Kind::MemcpyPeer, Kind::Gemm, Kind::Network, Kind::Compare];

    /// The name on the command line (`memcpy-peer`).
    pub fn name(self) -> &'static str {
        match self {
            Kind::Run => "run",
            // A write-up kind is named after its family.
            Kind::Memcpy => Family::Memcpy.name(),
            Kind::MemcpyPeer => Family::Peer.name(),
            Kind::Gemm => Family::Gemm.name(),
            Kind::Network => "network",
            Kind::Compare => "compare",
        }
    }

    /// The top-level template that renders this kind: generated from
    /// [`Self::sections`] (a file of this name in `--templates` replaces it).
    pub fn template(self) -> String {
        format!("{}.md", self.name())
    }

    /// The sections of this kind's report, in the order its write-up has
    /// them. The write-up kinds share their opening and their closing
    /// sections; a comparison has its own, and shares the System table.
    /// A section that brings data of its own names its place itself
    /// ([`crate::report::sections::Plugin::after`]).
    pub fn sections(self) -> Vec<Section> {
        let mut list = self.own_sections();
        crate::report::sections::place_plugins(self, &mut list);
        list
    }

    fn own_sections(self) -> Vec<Section> {
        use Section::*;
        const OPENING: [Section; 6] = [Header, KeyResults, Introduction, Runs, System, Setup];
        const CLOSING: [Section; 8] =
            [Other, Telemetry, Discussion, Limitations, Skipped, Methodology, Reproducibility, Provenance];
        let write_up = |middle: &[Section]| [&OPENING[..], middle, &CLOSING[..]].concat();
        match self {
            Kind::Run => RUN.to_vec(),
            Kind::Memcpy => write_up(&[Gpu, HostMemcpy, Stream]),
            Kind::MemcpyPeer => write_up(&[Gpu, P2p, Links, Matrix]),
            Kind::Gemm => write_up(&[Gpu, Gemm, Workload]),
            Kind::Network => write_up(&[Network, Links, Collective, P2p, Matrix]),
            Kind::Compare => vec![
                CompareHeader,
                CompareSummary,
                CompareRuns,
                System,
                CompareSetup,
                CompareFamilies,
                ComparePartitions,
                CompareDetails,
                CompareNotes,
                CompareProvenance,
            ],
        }
    }

    /// What a report of this kind over `stats` is about, from what its
    /// rows are: a memcpy write-up of host copies is not "device memcpy".
    /// `shared_memory`: every run is an MPI run whose ranks shared one host,
    /// so no byte crossed a network: a network write-up of those is not
    /// "network bandwidth" (F24).
    pub fn subject_of(self, stats: &[crate::analysis::PointStat], shared_memory: bool) -> String {
        if self == Kind::Network && shared_memory {
            return "MPI bandwidth and latency over shared memory (every rank on one host)".into();
        }
        if self == Kind::Memcpy {
            let gpu = stats.iter().any(PointStat::is_gpu);
            let host = stats.iter().any(|p| !p.is_gpu());
            return match (host, gpu) {
                (true, true) => "host and GPU memcpy bandwidth",
                (false, true) => "GPU memcpy bandwidth",
                _ => "host memcpy bandwidth",
            }
            .into();
        }
        self.subject().into()
    }

    pub fn subject(self) -> &'static str {
        match self {
            Kind::Run => "run report",
            Kind::Memcpy => "memcpy bandwidth",
            Kind::MemcpyPeer => "GPU peer memcpy and MPI point-to-point",
            Kind::Gemm => "GEMM, training throughput and scaling",
            Kind::Network => "network bandwidth and latency",
            Kind::Compare => "comparison",
        }
    }

    /// Whether one report covers every run named (a write-up sets MPI,
    /// PyTorch and published numbers side by side), rather than one report
    /// per run.
    pub fn merges_runs(self) -> bool {
        !matches!(self, Kind::Run | Kind::Compare)
    }

    /// The write-up a benchmark family belongs to.
    pub fn of_family(f: Family) -> Kind {
        match f {
            Family::Memcpy => Kind::Memcpy,
            Family::Peer => Kind::MemcpyPeer,
            Family::Gemm => Kind::Gemm,
            Family::Network => Kind::Network,
        }
    }

    /// The write-up kind whose benchmarks these rows are, or `Run` when
    /// they mix several write-ups (or none): a quick run with memcpy,
    /// STREAM and GEMM gets the generic report. GPU peer copies together
    /// with MPI point-to-point rows are seed 000's two halves. A row's
    /// family comes from the benchmark table, else from the importer that
    /// read its run (recorded in the manifest).
    pub fn detect(stats: &[PointStat], metrics: &[MetricStat], manifests: &[Manifest]) -> Kind {
        let imported = |run_id: &str| {
            manifests.iter().filter(|m| m.run_id == run_id).flat_map(|m| m.config.imported()).find_map(|f| f.family)
        };
        let family = |bench: &str, run_id: &str| Bench::family_of(bench).or_else(|| imported(run_id));
        let mut kinds: Vec<Kind> = stats
            .iter()
            .map(|p| (p.bench.as_str(), p.run_id.as_str()))
            .chain(metrics.iter().map(|m| (m.bench.as_str(), m.run_id.as_str())))
            .map(|(b, r)| family(b, r).map_or(Kind::Run, Kind::of_family))
            .collect();
        kinds.sort_unstable();
        kinds.dedup();
        let network = |p: &&PointStat| Bench::family_of(&p.bench) == Some(Family::Network);
        let only_p2p = stats.iter().filter(network).all(|p| p.bench == Bench::P2p);
        match kinds[..] {
            [k] => k,
            [Kind::MemcpyPeer, Kind::Network] if only_p2p => Kind::MemcpyPeer,
            _ => Kind::Run,
        }
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(bench: &str) -> PointStat {
        PointStat { bench: bench.into(), ..PointStat::default() }
    }

    #[test]
    fn one_write_up_is_detected_and_a_mix_is_a_run() {
        let k = |b: &[&str]| Kind::detect(&b.iter().map(|b| point(b)).collect::<Vec<_>>(), &[], &[]);
        assert_eq!(k(&["memcpy", "stream"]), Kind::Memcpy);
        assert_eq!(k(&["nvbandwidth"]), Kind::MemcpyPeer);
        assert_eq!(k(&["memcpy-peer", "p2p"]), Kind::MemcpyPeer);
        assert_eq!(k(&["memcpy-peer", "collective"]), Kind::Run);
        assert_eq!(k(&["rdma", "p2p", "collective"]), Kind::Network);
        assert_eq!(k(&["gemm"]), Kind::Gemm);
        assert_eq!(k(&["memcpy", "stream", "gemm"]), Kind::Run);
        assert_eq!(k(&[]), Kind::Run);
        assert_eq!(k(&["exec"]), Kind::Run);
    }
}
