//! Numbers that a rerun on the same card reproduces (#63): a point's figure
//! is the median of its round medians (one long round does not decide it),
//! rounds in a capped power state are kept apart from the headline, every
//! card is named, a budget keeps every measured point at 3 rounds, and a
//! comparison of one run a side judges with the rerun interval.

use std::path::Path;
use std::process::Command;

use benchbook::archive::manifest::{new_run_id, RunConfig, RunOrigin};
use benchbook::archive::{Manifest, RunStatus};
use benchbook::prelude::*;
use benchbook::vocab::rows::RowSink;
use benchbook::vocab::telemetry::StepTelemetry;

use crate::common::bin;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The committed H200 run whose bf16 8192³ point held one power-capped
/// round of 362 samples among five: the figure is the full-clock rounds'
/// (754, 785, 792, 779 TFLOP/s), not the capped round's 676.
#[test]
fn the_committed_h200_gemm_figures_come_from_their_full_clock_rounds() {
    let archive = Archive::new(repo().join("data"));
    let run = archive.resolve("20261126T152551Z-interleaved-1-2bef").unwrap();
    let stats = run_stats(&run).unwrap();
    let at = |dtype: &str, m: u64| {
        stats.iter().find(|p| p.dtype.as_deref() == Some(dtype) && p.m == Some(m)).unwrap_or_else(|| panic!("{dtype}"))
    };
    let bf16 = at("bf16", 8192);
    let tflops = bf16.gflops.unwrap() / 1e3;
    assert!((755.0..=800.0).contains(&tflops), "bf16 8192³: {tflops} TFLOP/s");
    let capped = bf16.capped.as_ref().expect("its capped round is stated apart");
    assert_eq!((capped.rounds, capped.of, capped.all), (1, 5, false));
    assert_eq!(capped.clock_mhz, Some(1485.0));
    let words = bf16.power_states().unwrap();
    assert!(words.contains("power-capped at 1485 MHz in 1 of 5 rounds"), "{words}");
    let fp8 = at("fp8", 4096);
    let tflops = fp8.gflops.unwrap() / 1e3;
    assert!((1300.0..=1345.0).contains(&tflops), "fp8 4096³: {tflops} TFLOP/s");
    assert_eq!(fp8.capped.as_ref().map(|c| (c.rounds, c.of)), Some((1, 4)));

    // `show` states both, as the headline and apart.
    let out = Command::new(bin())
        .args(["--archive", repo().join("data").to_str().unwrap(), "show", "20261126T152551Z-interleaved-1-2bef"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("Rounds in two power states"), "{text}");
    assert!(text.contains("power-capped at 1485 MHz in 1 of 5 rounds"), "{text}");
}

/// One point in 5 rounds: round 0 slow with 300 samples, rounds 1–4 fast
/// with 20 each, all with the given clocks (None: no telemetry).
fn rounds_run(archive: &Archive, label: &str, slow: f64, clocks: Option<[f64; 5]>) -> String {
    scaled_rounds_run(archive, label, slow, 1.0, clocks)
}

/// [`rounds_run`] with every sample's time multiplied by `scale`.
fn scaled_rounds_run(archive: &Archive, label: &str, slow: f64, scale: f64, clocks: Option<[f64; 5]>) -> String {
    let mut m = Manifest::begin(&new_run_id(label), RunOrigin::Native, RunConfig::Import { import: vec![] }, vec![]);
    m.label = Some(label.into());
    let mut w = archive.create_run(m).unwrap();
    let mut rows = Vec::new();
    let mut sample = 0;
    for round in 0..5u32 {
        let (n, t) = if round == 0 { (300, slow) } else { (20, 1.0) };
        for i in 0..n {
            rows.push(Row {
                run_id: String::new(),
                backend: "cuda".into(),
                device: "GPU 0: Test GPU".into(),
                host: "h".into(),
                rank: 0,
                point: 0,
                params: Point {
                    bench: "gemm".into(),
                    op: "gemm".into(),
                    dtype: Some("bf16".into()),
                    m: Some(1024),
                    n: Some(1024),
                    k: Some(1024),
                    flops: Some(2.0 * 1024f64.powi(3)),
                    ..Point::default()
                },
                sample: Some(sample),
                round: Some(round),
                iterations: Some(1),
                seconds: Some(1e-3 * scale * t * (1.0 + 0.001 * (i % 7) as f64 + 0.002 * round as f64)),
                value: None,
                timer: Some("cuda_event".into()),
                status: Status::Measured,
                note: None,
                stop: None,
                source: "native".into(),
                telemetry: clocks.map(|c| StepTelemetry {
                    readings: 30,
                    clock_mhz: Some(c[round as usize]),
                    throttle: Some(4),
                    ..StepTelemetry::default()
                }),
            });
            sample += 1;
        }
    }
    w.write_point(rows).unwrap();
    w.finish(RunStatus::Complete, None).unwrap().id
}

#[test]
fn every_round_weighs_the_same_and_a_capped_round_is_kept_apart() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    // No telemetry: the slow round is one of five, whatever its samples.
    let id = rounds_run(&archive, "no-telemetry", 1.15, None);
    let p = &run_stats(&archive.resolve(&id).unwrap()).unwrap()[0];
    assert!(
        (p.median_seconds / 1e-3 - 1.0).abs() < 0.02,
        "figure {} s: the median of 5 round medians",
        p.median_seconds
    );
    assert!(p.summary.median > 1.1e-3, "the pooled median is the long round's: {}", p.summary.median);
    assert_eq!((p.rounds, p.samples), (5, 380));
    assert!(p.capped.is_none());
    // The same rows with round 0 at 1485 MHz of 1980: it ran capped, and
    // the headline rests on the 4 full-clock rounds.
    let id = rounds_run(&archive, "capped", 1.15, Some([1485.0, 1980.0, 1965.0, 1980.0, 1980.0]));
    let p = &run_stats(&archive.resolve(&id).unwrap()).unwrap()[0];
    assert_eq!(p.rounds, 4);
    let c = p.capped.as_ref().unwrap();
    assert_eq!((c.rounds, c.of, c.all, c.clock_mhz), (1, 5, false, Some(1485.0)));
    assert!((c.median_seconds / p.median_seconds - 1.15).abs() < 0.01, "{c:?}");
    let ci = p.interval().unwrap();
    assert!(ci.low <= p.median_seconds && p.median_seconds <= ci.high, "{ci:?}");
    assert!(ci.high < 1.1e-3, "the capped round is not in the full-clock interval: {ci:?}");
    // Every round at one clock: nothing is held apart.
    let id = rounds_run(&archive, "steady", 1.15, Some([1980.0; 5]));
    assert!(run_stats(&archive.resolve(&id).unwrap()).unwrap()[0].capped.is_none());
}

