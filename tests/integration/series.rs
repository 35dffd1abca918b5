//! The catalog owns typed series (`analysis::series`): the two defects of
//! the report layer that re-derived them, kept fixed.
//!
//! - Compare joined curves by a name that left out the variant: pinned and
//!   pageable host copies got one verdict and two rows that read the same.
//! - Two rules chose a spec: with an MI300A spec in `specs/`, a report over
//!   an EPYC memcpy and an MI300A BabelStream held the EPYC against the
//!   MI300A's memory, while its System table said EPYC had none.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use benchbook::analysis::compare::{compare, summary::summarize};
use benchbook::analysis::SeriesKey;
use benchbook::archive::Archive;

use crate::common::bin;

fn data() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data")
}

#[test]
fn compare_keeps_pinned_and_pageable_apart() {
    let archive = Archive::new(data());
    let a = archive.run_dir("20261126T131104Z-hostcopies-cf21").rows().unwrap();
    let b = archive.run_dir("20261126T125923Z-gpu-acceptance-0eb4").rows().unwrap();
    let points = compare(&a, &b, 0.02);
    let d2h: Vec<_> = points.iter().filter(|p| p.bench == "d2h").collect();
    assert_eq!(d2h.len(), 8, "4 sizes × pinned and pageable");
    // Every point reads differently, and names its variant.
    let labels: BTreeSet<&str> = d2h.iter().map(|p| p.label.as_str()).collect();
    assert_eq!(labels.len(), d2h.len(), "{labels:?}");
    assert!(d2h.iter().all(|p| p.label.contains("pinned") || p.label.contains("pageable")), "{labels:?}");
    // Two curves, two verdicts, each over its own four points.
    let curves: Vec<_> = summarize(&points).into_iter().filter(|c| c.curve.starts_with("d2h")).collect();
    assert_eq!(curves.len(), 2, "{curves:?}");
    assert!(curves.iter().all(|c| c.points == 4), "{curves:?}");
    // And compare names a curve as the reports do (the catalog's base name).
    let pinned = a.iter().find(|r| r.params.bench == "d2h" && r.params.variant.as_deref() == Some("pinned")).unwrap();
    let name = SeriesKey::of_params(&pinned.params, &pinned.backend, &pinned.run_id, &pinned.device).base_name();
    assert!(curves.iter().any(|c| c.curve == name), "{name}: {curves:?}");
}

#[test]
fn each_system_is_held_against_its_own_spec_only() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = ["20261121T084143Z-repeat-6eda", "20261124T143832Z-babelstream-mi300a-published-2007"];
    for r in runs {
        let to = tmp.path().join("runs").join(r);
        std::fs::create_dir_all(&to).unwrap();
        for f in std::fs::read_dir(data().join("runs").join(r)).unwrap() {
            let f = f.unwrap();
            std::fs::copy(f.path(), to.join(f.file_name())).unwrap();
        }
    }
    let specs = tmp.path().join("specs");
    std::fs::create_dir_all(&specs).unwrap();
    for f in std::fs::read_dir(data().join("specs")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), specs.join(f.file_name())).unwrap();
    }
    std::fs::write(
        specs.join("mi300a.toml"),
        "id = \"mi300a\"\nname = \"AMD Instinct MI300A\"\nvendor = \"AMD\"\nmatch = [\"MI300A\"]\n\n[memory]\nkind = \"HBM3\"\nbandwidth_gbps = 5300\nsource = \"a test spec\"\n",
    )
    .unwrap();
    let out = tmp.path().join("out");
    let o = Command::new(bin())
        .arg("--archive")
        .arg(tmp.path())
        .args(["-q", "report", runs[0], runs[1], "--kind", "memcpy", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    // The host memcpy saturation rows: EPYC has no spec, so no share of a
    // roofline (the defect printed 0.493 % of the MI300A's here).
    let saturation: Vec<&str> = md
        .lines()
        .filter(|l| l.contains("AMD EPYC") && (l.contains("sizes within ±") || l.contains("| not settled (")))
        .collect();
    assert_eq!(saturation.len(), 2, "{md}");
    assert!(saturation.iter().all(|l| l.ends_with("| no roofline | no roofline |")), "{saturation:#?}");
    assert!(md.contains("No memory roofline is known for AMD EPYC"), "{md}");
    // The MI300A's STREAM is held against its own memory.
    assert!(md.contains("13.5 % of AMD Instinct MI300A HBM3 5300 GB/s"), "{md}");
}
