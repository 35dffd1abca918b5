//! Archives in a bucket, for every command: `--archive s3://BUCKET/PREFIX`
//! brings the bucket's runs into the local mirror before a command reads
//! them, sends this node's runs when it ends (a live run's flush points on
//! the way), and `benchbook sync` does both on demand.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use crate::archive::remote::{Bucket, PullReport, PushReport, Scope, Uploader};
use crate::archive::Archive;
use crate::cli::print::{cell as safe_text, safe_path, Render, Term};
use crate::error::Result;

/// `benchbook sync`'s flags.
#[derive(Debug, clap::Args)]
pub struct SyncArgs {
    /// Also send every run of this local archive (moving a shared-directory
    /// archive into the bucket); runs already whole there are skipped.
    #[arg(long, value_name = "DIR")]
    pub upload_from: Option<PathBuf>,
    /// Print JSON: what was sent and fetched.
    #[arg(long)]
    pub json: bool,
}

/// Seconds between a live run's uploads and heartbeats
/// (`BENCHBOOK_UPLOAD_SECONDS`, default 10).
fn upload_every() -> Duration {
    let s = std::env::var("BENCHBOOK_UPLOAD_SECONDS").ok().and_then(|v| v.parse::<f64>().ok());
    Duration::from_secs_f64(s.filter(|s| *s > 0.0).unwrap_or(10.0))
}

/// The archive a command works on: a folder as it is, or a bucket's mirror
/// brought up to date.
pub struct Opened {
    pub archive: Archive,
    bucket: Option<Arc<Bucket>>,
    uploader: Option<Uploader>,
}

/// What a command needs of a bucket: what it reads, and whether it makes
/// runs (then a live run is sent at its flush points).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    pub reads: Scope,
    pub makes_runs: bool,
}

impl Need {
    /// It reads runs: the whole bucket.
    pub const RUNS: Need = Need { reads: Scope::Everything, makes_runs: false };
    /// It makes a run from the specs alone.
    pub const MAKES_RUN: Need = Need { reads: Scope::Specs, makes_runs: true };
    /// It makes runs and reads them (`fleet gate`, `rerun`).
    pub const BOTH: Need = Need { reads: Scope::Everything, makes_runs: true };
    /// It reads only the specs (`fleet health`).
    pub const SPECS: Need = Need { reads: Scope::Specs, makes_runs: false };
}

/// Open `--archive`: a folder, or `s3://…` through its mirror.
pub fn open(location: &Path, need: Need, quiet: bool) -> Result<Opened> {
    let text = location.to_string_lossy();
    if !crate::archive::remote::is_bucket(&text) {
        return Ok(Opened { archive: Archive::new(location), bucket: None, uploader: None });
    }
    let bucket = Arc::new(Bucket::open(&text)?);
    let archive = bucket.archive()?;
    match bucket.pull(&archive, need.reads) {
        Ok(pulled) => tell_pulled(&bucket, &pulled, quiet),
        // A command that reads no runs goes on with the specs the mirror has;
        // a run it makes waits in the outbox.
        Err(e) if need.reads == Scope::Specs => eprintln!(
            "warning: {e}\nGoing on with the specs in {}; a run made now is kept there and sent by the next command given the bucket, or `benchbook sync`.",
            safe_path(&bucket.cache)
        ),
        Err(e) => return Err(e),
    }
    let uploader = need.makes_runs.then(|| bucket.start_uploader(archive.clone(), upload_every()));
    Ok(Opened { archive, bucket: Some(bucket), uploader })
}

fn tell_pulled(bucket: &Bucket, p: &PullReport, quiet: bool) {
    if !quiet && p.runs_fetched > 0 {
        eprintln!(
            "{}: {} runs, {} fetched ({:.1} MiB) into {}",
            safe_text(&bucket.url),
            p.runs_in_bucket,
            p.runs_fetched,
            p.bytes_fetched as f64 / 1048576.0,
            safe_path(&bucket.cache)
        );
    }
    for i in &p.incomplete {
        let kept = if i.kept_earlier_copy { "; the earlier whole copy is read" } else { "; it is left out" };
        eprintln!("warning: run {} in {} is not whole: {}{kept}", safe_text(&i.run_id), safe_text(&bucket.url), i.why);
    }
}

