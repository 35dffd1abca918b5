//! The archive: a directory (`data/` by default) holding `runs/<run-id>/`
//! with `results.parquet` (the rows, see [`schema`]) and `manifest.json`
//! (see [`manifest`]), plus `specs/` (hardware rooflines). Writing is
//! atomic per file and repeated after every point; reading checks versions.

pub mod bundle;
pub mod catalog;
pub mod liveness;
pub mod manifest;
pub mod remote;
pub mod scan;
pub mod schema;
pub mod store;
pub mod synthetic;
pub mod verify;
pub mod writer;

pub use catalog::Catalog;
pub use manifest::{Manifest, RunStatus};
pub use scan::{Scan, ScanFilter};
pub use store::{Archive, RunDir, Seal, MANIFEST_FILE, RESULTS_FILE};
pub use verify::{verify_run, Finding, RunCheck};
pub use writer::RunWriter;
