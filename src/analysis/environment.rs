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
    let (sa, sb) = (settings(a), settings(b));
    let keys: BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    keys.into_iter()
        .filter(|k| sa.get(*k) != sb.get(*k))
        .map(|k| EnvDifference { what: k.clone(), a: sa.get(k).cloned(), b: sb.get(k).cloned() })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