/// Two runs of 6 memcpy sizes in 5 rounds whose round medians spread by
/// about 2 %, the second `shift` slower at every size.
fn spread_run(archive: &Archive, label: &str, shift: f64, seed: u32) -> String {
    let mut m = Manifest::begin(&new_run_id(label), RunOrigin::Native, RunConfig::Import { import: vec![] }, vec![]);
    m.label = Some(label.into());
    let mut w = archive.create_run(m).unwrap();
    for p in 0..6u32 {
        let size = 4096u64 << (2 * p);
        let mut rows = Vec::new();
        for round in 0..5u32 {
            // A round's offset, −2 % to +2 %, in an order that differs by run.
            let offset = 0.01 * (((round * 7 + p * 3 + seed) % 5) as f64 - 2.0);
            for i in 0..20u32 {
                rows.push(Row {
                    run_id: String::new(),
                    backend: "cpu".into(),
                    device: "cpu".into(),
                    host: "h".into(),
                    rank: 0,
                    point: p,
                    params: Point {
                        bench: "memcpy".into(),
                        op: "copy".into(),
                        size_bytes: Some(size),
                        threads: Some(1),
                        bytes_copied: Some(size),
                        method: Some("libc_memcpy".into()),
                        ..Point::default()
                    },
                    sample: Some(round * 20 + i),
                    round: Some(round),
                    iterations: Some(1),
                    seconds: Some(size as f64 / 1e10 * (1.0 + offset + 0.0005 * (i % 4) as f64) * shift),
                    value: None,
                    timer: Some("steady_clock".into()),
                    status: Status::Measured,
                    note: None,
                    stop: None,
                    source: "native".into(),
                    telemetry: None,
                });
            }
        }
        w.write_point(rows).unwrap();
    }
    w.finish(RunStatus::Complete, None).unwrap().id
}

