//! Partitions against one instance, through the real binary: `run exec
//! --partitions 2` and `--partition-devices` (each copy sees only its own
//! GPU), then `compare` and the compare report on `label:` groups, where
//! the partitioned run reads folded (throughputs summed, latencies
//! averaged) and the report adds each partition's own figures.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::bin;

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// `run exec` with its flags, then the shell script after `--`.
fn exec(archive: &Path, flags: &[&str], script: &str) -> Output {
    Command::new(bin())
        .args(["-q", "run", "exec", "--archive"])
        .arg(archive)
        .args(flags)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap()
}

/// A metric line: `items_per_s` (higher is better) and `wait_ms` (lower),
/// with the shell expression `items` and `wait` for values.
fn metrics(items: &str, wait: &str) -> String {
    format!(
        r#"echo "{{\"metric\":\"items_per_s\",\"value\":{items},\"unit\":\"items/s\",\"params\":{{\"rate\":8}}}}" >> "$BENCHBOOK_METRICS_FILE"; echo "{{\"metric\":\"wait_ms\",\"value\":{wait},\"unit\":\"ms\",\"better\":\"lower\",\"params\":{{\"rate\":8}}}}" >> "$BENCHBOOK_METRICS_FILE""#
    )
}

#[test]
fn partitions_compare_folded_against_one_instance() {
    if benchbook::session::partitions::allowed_cpus().len() < 2 {
        eprintln!("skipped: one CPU cannot hold two partitions");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let a = tmp.path();
    // One instance: 300 items/s, 4 ms.
    let o = exec(a, &["--repeat", "3", "--label", "whole"], &metrics("300", "4"));
    assert!(o.status.success(), "{}", text(&o));
    // Two partitions: 100 and 150 items/s (250 together), 4 and 8 ms (6 on average).
    let o = exec(
        a,
        &["--repeat", "3", "--partitions", "2", "--label", "parts"],
        &metrics("$((100 + 50 * BENCHBOOK_PARTITION))", "$((4 + 4 * BENCHBOOK_PARTITION))"),
    );
    assert!(o.status.success(), "{}", text(&o));

    let o = Command::new(bin())
        .args(["compare", "label:whole", "label:parts", "--json", "--archive"])
        .arg(a)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_else(|_| panic!("{}", text(&o)));
    let point = |m: &str| {
        v["points"].as_array().unwrap().iter().find(|p| p["metric"] == m).unwrap_or_else(|| panic!("{m}: {v}")).clone()
    };
    let items = point("items_per_s");
    assert_eq!((items["median_a"].as_f64(), items["median_b"].as_f64()), (Some(300.0), Some(250.0)), "{items}");
    assert_eq!(items["verdict"], "slower");
    let wait = point("wait_ms");
    assert_eq!(wait["median_b"].as_f64(), Some(6.0), "{wait}");
    let summary = v["summary"].as_array().unwrap();
    let s = summary.iter().find(|s| s["curve"] == "items_per_s").unwrap();
    assert_eq!(s["verdict"], "slower", "{s}");
    assert_eq!(s["slower"], 1);
    // Exit 1: a slower point is a regression by default.
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));

    // The report: the summary row says what --json says, and the
    // partitions section has each partition's own figure.
    let out = tmp.path().join("report");
    let o = Command::new(bin())
        .args(["-q", "report", "label:whole", "label:parts", "--kind", "compare", "--format", "md", "--archive"])
        .arg(a)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    let row = md.lines().find(|l| l.starts_with("| parts |") && l.contains(r"| items\_per\_s |"));
    let row = row.unwrap_or_else(|| panic!("no summary row:\n{md}"));
    // A throughput that fell reads "lower, worse", never "slower".
    assert!(row.contains("lower, worse (1 lower)") && row.contains("16.7 % lower") && row.contains("0.833"), "{row}");
    assert!(md.contains("## Partitions: parts against whole"), "{md}");
    assert!(md.contains("P0 100 items/s · P1 150 items/s"), "{md}");
    // Unknown labels name the ones there are.
    let o = Command::new(bin()).args(["compare", "label:nope", "label:parts", "--archive"]).arg(a).output().unwrap();
    assert!(!o.status.success() && text(&o).contains("whole"), "{}", text(&o));
}

#[test]
fn each_device_partition_sees_only_its_own_gpu() {
    if benchbook::session::partitions::allowed_cpus().len() < 2 {
        eprintln!("skipped: one CPU cannot hold two partitions");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // Fails (and the run with it) unless the copy sees exactly its device.
    let check = r#"test -n "$CUDA_VISIBLE_DEVICES" && test "$CUDA_VISIBLE_DEVICES" = "$HIP_VISIBLE_DEVICES" && test "$CUDA_VISIBLE_DEVICES" = "$BENCHBOOK_PARTITION_DEVICE" && case "$BENCHBOOK_PARTITION:$CUDA_VISIBLE_DEVICES" in 0:MIG-aaaa|1:MIG-bbbb) true;; *) false;; esac"#;
    let o = exec(tmp.path(), &["--partition-devices", "MIG-aaaa,MIG-bbbb"], check);
    assert!(o.status.success(), "{}", text(&o));
    let o = Command::new(bin()).args(["show", "latest", "--json", "--archive"]).arg(tmp.path()).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let devices = &v["manifest"]["config"]["exec"]["partition_devices"];
    assert_eq!(devices, &serde_json::json!(["MIG-aaaa", "MIG-bbbb"]), "{v}");
    // More instances asked for than devices named is refused, by flag.
    let o = exec(tmp.path(), &["--partitions", "3", "--partition-devices", "0,1"], "true");
    assert!(!o.status.success() && text(&o).contains("--partition-devices names 2 devices"), "{}", text(&o));
}
