//! # benchbook
//!
//! Reproducible GPU/HPC benchmarks as one workflow, and one library that the
//! CLI, the tests and the notebooks share:
//!
//! **bench → rows → archive → analysis → plot + report**
//!
//! - [`bench`]: axes → points, the sampler (warm-up, noise-based stopping),
//!   CPU benchmarks (`memcpy`, `stream`, `gemm`); [`backend`]: where they run.
//! - [`rows`]: the long-format row every stage shares.
//! - [`archive`]: runs on disk: versioned Parquet rows + `manifest.json`,
//!   written atomically after every point; `verify`.
//! - [`analysis`]: polars summaries, saturation, rooflines ([`analysis::specs`]).
//! - [`plot`]: plotters charts with an embedded font; [`report`]: tera
//!   Markdown → self-contained HTML.
//! - [`render`]: tera pages, Markdown safety and HTML; [`site`]: a static site over a whole archive, its pages and the reports.
//!
//! ```no_run
//! use benchbook::prelude::*;
//! let archive = Archive::new("data");
//! let run = archive.resolve("latest")?;
//! let stats = point_stats(run.dataframe()?.lazy())?;
//! println!("{} points", stats.len());
//! # Ok::<(), benchbook::Error>(())
//! ```

pub mod analysis;
pub mod archive;
pub mod backend;
pub mod bench;
pub mod cli;
pub mod error;
pub mod gate;
pub mod host;
pub mod import;
pub mod notebook;
pub mod plot;
pub mod render;
pub mod report;
pub mod session;
pub mod site;
pub mod vocab;
/// The row and unit vocabulary, also at the crate root for notebooks and scripts.
pub use vocab::{rows, units};

pub use error::{Error, Result};
/// The polars benchbook is built with, for notebooks and scripts (one copy, one version).
pub use polars;

/// The names a notebook or script usually needs.
pub mod prelude {
    pub use crate::analysis::series::series_of;
    pub use crate::analysis::{point_stats, run_stats, samples_lazy, PointStat, Saturation, Series, SpecBook};
    pub use crate::archive::{verify_run, Archive, Manifest, RunDir, RunStatus};
    pub use crate::bench::{BenchConfig, Preset, StopRule};
    pub use crate::report::{Format, ReportOptions};
    pub use crate::session::{run, RunResult};
    pub use crate::vocab::benches::Bench;
    pub use crate::vocab::kinds::{BackendKind, CacheMode, CopyMethod, Dtype};
    pub use crate::vocab::rows::{Point, Row, Status};
    pub use polars::prelude::IntoLazy;
}
