//! The vocabulary layer, at the bottom of the flow
//! bench → rows → archive → analysis → plot/report. Every other module uses
//! it; it uses nothing above it (only [`crate::error`]).
//!
//! - [`rows`]: the row, the point, the sink rows go to, run counts;
//! - [`columns`]: the one table of columns (Parquet schema, both
//!   conversions, the per-point parameter list, the point key);
//! - [`units`]: sizes, rates and their formatting;
//! - [`accounting`]: byte and FLOP counting (bus factors, STREAM weights);
//! - [`kinds`]: the closed vocabularies as enums (backend, dtype, copy
//!   method, cache mode, stop reason);
//! - [`metrics`]: named metrics (tokens/s, TTFT, loss), their direction
//!   and parameters, and the `run exec` JSON-lines protocol;
//! - [`facts`]: typed manifest facts (probes, GPU facts, the stopping rule);
//! - [`stats`]: statistics as pure functions on slices;
//! - [`progress`]: progress as events;
//! - [`source`]: where a run's rows come from (the session drives it).

pub mod accounting;
pub mod columns;
pub mod facts;
pub mod interrupt;
pub mod interval;
pub mod kinds;
pub mod launch;
pub mod metrics;
pub mod one_sided;
pub mod progress;
pub mod rows;
pub mod source;
pub mod stats;
pub mod units;
