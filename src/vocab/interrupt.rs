//! Ctrl-C as every layer sees it: one flag, set by the binary's handler and
//! polled between samples, points or files, and one sentence that tells the
//! user what the interrupt will do in the command now running.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static CANCELS: AtomicBool = AtomicBool::new(false);

/// Ask every running job to stop at its next check.
pub fn request() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Whether an interrupt was requested.
pub fn requested() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Declare what an interrupt does to the run about to be recorded: cancel
/// it (an all-or-nothing import) or stop it after the current sample.
pub fn set_cancels(cancels: bool) {
    CANCELS.store(cancels, Ordering::SeqCst);
}

/// The line the binary prints on the first Ctrl-C.
pub fn message() -> &'static str {
    if CANCELS.load(Ordering::SeqCst) {
        "interrupt: cancelling; nothing of this job is written to the archive (press Ctrl-C again to quit now)"
    } else {
        "interrupt: stopping after the current sample; finished points are already saved (press Ctrl-C again to quit now)"
    }
}
