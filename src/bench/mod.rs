//! Benchmarks: what to measure (axes → points) and how (the sampler), never
//! where the numbers go. A [`Benchmark`] turns a [`BenchConfig`] into points
//! and measures one point at a time; the [`runner`] turns outcomes into
//! [`Row`]s and hands them to a [`RowSink`] after every point, so an
//! interrupted run loses at most the point in flight.

pub mod collective;
pub mod config;
pub mod dtype;
pub mod gemm;
pub mod gpu;
pub mod links;
pub mod memcpy;
pub mod p2p;
pub mod runner;
pub mod sampler;
pub mod steps;
pub mod stream;
pub mod team;
pub mod telemetry;

pub use crate::vocab::rows::{RowSink, RunOutcome};
pub use config::{BenchConfig, Preset};
pub use runner::{run_benchmarks, RowMeta};
pub use sampler::{Measurement, Sampler, StopReason, StopRule};

use crate::vocab::rows::Point;

/// The result of measuring one point.
#[derive(Debug)]
pub enum Outcome {
    Measured(Measurement),
    /// The point cannot run here (too little memory, no device, ...).
    Skipped(String),
    /// The point ran but its result was wrong or an API call failed.
    Failed(String),
}

impl Outcome {
    /// The status its rows get.
    pub fn status(&self) -> crate::vocab::rows::Status {
        use crate::vocab::rows::Status;
        match self {
            Outcome::Measured(_) => Status::Measured,
            Outcome::Skipped(_) => Status::Skipped,
            Outcome::Failed(_) => Status::Failed,
        }
    }
}

/// A benchmark on one backend and device.
pub trait Benchmark {
    /// Name as typed on the command line and stored in `bench`.
    fn name(&self) -> &'static str;
    /// The clock samples are timed with (stored in `timer`).
    fn timer(&self) -> &'static str {
        "steady_clock"
    }
    /// The points this configuration asks for, in the order they run.
    fn points(&self, cfg: &BenchConfig) -> Vec<Point>;
    /// Measure one point.
    fn run(&mut self, point: &Point, sampler: &Sampler) -> Outcome;
}

/// A pointer that may cross into team threads. Each thread touches only its
/// own chunk, which is what makes sharing it sound.
#[derive(Clone, Copy)]
pub(crate) struct SharedPtr<T>(pub *mut T);
unsafe impl<T> Send for SharedPtr<T> {}
unsafe impl<T> Sync for SharedPtr<T> {}

/// Allocate `len` elements filled with `value`, or say why not.
pub(crate) fn try_alloc<T: Clone>(len: usize, value: T) -> Result<Vec<T>, String> {
    let mut v = Vec::new();
    v.try_reserve_exact(len).map_err(|e| {
        format!(
            "could not allocate {}: {e}",
            crate::vocab::units::format_bytes((len * std::mem::size_of::<T>()) as u64)
        )
    })?;
    v.resize(len, value);
    Ok(v)
}

/// Page size assumed for buffer placement.
pub(crate) const PAGE_BYTES: usize = 4096;

/// A buffer whose first element sits `offset_bytes` past a page boundary.
/// Benchmarks place their buffers explicitly so that results do not depend
/// on where malloc happens to put them: on some CPUs (AMD Zen's `rep movsb`,
/// used by glibc's memcpy) a copy whose source and destination are equal
/// modulo 4 KiB runs several times slower.
pub(crate) struct AlignedBuf<T> {
    storage: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: Copy> AlignedBuf<T> {
    pub fn new(len: usize, offset_bytes: usize, fill: T) -> Result<Self, String> {
        let size = std::mem::size_of::<T>().max(1);
        debug_assert_eq!(offset_bytes % size, 0);
        let extra = (PAGE_BYTES + offset_bytes).div_ceil(size) + 1;
        let storage = try_alloc(len + extra, fill)?;
        let addr = storage.as_ptr() as usize;
        let aligned = (addr + PAGE_BYTES - 1) & !(PAGE_BYTES - 1);
        let start = (aligned - addr + offset_bytes) / size;
        Ok(AlignedBuf { storage, start, len })
    }

    pub fn as_mut_slice(&mut self) -> &mut [T] {
        &mut self.storage[self.start..self.start + self.len]
    }
}

/// Place a benchmark's buffers anew for every step (one point in one round),
/// allocating the new set while the previous one is still held when memory
/// allows. Rounds of a point then run on different pages, as separate runs
/// do: reusing one placement for every round made the spread between rounds
/// smaller than the spread between runs (cache-set conflicts of a 4-32 MiB
/// buffer depend on which physical pages it got). `bytes` is the new set's
/// size; `alloc` makes it. Returns a skip reason when it does not fit.
pub(crate) fn place_anew<B>(
    slot: &mut Option<B>,
    bytes: u64,
    alloc: impl FnOnce() -> Result<B, String>,
) -> Result<(), String> {
    // Available memory already excludes the set still held.
    if memory_check(bytes).is_some() {
        *slot = None; // no room for both: free the old set first
        if let Some(why) = memory_check(bytes) {
            return Err(why);
        }
    }
    let fresh = alloc()?;
    *slot = Some(fresh); // the old set is freed only now
    Ok(())
}

/// Skip reason when `bytes` would not fit in available memory (keeping 10 %
/// headroom so the benchmark never pushes the machine into swap or OOM).
/// A cgroup limit (container, Slurm job) counts: its room is named.
pub(crate) fn memory_check(bytes: u64) -> Option<String> {
    let (avail, cgroup) = crate::host::available_memory()?;
    if bytes as f64 <= 0.9 * avail as f64 {
        return None;
    }
    let fmt = crate::vocab::units::format_bytes;
    let limit = cgroup
        .map(|c| format!(" under the cgroup limit of {} ({})", fmt(c.limit_bytes), c.file.display()))
        .unwrap_or_default();
    Some(format!("needs {} of buffers, only {} of memory is available{limit}", fmt(bytes), fmt(avail)))
}
