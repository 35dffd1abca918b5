//! One-sided transfers (MPI RMA) for the MPI backend: `put`, `get` and
//! `put_round_trip` on windows over host memory, through `mpi::ffi` (rsmpi
//! has no window API). What each operation counts is in `bench::p2p`.
//!
//! Rank 0 drives and its peer is the target; every other rank of the job
//! only joins the collective calls (window creation, barriers, fences), so
//! every rank leaves each point together.

use std::os::raw::{c_int, c_void};

use mpi::ffi;
use mpi::raw::AsRaw;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use crate::bench::{Measurement, Sampler};
use crate::vocab::one_sided::OneSided;
use crate::vocab::rows::Point;

/// A window over this rank's `mem`, created on every rank of `comm`, freed
/// (collectively) on drop.
struct Window {
    win: ffi::MPI_Win,
    mem: Vec<u8>,
}

impl Window {
    fn new(comm: &SimpleCommunicator, mut mem: Vec<u8>) -> Window {
        if mem.is_empty() {
            mem.push(0);
        }
        let mut win: ffi::MPI_Win = unsafe { ffi::RSMPI_WIN_NULL };
        // SAFETY: `mem` lives as long as the window (it is freed in `drop`
        // before the Vec), and every rank of `comm` makes the same call.
        unsafe {
            ffi::MPI_Win_create(
                mem.as_mut_ptr() as *mut c_void,
                mem.len() as ffi::MPI_Aint,
                1,
                ffi::RSMPI_INFO_NULL,
                comm.as_raw(),
                &mut win,
            );
        }
        Window { win, mem }
    }
}

impl Drop for Window {
    fn drop(&mut self) {
        // SAFETY: a window created above; every rank drops it at the same
        // point of the same code path.
        unsafe {
            ffi::MPI_Win_free(&mut self.win);
        }
    }
}

/// A pattern a lost, short or misplaced transfer cannot reproduce.
fn pattern(i: usize, salt: u8) -> u8 {
    (i.wrapping_mul(31) ^ (i >> 11)) as u8 ^ salt
}

/// `(offset, length)` of each channel's part: N whole buffers side by side
/// (`round_robin`), or one message cut into N near-equal chunks (`split`).
pub(crate) fn chunks(size: usize, os: &OneSided) -> Vec<(usize, usize)> {
    let c = os.channels.max(1) as usize;
    if os.round_robin {
        return (0..c).map(|j| (j * size, size)).collect();
    }
    let base = size / c;
    (0..c).map(|j| (j * base, if j + 1 == c { size - j * base } else { base })).collect()
}

fn first_mismatch(mem: &[u8], salt: u8) -> Option<usize> {
    mem.iter().enumerate().position(|(i, &b)| b != pattern(i, salt))
}

/// What measuring a one-sided point returns: the measurement (sample times
/// are the maximum over ranks) and, if validation failed here, why.
pub(super) type RmaResult = Result<(Measurement, Option<String>), String>;

/// Measure `put` or `get` (passive target, flush every `sync_every`
/// operations and at the end of each timed batch).
pub(super) fn measure_put_get(
    world: &SimpleCommunicator,
    point: &Point,
    peer: i32,
    sampler: &Sampler,
    local: &mut Vec<f64>,
    agree: &mut dyn FnMut(bool) -> bool,
) -> RmaResult {
    let rank = world.rank();
    let os = OneSided::of(point);
    let size = (point.size_bytes.unwrap_or(1) as usize).max(1);
    let parts = chunks(size, &os);
    let span = parts.last().map_or(size, |&(off, len)| off + len);
    let is_put = point.op == "put";
    let (driver, target) = (rank == 0, rank == peer);
    // The target's window holds the pattern a get must bring back; a put
    // writes into zeros.
    // Ranks outside the pair expose one byte.
    let exposed: Vec<u8> = match (target, is_put) {
        (true, false) => (0..span).map(|i| pattern(i, 0x5a)).collect(),
        (true, true) => vec![0; span],
        _ => Vec::new(),
    };
    let mut origin: Vec<u8> = if driver { (0..span).map(|i| pattern(i, 0x3c)).collect() } else { Vec::new() };
    let mut win = Window::new(world, exposed);
    let sync = os.sync_every.max(1) as u64;
    let byte = unsafe { ffi::RSMPI_UINT8_T };
    let issue = |origin: &mut [u8], win: ffi::MPI_Win| {
        for &(off, len) in &parts {
            // SAFETY: `origin` and the target window both span `span`
            // bytes, and `off + len <= span`.
            unsafe {
                let (o, d, l) = (origin.as_mut_ptr().add(off) as *mut c_void, off as ffi::MPI_Aint, len as c_int);
                if is_put {
                    ffi::MPI_Put(o, l, byte, peer, d, l, byte, win);
                } else {
                    ffi::MPI_Get(o, l, byte, peer, d, l, byte, win);
                }
            }
        }
    };
    if driver {
        unsafe { ffi::MPI_Win_lock_all(0, win.win) };
    }
    let measured = {
        let w = win.win;
        let mut op = |i: u64| {
            if driver {
                issue(&mut origin, w);
                if (i + 1).is_multiple_of(sync) {
                    unsafe { ffi::MPI_Win_flush(peer, w) };
                }
            }
        };
        let mut finish = || {
            if driver {
                unsafe { ffi::MPI_Win_flush(peer, w) };
            }
        };
        let mut timed = |n: u64, d| Ok(super::timed_max(world, local, n, d, &mut op, &mut finish));
        sampler.measure_synced(&mut timed, agree)
    };
    // Validate with a fresh transfer: a put must land in zeroed memory, a
    // get must overwrite a zeroed origin.
    if driver {
        unsafe { ffi::MPI_Win_unlock_all(win.win) };
    }
    world.barrier();
    if target && is_put {
        win.mem.fill(0);
    }
    if driver && !is_put {
        origin.fill(0);
    }
    world.barrier();
    if driver {
        unsafe { ffi::MPI_Win_lock_all(0, win.win) };
        issue(&mut origin, win.win);
        unsafe { ffi::MPI_Win_unlock_all(win.win) };
    }
    world.barrier();
    let bad = if target && is_put {
        first_mismatch(&win.mem[..span], 0x3c)
            .map(|i| format!("rank {rank}: byte {i} of the window after rank 0's put is {}", win.mem[i]))
    } else if driver && !is_put {
        first_mismatch(&origin[..span], 0x5a)
            .map(|i| format!("rank 0: byte {i} got from rank {peer} is {}, expected {}", origin[i], pattern(i, 0x5a)))
    } else {
        None
    };
    drop(win);
    measured.map(|m| (m, bad))
}

