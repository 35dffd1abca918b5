//! Bad input loses nothing and gets a clear error: corrupt Parquet, unknown
//! schema versions, damaged manifests, flipped bytes.

use crate::common;

use benchbook::archive::{schema, Finding};
use benchbook::prelude::*;

#[test]
fn verify_catches_a_flipped_byte_and_says_where() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let r = common::tiny_run(&archive, None);
    assert!(verify_run(&r.run).findings.is_empty());
    let path = r.run.results_path();
    let mut data = std::fs::read(&path).unwrap();
    let at = data.len() / 2;
    data[at] ^= 0x01;
    std::fs::write(&path, &data).unwrap();
    let findings = verify_run(&r.run).findings;
    assert_eq!(findings.len(), 1, "{findings:?}");
    match &findings[0] {
        Finding::ContentChanged { path, ranges } => {
            assert_eq!(path, "results.parquet");
            assert_eq!(ranges.len(), 1);
            assert!(ranges[0].0 <= at as u64 && (at as u64) < ranges[0].1, "{ranges:?} vs {at}");
        }
        other => panic!("expected a content change, got {other}"),
    }
    // A truncated file is a size change; a new file is unlisted.
    std::fs::write(&path, &data[..100]).unwrap();
    std::fs::write(r.run.path.join("extra.txt"), "x").unwrap();
    let f = verify_run(&r.run).findings;
    assert!(f.iter().any(|f| matches!(f, Finding::SizeChanged { actual: 100, .. })), "{f:?}");
    assert!(f.iter().any(|f| matches!(f, Finding::Unlisted { path } if path == "extra.txt")), "{f:?}");
    std::fs::remove_file(&path).unwrap();
    assert!(verify_run(&r.run).findings.iter().any(|f| matches!(f, Finding::Missing { .. })));
}

#[test]
fn corrupt_parquet_gets_an_error_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let r = common::tiny_run(&archive, None);
    std::fs::write(r.run.results_path(), b"PAR1 this is not parquet at all PAR1").unwrap();
    let e = r.run.dataframe().unwrap_err().to_string();
    assert!(e.contains("results.parquet"), "{e}");
    assert!(e.contains("benchbook verify"), "the error says what to do next: {e}");
}

#[test]
fn unknown_schema_versions_are_refused() {
    use polars::prelude::*;
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("future.parquet");
    let mut df = schema::to_dataframe(&[]).unwrap();
    ParquetWriter::new(std::fs::File::create(&path).unwrap())
        .with_key_value_metadata(Some(KeyValueMetadata::from_static(vec![(schema::VERSION_KEY.into(), "99".into())])))
        .finish(&mut df)
        .unwrap();
    let e = schema::read_parquet(&path).unwrap_err().to_string();
    assert!(e.contains("schema version 99") && e.contains("reads 1"), "{e}");

    // A Parquet file from another tool has no version at all.
    let other = tmp.path().join("other.parquet");
    let mut df = df!("x" => [1i32, 2]).unwrap();
    ParquetWriter::new(std::fs::File::create(&other).unwrap()).finish(&mut df).unwrap();
    let e = schema::read_parquet(&other).unwrap_err().to_string();
    assert!(e.contains("not written by benchbook"), "{e}");
}

#[test]
fn damaged_or_future_manifests_are_refused_clearly() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let r = common::tiny_run(&archive, None);
    let mp = r.run.manifest_path();
    let text = std::fs::read_to_string(&mp).unwrap();
    let current = format!("\"schema_version\": {}", schema::SCHEMA_VERSION);
    assert!(text.contains(&current));
    let future = schema::SCHEMA_VERSION + 1;
    std::fs::write(&mp, text.replace(&current, &format!("\"schema_version\": {future}"))).unwrap();
    let e = r.run.manifest().unwrap_err().to_string();
    assert!(e.contains(&format!("schema version {future}")), "{e}");
    std::fs::write(&mp, "{\n  \"run_id\": ").unwrap();
    let e = r.run.manifest().unwrap_err().to_string();
    assert!(e.contains("manifest.json") && e.contains("line"), "{e}");
}

