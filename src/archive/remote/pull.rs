//! Bringing the bucket into the local mirror. One listing says what is
//! there; runs whose objects changed since the last pull (by ETag) are
//! fetched, checked file by file against their manifest's sha256, and
//! placed whole (written beside, then renamed into place). Runs gone from
//! the bucket leave the mirror; runs of this node still in the outbox are
//! never overwritten.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use futures::{StreamExt, TryStreamExt};
use object_store::ObjectMeta;
use serde::{Deserialize, Serialize};

use super::{outbox, Bucket, HEARTBEAT_FILE};
use crate::archive::manifest::sha256_hex;
use crate::archive::store::{write_atomic, Archive, MANIFEST_FILE};
use crate::error::{Error, IoContext, Result};

/// The mirror's record of the objects it holds (key → ETag).
const STATE_FILE: &str = ".bucket-state.json";

/// What a pull brings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every run and spec: commands that read runs.
    Everything,
    /// Only the specs (rooflines): commands that only make runs.
    Specs,
}

/// A run in the bucket that is not whole there.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Incomplete {
    pub run_id: String,
    pub why: String,
    /// Whether the mirror kept an earlier whole copy of it.
    pub kept_earlier_copy: bool,
}

/// What a pull did.
#[derive(Debug, Default, Clone, Serialize, PartialEq)]
pub struct PullReport {
    /// Runs in the bucket (whole or not).
    pub runs_in_bucket: usize,
    pub runs_fetched: usize,
    pub bytes_fetched: u64,
    /// Runs removed from the mirror because the bucket no longer has them.
    pub runs_removed: usize,
    pub incomplete: Vec<Incomplete>,
}

/// What the mirror records beside a run from the bucket: when its node
/// last showed it was alive (server time), and whether it said the run's
/// process is gone.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SeenAlive {
    pub seen_at: String,
    pub gone: bool,
}

