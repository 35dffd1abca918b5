//! The GPU benchmarks end to end on the emulated device ([`super::emulated`]):
//! through the real runner, into rows, an archive and the GPU report.
//!
//! Test code only (`#[cfg(test)] mod tests;` in `mod.rs`), so the
//! architecture scan skips it: the archive and the report are used by these
//! tests, never by `bench`.
//!
//! The file is longer than 400 lines because every GPU benchmark's test on
//! the emulated device shares the one harness at its top (config, sampler,
//! sink, runner).

use std::cell::RefCell;
use std::rc::Rc;

use super::emulated::Emulated;
use super::*;
use crate::bench::dtype;
use crate::bench::{runner, RowMeta};
use crate::vocab::benches::Bench;
use crate::vocab::facts::StopRule;
use crate::vocab::kinds::{CacheMode, CopyMethod};
use crate::vocab::progress::Silent;
use crate::vocab::rows::{Row, RowSink, Status};

fn cfg() -> BenchConfig {
    let mut c = BenchConfig::preset(crate::bench::Preset::Quick);
    c.memcpy_sizes = vec![4096, 1 << 16];
    c.gpu_cache_modes = vec![CacheMode::Warm, CacheMode::Cold];
    c.gpu_gemm_shapes = vec![[32, 16, 48]];
    c.gpu_gemm_dtypes = GPU_DTYPES.to_vec();
    c.gpu_peer_grids = vec![1, 64];
    c.gpu_peer_blocks = vec![32];
    c
}

fn sampler() -> Sampler {
    Sampler::new(StopRule {
        warmup_seconds: 0.0,
        min_samples: 3,
        min_seconds: 0.0,
        max_seconds: 0.05,
        target_rsd: 0.5,
        sample_seconds: 0.0001,
        max_samples: 5,
        ..StopRule::default()
    })
}

fn api(devices: usize) -> (Rc<RefCell<Emulated>>, SharedApi) {
    let e = Rc::new(RefCell::new(Emulated::new(devices)));
    let shared: SharedApi = e.clone();
    (e, shared)
}

struct Sink(Vec<Row>);
impl RowSink for Sink {
    fn write_point(&mut self, rows: Vec<Row>) -> crate::error::Result<()> {
        self.0.extend(rows);
        Ok(())
    }
    fn add_file(&mut self, _name: &str, _data: &[u8]) -> crate::error::Result<()> {
        Ok(())
    }
}

/// Every GPU benchmark through the real runner: rows, accounting, validation.
fn run_all(shared: &SharedApi, names: &[&str], device: usize) -> Vec<Row> {
    let names: Vec<Bench> = names.iter().map(|s| Bench::parse(s).unwrap()).collect();
    let mut benches = benchmarks(shared, &names, device, 1);
    let meta =
        RowMeta { run_id: "t".into(), backend: "emulated".into(), device: "e0".into(), host: "h".into(), rank: 0 };
    let mut c = cfg();
    c.stop = sampler().rule;
    let mut sink = Sink(Vec::new());
    runner::run_benchmarks(&mut benches, &c, &meta, 0, &mut sink, &Silent).unwrap();
    sink.0
}

