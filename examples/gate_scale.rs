//! How long `fleet gate`'s judgement takes on a large fleet: one node's
//! latest run judged as if fresh, against every other node's latest 3 runs
//! and its own history (reading them from the archive included; measuring
//! the suite is not, as its length is the suite's own).
//!
//!   cargo run --release --example gate_scale -- ARCHIVE FLEET NODE
//!
//! Prints JSON: seconds to read, to judge, the points, peers and faults.

use benchbook::analysis::fleet::gate::{self, collect, floors};
use benchbook::archive::catalog::Catalog;
use benchbook::archive::Archive;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [archive, fleet, node] = args.as_slice() else { return Err("usage: gate_scale ARCHIVE FLEET NODE".into()) };
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
            "faults": j.faults().count(), "damaged": c.damaged.len(),
        })
    );
    Ok(())
}
