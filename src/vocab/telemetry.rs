//! Telemetry: what a device's sensors read while a point was measured
//! (clocks, power, temperature, throttle reasons, energy), as pure types
//! and functions. The sampler thread that takes the readings is
//! [`crate::bench::telemetry`]; the sensors are the backends' (NVML for
//! CUDA GPUs, `/proc` and `/sys` for CPUs, the emulated device in tests).
//!
//! A step (one point, one round) gets one [`StepTelemetry`], summarized
//! from the readings that bracket it; each of its rows records it
//! (schema v7). Power is the mean over the step: from the energy counter
//! where the device has one (ΔE / Δt), else the power readings integrated
//! over time (trapezoids) divided by the time they span.

use serde::{Deserialize, Serialize};

/// One reading of a sensor, `t_s` seconds after the monitor started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Reading {
    pub t_s: f64,
    /// The SM (GPU) or core (CPU) clock, MHz.
    pub clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    /// Instantaneous (or the device's short-window average) power, W.
    pub power_w: Option<f64>,
    pub temperature_c: Option<f64>,
    /// The device's throttle-reason bitmask ([`REASONS`]).
    pub throttle: Option<u64>,
    /// A monotonic energy counter, J (NVML's total energy, RAPL).
    pub energy_j: Option<f64>,
    /// The clock the device is set to run at (NVML's default application
    /// clock): a step whose median clock is below [`SLOW_FRACTION`] of it
    /// is flagged ([`BELOW_CLOCK`]).
    pub clock_ref_mhz: Option<f64>,
}

/// A device's sensors. `read` may be slow or fail; the monitor calls it
/// from its own thread and never waits on it for long.
pub trait Sensor: Send {
    /// Read every value the sensor has, now (`t_s` is filled in by the
    /// monitor).
    fn read(&mut self) -> Result<Reading, String>;
    /// What is read, and from where: `NVML (libnvidia-ml.so.1), GPU 0000:19:00.0`.
    fn describe(&self) -> String;
    /// What this sensor cannot read, and why (e.g. "no powercap on this VM").
    fn lacks(&self) -> Vec<String> {
        Vec::new()
    }
    /// Whether its clock may be a fixed figure rather than a reading
    /// (`/proc/cpuinfo` on a VM): a clock that never changes is then
    /// reported as likely nominal. A GPU holding its boost clock is not.
    fn clock_may_be_nominal(&self) -> bool {
        false
    }
}

/// Opens a sensor (on the monitor's thread: NVML's init may be slow).
pub type SensorOpener = Box<dyn FnOnce() -> Result<Box<dyn Sensor>, String> + Send>;

/// NVML's clocks-event (throttle) reasons, bit by bit, with the words a
/// report uses. `slows` marks the reasons that mean the device was held
/// below the clock it would otherwise run at for a reason outside the
/// benchmark (heat, a power brake, a hardware slowdown); the power cap is
/// how a GPU under full load normally runs, so it is listed but does not
/// flag a point on its own.
pub const REASONS: &[(u64, &str, bool)] = &[
    (0x1, "idle", false),
    (0x2, "application clock setting", false),
    (0x4, "software power cap", false),
    (0x8, "hardware slowdown", true),
    (0x10, "sync boost", false),
    (0x20, "software thermal slowdown", true),
    (0x40, "hardware thermal slowdown", true),
    (0x80, "hardware power brake", true),
    (0x100, "display clock setting", false),
];

/// benchbook's own bit in the `throttle` column: the step's median clock
/// was below [`SLOW_FRACTION`] of the device's reference clock (nvbench's
/// throttle rule).
pub const BELOW_CLOCK: u64 = 1 << 32;
/// The shortest window a mean power is given for, seconds: a GPU's
/// energy counter steps every few tens of milliseconds (on the H200, by
/// 3–26 J), so over 0.1 s one step more or less is ±20–50 %.
pub const MIN_POWER_WINDOW_S: f64 = 0.5;
/// The fewest readings a stored round's power counts with in analysis:
/// 0.5 s at the default 20 ms interval (rows recorded before the window
/// rule may hold a power over a few ms).
pub const MIN_POWER_READINGS: u32 = 25;

/// nvbench's default throttle threshold: 75 % of the reference clock.
pub const SLOW_FRACTION: f64 = 0.75;