#[test]
fn one_run_a_side_is_judged_with_the_rerun_interval() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let a = spread_run(&archive, "a", 1.0, 0);
    let b = spread_run(&archive, "b", 1.03, 2);
    let compared = benchbook::analysis::compare::compare_runs(
        &[archive.resolve(&a).unwrap()],
        &[archive.resolve(&b).unwrap()],
        0.02,
        "b",
    )
    .unwrap();
    let stats = run_stats(&archive.resolve(&a).unwrap()).unwrap();
    for (p, s) in compared.points.iter().zip(&stats) {
        // Each side's rerun interval is about ±h; the ratio's interval is
        // at least as wide, so a 3 % shift with rounds 2 % apart is not
        // called slower on one run a side.
        let h = s.ci_relative().unwrap();
        let (lo, hi) = (p.ci_low.unwrap(), p.ci_high.unwrap());
        assert!(hi / p.ratio - 1.0 >= 0.9 * h && 1.0 - lo / p.ratio >= 0.9 * h, "{p:?} against ±{h}");
        assert_ne!(p.verdict, benchbook::analysis::compare::Verdict::Slower, "{p:?}");
        assert!(p.detectable.unwrap() > 0.02 + 0.9 * h, "{p:?}");
    }
    // A copy 25 % slower is still called slower at every point.
    let c = spread_run(&archive, "c", 1.25, 2);
    let compared = benchbook::analysis::compare::compare_runs(
        &[archive.resolve(&a).unwrap()],
        &[archive.resolve(&c).unwrap()],
        0.02,
        "c",
    )
    .unwrap();
    assert!(compared.points.iter().all(|p| p.verdict == benchbook::analysis::compare::Verdict::Slower));
}