#[test]
fn copies_count_bytes_once_and_read_plus_written() {
    let (e, shared) = api(2);
    let rows = run_all(&shared, &["memcpy", "memcpy-peer", "h2d", "d2h"], 0);
    assert!(
        rows.iter().all(|r| r.status == Status::Measured),
        "{:?}",
        rows.iter().find(|r| r.status != Status::Measured)
    );
    for r in &rows {
        let (size, p) = (r.params.size_bytes.unwrap(), &r.params);
        let once = if p.op == "copy_bidir" { 2 * size } else { size };
        assert_eq!(p.bytes_copied, Some(once), "{}", p.label());
        // Across the host link each byte moves once; in device memory it
        // is read and written.
        let moved = if matches!(p.bench.as_str(), "h2d" | "d2h") { once } else { 2 * once };
        assert_eq!(p.bytes_moved, Some(moved), "{}", p.label());
        assert_eq!(r.timer.as_deref(), Some("steady_clock"));
        assert!(r.iterations.unwrap() >= 1);
    }
    let benches: std::collections::BTreeSet<_> = rows.iter().map(|r| r.params.bench.as_str()).collect();
    assert_eq!(benches.into_iter().collect::<Vec<_>>(), ["d2h", "h2d", "memcpy", "memcpy-peer"]);
    // memcpy: 2 sizes × 2 methods × 2 cache modes; peer: 2 sizes × 2
    // directions, then the peer-write kernel: 2 sizes × 2 grids × 1 block.
    let points = |b: &str| {
        rows.iter().filter(|r| r.params.bench == b).map(|r| r.point).collect::<std::collections::BTreeSet<_>>().len()
    };
    assert_eq!((points("memcpy"), points("memcpy-peer"), points("h2d")), (8, 8, 4));
    // The kernels ran with the launches their points name (memcpy's own
    // kernel with the backend's choice), and wrote the peer's buffer.
    let launched: Vec<Option<Launch>> = e.borrow().launches.iter().copied().collect();
    assert_eq!(launched, [None, Some(Launch { grid: 1, block: 32 }), Some(Launch { grid: 64, block: 32 })]);
    assert!(rows.iter().any(|r| r.params.method.as_deref() == Some("sm_kernel")
        && r.params.peer.as_deref() == Some("0->1")
        && r.params.variant.as_deref() == Some("grid 64 × block 32")));
    assert!(rows
        .iter()
        .any(|r| r.params.peer.as_deref() == Some("0->1") && r.params.variant.as_deref() == Some("peer_access")));
    assert!(rows.iter().any(|r| r.params.variant.as_deref() == Some("pageable")));
}

#[test]
fn a_broken_copy_fails_validation_instead_of_reporting_a_time() {
    let (e, shared) = api(1);
    e.borrow_mut().broken = true;
    let rows = run_all(&shared, &["memcpy"], 0);
    assert!(!rows.is_empty() && rows.iter().all(|r| r.status == Status::Failed));
    assert!(rows[0].note.as_deref().unwrap().contains("expected"), "{:?}", rows[0].note);
}

#[test]
fn one_gpu_skips_peer_copies_with_the_reason() {
    let (_, shared) = api(1);
    let rows = run_all(&shared, &["memcpy-peer"], 0);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].status, Status::Skipped);
    assert!(rows[0].note.as_deref().unwrap().contains("1 GPU(s) found"), "{:?}", rows[0].note);
}

#[test]
fn too_little_device_memory_and_missing_methods_are_skips() {
    let (e, shared) = api(1);
    e.borrow_mut().free_bytes = 10_000;
    e.borrow_mut().no_kernel_copy = true;
    let rows = run_all(&shared, &["memcpy"], 0);
    let note = |size: u64, m: &str| {
        rows.iter()
            .find(|r| r.params.size_bytes == Some(size) && r.params.method.as_deref() == Some(m))
            .unwrap()
            .clone()
    };
    assert_eq!(note(4096, "copy_engine").status, Status::Measured);
    let big = note(1 << 16, "copy_engine");
    assert!(big.status == Status::Skipped && big.note.unwrap().contains("free"));
    let kernel = note(4096, "sm_kernel");
    assert!(kernel.status == Status::Skipped && kernel.note.unwrap().contains("no copy kernel"));
}

#[test]
fn peer_write_kernels_skip_without_peer_access_or_a_kernel() {
    let (e, shared) = api(2);
    e.borrow_mut().inv.peers[0][1] = PeerAccess::Unsupported;
    let rows = run_all(&shared, &["memcpy-peer"], 0);
    let kernel: Vec<&Row> = rows.iter().filter(|r| r.params.method.as_deref() == Some("sm_kernel")).collect();
    assert_eq!(kernel.len(), 4);
    for r in &kernel {
        assert_eq!(r.status, Status::Skipped);
        assert!(r.note.as_deref().unwrap().contains("cannot address GPU 1's memory"), "{:?}", r.note);
    }
    // The copy engine still copies without peer access (staged by the driver).
    assert!(rows.iter().any(|r| r.params.method.as_deref() == Some("copy_engine") && r.status == Status::Measured));
    let (e, shared) = api(2);
    e.borrow_mut().no_kernel_copy = true;
    let rows = run_all(&shared, &["memcpy-peer"], 0);
    let why = rows.iter().find(|r| r.params.method.as_deref() == Some("sm_kernel")).unwrap();
    assert!(why.status == Status::Skipped && why.note.as_deref().unwrap().contains("no copy kernel"));
}

