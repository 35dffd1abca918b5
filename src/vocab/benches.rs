//! The one table of benchmarks, built the way the column table is: each
//! benchmark is declared once, here, with where it runs, the write-up
//! family its report belongs to, its report section, which bytes its rates
//! count, its chart axis and unit, and its help text. Every list that used
//! to name benchmarks (the CPU, GPU and MPI sets, the report kinds, the
//! GPU section, provenance titles, "other measurements") is a lookup here,
//! and a `match` on [`Bench`] makes a forgotten case a compile error.
//!
//! The archive keeps the name as a string (the `bench` column), so a run
//! imported from a tool this table does not list (a named-metric importer
//! writes its tool's name) still reads: [`Bench::of`] is `None` for it, and
//! its report family comes from its importer ([`Family`], recorded in the
//! manifest).

vocabulary!(
    /// A benchmark: native (CPU, GPU, MPI), a foreign tool's measurement
    /// kind, or a workload.
    Bench, "benchmark" {
        Memcpy = "memcpy",
        Stream = "stream",
        Gemm = "gemm",
        MemcpyPeer = "memcpy-peer",
        H2d = "h2d",
        D2h = "d2h",
        P2p = "p2p",
        Collective = "collective",
        /// A link sweep between the nodes of an MPI job (round robin, then
        /// a second pass on the slow links).
        Links = "links",
        /// RDMA verbs bandwidth and latency (perftest).
        Rdma = "rdma",
        /// nvbandwidth's test cases (copy-engine and SM copies, matrices).
        Nvbandwidth = "nvbandwidth",
        /// Megatron-LM-family training logs (named metrics).
        Megatron = "megatron",
        /// `run exec`: any command's wall time and reported metrics.
        Exec = "exec",
    }
);

vocabulary!(
    /// The write-up a benchmark's report belongs to (`report::Kind` maps
    /// from it): seed 001, 000, 002 and 003.
    Family, "report family" {
        Memcpy = "memcpy",
        Peer = "memcpy-peer",
        Gemm = "gemm",
        Network = "network",
    }
);

/// Where a benchmark's rows come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunsOn {
    /// The CPU backend (and, for memcpy and gemm, the GPU backends too).
    Cpu,
    /// Only a GPU backend (CUDA, HIP).
    Gpu,
    /// MPI ranks, in their own job under `mpirun`/`srun`.
    Mpi,
    /// Only another tool's output, imported.
    Tool,
    /// A workload: `run exec` or a training/serving log.
    Workload,
}

/// The unit a benchmark's rates are charted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateUnit {
    /// 10^9 bytes/s.
    GBps,
    /// 10^9 bits/s, as network tools print.
    Gbps,
    /// FLOP/s (GFLOP/s on a CPU, TFLOP/s on a GPU).
    Flops,
    /// Named metrics, each in its own unit.
    Metric,
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct BenchInfo {
    pub runs_on: RunsOn,
    pub family: Option<Family>,
    /// The report section its points appear in, as titled (host rows).
    pub section: Option<&'static str>,
    /// The same for rows measured on a GPU, inside the GPU section.
    pub gpu_section: Option<&'static str>,
    /// Which bytes (or FLOPs) its rates count.
    pub counts: &'static str,
    /// The y axis of its charts.
    pub axis: &'static str,
    pub unit: RateUnit,
    /// One line for `--help`.
    pub help: &'static str,
}

const READ_WRITTEN: &str = "bytes read + written (2 × size); the tables also give bytes copied once";
const COPIED_ONCE: &str = "bytes copied once (the payload), GB/s = 10^9 bytes/s";
/// The y axis of a rate that counts bytes read + written, and of one that
/// counts bytes copied once.
pub const AXIS_MOVED: &str = "GB/s (bytes read + written)";
pub const AXIS_ONCE: &str = "GB/s (bytes copied once)";

impl Bench {
    /// The benchmark a row's `bench` names, if this table lists it.
    pub fn of(name: &str) -> Option<Bench> {
        Bench::parse(name).ok()
    }