/// Minutes without a heartbeat after which a live run from a bucket reads
/// as interrupted (`BENCHBOOK_STALE_MINUTES`, default 10).
pub fn stale_after_minutes() -> f64 {
    std::env::var("BENCHBOOK_STALE_MINUTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|m: &f64| *m >= 0.0)
        .unwrap_or(10.0)
}

impl SeenAlive {
    /// Whether the node has been silent for longer than [`stale_after_minutes`] at `now`.
    pub fn is_stale(&self, now: chrono::DateTime<chrono::Utc>) -> bool {
        chrono::DateTime::parse_from_rfc3339(&self.seen_at).map_or(true, |t| {
            (now - t.with_timezone(&chrono::Utc)).num_milliseconds() as f64 > stale_after_minutes() * 60_000.0
        })
    }
}

fn tag(meta: &ObjectMeta) -> String {
    meta.e_tag
        .clone()
        .unwrap_or_else(|| format!("{}:{}", meta.size, meta.last_modified.timestamp_nanos_opt().unwrap_or(0)))
}

/// A run's objects fetched and found consistent.
struct Fetched {
    id: String,
    files: Vec<(String, Vec<u8>)>,
    seen: SeenAlive,
    tags: Vec<(String, String)>,
}

impl Bucket {
    async fn list(&self, rel: &str) -> Result<Vec<(String, ObjectMeta)>> {
        let prefix = self.key(rel);
        let metas: Vec<ObjectMeta> =
            self.store.list(Some(&prefix)).try_collect().await.map_err(|e| self.err(rel, e))?;
        Ok(metas.into_iter().filter_map(|m| Some((self.rel(&m.location)?.to_string(), m))).collect())
    }

    /// Fetch one run's objects; Err(why) when they are not a whole run.
    async fn fetch_run(&self, id: &str, objects: &[(String, ObjectMeta)]) -> Result<Result<Fetched, String>> {
        let find = |name: &str| objects.iter().find(|(n, _)| n == name).map(|(_, m)| m);
        let Some(manifest_meta) = find(MANIFEST_FILE) else {
            return Ok(Err("its node has sent files but not yet the manifest that seals them".into()));
        };
        let mut files = Vec::new();
        let mut gone = false;
        let mut seen_at = manifest_meta.last_modified;
        for (name, meta) in objects {
            let Some(data) = self.get_opt(&meta.location).await? else {
                return Ok(Err(format!("{name} vanished while it was read")));
            };
            if name == HEARTBEAT_FILE {
                gone = serde_json::from_slice::<serde_json::Value>(&data).is_ok_and(|v| v["gone"] == true);
                seen_at = seen_at.max(meta.last_modified);
            } else {
                files.push((name.clone(), data));
            }
        }
        let manifest = &files.iter().find(|(n, _)| n == MANIFEST_FILE).expect("listed above").1;
        let value: serde_json::Value = serde_json::from_slice(manifest).unwrap_or_default();
        let running = value["status"] == "running";
        for f in value["files"].as_array().into_iter().flatten() {
            let (Some(path), Some(sha)) = (f["path"].as_str(), f["sha256"].as_str()) else { continue };
            let held = files.iter().find(|(n, _)| n == path);
            // A sealed run whose file differs is damage, kept for `verify` to report; a live
            // run's is an upload in flight or cut off.
            if running && held.is_none_or(|(_, d)| sha256_hex(d) != sha) {
                return Ok(Err(format!(
                    "its {path} does not match its manifest: an upload in flight, or cut off by its node; \
                     `benchbook sync` on that node sends the rest"
                )));
            }
        }
        let seen = SeenAlive { seen_at: seen_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true), gone };
        let tags = objects.iter().map(|(n, m)| (format!("runs/{id}/{n}"), tag(m))).collect();
        Ok(Ok(Fetched { id: id.to_string(), files, seen, tags }))
    }

    /// Bring the mirror up to date with the bucket.
    pub fn pull(&self, archive: &Archive, scope: Scope) -> Result<PullReport> {
        self.rt.block_on(self.pull_async(archive, scope))
    }

    async fn pull_async(&self, archive: &Archive, scope: Scope) -> Result<PullReport> {
        let state_path = archive.root.join(STATE_FILE);
        let mut state: BTreeMap<String, String> =
            std::fs::read(&state_path).ok().and_then(|d| serde_json::from_slice(&d).ok()).unwrap_or_default();
        let mut report = PullReport::default();
        for (rel, meta) in self.list("specs").await? {
            if state.get(&rel) != Some(&tag(&meta)) {
                if let Some(data) = self.get_opt(&meta.location).await? {
                    let path = archive.root.join(&rel);
                    std::fs::create_dir_all(path.parent().expect("specs/…")).at(&path)?;
                    write_atomic(&path, &data)?;
                    state.insert(rel, tag(&meta));
                }
            }
        }
        if scope == Scope::Everything {
            self.pull_runs(archive, &mut state, &mut report).await?;
        }
        save_state(archive, &state)?;
        Ok(report)
    }

    async fn pull_runs(
        &self,
        archive: &Archive,
        state: &mut BTreeMap<String, String>,
        report: &mut PullReport,
    ) -> Result<()> {
        let mut runs: BTreeMap<String, Vec<(String, ObjectMeta)>> = BTreeMap::new();
        for (rel, meta) in self.list("runs").await? {
            let mut parts = rel.splitn(3, '/').skip(1);
            if let (Some(id), Some(name)) = (parts.next(), parts.next()) {
                if !name.contains('/') && !id.starts_with('.') {
                    runs.entry(id.to_string()).or_default().push((name.to_string(), meta));
                }
            }
        }
        report.runs_in_bucket = runs.len();
        let ours: BTreeSet<String> = outbox(&archive.root).into_iter().collect();
        // Runs not in the mirror, or whose objects changed since it took them.
        let changed: Vec<(&String, &Vec<(String, ObjectMeta)>)> = runs
            .iter()
            .filter(|(id, objects)| {
                let held = archive.run_dir(id).path.is_dir()
                    && objects.iter().all(|(n, m)| state.get(&format!("runs/{id}/{n}")) == Some(&tag(m)));
                !ours.contains(*id) && !held
            })
            .collect();
        // Each run is placed as it arrives (never all held at once), and the
        // state saved now and then, so a pull cut short keeps what it fetched.
        let mut fetched = futures::stream::iter(
            changed.iter().map(|(id, objects)| async move { (id.as_str(), self.fetch_run(id, objects).await) }),
        )
        .buffer_unordered(32);
        while let Some((id, r)) = fetched.next().await {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    save_state(archive, state)?;
                    return Err(e);
                }
            };
            match r {
                Ok(run) => {
                    report.runs_fetched += 1;
                    report.bytes_fetched += run.files.iter().map(|(_, d)| d.len() as u64).sum::<u64>();
                    place(archive, &run)?;
                    state.extend(run.tags);
                    if report.runs_fetched.is_multiple_of(1000) {
                        save_state(archive, state)?;
                    }
                }
                Err(why) => report.incomplete.push(Incomplete {
                    run_id: id.to_string(),
                    why,
                    kept_earlier_copy: archive.run_dir(id).path.is_dir(),
                }),
            }
        }
        // Runs the mirror took from the bucket that the bucket no longer has.
        let pulled: BTreeSet<String> =
            state.keys().filter_map(|k| k.strip_prefix("runs/")?.split('/').next().map(String::from)).collect();
        for id in pulled.iter().filter(|id| !runs.contains_key(*id) && !ours.contains(*id)) {
            let dir = archive.run_dir(id).path;
            if dir.is_dir() {
                std::fs::remove_dir_all(&dir).at(&dir)?;
                report.runs_removed += 1;
            }
            state.retain(|k, _| !k.starts_with(&format!("runs/{id}/")));
        }
        Ok(())
    }
}

/// Record which objects the mirror holds (key → ETag).
fn save_state(archive: &Archive, state: &BTreeMap<String, String>) -> Result<()> {
    let data = serde_json::to_vec(state).expect("a map of strings serializes");
    std::fs::create_dir_all(&archive.root).at(&archive.root)?;
    write_atomic(&archive.root.join(STATE_FILE), &data)
}

/// Write a fetched run beside its place, then rename it in (an earlier
/// copy leaves first).
fn place(archive: &Archive, run: &Fetched) -> Result<()> {
    let runs = archive.runs_dir();
    let tmp = runs.join(format!(".pull-{}-{}", run.id, std::process::id()));
    if tmp.exists() {
        std::fs::remove_dir_all(&tmp).at(&tmp)?;
    }
    std::fs::create_dir_all(&tmp).at(&tmp)?;
    for (name, data) in &run.files {
        write_file(&tmp.join(name), data)?;
    }
    let seen = serde_json::to_vec(&run.seen).expect("serializes");
    write_file(&tmp.join(HEARTBEAT_FILE), &seen)?;
    let target = archive.run_dir(&run.id).path;
    if target.exists() {
        std::fs::remove_dir_all(&target).at(&target)?;
    }
    std::fs::rename(&tmp, &target).map_err(|e| Error::io(&target, e))
}

fn write_file(path: &Path, data: &[u8]) -> Result<()> {
    std::fs::write(path, data).at(path)
}
