//! The CPU backend: always present. Its one device is the host CPU (all
//! sockets); thread counts are a parameter of each point.

use super::{Backend, Probe};
use crate::bench::{gemm::CpuGemm, memcpy::CpuMemcpy, stream::CpuStream, Benchmark};
use crate::vocab::benches::Bench;

pub struct Cpu;

impl Backend for Cpu {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn probe(&self) -> Probe {
        Probe::Available { devices: vec![crate::host::cpu_model()] }
    }

    fn implements(&self, bench: Bench) -> bool {
        Bench::cpu().any(|b| b == bench)
    }

    fn benchmarks(&self, cfg: &crate::bench::BenchConfig, _device: usize) -> Vec<Box<dyn Benchmark>> {
        cfg.benches
            .iter()
            .filter_map(|n| -> Option<Box<dyn Benchmark>> {
                match n {
                    Bench::Memcpy => Some(Box::new(CpuMemcpy::default())),
                    Bench::Stream => Some(Box::new(CpuStream::default())),
                    Bench::Gemm => Some(Box::new(CpuGemm)),
                    _ => None,
                }
            })
            .collect()
    }

    fn sensor(&self, _device: usize) -> crate::vocab::telemetry::SensorOpener {
        Box::new(|| {
            let cpus = crate::host::telemetry::allowed_cpus();
            Ok(Box::new(crate::host::telemetry::CpuSensor::at(std::path::Path::new("/"), cpus))
                as Box<dyn crate::vocab::telemetry::Sensor>)
        })
    }
}