/// NVML's `idle` bit: it says nothing about a measured point (a reading
/// between two kernels sets it), so reports leave it out.
pub const IDLE: u64 = 0x1;

/// The reasons set in `mask` that a report names: [`decode`] without
/// [`IDLE`].
pub fn reported(mask: u64) -> Vec<&'static str> {
    decode(mask & !IDLE)
}

/// The reasons set in `mask`, in words.
pub fn decode(mask: u64) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = REASONS.iter().filter(|(bit, ..)| mask & bit != 0).map(|r| r.1).collect();
    if mask & BELOW_CLOCK != 0 {
        out.push("below 75 % of its reference clock");
    }
    let known = REASONS.iter().fold(BELOW_CLOCK, |m, r| m | r.0);
    if mask & !known != 0 {
        out.push("other (bits NVML added after this build)");
    }
    out
}

/// Why a step (or point) with this mask counts as throttled, if it does:
/// a slowing reason ([`REASONS`]) or [`BELOW_CLOCK`].
pub fn throttled(mask: u64) -> Option<String> {
    let slow = REASONS.iter().filter(|r| r.2).fold(BELOW_CLOCK, |m, r| m | r.0);
    (mask & slow != 0).then(|| decode(mask & slow).join(", "))
}

/// A round's power state as its rows record it: its median clock (MHz)
/// and its throttle mask.
pub type RoundState = (Option<f64>, Option<u64>);

/// How far below its point's fastest round a round's median clock may run
/// and still count as the same power state: 10 %. A GEMM on an H200 holds
/// 1,920–1,980 MHz at full clock and drops to 1,395–1,530 MHz when its
/// power cap bites (`data/runs/20261126T152551Z-interleaved-1-2bef`); the
/// NVML `software power cap` bit is set at both, so the clock decides.
pub const CAPPED_CLOCK_GAP: f64 = 0.10;

/// Which of a point's rounds ran capped, from each round's `(median clock,
/// throttle mask)`: a slowing reason ([`throttled`]: a thermal slowdown, a
/// power brake, a hardware slowdown, below 75 % of the reference clock), or
/// a median clock more than [`CAPPED_CLOCK_GAP`] below the point's fastest
/// round. A round without readings is never called capped. The headline of
/// a point comes from its full-clock rounds where it has both
/// (`analysis::summary`).
pub fn capped_rounds(rounds: &[RoundState]) -> Vec<bool> {
    let fastest = rounds.iter().filter_map(|r| r.0).filter(|c| c.is_finite() && *c > 0.0).fold(0.0, f64::max);
    rounds
        .iter()
        .map(|&(clock, mask)| {
            let slowed = mask.is_some_and(|m| throttled(m).is_some());
            let below = clock.is_some_and(|c| fastest > 0.0 && c < (1.0 - CAPPED_CLOCK_GAP) * fastest);
            slowed || below
        })
        .collect()
}

/// Which rounds a point's figure rests on, from [`capped_rounds`]: its
/// full-clock rounds where it has both kinds, else all of them (every
/// round capped, or none).
pub fn headline_rounds(capped: &[bool]) -> Vec<bool> {
    if capped.iter().all(|&c| c) || !capped.iter().any(|&c| c) {
        vec![true; capped.len()]
    } else {
        capped.iter().map(|&c| !c).collect()
    }
}

/// The energy, J, of power readings `(t_s, W)` integrated over time by
/// trapezoids (readings in time order; fewer than two: none).
pub fn integrate_power(readings: &[(f64, f64)]) -> Option<f64> {
    if readings.len() < 2 {
        return None;
    }
    Some(readings.windows(2).map(|w| (w[1].0 - w[0].0).max(0.0) * (w[0].1 + w[1].1) / 2.0).sum())
}

/// What the sensors read over one step.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct StepTelemetry {
    /// Readings the summary rests on (those that bracket the step).
    pub readings: u32,
    pub clock_mhz: Option<f64>,
    pub mem_clock_mhz: Option<f64>,
    /// Mean power over the step, W.
    pub power_w: Option<f64>,
    /// The highest temperature read.
    pub temperature_c: Option<f64>,
    /// Every reason any reading set, OR-ed, plus [`BELOW_CLOCK`].
    pub throttle: Option<u64>,
}

