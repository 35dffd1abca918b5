//! A team of threads kept alive for a whole point, so that a sample of a
//! multi-threaded kernel pays two barrier crossings, not thread spawns.
//! Thread 0 is the caller; it times the sample from release to join, so the
//! time covers the slowest thread, as STREAM's OpenMP loops do.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::Instant;

/// A barrier that spins, then yields. `std::sync::Barrier` sleeps on a futex,
/// and the wake-up latency (tens of µs on a VM) would be charged to every
/// sample of a small, cache-resident copy; OpenMP runtimes spin for the
/// same reason. Yielding after a while keeps an oversubscribed machine usable.
struct SpinBarrier {
    parties: usize,
    arrived: AtomicUsize,
    generation: AtomicUsize,
}

impl SpinBarrier {
    fn new(parties: usize) -> Self {
        SpinBarrier { parties, arrived: AtomicUsize::new(0), generation: AtomicUsize::new(0) }
    }

    fn wait(&self) {
        let generation = self.generation.load(Ordering::Acquire);
        if self.arrived.fetch_add(1, Ordering::AcqRel) + 1 == self.parties {
            // Reset before releasing: a thread that sees the new generation
            // also sees the count back at zero.
            self.arrived.store(0, Ordering::Relaxed);
            self.generation.fetch_add(1, Ordering::Release);
        } else {
            let mut spins = 0u32;
            while self.generation.load(Ordering::Acquire) == generation {
                if spins < 20_000 {
                    std::hint::spin_loop();
                    spins += 1;
                } else {
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// Run `body` with a timed closure `f(n)` that makes every thread of a team
/// of `threads` call `work(thread_index, n)` and returns the wall seconds
/// until the last one finished.
pub fn with_team<R>(
    threads: usize,
    work: &(dyn Fn(usize, u64) + Sync),
    body: impl FnOnce(&mut dyn FnMut(u64) -> f64) -> R,
) -> R {
    let threads = threads.max(1);
    if threads == 1 {
        let mut f = |n: u64| {
            let t = Instant::now();
            work(0, n);
            t.elapsed().as_secs_f64()
        };
        return body(&mut f);
    }
    let barrier = SpinBarrier::new(threads);
    // 0 means "exit"; any other value is the number of operations to run.
    let command = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for tid in 1..threads {
            let (barrier, command) = (&barrier, &command);
            scope.spawn(move || loop {
                barrier.wait();
                let n = command.load(Ordering::SeqCst);
                if n == 0 {
                    break;
                }
                work(tid, n);
                barrier.wait();
            });
        }
        // Releases the workers even if `body` panics, so the scope can join.
        struct Release<'a>(&'a SpinBarrier, &'a AtomicU64);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                self.1.store(0, Ordering::SeqCst);
                self.0.wait();
            }
        }
        let _release = Release(&barrier, &command);
        let mut f = |n: u64| {
            let n = n.max(1);
            command.store(n, Ordering::SeqCst);
            let t = Instant::now();
            barrier.wait();
            work(0, n);
            barrier.wait();
            t.elapsed().as_secs_f64()
        };
        body(&mut f)
    })
}

/// The `index`-th of `parts` contiguous chunks of `len` items, with chunk
/// boundaries rounded to `align` items so threads do not share cache lines.
pub fn chunk(len: usize, parts: usize, index: usize, align: usize) -> std::ops::Range<usize> {
    let parts = parts.max(1);
    let align = align.max(1);
    let per = len.div_ceil(parts).div_ceil(align) * align;
    let start = (per * index).min(len);
    let end = (start + per).min(len);
    start..end
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn every_thread_runs_every_sample() {
        let calls = AtomicUsize::new(0);
        let work = |_tid: usize, n: u64| {
            calls.fetch_add(n as usize, Ordering::SeqCst);
        };
        with_team(3, &work, |f| {
            f(2);
            f(5);
        });
        assert_eq!(calls.load(Ordering::SeqCst), 3 * 7);
    }

    #[test]
    fn chunks_cover_exactly_once() {
        for len in [0usize, 1, 7, 64, 1000, 4097] {
            for parts in 1..6 {
                let mut covered = 0;
                let mut next = 0;
                for i in 0..parts {
                    let r = chunk(len, parts, i, 8);
                    assert_eq!(r.start, next.min(len));
                    covered += r.len();
                    next = r.end;
                }
                assert_eq!(covered, len, "len {len} parts {parts}");
            }
        }
    }
}
