//! The MPI backend (feature `mpi`, through rsmpi): point-to-point and
//! collectives across the ranks of a job started by `mpirun` or `srun`.
//! benchbook launches nothing itself.
//!
//! Every rank measures every point. A sample's time on each rank is taken
//! between a barrier and the end of its own operations; the sampler sees the
//! maximum over ranks (an all-reduce), so all ranks stop together, and every
//! rank's own times are archived (analysis takes the per-sample maximum, as
//! nccl-tests and OSU report). Rank 0 gathers each point's rows from every
//! rank (tagged with rank and host) and writes the one archive.
//!
//! Two-sided transfers are in `two_sided`, on host buffers or, with a
//! CUDA- or ROCm-aware MPI, on each rank's GPU memory (`gpu`); one-sided
//! transfers (put, get, put round trip) are in `rma`; collectives
//! over fewer ranks than the job (all-to-all scaling) run on a
//! sub-communicator of the first k ranks while the others wait.

mod driver;
mod gpu;
mod links;
mod rma;
mod two_sided;

use driver::MpiDriver;
pub use gpu::{cuda_aware, gpu_awareness, GpuAwareness};
use gpu::{device_buffer_reason, DeviceSide};

use std::collections::BTreeMap;

use mpi::collective::SystemOperation;
use mpi::topology::{Color, SimpleCommunicator};
use mpi::traits::*;

use crate::bench::runner::{outcome_rows, RowMeta, Schedule, Step};
use crate::bench::sampler::Synced;
use crate::bench::{collective, links as link_points, p2p, BenchConfig, Outcome, Sampler};
use crate::error::{Error, Result};
use crate::vocab::benches::Bench;
use crate::vocab::config::{MpiConfig, MpiFacts, RunConfig};
use crate::vocab::facts::{BackendInfo, Probe};
use crate::vocab::pairs;
use crate::vocab::progress::Progress;
use crate::vocab::rows::{Point, RowSink, RunOutcome, Status};
use crate::vocab::source::RunOrigin;
use crate::vocab::source::{Source as RowSource, SourceInfo};

pub use crate::vocab::config::RankInfo;

/// Rank 0 receives every rank's bytes, in rank order; others send theirs.
fn gather_bytes(world: &SimpleCommunicator, mine: Vec<u8>) -> Option<Vec<Vec<u8>>> {
    if world.rank() == 0 {
        let mut all = vec![mine];
        for r in 1..world.size() {
            let (msg, _) = world.process_at_rank(r).receive_vec::<u8>();
            all.push(msg);
        }
        Some(all)
    } else {
        world.process_at_rank(0).send(&mine[..]);
        None
    }
}

/// Rank 0's bytes, on every rank.
fn broadcast_bytes(world: &SimpleCommunicator, mut bytes: Vec<u8>) -> Vec<u8> {
    let mut len = bytes.len() as u64;
    world.process_at_rank(0).broadcast_into(&mut len);
    bytes.resize(len as usize, 0);
    world.process_at_rank(0).broadcast_into(&mut bytes[..]);
    bytes
}

/// Logical OR over ranks.
fn any(world: &SimpleCommunicator, local: bool) -> bool {
    let mut out = 0u8;
    world.all_reduce_into(&(local as u8), &mut out, SystemOperation::max());
    out != 0
}

/// Max over ranks.
fn max_f64(world: &SimpleCommunicator, local: f64) -> f64 {
    let mut out = 0.0f64;
    world.all_reduce_into(&local, &mut out, SystemOperation::max());
    out
}

/// Time `n` operations on this rank after a barrier, then `finish` (e.g. a
/// one-sided flush, so the time covers completion). One reduction then
/// agrees on everything the sampler decides on: the slowest rank's time,
/// and whether any rank was interrupted or past `deadline` (a barrier and
/// one all-reduce per sample). This rank's own time is kept for its rows.
fn timed_max(
    world: &SimpleCommunicator,
    local_times: &mut Vec<f64>,
    n: u64,
    deadline: std::time::Instant,
    op: &mut dyn FnMut(u64),
    finish: &mut dyn FnMut(),
) -> Synced {
    world.barrier();
    let t0 = mpi::time();
    for i in 0..n {
        op(i);
    }
    finish();
    let t = mpi::time() - t0;
    local_times.push(t);
    let mine = Synced::local(t, deadline);
    let local = [t, mine.interrupted as u8 as f64, mine.past_deadline as u8 as f64];
    let mut all = [0.0f64; 3];
    world.all_reduce_into(&local[..], &mut all[..], SystemOperation::max());
    Synced { seconds: all[0], interrupted: all[1] > 0.0, past_deadline: all[2] > 0.0 }
}

