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
    drifting(archive, label, 1.0, slow)
}

/// [`synthetic`], with every sample of the run multiplied by `drift`: the
/// machine's state for the whole run, which samples inside it cannot show.
fn drifting(archive: &Archive, label: &str, drift: f64, slow: f64) -> String {
    let mut m = Manifest::begin(
        &benchbook::archive::manifest::new_run_id(label),
        benchbook::archive::manifest::RunOrigin::Native,
        benchbook::archive::manifest::RunConfig::Import { import: vec![] },
        vec![],
    );
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
                round: None,
                iterations: Some(10),
                seconds: Some(
                    10.0 * (*size as f64 / 1e10 + 1e-7)
                        * (1.0 + 0.001 * (i % 5) as f64)
                        * drift
                        * if *size >= MIB { slow } else { 1.0 },
                ),
                value: None,
                timer: Some("steady_clock".into()),
                status: Status::Measured,
                note: None,
                stop: None,
                source: "native".into(),
                telemetry: None,
            })
            .collect();
        w.write_point(rows).unwrap();
    }
    w.finish(RunStatus::Complete, None).unwrap().id
}

/// One published nccl-tests log imported twice, as `bare` and `container`.
fn import_twice(dir: &Path) {
    let log = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/nccl_all_reduce_new.txt");
    for label in ["bare", "container"] {
        let out = Command::new(bin())
            .args(["--archive", dir.to_str().unwrap(), "-q", "import", log.to_str().unwrap(), "--label", label])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
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
    // The curve as every report names it (the catalog's base name).
    let curve = points[0]["curve"].as_str().unwrap();
    assert!(points.iter().all(|p| p["curve"] == curve) && curve.contains("memcpy"), "{curve}");
    let said = v["verdicts"][0].as_str().unwrap();
    assert!(
        said.starts_with(&format!("{curve}: no significant difference at any point (6 points; resolves changes of "))
            && said.ends_with(" % or more)."),
        "{said}"
    );
    // The detectable change is stated per point and per curve, and it is
    // at least the threshold.
    for p in points {
        assert!(p["detectable"].as_f64().unwrap() >= 0.02, "{p}");
    }
    assert!(v["summary"][0]["detectable"].as_f64().unwrap() >= 0.02, "{}", v["summary"][0]);
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
    // The change is the range of the points' own (each about 9.1 %).
    assert!(
        sentences.iter().any(|s| s.contains("NEW is 9.") && s.contains("% slower from 1 MiB to 16 MiB")),
        "{sentences:?}"
    );
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
    import_twice(tmp.path());
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

#[test]
fn groups_of_repeats_carry_run_to_run_variability_into_the_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    // The same configuration measured six times: each run drifts by a few
    // per cent, its samples only 0.1 %.
    let a: Vec<String> = [1.00, 1.06, 0.97].iter().map(|d| drifting(&archive, "a", *d, 1.0)).collect();
    let b: Vec<String> = [1.04, 0.98, 1.03].iter().map(|d| drifting(&archive, "b", *d, 1.0)).collect();
    // One run a side: the drift looks like a 3.8 % regression everywhere.
    let one = compare(tmp.path(), &[&a[0], &b[0], "--json"]);
    assert_eq!(one.status.code(), Some(1), "one run a side overclaims");
    assert!(json(&one)["points"].as_array().unwrap().iter().all(|p| p["verdict"] == "slower"));
    // The groups: no point is called slower, and the output says why.
    let mut args: Vec<&str> = vec!["--json", "--base"];
    args.extend(a.iter().map(String::as_str));
    args.push("--new");
    args.extend(b.iter().map(String::as_str));
    let groups = compare(tmp.path(), &args);
    assert_eq!(groups.status.code(), Some(0), "{}", String::from_utf8_lossy(&groups.stderr));
    let v = json(&groups);
    assert_eq!(v["base"].as_array().unwrap().len(), 3);
    for p in v["points"].as_array().unwrap() {
        assert_ne!(p["verdict"], "slower", "{p}");
        assert_eq!((p["runs_a"].as_u64(), p["runs_b"].as_u64()), (Some(3), Some(3)));
        let (lo, hi) = (p["ci_low"].as_f64().unwrap(), p["ci_high"].as_f64().unwrap());
        // The interval spans the per-run ratios, not the 0.1 % noise.
        assert!(hi - lo > 0.04, "{p}");
        // The median of per-run medians: 1.00 against 1.03.
        assert!((p["ratio"].as_f64().unwrap() - 1.0 / 1.03).abs() < 1e-3, "{p}");
    }
    let cv = v["variability"][0]["run_to_run_cv"].as_f64().unwrap();
    assert!((cv - 0.0454).abs() < 0.001, "CV of 1.00, 1.06, 0.97: {cv}");
    assert!(v["variability"][0]["within_run_cv"].as_f64().unwrap() < 0.002);
    // The comma form is the same comparison.
    let commas = compare(tmp.path(), &[&a.join(","), &b.join(","), "--json"]);
    assert_eq!(json(&commas)["points"], v["points"]);
    // A real 30 % regression stands out of the drift.
    let c: Vec<String> = [1.30, 1.27, 1.33].iter().map(|d| drifting(&archive, "c", *d, 1.0)).collect();
    let worse = compare(tmp.path(), &[&a.join(","), &c.join(","), "--json"]);
    assert_eq!(worse.status.code(), Some(1));
    assert!(json(&worse)["points"].as_array().unwrap().iter().all(|p| p["verdict"] == "slower"));
    let text = String::from_utf8_lossy(&compare(tmp.path(), &[&a.join(","), &c.join(",")]).stdout).into_owned();
    assert!(text.contains("variability BASE: 3 runs") && text.contains("run to run 4.54 %"), "{text}");
}

#[test]
fn groups_need_both_sides_and_distinct_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let a = synthetic(&archive, "a", 1.0);
    let out = compare(tmp.path(), &["--base", &a]);
    assert_eq!(out.status.code(), Some(2), "--base without --new is a usage error");
    let out = compare(tmp.path(), &[&format!("{a},{a}"), &a]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("named twice"));
}

