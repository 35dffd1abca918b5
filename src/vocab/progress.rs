//! Progress as events. The library reports what happens to each point; who
//! listens decides how it looks: the CLI draws a bar (indicatif), `--quiet`
//! and the notebooks listen to nothing ([`Silent`]), tests may record.

/// What became of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointEnd<'a> {
    Measured,
    Skipped(&'a str),
    Failed(&'a str),
}

/// Listener for a run's events. Every method has a no-op default.
pub trait Progress {
    /// `steps` more steps are planned (a step: one point in one round).
    fn planned(&self, _steps: u64) {}
    /// `steps` planned earlier will not run (a point met its interval
    /// target, or spent its time, before its last round).
    fn unplanned(&self, _steps: u64) {}
    /// A point starts; `label` is e.g. `memcpy copy 64 MiB 2T`.
    fn point_started(&self, _label: &str) {}
    /// A point ended.
    fn point_finished(&self, _label: &str, _end: PointEnd<'_>) {}
    /// A line for the user that is not about one point.
    fn note(&self, _text: &str) {}
}

/// Listens to nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Silent;

impl Progress for Silent {}
