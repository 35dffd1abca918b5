//! Builds the synthetic run that `scripts/scale_bench.py` reports on:
//!
//!     cargo run --release --example report_scale -- ROWS ARCHIVE_DIR [CSV_FILE]
//!
//! Rows are shaped like a memcpy sweep measured in 5 rounds (1,000 points:
//! 20 sizes × 50 thread counts, the samples of each point spread over the
//! rounds), with values from a fixed formula plus a seeded jitter: this
//! measures benchbook's report path, not a machine. The run goes into
//! ARCHIVE_DIR; with CSV_FILE the same rows are also written as CSV for the
//! Python peer (Debian 12 packages no Parquet engine for pandas). Prints
//! the run id on stdout.

use std::io::Write;

use benchbook::archive::manifest::Manifest;
use benchbook::archive::Archive;
use benchbook::bench::{BenchConfig, Preset, RowSink};
use benchbook::rows::{Point, Row, Status};

const POINTS: usize = 1000;
const ROUNDS: usize = 5;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: report_scale ROWS ARCHIVE_DIR [CSV_FILE]";
    let rows: usize = args.first().ok_or(usage)?.parse()?;
    let archive = Archive::new(args.get(1).ok_or(usage)?);
    let csv = args.get(2);
    let manifest = Manifest::begin(
        "scale",
        benchbook::archive::manifest::RunOrigin::Native,
        benchbook::archive::manifest::RunConfig::Sweep(Box::new(BenchConfig::preset(Preset::Quick))),
        vec![],
    );
    let mut w = archive.create_run(manifest)?;
    let per_point = rows.div_ceil(POINTS);
    let mut rng = benchbook::vocab::stats::seeded_rng(42);
    let jitter = rand_distr::Normal::new(0.0, 0.02)?;
    let mut batch = Vec::with_capacity(rows);
    let id = w.manifest.run_id.clone();
    for p in 0..POINTS {
        let size = 4096u64 << (p % 20);
        let threads = 1 + (p / 20 % 50) as u32;
        let round_offset: Vec<f64> = (0..ROUNDS).map(|_| rand_distr::Distribution::sample(&jitter, &mut rng)).collect();
        for s in 0..per_point {
            if batch.len() == rows {
                break;
            }
            let round = s * ROUNDS / per_point;
            let noise = rand_distr::Distribution::sample(&jitter, &mut rng) * 0.5;
            batch.push(Row {
                run_id: id.clone(),
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
                    threads: Some(threads),
                    bytes_copied: Some(size),
                    bytes_moved: Some(2 * size),
                    method: Some("libc_memcpy".into()),
                    ..Point::default()
                },
                sample: Some(s as u32),
                round: Some(round as u32),
                iterations: Some(10),
                seconds: Some(1e-5 * (1.0 + size as f64 / 1e9) * (1.0 + round_offset[round] + noise).max(0.5)),
                value: None,
                timer: Some("synthetic".into()),
                status: Status::Measured,
                note: Some("converged; rsd 0.100 %".into()),
                stop: Some(benchbook::vocab::kinds::StopReason::Converged),
                source: "native".into(),
                telemetry: None,
            });
        }
    }
    if let Some(path) = csv {
        let mut f = std::io::BufWriter::new(std::fs::File::create(path)?);
        writeln!(f, "run_id,point,sample,round,rank,status,bench,op,threads,size_bytes,bytes_copied,bytes_moved,iterations,seconds")?;
        for r in &batch {
            let p = &r.params;
            writeln!(
                f,
                "{},{},{},{},{},{},{},{},{},{},{},{},{},{:e}",
                r.run_id,
                r.point,
                r.sample.unwrap_or(0),
                r.round.unwrap_or(0),
                r.rank,
                r.status.as_str(),
                p.bench,
                p.op,
                p.threads.unwrap_or(0),
                p.size_bytes.unwrap_or(0),
                p.bytes_copied.unwrap_or(0),
                p.bytes_moved.unwrap_or(0),
                r.iterations.unwrap_or(0),
                r.seconds.unwrap_or(f64::NAN)
            )?;
        }
    }
    w.write_point(batch)?;
    w.finish(benchbook::archive::RunStatus::Complete, None)?;
    println!("{id}");
    Ok(())
}
