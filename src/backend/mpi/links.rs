//! The link sweep's second pass over MPI: the first pass's link matrix,
//! the same on every rank, then each suspect endpoint retested against a
//! good rank ([`crate::vocab::pairs::second_pass`]), every rank making the
//! same calls.

use std::collections::BTreeMap;

use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::{broadcast_bytes, gather_bytes, MpiDriver};
use crate::bench::links as link_points;
use crate::bench::runner::Schedule;
use crate::error::Result;
use crate::vocab::pairs;
use crate::vocab::progress::Progress;
use crate::vocab::rows::RunOutcome;

/// The first pass's link matrix, the same on every rank: each rank's own
/// median time per exchange with each partner, gathered and shared; a
/// link's speed is `bytes` over the slower end's time.
fn link_matrix(
    world: &SimpleCommunicator,
    mine: &BTreeMap<String, Vec<f64>>,
    bytes: f64,
) -> BTreeMap<(usize, usize), f64> {
    let rank = world.rank() as usize;
    let own: Vec<(usize, f64)> = mine
        .iter()
        .filter_map(|(peer, t)| {
            let p = pairs::partner(peer, rank)?;
            Some((p, crate::vocab::stats::median_unsorted(&mut t.clone())))
        })
        .collect();
    let gathered = gather_bytes(world, serde_json::to_vec(&own).expect("serializes"));
    let all = broadcast_bytes(world, gathered.map(|g| serde_json::to_vec(&g).expect("serializes")).unwrap_or_default());
    let all: Vec<Vec<u8>> = serde_json::from_slice(&all).unwrap_or_default();
    let own = all.iter().enumerate().flat_map(|(r, bytes_r)| {
        let list: Vec<(usize, f64)> = serde_json::from_slice(bytes_r).unwrap_or_default();
        list.into_iter().map(move |(p, t)| (r, p, t))
    });
    pairs::link_matrix(own, bytes)
}

/// Retest the first pass's suspects (points numbered from `first_point`).
/// Which retests to make depends only on the first pass, so they are
/// planned first and measured in one schedule, sharing its budget and
/// rounds like any other points.
pub(super) fn second_pass(
    schedule: &Schedule,
    driver: &mut MpiDriver<'_>,
    size: u64,
    first_point: u32,
    progress: &dyn Progress,
) -> Result<RunOutcome> {
    let world = driver.world;
    let ranks = world.size() as u32;
    let first = link_matrix(world, &driver.link_times, 2.0 * size as f64);
    let mut plan = Vec::new();
    pairs::second_pass(&first, pairs::SUSPECT_BELOW, |x, g| {
        plan.push(link_points::retest(size, ranks, x, g));
        f64::NAN
    });
    if plan.is_empty() {
        return Ok(RunOutcome::default());
    }
    // The verdicts are read back from the rows (analysis::fleet::links),
    // with the same rules, by `fleet check` and `fleet report`.
    schedule.run(&plan, first_point, driver, progress)
}
