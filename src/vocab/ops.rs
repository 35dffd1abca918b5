//! The one table of what an operation measures: for every `(bench, op)` a
//! benchmark or importer writes, its [`Meaning`] — a bandwidth (one way,
//! both ways, or a round trip), a latency, a compute rate or a named
//! metric; for a transfer, whether it is one-sided or two-sided and which
//! call it is; and where its buffers live ([`Buffers`]).
//!
//! Reports, compare and notebooks ask this table (through
//! `analysis::series`), never the op's or the label's spelling. An importer
//! or benchmark that writes a new op adds its row here; the test
//! `ops::every_archived_op_has_a_meaning` fails for an op in an archive or
//! an import fixture that has none.
//!
//! Most rows are literal op names. Three tools name their ops after their
//! own test programs, and their rows read those names' parts, as the tools
//! define them: perftest (`{write,read,send,atomic}_{bw,lat}`), OSU's
//! one-sided tests (`{put,get,acc,get_acc,fop,cas}_{bw,bibw,latency}`) and
//! nvbandwidth's test cases (`…_bidirectional_…`, `…_latency_…`).

use serde::Serialize;

use crate::vocab::benches::Bench;

/// What a point's measurement is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// Bytes per second (which bytes: the bench's `counts`).
    Bandwidth,
    /// Time per operation is the figure (lower is better), not a rate.
    Latency,
    /// FLOP/s.
    Compute,
    /// A named metric in its own unit (`run exec`, training and serving logs).
    Metric,
}

/// Which way a transfer's bytes go. For a latency, what its figure
/// counts: one way (half a ping-pong, as OSU, IMB, perftest's write and
/// send tests and benchbook report it) or a whole round trip (perftest's
/// read and atomic tests, whose operation is a round trip and is not
/// halved; nvbandwidth's pointer chase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// One way (a copy, a unidirectional test).
    OneWay,
    /// Both ways at once (a bidirectional test: its rate sums both).
    Both,
    /// There and back before the next (a put and its fence).
    RoundTrip,
}

/// How a transfer's two ends take part.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Sides {
    /// Not a transfer between two ends (a local copy, a GEMM, a collective).
    NotATransfer,
    /// Both ends call (send/recv).
    TwoSided,
    /// One end reads or writes the other's memory (RDMA, MPI RMA).
    OneSided,
}

/// What one operation measures ([`meaning`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Meaning {
    pub quantity: Quantity,
    pub direction: Direction,
    pub sides: Sides,
    /// The call on the wire, as the network section names it:
    /// `one-sided (RDMA write)`, `two-sided (MPI send/recv)`; `""` for a
    /// measurement that is not a transfer.
    pub call: &'static str,
}

impl Meaning {
    const fn of(quantity: Quantity, direction: Direction, sides: Sides, call: &'static str) -> Meaning {
        Meaning { quantity, direction, sides, call }
    }

    pub fn is_latency(&self) -> bool {
        self.quantity == Quantity::Latency
    }

    pub fn is_bandwidth(&self) -> bool {
        self.quantity == Quantity::Bandwidth
    }

    pub fn one_sided(&self) -> bool {
        self.sides == Sides::OneSided
    }

    /// A one-way transfer or copy: like for like with another one-way curve.
    pub fn one_way(&self) -> bool {
        self.direction == Direction::OneWay
    }
}

use Direction::{Both, OneWay, RoundTrip};
use Quantity::{Bandwidth, Compute, Latency, Metric};
use Sides::{NotATransfer, OneSided, TwoSided};

const LOCAL: Meaning = Meaning::of(Bandwidth, OneWay, NotATransfer, "");
const LOCAL_BOTH: Meaning = Meaning::of(Bandwidth, Both, NotATransfer, "");
const COLLECTIVE: Meaning = Meaning::of(Bandwidth, OneWay, NotATransfer, "collective");
const NAMED: Meaning = Meaning::of(Metric, OneWay, NotATransfer, "");
const SEND_RECV: &str = "two-sided (MPI send/recv)";

/// Whether a test case pulls its data: nvbandwidth's `…_read_…` cases
/// copy the peer's buffer into the local GPU's, in the local GPU's context,
/// so in its matrix the row GPU reads the column GPU and data flows from
/// column to row, whatever arrow the tool prints over the matrix.
pub fn pulls(bench: &str, op: &str) -> bool {
    Bench::of(bench) == Some(Bench::Nvbandwidth) && op.contains("_read_")
}