impl Opened {
    /// Send what this command made. A failure leaves the runs in the
    /// mirror's outbox, for the next command or `benchbook sync`.
    pub fn finish(mut self, quiet: bool) -> Option<PushReport> {
        drop(self.uploader.take());
        let bucket = self.bucket.as_ref()?;
        match bucket.push_outbox(&self.archive) {
            Ok(report) => {
                for (id, why) in &report.left {
                    eprintln!(
                        "warning: run {} not sent to {}: {why}; `benchbook sync` sends it",
                        safe_text(id),
                        bucket.url
                    );
                }
                if !quiet && !report.runs_sent.is_empty() {
                    eprintln!("sent {} to {}", report.runs_sent.join(", "), safe_text(&bucket.url));
                }
                Some(report)
            }
            Err(e) => {
                eprintln!("warning: {e}");
                None
            }
        }
    }
}

/// What `benchbook sync` did.
#[derive(Debug, Serialize)]
pub struct SyncOutput {
    pub bucket: String,
    pub mirror: PathBuf,
    pub uploaded_from: Option<PushReport>,
    pub sent: PushReport,
    pub fetched: PullReport,
}

/// Send this node's runs (and, with `--upload-from`, a local archive's),
/// bring the mirror up to date, and rewrite the bucket's catalog.
pub fn sync(location: &Path, args: &SyncArgs) -> Result<SyncOutput> {
    let text = location.to_string_lossy();
    if !crate::archive::remote::is_bucket(&text) {
        return Err(crate::error::Error::config(
            "--archive",
            format!("`{text}` is a folder; `benchbook sync` works on a bucket (--archive s3://BUCKET/PREFIX)"),
        ));
    }
    let bucket = Bucket::open(&text)?;
    let archive = bucket.archive()?;
    let uploaded_from = match &args.upload_from {
        Some(dir) => Some(bucket.push_all(&Archive::new(dir))?),
        None => None,
    };
    let sent = bucket.push_outbox(&archive)?;
    let fetched = bucket.pull(&archive, Scope::Everything)?;
    tell_pulled(&bucket, &fetched, true);
    bucket.push_catalog(&archive)?;
    Ok(SyncOutput { bucket: bucket.url.clone(), mirror: bucket.cache.clone(), uploaded_from, sent, fetched })
}

impl Render for SyncOutput {
    fn render(&self, t: &mut Term<'_>) -> io::Result<()> {
        let b = safe_text(&self.bucket);
        if let Some(u) = &self.uploaded_from {
            writeln!(t.out, "uploaded: {} runs sent, {} already in {b}", u.runs_sent.len(), u.runs_unchanged)?;
            for (id, why) in &u.left {
                writeln!(t.out, "  not sent: {}: {}", safe_text(id), safe_text(why))?;
            }
        }
        writeln!(
            t.out,
            "sent: {} runs ({} objects, {:.1} MiB); {} already whole in {b}",
            self.sent.runs_sent.len(),
            self.sent.objects_sent,
            self.sent.bytes_sent as f64 / 1048576.0,
            self.sent.runs_unchanged
        )?;
        for id in &self.sent.still_running {
            writeln!(t.out, "  kept in the outbox: {}: still running", safe_text(id))?;
        }
        for (id, why) in &self.sent.left {
            writeln!(t.out, "  kept in the outbox: {}: {}", safe_text(id), safe_text(why))?;
        }
        let f = &self.fetched;
        writeln!(
            t.out,
            "fetched: {} of {} runs ({:.1} MiB); {} removed (gone from the bucket)",
            f.runs_fetched,
            f.runs_in_bucket,
            f.bytes_fetched as f64 / 1048576.0,
            f.runs_removed
        )?;
        for i in &f.incomplete {
            writeln!(t.out, "  not whole: {}: {}", safe_text(&i.run_id), safe_text(&i.why))?;
        }
        writeln!(t.out, "mirror: {}; the bucket's catalog.parquet rewritten", safe_path(&self.mirror))
    }
}
