//! benchbook's CUDA backend end to end against a stand-in driver, cuBLAS
//! and cuBLASLt (`tests/fixtures/fake_cuda/*.c`, built here with `cc`): two
//! "GPUs" in host memory, every driver call the copy benchmarks make,
//! executed on the CPU. It checks the backend's real code (cudarc's dynamic
//! loading, contexts, streams, events, peer access, pinned memory, facts,
//! validation, rows, report), not any GPU's speed; the times are host
//! memcpy times and are thrown away with the temporary archive.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use benchbook::prelude::*;

/// Build the stand-in `libcuda.so`, `libcublas.so`, `libcublasLt.so` and
/// NVML (`libnvidia-ml.so.1`) into `dir`.
pub(crate) fn build_fake_driver(dir: &Path) {
    for lib in ["libcuda", "libcublas", "libcublasLt", "libnvidia-ml"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/fake_cuda/{lib}.c"));
        let o = Command::new("cc")
            .args(["-shared", "-fPIC", "-O2", "-o"])
            .arg(dir.join(format!("{lib}.so")))
            .arg(&src)
            .arg("-lm")
            .output()
            .expect("a C compiler (`cc`) to build the stand-in driver");
        assert!(o.status.success(), "cc failed: {}", String::from_utf8_lossy(&o.stderr));
    }
    // NVML is loaded by its soname.
    std::fs::rename(dir.join("libnvidia-ml.so"), dir.join("libnvidia-ml.so.1")).unwrap();
}

pub(crate) fn bb(lib: &Path, archive: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut c = Command::new(common::bin());
    c.args(args).arg("--archive").arg(archive).env("LD_LIBRARY_PATH", lib);
    for (k, v) in envs {
        c.env(k, v);
    }
    c.output().unwrap()
}

const TINY: [&str; 10] =
    ["--backend", "cuda", "--sizes", "4K,64K", "--warmup", "0.002", "--min-time", "0.002", "--max-time", "0.02"];

pub(crate) fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let lib = tmp.path().join("lib");
    std::fs::create_dir_all(&lib).unwrap();
    build_fake_driver(&lib);
    let archive = tmp.path().join("data");
    (tmp, lib, archive)
}

#[test]
fn the_cuda_backend_runs_every_copy_benchmark_through_the_driver_api() {
    let (_tmp, lib, archive) = setup();
    let o = bb(&lib, &archive, &["backends", "--json"], &[]);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let cuda = v.as_array().unwrap().iter().find(|b| b["name"] == "cuda").unwrap();
    assert_eq!(cuda["probe"]["state"], "available", "{cuda}");
    assert_eq!(cuda["facts"]["devices"][1]["name"], "Fake CUDA GPU 1");
    assert_eq!(cuda["facts"]["devices"][0]["arch"], "sm_90");
    assert_eq!(cuda["facts"]["peer_access"][0][1], "enabled");

    let mut args = vec!["run", "memcpy", "memcpy-peer", "h2d", "d2h", "--cache", "warm,cold", "--quiet"];
    args.extend(TINY);
    let o = bb(&lib, &archive, &args, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = Archive::new(&archive).resolve("latest").unwrap();
    let rows = run.rows().unwrap();
    let m = run.manifest().unwrap();
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(m.counts.failed, 0, "{:?}", rows.iter().find(|r| r.status == Status::Failed));
    let measured: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Measured).collect();
    assert!(measured.iter().all(|r| r.backend == "cuda" && r.timer.as_deref() == Some("cuda_event")));
    // Both GPUs ran; both pairs, both directions; pinned and pageable; warm and cold.
    for device in ["GPU 0: Fake CUDA GPU 0", "GPU 1: Fake CUDA GPU 1"] {
        assert!(measured.iter().any(|r| r.device == device && r.params.bench == "memcpy"), "{device}");
    }
    for pair in ["0->1", "1->0"] {
        for op in ["copy", "copy_bidir"] {
            assert!(
                measured.iter().any(|r| r.params.peer.as_deref() == Some(pair) && r.params.op == op),
                "{pair} {op}"
            );
        }
    }
    for (bench, variant) in [("h2d", "pinned"), ("h2d", "pageable"), ("d2h", "pinned"), ("memcpy", "cold")] {
        assert!(measured.iter().any(|r| r.params.bench == bench && r.params.variant.as_deref() == Some(variant)));
    }
    // The copy kernel cannot load on the stand-in: skipped, with the driver's answer.
    let kernel: Vec<&Row> = rows.iter().filter(|r| r.params.method.as_deref() == Some("sm_kernel")).collect();
    assert!(!kernel.is_empty() && kernel.iter().all(|r| r.status == Status::Skipped));
    // The report has its GPU sections, with the devices' facts.
    let reports = archive.join("reports");
    let o = Command::new(common::bin())
        .args(["report", "latest", "--format", "md", "--out"])
        .arg(&reports)
        .arg("--archive")
        .arg(&archive)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(reports.join("report.md")).unwrap();
    for want in ["### Device memcpy", "### Peer memcpy", "### Host ↔ device", "Fake CUDA GPU 1", "sm\\_90"] {
        assert!(md.contains(want), "no `{want}`");
    }
}

