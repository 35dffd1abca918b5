//! The CPU backend: always present. Its one device is the host CPU (all
//! sockets); thread counts are a parameter of each point.

use super::{Backend, Probe};
use crate::bench::{gemm::CpuGemm, memcpy::CpuMemcpy, stream::CpuStream, Benchmark};

pub struct Cpu;

impl Backend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn probe(&self) -> Probe {
        Probe::Available { devices: vec![crate::host::cpu_model()] }
    }

    fn implements(&self, bench: &str) -> bool {
        crate::bench::config::CPU_BENCHES.contains(&bench)
    }

    fn benchmarks(&self, names: &[String], _device: usize) -> Vec<Box<dyn Benchmark>> {
        names
            .iter()
            .filter_map(|n| -> Option<Box<dyn Benchmark>> {
                match n.as_str() {
                    "memcpy" => Some(Box::new(CpuMemcpy::default())),
                    "stream" => Some(Box::new(CpuStream::default())),
                    "gemm" => Some(Box::new(CpuGemm)),
                    _ => None,
                }
            })
            .collect()
    }
}
