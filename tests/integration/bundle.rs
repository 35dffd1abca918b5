//! `bundle` / `unbundle`: runs travel as one file, arrive byte for byte,
//! and an altered, truncated or hostile bundle writes nothing.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::common;
use benchbook::archive::bundle;
use benchbook::prelude::*;
use benchbook::vocab::progress::Silent;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import").join(name)
}

fn cli(archive: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::bin()).args(args).arg("--archive").arg(archive).output().unwrap()
}

/// A native run with a report, and an imported run with its source log.
fn two_runs(root: &Path) -> (Archive, RunDir, RunDir, PathBuf) {
    let archive = Archive::new(root.join("archive"));
    let native = common::tiny_run(&archive, Some("native")).run;
    let (imported, _) =
        benchbook::session::import(&archive, &[fixture("nccl_all_reduce_new.txt")], None, Some("imported"), &Silent)
            .unwrap();
    let reports = root.join("reports");
    let out = cli(
        &archive.root,
        &["report", &native.id, "--format", "md", "--out", reports.join(&native.id).to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (archive, native, imported.run, reports)
}

fn runs_in(archive: &Archive) -> Vec<String> {
    archive.runs().unwrap().into_iter().map(|r| r.id).collect()
}

#[test]
fn a_bundle_round_trips_and_verifies() {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, native, imported, reports) = two_runs(tmp.path());
    let file = tmp.path().join("runs.benchbook.tar.zst");
    let out = cli(
        &archive.root,
        &["bundle", &native.id, &imported.id, "-o", file.to_str().unwrap(), "--reports-dir", reports.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The same runs give the same bytes.
    let again = tmp.path().join("again.tar.zst");
    bundle::bundle(&[native.clone(), imported.clone()], &reports, &again).unwrap();
    assert_eq!(std::fs::read(&file).unwrap(), std::fs::read(&again).unwrap());

    let elsewhere = tmp.path().join("elsewhere");
    let new_reports = tmp.path().join("new-reports");
    let out = cli(
        &elsewhere,
        &["unbundle", file.to_str().unwrap(), "--reports-dir", new_reports.to_str().unwrap(), "--json"],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
    assert!(v.as_array().unwrap().iter().all(|r| r["action"] == "added"));
    let target = Archive::new(&elsewhere);
    assert_eq!(runs_in(&target), runs_in(&archive));
    for run in target.runs().unwrap() {
        assert!(verify_run(&run).findings.is_empty(), "{}", run.id);
        let original = archive.resolve(&run.id).unwrap();
        assert_eq!(run.rows().unwrap(), original.rows().unwrap());
    }
    // The imported log and the report came along, byte for byte.
    let log = std::fs::read_dir(&imported.path)
        .unwrap()
        .flatten()
        .find(|e| e.file_name().to_string_lossy().starts_with("source-"))
        .unwrap();
    assert_eq!(
        std::fs::read(log.path()).unwrap(),
        std::fs::read(elsewhere.join("runs").join(&imported.id).join(log.file_name())).unwrap()
    );
    assert_eq!(
        std::fs::read(reports.join(&native.id).join("report.md")).unwrap(),
        std::fs::read(new_reports.join(&native.id).join("report.md")).unwrap()
    );
    // Unpacking again finds the same runs and changes nothing.
    let again = bundle::unbundle(&file, &target, &new_reports).unwrap();
    assert!(again.iter().all(|r| r.action == "present"));
}

/// The bundle's tar, decompressed.
fn tar_of(file: &Path) -> Vec<u8> {
    let mut out = Vec::new();
    zstd::stream::Decoder::new(std::fs::File::open(file).unwrap()).unwrap().read_to_end(&mut out).unwrap();
    out
}

fn zst(tar: &[u8], file: &Path) {
    let mut e = zstd::stream::Encoder::new(std::fs::File::create(file).unwrap(), 3).unwrap();
    e.write_all(tar).unwrap();
    e.finish().unwrap();
}

fn refused(file: &Path, archive: &Path, needle: &str) {
    let out = cli(archive, &["unbundle", file.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("bundle refused") && err.contains(needle), "{needle:?} not in: {err}");
    assert!(err.contains(file.file_name().unwrap().to_str().unwrap()), "the error names the file: {err}");
    assert!(
        !archive.join("runs").exists() || std::fs::read_dir(archive.join("runs")).unwrap().next().is_none(),
        "a refused bundle wrote into the archive"
    );
}

#[test]
fn a_tampered_or_truncated_bundle_is_refused_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let (_archive, native, imported, reports) = two_runs(tmp.path());
    let file = tmp.path().join("good.tar.zst");
    bundle::bundle(&[native.clone(), imported], &reports, &file).unwrap();
    let good = std::fs::read(&file).unwrap();
    let target = tmp.path().join("target");

    // Truncated: the zstd stream ends early.
    let cut = tmp.path().join("cut.tar.zst");
    std::fs::write(&cut, &good[..good.len() / 2]).unwrap();
    refused(&cut, &target, "truncated");

    // One byte of a run's Parquet changed, recompressed so the stream is
    // valid: only the sha256 in bundle.json catches it.
    let mut tar = tar_of(&file);
    let parquet = std::fs::read(native.results_path()).unwrap();
    let at = tar.windows(parquet.len()).position(|w| w == parquet).expect("the parquet file is in the tar");
    tar[at + parquet.len() / 3] ^= 0x01;
    let flipped = tmp.path().join("flipped.tar.zst");
    zst(&tar, &flipped);
    refused(&flipped, &target, "results.parquet");

    // bundle.json edited to match the change: the run's own sealed
    // manifest still disagrees.
    let mut tar = tar_of(&file);
    tar[at + parquet.len() / 3] ^= 0x01;
    let changed = benchbook::archive::manifest::FileEntry::of("x", &tar[at..at + parquet.len()]).sha256;
    let original = benchbook::archive::manifest::FileEntry::of("x", &parquet).sha256;
    let idx = tar.windows(64).position(|w| w == original.as_bytes()).unwrap();
    tar[idx..idx + 64].copy_from_slice(changed.as_bytes());
    let forged = tmp.path().join("forged.tar.zst");
    zst(&tar, &forged);
    refused(&forged, &target, "does not match the run's manifest");

    // An entry that would land outside the archive.
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(2);
    h.set_entry_type(tar::EntryType::Regular);
    let name = b"runs/../../escaped";
    h.as_old_mut().name[..name.len()].copy_from_slice(name);
    h.set_cksum();
    b.append(&h, &b"hi"[..]).unwrap();
    let evil = tmp.path().join("evil.tar.zst");
    zst(&b.into_inner().unwrap(), &evil);
    refused(&evil, &target, "not a path a bundle may hold");
    assert!(!tmp.path().join("escaped").exists());

    // Not a bundle at all.
    let text = tmp.path().join("notes.txt");
    std::fs::write(&text, "hello").unwrap();
    refused(&text, &target, "zstd");
}

#[test]
fn a_run_id_with_other_content_is_never_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let (archive, native, _, reports) = two_runs(tmp.path());
    let file = tmp.path().join("one.tar.zst");
    bundle::bundle(std::slice::from_ref(&native), &reports, &file).unwrap();
    // The destination has a different run under the same id.
    let target = Archive::new(tmp.path().join("target"));
    let other = common::tiny_run(&target, Some("other")).run;
    let clash = target.runs_dir().join(&native.id);
    std::fs::rename(&other.path, &clash).unwrap();
    let before = std::fs::read(clash.join("results.parquet")).unwrap();
    let e = bundle::unbundle(&file, &target, &reports).unwrap_err().to_string();
    assert!(e.contains("already exists") && e.contains("never overwritten"), "{e}");
    assert_eq!(std::fs::read(clash.join("results.parquet")).unwrap(), before);
    // A damaged run is not bundled in the first place.
    std::fs::write(native.results_path(), b"junk").unwrap();
    let e =
        bundle::bundle(std::slice::from_ref(&native), &reports, &tmp.path().join("x.tar.zst")).unwrap_err().to_string();
    assert!(e.contains("does not verify"), "{e}");
    let _ = archive;
}
