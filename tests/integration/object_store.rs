//! Archives in a real S3-compatible store: Garage on loopback, started by
//! `scripts/object-store.sh` (never a mock). Each "node" is a process with
//! its own mirror (`BENCHBOOK_CACHE`), as separate machines have; no
//! directory is shared between them. Faults are real: a TCP proxy on
//! loopback that cuts 10 % of requests, a server restarted mid-upload,
//! two nodes archiving at once, a node SIGKILLed mid-run.
//!
//! Skipped (saying why) where Garage is not installed, except in CI,
//! which installs it (`scripts/object-store.sh install`).

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use benchbook::prelude::*;

use crate::common;

const SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/object-store.sh");

/// A Garage server of its own, stopped when dropped.
pub struct Store {
    dir: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Store {
    /// Start one in `dir`; None (saying why) where Garage is missing.
    pub fn start(dir: &Path) -> Option<Store> {
        let o = Command::new("bash").arg(SCRIPT).arg("start").arg(dir).output().expect("bash");
        if !o.status.success() {
            let why = String::from_utf8_lossy(&o.stderr).into_owned();
            assert!(
                std::env::var_os("CI").is_none() || !why.contains("not installed"),
                "CI must run the object-store tests: {why}"
            );
            assert!(why.contains("not installed"), "Garage failed to start: {why}");
            eprintln!("skipped: {why}");
            return None;
        }
        let env = std::fs::read_to_string(dir.join("env")).expect("env file");
        let env = env
            .lines()
            .filter_map(|l| l.strip_prefix("export ")?.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Some(Store { dir: dir.to_path_buf(), env })
    }

    pub fn get(&self, key: &str) -> &str {
        &self.env.iter().find(|(k, _)| k == key).expect(key).1
    }

    pub fn url(&self, prefix: &str) -> String {
        format!("s3://{}/{prefix}", self.get("BENCHBOOK_S3_BUCKET"))
    }

    /// PUT `data` at `key` of the bucket directly (curl's SigV4), past benchbook.
    pub fn put_raw(&self, key: &str, data: &[u8]) {
        use sha2::Digest;
        let file = self.dir.join("raw-put");
        std::fs::write(&file, data).unwrap();
        let sha: String = sha2::Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect();
        let o = Command::new("curl")
            .args(["-sS", "--fail-with-body", "--aws-sigv4", "aws:amz:garage:s3", "--user"])
            .arg(format!("{}:{}", self.get("AWS_ACCESS_KEY_ID"), self.get("AWS_SECRET_ACCESS_KEY")))
            .args(["-H", &format!("x-amz-content-sha256: {sha}"), "-T"])
            .arg(&file)
            .arg(format!("{}/{}/{key}", self.get("AWS_ENDPOINT_URL"), self.get("BENCHBOOK_S3_BUCKET")))
            .output()
            .expect("curl");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    }

    pub fn restart(&self) {
        let o = Command::new("bash").arg(SCRIPT).arg("restart").arg(&self.dir).output().expect("bash");
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    }

    /// benchbook as node `cache` sees it (its own mirror), against `endpoint`.
    pub fn bb(&self, cache: &Path, endpoint: Option<&str>) -> Command {
        let mut c = Command::new(common::bin());
        c.envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        if let Some(e) = endpoint {
            c.env("AWS_ENDPOINT_URL", e);
        }
        c.env("BENCHBOOK_CACHE", cache).env_remove("BENCHBOOK_ARCHIVE").stdin(Stdio::null());
        c
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        let _ = Command::new("bash").arg(SCRIPT).arg("stop").arg(&self.dir).output();
    }
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    o
}

fn json(o: Output) -> serde_json::Value {
    serde_json::from_slice(&ok(o).stdout).expect("JSON")
}

/// A short CPU run on the bucket.
fn run_args(url: &str, label: &str) -> Vec<String> {
    let args = [
        "-q",
        "run",
        "memcpy",
        "--backend",
        "cpu",
        "--sizes",
        "4K,64K",
        "--threads",
        "1",
        "--min-time",
        "0.02",
        "--max-time",
        "0.05",
    ];
    let mut v: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    v.extend(["--label".into(), label.into(), "--archive".into(), url.into()]);
    v
}

fn import_args(url: &str, label: &str) -> Vec<String> {
    let log = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/import/nccl_all_reduce_new.txt");
    ["-q", "import", log, "--label", label, "--archive", url].iter().map(|s| s.to_string()).collect()
}

/// The bucket's runs as a fresh node reads them: (id, status, points).
fn listed(store: &Store, url: &str, cache: &Path) -> Vec<(String, String, u64)> {
    let v = json(store.bb(cache, None).args(["list", "--json", "--archive", url]).output().unwrap());
    let mut out: Vec<(String, String, u64)> = v
        .as_array()
        .expect("an array")
        .iter()
        .map(|r| {
            (
                r["run_id"].as_str().unwrap().into(),
                r["status"].as_str().unwrap_or("").into(),
                r["points"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn runs_land_in_the_bucket_and_every_reader_works_from_it() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = Store::start(&tmp.path().join("s3")) else { return };
    let url = store.url("lab");
    let (node_a, reader) = (tmp.path().join("node-a"), tmp.path().join("reader"));
    ok(store.bb(&node_a, None).args(run_args(&url, "first")).output().unwrap());
    ok(store.bb(&node_a, None).args(import_args(&url, "nccl")).output().unwrap());

    // A node that never ran anything reads both runs from the bucket, whole.
    let runs = listed(&store, &url, &reader);
    assert_eq!(runs.len(), 2, "{runs:?}");
    assert!(runs.iter().all(|(_, status, points)| status == "complete" && *points > 0), "{runs:?}");
    let v = json(store.bb(&reader, None).args(["verify", "--all", "--json", "--archive", &url]).output().unwrap());
    assert_eq!(v.as_array().map(Vec::len), Some(2), "{v}");
    assert!(v.as_array().unwrap().iter().all(|r| r["ok"] == true && r["manifest_sealed"] == true), "{v}");
    for cmd in [&["show", "first"][..], &["report", "first", "--out"][..]] {
        let mut c = store.bb(&reader, None);
        c.args(cmd);
        if cmd[0] == "report" {
            c.arg(tmp.path().join("rep"));
        }
        ok(c.args(["--archive", &url]).output().unwrap());
    }
    assert!(tmp.path().join("rep").read_dir().unwrap().next().is_some(), "a report was written");

    // Sending again sends nothing: the bucket has both runs whole.
    let v = json(
        store
            .bb(&node_a, None)
            .args(["sync", "--json", "--upload-from"])
            .arg(node_a.join("s3/benchbook/lab"))
            .args(["--archive", &url])
            .output()
            .unwrap(),
    );
    assert_eq!(v["uploaded_from"]["runs_sent"], serde_json::json!([]), "{v}");
    assert_eq!(v["uploaded_from"]["runs_unchanged"], 2, "{v}");
    assert_eq!(v["sent"]["objects_sent"], 0, "{v}");

    // A results object changed in the bucket itself (a raw S3 PUT, with
    // curl's SigV4) is named by `verify --all` on every reader.
    let id = &runs[0].0;
    let results = reader.join("s3/benchbook/lab/runs").join(id).join("results.parquet");
    let mut bytes = std::fs::read(&results).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0xff;
    store.put_raw(&format!("lab/runs/{id}/results.parquet"), &bytes);
    // Both the reader that had a whole copy and one that never read the bucket.
    for cache in [reader.clone(), tmp.path().join("reader-2")] {
        let o = store.bb(&cache, None).args(["verify", "--all", "--json", "--archive", &url]).output().unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let bad: Vec<&serde_json::Value> = v.as_array().unwrap().iter().filter(|r| r["ok"] == false).collect();
        assert_eq!(bad.len(), 1, "{v}");
        assert_eq!(
            (bad[0]["run_id"].as_str(), &bad[0]["findings"][0]["path"]),
            (Some(id.as_str()), &serde_json::json!("results.parquet")),
            "{v}"
        );
    }
}

/// A loopback TCP proxy to `target` that cuts the connection at the start
/// of one request in ten, before or after the server has it.
struct FaultyProxy {
    port: u16,
    cut: Arc<AtomicUsize>,
    seen: Arc<AtomicUsize>,
}

impl FaultyProxy {
    fn start(target: String) -> FaultyProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let (cut, seen) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
        let (c, s) = (cut.clone(), seen.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let (c, s, target) = (c.clone(), s.clone(), target.clone());
                std::thread::spawn(move || {
                    let Ok(server) = TcpStream::connect(&target) else { return };
                    let (mut cr, mut sw) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                    let (mut sr, mut cw) = (server, client);
                    let back = std::thread::spawn(move || {
                        let _ = std::io::copy(&mut sr, &mut cw);
                        let _ = cw.shutdown(std::net::Shutdown::Both);
                    });
                    let mut buf = vec![0u8; 64 * 1024];
                    while let Ok(n) = cr.read(&mut buf) {
                        if n == 0 {
                            break;
                        }
                        let starts =
                            [&b"GET "[..], b"PUT ", b"HEAD", b"POST", b"DELE"].iter().any(|m| buf[..n].starts_with(m));
                        let k = if starts { s.fetch_add(1, Ordering::SeqCst) } else { usize::MAX };
                        // Every tenth request: cut before the server sees it (odd), or after (even).
                        if k % 10 == 7 && k != usize::MAX {
                            c.fetch_add(1, Ordering::SeqCst);
                            if (k / 10) % 2 == 0 {
                                let _ = sw.write_all(&buf[..n]);
                                std::thread::sleep(Duration::from_millis(20));
                            }
                            let _ = sw.shutdown(std::net::Shutdown::Both);
                            let _ = cr.shutdown(std::net::Shutdown::Both);
                            break;
                        }
                        if sw.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = sw.shutdown(std::net::Shutdown::Write);
                    let _ = back.join();
                });
            }
        });
        FaultyProxy { port, cut, seen }
    }
}

#[test]
fn cut_requests_and_two_nodes_at_once_lose_nothing_and_double_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = Store::start(&tmp.path().join("s3")) else { return };
    let url = store.url("faults");
    let target = store.get("AWS_ENDPOINT_URL").trim_start_matches("http://").to_string();
    let proxy = FaultyProxy::start(target);
    let via = format!("http://127.0.0.1:{}", proxy.port);
    // Two nodes at once, each a run and two imports, every request through the proxy.
    let nodes: Vec<_> = ["node-a", "node-b"]
        .iter()
        .map(|node| {
            let cache = tmp.path().join(node);
            let jobs = vec![
                run_args(&url, node),
                import_args(&url, &format!("{node}-1")),
                import_args(&url, &format!("{node}-2")),
            ];
            let cmds: Vec<Command> = jobs
                .into_iter()
                .map(|args| {
                    let mut c = store.bb(&cache, Some(&via));
                    c.args(args);
                    c
                })
                .collect();
            std::thread::spawn(move || cmds.into_iter().map(|mut c| c.output().unwrap()).collect::<Vec<_>>())
        })
        .collect();
    let mut outputs = Vec::new();
    for n in nodes {
        outputs.extend(n.join().unwrap());
    }
    // A command whose sends all failed keeps its run in the outbox: `sync` sends it.
    for node in ["node-a", "node-b"] {
        ok(store.bb(&tmp.path().join(node), Some(&via)).args(["-q", "sync", "--archive", &url]).output().unwrap());
    }
    assert!(
        proxy.cut.load(Ordering::SeqCst) >= 3,
        "the proxy cut {} of {} requests",
        proxy.cut.load(Ordering::SeqCst),
        proxy.seen.load(Ordering::SeqCst)
    );
    every_run_once_and_whole(&store, &url, &tmp.path().join("reader"), 6, &format!("{outputs:?}"));
}

/// A new reader finds `n` runs in the bucket, each once, and every one verifies.
fn every_run_once_and_whole(store: &Store, url: &str, cache: &Path, n: usize, context: &str) {
    let runs = listed(store, url, cache);
    assert_eq!(runs.len(), n, "every finished run, once: {runs:?}\n{context}");
    let ids: std::collections::BTreeSet<&String> = runs.iter().map(|r| &r.0).collect();
    assert_eq!(ids.len(), n);
    let o = store.bb(cache, None).args(["verify", "--all", "--archive", url]).output().unwrap();
    assert!(o.status.success(), "every run verifies: {}", String::from_utf8_lossy(&o.stdout));
}

#[test]
fn a_server_restarted_mid_upload_loses_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = Store::start(&tmp.path().join("s3")) else { return };
    let url = store.url("restart");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let template = RunDir { id: "t".into(), path: root.join("data/runs/20261122T014545Z-memcpy-rounds-a-2c86") };
    let spec = benchbook::archive::synthetic::SynthSpec {
        runs: 240,
        rows_per_run: 120,
        nodes: 12,
        drifting: 3,
        drift_at: 99,
        damage: 0,
        points: None,
    };
    let local = tmp.path().join("shared-dir");
    benchbook::archive::synthetic::synthetic_fleet(&template, &Archive::new(&local), &spec).unwrap();
    let node = tmp.path().join("node");
    let mut child = store
        .bb(&node, None)
        .args(["sync", "--json", "--upload-from"])
        .arg(&local)
        .args(["--archive", &url])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(700));
    assert!(child.try_wait().unwrap().is_none(), "the upload was still going when the server stopped");
    store.restart();
    let out = child.wait_with_output().unwrap();
    // The sync either rode out the restart or left runs to send again; a second one finishes.
    let again = json(
        store
            .bb(&node, None)
            .args(["sync", "--json", "--upload-from"])
            .arg(&local)
            .args(["--archive", &url])
            .output()
            .unwrap(),
    );
    assert_eq!(again["uploaded_from"]["left"], serde_json::json!([]), "{again}");
    every_run_once_and_whole(&store, &url, &tmp.path().join("reader"), 240, &String::from_utf8_lossy(&out.stderr));
}

#[test]
fn a_node_killed_mid_run_reads_interrupted_everywhere_and_sync_completes_it() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = Store::start(&tmp.path().join("s3")) else { return };
    let url = store.url("killed");
    let node = tmp.path().join("node");
    let args = [
        "-q",
        "run",
        "memcpy",
        "--backend",
        "cpu",
        "--sizes",
        "4K..256M",
        "--threads",
        "1",
        "--min-time",
        "0.05",
        "--max-time",
        "0.3",
        "--archive",
        &url,
    ];
    let mut child = store.bb(&node, None).args(args).env("BENCHBOOK_UPLOAD_SECONDS", "0.3").spawn().unwrap();
    // Wait until another node sees the live run with some points.
    let reader = tmp.path().join("reader");
    let t = Instant::now();
    let live = loop {
        let runs = listed(&store, &url, &reader);
        if let Some(r) = runs.iter().find(|r| r.2 >= 2) {
            break r.clone();
        }
        assert!(t.elapsed() < Duration::from_secs(120), "the run never reached the bucket: {runs:?}");
        std::thread::sleep(Duration::from_millis(200));
    };
    assert_eq!(live.1, "running", "a live run with a fresh heartbeat: {live:?}");
    child.kill().unwrap();
    child.wait().unwrap();
    // No pid to check from here: a silent heartbeat makes it interrupted, with its points.
    std::thread::sleep(Duration::from_millis(3500));
    let stale = |cache: &Path| {
        let v = json(
            store
                .bb(cache, None)
                .env("BENCHBOOK_STALE_MINUTES", "0.05")
                .args(["list", "--json", "--archive", &url])
                .output()
                .unwrap(),
        );
        v[0].clone()
    };
    let seen = stale(&reader);
    assert_eq!(seen["status"], "interrupted", "{seen}");
    assert!(seen["points"].as_u64().unwrap() >= 2, "{seen}");
    ok(store
        .bb(&reader, None)
        .env("BENCHBOOK_STALE_MINUTES", "0.05")
        .args(["show", "latest", "--archive", &url])
        .output()
        .unwrap());
    // A flush cut off mid-upload (the results sent, not the manifest that
    // hashes them) is never read as whole: a reader that had the run keeps
    // its earlier copy, a new one leaves the run out; both say why.
    let id = seen["run_id"].as_str().unwrap().to_string();
    store.put_raw(&format!("killed/runs/{id}/results.parquet"), b"PAR1 half of a newer flush");
    for (cache, kept) in [(reader.clone(), 1), (tmp.path().join("reader-new"), 0)] {
        let o = store.bb(&cache, None).args(["list", "--json", "--archive", &url]).output().unwrap();
        let v = json(o.clone());
        assert_eq!(v.as_array().unwrap().len(), kept, "{v}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("run {id} in {url} is not whole")) && err.contains("benchbook sync"), "{err}");
    }
    // The node's `sync` sends what it had locally: every point, marked gone.
    let local = Archive::new(node.join("s3/benchbook/killed")).resolve("latest").unwrap();
    let points = local.manifest().unwrap().counts.points;
    ok(store.bb(&node, None).args(["-q", "sync", "--archive", &url]).output().unwrap());
    let after = json(
        store.bb(&tmp.path().join("reader-2"), None).args(["list", "--json", "--archive", &url]).output().unwrap(),
    );
    assert_eq!(after[0]["status"], "interrupted", "the node said its process is gone: {after}");
    assert_eq!(after[0]["points"].as_u64(), Some(points as u64), "{after}");
}

#[test]
fn a_run_made_while_the_bucket_is_down_is_kept_and_sent_by_sync() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(store) = Store::start(&tmp.path().join("s3")) else { return };
    let url = store.url("down");
    let node = tmp.path().join("node");
    // Nothing listens on this port: every request is refused.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://127.0.0.1:{}", closed.local_addr().unwrap().port());
    drop(closed);
    let o = store.bb(&node, Some(&dead)).args(import_args(&url, "offline")).output().unwrap();
    assert!(o.status.success(), "the import is archived in the mirror: {}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("benchbook sync") && err.contains("127.0.0.1"), "it says where and what next: {err}");
    assert_eq!(listed(&store, &url, &tmp.path().join("reader")).len(), 0);
    // A reader cannot read a bucket it cannot reach, and says so.
    let o = store.bb(&tmp.path().join("reader"), Some(&dead)).args(["list", "--archive", &url]).output().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    // Back up: the node's sync sends it.
    ok(store.bb(&node, None).args(["-q", "sync", "--archive", &url]).output().unwrap());
    every_run_once_and_whole(&store, &url, &tmp.path().join("reader"), 1, "");
}
