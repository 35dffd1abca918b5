//! Typed errors for the library. Every variant names what the user touched
//! (a file, a flag, a run id) and, where there is one, the fix. `main` wraps
//! these in `anyhow` for printing; the library never does.

use std::path::PathBuf;

/// Everything that can go wrong inside benchbook's library.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    #[error("{path}: not a readable benchbook Parquet file ({message}). If it was damaged, `benchbook verify` on its run says which bytes changed.")]
    Parquet { path: PathBuf, message: String },

    #[error("{path}: schema version {found} is not one this benchbook reads (it reads {supported}). Upgrade benchbook, or re-import the run.")]
    SchemaVersion { path: PathBuf, found: String, supported: String },

    #[error("{path}: manifest version {found} is not one this benchbook reads (it reads {supported}). Upgrade benchbook to read this run.")]
    ManifestVersion { path: PathBuf, found: u64, supported: String },

    #[error("{path}: bundle refused: {message}. Nothing was written.")]
    Bundle { path: PathBuf, message: String },

    #[error("{path}: invalid manifest: {message}")]
    Manifest { path: PathBuf, message: String },

    #[error("no run matches `{query}` in {archive}. {hint}")]
    RunNotFound { query: String, archive: PathBuf, hint: String },

    #[error("`{query}` matches several runs: {candidates}. Give more of the run id.")]
    AmbiguousRun { query: String, candidates: String },

    #[error("{flag}: {message}")]
    Config { flag: String, message: String },

    #[error("{path}:{line}: {message}")]
    Spec { path: PathBuf, line: usize, message: String },

    #[error("template `{name}`: {message}")]
    Template { name: String, message: String },

    #[error("chart `{name}`: {message}")]
    Plot { name: String, message: String },

    #[error("{path}:{line}: {message}")]
    Import { path: PathBuf, line: usize, message: String },

    #[error("{path}: not a format benchbook can import (tried: {tried}). Pass --tool NAME to force one; `benchbook import --help` lists them.")]
    UnknownFormat { path: PathBuf, tried: String },

    #[error("analysis: {0}")]
    Analysis(String),

    #[error("MPI job: {0}")]
    Mpi(String),

    #[error("{path}: its sha256 is {found}, but the run's manifest recorded {expected}: the file changed after benchbook wrote it, so its numbers are not published. `benchbook verify {run}` says which bytes changed; `--no-verify` reads it anyway, for forensics.")]
    Tampered { path: PathBuf, run: String, expected: String, found: String },

    #[error("{path}: its content hashes to {found}, but its manifest_sha256 says {expected}: the manifest was edited after benchbook wrote it, so the run is not trusted. `benchbook verify {run}` reports it; `--no-verify` reads it anyway, for forensics.")]
    ManifestChanged { path: PathBuf, run: String, expected: String, found: String },

    #[error("{what} cancelled by an interrupt; the archive was left as it was")]
    Cancelled { what: String },

    #[error("{file} line {line}, field `{field}`: {message}. The line format is {{\"metric\": \"tokens_per_s\", \"value\": 4242.5, \"unit\": \"tokens/s\", \"params\": {{\"gpus\": 8}}}} (see `benchbook run exec --help`).")]
    Metrics { file: String, line: usize, field: String, message: String },

    #[error("`{command}`: {message} (`--ignore-failure` runs the remaining repetitions anyway){}", if stderr.is_empty() { String::new() } else { format!("; the end of its stderr:\n{stderr}") })]
    CommandFailed { command: String, message: String, stderr: String },

    #[error("{error}\nRun {run} was kept and marked failed, with everything recorded before the error (`benchbook show {run}`).")]
    RunKept { run: String, error: Box<Error> },

    #[error("{url}: {message}. {hint}")]
    Remote { url: String, message: String, hint: String },

    #[error("run {run} cannot be re-run: {why}")]
    NotRerunnable { run: String, why: String },
}

/// Library result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The process exit code for this error: 1 when a run was recorded
    /// and then failed (it is kept), 2 for everything refused up front.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::RunKept { .. } => 1,
            _ => 2,
        }
    }

    /// An I/O error tied to the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }

    /// A bad command-line value: names the flag and what it expects.
    pub fn config(flag: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Config { flag: flag.into(), message: message.into() }
    }

    /// The same config error, attributed to another flag.
    pub fn with_flag(self, flag: &str) -> Self {
        match self {
            Error::Config { message, .. } => Error::Config { flag: flag.into(), message },
            other => other,
        }
    }

    pub(crate) fn analysis(e: impl std::fmt::Display) -> Self {
        Error::Analysis(e.to_string())
    }
}

/// Extension to attach a path to `std::io::Result`s.
pub(crate) trait IoContext<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T>;
}

impl<T> IoContext<T> for std::io::Result<T> {
    fn at(self, path: impl Into<PathBuf>) -> Result<T> {
        self.map_err(|e| Error::io(path, e))
    }
}

/// The message of a caught panic (cudarc panics on a missing symbol).
pub fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}