/// The meaning of an op of `bench` (`variant` decides only where a tool
/// writes the direction there: perftest's `bidirectional`, nvbandwidth's
/// `sm latency`). `metric`: the row is a named metric. `None`: no row
/// for it here, and the test over every archive and fixture fails.
pub fn meaning(bench: &str, op: &str, variant: Option<&str>, metric: bool) -> Option<Meaning> {
    if metric {
        return Some(NAMED);
    }
    let var = variant.unwrap_or("");
    let both_in_variant = var == "bidirectional";
    Some(match Bench::of(bench) {
        // A whole benchmark skipped: its rows carry `*`.
        Some(b) if op == "*" => match b.info().unit {
            crate::vocab::benches::RateUnit::Flops => Meaning::of(Compute, OneWay, NotATransfer, ""),
            crate::vocab::benches::RateUnit::Metric => NAMED,
            _ => LOCAL,
        },
        Some(Bench::Memcpy) => match op {
            "copy" => LOCAL,
            _ => return None,
        },
        Some(Bench::Stream) => match op {
            "copy" | "scale" | "add" | "triad" | "dot" | "mul" | "nstream" => LOCAL,
            _ => return None,
        },
        Some(Bench::Gemm) => match op {
            "gemm" => Meaning::of(Compute, OneWay, NotATransfer, ""),
            _ => return None,
        },
        Some(Bench::MemcpyPeer | Bench::H2d | Bench::D2h) => match op {
            "copy" if both_in_variant => Meaning::of(Bandwidth, Both, TwoSided, "copy"),
            "copy" => Meaning::of(Bandwidth, OneWay, TwoSided, "copy"),
            "copy_bidir" => Meaning::of(Bandwidth, Both, TwoSided, "copy"),
            _ => return None,
        },
        Some(Bench::P2p) => p2p(op)?,
        Some(Bench::Collective) => match op {
            "barrier" => Meaning::of(Latency, OneWay, NotATransfer, "collective"),
            "all_reduce" | "all_gather" | "reduce_scatter" | "broadcast" | "reduce" | "all_to_all" | "gather"
            | "scatter" | "send_recv" | "hypercube" | "all_to_allv" | "gatherv" | "scatterv" | "all_gatherv" => {
                COLLECTIVE
            }
            _ => return None,
        },
        Some(Bench::Links) => match op {
            crate::vocab::pairs::ROUND_OP | crate::vocab::pairs::RETEST_OP => {
                Meaning::of(Bandwidth, Both, TwoSided, SEND_RECV)
            }
            _ => return None,
        },
        Some(Bench::Rdma) => perftest(op, both_in_variant)?,
        Some(Bench::Nvbandwidth) => {
            if op.contains("latency") || var.contains("latency") {
                Meaning::of(Latency, RoundTrip, TwoSided, "copy")
            } else if op.contains("bidirectional") {
                Meaning::of(Bandwidth, Both, TwoSided, "copy")
            } else if op == "device_local_copy" {
                LOCAL
            } else {
                Meaning::of(Bandwidth, OneWay, TwoSided, "copy")
            }
        }
        Some(Bench::Megatron | Bench::Exec) => NAMED,
        // Tools without a benchmark of their own here.
        None => match (bench, op) {
            // TransferBench's transfers: copies, reads, writes and fills
            // of one or more GPUs' memory.
            ("transferbench", "copy" | "read" | "write" | "memset" | "broadcast" | "all_to_all") => LOCAL,
            ("transferbench", "copy_bidir") => LOCAL_BOTH,
            _ => return None,
        },
    })
}

/// MPI point-to-point: benchbook's own ops, OSU's and IMB's test names.
fn p2p(op: &str) -> Option<Meaning> {
    let two = |q, d| Meaning::of(q, d, TwoSided, SEND_RECV);
    Some(match op {
        "send_recv" | "bw" | "uniband" | "pingpong" | "pingping" | "mbw_mr" => two(Bandwidth, OneWay),
        "bidirectional" | "bibw" | "biband" | "sendrecv" | "exchange" => two(Bandwidth, Both),
        // Measured by a ping-pong, reported as half of it.
        "latency" | "lat" | "multi_lat" | "latency_mt" => two(Latency, OneWay),
        "put" => Meaning::of(Bandwidth, OneWay, OneSided, "one-sided (MPI put)"),
        "get" => Meaning::of(Bandwidth, OneWay, OneSided, "one-sided (MPI get)"),
        "put_round_trip" => Meaning::of(Bandwidth, RoundTrip, OneSided, "one-sided round trip (MPI put + fence)"),
        // OSU's one-sided programs: osu_put_bw, osu_get_latency, osu_acc_latency …
        _ => {
            let (call, what) = op.rsplit_once('_')?;
            let call = match call {
                "put" => "one-sided (MPI put)",
                "get" => "one-sided (MPI get)",
                "acc" => "one-sided (MPI accumulate)",
                "get_acc" => "one-sided (MPI get_accumulate)",
                "fop" => "one-sided (MPI fetch_and_op)",
                "cas" => "one-sided (MPI compare_and_swap)",
                _ => return None,
            };
            match what {
                "bw" => Meaning::of(Bandwidth, OneWay, OneSided, call),
                "bibw" => Meaning::of(Bandwidth, Both, OneSided, call),
                "latency" => Meaning::of(Latency, OneWay, OneSided, call),
                _ => return None,
            }
        }
    })
}

