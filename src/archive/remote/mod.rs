//! Archives in S3-compatible object storage: `--archive s3://BUCKET/PREFIX`.
//!
//! The bucket holds the archive's own layout, one object per file:
//! `PREFIX/runs/<run-id>/results.parquet`, `…/manifest.json` (and any
//! other file of the run), `PREFIX/specs/…`, plus two kinds of object the
//! local archive has no need for:
//! - `PREFIX/runs/<run-id>/heartbeat.json`, rewritten by the node while its
//!   run is live, so that readers on other nodes (which cannot check a pid)
//!   can tell a run still going from one whose node died;
//! - `PREFIX/catalog.parquet`, the compacted index of every run, written by
//!   `benchbook sync`. It is never the truth: every reader rebuilds it from
//!   the manifests, and other tools (duckdb, polars) can read it in place.
//!
//! No lock is held over the network. Each run is its own set of keys, and
//! run ids are unique, so two nodes never write the same object; a retried
//! upload rewrites the same bytes under the same key.
//!
//! A run's files are uploaded before its manifest, so a manifest in the
//! bucket was written after the files it hashes. While a run is live its
//! results and manifest are re-uploaded together at its flush points; a
//! reader that finds them out of step (an upload in flight, or cut off by a
//! killed node) keeps the last whole copy it had, or reports the run as
//! incomplete: it never reads a half-uploaded run as whole.
//!
//! Readers work from a local mirror of the bucket ([`Bucket::cache`]):
//! [`Bucket::pull`] lists the bucket, fetches only the runs whose objects
//! changed since the last pull (by ETag), checks each file against the
//! sha256 its manifest recorded, and only then places it in the mirror, an
//! ordinary archive that every command reads as it reads a local one.
//! Sealed runs never change, so after the first pull a reader fetches only
//! what is new. Runs made on this node wait in the mirror's outbox
//! (`.outbox/<run-id>`) until [`Bucket::push_outbox`] has sent them whole.

mod profile;
mod pull;
mod push;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as Key;
use object_store::{ClientOptions, ObjectStore, ObjectStoreExt, PutPayload, RetryConfig};

use crate::error::{Error, Result};

pub use pull::{stale_after_minutes, Incomplete, PullReport, Scope, SeenAlive};
pub use push::{PushReport, Uploader};

/// The mirror's folder of runs made here and not yet sent whole.
pub const OUTBOX_DIR: &str = ".outbox";
/// A live run's heartbeat: in the bucket, the node's; in the mirror, what
/// the last pull saw of it.
pub const HEARTBEAT_FILE: &str = "heartbeat.json";
/// The compacted index of the bucket's runs.
pub const CATALOG_OBJECT: &str = "catalog.parquet";

/// Whether an `--archive` value names a bucket.
pub fn is_bucket(archive: &str) -> bool {
    archive.starts_with("s3://")
}

/// An archive in an S3-compatible bucket, with its local mirror.
pub struct Bucket {
    /// `s3://BUCKET/PREFIX`, as given.
    pub url: String,
    prefix: String,
    store: Arc<dyn ObjectStore>,
    rt: tokio::runtime::Runtime,
    /// The local mirror: an ordinary archive root.
    pub cache: PathBuf,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bucket").field("url", &self.url).field("cache", &self.cache).finish()
    }
}

