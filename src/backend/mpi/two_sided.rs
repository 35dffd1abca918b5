//! Two-sided transfers between rank 0 and its peer (`send_recv`,
//! `bidirectional`, `latency`), or between every pair of a link sweep's
//! round at once (bidirectional), on host buffers or on device buffers handed
//! to a CUDA- or ROCm-aware MPI: one code path through raw pointers
//! (`MPI_Send`, `MPI_Recv`, `MPI_Sendrecv`), so the buffers differ only in
//! how they are allocated, filled and read back for validation.

use std::ffi::{c_int, c_void};

use mpi::ffi;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

use super::timed_max;
use crate::bench::{Measurement, Sampler};
use crate::vocab::rows::Point;

/// A send and a receive buffer of the same length, wherever they live.
pub(super) trait Buffers {
    /// (send, receive): addresses MPI reads and writes.
    fn ptrs(&mut self) -> (*mut c_void, *mut c_void);
    fn len(&self) -> usize;
    /// Set every byte of the send buffer.
    fn fill_send(&mut self, byte: u8) -> Result<(), String>;
    /// The first byte of the receive buffer that is not `want`, with its
    /// index (host buffers are checked in place, without a copy).
    fn mismatch(&mut self, want: u8) -> Result<Option<(usize, u8)>, String>;
}

/// Buffers in host memory.
pub(super) struct HostBuffers {
    send: Vec<u8>,
    recv: Vec<u8>,
}

impl HostBuffers {
    pub(super) fn new(len: usize) -> HostBuffers {
        HostBuffers { send: vec![0; len], recv: vec![0; len] }
    }
}

impl Buffers for HostBuffers {
    fn ptrs(&mut self) -> (*mut c_void, *mut c_void) {
        (self.send.as_mut_ptr() as *mut c_void, self.recv.as_mut_ptr() as *mut c_void)
    }
    fn len(&self) -> usize {
        self.send.len()
    }
    fn fill_send(&mut self, byte: u8) -> Result<(), String> {
        self.send.fill(byte);
        Ok(())
    }
    fn mismatch(&mut self, want: u8) -> Result<Option<(usize, u8)>, String> {
        Ok(first_mismatch(&self.recv, want))
    }
}

/// The first byte of `got` that is not `want`, with its index.
pub(super) fn first_mismatch(got: &[u8], want: u8) -> Option<(usize, u8)> {
    got.iter().position(|&b| b != want).map(|i| (i, got[i]))
}

/// MPI counts are C ints: a message must fit in one.
pub(super) fn count(len: usize) -> Result<c_int, String> {
    c_int::try_from(len).map_err(|_| {
        format!("{len} bytes do not fit one MPI count (a C int, at most {} bytes); use smaller --sizes", c_int::MAX)
    })
}

/// Measure one two-sided point on `bufs` between this rank and `partner`
/// (rank 0 and its peer for p2p; every pair of a round at once for a link
/// sweep); a rank without a partner only joins the barriers. Returns the
/// measurement and this rank's validation failure, if any.
pub(super) fn measure(
    world: &SimpleCommunicator,
    point: &Point,
    partner: Option<i32>,
    bufs: &mut dyn Buffers,
    sampler: &Sampler,
    local: &mut Vec<f64>,
    agree: &mut dyn FnMut(bool) -> bool,
) -> Result<(Measurement, Option<String>), String> {
    let rank = world.rank();
    let me_in = partner.is_some();
    let other = partner.unwrap_or(rank);
    // Rank 0 leads the alternating patterns; in a pair without it, the lower rank.
    let leads = rank < other;
    let n = count(bufs.len())?;
    let comm = world.as_raw();
    // SAFETY: rsmpi's handles for MPI_UINT8_T and MPI_STATUS_IGNORE.
    let (byte, ignore) = unsafe { (ffi::RSMPI_UINT8_T, ffi::RSMPI_STATUS_IGNORE) };
    bufs.fill_send((rank as u8).wrapping_add(1))?;
    let (send, recv) = bufs.ptrs();
    let bidirectional = point.op == "bidirectional" || point.bench == crate::vocab::benches::Bench::Links;
    // SAFETY: both buffers hold `n` bytes and outlive every call; on device
    // buffers the MPI library was found GPU-aware before these points ran.
    let exchange = || unsafe {
        ffi::MPI_Sendrecv(send, n, byte, other, 0, recv, n, byte, other, 0, comm, ignore);
    };
    let mut op = |i: u64| {
        if !me_in {
            return;
        }
        if bidirectional {
            exchange();
        } else if i.is_multiple_of(2) == leads {
            // send_recv and latency: alternate direction each operation.
            unsafe { ffi::MPI_Send(send, n, byte, other, 0, comm) };
        } else {
            unsafe { ffi::MPI_Recv(recv, n, byte, other, 0, comm, ignore) };
        }
    };
    let r = sampler.measure_synced(&mut |k, d| Ok(timed_max(world, local, k, d, &mut op, &mut || {})), agree);
    // Validate: one more exchange of a fresh pattern, checked on both ends.
    let mut bad = None;
    if me_in {
        bufs.fill_send((rank as u8).wrapping_add(7))?;
        exchange();
        let want = (other as u8).wrapping_add(7);
        if let Some((i, got)) = bufs.mismatch(want)? {
            bad = Some(format!("rank {rank}: byte {i} from rank {other} is {got}, expected {want}"));
        }
    }
    r.map(|m| (m, bad))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_c_ints_and_host_buffers_fill() {
        assert_eq!(count(1 << 30), Ok(1 << 30));
        let e = count(1 << 31).unwrap_err();
        assert!(e.contains("2147483648 bytes do not fit one MPI count"), "{e}");
        let mut b = HostBuffers::new(8);
        b.fill_send(9).unwrap();
        assert_eq!((b.len(), b.send.as_slice()), (8, &[9u8; 8][..]));
        assert_eq!(b.mismatch(0).unwrap(), None);
        b.recv[5] = 3;
        assert_eq!(b.mismatch(0).unwrap(), Some((5, 3)));
    }
}