/// perftest: the binary's verb and measure, `write_bw`, `read_lat`.
fn perftest(op: &str, both: bool) -> Option<Meaning> {
    let (verb, what) = op.rsplit_once('_')?;
    let (sides, call) = match verb {
        "write" => (OneSided, "one-sided (RDMA write)"),
        "read" => (OneSided, "one-sided (RDMA read)"),
        "atomic" => (OneSided, "one-sided (RDMA atomic)"),
        "send" => (TwoSided, "two-sided (verbs send/recv)"),
        _ => return None,
    };
    Some(match what {
        "bw" => Meaning::of(Bandwidth, if both { Both } else { OneWay }, sides, call),
        // perftest halves a write or send ping-pong; a read (or atomic)
        // is one round trip, reported whole (its rtt_factor is 1).
        "lat" => Meaning::of(Latency, if matches!(verb, "read" | "atomic") { RoundTrip } else { OneWay }, sides, call),
        _ => return None,
    })
}

/// Where a point's buffers live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Buffers {
    /// Host memory.
    Host,
    /// GPU memory: a GPU backend's points, or an MPI test on device
    /// buffers (OSU `D D`, GPU-aware MPI).
    Device,
    /// Between GPUs without peer access: staged through host memory (and
    /// across the host's PCIe links).
    StagedThroughHost,
}

impl Buffers {
    /// Where a point's buffers live, from its backend and variant (the
    /// variant a GPU copy records its peer access in, and an MPI test its
    /// buffers).
    pub fn of(backend: &str, bench: &str, variant: Option<&str>) -> Buffers {
        let gpu = crate::vocab::kinds::backend_is_gpu(backend);
        let var = variant.unwrap_or("");
        if bench == Bench::MemcpyPeer.name() && var == "no_peer_access" {
            Buffers::StagedThroughHost
        } else if gpu || bench == Bench::MemcpyPeer.name() || var.contains("device") {
            Buffers::Device
        } else {
            Buffers::Host
        }
    }

    pub fn on_gpu(self) -> bool {
        self != Buffers::Host
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tools_own_names_read_by_their_parts() {
        let m = |b, o, v| meaning(b, o, v, false).unwrap();
        assert_eq!(m("rdma", "write_bw", Some("bidirectional")).direction, Both);
        assert_eq!(m("rdma", "send_lat", Some("latency")).quantity, Latency);
        assert_eq!(m("rdma", "read_bw", None).call, "one-sided (RDMA read)");
        assert!(m("p2p", "put_bw", None).one_sided());
        assert_eq!(m("p2p", "acc_latency", None).quantity, Latency);
        assert_eq!(m("p2p", "put_round_trip", None).direction, RoundTrip);
        assert_eq!(m("rdma", "read_lat", Some("latency")).direction, RoundTrip);
        assert_eq!(m("rdma", "write_lat", Some("latency")).direction, OneWay);
        assert_eq!(m("p2p", "latency", None).direction, OneWay);
        assert_eq!(m("p2p", "send_recv", None).call, SEND_RECV);
        assert_eq!(m("nvbandwidth", "host_device_latency_sm", Some("sm latency")).quantity, Latency);
        assert_eq!(m("nvbandwidth", "device_to_host_bidirectional_memcpy_ce", Some("ce")).direction, Both);
        assert_eq!(m("collective", "barrier", None).quantity, Latency);
        assert!(meaning("p2p", "frobnicate", None, false).is_none());
        assert!(meaning("rdma", "write_xx", None, false).is_none());
        assert_eq!(meaning("vllm", "anything", None, true), Some(NAMED));
    }

    #[test]
    fn buffers_follow_backend_and_variant() {
        assert_eq!(Buffers::of("cuda", "memcpy-peer", Some("no_peer_access")), Buffers::StagedThroughHost);
        assert_eq!(Buffers::of("cuda", "memcpy-peer", Some("peer_access")), Buffers::Device);
        assert_eq!(Buffers::of("mpi", "p2p", Some("device buffers")), Buffers::Device);
        assert_eq!(Buffers::of("mpi", "p2p", Some("host buffers")), Buffers::Host);
        assert_eq!(Buffers::of("cpu", "memcpy", Some("warm")), Buffers::Host);
    }
}