#[test]
fn an_empty_rowset_round_trips_with_types() {
    let tmp = tempfile::tempdir().unwrap();
    let p = tmp.path().join("empty.parquet");
    schema::write_parquet(&p, &[]).unwrap();
    let df = schema::read_parquet(&p).unwrap();
    assert_eq!(df.height(), 0);
    assert_eq!(df.width(), schema::schema().len());
}

#[test]
fn run_ids_resolve_by_prefix_and_latest() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let e = archive.resolve("latest").unwrap_err().to_string();
    assert!(e.contains("benchbook run quick"), "{e}");
    let r = common::tiny_run(&archive, Some("alpha"));
    assert_eq!(archive.resolve("latest").unwrap().id, r.run.id);
    assert_eq!(archive.resolve("alpha").unwrap().id, r.run.id);
    let e = archive.resolve("nope").unwrap_err().to_string();
    assert!(e.contains("benchbook list"), "{e}");
}

#[test]
fn a_v2_archive_reads_through_the_migration_with_its_stop_reasons() {
    // The committed quick run was written with schema v2, before `stop`
    // had a column; the migration reads it back from each note.
    let archive = Archive::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data"));
    let run = archive.resolve("quick").unwrap();
    assert_eq!(schema::check_version(&run.results_path()).unwrap(), 2);
    let rows = run.rows().unwrap();
    let measured: Vec<&Row> = rows.iter().filter(|r| r.status == Status::Measured).collect();
    assert!(!measured.is_empty());
    for r in &measured {
        let want = benchbook::vocab::kinds::StopReason::from_note(r.note.as_deref().unwrap());
        assert!(want.is_some(), "a native note starts with its stop reason: {:?}", r.note);
        assert_eq!(r.stop, want);
    }
    assert!(rows.iter().filter(|r| r.status != Status::Measured).all(|r| r.stop.is_none()));
    // A fresh run is written as v3 with the column filled in.
    let tmp = tempfile::tempdir().unwrap();
    let fresh = common::tiny_run(&Archive::new(tmp.path()), None);
    assert_eq!(schema::check_version(&fresh.run.results_path()).unwrap(), schema::SCHEMA_VERSION);
    assert!(fresh.run.rows().unwrap().iter().filter(|r| r.status == Status::Measured).all(|r| r.stop.is_some()));
}

#[test]
fn a_v1_archive_gets_its_methods_back_and_compares_with_a_v2_run() {
    // The committed repeat run is schema v1 (no `method` column). Points
    // match on method, so without the migration no point would pair.
    let archive = Archive::new(concat!(env!("CARGO_MANIFEST_DIR"), "/data"));
    let old = archive.resolve("repeat").unwrap();
    assert_eq!(schema::check_version(&old.results_path()).unwrap(), 1);
    let rows = old.rows().unwrap();
    assert!(rows
        .iter()
        .filter(|r| r.params.bench == "memcpy")
        .all(|r| r.params.method.as_deref() == Some("libc_memcpy")));
    let new = archive.resolve("quick").unwrap().rows().unwrap();
    let cmp = benchbook::analysis::compare::compare(&new, &rows, 0.02);
    assert!(!cmp.is_empty(), "v1 and v2 runs of one machine share their memcpy points");
}

#[test]
fn a_flipped_byte_makes_show_and_report_refuse_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path().join("archive"));
    let r = common::tiny_run(&archive, Some("flip"));
    let path = r.run.results_path();
    let mut data = std::fs::read(&path).unwrap();
    // A byte inside the data pages, not the footer: the file still parses,
    // so only the hash can tell.
    let at = data.len() / 3;
    data[at] ^= 0x01;
    std::fs::write(&path, &data).unwrap();
    let cli = |args: &[&str]| {
        std::process::Command::new(common::bin()).args(args).arg("--archive").arg(&archive.root).output().unwrap()
    };
    let out_dir = tmp.path().join("report");
    let out_arg = out_dir.to_str().unwrap();
    for args in [&["show", "flip"][..], &["report", "flip", "--quiet", "--out", out_arg][..]] {
        let out = cli(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} must refuse: {err}");
        assert!(err.contains("results.parquet") && err.contains("sha256") && err.contains("benchbook verify"), "{err}");
        assert!(out.stdout.is_empty(), "{args:?} printed numbers from a corrupt file");
    }
    assert!(!out_dir.join("report.md").exists(), "a report was written from a corrupt file");
    // The library refuses too, and --no-verify is the way to read it anyway.
    assert!(matches!(r.run.dataframe(), Err(benchbook::error::Error::Tampered { .. })));
    let forensic = cli(&["show", "flip", "--no-verify"]);
    let err = String::from_utf8_lossy(&forensic.stderr);
    // The flipped byte may or may not break the Parquet decoding; either
    // way the answer is no longer the hash refusal.
    assert!(!err.contains("sha256"), "{err}");
}