#[test]
fn cold_mode_flushes_before_every_operation() {
    let (e, shared) = api(1);
    let mut c = cfg();
    c.gpu_copy_methods = vec![CopyMethod::CopyEngine];
    c.gpu_cache_modes = vec![CacheMode::Cold];
    c.memcpy_sizes = vec![4096];
    let mut b = benchmarks(&shared, &[Bench::Memcpy], 0, 1).pop().unwrap();
    let p = &b.points(&c)[0];
    let Outcome::Measured(m) = b.run(p, &sampler()) else { panic!("cold memcpy did not measure") };
    let timed_ops: u64 = m.samples.iter().map(|s| s.iterations).sum();
    // Warm-up calls flush too, so at least one flush per timed operation.
    assert!(e.borrow().flushes >= timed_ops, "{} flushes for {timed_ops} operations", e.borrow().flushes);
}

#[test]
fn gemm_rows_carry_flops_method_and_validate() {
    let (_, shared) = api(1);
    let rows = run_all(&shared, &["gemm"], 0);
    assert!(
        rows.iter().all(|r| r.status == Status::Measured),
        "{:?}",
        rows.iter().find(|r| r.status != Status::Measured)
    );
    let fp8 = rows.iter().find(|r| r.params.dtype.as_deref() == Some("fp8")).unwrap();
    assert_eq!(fp8.params.method.as_deref(), Some("emulated_lt"));
    assert_eq!(fp8.params.flops, Some(2.0 * 32.0 * 16.0 * 48.0));
    // A + B in one byte each, C in bf16.
    assert_eq!(fp8.params.bytes_moved, Some(32 * 48 + 16 * 48 + 32 * 16 * 2));
}

/// Emulated-device rows for every GPU benchmark, written to a real
/// archive under the `cuda` backend name (the device name says it is
/// emulated). The numbers are host copies, never a GPU's.
fn write_emulated_run(archive: &crate::archive::Archive, label: &str) -> crate::archive::RunDir {
    use crate::archive::{Manifest, RunStatus};
    use crate::vocab::facts::{BackendInfo, Probe};
    let device = "GPU 0: Emulated GPU 0 (host memory, not a GPU measurement)";
    let (e, shared) = api(2);
    let facts = serde_json::json!({"devices": e.borrow().inv.facts, "peer_access": [["unsupported", "enabled"], ["enabled", "unsupported"]]});
    let backends = vec![BackendInfo {
        name: "cuda".into(),
        probe: Probe::Available { devices: vec![device.into()] },
        facts: Some(facts),
    }];
    let run_id = crate::archive::manifest::new_run_id(label);
    let mut c = cfg();
    c.stop = sampler().rule;
    c.memcpy_sizes = vec![4096, 1 << 14, 1 << 16, 1 << 18];
    let config = crate::vocab::config::RunConfig::Sweep(Box::new(c.clone()));
    let mut m = Manifest::begin(&run_id, crate::vocab::source::RunOrigin::Native, config, backends);
    m.label = Some(label.into());
    let mut writer = archive.create_run(m).unwrap();
    let names: Vec<Bench> = Bench::ALL.iter().copied().filter(|b| Kind::of(*b).is_some()).collect();
    let mut benches = benchmarks(&shared, &names, 0, 1);
    let meta = RowMeta { run_id, backend: "cuda".into(), device: device.into(), host: "h".into(), rank: 0 };
    runner::run_benchmarks(&mut benches, &c, &meta, 0, &mut writer, &Silent).unwrap();
    writer
        .finish(
            RunStatus::Complete,
            Some("emulated GPU: a test fixture of the GPU report's shape, not a measurement".into()),
        )
        .unwrap()
}

/// Writes the committed GPU-shaped fixture run that the golden GPU
/// report test renders. Not a test: run it on purpose with
/// `cargo test --lib write_gpu_fixture -- --ignored`, delete the old
/// fixture run, then re-bless the golden files.
#[test]
#[ignore = "writes tests/fixtures/archive; run on purpose"]
fn write_gpu_fixture() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/archive");
    write_emulated_run(&crate::archive::Archive::new(root), "emulated-gpu");
}

