//! A real podman container on this machine (`scripts/container.sh`: an
//! empty image, the binary and its libraries bind-mounted, runc and
//! cgroupfs): a manifest written inside records the container, its runtime
//! and its CPU and memory limits; one written outside records none; and
//! the difference between the two is the first thing the environment
//! comparison lists.

use std::process::Command;

use benchbook::prelude::*;

use crate::common;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/container.sh");

/// Whether podman and runc can run a container here; CI must.
fn podman_usable() -> bool {
    let has = |p: &str| {
        Command::new("sh").args(["-c", &format!("command -v {p}")]).output().is_ok_and(|o| o.status.success())
    };
    let root = Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout == b"0\n");
    let ok = has("podman") && has("runc") && root;
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must run the container test (apt-get install podman runc; as root)"
        );
        eprintln!("skipped: needs podman, runc and root");
    }
    ok
}

#[test]
fn a_run_inside_podman_records_its_container_and_limits_and_one_outside_none() {
    if !podman_usable() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = tmp.path().join("archive");
    let state = tmp.path().join("podman");
    let what = ["-q", "run", "memcpy", "--sizes", "64K", "--threads", "1", "--min-time", "0.01", "--max-time", "0.05"];
    let o = Command::new("bash")
        .arg(SCRIPT)
        .args(["--cpus", "1", "--memory", "1g", "--"])
        .arg(common::bin())
        .arg(&archive)
        .args(what)
        .args(["--label", "container"])
        .env("BENCHBOOK_CONTAINER_DIR", &state)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let o =
        Command::new(common::bin()).args(what).args(["--label", "bare", "--archive"]).arg(&archive).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let runs = Archive::new(&archive).runs().unwrap();
    let manifests: Vec<Manifest> = runs.iter().map(|r| r.manifest().unwrap()).collect();
    let inside = manifests.iter().find(|m| m.label.as_deref() == Some("container")).unwrap();
    let outside = manifests.iter().find(|m| m.label.as_deref() == Some("bare")).unwrap();
    let c = inside.host.container.as_ref().expect("the container is recorded");
    assert_eq!((inside.host.in_container, c.runtime.as_str()), (Some(true), "podman"));
    assert!(c.evidence.iter().any(|e| e == "container=podman in pid 1's environment"), "{c:?}");
    assert!(c.id.as_deref().is_some_and(|id| id.len() >= 12), "{c:?}");
    assert_eq!(inside.host.cpu_quota, Some(1.0));
    assert_eq!(inside.host.memory_limit_bytes, Some(1 << 30));
    // Outside, it is recorded either way. (This VM itself carries a
    // `/.dockerenv` from the image it was made from, so it may read as
    // docker on that one clue: never as this podman container.)
    assert!(outside.host.in_container.is_some());
    let here = benchbook::host::container::detect();
    assert_eq!(outside.host.container, here);
    assert!(here.as_ref().is_none_or(|h| h.id != c.id), "{here:?}");

    let diff = benchbook::analysis::environment::environment_diff(outside, inside);
    let what: Vec<&str> = diff.iter().map(|d| d.what.as_str()).collect();
    for key in ["host.container.runtime", "host.container.evidence.0", "host.cpu_quota", "host.memory_limit_bytes"] {
        assert!(what.contains(&key), "{key} not in {what:?}");
    }
}
