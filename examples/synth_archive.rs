//! The synthetic fleet archive of the scale benchmarks
//! (`scripts/synth-archive.sh`; see `benchbook::archive::synthetic`).
//!
//!   cargo run --release --example synth_archive -- OUT [RUNS] [ROWS] [NODES] [DRIFT_AT] [POINTS]
//!
//! Prints, as JSON, where the drift is and which runs were damaged.

use benchbook::archive::synthetic::{synthetic_fleet, SynthSpec};
use benchbook::archive::{Archive, RunDir};

const TEMPLATE: &str = "data/runs/20261122T014545Z-memcpy-rounds-a-2c86";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let out = args.first().ok_or("usage: synth_archive OUT [RUNS] [ROWS] [NODES] [DRIFT_AT] [POINTS]")?;
    let arg = |i: usize, d: usize| args.get(i).and_then(|a| a.parse().ok()).unwrap_or(d);
    let spec = SynthSpec {
        runs: arg(1, 10_000),
        rows_per_run: arg(2, 1000),
        nodes: arg(3, 1000),
        drifting: 17,
        drift_at: arg(4, 6),
        damage: 3,
        points: args.get(5).and_then(|a| a.parse().ok()),
    };
    let template = RunDir { id: TEMPLATE.rsplit('/').next().unwrap_or_default().into(), path: TEMPLATE.into() };
    let made = synthetic_fleet(&template, &Archive::new(out), &spec)?;
    println!("{}", serde_json::to_string(&made)?);
    Ok(())
}
