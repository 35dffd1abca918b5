//! GPU backends as a user without (or with) a GPU meets them: `benchbook
//! backends` says what was found and why not, and GPU benchmarks in a run
//! are either measured or recorded as skipped with that reason, never lost,
//! never a crash. Runs on every machine: on one without a GPU (CI) the
//! skip path is checked; on a GPU machine, the measured path.

use crate::common;

use std::process::Command;

use benchbook::prelude::*;

fn backends_json() -> Vec<serde_json::Value> {
    let o = Command::new(common::bin()).args(["backends", "--json"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

fn probe_of<'a>(all: &'a [serde_json::Value], name: &str) -> &'a serde_json::Value {
    &all.iter().find(|b| b["name"] == name).unwrap_or_else(|| panic!("no backend {name} in {all:?}"))["probe"]
}

#[test]
fn backends_say_what_they_found_and_why_not() {
    let all = backends_json();
    assert_eq!(probe_of(&all, "cpu")["state"], "available");
    for name in ["cuda", "hip"] {
        let p = probe_of(&all, name);
        match p["state"].as_str().unwrap() {
            "available" => assert!(!p["devices"].as_array().unwrap().is_empty(), "{p}"),
            "unavailable" => assert!(p["reason"].as_str().unwrap().len() > 10, "{p}"),
            other => panic!("unknown state {other}"),
        }
    }
    // The text form names every backend too.
    let o = Command::new(common::bin()).arg("list-backends").output().unwrap();
    let t = String::from_utf8_lossy(&o.stdout);
    assert!(t.contains("cpu") && t.contains("cuda") && t.contains("hip") && t.contains("mpi"), "{t}");
}

#[cfg(feature = "hip")]
#[test]
fn hip_without_an_amd_gpu_gives_the_runtime_answer() {
    let all = backends_json();
    let p = probe_of(&all, "hip");
    if p["state"] == "unavailable" {
        let r = p["reason"].as_str().unwrap();
        assert!(r.contains("hip"), "{r}");
    }
}

#[test]
fn gpu_benchmarks_are_measured_or_skipped_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let mut cfg = common::tiny_config();
    cfg.benches = vec![Bench::Memcpy, Bench::MemcpyPeer, Bench::H2d, Bench::D2h, Bench::Gemm];
    cfg.backends = vec![BackendKind::Cuda, BackendKind::Hip];
    cfg.memcpy_sizes = vec![1 << 20];
    cfg.gpu_gemm_shapes = vec![[256, 256, 256]];
    cfg.gpu_gemm_dtypes = vec![Dtype::F32, Dtype::Bf16];
    let r = run(&archive, &cfg, Some("gpu"), &benchbook::vocab::progress::Silent)
        .expect("a run without a GPU still completes");
    assert_eq!(r.status, RunStatus::Complete);
    let rows = r.run.rows().unwrap();
    let manifest = r.run.manifest().unwrap();
    let mut gpu_built = false;
    for name in ["cuda", "hip"] {
        let info = manifest.backends.iter().find(|b| b.name == name).expect("every GPU backend is in the manifest");
        let mine: Vec<&Row> = rows.iter().filter(|x| x.backend == name).collect();
        match &info.probe {
            benchbook::backend::Probe::Unavailable { reason } if reason.starts_with("built without") => {
                assert!(mine.is_empty(), "{name} is not built but has rows");
            }
            benchbook::backend::Probe::Unavailable { reason } => {
                gpu_built = true;
                // One skipped row per benchmark, carrying the probe's reason.
                for bench in &cfg.benches {
                    let row = mine
                        .iter()
                        .find(|x| &x.params.bench == bench)
                        .unwrap_or_else(|| panic!("no {name} row for {bench}"));
                    assert_eq!(row.status, Status::Skipped);
                    assert_eq!(row.note.as_deref(), Some(reason.as_str()));
                }
            }
            benchbook::backend::Probe::Available { devices } => {
                gpu_built = true;
                assert!(!devices.is_empty());
                assert!(info.facts.is_some(), "a usable GPU backend records device facts");
                assert!(!mine.is_empty());
                assert!(
                    mine.iter().all(|x| x.status != Status::Failed),
                    "{:?}",
                    mine.iter().find(|x| x.status == Status::Failed)
                );
            }
        }
    }
    if !gpu_built {
        // No GPU backend in this build: the benchmarks still leave a trace.
        for bench in &cfg.benches {
            let row = rows.iter().find(|x| &x.params.bench == bench).unwrap();
            assert!(row.note.as_deref().unwrap().contains("no backend of this run implements"), "{:?}", row.note);
        }
    }
    // No row is from the CPU backend: --backend was honoured.
    assert!(rows.iter().all(|x| x.backend != "cpu"));
    // The report renders with the skipped points listed.
    let opts = ReportOptions::default();
    let rep = benchbook::report::build(&r.run, tmp.path(), &opts).unwrap();
    let md = benchbook::report::render_markdown(&mut benchbook::report::engine(None).unwrap(), &rep).unwrap().0;
    assert!(md.contains("Points not measured") || md.contains("## GPUs"), "{md}");
}