    /// This benchmark's row of the table.
    pub fn info(self) -> BenchInfo {
        use RateUnit::*;
        use RunsOn::*;
        let row = |runs_on, family, section, gpu_section, counts, axis, unit, help| BenchInfo {
            runs_on,
            family,
            section,
            gpu_section,
            counts,
            axis,
            unit,
            help,
        };
        match self {
            Bench::Memcpy => row(
                Cpu,
                Some(Family::Memcpy),
                Some("Host memcpy"),
                Some("GPUs: Device memcpy"),
                READ_WRITTEN,
                AXIS_MOVED,
                GBps,
                "copy bandwidth against size (host memcpy; device-to-device on a GPU)",
            ),
            Bench::Stream => row(
                Cpu,
                Some(Family::Memcpy),
                Some("STREAM kernels"),
                None,
                "bytes read + written, BabelStream's weights (Copy, Scale 2; Add, Triad 3 arrays)",
                AXIS_MOVED,
                GBps,
                "STREAM copy, scale, add and triad against array size",
            ),
            Bench::Gemm => row(
                Cpu,
                Some(Family::Gemm),
                Some("GEMM"),
                Some("GPUs: GPU GEMM"),
                "FLOP/s, 2·m·n·k per GEMM",
                "FLOP/s",
                Flops,
                "GEMM throughput by shape and dtype (CPU; cuBLAS/hipBLAS on a GPU)",
            ),
            Bench::MemcpyPeer => row(
                Gpu,
                Some(Family::Peer),
                None,
                Some("GPUs: Peer memcpy"),
                COPIED_ONCE,
                AXIS_ONCE,
                GBps,
                "GPU-to-GPU copies over the links (copy engine, or a peer-write kernel)",
            ),
            Bench::H2d => row(
                Gpu,
                Some(Family::Memcpy),
                None,
                Some("GPUs: Host ↔ device"),
                COPIED_ONCE,
                AXIS_ONCE,
                GBps,
                "host-to-device copies, pinned and pageable",
            ),
            Bench::D2h => row(
                Gpu,
                Some(Family::Memcpy),
                None,
                Some("GPUs: Host ↔ device"),
                COPIED_ONCE,
                AXIS_ONCE,
                GBps,
                "device-to-host copies, pinned and pageable",
            ),
            Bench::P2p => row(
                Mpi,
                Some(Family::Network),
                Some("Point-to-point"),
                None,
                COPIED_ONCE,
                AXIS_ONCE,
                Gbps,
                "MPI send/recv, latency and one-sided put/get between ranks",
            ),
            Bench::Collective => row(
                Mpi,
                Some(Family::Network),
                Some("Collectives"),
                None,
                "algbw: size / time; busbw: algbw × the collective's bus factor (nccl-tests)",
                "GB/s (bus bandwidth)",
                GBps,
                "MPI collectives with nccl-tests' bus bandwidth",
            ),
            Bench::Links => row(
                Mpi,
                Some(Family::Network),
                None,
                None,
                "bytes sent both ways at once: 2 × size per exchange, GB/s = 10^9 bytes/s",
                "GB/s (both directions)",
                GBps,
                "every pair of ranks once, n/2 pairs at a time (round robin); slow links retested against a good node",
            ),
            Bench::Rdma => row(
                Tool,
                Some(Family::Network),
                None,
                None,
                COPIED_ONCE,
                AXIS_ONCE,
                Gbps,
                "RDMA verbs bandwidth and latency (perftest's ib_* tools)",
            ),
            Bench::Nvbandwidth => row(
                Tool,
                Some(Family::Peer),
                None,
                None,
                "bytes copied once, as nvbandwidth counts them",
                AXIS_ONCE,
                GBps,
                "nvbandwidth's copy-engine and SM copy test cases",
            ),
            Bench::Megatron => row(
                Workload,
                Some(Family::Gemm),
                None,
                None,
                "named metrics, each in its printed unit",
                "value",
                Metric,
                "Megatron-LM-family training: step time, TFLOP/s, loss",
            ),
            Bench::Exec => row(
                Workload,
                None,
                None,
                None,
                "wall time per repetition, and the metrics the command reports",
                "value",
                Metric,
                "any command, repeated (`run exec`)",
            ),
        }
    }

    /// The report family of a row's `bench`, if the table knows it.
    pub fn family_of(name: &str) -> Option<Family> {
        Bench::of(name).and_then(|b| b.info().family)
    }

    /// Benchmarks the CPU backend measures.
    pub fn cpu() -> impl Iterator<Item = Bench> {
        Bench::ALL.iter().copied().filter(|b| b.info().runs_on == RunsOn::Cpu)
    }

    /// Whether it runs across MPI ranks, in its own job.
    pub fn is_mpi(self) -> bool {
        self.info().runs_on == RunsOn::Mpi
    }

    /// Whether `benchbook run` can measure it (the rest are imported).
    pub fn is_runnable(self) -> bool {
        matches!(self.info().runs_on, RunsOn::Cpu | RunsOn::Gpu | RunsOn::Mpi)
    }

    /// Benchmarks `benchbook run` can be asked for by name.
    pub fn runnable() -> impl Iterator<Item = Bench> {
        Bench::ALL.iter().copied().filter(|b| b.is_runnable())
    }

