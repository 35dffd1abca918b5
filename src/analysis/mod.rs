//! Analysis: rows in, statistics out. Per-point summaries are a lazy
//! polars query (group by run and point) that reads only the columns it
//! needs, with each median's 95 % interval ([`crate::vocab::interval`]);
//! curve-level results (plateau,
//! saturation sizes, roofline fractions) are pure functions in [`stats`] on
//! the summarized points. Rates are derived here and only here:
//! `gbps_*` = bytes / median seconds per operation / 10^9. Named metrics
//! (tokens/s, TTFT, loss) are summarized by [`workload`].

pub mod catalog;
pub mod changepoints;
pub mod compare;
pub mod curves;
pub mod environment;
pub mod fleet;
pub mod history;
pub mod partitions;
pub mod reference;
pub mod samples;
pub mod specs;
/// Statistics live in the vocabulary layer; re-exported for the notebooks.
pub use crate::vocab::stats;
pub mod summary;
pub mod telemetry;
pub mod workload;

pub use catalog::{Catalog, System};
pub use curves::{curves, saturation, Curve, Level, Saturation};
pub use specs::{Spec, SpecBook};
pub use summary::{point_stats, run_stats, samples_lazy, PointStat, WideWhy};
