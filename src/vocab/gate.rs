//! A `fleet gate` verdict as its run's manifest records it (manifest v9):
//! the words every layer shares, so the archive reads a verdict without
//! knowing how it was judged.

use serde::{Deserialize, Serialize};

/// A `fleet gate` verdict run (manifest v9): which node of which fleet was
/// gated, on which passes (run ids), by which rule, and what it decided.
/// Its rows are the verdict's figures, one metric row per point and line.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateRecord {
    pub fleet: String,
    pub node: String,
    /// The suite's runs this verdict judged: the first pass, then the retest.
    pub passes: Vec<String>,
    /// `pass`, `bad` or `not_judged`.
    pub verdict: String,
    /// The one line Slurm shows as the drain reason.
    pub reason: String,
    /// δ and the gate's error rate.
    pub threshold: f64,
    pub alpha: f64,
    /// The floors file, where not the built-in one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub floors: Option<String>,
    /// What was done in Slurm: `drained`, `resumed`, or why not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
}

/// A gate verdict run's configuration.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GateConfig {
    pub gate: GateRecord,
}

/// A tool the gate runs and holds against a fixed floor, as NHC runs
/// nccl-tests and perftest (`check_nccl_allreduce 460.0`, `check_ib_bw_gdr
/// 375`): `FORMAT:GBPS:COMMAND ARGS` (`fleet gate --tool-check`). Its
/// output is imported as `FORMAT` (any `benchbook import` format), and each
/// curve's figure at its largest size (bus bandwidth for a collective,
/// else the bytes its tool counts) must reach `floor_gbps` (10^9 bytes/s).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCheck {
    pub format: String,
    pub floor_gbps: f64,
    /// The command and its arguments, run directly (no shell).
    pub command: Vec<String>,
}

impl ToolCheck {
    /// `nccl-tests:460:all_reduce_perf -b 16G -e 16G -g 8`, or why not.
    pub fn parse(spec: &str) -> Result<ToolCheck, String> {
        let shape = "FORMAT:GBPS:COMMAND (e.g. `nccl-tests:460:all_reduce_perf -b 16G -e 16G -g 8`)";
        let mut parts = spec.splitn(3, ':');
        let (Some(format), Some(floor), Some(command)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("`{spec}` is not {shape}"));
        };
        let floor_gbps: f64 = floor
            .trim()
            .parse()
            .ok()
            .filter(|f: &f64| f.is_finite() && *f > 0.0)
            .ok_or_else(|| format!("`{floor}` in `{spec}` is not a floor in GB/s (a positive number); {shape}"))?;
        let command: Vec<String> = command.split_whitespace().map(String::from).collect();
        if format.trim().is_empty() || command.is_empty() {
            return Err(format!("`{spec}` names no format or no command; {shape}"));
        }
        Ok(ToolCheck { format: format.trim().to_string(), floor_gbps, command })
    }

    /// `nccl-tests (all_reduce_perf)`: how reasons name it.
    pub fn name(&self) -> String {
        let program = self.command[0].rsplit('/').next().unwrap_or(&self.command[0]);
        format!("{} ({program})", self.format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_check_reads_format_floor_and_command() {
        let t = ToolCheck::parse("nccl-tests:460:all_reduce_perf -b 16G  -e 16G -g 8").unwrap();
        assert_eq!((t.format.as_str(), t.floor_gbps), ("nccl-tests", 460.0));
        assert_eq!(t.command, ["all_reduce_perf", "-b", "16G", "-e", "16G", "-g", "8"]);
        assert_eq!(t.name(), "nccl-tests (all_reduce_perf)");
        // A command may hold colons of its own.
        assert_eq!(ToolCheck::parse("perftest:46.9:ib_write_bw -d mlx5_ib0:1").unwrap().command[2], "mlx5_ib0:1");
        for bad in
            ["nccl-tests", "nccl-tests:460", "nccl-tests:fast:x", "nccl-tests:-1:x", ":460:x", "nccl-tests:460: "]
        {
            assert!(ToolCheck::parse(bad).is_err(), "{bad}");
        }
    }
}