/// Measure `put_round_trip`: messages alternate direction between rank 0
/// and its peer, each closed by a fence (active target).
pub(super) fn measure_round_trip(
    world: &SimpleCommunicator,
    point: &Point,
    peer: i32,
    sampler: &Sampler,
    local: &mut Vec<f64>,
    agree: &mut dyn FnMut(bool) -> bool,
) -> RmaResult {
    let rank = world.rank();
    let size = (point.size_bytes.unwrap_or(1) as usize).max(1);
    let me_in = rank == 0 || rank == peer;
    let other = if rank == 0 { peer } else { 0 };
    let salt = if rank == 0 { 0x11 } else { 0x77 };
    let mut origin: Vec<u8> = if me_in { (0..size).map(|i| pattern(i, salt)).collect() } else { Vec::new() };
    let win = Window::new(world, if me_in { vec![0; size] } else { Vec::new() });
    let byte = unsafe { ffi::RSMPI_UINT8_T };
    let w = win.win;
    let send = |origin: &mut [u8]| unsafe {
        ffi::MPI_Put(origin.as_mut_ptr() as *mut c_void, size as c_int, byte, other, 0, size as c_int, byte, w);
    };
    unsafe { ffi::MPI_Win_fence(0, w) };
    let measured = {
        let mut op = |i: u64| {
            let zero_sends = i.is_multiple_of(2);
            if me_in && (rank == 0) == zero_sends {
                send(&mut origin);
            }
            unsafe { ffi::MPI_Win_fence(0, w) };
        };
        let mut timed = |n: u64, d| Ok(super::timed_max(world, local, n, d, &mut op, &mut || {}));
        sampler.measure_synced(&mut timed, agree)
    };
    // Validate: one message each way into zeroed windows.
    let mut win = win;
    win.mem.fill(0);
    unsafe { ffi::MPI_Win_fence(0, w) };
    for sender_is_zero in [true, false] {
        if me_in && (rank == 0) == sender_is_zero {
            send(&mut origin);
        }
        unsafe { ffi::MPI_Win_fence(0, w) };
    }
    let other_salt = if rank == 0 { 0x77 } else { 0x11 };
    let bad = if me_in {
        first_mismatch(&win.mem[..size], other_salt)
            .map(|i| format!("rank {rank}: byte {i} put by rank {other} is {}", win.mem[i]))
    } else {
        None
    };
    drop(win);
    measured.map(|m| (m, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_message_exactly() {
        let split = |size, c| chunks(size, &OneSided { channels: c, round_robin: false, sync_every: 1 });
        assert_eq!(split(10, 3), vec![(0, 3), (3, 3), (6, 4)]);
        assert_eq!(split(4096, 1), vec![(0, 4096)]);
        let rr = chunks(100, &OneSided { channels: 4, round_robin: true, sync_every: 1 });
        assert_eq!(rr, vec![(0, 100), (100, 100), (200, 100), (300, 100)]);
        for (size, c) in [(7usize, 2u32), (4096, 4), (1 << 20, 3)] {
            let parts = split(size, c);
            assert_eq!(parts.iter().map(|p| p.1).sum::<usize>(), size);
            assert!(parts.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0), "contiguous");
        }
    }
}