/// `benchbook report ... --kind compare` into `out`.
fn compare_report(dir: &Path, runs: &[&str], out: &Path) -> Output {
    Command::new(bin())
        .args(["--archive", dir.to_str().unwrap(), "-q", "report"])
        .args(runs)
        .args(["--kind", "compare", "--out", out.to_str().unwrap()])
        .output()
        .unwrap()
}

#[test]
fn the_compare_report_holds_overlay_ratio_band_verdicts_environment_and_variability() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let a: Vec<String> = [1.00, 1.01].iter().map(|d| drifting(&archive, "bare <metal>", *d, 1.0)).collect();
    let b: Vec<String> = [1.00, 1.01].iter().map(|d| drifting(&archive, "container", *d, 1.1)).collect();
    let out = tmp.path().join("report");
    let o = compare_report(tmp.path(), &[&a.join(","), &b.join(",")], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for f in ["overlay-memcpy.svg", "ratio-1.svg", "report.md", "report.html"] {
        assert!(out.join(f).exists(), "{f}");
    }
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // Each group is named with the runs each point rests on.
    assert!(
        md.contains("# benchbook comparison: bare &lt;metal&gt; (2 runs per point) vs container (2 runs per point)"),
        "{md}"
    );
    assert!(md.contains("container (2 runs per point) is 9.") && md.contains("% slower from 1 MiB to 16 MiB"), "{md}");
    assert!(md.contains("6 points: 3 same, 0 faster, 3 slower, 0 inconclusive"), "{md}");
    assert!(md.contains("| container (2 runs per point) | 2 |"), "variability row: {md}");
    assert!(md.contains("every interval above resamples runs, then samples"), "{md}");
    assert!(md.contains("![ratio of medians"), "{md}");
    let Some(probe) = crate::common::chromium_probe(&out.join("report.html"), 1280) else { return };
    assert!(probe.errors.is_empty(), "{:?}", probe.errors);
    assert_eq!(probe.svgs, 2, "overlay and ratio chart");
    assert!(probe.scroll_width <= probe.width, "{probe:?}");
    assert!(probe.wide.is_empty(), "{probe:?}");
    assert!(probe.title.contains("bare <metal>"), "the label is text: {probe:?}");
    // A phone: still nothing wider than the page.
    let phone = crate::common::chromium_probe(&out.join("report.html"), 400).unwrap();
    assert!(phone.scroll_width <= phone.width && phone.wide.is_empty(), "{phone:?}");
}

#[test]
fn a_compare_report_of_one_sample_imports_says_no_uncertainty() {
    let tmp = tempfile::tempdir().unwrap();
    import_twice(tmp.path());
    let out = tmp.path().join("report");
    let o = compare_report(tmp.path(), &["bare", "container"], &out);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("no uncertainty: one sample"), "{md}");
    assert!(!md.contains("1.000 – 1.000"), "{md}");
    assert!(out.join("overlay-collective.svg").exists());
    // Fewer than two runs is a usage error that says so.
    let o = Command::new(bin())
        .args(["--archive", tmp.path().to_str().unwrap(), "report", "bare", "--kind", "compare"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("two runs or more"));
}

/// Seed 004's imported pairs: two published rccl-tests all_reduce logs of
/// two 8 × MI300X machines as the two sides, point by point. Every point is one sample a side: no interval, and the
/// summary and the report say so instead of inventing one.
#[test]
fn published_logs_of_two_clusters_compare_with_one_sample_honesty() {
    let real = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import/real");
    let tmp = tempfile::tempdir().unwrap();
    let import = |file: &str, label: &str| {
        let out = Command::new(bin())
            .args(["--archive", tmp.path().to_str().unwrap(), "-q", "import"])
            .arg(real.join(file))
            .args(["--label", label])
            .output()
            .unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    };
    import("rccl-tests/all_reduce_8xMI300X_develop_a7809b3_snip.txt", "rccl-a");
    import("rccl-tests/all_reduce_8xMI300X_g8_develop_ae3e635_collapsed_ws.txt", "rccl-b");
    for (a, b) in [("label:rccl-a", "label:rccl-b")] {
        let out = compare(tmp.path(), &[a, b, "--json", "--fail-on", "never"]);
        let v = json(&out);
        let points = v["points"].as_array().unwrap();
        assert!(points.len() >= 5, "{a} {b}: sizes in common: {v}");
        for p in points {
            assert!(p["ci_low"].is_null() && p["samples_a"] == 1 && p["samples_b"] == 1, "{p}");
        }
        for s in v["summary"].as_array().unwrap() {
            assert!(s["ci_low"].is_null() && s["within"].is_null(), "{s}");
        }
        let out_dir = tmp.path().join(format!("report-{}", &a[6..]));
        let o = compare_report(tmp.path(), &[a, b], &out_dir);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let md = std::fs::read_to_string(out_dir.join("report.md")).unwrap();
        assert!(md.contains("none: one sample a side"), "{md}");
    }
}