/// The GPU report path end to end: emulated rows, read back, analysed
/// and rendered. Only the report's structure is checked.
#[test]
fn gpu_rows_render_the_gpu_report_sections() {
    let tmp = tempfile::tempdir().unwrap();
    let run = write_emulated_run(&crate::archive::Archive::new(tmp.path()), "gpu-report");
    let rep = crate::report::build(&run, tmp.path(), &crate::report::ReportOptions::default()).unwrap();
    let md = crate::report::render_markdown(&mut crate::report::engine(None).unwrap(), &rep).unwrap().0;
    for want in [
        "## GPUs",
        "### Device memcpy",
        "### Peer memcpy",
        "### Host ↔ device",
        "### GPU GEMM",
        "Emulated GPU 1",
        "GPU 0: - P2P",
        "copy\\_bidir peer\\_access, copy\\_engine, GPU 0→1",
    ] {
        assert!(md.contains(want), "no `{want}` in:\n{md}");
    }
    assert!(!md.contains("## Host memcpy"), "GPU rows must not land in the host section");
    if std::env::var_os("BENCHBOOK_DUMP_REPORT").is_some() {
        println!("{md}");
    }
    let charts: Vec<&str> = rep.charts.iter().map(|c| c.name()).collect();
    for want in ["gpu-memcpy", "memcpy-peer", "h2d-d2h", "gpu-gemm"] {
        assert!(charts.contains(&want), "{charts:?}");
    }
    // The peer write-up adds the grid × block table of the peer-write kernel.
    let opts = crate::report::ReportOptions { kind: Some(crate::report::Kind::MemcpyPeer), ..Default::default() };
    let rep = crate::report::build(&run, tmp.path(), &opts).unwrap();
    let md = crate::report::render_markdown(&mut crate::report::engine(None).unwrap(), &rep).unwrap().0;
    let table = md
        .split("## Peer writes by a kernel: grid × block")
        .nth(1)
        .unwrap_or_else(|| panic!("no launch section in {md}"));
    assert!(table.contains("| grid | block 32 |"), "{table}");
    let row = |g: &str| table.lines().find(|l| l.starts_with(&format!("| {g} | "))).map(str::to_owned);
    for g in ["1", "64"] {
        let r = row(g).unwrap_or_else(|| panic!("no grid {g} row in {table}"));
        assert!(r.contains(" GB/s (") && r.contains(" Gb/s) at "), "{r}");
    }
    assert!(table.contains("threads in flight"), "{table}");
    if std::env::var_os("BENCHBOOK_DUMP_REPORT").is_some() {
        println!("{table}");
    }
}

#[test]
fn a_broken_gemm_fails() {
    let (e, shared) = api(1);
    e.borrow_mut().broken_gemm = true;
    let rows = run_all(&shared, &["gemm"], 0);
    assert!(rows.iter().all(|r| r.status == Status::Failed), "{:?}", rows[0]);
    assert!(rows[0].note.as_deref().unwrap().contains("GEMM result is wrong"));
}

/// Run one GEMM point of `dtype` in `setting` on the emulated device.
fn one_gemm(
    e: &Rc<RefCell<Emulated>>,
    shared: &SharedApi,
    dtype: Dtype,
    shape: [u64; 3],
    setting: crate::vocab::gemm::GemmSetting,
    algos: u32,
) -> Outcome {
    let _ = e;
    let mut c = cfg();
    c.gpu_gemm_shapes = vec![shape];
    c.gpu_gemm_dtypes = vec![dtype];
    c.gpu_gemm_layouts = vec![setting.layout];
    c.gpu_fp8_accum = setting.accum.into_iter().collect();
    if c.gpu_fp8_accum.is_empty() {
        c.gpu_fp8_accum = vec![crate::vocab::kinds::Fp8Accum::Promoted];
    }
    let mut b = benchmarks(shared, &[Bench::Gemm], 0, algos).pop().unwrap();
    let points = b.points(&c);
    assert_eq!(points.len(), 1);
    assert_eq!(crate::vocab::gemm::GemmSetting::of(&points[0]), setting);
    b.run(&points[0], &sampler())
}

#[test]
fn every_layout_computes_and_validates_the_same_product() {
    use crate::vocab::gemm::GemmSetting;
    use crate::vocab::kinds::{Fp8Accum, GemmLayout};
    for layout in GemmLayout::ALL.iter().copied() {
        for dt in [Dtype::F32, Dtype::Bf16] {
            let (e, shared) = api(1);
            let s = GemmSetting::for_dtype(dt, layout, Fp8Accum::Promoted);
            let out = one_gemm(&e, &shared, dt, [24, 40, 56], s, 1);
            assert!(matches!(out, Outcome::Measured(_)), "{dt} {layout}: {out:?}");
            // A C written in the wrong order fails in every layout.
            let (e, shared) = api(1);
            e.borrow_mut().broken_gemm = true;
            let out = one_gemm(&e, &shared, dt, [24, 40, 56], s, 1);
            assert!(matches!(&out, Outcome::Failed(w) if w.contains("GEMM result is wrong")), "{dt} {layout}: {out:?}");
        }
    }
}