fn cli(archive: &Archive, args: &[&str]) -> std::process::Output {
    std::process::Command::new(common::bin()).args(args).arg("--archive").arg(&archive.root).output().unwrap()
}

#[test]
fn an_edited_manifest_fails_verify_and_is_not_published() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path().join("archive"));
    let r = common::tiny_run(&archive, Some("edited"));
    assert!(verify_run(&r.run).sealed, "a new manifest carries its own hash");
    let mp = r.run.manifest_path();
    let text = std::fs::read_to_string(&mp).unwrap();
    let rows = r.run.manifest().unwrap().counts.rows;
    let edited = text.replace(&format!("\"rows\": {rows}"), "\"rows\": 5");
    assert_ne!(edited, text);
    std::fs::write(&mp, edited).unwrap();

    let findings = verify_run(&r.run).findings;
    assert!(matches!(findings.as_slice(), [Finding::ManifestChanged { .. }]), "{findings:?}");
    let out = cli(&archive, &["verify", "edited"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("CHANGED") && text.contains("manifest.json: edited"), "{text}");
    // show and report refuse it, naming the file; --no-verify reads it.
    let out = cli(&archive, &["show", "edited"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("manifest.json") && err.contains("benchbook verify"), "{err}");
    assert!(out.stdout.is_empty());
    let out = cli(&archive, &["show", "edited", "--no-verify"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains(", 5 rows"));
}

#[test]
fn a_manifest_from_a_newer_benchbook_is_refused_naming_both_versions() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let r = common::tiny_run(&archive, None);
    let mp = r.run.manifest_path();
    let text = std::fs::read_to_string(&mp).unwrap();
    let current = format!("\"manifest_version\": {}", benchbook::archive::manifest::MANIFEST_VERSION);
    assert!(text.contains(&current));
    std::fs::write(&mp, text.replace(&current, "\"manifest_version\": 99")).unwrap();
    let e = r.run.manifest().unwrap_err().to_string();
    assert!(e.contains("manifest version 99") && e.contains("reads 1, 2"), "{e}");
}

/// Three runs, the first damaged (its manifest deleted): `verify` reports
/// all three and fails; `list` shows the damaged one and why; `report`
/// writes the two good ones and names the bad one.
#[test]
fn a_damaged_run_is_reported_and_the_others_still_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path().join("archive"));
    let a = common::tiny_run(&archive, Some("first"));
    let b = common::tiny_run(&archive, Some("second"));
    let c = common::tiny_run(&archive, Some("third"));
    std::fs::remove_file(a.run.manifest_path()).unwrap();

    let out = cli(&archive, &["verify", &a.run.id, &b.run.id, &c.run.id]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with("  ")).collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(lines[0].contains(&a.run.id) && lines[0].contains("CHANGED"), "{text}");
    assert!(text.contains("manifest.json: missing"), "{text}");
    assert!(lines[1].contains(&b.run.id) && lines[1].contains("OK"), "{text}");
    assert!(lines[2].contains(&c.run.id) && lines[2].contains("OK"), "{text}");
    let json = cli(&archive, &["verify", &a.run.id, &b.run.id, &c.run.id, "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        v.as_array().unwrap().iter().map(|r| r["ok"].as_bool().unwrap()).collect::<Vec<_>>(),
        [false, true, true]
    );

    let out = cli(&archive, &["list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let row = text.lines().find(|l| l.contains(&a.run.id)).unwrap_or_else(|| panic!("damaged run not listed: {text}"));
    assert!(row.contains("damaged") && row.contains("no manifest.json"), "{row}");

    let reports = tmp.path().join("reports");
    let out = cli(
        &archive,
        &["report", &a.run.id, &b.run.id, &c.run.id, "--format", "md", "--out", reports.to_str().unwrap()],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(&format!("no report for {}", a.run.id)), "{err}");
    assert!(!reports.join(&a.run.id).join("report.md").exists());
    assert!(reports.join(&b.run.id).join("report.md").exists() && reports.join(&c.run.id).join("report.md").exists());
}

#[test]
fn show_escapes_control_characters_in_a_label() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let hostile = "t\u{1b}]0;pwned\u{7}itle\u{1b}[2J\r\u{9b}31m";
    let r = common::tiny_run(&archive, Some("ctl"));
    // The label as a user could have stored it (ids are always cleaned).
    let mut m = r.run.manifest().unwrap();
    m.label = Some(hostile.into());
    std::fs::write(r.run.manifest_path(), m.sealed_json()).unwrap();
    let out = cli(&archive, &["show", "ctl"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let label = text.lines().find(|l| l.starts_with("label")).expect("show prints the label");
    assert!(!label.chars().any(|c| c.is_control()), "{label:?}");
    assert!(label.contains("pwned") && label.contains("itle"), "the text stays readable: {label:?}");
    assert!(!text.contains('\u{1b}') && !text.contains('\u{9b}') && !text.contains('\u{7}'), "{text:?}");
}

#[test]
fn two_runs_started_at_once_into_one_archive_both_succeed() {
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path().join("archive"));
    let args = [
        "run",
        "memcpy",
        "--sizes",
        "4K,64K",
        "--threads",
        "1",
        "--warmup",
        "0.005",
        "--min-time",
        "0.005",
        "--max-time",
        "0.05",
        "--label",
        "same",
        "--quiet",
        "--json",
    ];
    let spawn = || {
        std::process::Command::new(common::bin())
            .args(args)
            .arg("--archive")
            .arg(&archive.root)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let (a, b) = (spawn(), spawn());
    for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let runs = archive.runs().unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for run in &runs {
        assert!(verify_run(run).findings.is_empty(), "{}", run.id);
        let m = run.manifest().unwrap();
        assert_eq!(m.run_id, run.id);
        assert_eq!(m.status, RunStatus::Complete);
        assert!(run.rows().unwrap().iter().all(|r| r.run_id == run.id));
    }

    // The same id claimed twice (same label, same second, same suffix):
    // the second run gets a fresh suffix instead of sharing the folder.
    let m = benchbook::archive::Manifest::begin(
        "20261121T000000Z-same-0000",
        benchbook::archive::manifest::RunOrigin::Native,
        benchbook::archive::manifest::RunConfig::Import { import: vec![] },
        vec![],
    );
    let first = archive.create_run(m.clone()).unwrap();
    let second = archive.create_run(m).unwrap();
    assert_ne!(first.dir.id, second.dir.id);
    assert!(second.dir.id.starts_with("20261121T000000Z-same-"));
    assert_eq!(second.manifest.run_id, second.dir.id);
}

/// Every manifest committed to the repository (the example runs under
/// `data/runs/` and the test fixtures) reads into the typed configuration,
/// and writes back every field it was read from unchanged (fields added
/// since, such as the peer-kernel grids, come back with their defaults).
#[test]
fn every_committed_manifest_reads_typed_and_round_trips() {
    use benchbook::archive::manifest::RunConfig;
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = 0;
    for dir in ["data/runs", "tests/fixtures/archive/runs"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path().join("manifest.json");
            if !path.exists() {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let m: benchbook::archive::Manifest =
                serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
            let kind = match &m.config {
                RunConfig::Sweep(_) => "sweep",
                RunConfig::Mpi(_) => "mpi",
                RunConfig::Import { .. } => "import",
                RunConfig::Exec(_) => "exec",
                RunConfig::Gate(_) => "gate",
            };
            // The kind agrees with the manifest's source.
            let source = m.source.to_string();
            match kind {
                "import" => assert!(source.starts_with("import:"), "{}", path.display()),
                "exec" => assert_eq!(source, "exec", "{}", path.display()),
                "gate" => assert_eq!(source, "gate", "{}", path.display()),
                _ => assert_eq!(source, "native", "{}", path.display()),
            }
            let typed = serde_json::to_value(&m.config).unwrap();
            assert!(within(&stored["config"], &typed), "{}: config changed\n{typed}", path.display());
            assert_eq!(serde_json::to_value(&m.source).unwrap(), stored["source"], "{}", path.display());
            found += 1;
        }
    }
    assert!(found >= 20, "only {found} manifests found");
}

/// Whether every field of `stored` is in `typed` with the same value.
fn within(stored: &serde_json::Value, typed: &serde_json::Value) -> bool {
    use serde_json::Value;
    match (stored, typed) {
        (Value::Object(a), Value::Object(b)) => a.iter().all(|(k, v)| b.get(k).is_some_and(|w| within(v, w))),
        (Value::Array(a), Value::Array(b)) => a.len() == b.len() && a.iter().zip(b).all(|(v, w)| within(v, w)),
        (a, b) => a == b,
    }
}

/// A run written point by point does not rewrite its results after every
/// point (that cost time in the rows so far: 200 ms a point by the end of a
/// 450,000-row MPI sweep): points written within a second of the last
/// rewrite wait for the next one, and the run's end writes every row.
#[test]
fn points_written_quickly_share_one_rewrite_and_the_end_writes_all() {
    use benchbook::archive::writer::FLUSH_EVERY_SECONDS;
    use benchbook::vocab::rows::RowSink;
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let m = benchbook::archive::Manifest::begin(
        &benchbook::archive::manifest::new_run_id("flush"),
        benchbook::archive::manifest::RunOrigin::Native,
        benchbook::archive::manifest::RunConfig::Import { import: vec![] },
        vec![],
    );
    let mut w = archive.create_run(m).unwrap();
    let started = std::time::Instant::now();
    for p in 0..40u32 {
        let row = Row {
            run_id: String::new(),
            backend: "cpu".into(),
            device: "cpu".into(),
            host: "h".into(),
            rank: 0,
            point: p,
            params: Point { bench: "memcpy".into(), op: "copy".into(), size_bytes: Some(4096), ..Point::default() },
            sample: Some(0),
            iterations: Some(1),
            seconds: Some(1e-6),
            status: Status::Measured,
            ..Row::blank()
        };
        w.write_point(vec![row]).unwrap();
    }
    let on_disk = w.dir.manifest().unwrap().counts.rows;
    if started.elapsed().as_secs_f64() < FLUSH_EVERY_SECONDS {
        assert!(on_disk < 40, "every point rewrote the results: {on_disk} rows on disk");
    }
    let run = w.finish(RunStatus::Complete, None).unwrap();
    assert_eq!(run.rows().unwrap().len(), 40);
    assert_eq!(run.manifest().unwrap().counts.rows, 40);
    assert!(verify_run(&run).findings.is_empty(), "the files match the manifest");
}

/// Runs measured on the stand-in CUDA driver of the tests (devices named
/// "Fake CUDA GPU N") are test fixtures, never example data: no manifest
/// under data/ may name one.
#[test]
fn no_run_under_data_was_measured_on_the_stand_in_driver() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data");
    let mut manifests = Vec::new();
    let mut dirs = vec![data];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.file_name().is_some_and(|n| n == "manifest.json") {
                manifests.push(path);
            }
        }
    }
    assert!(manifests.len() >= 40, "found only {} manifests under data/", manifests.len());
    let stand_in: Vec<_> = manifests
        .iter()
        .filter(|p| std::fs::read_to_string(p).unwrap().contains("Fake CUDA GPU"))
        .map(|p| p.display().to_string())
        .collect();
    assert!(stand_in.is_empty(), "runs measured on the stand-in driver are under data/: {stand_in:?}");
}