#[test]
fn a_driver_that_corrupts_copies_fails_validation() {
    let (_tmp, lib, archive) = setup();
    let mut args = vec!["run", "memcpy", "--copy-methods", "copy_engine", "--quiet"];
    args.extend(TINY);
    let o = bb(&lib, &archive, &args, &[("FAKE_CUDA_BREAK_COPIES", "1")]);
    // Exit 1: the run completed, and some points failed.
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = Archive::new(&archive).resolve("latest").unwrap().rows().unwrap();
    assert!(!rows.is_empty());
    for r in &rows {
        assert_eq!(r.status, Status::Failed, "{r:?}");
        assert!(r.note.as_deref().unwrap().contains("expected"), "{:?}", r.note);
    }
}

#[test]
fn gemm_goes_through_cublaslt_in_every_layout_and_is_validated() {
    let (_tmp, lib, archive) = setup();
    let mut args = vec![
        "run",
        "gemm",
        "--gpu-shapes",
        "64x48x96",
        "--gpu-dtypes",
        "f32,tf32,bf16,f16,fp8",
        "--layout",
        "nn,tn,nt",
        "--fp8-accum",
        "promoted,fast",
        "--gemm-algos",
        "4",
        "--quiet",
    ];
    args.extend(TINY);
    let o = bb(&lib, &archive, &args, &[]);
    // The stand-in cuBLASLt has no f16: those points fail, so the exit is
    // 1, and --quiet still names each failed point and why.
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("error: gemm f16 64×48×96 (nn) failed: cublasLtMatmul (f16) failed"), "{err}");
    assert!(!err.contains("complete run"), "--quiet prints no summary: {err}");
    let rows = Archive::new(&archive).resolve("latest").unwrap().rows().unwrap();
    let mut settings = std::collections::BTreeSet::new();
    for r in &rows {
        let dtype = r.params.dtype.as_deref().unwrap();
        assert_eq!(r.params.method.as_deref(), Some("cublaslt"));
        settings.insert((dtype.to_string(), r.params.axes.clone().unwrap()));
        if dtype == "f16" {
            assert_eq!(r.status, Status::Failed);
            assert!(r.note.as_deref().unwrap().contains("CUBLAS_STATUS_NOT_SUPPORTED"), "{:?}", r.note);
        } else {
            // Measured means the 32 checked entries of C matched the reference.
            assert_eq!(r.status, Status::Measured, "{dtype}: {:?}", r.note);
            let (m, n, k) = (r.params.m.unwrap() as f64, r.params.n.unwrap() as f64, r.params.k.unwrap() as f64);
            assert_eq!(r.params.flops, Some(2.0 * m * n * k));
            // Three cuBLASLt candidates offered, and cublasGemmEx beside
            // them but for FP8, each timed; the note names the one kept.
            let note = r.note.as_deref().unwrap();
            let offered = if dtype == "fp8" { 3 } else { 4 };
            assert!(note.contains(&format!("fastest of {offered} candidates timed")), "{note}");
            // The stand-in's algorithms have ids 100, 101, 102.
            assert!(note.contains("algo 10") || note.contains("cublasGemmEx"), "{note}");
        }
    }
    // Every layout but for FP8, which runs TN in both accumulation modes.
    assert!(settings.contains(&("bf16".into(), r#"{"layout":"nt"}"#.into())), "{settings:?}");
    assert!(settings.contains(&("fp8".into(), r#"{"accum":"fast","layout":"tn"}"#.into())), "{settings:?}");
    assert!(!settings.iter().any(|(d, a)| d == "fp8" && a.contains("nn")), "{settings:?}");
    assert_eq!(settings.len(), 4 * 3 + 2);
    // `backends` names the cuBLASLt it loaded.
    let o = bb(&lib, &archive, &["backends"], &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("cublaslt: 13.1.0 (") && text.contains("libcublasLt.so"), "{text}");
}

#[test]
fn run_gpu_goes_end_to_end_to_a_report_through_the_driver_api() {
    // `run gpu` on the stand-in driver, its sizes and shapes cut to what
    // host memory computes in seconds: the preset's benchmarks on the GPU
    // backend only, within its budget, to a report; no PyTorch pass
    // (--torch-seconds 0).
    let (tmp, lib, archive) = setup();
    let reports = tmp.path().join("reports");
    let mut args = vec!["run", "gpu", "--sizes", "4K,64K", "--gpu-shapes", "64x48x96", "--gpu-dtypes", "bf16,fp8"];
    // `--budget-prefers points`: every point measured, in fewer rounds if
    // this machine is slow (the driver path is under test here, not the
    // budget; a budget that keeps 3 rounds skips what it cannot afford).
    args.extend(["--budget", "20", "--budget-prefers", "points", "--torch-seconds", "0", "--report", "--reports-dir"]);
    args.push(reports.to_str().unwrap());
    let o = bb(&lib, &archive, &args, &[]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let run = Archive::new(&archive).resolve("latest").unwrap();
    let rows = run.rows().unwrap();
    let benches: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.params.bench.as_str()).collect();
    assert_eq!(benches.into_iter().collect::<Vec<_>>(), ["d2h", "gemm", "h2d", "memcpy"]);
    assert!(rows.iter().all(|r| r.backend == "cuda"), "the GPU preset runs the GPU backends only");
    // The stand-in has no NVRTC: the SM kernel's points say so; the rest measured.
    for r in &rows {
        if r.params.method.as_deref() == Some("sm_kernel") {
            assert_eq!(r.status, Status::Skipped, "{r:?}");
            assert!(r.note.as_deref().unwrap().contains("NVRTC"), "{:?}", r.note);
        } else {
            assert_eq!(r.status, Status::Measured, "{:?}", r.note);
        }
    }
    // A host link is crossed once.
    let h2d = rows.iter().find(|r| r.params.bench == "h2d").unwrap();
    assert_eq!(h2d.params.bytes_moved, h2d.params.bytes_copied);
    let md = std::fs::read_to_string(reports.join(&run.id).join("report.md")).unwrap();
    assert!(md.contains("### GPU GEMM") && md.contains("### Host ↔ device"), "{md}");
    assert!(err.contains("report:"), "{err}");
}

#[test]
fn nvml_telemetry_reaches_every_row_and_a_hostile_nvml_loses_nothing() {
    let (_tmp, lib, archive) = setup();
    let mut args = vec!["run", "memcpy", "gemm", "--gpu-shapes", "64x48x96", "--gpu-dtypes", "bf16", "--quiet"];
    args.extend(TINY);
    let o = bb(&lib, &archive, &args, &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = Archive::new(&archive).resolve("latest").unwrap();
    let rows = run.rows().unwrap();
    let measured: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Measured).collect();
    assert!(measured.iter().any(|r| r.params.bench == "gemm"));
    for r in &measured {
        let t = r.telemetry.unwrap_or_else(|| panic!("no telemetry: {r:?}"));
        assert_eq!((t.clock_mhz, t.mem_clock_mhz, t.temperature_c), (Some(1755.0), Some(2619.0), Some(51.0)));
        assert_eq!(t.throttle, Some(0x4), "1755 MHz is above 75 % of 1980: not flagged");
        // Rounds of a few ms: too short for the energy counter.
        assert_eq!(t.power_w, None, "{t:?}");
    }
    let m = run.manifest().unwrap();
    assert_eq!(m.telemetry.len(), 2, "one sampler per GPU: {:?}", m.telemetry);
    // A round of 0.6 s: its power from the energy counter (300 W of wall
    // time), not the power reading (also 300 W, but averaged by NVML).
    let long =
        ["run", "memcpy", "--backend", "cuda", "--sizes", "4K", "--copy-methods", "copy_engine", "--rounds", "1"];
    let o = bb(&lib, &archive, &[&long[..], &["--min-time", "0.6", "--max-time", "0.8", "--quiet"]].concat(), &[]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = Archive::new(&archive).resolve("latest").unwrap().rows().unwrap();
    let t = rows.iter().find(|r| r.status == Status::Measured).and_then(|r| r.telemetry).unwrap();
    assert!((t.power_w.expect("a power over 0.6 s") - 300.0).abs() < 3.0, "{t:?}");
    assert!(m.telemetry[0].sensor.as_deref().unwrap().contains("NVML"), "{:?}", m.telemetry);

    for (mode, words) in [("fail", "every NVML reading failed"), ("hang", "did not answer")] {
        let o = bb(&lib, &archive, &args, &[("FAKE_NVML", mode)]);
        assert!(o.status.success(), "{mode}: {}", String::from_utf8_lossy(&o.stderr));
        let hostile = Archive::new(&archive).resolve("latest").unwrap();
        let m = hostile.manifest().unwrap();
        assert_eq!((m.counts.measured, m.counts.failed), (run.manifest().unwrap().counts.measured, 0), "{mode}");
        assert!(hostile.rows().unwrap().iter().all(|r| r.telemetry.is_none()), "{mode}");
        assert!(m.telemetry.iter().all(|t| t.notes.iter().any(|n| n.contains(words))), "{mode}: {:?}", m.telemetry);
    }
}

#[test]
fn run_exec_records_gpu_energy_and_tokens_per_joule() {
    let (tmp, lib, archive) = setup();
    let script = tmp.path().join("train.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nprintf '{\"metric\":\"loss\",\"value\":2.5,\"unit\":\"1\",\"params\":{\"model\":\"tiny\",\"step\":1}}\\n' >> \"$BENCHBOOK_METRICS_FILE\"\n\
         sleep 0.7\n\
         printf '{\"metric\":\"tokens_per_s\",\"value\":60000,\"unit\":\"tokens/s\",\"params\":{\"model\":\"tiny\"}}\\n' >> \"$BENCHBOOK_METRICS_FILE\"\n",
    )
    .unwrap();
    std::process::Command::new("chmod").arg("+x").arg(&script).status().unwrap();
    // `--archive` before the command (bb() would append it after `--`).
    let o = Command::new(common::bin())
        .args(["run", "exec", "--quiet", "--archive"])
        .arg(&archive)
        .arg("--")
        .arg(&script)
        .env("LD_LIBRARY_PATH", &lib)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = Archive::new(&archive).resolve("latest").unwrap();
    let rows = run.rows().unwrap();
    let value = |metric: &str| rows.iter().find(|r| r.params.metric.as_deref() == Some(metric)).and_then(|r| r.value);
    // Two GPUs at 300 W each, summed.
    let power = value("gpu_power_w").expect("gpu_power_w");
    assert!((power - 600.0).abs() < 10.0, "{power}");
    let wall = value("wall_time_s").unwrap();
    assert!((value("gpu_energy_j").unwrap() - power * wall).abs() < 1e-6);
    let per_j = value("tokens_per_j").expect("tokens_per_j");
    assert!((per_j - 100.0).abs() < 2.0, "60000 tokens/s at 600 W: {per_j}");
}
