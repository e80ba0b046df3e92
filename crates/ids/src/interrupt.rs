//! A request to stop, for a process that must not simply exit on Ctrl-C.
//!
//! The `perfq` binary exits on Ctrl-C (its handler removes what it was
//! writing first). A host that lives on, the Python module, asks the work
//! to stop instead: it [`request`]s it, the long loops (the read of a
//! capture, a query's execution) see [`requested`] within a fraction of a
//! second and end with [`Interrupted`], and what they were writing is
//! removed as on any other error. The request is the process's, as
//! Ctrl-C is: every read and query running stops.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Asks every read and query of the process to stop.
pub fn request() {
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Withdraws the request, once the work it stopped has ended.
pub fn clear() {
    REQUESTED.store(false, Ordering::SeqCst);
}

/// Whether the work should stop now.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// Work stopped because it was asked to ([`request`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interrupted;

impl std::fmt::Display for Interrupted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("interrupted")
    }
}

impl std::error::Error for Interrupted {}

/// `Err(Interrupted)` once a stop is requested.
pub fn check() -> Result<(), Interrupted> {
    if requested() {
        Err(Interrupted)
    } else {
        Ok(())
    }
}