/// Summarize the readings of a step that ran from `from_s` to `to_s`:
/// those inside it and the last one before and first one after (so that
/// a step shorter than the sampling interval still has two). None when
/// no reading was taken after the step began.
pub fn summarize(readings: &[Reading], from_s: f64, to_s: f64) -> Option<StepTelemetry> {
    let before = readings.iter().rposition(|r| r.t_s <= from_s);
    let after = readings.iter().position(|r| r.t_s >= to_s);
    let lo = before.unwrap_or_else(|| readings.iter().position(|r| r.t_s >= from_s).unwrap_or(readings.len()));
    let hi = after.map_or(readings.len(), |i| i + 1);
    let window = readings.get(lo..hi.max(lo))?;
    // Readings that all predate the step (a sensor that stopped) are not
    // its telemetry.
    if window.last().is_none_or(|r| r.t_s < from_s) {
        return None;
    }
    let median = |f: fn(&Reading) -> Option<f64>| {
        let mut v: Vec<f64> = window.iter().filter_map(f).collect();
        (!v.is_empty()).then(|| crate::vocab::stats::median_unsorted(&mut v))
    };
    let clock = median(|r| r.clock_mhz);
    let (first, last) = (window[0], window[window.len() - 1]);
    let span = last.t_s - first.t_s;
    // A GPU's energy counter steps every few tens of milliseconds, and its
    // power reading is an average over as long: a shorter window reads 0 W
    // or several kW, so it gets no power at all.
    let power = if span < MIN_POWER_WINDOW_S {
        None
    } else {
        match (first.energy_j, last.energy_j) {
            (Some(a), Some(b)) if span > 0.0 && b >= a => Some((b - a) / span),
            _ => {
                let p: Vec<(f64, f64)> = window.iter().filter_map(|r| Some((r.t_s, r.power_w?))).collect();
                match integrate_power(&p) {
                    Some(e) if p[p.len() - 1].0 > p[0].0 => Some(e / (p[p.len() - 1].0 - p[0].0)),
                    _ => p.first().map(|x| x.1),
                }
            }
        }
    };
    let mut throttle = window.iter().filter_map(|r| r.throttle).reduce(|a, b| a | b);
    if let (Some(c), Some(reference)) = (clock, median(|r| r.clock_ref_mhz)) {
        if reference > 0.0 && c < SLOW_FRACTION * reference {
            throttle = Some(throttle.unwrap_or(0) | BELOW_CLOCK);
        }
    }
    Some(StepTelemetry {
        readings: window.len() as u32,
        clock_mhz: clock,
        mem_clock_mhz: median(|r| r.mem_clock_mhz),
        power_w: power,
        temperature_c: window.iter().filter_map(|r| r.temperature_c).reduce(f64::max),
        throttle,
    })
}

