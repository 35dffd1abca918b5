//! The archive at fleet scale, small enough for a test: a synthetic fleet
//! (`benchbook::archive::synthetic`: real rows rescaled, per-node speeds,
//! per-run noise, one node 12 % slower from its 6th run on, three runs
//! damaged), then `list` by node from the catalog, and `history` with its
//! change points, through the real binary.

use std::process::Command;

use benchbook::archive::synthetic::{synthetic_fleet, SynthSpec};
use benchbook::archive::{Archive, RunDir};

use crate::common::bin;

const TEMPLATE: &str = "data/runs/20261122T014545Z-memcpy-rounds-a-2c86";

fn json(args: &[&str], archive: &std::path::Path) -> serde_json::Value {
    let o = Command::new(bin()).args(args).arg("--json").arg("--archive").arg(archive).output().unwrap();
    assert!(o.status.success(), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn a_drifting_node_is_found_where_it_drifts_and_damaged_runs_are_named() {
    let tmp = tempfile::tempdir().unwrap();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let template = RunDir { id: "template".into(), path: root.join(TEMPLATE) };
    let spec =
        SynthSpec { runs: 400, rows_per_run: 120, nodes: 40, drifting: 17, drift_at: 6, damage: 3, points: None };
    let made = synthetic_fleet(&template, &Archive::new(tmp.path()), &spec).unwrap();
    assert_eq!(made.damaged.len(), 3);

    // list: one node's runs, from the catalog (written on first use).
    let v = json(&["list", "--node", "node0017"], tmp.path());
    assert_eq!(v.as_array().unwrap().len(), 10, "{v}");
    assert!(tmp.path().join("catalog.parquet").exists());
    let all = json(&["list", "--fleet", "synthetic"], tmp.path());
    assert_eq!(all.as_array().unwrap().len(), 399, "every run but the one without a manifest has its fleet");

    // history: the drifting node's every point changes at its 6th run (±2).
    let h = json(&["history", "--fleet", "synthetic", "--bench", "memcpy"], tmp.path());
    let damaged: Vec<&str> = h["damaged"].as_array().unwrap().iter().map(|d| d[0].as_str().unwrap()).collect();
    assert_eq!(damaged.len(), 2, "the two changed results files (the third run has no manifest, so no fleet): {h}");
    for d in &damaged {
        assert!(made.damaged.iter().any(|m| m == d), "{d}");
    }
    let series = h["series"].as_array().unwrap();
    let (drift, others): (Vec<_>, Vec<_>) = series.iter().partition(|s| s["node"] == "node0017");
    assert!(!drift.is_empty());
    for s in &drift {
        let changes = s["changes"].as_array().unwrap();
        assert_eq!(changes.len(), 1, "{s}");
        let at = changes[0]["index"].as_u64().unwrap();
        assert!(at.abs_diff(6) <= 2, "{s}");
        assert!(changes[0]["change"].as_f64().unwrap() < -0.08, "{s}");
    }
    let false_alarms = others.iter().filter(|s| !s["changes"].as_array().unwrap().is_empty()).count();
    assert!(false_alarms * 100 <= others.len(), "{false_alarms} of {} steady series had a change point", others.len());
    // A second scan reads the hashes checked from the catalog, and still
    // names the damaged runs.
    let again = json(&["history", "--node", "node0017", "--changed"], tmp.path());
    assert!(again["series"].as_array().unwrap().iter().all(|s| s["node"] == "node0017"));
}