impl Bucket {
    /// Open `s3://BUCKET/PREFIX` with credentials and endpoint taken as
    /// AWS tools take them: `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`
    /// (and `AWS_SESSION_TOKEN`), `AWS_REGION`, `AWS_ENDPOINT_URL` for a
    /// self-hosted store, else the profile `AWS_PROFILE` (default
    /// `default`) of `~/.aws/credentials` and `~/.aws/config`. The mirror is
    /// `BENCHBOOK_CACHE`, else `$XDG_CACHE_HOME/benchbook` or
    /// `~/.cache/benchbook`, under `s3/BUCKET/PREFIX`.
    pub fn open(url: &str) -> Result<Bucket> {
        let bad = |message: &str| Error::Remote {
            url: url.to_string(),
            message: message.to_string(),
            hint: "Write the archive as s3://BUCKET or s3://BUCKET/PREFIX.".into(),
        };
        let rest = url.strip_prefix("s3://").ok_or_else(|| bad("not an s3:// address"))?;
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let prefix = prefix.trim_matches('/').to_string();
        let valid = |s: &str| s.chars().all(|c| c.is_ascii_alphanumeric() || "-._".contains(c));
        if bucket.is_empty() || !valid(bucket) {
            return Err(bad("the bucket name is empty or has characters S3 does not allow"));
        }
        if prefix.split('/').any(|p| p.is_empty() || p == "." || p == ".." || !valid(p)) && !prefix.is_empty() {
            return Err(bad("the prefix must be folder names of letters, digits, '-', '_' and '.'"));
        }
        let mut builder = AmazonS3Builder::from_env().with_bucket_name(bucket);
        let profile = profile::Profile::load();
        for (key, value) in profile.settings() {
            builder = builder.with_config(key, value);
        }
        let endpoint = std::env::var("AWS_ENDPOINT_URL_S3")
            .or_else(|_| std::env::var("AWS_ENDPOINT_URL"))
            .ok()
            .or(profile.endpoint_url.clone());
        if let Some(e) = &endpoint {
            builder = builder.with_endpoint(e).with_allow_http(e.starts_with("http://"));
        }
        builder = builder
            .with_retry(RetryConfig { max_retries: 10, retry_timeout: Duration::from_secs(120), ..Default::default() })
            .with_client_options(
                ClientOptions::new()
                    .with_timeout(Duration::from_secs(60))
                    .with_connect_timeout(Duration::from_secs(5))
                    .with_allow_http(endpoint.as_deref().is_some_and(|e| e.starts_with("http://"))),
            );
        let store = builder.build().map_err(|e| Error::Remote {
            url: url.to_string(),
            message: e.to_string(),
            hint: "Set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE), and AWS_ENDPOINT_URL for a self-hosted store.".into(),
        })?;
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Error::io("tokio runtime", e))?;
        let cache = cache_root().join("s3").join(bucket).join(&prefix);
        Ok(Bucket { url: url.to_string(), prefix, store: Arc::new(store), rt, cache })
    }

    /// The mirror as an archive, with its outbox (so runs made in it are
    /// queued for upload).
    pub fn archive(&self) -> Result<super::Archive> {
        let outbox = self.cache.join(OUTBOX_DIR);
        std::fs::create_dir_all(&outbox).map_err(|e| Error::io(&outbox, e))?;
        Ok(super::Archive::new(&self.cache))
    }

    /// The object key of `rel` (a path inside the archive).
    fn key(&self, rel: &str) -> Key {
        if self.prefix.is_empty() {
            Key::from(rel)
        } else {
            Key::from(format!("{}/{rel}", self.prefix))
        }
    }

    /// `key` as a path inside the archive (None: outside the prefix).
    fn rel<'a>(&self, key: &'a Key) -> Option<&'a str> {
        let k = key.as_ref();
        if self.prefix.is_empty() {
            Some(k)
        } else {
            k.strip_prefix(self.prefix.as_str())?.strip_prefix('/')
        }
    }

    /// The bytes of object `key`, or None if there is none.
    async fn get_opt(&self, key: &Key) -> Result<Option<Vec<u8>>> {
        match self.store.get(key).await {
            Ok(r) => r.bytes().await.map(|b| Some(b.to_vec())).map_err(|e| self.err(key.as_ref(), e)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.err(key.as_ref(), e)),
        }
    }

    async fn put(&self, key: &Key, data: Vec<u8>) -> Result<()> {
        self.store.put(key, PutPayload::from(data)).await.map(|_| ()).map_err(|e| self.err(key.as_ref(), e))
    }

    /// An object-store error as the library's, naming the object.
    fn err(&self, what: &str, e: object_store::Error) -> Error {
        Error::Remote {
            url: format!("{}/{what}", self.url.trim_end_matches('/')),
            message: e.to_string(),
            hint: "Check AWS_ENDPOINT_URL and the credentials; runs made here stay in the local mirror and `benchbook sync` sends them later.".into(),
        }
    }
}

/// Where mirrors live: `BENCHBOOK_CACHE`, `$XDG_CACHE_HOME/benchbook`, or
/// `~/.cache/benchbook`.
pub fn cache_root() -> PathBuf {
    if let Some(dir) = std::env::var_os("BENCHBOOK_CACHE") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Path::new(&dir).join("benchbook");
    }
    std::env::var_os("HOME")
        .map_or_else(|| PathBuf::from(".benchbook-cache"), |h| Path::new(&h).join(".cache/benchbook"))
}

/// The ids in an archive's outbox (none when it is not a bucket's mirror).
pub fn outbox(archive_root: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(archive_root.join(OUTBOX_DIR)) else { return Vec::new() };
    let mut ids: Vec<String> =
        entries.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    ids.sort();
    ids
}

/// Queue run `id` for upload, when `archive_root` is a bucket's mirror.
pub fn enqueue(archive_root: &Path, id: &str) -> Result<()> {
    let dir = archive_root.join(OUTBOX_DIR);
    if dir.is_dir() {
        let path = dir.join(id);
        std::fs::write(&path, b"").map_err(|e| Error::io(path, e))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_checked_before_anything_is_sent() {
        for bad in ["s3://", "s3://bucket/../x", "s3://bu cket", "s3://b/a//c", "file:///x"] {
            let err = Bucket::open(bad).unwrap_err().to_string();
            assert!(err.contains(bad) && err.contains("s3://BUCKET"), "{bad}: {err}");
        }
        let b = Bucket::open("s3://bench-results/fleet/h100").expect("a valid address opens without a network call");
        assert_eq!(b.key("runs/x/manifest.json").as_ref(), "fleet/h100/runs/x/manifest.json");
        assert_eq!(b.rel(&Key::from("fleet/h100/runs/x/manifest.json")), Some("runs/x/manifest.json"));
        assert_eq!(b.rel(&Key::from("fleet/h1000/runs/x")), None);
        assert!(b.cache.ends_with("s3/bench-results/fleet/h100"), "{}", b.cache.display());
        let root = Bucket::open("s3://bench-results").unwrap();
        assert_eq!(root.key("specs/a.toml").as_ref(), "specs/a.toml");
    }
}
