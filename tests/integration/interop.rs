//! Other tools read the archive as it is: pyarrow and duckdb over a run's
//! `results.parquet`, every run's at once, and the catalog. Skipped, with
//! the reason, where this Python has neither (CI installs both).

use std::process::Command;

use benchbook::prelude::*;

const READER: &str = r#"
import sys, glob, os
root, run = sys.argv[1], sys.argv[2]
import pyarrow.parquet as pq
t = pq.read_table(os.path.join(root, "runs", run, "results.parquet"))
assert t.num_rows > 0 and "seconds" in t.column_names and "run_id" in t.column_names, t.schema
meta = pq.read_metadata(os.path.join(root, "runs", run, "results.parquet")).metadata
assert b"benchbook.schema_version" in meta, meta
c = pq.read_table(os.path.join(root, "catalog.parquet")).to_pydict()
assert run in c["run_id"] and c["verified"][c["run_id"].index(run)] in (True, False), c
import duckdb
n = duckdb.sql(f"select count(*) from read_parquet('{root}/runs/*/results.parquet')").fetchall()[0][0]
assert n == t.num_rows, (n, t.num_rows)
print("rows", n)
"#;

#[test]
fn pyarrow_and_duckdb_read_the_runs_and_the_catalog() {
    let python = std::env::var("BENCHBOOK_PYTHON").unwrap_or_else(|_| "python3".into());
    let probe = Command::new(&python).args(["-c", "import pyarrow, duckdb"]).output();
    if !probe.as_ref().is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: {python} has no pyarrow and duckdb (pip install pyarrow duckdb)");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let archive = Archive::new(tmp.path());
    let run = crate::common::tiny_run(&archive, Some("interop")).run.id;
    // `list` writes the catalog.
    let o = Command::new(crate::common::bin()).args(["-q", "list", "--archive"]).arg(tmp.path()).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(&python).args(["-c", READER]).arg(tmp.path()).arg(&run).output().unwrap();
    assert!(o.status.success(), "{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    let rows = archive.resolve(&run).unwrap().manifest().unwrap().counts.rows;
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), format!("rows {rows}"));
}
