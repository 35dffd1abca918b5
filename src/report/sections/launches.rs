//! The peer-write kernel sweep of the NVLink IPC write-up: a copy kernel on
//! GPU a storing into GPU b's memory, one table per GPU pair with the
//! grids down and the blocks across, each cell the launch's peak rate in
//! GB/s and Gb/s (bytes copied once), and what the widest launch gains over
//! the narrowest.

use crate::vocab::benches::Bench;
use std::collections::BTreeMap;

use serde::Serialize;

use crate::error::Result;
use crate::analysis::findings::Said;
use crate::report::sections::{Built, Input, Plugin};
use crate::report::Kind;

/// The section: in the GPU peer write-up, after the links.
pub const SECTION: Plugin = Plugin {
    name: "launches",
    template: include_str!("../../../templates/sections/launches.md"),
    after: &[(Kind::MemcpyPeer, "links")],
    build: |_: &Input, cs: &[&Series]| -> Result<Built> { Built::view(&tables(cs)) },
};

use crate::analysis::Series;
use crate::vocab::launch::Launch;
use crate::vocab::units::{format_bytes, format_sig3};

/// One GPU pair's grid × block table.
#[derive(Debug, Clone, Serialize)]
pub struct LaunchTable {
    /// `GPU 0→1`, with the run when the report covers several.
    pub pair: String,
    /// Threads per block, the columns.
    pub blocks: Vec<u32>,
    pub rows: Vec<LaunchRow>,
    /// The best launch against the fewest threads in flight.
    pub finding: Said,
}

#[derive(Debug, Clone, Serialize)]
pub struct LaunchRow {
    pub grid: u32,
    /// One cell per block size: `245 GB/s (1,960 Gb/s) at 1 GiB`, or empty.
    pub cells: Vec<String>,
}

/// The tables of every pair that ran the peer-write kernel sweep.
pub fn tables(curves: &[&Series]) -> Vec<LaunchTable> {
    let many_runs = {
        let mut runs: Vec<&str> = curves.iter().map(|c| c.run_id.as_str()).collect();
        runs.sort_unstable();
        runs.dedup();
        runs.len() > 1
    };
    // (run, pair) → launch → (peak GB/s, at size)
    let mut by_pair: BTreeMap<(String, String), BTreeMap<Launch, (f64, u64)>> = BTreeMap::new();
    for c in curves.iter().filter(|c| c.bench == Bench::MemcpyPeer) {
        let Some(p0) = c.points.first() else { continue };
        if p0.method.as_deref() != Some("sm_kernel") {
            continue;
        }
        let (Some(launch), Some(pair)) = (Launch::of(&p0.params()), p0.peer.as_deref()) else {
            continue;
        };
        let best =
            c.points.iter().filter_map(|p| Some((p.gbps_copied?, p.size_bytes?))).max_by(|a, b| a.0.total_cmp(&b.0));
        if let Some(best) = best {
            by_pair.entry((c.run_id.clone(), pair.to_string())).or_default().insert(launch, best);
        }
    }
    by_pair
        .into_iter()
        .map(|((run, pair), cells)| {
            let mut grids: Vec<u32> = cells.keys().map(|l| l.grid).collect();
            let mut blocks: Vec<u32> = cells.keys().map(|l| l.block).collect();
            grids.dedup();
            blocks.sort_unstable();
            blocks.dedup();
            let rows = grids
                .iter()
                .map(|&grid| LaunchRow {
                    grid,
                    cells: blocks
                        .iter()
                        .map(|&block| {
                            cells.get(&Launch { grid, block }).map_or(String::new(), |&(gbps, at)| {
                                format!(
                                    "{} GB/s ({} Gb/s) at {}",
                                    format_sig3(gbps),
                                    format_sig3(gbps * 8.0),
                                    format_bytes(at)
                                )
                            })
                        })
                        .collect(),
                })
                .collect();
            let (best, &(best_gbps, _)) =
                cells.iter().max_by(|a, b| a.1 .0.total_cmp(&b.1 .0)).expect("a pair has a cell");
            let (least, &(least_gbps, _)) = cells.iter().min_by_key(|(l, _)| (l.threads(), l.grid)).expect("nonempty");
            let finding = if best == least {
                Said::LaunchBest { least: least.label() }
            } else {
                Said::LaunchPeak {
                    best: best.label(),
                    best_gbps,
                    ratio: best_gbps / least_gbps,
                    least: least.label(),
                    least_gbps,
                    best_threads: best.threads(),
                    least_threads: least.threads(),
                }
            };
            let pair = format!("GPU {}", pair.replace("->", "→"));
            LaunchTable { pair: if many_runs { format!("{pair}, run {run}") } else { pair }, blocks, rows, finding }
        })
        .collect()
}
