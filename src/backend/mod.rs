//! Backends: the machines a benchmark can run on. Each backend says whether
//! it is usable here (and why not), names its devices, and hands out the
//! benchmarks it implements. CPU is always present; CUDA, HIP and MPI
//! backends plug in behind Cargo features with the same surface.

pub mod cpu;
#[cfg(feature = "mpi")]
pub mod mpi;

use crate::bench::Benchmark;

/// What a backend found on this machine.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Probe {
    /// Usable, with these device names.
    Available { devices: Vec<String> },
    /// Not usable here; every benchmark on it is recorded as skipped with
    /// this reason.
    Unavailable { reason: String },
}

/// One kind of hardware benchbook can measure.
pub trait Backend {
    /// `cpu`, `cuda`, `hip`, `mpi`: stored in the `backend` column.
    fn name(&self) -> &'static str;
    /// Look for usable devices, never panicking when a driver is absent.
    fn probe(&self) -> Probe;
    /// The benchmarks this backend implements among `names`, for `device`.
    fn benchmarks(&self, names: &[String], device: usize) -> Vec<Box<dyn Benchmark>>;
}

/// Every backend compiled into this build.
pub fn all() -> Vec<Box<dyn Backend>> {
    vec![Box::new(cpu::Cpu)]
}