/// `run --budget` too small for every point at 3 rounds measures the points
/// it can afford at 3 rounds each and skips the rest, saying why.
#[test]
fn a_budget_keeps_three_rounds_for_every_measured_point() {
    let tmp = tempfile::tempdir().unwrap();
    let out = Command::new(bin())
        .args(["--archive", tmp.path().to_str().unwrap(), "-q", "run", "memcpy", "--sizes", "4K..16M"])
        .args(["--threads", "1", "--budget", "1.5"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let archive = Archive::new(tmp.path());
    let run = archive.resolve("latest").unwrap();
    let stats = run_stats(&run).unwrap();
    assert!(!stats.is_empty());
    for p in &stats {
        assert!(p.rounds >= 3, "{} measured in {} rounds", p.params().label(), p.rounds);
    }
    let rows = run.rows().unwrap();
    // The CPU's points (a GPU backend's are skipped here for want of a
    // driver, with that reason).
    let skipped: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Skipped && r.backend == "cpu").collect();
    for r in &skipped {
        let note = r.note.as_deref().unwrap_or("");
        assert!(note.contains("its 3 rounds take about") && note.contains("--budget-prefers points"), "{note}");
    }
}

/// A mean power above the board's limit (the manifest's NVML
/// `power_limit_mw`) is a reading error: flagged, and no energy figure.
#[test]
fn a_mean_power_above_the_board_limit_gives_no_energy_figure() {
    use benchbook::analysis::telemetry::{over_power_limit, PointTelemetry};
    use benchbook::vocab::facts::{BackendInfo, Probe};
    let facts = serde_json::json!({"devices": [{"ordinal": 0, "name": "NVIDIA H200",
        "uuid": "GPU-eece32e0-78ca-bbba-7c9b-aaaff290d068", "extra": {"power_limit_mw": "700000"}}]});
    let backend = BackendInfo {
        name: "cuda".into(),
        probe: Probe::Available { devices: vec!["GPU 0: NVIDIA H200".into()] },
        facts: Some(facts),
    };
    let m = Manifest::begin("r", RunOrigin::Native, RunConfig::Import { import: vec![] }, vec![backend]);
    let point = |w: f64| PointStat {
        run_id: "r".into(),
        backend: "cuda".into(),
        device: "GPU 0: NVIDIA H200".into(),
        telemetry: Some(PointTelemetry {
            power_w: Some(w),
            joules_per_op: Some(1.0),
            gflop_per_j: Some(1585.0),
            ..PointTelemetry::default()
        }),
        ..PointStat::default()
    };
    let mut stats = vec![point(765.0), point(423.0)];
    over_power_limit(&mut stats, std::slice::from_ref(&m));
    let over = stats[0].telemetry.as_ref().unwrap();
    assert_eq!((over.over_limit_w, over.gflop_per_j, over.joules_per_op), (Some(700.0), None, None));
    let fine = stats[1].telemetry.as_ref().unwrap();
    assert_eq!((fine.over_limit_w, fine.gflop_per_j), (None, Some(1585.0)));
    // The card is named from the same facts.
    let cat = benchbook::analysis::Catalog::build(&stats, &[m], &SpecBook::builtin(), None);
    assert_eq!(cat.systems[0].card.as_deref(), Some("GPU-eece32e0-78ca-bbba-7c9b-aaaff290d068"));
}

/// A run 25 % slower at a clock 25 % lower does the same work per cycle:
/// `compare` still calls it slower, and says the clocks explain it.
#[test]
fn a_slowdown_the_clocks_explain_reads_same_work_per_cycle() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let a = scaled_rounds_run(&archive, "full", 1.0, 1.0, Some([1980.0; 5]));
    let b = scaled_rounds_run(&archive, "capped", 1.0, 1980.0 / 1485.0, Some([1485.0; 5]));
    let c = scaled_rounds_run(&archive, "slower", 1.0, 1.25, Some([1980.0; 5]));
    let cmp = |x: &str, y: &str| {
        benchbook::analysis::compare::compare_runs(
            &[archive.resolve(x).unwrap()],
            &[archive.resolve(y).unwrap()],
            0.02,
            "b",
        )
        .unwrap()
    };
    let clocked = cmp(&a, &b);
    let p = &clocked.points[0];
    assert_eq!(p.verdict, benchbook::analysis::compare::Verdict::Slower, "{p:?}");
    assert!(p.clocks_explain && (p.clock_ratio.unwrap() - 0.75).abs() < 1e-9, "{p:?}");
    assert!(clocked.verdicts[0].contains("same work per cycle; clocks differ"), "{:?}", clocked.verdicts);
    // At one clock, a slowdown is the work's own.
    let same_clock = cmp(&a, &c);
    assert!(!same_clock.points[0].clocks_explain && same_clock.points[0].clock_ratio == Some(1.0));
    assert!(!same_clock.verdicts[0].contains("per cycle"), "{:?}", same_clock.verdicts);
}

/// A device given on the command line is said to be given, never passed
/// off as read from the imported file.
#[test]
fn a_device_given_on_import_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let log = repo().join("tests/fixtures/import/osu_bw.txt");
    let archive = tmp.path().join("a");
    let bb = |args: &[&str]| {
        let o = Command::new(bin()).arg("--archive").arg(&archive).arg("-q").args(args).output().unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    };
    bb(&["import", log.to_str().unwrap(), "--device", "MI300X"]);
    let out = tmp.path().join("r");
    bb(&["report", "latest", "--format", "md", "--out", out.to_str().unwrap()]);
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("| Devices | MI300X (given on import with --device, not read from the file) |"), "{md}");
}