#[test]
fn fp8_passes_with_hoppers_accumulation_in_both_modes_and_the_old_tolerance_did_not() {
    use crate::vocab::gemm::GemmSetting;
    use crate::vocab::kinds::{Fp8Accum, GemmLayout};
    // k = 4096: long enough that a 14-bit accumulator is visibly off an
    // f32 one, as on the H200 where fp8 1024³ failed its check 3 times in 3.
    let shape = [16, 16, 4096];
    for accum in [Fp8Accum::Promoted, Fp8Accum::Fast] {
        let (e, shared) = api(1);
        let s = GemmSetting::for_dtype(Dtype::Fp8, GemmLayout::Nn, accum);
        let out = one_gemm(&e, &shared, Dtype::Fp8, shape, s, 1);
        assert!(matches!(out, Outcome::Measured(_)), "{accum}: {out:?}");
        let (e, shared) = api(1);
        e.borrow_mut().broken_gemm = true;
        let out = one_gemm(&e, &shared, Dtype::Fp8, shape, s, 1);
        assert!(matches!(&out, Outcome::Failed(w) if w.contains("fp8")), "{accum}: {out:?}");
    }
    // The fast accumulator's error is larger than an f32 accumulator's
    // tolerance (16 ulp of f32 per unit of Σ|a·b|): the old check failed it.
    let (m, n, k) = (16u64, 16u64, 4096u64);
    let a = dtype::normal_values(m * k, 1);
    let b = dtype::normal_values(n * k, 2);
    let (_, av) = dtype::encode(Dtype::Fp8, &a);
    let (_, bv) = dtype::encode(Dtype::Fp8, &b);
    let mut worst = 0f64;
    for i in 0..m as usize {
        for j in 0..n as usize {
            let products = || (0..k as usize).map(|l| av[i * k as usize + l] * bv[j * k as usize + l]);
            let exact: f64 = products().map(|p| p as f64).sum();
            let mag: f64 = products().map(|p| (p as f64).abs()).sum();
            let acc = super::emulated::hopper_fp8_dot(products(), Fp8Accum::Fast);
            worst = worst.max((acc as f64 - exact).abs() / mag);
        }
    }
    assert!(worst > 16.0 * f32::EPSILON as f64, "worst relative error {worst:e}");
    assert!(worst < super::gemm::accumulation_eps(Dtype::Fp8, Some(Fp8Accum::Fast)), "worst {worst:e}");
}

#[test]
fn gemm_algos_are_timed_and_the_choice_is_in_the_note() {
    use crate::vocab::gemm::GemmSetting;
    use crate::vocab::kinds::{Fp8Accum, GemmLayout};
    let (e, shared) = api(1);
    e.borrow_mut().algos_offered = 3;
    let s = GemmSetting::for_dtype(Dtype::Bf16, GemmLayout::Nn, Fp8Accum::Promoted);
    let Outcome::Measured(m) = one_gemm(&e, &shared, Dtype::Bf16, [32, 32, 32], s, 4) else { panic!("not measured") };
    assert!(m.note().contains("fastest of 3 candidates timed"), "{}", m.note());
    assert!(m.note().contains("emulated algo"), "{}", m.note());
    let (e, shared) = api(1);
    let Outcome::Measured(m) = one_gemm(&e, &shared, Dtype::Bf16, [32, 32, 32], s, 1) else { panic!("not measured") };
    assert!(m.note().contains("the heuristic's first choice"), "{}", m.note());
    drop(e);
}

/// The emulated device's sensor, through the same sampler and rows as
/// NVML's: a copy sweep into a real archive, read back from Parquet.
fn telemetry_run(mode: super::emulated::EmulatedSensor) -> (Vec<Row>, Vec<crate::vocab::telemetry::TelemetryInfo>) {
    let mut c = cfg();
    c.stop = sampler().rule;
    telemetry_run_with(mode, c)
}

