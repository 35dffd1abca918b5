//! Ctrl-C as every layer sees it: one flag, set by the binary's handler and
//! polled between samples, points or files, and one sentence that tells the
//! user what the interrupt will do in the command now running.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static MEANING: AtomicUsize = AtomicUsize::new(0);

/// What a first Ctrl-C does in the running command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Meaning {
    /// A measurement: finish the current sample, keep finished points.
    StopAfterSample,
    /// An all-or-nothing job (an import): cancel, leave the archive as it was.
    Cancel,
}

/// Ask every running job to stop at its next check.
pub fn request() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether an interrupt was requested.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Declare what an interrupt does in the command about to run.
pub fn set_meaning(m: Meaning) {
    MEANING.store(m as usize, Ordering::SeqCst);
}

/// The line the binary prints on the first Ctrl-C.
pub fn message() -> &'static str {
    if MEANING.load(Ordering::SeqCst) == Meaning::Cancel as usize {
        "interrupt: cancelling; nothing of this job is written to the archive (press Ctrl-C again to quit now)"
    } else {
        "interrupt: stopping after the current sample; finished points are already saved (press Ctrl-C again to quit now)"
    }
}
