//! Event timing, written once for every device backend. A backend supplies
//! the few driver calls ([`EventDevice`]: record an event, make a stream
//! wait for one, enqueue an operation, wait for an event, read the time
//! between two); [`time_lanes`] is the choreography, and [`time_cold`] is
//! cold mode on top of any [`GpuApi`].

use super::{GpuApi, Op};

/// The driver calls event timing needs, on one device the backend has made
/// A device's two streams and its three events (see [`EventDevice::resources`]).
pub type Resources<S, E> = ([S; 2], [E; 3]);

/// current. Every call reports failure as the driver's message.
pub trait EventDevice {
    type Stream: Copy;
    type Event: Copy;
    /// Make the device current and return its two streams and its three
    /// events: [start, stop, end of the second lane].
    fn resources(&mut self) -> Result<Resources<Self::Stream, Self::Event>, String>;
    /// Record `event` on `stream`.
    fn record(&mut self, event: Self::Event, stream: Self::Stream) -> Result<(), String>;
    /// Make `stream` wait until `event` has happened.
    fn wait(&mut self, stream: Self::Stream, event: Self::Event) -> Result<(), String>;
    /// Enqueue one operation on `stream`.
    fn enqueue(&mut self, stream: Self::Stream, op: &Op) -> Result<(), String>;
    /// Block the host until `event` has happened.
    fn synchronize(&mut self, event: Self::Event) -> Result<(), String>;
    /// Milliseconds between two recorded events.
    fn elapsed_ms(&mut self, start: Self::Event, end: Self::Event) -> Result<f32, String>;
}

/// [`GpuApi::time`] for an event-timed device: record the start event on
/// stream 0; a second lane's stream waits for it; `n` repetitions of each
/// lane are enqueued, each lane on its own stream; stream 0 waits for the
/// second lane's end; the stop event is recorded on stream 0 and waited
/// for. Returns the seconds between start and stop.
pub fn time_lanes<D: EventDevice + ?Sized>(dev: &mut D, lanes: &[Op], n: u64) -> Result<f64, String> {
    if lanes.len() > 2 {
        return Err("at most two concurrent lanes".into());
    }
    let (streams, ev) = dev.resources()?;
    dev.record(ev[0], streams[0])?;
    if lanes.len() == 2 {
        dev.wait(streams[1], ev[0])?;
    }
    for _ in 0..n {
        for (i, op) in lanes.iter().enumerate() {
            dev.enqueue(streams[i], op)?;
        }
    }
    if lanes.len() == 2 {
        dev.record(ev[2], streams[1])?;
        dev.wait(streams[0], ev[2])?;
    }
    dev.record(ev[1], streams[0])?;
    dev.synchronize(ev[1])?;
    let ms = dev.elapsed_ms(ev[0], ev[1])?;
    Ok(ms as f64 * 1e-3)
}

/// Cold mode: `n` times, flush the L2 cache, then time one operation per
/// lane alone; the sum of those times.
pub fn time_cold<A: GpuApi + ?Sized>(api: &mut A, device: usize, lanes: &[Op], n: u64) -> Result<f64, String> {
    let mut total = 0.0;
    for _ in 0..n {
        api.flush_l2(device)?;
        total += api.time(device, lanes, 1)?;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::gpu::DevBuf;

    /// Records every call, with a clock that advances 1 ms per operation.
    #[derive(Default)]
    struct Log {
        calls: Vec<String>,
        ops: u32,
    }

    impl EventDevice for Log {
        type Stream = u8;
        type Event = u8;
        fn resources(&mut self) -> Result<([u8; 2], [u8; 3]), String> {
            Ok(([0, 1], [0, 1, 2]))
        }
        fn record(&mut self, event: u8, stream: u8) -> Result<(), String> {
            self.calls.push(format!("record e{event} s{stream}"));
            Ok(())
        }
        fn wait(&mut self, stream: u8, event: u8) -> Result<(), String> {
            self.calls.push(format!("wait s{stream} e{event}"));
            Ok(())
        }
        fn enqueue(&mut self, stream: u8, _op: &Op) -> Result<(), String> {
            self.ops += 1;
            self.calls.push(format!("op s{stream}"));
            Ok(())
        }
        fn synchronize(&mut self, event: u8) -> Result<(), String> {
            self.calls.push(format!("sync e{event}"));
            Ok(())
        }
        fn elapsed_ms(&mut self, _start: u8, _end: u8) -> Result<f32, String> {
            Ok(self.ops as f32)
        }
    }

    #[test]
    fn two_lanes_fork_from_the_start_event_and_join_before_the_stop() {
        let b = DevBuf { device: 0, ptr: 0x1000, bytes: 64 };
        let op = Op::Peer { dst: b, src: b };
        let mut log = Log::default();
        let s = time_lanes(&mut log, &[op, op], 2).unwrap();
        assert!((s - 4e-3).abs() < 1e-12, "{s}");
        let want = [
            "record e0 s0",
            "wait s1 e0",
            "op s0",
            "op s1",
            "op s0",
            "op s1",
            "record e2 s1",
            "wait s0 e2",
            "record e1 s0",
            "sync e1",
        ];
        assert_eq!(log.calls, want);
        let mut one = Log::default();
        time_lanes(&mut one, &[op], 3).unwrap();
        assert_eq!(one.calls, ["record e0 s0", "op s0", "op s0", "op s0", "record e1 s0", "sync e1"]);
        assert_eq!(time_lanes(&mut Log::default(), &[op, op, op], 1).unwrap_err(), "at most two concurrent lanes");
    }
}
