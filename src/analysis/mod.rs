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
pub mod findings;
pub mod fleet;
pub mod history;
pub mod pairing;
pub mod partitions;
pub mod reference;
pub mod samples;
pub mod series;
pub mod specs;
/// Statistics live in the vocabulary layer; re-exported for the notebooks.
pub use crate::vocab::stats;
pub mod summary;
pub mod telemetry;
pub mod workload;

pub use catalog::{Catalog, System};
pub use curves::{curves, saturation, Curve, Level, Saturation};
pub use series::{Series, SeriesKey};
pub use specs::{Spec, SpecBook};
pub use summary::{point_stats, run_stats, samples_lazy, PointStat, WideWhy};

/// `f` of each item, on every CPU (the items cut into one slice per CPU),
/// in the items' order: what each thread computes never depends on how
/// many there are.
pub(crate) fn on_every_cpu<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    on_every_cpu_owned(items.iter().collect(), f)
}

/// [`on_every_cpu`] taking the items: each is dropped once `f` has used
/// it, so that what `f` makes from it need not be held beside all of them.
pub(crate) fn on_every_cpu_owned<T: Send, R: Send>(items: Vec<T>, f: impl Fn(T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).min(items.len().max(1));
    let chunk = items.len().div_ceil(threads.max(1)).max(1);
    let mut items = items.into_iter();
    let parts: Vec<Vec<T>> =
        std::iter::from_fn(|| Some(items.by_ref().take(chunk).collect::<Vec<T>>()).filter(|p| !p.is_empty())).collect();
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> =
            parts.into_iter().map(|part| s.spawn(move || part.into_iter().map(f).collect::<Vec<R>>())).collect();
        handles.into_iter().flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))).collect()
    })
}
