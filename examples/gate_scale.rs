//! How long `fleet gate`'s judgement takes on a large fleet: one node's
//! latest run judged as if fresh, against every other node's latest 3 runs
//! and its own history (reading them from the archive included; measuring
//! the suite is not, as its length is the suite's own).
//!
//!   cargo run --release --example gate_scale -- ARCHIVE FLEET NODE [--points]
//!
//! Prints JSON: seconds to read, to judge, the points, peers and faults,
//! and how many peers were read from their summaries (`fleet::summary`:
//! the first gate on an archive without them reads every peer and writes
//! them; the next reads them).

use benchbook::analysis::fleet::gate::{self, collect, floors};
use benchbook::archive::catalog::Catalog;
use benchbook::archive::Archive;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (archive, fleet, node, points) = match args.as_slice() {
        [a, f, n] => (a, f, n, false),
        [a, f, n, p] if p == "--points" => (a, f, n, true),
        _ => return Err("usage: gate_scale ARCHIVE FLEET NODE [--points]".into()),
    };
    let archive = Archive::new(archive);
    let started = std::time::Instant::now();
    let catalog = Catalog::open(&archive)?;
    let latest = catalog
        .entries
        .iter()
        .filter(|e| e.fleet.as_deref() == Some(fleet.as_str()) && e.node.as_deref() == Some(node.as_str()))
        .max_by(|a, b| a.started_at.cmp(&b.started_at))
        .ok_or("no run of that node")?
        .run_id
        .clone();
    let specs = benchbook::analysis::specs::SpecBook::load(&archive.root)?;
    let c =
        collect::collect(&archive, fleet, node, &[latest], &floors::load(None)?, &specs, collect::Window::default())?;
    let read = started.elapsed().as_secs_f64();
    let j = gate::judge(&c.data, &gate::GateRule::default());
    let total = started.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "read_seconds": read, "judge_seconds": total - read, "total_seconds": total,
            "points": j.points.len(), "peers": c.peers.len(), "history_runs": c.history_runs,
            "faults": j.faults().count(), "damaged": c.damaged.len(), "from_summary": c.from_summary,
            "fleet_lines": points.then(|| j.points.iter().map(|p| {
                let a = p.fleet.as_ref();
                serde_json::json!([p.point, a.map(|a| a.ratio), a.map(|a| a.ratio_low), a.map(|a| a.ratio_high)])
            }).collect::<Vec<_>>()),
        })
    );
    Ok(())
}
