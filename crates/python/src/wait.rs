//! Work off the interpreter's lock, stoppable by Ctrl-C.
//!
//! The work runs on a thread of its own while the calling thread, without
//! the interpreter's lock, waits for it a tenth of a second at a time and
//! in between lets Python run its signal handlers. When one raises
//! (Ctrl-C's `KeyboardInterrupt`), the work is asked to stop
//! (`perfq_stream::interrupt`), and the call returns once it has: what it
//! was writing is removed by then, as after any other error.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;

/// How often Python's signal handlers run while work goes on.
const TICK: Duration = Duration::from_millis(100);

/// The stack of the work's thread: the command line's main thread has 8 MiB,
/// and some plans and call trees recurse deeply.
const STACK: usize = 16 << 20;

/// Runs `work` on a thread of its own and returns its result; raises
/// what a signal handler raised, after the work has stopped.
pub fn off_the_lock<T: Send + 'static>(
    py: Python<'_>,
    work: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::channel();
    let worker = std::thread::Builder::new()
        .name("perfq".into())
        .stack_size(STACK)
        .spawn(move || {
            // The receiver is gone only if the caller went first: then
            // nobody wants the result.
            let _ = tx.send(work());
        })?;
    // (Behind a lock: the wait runs where Python's lock is not held, which
    // takes what it borrows to be shareable.)
    let rx = Mutex::new(rx);
    let next = || {
        rx.lock()
            .unwrap_or_else(|e| e.into_inner())
            .recv_timeout(TICK)
    };
    loop {
        match py.detach(next) {
            Ok(answer) => {
                let _ = worker.join();
                return Ok(answer);
            }
            Err(RecvTimeoutError::Timeout) => {
                if let Err(raised) = py.check_signals() {
                    stop(py, worker);
                    return Err(raised);
                }
            }
            Err(RecvTimeoutError::Disconnected) => {
                // The thread ended without sending: it panicked past every
                // guard.
                let _ = worker.join();
                return Err(crate::InternalError::new_err(
                    "internal error (please report): the work's thread ended without an answer",
                ));
            }
        }
    }
}

/// Asks the work to stop and waits until it has.
fn stop(py: Python<'_>, worker: std::thread::JoinHandle<()>) {
    perfq::interrupt::request();
    py.detach(|| {
        let _ = worker.join();
    });
    perfq::interrupt::clear();
}
