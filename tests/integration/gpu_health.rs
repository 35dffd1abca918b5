//! Passive GPU health (`fleet health`, and `fleet gate`'s first step)
//! through the real binary, the stand-in NVML of `fake_cuda.rs` (two
//! H100s, 18 NVLinks each) and kernel logs of Xid events: healthy GPUs
//! pass; each fault injected into GPU 1 gets its rule's verdict, naming
//! the GPU, the check and the rule's source; published Xid lines get
//! NVIDIA's catalog action; what cannot be read is "not read", never bad.

use crate::common;
use crate::fake_cuda::{bb, setup};

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/health").join(name)
}

/// `fleet health --json --kernel-log LOG` with `envs`: exit code and JSON.
fn health(lib: &Path, archive: &Path, log: &Path, envs: &[(&str, &str)]) -> (Option<i32>, serde_json::Value) {
    let log = log.to_str().unwrap();
    let o = bb(lib, archive, &["fleet", "health", "--json", "--kernel-log", log], envs);
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

/// The checks of what a node must have, made only when asked (in the
/// order reports list them).
const NODE_CHECKS: [&str; 9] =
    ["gpu-count", "ib-port", "cpu-count", "cpu-topology", "memory", "swap", "net-interface", "topology", "ib-flap"];

fn findings(v: &serde_json::Value) -> Vec<(String, String, String)> {
    let f = v["health"]["findings"].as_array().cloned().unwrap_or_default();
    f.iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap_or("").to_string();
            (s("device"), s("check"), s("action"))
        })
        .collect()
}

#[test]
fn passive_gpu_health_finds_each_injected_fault() {
    let (tmp, lib, archive) = setup();
    let quiet = tmp.path().join("empty.log");
    std::fs::write(&quiet, "").unwrap();
    let (code, v) = health(&lib, &archive, &quiet, &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["health"]["devices"], 2);
    assert_eq!(findings(&v), vec![], "{v}");
    // Every check read but the two that need to be told what to expect.
    assert_eq!(v["health"]["unread"], serde_json::json!(NODE_CHECKS), "{v}");
    for (fault, check, action, exit) in [
        ("remap_failed", "row-remap", "drain", 1),
        ("remap_pending", "row-remap", "reset", 1),
        ("ecc", "ecc", "reset", 1),
        ("retired_pending", "retired-pages", "reset", 1),
        ("sram_corrected", "ecc-count", "drain", 1),
        ("sram_uncorrected", "ecc-count", "drain", 1),
        ("dram_errors", "ecc-count", "drain", 1),
        ("remap_unc_rows", "ecc-count", "drain", 1),
        ("pcie_x8", "pcie-width", "drain", 1),
        ("pcie_gen3", "pcie-gen", "warn", 0),
        ("nvlink_down", "nvlink", "drain", 1),
        ("fabric_not_started", "fabric", "drain", 1),
        ("hw_slowdown", "throttle", "warn", 0),
    ] {
        let (code, v) = health(&lib, &archive, &quiet, &[("FAKE_NVML_FAULT", fault)]);
        assert_eq!(code, Some(exit), "{fault}: {v}");
        assert_eq!(findings(&v), vec![("GPU 1 (GPU-fake-0001)".into(), check.into(), action.into())], "{fault}");
        let f = &v["health"]["findings"];
        assert!(f[0]["source"].as_str().unwrap().contains("https://"), "{fault}: a rule names its source");
    }
}

