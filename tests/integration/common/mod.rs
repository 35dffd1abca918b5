//! Helpers shared by the integration tests.
#![allow(dead_code)]

use benchbook::prelude::*;

/// A sweep small enough to finish in seconds in a debug build.
pub fn tiny_config() -> BenchConfig {
    let mut cfg = BenchConfig::preset(Preset::Quick);
    // CPU only, so counts do not depend on whether this machine has a GPU
    // (tests/integration/backends.rs covers the GPU backends).
    cfg.backends = vec!["cpu".into()];
    cfg.benches = benchbook::bench::config::CPU_BENCHES.iter().map(|s| s.to_string()).collect();
    cfg.memcpy_sizes = vec![4096, 65536, 1 << 20];
    cfg.stream_sizes = vec![1 << 16];
    cfg.threads = vec![1, 2];
    cfg.gemm_shapes = vec![[32, 32, 32], [48, 40, 24]];
    cfg.gemm_dtypes = vec!["f32".into(), "f64".into()];
    cfg.stop = StopRule {
        warmup_seconds: 0.005,
        min_samples: 3,
        min_seconds: 0.005,
        max_seconds: 0.03,
        target_rsd: 0.005,
        sample_seconds: 0.0005,
        max_samples: 200,
    };
    cfg
}

pub fn tiny_run(archive: &Archive, label: Option<&str>) -> RunResult {
    run(archive, &tiny_config(), label, &benchbook::vocab::progress::Silent).expect("tiny run")
}

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_benchbook")
}