/// Measure one point on every rank. Returns the outcome every rank shares
/// (its samples are the maxima over ranks, on which the schedule decides)
/// and this rank's own time for each of those samples (what its rows store).
fn measure_point(
    world: &SimpleCommunicator,
    point: &Point,
    sampler: &Sampler,
    device: Option<&DeviceSide>,
) -> (Outcome, Vec<f64>) {
    let rank = world.rank() as usize;
    let n = world.size() as usize;
    let size = point.size_bytes.unwrap_or(0) as usize;
    let mut local: Vec<f64> = Vec::new();
    let mut agree = |b: bool| any(world, b);
    let peer: usize =
        point.peer.as_deref().and_then(|p| p.split("<->").nth(1)).and_then(|p| p.parse().ok()).unwrap_or(1);
    // Every rank must agree to skip, or they would leave the point apart.
    let os = p2p::OneSided::of(point);
    let need = match point.op.as_str() {
        "put" | "get" => 2 * os.bytes(size as u64),
        _ => 2 * size as u64,
    };
    let short = crate::bench::memory_check(need);
    if any(world, short.is_some()) {
        let why = short.unwrap_or_else(|| "another rank has not enough memory for this point".into());
        return (Outcome::Skipped(why), Vec::new());
    }
    let p2p = point.bench == Bench::P2p;
    if point.bench == Bench::Links {
        // Every pair of the round exchanges at once; a rank without a partner waits.
        let partner = pairs::partner(point.peer.as_deref().unwrap_or(""), rank).map(|p| p as i32);
        let mut bufs = two_sided::HostBuffers::new(size.max(1));
        let r = two_sided::measure(world, point, partner, &mut bufs, sampler, &mut local, &mut agree);
        return finish_point(world, r, local);
    }
    let result = match (p2p, point.op.as_str()) {
        (true, "put" | "get") => rma::measure_put_get(world, point, peer as i32, sampler, &mut local, &mut agree),
        (true, "put_round_trip") => rma::measure_round_trip(world, point, peer as i32, sampler, &mut local, &mut agree),
        (true, _) => {
            let bufs = match (point.variant.as_deref().is_some_and(|v| v.starts_with("device")), device) {
                (true, Some(d)) => d.buffers(size),
                (true, None) => Err("no GPU memory on this rank".into()),
                (false, _) => Ok(Box::new(two_sided::HostBuffers::new(size.max(1))) as Box<dyn two_sided::Buffers>),
            };
            if any(world, bufs.is_err()) {
                let why = bufs.err().unwrap_or_else(|| "another rank could not allocate its buffers".into());
                return (Outcome::Skipped(format!("device buffers: {why}")), Vec::new());
            }
            let mut bufs = bufs.expect("checked above");
            let partner = match rank {
                0 => Some(peer as i32),
                r if r == peer => Some(0),
                _ => None,
            };
            two_sided::measure(world, point, partner, &mut *bufs, sampler, &mut local, &mut agree)
        }
        _ => {
            // The first k ranks run it (all of them unless the point says
            // fewer); the rest only join the barriers and agreements.
            let k = (point.ranks.unwrap_or(n as u32) as usize).clamp(1, n);
            let sub = if k == n {
                None
            } else {
                let color = if rank < k { Color::with_value(0) } else { Color::undefined() };
                Some(world.split_by_color(color))
            };
            let comm: Option<&SimpleCommunicator> = sub.as_ref().map_or(Some(world), |s| s.as_ref());
            let opn = point.op.as_str();
            let (sc, rc) = collective::counts(opn, size as u64, k as u64);
            let mut send = vec![0f32; sc.max(1)];
            let mut recv = vec![0f32; rc.max(1)];
            collective::fill_send(opn, rank, k, &mut send);
            let mut op = |_i: u64| {
                if let Some(c) = comm {
                    run_collective(c, opn, &send, &mut recv)
                }
            };
            let r = sampler
                .measure_synced(&mut |i, d| Ok(timed_max(world, &mut local, i, d, &mut op, &mut || {})), &mut agree);
            // Validate on fresh buffers: one call with known inputs.
            let mut send = vec![0f32; sc.max(1)];
            let mut recv = vec![-1f32; rc.max(1)];
            collective::fill_send(opn, rank, k, &mut send);
            if opn == "broadcast" {
                recv.copy_from_slice(&send);
            }
            let bad = comm.and_then(|c| {
                run_collective(c, opn, &send, &mut recv);
                collective::check_recv(opn, rank, k, &recv)
            });
            r.map(|m| (m, bad))
        }
    };
    finish_point(world, result, local)
}

