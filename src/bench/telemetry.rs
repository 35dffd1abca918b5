//! The sampler beside every point: one thread per device reads its sensor
//! every `interval` (and at once when a step starts or ends), and a step's
//! telemetry is summarized from the readings that bracket it
//! ([`crate::vocab::telemetry::summarize`]).
//!
//! A hostile sensor is harmless. The sensor is opened on the sampler's own
//! thread; one that fails to open or to read is recorded (why there is no
//! telemetry) and sampling stops; one that hangs is waited on for at most
//! [`STALL`] once, then never again, and its thread is left behind when
//! the run ends. The benchmark never waits on a sensor beyond that.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::vocab::telemetry::{summarize, Reading, SensorOpener, StepTelemetry, TelemetryInfo};

/// The longest a step waits for the reading that closes it.
pub const STALL: Duration = Duration::from_millis(250);
/// Readings kept in memory; older ones are dropped (steps only look back
/// one step).
const KEEP: usize = 100_000;

#[derive(Default)]
struct State {
    readings: Vec<Reading>,
    taken: u64,
    /// Bumped to ask for a reading now.
    asked: u64,
    sensor: Option<String>,
    notes: Vec<String>,
    /// Sampling has ended (failed, or the monitor finished).
    over: bool,
    stop: bool,
    /// Reading paused (`--telemetry-ab`'s rounds without the sampler).
    paused: bool,
    /// The sensor's clock may be a fixed figure (`/proc/cpuinfo`): a
    /// clock that never changes is then said to be one.
    clock_may_be_nominal: bool,
}

struct Shared {
    state: Mutex<State>,
    /// The sampler waits on it (for the interval, or a request).
    ask: Condvar,
    /// Steps wait on it for a fresh reading.
    fresh: Condvar,
}

impl Shared {
    /// Ask the sampler for a reading now, without waiting for it.
    fn ask_now(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).asked += 1;
        self.ask.notify_all();
    }
}

/// A running sampler for one device.
pub struct Monitor {
    shared: Arc<Shared>,
    epoch: Instant,
    interval: Duration,
    stalled: bool,
}

impl Monitor {
    /// Start sampling the sensor `open` gives, every `interval_ms`.
    pub fn start(open: SensorOpener, interval_ms: u32) -> Monitor {
        let interval = Duration::from_millis(interval_ms.max(1) as u64);
        let shared = Arc::new(Shared { state: Mutex::default(), ask: Condvar::new(), fresh: Condvar::new() });
        let epoch = Instant::now();
        let s = shared.clone();
        let spawned = std::thread::Builder::new().name("benchbook-telemetry".into()).spawn(move || {
            sample(&s, open, epoch, interval);
        });
        if let Err(e) = spawned {
            let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
            st.notes.push(format!("no telemetry: the sampler thread could not start ({e})"));
            st.over = true;
        }
        Monitor { shared, epoch, interval, stalled: false }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Seconds since the monitor started.
    pub fn now(&self) -> f64 {
        self.epoch.elapsed().as_secs_f64()
    }

    /// Stop reading (the sampler thread waits, reading nothing) until
    /// [`Self::resume`]: a step measured without the sampler.
    pub fn pause(&self) {
        self.lock().paused = true;
    }

    pub fn resume(&self) {
        self.lock().paused = false;
        self.shared.ask.notify_all();
    }

    /// Seconds since the monitor started, at `t`.
    pub fn at(&self, t: Instant) -> f64 {
        t.saturating_duration_since(self.epoch).as_secs_f64()
    }

    /// A callback that asks for a reading now, without waiting (the
    /// sampler calls it when its timed samples start and end).
    pub fn mark(&self) -> crate::bench::sampler::Mark {
        let shared = self.shared.clone();
        crate::bench::sampler::Mark(Arc::new(move || shared.ask_now()))
    }

    /// A step starts: ask for a reading now (without waiting for it), and
    /// return the step's start time.
    pub fn begin(&self) -> f64 {
        let t = self.now();
        self.shared.ask_now();
        t
    }

    /// The step that began at `from_s` ended: ask for a reading, wait for
    /// it (at most [`STALL`], once), and summarize the readings over `span`
    /// (its timed samples) when given, else over the whole step. None when
    /// the sensor gave nothing.
    pub fn end(&mut self, from_s: f64, span: Option<(f64, f64)>) -> Option<StepTelemetry> {
        let to = self.now();
        let shared = self.shared.clone();
        let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
        if st.over && st.readings.is_empty() {
            return None;
        }
        st.asked += 1;
        shared.ask.notify_all();
        if !self.stalled && !st.over {
            let deadline = Instant::now() + STALL.max(self.interval * 2);
            while !st.over && st.readings.last().is_none_or(|r| r.t_s < to) {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    self.stalled = true;
                    st.notes.push(format!(
                        "the sensor did not answer within {} ms at {:.1} s into the run; later points use the \
                         readings it had given by then, if any",
                        STALL.max(self.interval * 2).as_millis(),
                        to
                    ));
                    break;
                }
                st = shared.fresh.wait_timeout(st, left).unwrap_or_else(|p| p.into_inner()).0;
            }
        }
        let (a, b) = span.unwrap_or((from_s, to));
        summarize(&st.readings, a, b)
    }

