//! `benchbook compare` through the real binary, on runs whose samples the
//! test controls: identical runs, a copy 10 % slower at ≥ 1 MiB, one-sample
//! imports, and runs with nothing in common.

use std::path::Path;
use std::process::{Command, Output};

use benchbook::archive::{Manifest, RunStatus};
use benchbook::prelude::*;
use benchbook::vocab::rows::RowSink;

use crate::common::bin;

const MIB: u64 = 1 << 20;
const SIZES: [u64; 6] = [4096, 65536, 262144, MIB, 4 * MIB, 16 * MIB];

/// A memcpy run with 20 samples per size, 0.1 % apart, every sample at
/// ≥ 1 MiB multiplied by `slow`.
fn synthetic(archive: &Archive, label: &str, slow: f64) -> String {
    let mut m =
        Manifest::begin(&benchbook::archive::manifest::new_run_id(label), "native", serde_json::json!({}), vec![]);
    m.label = Some(label.into());
    let mut w = archive.create_run(m).unwrap();
    for (p, size) in SIZES.iter().enumerate() {
        let rows = (0..20)
            .map(|i| Row {
                run_id: String::new(),
                backend: "cpu".into(),
                device: "cpu".into(),
                host: "h".into(),
                rank: 0,
                point: p as u32,
                params: Point {
                    bench: "memcpy".into(),
                    op: "copy".into(),
                    size_bytes: Some(*size),
                    threads: Some(1),
                    bytes_copied: Some(*size),
                    method: Some("libc_memcpy".into()),
                    ..Point::default()
                },
                sample: Some(i),
                iterations: Some(10),
                seconds: Some(
                    10.0 * (*size as f64 / 1e10 + 1e-7)
                        * (1.0 + 0.001 * (i % 5) as f64)
                        * if *size >= MIB { slow } else { 1.0 },
                ),
                value: None,
                timer: Some("steady_clock".into()),
                status: Status::Measured,
                note: None,
                stop: None,
                source: "native".into(),
            })
            .collect();
        w.write_point(rows).unwrap();
    }
    w.finish(RunStatus::Complete, None).unwrap().id
}

fn compare(dir: &Path, args: &[&str]) -> Output {
    Command::new(bin()).args(["--archive", dir.to_str().unwrap(), "compare"]).args(args).output().unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn identical_runs_are_the_same_everywhere_and_exit_0() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let (a, b) = (synthetic(&archive, "base", 1.0), synthetic(&archive, "copy", 1.0));
    let out = compare(tmp.path(), &[&a, &b, "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v = json(&out);
    let points = v["points"].as_array().unwrap();
    assert_eq!(points.len(), SIZES.len());
    for p in points {
        assert_eq!(p["verdict"], "same", "{p}");
        assert!(p["size_bytes"].is_u64() && p["label"].is_string());
        assert!(p["ci_low"].as_f64().unwrap() <= 1.0 && p["ci_high"].as_f64().unwrap() >= 1.0);
    }
    assert_eq!(v["verdicts"][0], "memcpy copy 1T: no significant difference at any point (6 points).");
}

#[test]
fn a_copy_slower_above_1_mib_fails_with_exactly_those_points_slower() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let (a, b) = (synthetic(&archive, "base", 1.0), synthetic(&archive, "slower", 1.1));
    let out = compare(tmp.path(), &[&a, &b, "--json"]);
    assert_eq!(out.status.code(), Some(1), "a regression fails the command");
    let v = json(&out);
    for p in v["points"].as_array().unwrap() {
        let size = p["size_bytes"].as_u64().unwrap();
        let want = if size >= MIB { "slower" } else { "same" };
        assert_eq!(p["verdict"], want, "{p}");
        if size >= MIB {
            assert!((p["ratio"].as_f64().unwrap() - 1.0 / 1.1).abs() < 1e-9);
        }
    }
    let sentences: Vec<&str> = v["verdicts"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert!(sentences.iter().any(|s| s.contains("NEW is 9.1 % slower from 1 MiB to 16 MiB")), "{sentences:?}");
    // --fail-on never reports without failing; the text names the verdicts.
    let out = compare(tmp.path(), &[&a, &b, "--fail-on", "never"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 slower"));
    // The other way round NEW is faster: no failure unless --fail-on any.
    assert_eq!(compare(tmp.path(), &[&b, &a]).status.code(), Some(0));
    assert_eq!(compare(tmp.path(), &[&b, &a, "--fail-on", "any"]).status.code(), Some(1));
}

#[test]
fn one_sample_imports_say_no_uncertainty_instead_of_an_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/nccl_all_reduce_new.txt");
    for label in ["bare", "container"] {
        let out = Command::new(bin())
            .args(["--archive", tmp.path().to_str().unwrap(), "-q", "import", log.to_str().unwrap(), "--label", label])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let out = compare(tmp.path(), &["bare", "container", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    for p in json(&out)["points"].as_array().unwrap() {
        assert!(p["ci_low"].is_null() && p["ci_high"].is_null(), "no collapsed interval: {p}");
        assert_eq!(p["verdict"], "same");
    }
    let text = String::from_utf8_lossy(&compare(tmp.path(), &["bare", "container"]).stdout).into_owned();
    assert!(text.contains("no uncertainty: one sample"), "{text}");
    assert!(!text.contains("1.000–1.000"), "{text}");
}

#[test]
fn runs_with_nothing_in_common_exit_2_and_say_what_differs() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let a = synthetic(&archive, "memcpy", 1.0);
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/nccl_all_reduce_new.txt");
    let imported = Command::new(bin())
        .args(["--archive", tmp.path().to_str().unwrap(), "-q", "import", log.to_str().unwrap(), "--label", "nccl"])
        .status()
        .unwrap();
    assert!(imported.success());
    let out = compare(tmp.path(), &[&a, "nccl"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no point in common") && err.contains("BASE measured memcpy; NEW measured collective"),
        "{err}"
    );
}