/// What a run's telemetry was, per device, for the manifest (v8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetryInfo {
    /// The backend and device, as the rows name them.
    pub backend: String,
    pub device: String,
    /// The sensor ([`Sensor::describe`]), or none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<String>,
    /// Readings taken.
    pub readings: u64,
    /// Milliseconds between readings the sampler aimed for.
    pub interval_ms: u32,
    /// Set when a clock that may be a fixed figure (`/proc/cpuinfo` on a
    /// VM) read the same in every reading: that figure, MHz. Reports then
    /// do not state it as the clock a result was measured at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_constant_mhz: Option<f64>,
    /// What the sensor cannot read, and why; and why there is no
    /// telemetry at all, when there is none (NVML missing, an error, a
    /// sensor that stopped answering).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_well_below_the_fastest_clock_or_slowed_is_capped() {
        // The committed H200 bf16 8192³ point: 1965/1980 MHz rounds and one
        // at 1485 MHz, all with the software power cap bit (0x4) set.
        let r = |c: f64, m: u64| (Some(c), Some(m));
        let got = capped_rounds(&[r(1965.0, 4), r(1980.0, 0), r(1485.0, 4), r(1980.0, 0), r(1980.0, 0)]);
        assert_eq!(got, [false, false, true, false, false]);
        // 10 % below is the edge: 1782 of 1980 is the same state, 1781 not.
        assert_eq!(capped_rounds(&[r(1980.0, 4), r(1782.0, 4), r(1781.0, 4)]), [false, false, true]);
        // A slowing reason (hardware power brake, or below 75 % of the
        // reference clock) caps a round whatever its clock.
        assert_eq!(capped_rounds(&[r(1980.0, 0x80), r(1980.0, 4)]), [true, false]);
        assert_eq!(capped_rounds(&[r(1440.0, BELOW_CLOCK | 4), r(1440.0, 4)]), [true, false]);
        // No readings: never capped.
        assert_eq!(capped_rounds(&[(None, None), r(1000.0, 0)]), [false, false]);
    }

    fn r(t: f64, power: f64, clock: f64) -> Reading {
        Reading { t_s: t, power_w: Some(power), clock_mhz: Some(clock), ..Reading::default() }
    }

    #[test]
    fn throttle_masks_decode_to_words_and_only_slowing_reasons_flag() {
        assert_eq!(decode(0), Vec::<&str>::new());
        assert_eq!(decode(0x1 | 0x4), vec!["idle", "software power cap"]);
        assert_eq!(decode(0x40), vec!["hardware thermal slowdown"]);
        assert_eq!(decode(1 << 40), vec!["other (bits NVML added after this build)"]);
        assert_eq!(throttled(0x4), None, "the power cap is how a loaded GPU runs");
        assert_eq!(throttled(0x1), None);
        assert_eq!(throttled(0x4 | 0x20).as_deref(), Some("software thermal slowdown"));
        assert_eq!(throttled(BELOW_CLOCK).as_deref(), Some("below 75 % of its reference clock"));
    }

    #[test]
    fn power_integrates_by_trapezoids() {
        assert_eq!(integrate_power(&[(0.0, 100.0)]), None);
        // 100 W for 1 s then a ramp to 300 W over 1 s: 100 + 200 J.
        let e = integrate_power(&[(0.0, 100.0), (1.0, 100.0), (2.0, 300.0)]).unwrap();
        assert!((e - 300.0).abs() < 1e-9, "{e}");
    }

    #[test]
    fn a_step_takes_the_readings_that_bracket_it() {
        let rs: Vec<Reading> = (0..40).map(|i| r(i as f64 * 0.02, 100.0 + i as f64 * 10.0, 1000.0)).collect();
        // From 0.05 to 0.57: readings at 0.04 (before), 0.06 … 0.56, 0.58 (after).
        let s = summarize(&rs, 0.05, 0.57).unwrap();
        assert_eq!(s.readings, 28);
        // Linear power 120 → 390 W: the trapezoid mean is the midpoint.
        assert!((s.power_w.unwrap() - 255.0).abs() < 1e-9, "{s:?}");
        // A step between two readings still gets both, and its clock; but
        // 20 ms is too short a window for a mean power.
        let short = summarize(&rs, 0.061, 0.062).unwrap();
        assert_eq!((short.readings, short.clock_mhz, short.power_w), (2, Some(1000.0), None));
        assert_eq!(summarize(&[], 0.0, 1.0), None);
        // Readings that all came before the step are stale.
        assert_eq!(summarize(&rs[..10], 0.5, 0.6), None);
    }

    #[test]
    fn the_energy_counter_wins_over_power_readings() {
        let mut rs = vec![r(0.0, 50.0, 1980.0), r(1.0, 50.0, 1980.0)];
        rs[0].energy_j = Some(1000.0);
        rs[1].energy_j = Some(1400.0);
        assert_eq!(summarize(&rs, 0.0, 1.0).unwrap().power_w, Some(400.0));
        // A counter that went backwards (wrapped, reset) is not used.
        rs[1].energy_j = Some(10.0);
        assert_eq!(summarize(&rs, 0.0, 1.0).unwrap().power_w, Some(50.0));
    }

    #[test]
    fn a_clock_below_three_quarters_of_the_reference_is_flagged() {
        let mut rs = vec![r(0.0, 300.0, 1400.0), r(0.1, 300.0, 1400.0)];
        for x in &mut rs {
            x.clock_ref_mhz = Some(1980.0);
            x.throttle = Some(0x4);
        }
        let s = summarize(&rs, 0.0, 0.1).unwrap();
        assert_eq!(s.throttle, Some(0x4 | BELOW_CLOCK));
        for x in &mut rs {
            x.clock_mhz = Some(1755.0);
        }
        assert_eq!(summarize(&rs, 0.0, 0.1).unwrap().throttle, Some(0x4));
    }
}
