//! What differs between the environments of two runs: host (CPU, memory,
//! OS, kernel), the benchbook build, the backends' device facts (drivers,
//! runtime and library versions, clocks, power limits) and the recorded
//! environment variables. Two runs that differ in a number should first be
//! read against this list.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use crate::archive::Manifest;

/// One setting that differs, as a dotted path (`host.kernel`,
/// `backends.cuda.facts.driver_version`, `env.OMP_NUM_THREADS`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EnvDifference {
    pub what: String,
    /// `None`: not recorded in that run.
    pub a: Option<String>,
    pub b: Option<String>,
}

fn flatten(prefix: &str, v: &serde_json::Value, out: &mut Vec<(String, String)>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                flatten(&format!("{prefix}.{k}"), v, out);
            }
        }
        serde_json::Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                flatten(&format!("{prefix}.{i}"), v, out);
            }
        }
        serde_json::Value::Null => {}
        serde_json::Value::String(s) => out.push((prefix.to_string(), s.clone())),
        other => out.push((prefix.to_string(), other.to_string())),
    }
}

/// The settings of one manifest that describe where it ran, flattened.
fn settings(m: &Manifest) -> BTreeMap<String, String> {
    let mut out = Vec::new();
    flatten("host", &serde_json::to_value(&m.host).unwrap_or_default(), &mut out);
    flatten("tool", &serde_json::to_value(&m.tool).unwrap_or_default(), &mut out);
    for b in &m.backends {
        flatten(&format!("backends.{}", b.name), &serde_json::to_value(b).unwrap_or_default(), &mut out);
    }
    out.extend(m.env.iter().map(|(k, v)| (format!("env.{k}"), v.clone())));
    out.into_iter().collect()
}

/// Every setting that differs between runs `a` and `b`, sorted by name.
pub fn environment_diff(a: &Manifest, b: &Manifest) -> Vec<EnvDifference> {
    differences(&settings(a), &settings(b))
}

/// The settings whose values differ between two sets, sorted by name.
fn differences(sa: &BTreeMap<String, String>, sb: &BTreeMap<String, String>) -> Vec<EnvDifference> {
    let keys: BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    keys.into_iter()
        .filter(|k| sa.get(*k) != sb.get(*k))
        .map(|k| EnvDifference { what: k.clone(), a: sa.get(k).cloned(), b: sb.get(k).cloned() })
        .collect()
}

/// What the sensors read in a run, per device, as settings: the median
/// clock over its measured rows, the median power over its rounds long
/// enough for the energy counter, the hottest reading, and every throttle
/// reason seen (schema v7 rows; nothing for older runs).
fn telemetry_settings(rows: &[crate::vocab::rows::Row]) -> BTreeMap<String, String> {
    let mut by_device: BTreeMap<&str, Vec<&crate::vocab::telemetry::StepTelemetry>> = BTreeMap::new();
    for r in rows.iter().filter(|r| r.status == crate::vocab::rows::Status::Measured) {
        if let Some(t) = &r.telemetry {
            by_device.entry(r.device.as_str()).or_default().push(t);
        }
    }
    let mut out = BTreeMap::new();
    for (device, ts) in by_device {
        let median = |mut v: Vec<f64>| (!v.is_empty()).then(|| crate::vocab::stats::median_unsorted(&mut v));
        let key = |what: &str| format!("telemetry.{device}.{what}");
        if let Some(c) = median(ts.iter().filter_map(|t| t.clock_mhz).collect()) {
            out.insert(key("clock_mhz (median)"), format!("{c:.0}"));
        }
        let long = ts.iter().filter(|t| t.readings >= crate::vocab::telemetry::MIN_POWER_READINGS);
        if let Some(w) = median(long.filter_map(|t| t.power_w).collect()) {
            out.insert(key("power_w (median)"), format!("{w:.0}"));
        }
        if let Some(t) = ts.iter().filter_map(|t| t.temperature_c).reduce(f64::max) {
            out.insert(key("temperature_c (max)"), format!("{t:.0}"));
        }
        let mask = ts.iter().filter_map(|t| t.throttle).fold(0, |a, b| a | b);
        let reasons = crate::vocab::telemetry::reported(mask);
        out.insert(key("throttle reasons"), if reasons.is_empty() { "none".into() } else { reasons.join(", ") });
    }
    out
}

/// The clock, power, temperature and throttle differences between the
/// rows of runs `a` and `b`, as [`environment_diff`] lists settings.
pub fn telemetry_diff(a: &[crate::vocab::rows::Row], b: &[crate::vocab::rows::Row]) -> Vec<EnvDifference> {
    differences(&telemetry_settings(a), &telemetry_settings(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn telemetry_differences_list_clock_power_and_reasons() {
        use crate::vocab::rows::Row;
        use crate::vocab::telemetry::StepTelemetry;
        let row = |clock: f64, power: f64, throttle: u64| Row {
            device: "GPU 0".into(),
            telemetry: Some(StepTelemetry {
                readings: 30,
                clock_mhz: Some(clock),
                power_w: Some(power),
                throttle: Some(throttle),
                ..StepTelemetry::default()
            }),
            ..Row::blank()
        };
        let a = vec![row(1980.0, 300.0, 0x4); 3];
        assert!(telemetry_diff(&a, &a).is_empty());
        let b = vec![row(1470.0, 690.0, 0x4 | 0x40); 3];
        let d = telemetry_diff(&a, &b);
        let got: Vec<(&str, Option<&str>, Option<&str>)> =
            d.iter().map(|d| (d.what.as_str(), d.a.as_deref(), d.b.as_deref())).collect();
        assert_eq!(
            got,
            [
                ("telemetry.GPU 0.clock_mhz (median)", Some("1980"), Some("1470")),
                ("telemetry.GPU 0.power_w (median)", Some("300"), Some("690")),
                (
                    "telemetry.GPU 0.throttle reasons",
                    Some("software power cap"),
                    Some("software power cap, hardware thermal slowdown")
                ),
            ]
        );
        // Older rows carry none: nothing to list.
        assert!(telemetry_diff(&[Row::blank()], &[Row::blank()]).is_empty());
    }

    #[test]
    fn differences_name_the_setting_and_both_values() {
        let a = Manifest::begin(
            "a",
            crate::vocab::source::RunOrigin::Native,
            crate::vocab::config::RunConfig::Import { import: Vec::new() },
            vec![],
        );
        let mut b = a.clone();
        assert!(environment_diff(&a, &b).is_empty());
        b.host.kernel = "6.1.0-99".into();
        b.host.logical_cpus += 6;
        b.env.insert("OMP_PROC_BIND".into(), "close".into());
        let d = environment_diff(&a, &b);
        let whats: Vec<&str> = d.iter().map(|d| d.what.as_str()).collect();
        assert_eq!(whats, ["env.OMP_PROC_BIND", "host.kernel", "host.logical_cpus"]);
        assert_eq!(d[0].a, None);
        assert_eq!(d[0].b.as_deref(), Some("close"));
        assert_eq!(d[1].b.as_deref(), Some("6.1.0-99"));
    }
}