/// A measured point's outcome, agreed by every rank (a validation failure
/// on one fails it on all), with this rank's own sample times.
fn finish_point(
    world: &SimpleCommunicator,
    result: std::result::Result<(crate::bench::Measurement, Option<String>), String>,
    mut local: Vec<f64>,
) -> (Outcome, Vec<f64>) {
    match result {
        Ok((m, bad)) => {
            let failed = any(world, bad.is_some());
            if failed {
                return (
                    Outcome::Failed(bad.unwrap_or_else(|| "validation failed on another rank".into())),
                    Vec::new(),
                );
            }
            // The last `k` local times are the samples (the rest were warm-up).
            let own = local.split_off(local.len().saturating_sub(m.samples.len()));
            (Outcome::Measured(m), own)
        }
        Err(e) => (Outcome::Failed(e), Vec::new()),
    }
}

fn run_collective(world: &SimpleCommunicator, op: &str, send: &[f32], recv: &mut [f32]) {
    match op {
        "all_reduce" => world.all_reduce_into(send, recv, SystemOperation::sum()),
        "all_gather" => world.all_gather_into(send, recv),
        "reduce_scatter" => world.reduce_scatter_block_into(send, recv, SystemOperation::sum()),
        "all_to_all" => world.all_to_all_into(send, recv),
        _ => {
            if world.rank() == 0 {
                recv.copy_from_slice(send);
            }
            world.process_at_rank(0).broadcast_into(recv)
        }
    }
}

/// The ranks of an MPI job as a source of rows. Every rank measures every
/// point; rank 0 gathers each point's rows from all ranks and alone writes
/// the archive. Collective decisions (stop, fail, interrupt) are agreed on
/// by all ranks, so they leave every loop together.
pub struct MpiSource {
    cfg: BenchConfig,
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
    me: RankInfo,
    gpu: Option<GpuAwareness>,
    /// This rank's GPU memory for device-buffer points, or why there is none.
    device: Result<DeviceSide, String>,
}

impl MpiSource {
    /// Initialize MPI for this process; a job of one rank is refused.
    pub fn new(cfg: BenchConfig) -> Result<Self> {
        let universe =
            mpi::initialize().ok_or_else(|| Error::config("mpi", "MPI was already initialized in this process"))?;
        let world = universe.world();
        let size = world.size();
        if size < 2 {
            return Err(Error::config(
                "PRESET|BENCH",
                format!(
                    "p2p and collective need at least 2 ranks, and this job has {size}; start it under a launcher, e.g. `mpirun -n 2 benchbook run {}`",
                    cfg.benches.iter().map(|b| b.name()).collect::<Vec<_>>().join(" ")
                ),
            ));
        }
        let me = RankInfo {
            rank: world.rank() as u32,
            // The node: Slurm's name for it under srun (several nodes may
            // share a host), else the host name.
            host: crate::host::placement::Placement::detect(&crate::host::hostname()).node,
            pid: std::process::id(),
            device: crate::host::cpu_model(),
        };
        Ok(MpiSource { cfg, _universe: universe, world, me, gpu: None, device: Err("not opened yet".into()) })
    }

    fn plan(&self) -> Vec<Point> {
        let size = self.world.size() as u32;
        let mut plan: Vec<Point> = Vec::new();
        if self.cfg.benches.contains(&Bench::P2p) {
            plan.extend(p2p::points(&self.cfg, size));
            if let Ok(d) = &self.device {
                plan.extend(p2p::device_points(&self.cfg, size, d.backend()));
            }
        }
        if self.cfg.benches.contains(&Bench::Collective) {
            plan.extend(collective::points(&self.cfg, size));
        }
        if self.cfg.benches.contains(&Bench::Links) {
            plan.extend(link_points::points(&self.cfg, size));
        }
        plan
    }
}

