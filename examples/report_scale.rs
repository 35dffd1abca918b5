//! How long does a report take from an archive of 10^6 rows?
//!
//!     cargo run --release --example report_scale [ROWS]
//!
//! Builds a synthetic run (rows shaped like a memcpy sweep, values from a
//! fixed formula: this measures benchbook's report path, not a machine),
//! then times, in the same process: (a) reading its Parquet into a
//! DataFrame, the peer; (b) the whole report (analysis, charts, Markdown,
//! HTML). Prints both and their ratio. Each is the median of 5 runs.

use std::time::Instant;

use benchbook::archive::manifest::Manifest;
use benchbook::archive::Archive;
use benchbook::bench::RowSink;
use benchbook::report::{self, ReportOptions};
use benchbook::rows::{Point, Row, Status};

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let rows: usize = std::env::args().nth(1).map(|s| s.parse()).transpose()?.unwrap_or(1_000_000);
    let tmp = std::env::temp_dir().join(format!("benchbook-scale-{}", std::process::id()));
    let archive = Archive::new(&tmp);
    let manifest = Manifest::begin("scale-run", "synthetic", serde_json::json!({"preset": "synthetic"}), vec![]);
    let mut w = archive.create_run(manifest)?;
    let points = 1000usize;
    let per_point = rows.div_ceil(points);
    let mut batch = Vec::with_capacity(rows);
    for p in 0..points {
        let size = 4096u64 << (p % 20);
        for s in 0..per_point {
            if batch.len() == rows {
                break;
            }
            batch.push(Row {
                run_id: "scale-run".into(),
                backend: "cpu".into(),
                device: "synthetic".into(),
                host: "synthetic".into(),
                rank: 0,
                point: p as u32,
                params: Point {
                    bench: "memcpy".into(),
                    op: "copy".into(),
                    variant: Some("warm".into()),
                    size_bytes: Some(size),
                    threads: Some(1 + (p / 20 % 50) as u32),
                    bytes_copied: Some(size),
                    bytes_moved: Some(2 * size),
                    ..Point::default()
                },
                sample: Some(s as u32),
                iterations: Some(10),
                seconds: Some(1e-6 * (1.0 + size as f64 / 1e9) * (1.0 + (s % 7) as f64 * 1e-3)),
                value: None,
                timer: Some("synthetic".into()),
                status: Status::Measured,
                note: Some("converged; rsd 0.100 %".into()),
                stop: Some(benchbook::vocab::kinds::StopReason::Converged),
                source: "synthetic".into(),
            });
        }
    }
    w.write_point(batch)?;
    let run = w.finish(benchbook::archive::RunStatus::Complete, None)?;
    let out = tmp.join("report");
    let opts = ReportOptions::default();
    let (mut read, mut full) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let t = Instant::now();
        let df = run.dataframe()?;
        read.push(t.elapsed().as_secs_f64());
        assert_eq!(df.height(), rows);
        let t = Instant::now();
        let r = report::build(&run, &archive.root, &opts)?;
        report::write(&r, &out, &opts)?;
        full.push(t.elapsed().as_secs_f64());
    }
    let (r, f) = (median(read), median(full));
    println!("rows: {rows}");
    println!("read Parquet → DataFrame (peer): {:.1} ms", r * 1e3);
    println!("full report (read, analyse, chart, render): {:.1} ms", f * 1e3);
    println!("ratio report / read: {:.2}", f / r);
    std::fs::remove_dir_all(&tmp)?;
    Ok(())
}
