//! `run gpu`'s PyTorch pass: what users run instead of benchbook (PyTorch
//! `copy_`, timed as seed 001 times it; `torch.matmul`, `F.linear` and
//! `torch._scaled_mm`), measured on the same GPU right after the sweep by
//! `scripts/torch_reference.py`, and imported as a run of its own, so a
//! report and `compare` can put the two side by side. The script is
//! embedded in the binary: a GPU node with PyTorch but without this
//! repository runs it too. Without python3 or a CUDA-enabled PyTorch the
//! pass is not run, and says why.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{import_from, RunResult};
use crate::archive::Archive;
use crate::bench::BenchConfig;
use crate::error::Result;
use crate::import::ImportSource;
use crate::vocab::progress::Progress;

/// `scripts/torch_reference.py`, as this binary was built with it.
pub const SCRIPT: &str = include_str!("../../scripts/torch_reference.py");

/// What became of the PyTorch pass.
pub enum TorchPass {
    /// The run its results became, and the files it left (its log).
    Imported { run: RunResult, log: PathBuf },
    /// Why it did not run or gave nothing to import.
    NotRun(String),
}

/// Run `cmd` for at most `seconds`, or until an interrupt is requested;
/// then stop it as `run exec` stops a command (SIGINT first, so the script
/// keeps what it wrote).
fn run_within(cmd: &mut Command, seconds: f64) -> std::result::Result<std::process::ExitStatus, String> {
    let mut child = cmd.spawn().map_err(|e| format!("could not start {:?}: {e}", cmd.get_program()))?;
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Ok(status),
            Ok(None) if start.elapsed().as_secs_f64() > seconds || crate::vocab::interrupt::requested() => {
                super::exec::stop(&mut child);
                return Err(format!("stopped after {:.0} s", start.elapsed().as_secs_f64()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(50)),
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// The `--shapes` text of the script for `cfg`'s GPU shapes.
fn shapes_arg(cfg: &BenchConfig) -> String {
    cfg.gpu_gemm_shapes.iter().map(|[m, n, k]| format!("{m}x{n}x{k}")).collect::<Vec<_>>().join(",")
}

/// Measure PyTorch on this GPU within `seconds` and import what it wrote
/// into `archive`, labelled `label`. `work` is a fresh folder for the
/// script, its results and its log.
pub fn torch_pass(
    archive: &Archive,
    cfg: &BenchConfig,
    label: &str,
    seconds: f64,
    work: &Path,
    progress: &dyn Progress,
) -> Result<TorchPass> {
    let probe = run_within(
        Command::new("python3")
            .args(["-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"])
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
        60.0,
    );
    match probe {
        Ok(s) if s.success() => {}
        Ok(s) if s.code() == Some(3) => return Ok(TorchPass::NotRun("PyTorch sees no CUDA GPU".into())),
        Ok(_) => return Ok(TorchPass::NotRun("python3 cannot import torch".into())),
        Err(e) => return Ok(TorchPass::NotRun(format!("no python3 to run PyTorch: {e}"))),
    }
    std::fs::create_dir_all(work).map_err(|e| crate::error::Error::io(work, e))?;
    let script = work.join("torch_reference.py");
    std::fs::write(&script, SCRIPT).map_err(|e| crate::error::Error::io(&script, e))?;
    let log = work.join("torch_reference.log");
    let out = std::fs::File::create(&log).map_err(|e| crate::error::Error::io(&log, e))?;
    let err = out.try_clone().map_err(|e| crate::error::Error::io(&log, e))?;
    let max = cfg.memcpy_sizes.iter().max().copied().unwrap_or(1 << 30);
    let dtypes = cfg.gpu_gemm_dtypes.iter().map(|d| d.name()).collect::<Vec<_>>().join(",");
    progress.point_started("PyTorch reference (scripts/torch_reference.py)");
    // The script bounds itself; the kill is the backstop.
    let status = run_within(
        Command::new("python3")
            .arg(&script)
            .args(["--out", &work.to_string_lossy(), "--max-size", &max.to_string(), "--seconds", "0.1"])
            .args(["--shapes", &shapes_arg(cfg), "--dtypes", &dtypes, "--rounds", "5"])
            .args(["--deadline", &format!("{:.0}", seconds * 0.9)])
            .env("PYTHONUNBUFFERED", "1")
            .stdout(out)
            .stderr(err),
        seconds + 30.0,
    );
    let files: Vec<PathBuf> =
        ["torch_memcpy.json", "torch_gemm.json"].iter().map(|f| work.join(f)).filter(|f| f.is_file()).collect();
    let ran = match &status {
        Ok(s) if s.success() => "ran".to_string(),
        Ok(s) => format!("exited with {s}"),
        Err(e) => e.clone(),
    };
    if files.is_empty() {
        return Ok(TorchPass::NotRun(format!(
            "scripts/torch_reference.py {ran} and wrote nothing to import (its log: {})",
            log.display()
        )));
    }
    let (run, _) = import_from(archive, ImportSource::new(files, None), Some(label), progress)?;
    Ok(TorchPass::Imported { run, log })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_script_takes_the_flags_the_pass_gives_it() {
        for flag in ["--out", "--max-size", "--seconds", "--shapes", "--dtypes", "--rounds", "--deadline"] {
            assert!(SCRIPT.contains(&format!("\"{flag}\"")), "torch_reference.py has no {flag}");
        }
        let mut cfg = BenchConfig::preset(crate::bench::Preset::Gpu);
        cfg.gpu_gemm_shapes = vec![[8192, 8192, 8192], [16384, 8192, 1280]];
        assert_eq!(shapes_arg(&cfg), "8192x8192x8192,16384x8192x1280");
    }

    #[test]
    fn a_command_past_its_time_is_stopped() {
        let r = run_within(Command::new("sleep").arg("5"), 0.2);
        assert!(r.unwrap_err().contains("stopped after"));
        assert!(run_within(&mut Command::new("true"), 5.0).unwrap().success());
    }
}