    /// A default run: every CPU and GPU benchmark (GPU-only ones are
    /// skipped, with the reason, where no GPU backend is usable).
    pub fn default_run() -> Vec<Bench> {
        Bench::ALL.iter().copied().filter(|b| matches!(b.info().runs_on, RunsOn::Cpu | RunsOn::Gpu)).collect()
    }

    /// Whether a point of this benchmark is a transfer between two places
    /// (its curves are labelled by peer and direction).
    pub fn is_transfer(self) -> bool {
        matches!(self, Bench::P2p | Bench::MemcpyPeer | Bench::H2d | Bench::D2h)
    }

    /// `--help` text: one line per runnable benchmark.
    pub fn help_list() -> String {
        let line = |b: Bench| {
            let mpi = if b.is_mpi() { " (mpirun/srun, `mpi` feature)" } else { "" };
            format!("  {:<12} {}{mpi}", b.name(), b.info().help)
        };
        Bench::runnable().map(line).collect::<Vec<_>>().join("\n")
    }
}

/// `p.bench == Bench::Memcpy` for a row's or point's `bench` string.
impl PartialEq<Bench> for String {
    fn eq(&self, other: &Bench) -> bool {
        self == other.name()
    }
}

impl PartialEq<Bench> for str {
    fn eq(&self, other: &Bench) -> bool {
        self == other.name()
    }
}

impl PartialEq<Bench> for &str {
    fn eq(&self, other: &Bench) -> bool {
        *self == other.name()
    }
}

/// A family of benchmarks as a comparison (seed 004) groups its sections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum CompareFamily {
    Collectives,
    Transfers,
    Memory,
    Compute,
    Workloads,
}

impl CompareFamily {
    pub const ALL: [Self; 5] = [Self::Collectives, Self::Transfers, Self::Memory, Self::Compute, Self::Workloads];

    /// The family of a row's `bench` (a tool's own name is a workload).
    pub fn of(bench: &str) -> CompareFamily {
        match Bench::of(bench) {
            Some(Bench::Collective) => CompareFamily::Collectives,
            Some(
                Bench::P2p
                | Bench::MemcpyPeer
                | Bench::H2d
                | Bench::D2h
                | Bench::Rdma
                | Bench::Links
                | Bench::Nvbandwidth,
            ) => CompareFamily::Transfers,
            Some(Bench::Memcpy | Bench::Stream) => CompareFamily::Memory,
            Some(Bench::Gemm) => CompareFamily::Compute,
            Some(Bench::Megatron | Bench::Exec) | None => CompareFamily::Workloads,
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            CompareFamily::Collectives => "Collectives",
            CompareFamily::Transfers => "Point-to-point, peer and RDMA bandwidth",
            CompareFamily::Memory => "Memory bandwidth",
            CompareFamily::Compute => "Compute",
            CompareFamily::Workloads => "Workloads and serving",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sets_are_what_the_backends_measure() {
        let names = |it: Vec<Bench>| it.iter().map(|b| b.name()).collect::<Vec<_>>();
        assert_eq!(names(Bench::cpu().collect()), ["memcpy", "stream", "gemm"]);
        assert_eq!(names(Bench::ALL.iter().copied().filter(|b| b.is_mpi()).collect()), ["p2p", "collective", "links"]);
        assert_eq!(
            names(Bench::runnable().collect()),
            ["memcpy", "stream", "gemm", "memcpy-peer", "h2d", "d2h", "p2p", "collective", "links"]
        );
        assert_eq!(names(Bench::default_run()), ["memcpy", "stream", "gemm", "memcpy-peer", "h2d", "d2h"]);
    }

    #[test]
    fn strings_compare_with_the_enum_and_unknown_names_are_none() {
        assert!(*"memcpy-peer" == Bench::MemcpyPeer);
        assert!("p2p" == Bench::P2p);
        assert_eq!(Bench::of("vllm-serve"), None);
        assert_eq!(Bench::family_of("rdma"), Some(Family::Network));
        assert_eq!(Bench::family_of("exec"), None);
        assert!(Bench::parse("memcpyy").unwrap_err().to_string().contains("choose from: memcpy, stream"));
    }

    #[test]
    fn benchmarks_fall_into_the_compare_families() {
        use CompareFamily::*;
        let of: Vec<CompareFamily> = ["collective", "rdma", "stream", "exec", "vllm"].map(CompareFamily::of).into();
        assert_eq!(of, [Collectives, Transfers, Memory, Workloads, Workloads]);
    }
}