    /// The telemetry of a window that has already ended (no waiting).
    pub fn window(&self, from_s: f64, to_s: f64) -> Option<StepTelemetry> {
        summarize(&self.lock().readings, from_s, to_s)
    }

    /// Stop sampling and say what it was. A sampler stuck in its sensor is
    /// left behind, not waited for.
    pub fn finish(self, backend: &str, device: &str) -> TelemetryInfo {
        let mut st = self.lock();
        st.stop = true;
        self.shared.ask.notify_all();
        let clocks: Vec<f64> = st.readings.iter().filter_map(|r| r.clock_mhz).collect();
        let constant = st.clock_may_be_nominal && clocks.len() >= 10 && clocks.iter().all(|&c| c == clocks[0]);
        if constant {
            let n = clocks.len();
            st.notes.push(format!(
                "the clock read {} MHz in every one of {n} readings: a constant, likely the nominal figure the \
                 system reports rather than a measurement",
                clocks[0]
            ));
        }
        TelemetryInfo {
            backend: backend.into(),
            device: device.into(),
            sensor: st.sensor.clone(),
            readings: st.taken,
            interval_ms: self.interval.as_millis() as u32,
            clock_constant_mhz: constant.then(|| clocks[0]),
            notes: std::mem::take(&mut st.notes),
        }
    }
}

impl Drop for Monitor {
    fn drop(&mut self) {
        self.lock().stop = true;
        self.shared.ask.notify_all();
    }
}