impl RowSource for MpiSource {
    fn describe(&mut self) -> Result<SourceInfo> {
        let cfg = &self.cfg;
        let ranks: Vec<RankInfo> = gather_bytes(&self.world, serde_json::to_vec(&self.me).expect("serializes"))
            .map(|all| all.iter().filter_map(|b| serde_json::from_slice(b).ok()).collect())
            .unwrap_or_default();
        // Asked once (it runs ompi_info), on rank 0, which writes the rows
        // that need it.
        (self.gpu, self.device) = gpu::open_device(&self.world, (self.me.rank == 0).then(gpu_awareness));
        let devices = ranks.iter().map(|r| format!("rank {} on {}", r.rank, r.host)).collect();
        let facts = MpiFacts {
            library: mpi::environment::library_version().unwrap_or_default().trim().to_string(),
            ranks,
            cuda_aware: self.gpu.and_then(|g| g.cuda),
            rocm_aware: self.gpu.and_then(|g| g.rocm),
            device_buffers: self.device.as_ref().map(|d| d.backend().to_string()).ok(),
        };
        let config = RunConfig::Mpi(Box::new(MpiConfig::of(cfg, facts)));
        let backends = vec![BackendInfo { name: "mpi".into(), probe: Probe::Available { devices }, facts: None }];
        Ok(SourceInfo { kind: RunOrigin::Native, config, backends, default_label: "mpi".into() })
    }

    fn writes_archive(&self) -> bool {
        self.me.rank == 0
    }

    /// Rank 0 names the run and tells everyone.
    fn agree_run_id(&mut self, proposed: String) -> Result<String> {
        let id_bytes = if self.me.rank == 0 { proposed.into_bytes() } else { Vec::new() };
        Ok(String::from_utf8_lossy(&broadcast_bytes(&self.world, id_bytes)).into_owned())
    }

    fn produce(&mut self, run_id: &str, sink: &mut dyn RowSink, progress: &dyn Progress) -> Result<RunOutcome> {
        let world = &self.world;
        let (rank, size) = (self.me.rank, world.size() as u32);
        let plan = self.plan();
        let meta = RowMeta {
            run_id: run_id.into(),
            backend: "mpi".into(),
            device: self.me.device.clone(),
            host: self.me.host.clone(),
            rank,
        };
        let schedule = Schedule::new(self.cfg.stop.clone(), run_id);
        let mut driver = MpiDriver {
            world,
            meta: &meta,
            sink,
            failure: None,
            device: self.device.as_ref().ok(),
            own: Vec::new(),
            link_times: BTreeMap::new(),
        };
        let mut outcome = schedule.run(&plan, 0, &mut driver, progress)?;
        if self.cfg.benches.contains(&Bench::Links) && !outcome.interrupted {
            let o =
                links::second_pass(&schedule, &mut driver, link_points::size(&self.cfg), plan.len() as u32, progress)?;
            outcome.add(o);
        }
        let sink = driver.sink;
        // Device buffers: recorded as skipped, with the reason, where they
        // cannot run (only rank 0 writes rows).
        let skipped = match &self.device {
            Err(why) => self.cfg.benches.iter().map(|b| (*b, device_buffer_reason(self.gpu, why))).collect(),
            Ok(_) => self.cfg.benches.iter().filter(|b| **b == Bench::Collective).map(|b| (*b, "device buffers: not measured. Collectives run on host buffers only; the device-buffer points are p2p's".to_string())).collect::<Vec<_>>(),
        };
        let interrupted = outcome.interrupted;
        for (i, (bench, why)) in skipped.into_iter().filter(|_| !interrupted).enumerate() {
            let p = Point {
                bench: bench.name().into(),
                op: "*".into(),
                variant: Some("device buffers".into()),
                ranks: Some(size),
                ..Point::default()
            };
            let step = Step::single((plan.len() + i) as u32);
            let rows = outcome_rows(&meta, step, &p, "none", &Outcome::Skipped(why));
            sink.write_point(rows)?;
            outcome.count(Status::Skipped);
        }
        Ok(outcome)
    }
}