fn telemetry_run_with(
    mode: super::emulated::EmulatedSensor,
    mut c: BenchConfig,
) -> (Vec<Row>, Vec<crate::vocab::telemetry::TelemetryInfo>) {
    let (e, shared) = api(1);
    e.borrow_mut().sensor = mode;
    let tmp = tempfile::tempdir().unwrap();
    let archive = crate::archive::Archive::new(tmp.path());
    c.telemetry_ms = 5;
    let config = crate::vocab::config::RunConfig::Sweep(Box::new(c.clone()));
    let run_id = crate::archive::manifest::new_run_id("telemetry");
    let m = crate::archive::manifest::Manifest::begin(&run_id, crate::vocab::source::RunOrigin::Native, config, vec![]);
    let mut writer = archive.create_run(m).unwrap();
    let mut benches = benchmarks(&shared, &[Bench::Memcpy], 0, 1);
    let meta = RowMeta { run_id, backend: "cuda".into(), device: "GPU 0".into(), host: "h".into(), rank: 0 };
    let sensor = shared.borrow().sensor(0);
    let outcome =
        runner::run_benchmarks_within(&mut benches, &c, None, &meta, Some(sensor), 0, &mut writer, &Silent).unwrap();
    writer.set_telemetry(outcome.telemetry.clone());
    let run = writer.finish(crate::archive::manifest::RunStatus::Complete, None).unwrap();
    let m = run.manifest().unwrap();
    assert_eq!(m.telemetry, outcome.telemetry);
    (run.rows().unwrap(), m.telemetry)
}

#[test]
fn every_sample_row_records_its_rounds_telemetry_through_parquet() {
    use super::emulated::EmulatedSensor;
    let (rows, info) = telemetry_run(EmulatedSensor::Steady);
    let measured: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Measured).collect();
    assert!(!measured.is_empty());
    for r in &measured {
        let t = r.telemetry.unwrap_or_else(|| panic!("no telemetry on {r:?}"));
        assert_eq!(t.clock_mhz, Some(1410.0));
        assert_eq!(t.throttle, Some(0x4), "power cap only: not throttled");
        assert!(t.readings >= 1, "{t:?}");
        // A round of a few ms is too short for a mean power.
        assert_eq!(t.power_w, None, "{t:?}");
    }
    assert_eq!(info.len(), 1);
    assert_eq!(info[0].sensor.as_deref(), Some("emulated sensor"));
    assert!(info[0].readings >= 2);

    let (rows, _) = telemetry_run(EmulatedSensor::Slow);
    let slow = rows.iter().find(|r| r.status == Status::Measured).unwrap().telemetry.unwrap();
    assert_eq!(slow.throttle, Some(0x4 | crate::vocab::telemetry::BELOW_CLOCK));
}

#[test]
fn a_round_of_half_a_second_gets_its_power_from_the_energy_counter() {
    let mut c = cfg();
    c.memcpy_sizes = vec![4096];
    c.gpu_cache_modes = vec![CacheMode::Warm];
    c.gpu_copy_methods = vec![CopyMethod::CopyEngine];
    c.stop = StopRule {
        min_seconds: 0.6,
        max_seconds: 0.8,
        max_samples: 100_000,
        target_rsd: 0.0,
        rounds: 1,
        min_rounds: 1,
        ..sampler().rule
    };
    let (rows, _) = telemetry_run_with(super::emulated::EmulatedSensor::Steady, c);
    let t = rows.iter().find(|r| r.status == Status::Measured).and_then(|r| r.telemetry).expect("telemetry");
    // 250 J per second of wall time, over ≥ 0.6 s.
    assert!((t.power_w.expect("a power over 0.6 s") - 250.0).abs() < 5.0, "{t:?}");
    assert!(t.readings >= 25, "{t:?}");
}

#[test]
fn a_failing_or_hanging_sensor_loses_no_point_and_says_why() {
    use super::emulated::EmulatedSensor;
    let (steady, _) = telemetry_run(EmulatedSensor::Steady);
    let points = |rows: &[Row]| rows.iter().filter(|r| r.status == Status::Measured).map(|r| r.point).max();
    for (mode, words) in [(EmulatedSensor::Fails, "NVML_ERROR_UNKNOWN"), (EmulatedSensor::Hangs, "did not answer")] {
        let (rows, info) = telemetry_run(mode);
        assert_eq!(points(&rows), points(&steady), "{mode:?}");
        assert!(rows.iter().all(|r| r.status != Status::Failed), "{mode:?}");
        assert!(rows.iter().all(|r| r.telemetry.is_none()), "{mode:?}");
        assert!(info[0].notes.iter().any(|n| n.contains(words)), "{mode:?}: {info:?}");
    }
}
