//! A tiny real sweep into a temporary archive, read back from Parquet, and
//! reported.

use crate::common;

use benchbook::prelude::*;
use benchbook::report;

#[test]
fn tiny_sweep_archives_reads_back_and_reports() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let r = common::tiny_run(&archive, Some("e2e"));
    assert_eq!(r.status, RunStatus::Complete);
    // 3 sizes × 2 threads memcpy, 4 kernels × 1 size × 2 threads stream, 2 dtypes × 2 shapes × 2 threads gemm.
    assert_eq!(r.outcome.points, 6 + 8 + 8);
    assert_eq!(r.outcome.measured + r.outcome.skipped, r.outcome.points);

    // The Parquet file read back holds every sample with its accounting.
    let rows = r.run.rows().unwrap();
    let m = r.run.manifest().unwrap();
    assert_eq!(m.counts.rows, rows.len() as u64);
    assert_eq!(m.status, RunStatus::Complete);
    assert_eq!(m.schema_version, benchbook::archive::schema::SCHEMA_VERSION);
    assert!(m.ended_at.is_some());
    assert!(!m.argv.is_empty());
    let benchbook::archive::manifest::RunConfig::Sweep(c) = &m.config else { panic!("not a sweep: {:?}", m.config) };
    assert_eq!(c.memcpy_sizes[2], 1 << 20);
    for row in rows.iter().filter(|r| r.params.bench == "memcpy") {
        assert_eq!(row.params.bytes_moved, row.params.bytes_copied.map(|b| 2 * b));
        assert_eq!(row.run_id, r.run.id);
        assert_eq!(row.timer.as_deref(), Some("steady_clock"));
        assert!(row.iterations.unwrap() >= 1);
    }
    // Every point has min_samples samples, except one the time limit
    // stopped first (a loaded machine): the sampler then keeps at least 2
    // and records why it stopped.
    let mut per_point = std::collections::BTreeMap::<u32, usize>::new();
    for row in &rows {
        *per_point.entry(row.point).or_default() += 1;
    }
    assert!(per_point.values().all(|&n| n >= 2), "{per_point:?}");
    let stopped = point_stats(r.run.dataframe().unwrap().lazy()).unwrap();
    for p in stopped.iter().filter(|p| p.samples < 3) {
        assert_eq!(p.stop, Some(benchbook::vocab::kinds::StopReason::MaxTime), "{p:?}");
    }

    // Sane units: between 100 KB/s and 10 TB/s. The floor is low on purpose:
    // tests run in parallel on small machines, where a 2-thread point shares
    // its cores; what this catches is a unit slip (bits, µs, 10^3 factors).
    let stats = point_stats(r.run.dataframe().unwrap().lazy()).unwrap();
    assert_eq!(stats.len(), 22);
    for p in stats.iter().filter(|p| p.bench != "gemm") {
        let g = p.gbps_moved.unwrap();
        assert!(g > 1e-4 && g < 10_000.0, "{} GB/s at {:?}", g, p.size_bytes);
        let copied = p.gbps_copied.unwrap();
        let ratio = if p.bench == "memcpy" { 2.0 } else { g / copied };
        assert!((g / copied - ratio).abs() < 1e-9, "moved/copied for {}", p.op);
        assert!(p.summary.min <= p.summary.median && p.summary.median <= p.summary.max);
    }
    for p in stats.iter().filter(|p| p.bench == "gemm") {
        assert!(p.gflops.unwrap() > 0.001, "{p:?}");
    }

    // The run verifies and its report renders.
    assert!(verify_run(&r.run).findings.is_empty());
    let out = tmp.path().join("report");
    let opts = ReportOptions::default();
    let rep = report::build(&r.run, &archive.root, &opts).unwrap();
    let written = report::write(&rep, &out, &opts).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.contains("## Host memcpy") && md.contains("## STREAM kernels") && md.contains("## GEMM"));
    assert!(md.contains(&r.run.id));
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Three inline charts, each laid out for a desktop and for a phone.
    assert_eq!(html.matches("<svg class=\"wide\"").count(), 3, "three inline charts");
    assert_eq!(html.matches("<svg class=\"narrow\"").count(), 3, "each with its phone rendering");
    assert!(!html.contains("<img"), "self-contained: no external images");
    assert!(written.iter().any(|p| p.ends_with("memcpy.svg")));
}

#[test]
fn png_charts_render_without_system_fonts() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let r = common::tiny_run(&archive, None);
    let opts = ReportOptions { png: true, format: Format::Md, ..ReportOptions::default() };
    let rep = benchbook::report::build(&r.run, &archive.root, &opts).unwrap();
    benchbook::report::write(&rep, tmp.path(), &opts).unwrap();
    let png = std::fs::read(tmp.path().join("memcpy.png")).unwrap();
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
    assert!(png.len() > 10_000, "a chart with text, not an empty frame");
}
