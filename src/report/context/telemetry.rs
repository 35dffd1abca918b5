//! The telemetry section: what the sensors read while each curve and GEMM
//! point was measured (clock, power, temperature, throttle reasons,
//! energy per GB or per GFLOP), which points were measured while
//! throttled, and, per device, what its sensor could not read and why.

use serde::Serialize;

use crate::analysis::PointStat;
use crate::archive::manifest::Manifest;
use crate::vocab::units::{format_bytes, format_sig3};

/// One curve (a size sweep) or one point without a size (a GEMM).
#[derive(Debug, Clone, Serialize)]
pub struct TelemetryRow {
    pub subject: String,
    pub run: String,
    /// Points with readings, of all its points.
    pub points: String,
    /// Median clock over its points, MHz, as a range when they differ.
    pub clock: String,
    pub power: String,
    pub temperature: String,
    /// Every throttle reason its points saw, in words (idle left out).
    pub reasons: String,
    /// J/GB at its largest size (copies), GFLOP/J (GEMM).
    pub energy: String,
    /// How many of its points count as throttled, and why.
    pub throttled: String,
}

/// One device's sensor.
#[derive(Debug, Clone, Serialize)]
pub struct SensorRow {
    pub run: String,
    pub device: String,
    pub sensor: String,
    pub readings: u64,
    pub interval_ms: u32,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TelemetrySection {
    pub rows: Vec<TelemetryRow>,
    pub sensors: Vec<SensorRow>,
    /// Points held out of plateaus and key results (throttled).
    pub held_out: usize,
    /// Throttled points kept in (`--keep-throttled`).
    pub kept: usize,
    /// Points throttled only in the capped rounds their figure leaves out:
    /// kept in, their figure their full-clock rounds'.
    pub throttled_capped: usize,
    /// How far below its point's fastest round a round's clock may run and
    /// still count as full clock, in percent
    /// ([`crate::vocab::telemetry::CAPPED_CLOCK_GAP`]).
    pub capped_gap_pct: String,
    /// Points whose rounds ran in two power states: the headline from the
    /// full-clock rounds and the capped ones apart
    /// ([`crate::analysis::summary::CappedRounds`]).
    pub power_states: Vec<PowerStates>,
}

/// One point whose rounds ran in two power states: its figure from its
/// full-clock rounds, and its capped rounds apart.
#[derive(Debug, Clone, Serialize)]
pub struct PowerStates {
    pub point: String,
    pub run: String,
    /// The point's figure (its full-clock rounds; all rounds when `all`).
    pub figure: String,
    pub full_clock: String,
    /// The capped rounds' figure, clock, and how many of the rounds.
    pub capped: String,
    pub capped_clock: String,
    pub rounds: String,
}

fn range(values: &[f64], digits: fn(f64) -> String) -> String {
    let lo = values.iter().copied().reduce(f64::min);
    let hi = values.iter().copied().reduce(f64::max);
    match (lo, hi) {
        (Some(lo), Some(hi)) if digits(lo) == digits(hi) => digits(lo),
        (Some(lo), Some(hi)) => format!("{}–{}", digits(lo), digits(hi)),
        _ => "—".into(),
    }
}

/// A note as a sentence: its first letter upper case.
fn sentence(note: &str) -> String {
    let mut c = note.chars();
    c.next().map_or_else(String::new, |f| f.to_uppercase().chain(c).collect())
}

fn whole(v: f64) -> String {
    format!("{v:.0}")
}

/// A row for `points` (one curve, or one GEMM point), when any has readings.
fn row(subject: String, run: String, points: &[&PointStat], nominal: bool) -> Option<TelemetryRow> {
    let with: Vec<&crate::analysis::telemetry::PointTelemetry> =
        points.iter().filter_map(|p| p.telemetry.as_ref()).collect();
    if with.is_empty() {
        return None;
    }
    // Every round's value spans its point's range; a curve spans its points'.
    type Of = fn(&crate::analysis::telemetry::PointTelemetry) -> Option<(f64, f64)>;
    let pick = |f: Of| -> Vec<f64> { with.iter().filter_map(|t| f(t)).flat_map(|(a, b)| [a, b]).collect() };
    let mut reasons: Vec<&str> = Vec::new();
    for r in with.iter().flat_map(|t| t.reasons()) {
        if !reasons.contains(&r) {
            reasons.push(r);
        }
    }
    let throttled: Vec<&str> = with.iter().filter_map(|t| t.throttled.as_deref()).collect();
    let unread = with.iter().all(|t| t.throttle.is_none());
    // Energy at the largest size of a sweep; the best GFLOP/J of a GEMM.
    let largest = points.iter().filter(|p| p.telemetry.is_some()).max_by_key(|p| p.size_bytes);
    let energy = match largest.and_then(|p| Some((p, p.telemetry.as_ref()?))) {
        Some((p, t)) if t.j_per_gb.is_some() => {
            format!(
                "{} J/GB at {}",
                format_sig3(t.j_per_gb.unwrap_or_default()),
                format_bytes(p.size_bytes.unwrap_or(0))
            )
        }
        Some((_, t)) if t.gflop_per_j.is_some() => {
            format!("{} GFLOP/J", format_sig3(t.gflop_per_j.unwrap_or_default()))
        }
        _ => "—".into(),
    };
    let clock = range(&pick(|t| t.clock_range_mhz.or(t.clock_mhz.map(|c| (c, c)))), whole);
    Some(TelemetryRow {
        subject,
        run,
        points: format!("{} of {}", with.len(), points.len()),
        clock: if nominal && clock != "—" { format!("{clock} (a constant figure, not a reading)") } else { clock },
        power: match range(&pick(|t| t.power_w.map(|w| (w, w))), whole) {
            p if p == "—" && with.iter().any(|t| t.power_range_w.is_some()) => {
                "— (no round long enough: 0.5 s, 25 readings)".into()
            }
            p => match with.iter().filter_map(|t| t.over_limit_w).next() {
                Some(limit) => format!(
                    "{p} (above the board's {} W limit at {} point(s): a mean a board cannot hold for long, so no energy figure there)",
                    format_sig3(limit),
                    with.iter().filter(|t| t.over_limit_w.is_some()).count()
                ),
                None => p,
            },
        },
        temperature: range(&pick(|t| t.temperature_c.map(|c| (c, c))), whole),
        // "none" only where something could have read one: a sensor
        // without throttle reasons, and a clock that is a constant figure,
        // can tell nothing (F25).
        reasons: match (reasons.is_empty(), unread) {
            (true, true) => "not readable here".into(),
            (true, false) => "none".into(),
            (false, _) => reasons.join(", "),
        },
        energy,
        throttled: match throttled.first() {
            None if unread && nominal => "not judged: no throttle reasons, and the clock is not a reading".into(),
            None => "none".into(),
            Some(why) => format!("{} ({why})", throttled.len()),
        },
    })
}

/// Whether `p`'s clock readings are a constant figure (not a reading) in
/// its run, as its manifest's telemetry says.
pub fn nominal_clock(manifests: &[Manifest], p: &PointStat) -> bool {
    manifests
        .iter()
        .filter(|m| m.run_id == p.run_id)
        .flat_map(|m| &m.telemetry)
        .any(|t| t.device == p.device && t.clock_constant_mhz.is_some())
}

/// The section, when any point carries readings or any run sampled (or
/// tried to sample) a sensor.
pub fn telemetry_section(
    manifests: &[Manifest],
    stats: &[PointStat],
    series: &[crate::analysis::Series],
) -> Option<TelemetrySection> {
    let name = |run: &str| {
        let m = manifests.iter().find(|m| m.run_id == run);
        m.and_then(|m| m.label.clone()).unwrap_or_else(|| run.to_string())
    };
    let nominal = |p: &PointStat| nominal_clock(manifests, p);
    let mut rows = Vec::new();
    for c in series {
        let pts: Vec<&PointStat> = c.points.iter().collect();
        let nominal = pts.first().is_some_and(|p| nominal(p));
        rows.extend(row(format!("{} ({})", c.name(), c.device), name(&c.run_id), &pts, nominal));
    }
    for p in stats.iter().filter(|p| p.size_bytes.is_none()) {
        let subject = format!("{} ({})", p.params().label_with(false), p.device);
        rows.extend(row(subject, name(&p.run_id), &[p], nominal(p)));
    }
    let sensors: Vec<SensorRow> = manifests
        .iter()
        .flat_map(|m| {
            m.telemetry.iter().map(move |t| SensorRow {
                run: m.label.clone().unwrap_or_else(|| m.run_id.clone()),
                device: t.device.clone(),
                sensor: t.sensor.clone().unwrap_or_else(|| "none".into()),
                readings: t.readings,
                interval_ms: t.interval_ms,
                notes: t.notes.iter().map(|n| sentence(n)).collect(),
            })
        })
        .collect();
    if rows.is_empty() && sensors.is_empty() {
        return None;
    }
    // Throttled only in capped rounds the figure leaves out: kept by rule,
    // not by `--keep-throttled`.
    let split = |p: &&PointStat| p.capped.as_ref().is_some_and(|c| !c.all);
    let flagged = |held: bool| {
        stats
            .iter()
            .filter(|p| p.telemetry.as_ref().is_some_and(|t| t.throttled.is_some() && t.held_out == held))
            .filter(|p| held || !split(p))
            .count()
    };
    let throttled_capped = stats
        .iter()
        .filter(|p| p.telemetry.as_ref().is_some_and(|t| t.throttled.is_some() && !t.held_out))
        .filter(split)
        .count();
    let mhz = |m: Option<f64>| m.map_or("—".to_string(), |m| format!("{m:.0}"));
    let power_states = stats
        .iter()
        .filter_map(|p| {
            let c = p.capped.as_ref()?;
            Some(PowerStates {
                point: format!("{} ({})", p.params().label_with(false), p.device),
                run: name(&p.run_id),
                figure: p.rate_at(p.median_seconds),
                full_clock: if c.all { "— (every round capped)".into() } else { mhz(c.full_clock_mhz) },
                capped: if c.all { p.rate_at(p.median_seconds) } else { p.rate_at(c.median_seconds) },
                capped_clock: mhz(c.clock_mhz),
                rounds: format!("{} of {}", c.rounds, c.of),
            })
        })
        .collect();
    Some(TelemetrySection {
        rows,
        sensors,
        held_out: flagged(true),
        kept: flagged(false),
        throttled_capped,
        capped_gap_pct: format!("{:.0} %", crate::vocab::telemetry::CAPPED_CLOCK_GAP * 100.0),
        power_states,
    })
}

/// What the sensors read while a headline number was measured.
#[derive(Debug, Clone, Serialize)]
pub struct Conditions {
    /// `1515 MHz`.
    pub clock: Option<String>,
    /// `585 W`.
    pub power: Option<String>,
    /// `0.064 J/GB`, `1150 GFLOP/J`.
    pub energy: Option<String>,
    /// The throttle reasons it ran under, in words (kept in by
    /// `--keep-throttled` when it counts as throttled).
    pub reasons: Option<String>,
    /// Where some of its rounds ran power-capped and the headline is its
    /// full-clock rounds': both states in words ([`PointStat::power_states`]);
    /// the clock is then the full-clock rounds', and power, energy and
    /// reasons (read over every round) are not given for it.
    pub capped: Option<String>,
}

impl Conditions {
    /// The conditions of a point, when its rows carry telemetry; no clock
    /// when its clock is a constant figure rather than a reading.
    pub fn of(p: &PointStat, nominal_clock: bool) -> Option<Conditions> {
        let t = p.telemetry.as_ref()?;
        let energy = match (t.j_per_gb, t.gflop_per_j) {
            (Some(j), _) => Some(format!("{} J/GB", format_sig3(j))),
            (None, Some(g)) => Some(format!("{} GFLOP/J", format_sig3(g))),
            _ => None,
        };
        let reasons = t.reasons();
        let split = p.capped.as_ref().filter(|c| !c.all);
        if let Some(c) = split {
            let clock = c.full_clock_mhz.filter(|_| !nominal_clock).map(|m| format!("{m:.0} MHz"));
            return Some(Conditions { clock, power: None, energy: None, reasons: None, capped: p.power_states() });
        }
        let clock = t.clock_mhz.filter(|_| !nominal_clock).map(|c| format!("{c:.0} MHz"));
        let power = t.power_w.map(|w| match t.over_limit_w {
            Some(limit) => format!(
                "{} W (above the board's {} W limit: a mean a board cannot hold for long, so no energy figure)",
                format_sig3(w),
                format_sig3(limit)
            ),
            None => format!("{} W", format_sig3(w)),
        });
        if clock.is_none() && power.is_none() {
            return None;
        }
        Some(Conditions {
            clock,
            power,
            energy,
            reasons: (!reasons.is_empty()).then(|| reasons.join(", ")),
            capped: None,
        })
    }
}