/// `fleet gate demo` on node gpu1 with the Xid 79 log: exit code and JSON.
fn gate(lib: &Path, archive: &Path, envs: &[(&str, &str)]) -> (Option<i32>, serde_json::Value) {
    let mut c = Command::new(common::bin());
    c.args(["-q", "--archive"]).arg(archive);
    c.args(["fleet", "gate", "demo", "--node", "gpu1", "--json", "--kernel-log"]).arg(fixture("gpu1_xid79.log"));
    c.args(["--", "memcpy", "--sizes", "1M"]).env("LD_LIBRARY_PATH", lib).envs(envs.iter().copied());
    let o = c.output().unwrap();
    let v = serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

/// An Xid 79 on GPU 1's PCI address asks for a reboot (NVIDIA's
/// RESTART_BM), and `fleet gate` calls the node bad on it, with the finding
/// as Slurm's reason and no suite run.
#[test]
fn an_xid_in_the_kernel_log_lands_on_its_gpu_and_the_gate_acts_on_it() {
    let (_tmp, lib, archive) = setup();
    let (code, v) = health(&lib, &archive, &fixture("gpu1_xid79.log"), &[]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(findings(&v), vec![("GPU 1 (GPU-fake-0001)".into(), "xid".into(), "reset".into())], "{v}");
    let what = v["health"]["findings"][0]["what"].as_str().unwrap();
    assert!(what.contains("Xid 79 ROBUST_CHANNEL_GPU_HAS_FALLEN_OFF_THE_BUS") && what.contains("RESTART_BM"), "{what}");
    let (code, v) = gate(&lib, &archive, &[]);
    assert_eq!(code, Some(1), "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(reason.starts_with("benchbook: reset: GPU 1 (GPU-fake-0001) xid: Xid 79"), "{reason}");
    assert_eq!(v["passes"].as_array().unwrap().len(), 0, "no suite ran: {v}");
    // The same with a failed row remap injected: the drain comes first.
    let (_, v) = gate(&lib, &archive, &[("FAKE_NVML_FAULT", "remap_failed")]);
    assert!(v["reason"].as_str().unwrap().starts_with("benchbook: drain: GPU 1 (GPU-fake-0001) row-remap"), "{v}");
}

/// Published Xid lines of every driver generation and log format, none on
/// a GPU this NVML sees: each address is judged on its own, by the
/// catalog's immediate action for each code, and they are judged even
/// when NVML cannot be read at all.
#[test]
fn published_xid_lines_are_judged_by_nvidias_catalog_even_without_nvml() {
    let (tmp, lib, archive) = setup();
    let xids = benchbook::backend::kernel_log::xids(&fixture("published_xids.log")).unwrap();
    let read: Vec<(u32, String)> = xids
        .iter()
        .map(|x| {
            let (d, b, dev) = x.pci.unwrap();
            (x.code, format!("{d:04x}:{b:02x}:{dev:02x}"))
        })
        .collect();
    // Hand-read from the file (tests/fixtures/health/SOURCES.md).
    let want: Vec<(u32, &str)> = vec![
        (48, "0000:07:00"),
        (64, "0000:07:00"),
        (79, "0000:10:00"),
        (79, "0000:2b:00"),
        (119, "0000:61:00"),
        (13, "0000:cb:00"),
        (109, "0000:cb:00"),
        (31, "0000:01:00"),
        (45, "0000:dc:00"),
        (43, "0009:01:00"),
        (145, "0018:01:00"),
        (94, "0000:01:00"),
    ];
    assert_eq!(read, want.iter().map(|(c, p)| (*c, p.to_string())).collect::<Vec<_>>());
    // With the stand-in NVML, and with none at all (a library folder
    // without it: as on a node whose driver lost its GPUs).
    let no_nvml = tmp.path().join("no-nvml");
    std::fs::create_dir_all(&no_nvml).unwrap();
    for (libs, nvml) in [(&lib, true), (&no_nvml, false)] {
        let (code, v) = health(libs, &archive, &fixture("published_xids.log"), &[]);
        let envs = if nvml { "with NVML" } else { "without NVML" };
        assert_eq!(code, Some(1), "{envs}: {v}");
        let got = findings(&v);
        // The stand-in's GPU 0 sits at 0000:01:00: its Xids land on it
        // while NVML answers.
        let device = |pci: &str| match (pci, nvml) {
            ("0000:01:00", true) => "GPU 0 (GPU-fake-0000)".to_string(),
            _ => format!("PCI {pci} (no GPU NVML sees)"),
        };
        let action = |pci: &str, code: u32| {
            got.iter()
                .zip(v["health"]["findings"].as_array().unwrap())
                .find(|((d, ..), f)| {
                    *d == device(pci) && f["what"].as_str().unwrap().starts_with(&format!("Xid {code} "))
                })
                .map(|((.., a), _)| a.clone())
                .unwrap_or_else(|| panic!("{envs}: no Xid {code} at {pci}: {v}"))
        };
        // 48 with 64 (DBE, then a failed retirement): reset; 64: RESET_GPU.
        assert_eq!(action("0000:07:00", 48), "reset");
        assert_eq!(action("0000:07:00", 64), "reset");
        assert_eq!(action("0000:2b:00", 79), "reset");
        assert_eq!(action("0000:61:00", 119), "reset");
        assert_eq!(action("0000:cb:00", 109), "reset");
        // Application faults and informational Xids only warn.
        for (pci, code) in [("0000:cb:00", 13), ("0000:01:00", 31), ("0000:01:00", 94), ("0009:01:00", 43)] {
            assert_eq!(action(pci, code), "warn", "Xid {code}");
        }
        assert_eq!(got.len(), 12, "one finding per code and address: {got:?}");
    }
}

/// A kernel log that cannot be read leaves the Xid check "not read"; no
/// NVML and nothing in the log is "nothing readable" (exit 3), never bad.
#[test]
fn an_unreadable_log_or_nvml_is_not_read_never_bad() {
    let (tmp, lib, archive) = setup();
    let (code, v) = health(&lib, &archive, &tmp.path().join("no-such.log"), &[]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(v["health"]["unread"], serde_json::json!([&["xid"][..], &NODE_CHECKS[..]].concat()), "{v}");
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let no_nvml = tmp.path().join("no-nvml");
    std::fs::create_dir_all(&no_nvml).unwrap();
    let (code, v) = health(&no_nvml, &archive, &empty, &[]);
    assert_eq!(code, Some(3), "{v}");
    assert!(v["health"].is_null() && v["unread"].is_string(), "{v}");
}

/// Every sample line of a Prometheus text file: (name, labels, value);
/// fails on a line the text format does not allow.
fn samples(text: &str) -> Vec<(String, String, f64)> {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let (series, value) = l.rsplit_once(' ').unwrap_or_else(|| panic!("no value: {l}"));
            let value: f64 = value.parse().unwrap_or_else(|_| panic!("not a number: {l}"));
            let (name, labels) = series.split_once('{').unwrap_or_else(|| panic!("no labels: {l}"));
            assert!(name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{l}");
            assert!(labels.ends_with('}'), "{l}");
            (name.to_string(), format!("{{{labels}"), value)
        })
        .collect()
}

/// Each metric family's samples come together, after its one HELP and
/// TYPE (node_exporter refuses a file that splits a family).
fn families_are_contiguous(text: &str) {
    let mut seen: Vec<String> = Vec::new();
    for l in text.lines() {
        let name = match l.strip_prefix("# TYPE ") {
            Some(rest) => rest.split(' ').next().unwrap().to_string(),
            None if l.starts_with('#') => continue,
            None => l.split('{').next().unwrap().to_string(),
        };
        if seen.last() != Some(&name) {
            assert!(!seen.contains(&name), "{name} split in two: {text}");
            seen.push(name);
        }
    }
}

/// `--textfile DIR` writes the verdict for node_exporter's textfile
/// collector: the gate's, its suite's and each passive check's verdict,
/// and when it ran; `fleet health` writes the passive checks alone.
#[test]
fn the_gate_and_health_write_node_exporter_textfiles() {
    let (tmp, lib, archive) = setup();
    let dir = tmp.path().join("textfile");
    std::fs::create_dir_all(&dir).unwrap();
    let mut c = Command::new(common::bin());
    c.args(["-q", "--archive"]).arg(&archive).args(["fleet", "gate", "demo", "--node", "gpu1", "--kernel-log"]);
    c.arg(fixture("gpu1_xid79.log")).arg("--textfile").arg(&dir).args(["--", "memcpy", "--sizes", "1M"]);
    let o = c.env("LD_LIBRARY_PATH", &lib).output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.join("benchbook_gate.prom")).unwrap();
    families_are_contiguous(&text);
    let s = samples(&text);
    let value = |name: &str, labels: &str| {
        s.iter()
            .find(|(n, l, _)| n == name && l == labels)
            .map(|x| x.2)
            .unwrap_or_else(|| panic!("{name}{labels}: {text}"))
    };
    let base = r#"fleet="demo",node="gpu1""#;
    assert_eq!(value("benchbook_gate_verdict", &format!("{{{base},check=\"gate\"}}")), 1.0);
    assert_eq!(value("benchbook_gate_verdict", &format!("{{{base},check=\"xid\"}}")), 1.0);
    assert_eq!(value("benchbook_gate_verdict", &format!("{{{base},check=\"row-remap\"}}")), 0.0);
    assert_eq!(value("benchbook_gate_verdict", &format!("{{{base},check=\"suite\"}}")), 3.0, "no suite ran");
    assert!(value("benchbook_gate_last_run_timestamp_seconds", &format!("{{{base}}}")) > 1.7e9);
    assert!(std::fs::read_dir(&dir).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));

    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let o = bb(
        &lib,
        &archive,
        &["fleet", "health", "--kernel-log", empty.to_str().unwrap(), "--textfile", dir.to_str().unwrap()],
        &[],
    );
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let text = std::fs::read_to_string(dir.join("benchbook_health.prom")).unwrap();
    families_are_contiguous(&text);
    let s = samples(&text);
    let verdicts: Vec<&(String, String, f64)> = s.iter().filter(|x| x.0 == "benchbook_health_verdict").collect();
    assert_eq!(verdicts.len(), 19, "one per passive check: {text}");
    for (_, labels, v) in verdicts {
        let unasked = NODE_CHECKS.iter().any(|c| labels.contains(&format!("check=\"{c}\"")));
        assert_eq!(*v, if unasked { 3.0 } else { 0.0 }, "healthy GPUs, the node checks not asked: {labels}");
    }
}

/// What the node must have, as NHC's ND H100 v5 configuration says it:
/// `--gpus N` (the stand-in NVML shows 2) and `--ib-rate 400` over a
/// stand-in sysfs (`BENCHBOOK_SYSFS`): a GPU short or a port down drains;
/// an Ethernet port is left out; unasked, neither check is made.
#[test]
fn a_missing_gpu_or_a_port_down_drains_the_node_when_asked() {
    let (tmp, lib, archive) = setup();
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let log = empty.to_str().unwrap();
    let sys = |tree: &str| fixture(tree).to_str().unwrap().to_string();
    let run = |args: &[&str], tree: &str| {
        let mut all = vec!["fleet", "health", "--json", "--kernel-log", log];
        all.extend_from_slice(args);
        let o = bb(&lib, &archive, &all, &[("BENCHBOOK_SYSFS", &sys(tree))]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v)
    };
    let (code, v) = run(&[], "sys-ndr-port-down");
    assert_eq!(code, Some(0), "not asked, not checked: {v}");
    let unread: Vec<&str> = v["health"]["unread"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    assert_eq!(unread, NODE_CHECKS);
    let (code, v) = run(&["--gpus", "2", "--ib-rate", "400"], "sys-ndr-ok");
    assert_eq!((code, findings(&v)), (Some(0), vec![]), "{v}");
    let (code, v) = run(&["--gpus", "8", "--ib-rate", "400"], "sys-ndr-port-down");
    assert_eq!(code, Some(1), "{v}");
    let what: Vec<&str> =
        v["health"]["findings"].as_array().unwrap().iter().map(|f| f["what"].as_str().unwrap()).collect();
    assert_eq!(what, ["2 GPUs visible, 8 expected", "port mlx5_ib2:1 is DOWN"], "{v}");
    // A node with no InfiniBand at all, asked for it.
    let (code, v) = run(&["--ib-rate", "400"], "no-such-tree");
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(findings(&v), vec![("node".into(), "ib-port".into(), "drain".into())]);
}

/// A ROCm node (AMD GPUs in sysfs, no NVML): its health is not judged,
/// and the answer says why, naming the GPUs it found.
#[test]
fn an_amd_node_says_its_gpus_are_not_judged() {
    let (tmp, _lib, archive) = setup();
    let no_nvml = tmp.path().join("no-nvml");
    std::fs::create_dir_all(&no_nvml).unwrap();
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let sys = fixture("sys-mi300x");
    let (code, v) = health(&no_nvml, &archive, &empty, &[("BENCHBOOK_SYSFS", sys.to_str().unwrap())]);
    assert_eq!(code, Some(3), "{v}");
    let why = v["unread"].as_str().unwrap();
    assert!(why.starts_with("2 AMD GPUs on this node") && why.contains("amd-smi"), "{why}");
}

/// NHC's host inventory checks, on this machine's real CPUs and memory:
/// `--cpus 1 --memory-gib 1` holds here; asking for more than any machine
/// has drains, naming what was found.
#[test]
fn too_few_cpus_or_too_little_memory_drains_the_node_when_asked() {
    let (tmp, lib, archive) = setup();
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let log = empty.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut all = vec!["fleet", "health", "--json", "--kernel-log", log];
        all.extend_from_slice(extra);
        let o = bb(&lib, &archive, &all, &[]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        (o.status.code(), v)
    };
    let (code, v) = run(&["--cpus", "1", "--memory-gib", "1"]);
    assert_eq!((code, findings(&v)), (Some(0), vec![]), "{v}");
    let rest: Vec<&str> = NODE_CHECKS.into_iter().filter(|c| !["cpu-count", "memory"].contains(c)).collect();
    assert_eq!(v["health"]["unread"], serde_json::json!(rest), "{v}");
    let (code, v) = run(&["--cpus", "100000", "--memory-gib", "100000"]);
    assert_eq!(code, Some(1), "{v}");
    let what: Vec<&str> =
        v["health"]["findings"].as_array().unwrap().iter().map(|f| f["what"].as_str().unwrap()).collect();
    assert!(what[0].ends_with("logical CPUs online, 100000 expected"), "{what:?}");
    assert!(what[1].ends_with("GiB of memory, more than 5 % below the 100000 GiB expected"), "{what:?}");
}

/// A stand-in sysfs for the rest of NHC's ND H100 v5 inventory: 2 sockets
/// of 2 cores (4 CPUs, cpu4 offline), interfaces `lo`, `eth0`, `ib0`, the
/// PCI devices of Azure's published `ndv5-topo.xml` on the NUMA nodes it
/// names, and one InfiniBand port whose link went down `downs` times.
fn inventory_tree(root: &Path, downs: u64) {
    let w = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    for cpu in 0..4 {
        w(&format!("devices/system/cpu/cpu{cpu}/topology/physical_package_id"), &format!("{}\n", cpu / 2));
        w(&format!("devices/system/cpu/cpu{cpu}/topology/core_id"), &format!("{}\n", cpu % 2));
    }
    std::fs::create_dir_all(root.join("devices/system/cpu/cpu4")).unwrap();
    for net in ["lo", "eth0", "ib0"] {
        w(&format!("class/net/{net}/operstate"), "up\n");
    }
    let xml = std::fs::read_to_string(fixture("ndv5-topo.xml")).unwrap();
    let devices = benchbook::vocab::health::topology_devices("ndv5-topo.xml", &xml).unwrap();
    for (bus, numa) in devices {
        w(&format!("bus/pci/devices/{bus}/numa_node"), &format!("{numa}\n"));
    }
    let port = "class/infiniband/mlx5_ib0/ports/1";
    w(&format!("{port}/state"), "4: ACTIVE\n");
    w(&format!("{port}/rate"), "400 Gb/sec (4X NDR)\n");
    w(&format!("{port}/link_layer"), "InfiniBand\n");
    w(&format!("{port}/counters/link_downed"), &format!("{downs}\n"));
}

/// NHC's remaining ND H100 v5 rows through the real binary: sockets and
/// cores, interfaces, the PCI topology of Azure's own file and a port's
/// link losses over a stand-in sysfs, and swap on this machine's real
/// /proc/meminfo. Each holds as built, and each injected fault drains,
/// naming the device; a topology file that is not one is refused (exit 2).
#[test]
fn sockets_interfaces_topology_link_losses_and_swap_are_judged_when_asked() {
    let (tmp, lib, archive) = setup();
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let sys = tmp.path().join("sys");
    inventory_tree(&sys, 0);
    let topo = fixture("ndv5-topo.xml");
    let run = |extra: &[&str]| {
        let mut all = vec!["fleet", "health", "--json", "--kernel-log", empty.to_str().unwrap()];
        all.extend_from_slice(extra);
        let o = bb(&lib, &archive, &all, &[("BENCHBOOK_SYSFS", sys.to_str().unwrap())]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or(serde_json::Value::Null);
        (o.status.code(), v, String::from_utf8_lossy(&o.stderr).into_owned())
    };
    let what = |v: &serde_json::Value| -> Vec<String> {
        let f = v["health"]["findings"].as_array().cloned().unwrap_or_default();
        f.iter().map(|f| format!("{} {}", f["check"].as_str().unwrap(), f["what"].as_str().unwrap())).collect()
    };
    let asked = [
        "--sockets",
        "2",
        "--cores",
        "4",
        "--interface",
        "lo,eth0",
        "--interface",
        "ib0",
        "--ib-flaps",
        "2",
        "--topology",
    ];
    let mut all = asked.to_vec();
    all.push(topo.to_str().unwrap());
    let (code, v, err) = run(&all);
    assert_eq!((code, what(&v)), (Some(0), vec![]), "{v} {err}");
    let unread: Vec<&str> = v["health"]["unread"].as_array().unwrap().iter().map(|c| c.as_str().unwrap()).collect();
    for c in ["cpu-topology", "net-interface", "topology", "ib-flap"] {
        assert!(!unread.contains(&c), "{c} was asked and read: {unread:?}");
    }
    // Faults: a socket short, an interface missing, a GPU gone and a NIC
    // moved to the other NUMA node, a port that went down 5 times.
    let (code, v, _) = run(&["--sockets", "4", "--cores", "4", "--interface", "lo,docker0"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(
        what(&v),
        ["cpu-topology 2 CPU sockets online, 4 expected", "net-interface no network interface docker0"]
    );
    std::fs::remove_dir_all(sys.join("bus/pci/devices/0008:00:00.0")).unwrap();
    std::fs::write(sys.join("bus/pci/devices/0105:00:00.0/numa_node"), "0\n").unwrap();
    std::fs::write(sys.join("class/infiniband/mlx5_ib0/ports/1/counters/link_downed"), "5\n").unwrap();
    let (code, v, _) = run(&["--topology", topo.to_str().unwrap(), "--ib-flaps", "2"]);
    assert_eq!(code, Some(1), "{v}");
    assert_eq!(
        what(&v),
        [
            "topology PCI device 0008:00:00.0 of TOPO is missing (NUMA node 0 expected)"
                .replace("TOPO", topo.to_str().unwrap()),
            "topology PCI device 0105:00:00.0 is on NUMA node 0, TOPO puts it on 1"
                .replace("TOPO", topo.to_str().unwrap()),
            "ib-flap port mlx5_ib0:1's link went down 5 times since its counters were reset (more than 2)".into(),
        ]
    );
    // Swap, on this machine: what it has holds; 64 GiB more drains.
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap();
    let kib: f64 = meminfo
        .lines()
        .find(|l| l.starts_with("SwapTotal:"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let gib = kib / (1u64 << 20) as f64;
    let (code, v, _) = run(&["--swap-gib", &format!("{gib}")]);
    assert_eq!((code, what(&v)), (Some(0), vec![]), "{v}");
    let (code, v, _) = run(&["--swap-gib", &format!("{}", gib + 64.0)]);
    assert_eq!(code, Some(1), "{v}");
    assert!(what(&v)[0].starts_with("swap ") && what(&v)[0].ends_with("GiB expected, within 3 %"), "{v}");
    // A topology file that is not one: refused, naming the file and line.
    let bad = tmp.path().join("bad-topo.xml");
    std::fs::write(&bad, "<system>\n<pci busid=\"0001:00:00.0\"/>\n</system>\n").unwrap();
    let (code, _, err) = run(&["--topology", bad.to_str().unwrap()]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("--topology") && err.contains("bad-topo.xml:2:"), "{err}");
}
