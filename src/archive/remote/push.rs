//! Sending runs to the bucket: each file, then the manifest that hashes
//! them, then the heartbeat. An object whose size and ETag (the MD5 of a
//! single-part upload) match the file is not sent again, so pushing twice
//! sends nothing the second time, and a run cut off mid-upload is
//! completed by sending only what differs.

use std::collections::BTreeMap;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use futures::StreamExt;
use md5::Digest;
use object_store::ObjectStoreExt;
use serde::Serialize;

use super::{outbox, Bucket, HEARTBEAT_FILE, OUTBOX_DIR};
use crate::archive::manifest::{sha256_hex, RunStatus};
use crate::archive::store::{Archive, RunDir, MANIFEST_FILE};
use crate::error::{Error, IoContext, Result};

/// What a push sent.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct PushReport {
    /// Runs that were sent (some object of theirs was missing or stale).
    pub runs_sent: Vec<String>,
    /// Runs already whole in the bucket.
    pub runs_unchanged: usize,
    pub objects_sent: usize,
    pub bytes_sent: u64,
    /// Runs of this node still going: sent so far, and kept in the outbox.
    pub still_running: Vec<String>,
    /// Runs that failed to send (kept in the outbox), with why.
    pub left: Vec<(String, String)>,
}

impl PushReport {
    fn add(&mut self, id: &str, sent: Option<(usize, u64)>) {
        match sent {
            Some((objects, bytes)) => {
                self.runs_sent.push(id.to_string());
                self.objects_sent += objects;
                self.bytes_sent += bytes;
            }
            None => self.runs_unchanged += 1,
        }
    }
}

/// What the node says of its run, beside it in the bucket.
#[derive(Debug, Serialize)]
struct Heartbeat<'a> {
    run_id: &'a str,
    host: String,
    pid: u32,
    at: String,
    /// The run's process is gone (it will never write again).
    gone: bool,
}

/// A run's files as one consistent set: the manifest and every file it
/// hashes, read until they agree (a live run rewrites them while we read).
/// A file's name and bytes.
type NamedFile = (String, Vec<u8>);

