//! A throughput whose log names no GPU, set against every GPU the spec
//! book knows: a reader of "880 TFLOP/s per GPU" asks on what, and the
//! share of each known GPU's dense 16-bit peak says which GPUs the figure
//! is possible on (a share above 100 % is not) and which would need a
//! utilisation far beyond what training reaches.

use serde::Serialize;

use super::metrics::origin;
use crate::analysis::workload::MetricStat;
use crate::vocab::metrics::Better;

/// One figure against one known GPU's dense bf16/fp16 peak.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PeakShare {
    pub metric: String,
    /// The file or run it came from.
    pub from: String,
    /// The figure: the best median of that metric in that file or run.
    pub value: f64,
    pub unit: String,
    pub gpu: String,
    /// Dense bf16 (or fp16) peak, TFLOP/s.
    pub peak: f64,
    /// value / peak.
    pub share: f64,
}

/// Whether a unit is a rate of tera floating-point operations (per GPU
/// or in all).
fn is_tflops(unit: &str) -> bool {
    unit.starts_with("TFLOP/s")
}

/// Per file or run whose TFLOP/s metric names no device, its best figure
/// against every GPU of `gpu_peaks` (name, dense bf16 or else fp16 peak:
/// [`crate::analysis::Catalog::gpu_peaks`]), in that order.
pub fn unnamed_peak_shares(stats: &[MetricStat], gpu_peaks: &[(String, f64)]) -> Vec<PeakShare> {
    let mut best: Vec<(String, String, String, f64)> = Vec::new();
    for s in stats.iter().filter(|s| is_tflops(&s.unit) && s.better == Better::Higher) {
        if !crate::analysis::catalog::unnamed(&s.device) {
            continue;
        }
        let from = origin(s);
        match best.iter_mut().find(|b| b.0 == s.metric && b.1 == from) {
            Some(b) => b.3 = b.3.max(s.median),
            None => best.push((s.metric.clone(), from, s.unit.clone(), s.median)),
        }
    }
    let mut out = Vec::new();
    for (metric, from, unit, value) in best {
        for (gpu, peak) in gpu_peaks {
            out.push(PeakShare {
                metric: metric.clone(),
                from: from.clone(),
                value,
                unit: unit.clone(),
                gpu: gpu.clone(),
                peak: *peak,
                share: value / peak,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stat(device: &str, v: f64) -> MetricStat {
        let mut s = super::super::metrics::tests::point("gpt3_7b.txt", 1, v);
        s.device = device.into();
        s
    }

    #[test]
    fn an_unnamed_gpus_tflops_is_set_against_every_known_peak() {
        let book = crate::analysis::SpecBook::builtin();
        let peaks = crate::analysis::Catalog::build(&[], &[], &book, None).gpu_peaks;
        // The fixstars GPT-3 7B log: 880 TFLOP/s/GPU, no GPU named.
        let shares = unnamed_peak_shares(&[stat("unknown", 812.5), stat("unknown", 880.0)], &peaks);
        let h100 = shares.iter().find(|s| s.gpu.contains("H100")).expect("H100 is in the book");
        assert_eq!(h100.value, 880.0, "the best figure of the file");
        assert!((h100.share - 880.0 / 989.4).abs() < 1e-9);
        // Above an A100's whole dense peak: impossible there.
        assert!(shares.iter().any(|s| s.gpu.contains("A100") && s.share > 1.0));
        assert_eq!(shares.len(), book.specs.values().filter(|s| s.peak_tflops("bf16").is_some()).count());
        // A named device is held against its own spec elsewhere.
        assert!(unnamed_peak_shares(&[stat("NVIDIA H100 80GB HBM3", 880.0)], &peaks).is_empty());
    }
}
