//! The op table (`vocab::ops`) has a row for every op benchbook's own
//! archives hold and every op the importers read from the real and
//! hand-made logs under `tests/fixtures/import/`: an importer or benchmark
//! that starts writing a new op fails here until its meaning is added.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use benchbook::archive::Archive;
use benchbook::vocab::ops::meaning;

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            walk(&p, out)
        } else {
            out.push(p)
        }
    }
}

/// Every archive under `data/` (a folder with a `runs/` folder).
fn archives(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.join("runs").is_dir() {
        out.push(dir.to_path_buf());
    }
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        if e.path().is_dir() && e.file_name() != "runs" {
            archives(&e.path(), out);
        }
    }
}

type Op = (String, String, Option<String>, bool);

fn missing(ops: BTreeSet<Op>) -> Vec<Op> {
    ops.into_iter().filter(|(b, o, v, m)| meaning(b, o, v.as_deref(), *m).is_none()).collect()
}

#[test]
fn every_archived_op_has_a_meaning() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    archives(&root.join("data"), &mut found);
    assert!(found.len() >= 3, "the example archives: {found:?}");
    let mut ops: BTreeSet<Op> = BTreeSet::new();
    for a in found {
        for run in Archive::new(&a).runs().unwrap() {
            for r in run.rows().unwrap() {
                ops.insert((r.params.bench, r.params.op, r.params.variant, r.params.metric.is_some()));
            }
        }
    }
    assert!(ops.len() > 50, "{} ops", ops.len());
    let miss = missing(ops);
    assert!(miss.is_empty(), "ops with no row in vocab::ops: {miss:?}");
}

#[test]
fn every_imported_op_has_a_meaning() {
    let mut files = Vec::new();
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/import"), &mut files);
    let mut ops: BTreeSet<Op> = BTreeSet::new();
    let mut tools: BTreeSet<String> = BTreeSet::new();
    for f in files {
        let Ok(data) = std::fs::read(&f) else { continue };
        let Ok((text, _)) = benchbook::import::decode(&f, &data) else { continue };
        let Ok(p) = benchbook::import::parse(&f, &text, None) else { continue };
        tools.insert(p.tool.clone());
        for r in p.records {
            ops.insert((r.params.bench, r.params.op, r.params.variant, r.params.metric.is_some()));
        }
    }
    assert!(tools.len() >= 15, "the importers the fixtures reach: {tools:?}");
    let miss = missing(ops);
    assert!(miss.is_empty(), "ops with no row in vocab::ops: {miss:?}");
}