fn snapshot(dir: &RunDir) -> Result<(Vec<u8>, Vec<NamedFile>)> {
    for _ in 0..20 {
        let manifest = std::fs::read(dir.manifest_path()).at(dir.manifest_path())?;
        let value: serde_json::Value = serde_json::from_slice(&manifest)
            .map_err(|e| Error::Manifest { path: dir.manifest_path(), message: e.to_string() })?;
        let hashed: BTreeMap<String, String> = value["files"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| Some((f["path"].as_str()?.to_string(), f["sha256"].as_str()?.to_string())))
            .collect();
        let mut files = Vec::new();
        let mut agree = true;
        for entry in std::fs::read_dir(&dir.path).at(&dir.path)? {
            let entry = entry.at(&dir.path)?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if name == MANIFEST_FILE || crate::archive::store::is_side_file(&name) || !entry.path().is_file() {
                continue;
            }
            let data = std::fs::read(entry.path()).at(entry.path())?;
            agree &= hashed.get(&name).is_none_or(|sha| *sha == sha256_hex(&data));
            files.push((name, data));
        }
        if agree {
            files.sort();
            return Ok((manifest, files));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Err(Error::Manifest {
        path: dir.manifest_path(),
        message: "its files kept changing while they were read for upload".into(),
    })
}

fn etag_is_md5(etag: Option<&str>, data: &[u8]) -> bool {
    let md5 = crate::archive::manifest::hex(&md5::Md5::digest(data));
    etag.is_some_and(|e| e.trim_matches('"').eq_ignore_ascii_case(&md5))
}

impl Bucket {
    /// Send run `dir` (whatever of it the bucket lacks), then its
    /// heartbeat. Returns the objects and bytes sent, or None when the
    /// bucket had the run whole already.
    async fn push_run_async(&self, dir: &RunDir, gone: bool) -> Result<Option<(usize, u64)>> {
        let (manifest, mut files) = snapshot(dir)?;
        // Only a run that may still be going needs a heartbeat.
        let running = serde_json::from_slice::<serde_json::Value>(&manifest).is_ok_and(|v| v["status"] == "running");
        let run_key = |name: &str| self.key(&format!("runs/{}/{name}", dir.id));
        // The manifest last: in the bucket, it never hashes a file not yet there.
        files.push((MANIFEST_FILE.to_string(), manifest));
        let (mut objects, mut bytes) = (0, 0);
        for (name, data) in files {
            let key = run_key(&name);
            let same = match self.store.head(&key).await {
                Ok(meta) => meta.size == data.len() as u64 && etag_is_md5(meta.e_tag.as_deref(), &data),
                Err(object_store::Error::NotFound { .. }) => false,
                Err(e) => return Err(self.err(key.as_ref(), e)),
            };
            if !same {
                bytes += data.len() as u64;
                objects += 1;
                self.put(&key, data).await?;
            }
        }
        let sent = (objects > 0).then_some((objects, bytes));
        if running {
            self.heartbeat(&dir.id, gone).await?;
        }
        Ok(sent)
    }

    /// Send one run now (a live run's flush point).
    pub fn push_run(&self, dir: &RunDir) -> Result<Option<(usize, u64)>> {
        self.rt.block_on(self.push_run_async(dir, false))
    }

    /// Send every run in the mirror's outbox; a run that has ended (or
    /// whose process is gone) leaves the outbox once it is whole in the
    /// bucket. A run that fails to send stays, with why.
    pub fn push_outbox(&self, archive: &Archive) -> Result<PushReport> {
        let ids = outbox(&archive.root);
        let jobs = ids.iter().map(|id| async move {
            let dir = archive.run_dir(id);
            let entry = archive.root.join(OUTBOX_DIR).join(id);
            let staging = archive.runs_dir().join(format!("{}{id}", crate::archive::store::STAGING_PREFIX));
            if !dir.path.is_dir() {
                if !staging.exists() {
                    let _ = std::fs::remove_file(&entry);
                }
                return (id, Ok((None, false)));
            }
            let manifest = match dir.manifest() {
                Ok(m) => m,
                Err(e) => return (id, Err(e)),
            };
            let effective = manifest.effective_status();
            let live = effective == RunStatus::Running;
            let gone = manifest.status == RunStatus::Running && !live;
            let r = self.push_run_async(&dir, gone).await;
            if r.is_ok() && !live {
                let _ = std::fs::remove_file(&entry);
            }
            (id, r.map(|sent| (sent, live)))
        });
        let results: Vec<_> = self.rt.block_on(futures::stream::iter(jobs).buffer_unordered(8).collect());
        let mut report = PushReport::default();
        for (id, r) in results {
            match r {
                Ok((sent, live)) => {
                    report.add(id, sent);
                    if live {
                        report.still_running.push(id.clone());
                    }
                }
                Err(e) => report.left.push((id.clone(), e.to_string())),
            }
        }
        report.runs_sent.sort();
        Ok(report)
    }

    /// Send every run of another (local) archive: moving a shared-directory
    /// archive into a bucket. Runs already whole there are not sent again.
    pub fn push_all(&self, from: &Archive) -> Result<PushReport> {
        let runs = from.runs()?;
        let jobs = runs.iter().map(|dir| async move { (dir, self.push_run_async(dir, false).await) });
        let results: Vec<_> = self.rt.block_on(futures::stream::iter(jobs).buffer_unordered(16).collect());
        let mut report = PushReport::default();
        for (dir, r) in results {
            match r {
                Ok(sent) => report.add(&dir.id, sent),
                Err(e) => report.left.push((dir.id.clone(), e.to_string())),
            }
        }
        report.runs_sent.sort();
        Ok(report)
    }

    /// Write the mirror's catalog to the bucket as its compacted index.
    pub fn push_catalog(&self, archive: &Archive) -> Result<()> {
        crate::archive::Catalog::open(archive)?;
        let path = archive.root.join(crate::archive::catalog::CATALOG_FILE);
        let data = std::fs::read(&path).at(&path)?;
        self.rt.block_on(self.put(&self.key(super::CATALOG_OBJECT), data))
    }

    /// Start sending this process's live runs every `every` (their
    /// flush points, and a heartbeat), until the returned handle is stopped.
    pub fn start_uploader(self: &Arc<Self>, archive: Archive, every: Duration) -> Uploader {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let (bucket, signal) = (Arc::clone(self), Arc::clone(&stop));
        let handle = std::thread::spawn(move || {
            let mut sent: BTreeMap<String, Vec<u8>> = BTreeMap::new();
            let mut warned = false;
            loop {
                let (lock, cvar) = &*signal;
                let stopped = cvar.wait_timeout_while(lock.lock().expect("uploader lock"), every, |s| !*s);
                if stopped.map(|(s, _)| *s).unwrap_or(true) {
                    return;
                }
                for id in outbox(&archive.root) {
                    let dir = archive.run_dir(&id);
                    let Ok(bytes) = std::fs::read(dir.manifest_path()) else { continue };
                    let Ok(m) = serde_json::from_slice::<crate::archive::Manifest>(&bytes) else { continue };
                    if m.pid != std::process::id() || m.status != RunStatus::Running {
                        continue;
                    }
                    let r = if sent.get(&id) == Some(&bytes) {
                        bucket.rt.block_on(bucket.heartbeat(&dir.id, false))
                    } else {
                        bucket.push_run(&dir).map(|_| ())
                    };
                    match r {
                        Ok(()) => {
                            sent.insert(id, bytes);
                        }
                        Err(e) if !warned => {
                            warned = true;
                            eprintln!(
                                "warning: {e} (the run goes on; it is sent when it ends, or by `benchbook sync`)"
                            );
                        }
                        Err(_) => {}
                    }
                }
            }
        });
        Uploader { stop, handle: Some(handle) }
    }

    /// Say that run `id` is alive (or, `gone`, that its process is dead).
    async fn heartbeat(&self, id: &str, gone: bool) -> Result<()> {
        let beat = Heartbeat {
            run_id: id,
            host: crate::host::hostname(),
            pid: std::process::id(),
            at: crate::archive::manifest::now_rfc3339(),
            gone,
        };
        let key = self.key(&format!("runs/{id}/{HEARTBEAT_FILE}"));
        self.put(&key, serde_json::to_vec(&beat).expect("a heartbeat serializes")).await
    }
}

/// The background sender of [`Bucket::start_uploader`]; stopped (and
/// joined) when dropped.
pub struct Uploader {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

impl Drop for Uploader {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.stop;
        if let Ok(mut s) = lock.lock() {
            *s = true;
        }
        cvar.notify_all();
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_etag_matches_only_the_md5_of_the_same_bytes() {
        // MD5("") and MD5("abc"), as S3 quotes them.
        assert!(etag_is_md5(Some("\"d41d8cd98f00b204e9800998ecf8427e\""), b""));
        assert!(etag_is_md5(Some("900150983CD24FB0D6963F7D28E17F72"), b"abc"));
        assert!(!etag_is_md5(Some("\"900150983cd24fb0d6963f7d28e17f72-2\""), b"abc"), "a multipart ETag");
        assert!(!etag_is_md5(None, b"abc"));
    }
}