/// The sampler thread: open, then read until told to stop or the sensor fails.
fn sample(s: &Shared, open: SensorOpener, epoch: Instant, interval: Duration) {
    let lock = || s.state.lock().unwrap_or_else(|p| p.into_inner());
    let mut sensor = match open() {
        Ok(sensor) => {
            let mut st = lock();
            st.sensor = Some(sensor.describe());
            st.notes.extend(sensor.lacks());
            st.clock_may_be_nominal = sensor.clock_may_be_nominal();
            sensor
        }
        Err(why) => {
            let mut st = lock();
            st.notes.push(format!("no telemetry: {why}"));
            st.over = true;
            drop(st);
            s.fresh.notify_all();
            return;
        }
    };
    let mut seen = 0;
    loop {
        {
            let st = lock();
            if st.paused && !st.stop {
                let st = s.ask.wait_while(st, |st| st.paused && !st.stop).unwrap_or_else(|p| p.into_inner());
                seen = st.asked;
            }
        }
        // A reading is stamped at the middle of the call that took it.
        let before = epoch.elapsed().as_secs_f64();
        let read = sensor.read();
        let t = (before + epoch.elapsed().as_secs_f64()) / 2.0;
        let mut st = lock();
        match read {
            Ok(r) => {
                st.readings.push(Reading { t_s: t, ..r });
                st.taken += 1;
                if st.readings.len() > KEEP {
                    st.readings.drain(..KEEP / 2);
                }
            }
            Err(why) => {
                st.notes.push(format!("telemetry stopped at {t:.1} s into the run: {why}"));
                st.over = true;
            }
        }
        s.fresh.notify_all();
        if st.over || st.stop {
            st.over = true;
            return;
        }
        // Sleep for the interval, or until a step asks for a reading.
        if st.asked == seen {
            st = s
                .ask
                .wait_timeout_while(st, interval, |st| st.asked == seen && !st.stop)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        seen = st.asked;
        if st.stop {
            st.over = true;
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vocab::telemetry::Sensor;

    struct Steady(f64);
    impl Sensor for Steady {
        fn read(&mut self) -> Result<Reading, String> {
            self.0 += 1.0;
            Ok(Reading { power_w: Some(100.0), clock_mhz: Some(1500.0), energy_j: Some(self.0), ..Reading::default() })
        }
        fn describe(&self) -> String {
            "steady".into()
        }
    }

    struct Hangs;
    impl Sensor for Hangs {
        fn read(&mut self) -> Result<Reading, String> {
            std::thread::sleep(Duration::from_secs(3600));
            Err("never".into())
        }
        fn describe(&self) -> String {
            "hangs".into()
        }
    }

    struct FailsAfter(u32);
    impl Sensor for FailsAfter {
        fn read(&mut self) -> Result<Reading, String> {
            if self.0 == 0 {
                return Err("NVML_ERROR_GPU_IS_LOST".into());
            }
            self.0 -= 1;
            Ok(Reading { clock_mhz: Some(1000.0), ..Reading::default() })
        }
        fn describe(&self) -> String {
            "fails".into()
        }
    }

    #[test]
    fn a_step_gets_the_readings_around_it() {
        let mut m = Monitor::start(Box::new(|| Ok(Box::new(Steady(0.0)) as Box<dyn Sensor>)), 5);
        let t = m.begin();
        std::thread::sleep(Duration::from_millis(30));
        let s = m.end(t, None).expect("readings");
        assert!(s.readings >= 2, "{s:?}");
        assert_eq!(s.clock_mhz, Some(1500.0));
        let info = m.finish("cuda", "GPU 0");
        assert_eq!(info.sensor.as_deref(), Some("steady"));
        assert!(info.readings >= 2 && info.notes.is_empty(), "{info:?}");
    }

    #[test]
    fn a_paused_sampler_reads_nothing_until_resumed() {
        let mut m = Monitor::start(Box::new(|| Ok(Box::new(Steady(0.0)) as Box<dyn Sensor>)), 2);
        std::thread::sleep(Duration::from_millis(20));
        m.pause();
        std::thread::sleep(Duration::from_millis(10));
        let before = m.lock().taken;
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(m.lock().taken, before, "no reading while paused");
        m.resume();
        let t = m.begin();
        assert!(m.end(t, None).is_some());
        assert!(m.lock().taken > before);
    }

    #[test]
    fn a_sensor_that_cannot_open_says_why_and_costs_nothing() {
        let mut m = Monitor::start(Box::new(|| Err("NVML not loaded (libnvidia-ml.so.1: not found)".into())), 5);
        std::thread::sleep(Duration::from_millis(20));
        let t = m.begin();
        assert_eq!(m.end(t, None), None);
        let info = m.finish("cuda", "GPU 0");
        assert_eq!(info.notes, vec!["no telemetry: NVML not loaded (libnvidia-ml.so.1: not found)"]);
    }

    #[test]
    fn a_hanging_sensor_is_waited_for_once_then_never() {
        let mut m = Monitor::start(Box::new(|| Ok(Box::new(Hangs) as Box<dyn Sensor>)), 5);
        let t0 = Instant::now();
        let t = m.begin();
        assert_eq!(m.end(t, None), None);
        let first = t0.elapsed();
        assert!(first >= STALL && first < STALL * 8, "{first:?}");
        let t1 = Instant::now();
        for _ in 0..20 {
            let t = m.begin();
            assert_eq!(m.end(t, None), None);
        }
        assert!(t1.elapsed() < STALL, "later steps must not wait: {:?}", t1.elapsed());
        let info = m.finish("cuda", "GPU 0");
        assert_eq!(info.notes.len(), 1, "{info:?}");
        assert!(info.notes[0].contains("did not answer"), "{info:?}");
    }

    #[test]
    fn a_sensor_that_fails_mid_run_keeps_its_readings_and_says_when() {
        let mut m = Monitor::start(Box::new(|| Ok(Box::new(FailsAfter(3)) as Box<dyn Sensor>)), 2);
        std::thread::sleep(Duration::from_millis(40));
        let t = m.begin();
        // A step after the failure has no telemetry (not the stale readings).
        assert_eq!(m.end(t, None), None);
        let info = m.finish("cuda", "GPU 0");
        assert_eq!(info.readings, 3);
        assert!(info.notes[0].contains("NVML_ERROR_GPU_IS_LOST"), "{info:?}");
    }
}
