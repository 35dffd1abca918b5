//! The progress bar: an indicatif bar on stderr that listens to the
//! library's [`Progress`] events. `--quiet` listens with [`Silent`].

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::print::terminal_safe;
use crate::vocab::progress::{PointEnd, Progress, Silent};

/// A bar counting finished points, the current point as its message.
pub struct Bar {
    pb: ProgressBar,
}

impl Bar {
    /// A bar on stderr (drawn only when stderr is a terminal).
    pub fn new() -> Self {
        let pb = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
        pb.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30.cyan/blue} {pos}/{len} points  {msg}")
                .expect("valid template")
                .progress_chars("=> "),
        );
        Bar { pb }
    }

    /// A bar unless `quiet`.
    pub fn unless(quiet: bool) -> Option<Self> {
        (!quiet).then(Bar::new)
    }

    /// Take the bar off the terminal (before the command's output).
    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

impl Default for Bar {
    fn default() -> Self {
        Bar::new()
    }
}

/// The listener for `bar`: the bar itself, or [`Silent`] when there is none.
pub fn listener(bar: &Option<Bar>) -> &dyn Progress {
    match bar {
        Some(b) => b,
        None => &Silent,
    }
}

impl Progress for Bar {
    fn planned(&self, steps: u64) {
        self.pb.inc_length(steps);
    }

    fn unplanned(&self, steps: u64) {
        let len = self.pb.length().unwrap_or(0);
        self.pb.set_length(len.saturating_sub(steps).max(self.pb.position()));
    }

    fn point_started(&self, label: &str) {
        self.pb.set_message(terminal_safe(label).into_owned());
    }

    // `sample` stays a no-op: redrawing between samples would put terminal
    // writes next to the timed work.

    fn point_finished(&self, label: &str, end: PointEnd<'_>) {
        // Above the bar; like the bar, only on a terminal.
        let line = |what: &str, why: &str| format!("{what} {}: {}", terminal_safe(label), terminal_safe(why));
        match end {
            PointEnd::Measured => {}
            PointEnd::Skipped(why) => self.pb.println(line("skipped", why)),
            PointEnd::Failed(why) => self.pb.println(line("FAILED", why)),
        }
        self.pb.inc(1);
    }

    fn note(&self, text: &str) {
        let text = terminal_safe(text);
        if self.pb.is_hidden() {
            // Not a terminal: a note is not about one point, so it is
            // worth a line in a log as well.
            eprintln!("{text}");
        } else {
            self.pb.println(text);
        }
    }
}
