//! Progress bars on stderr, drawn only when it is a terminal (indicatif
//! hides them otherwise), so that a command is quiet in a pipe or a log.

use std::sync::Mutex;

use perfq_writer::batch::{self, Outcome as Capture, Status};
use rustc_hash::FxHashMap;

/// The overall progress bar: bytes of the captures found so far, read by
/// their conversions; drawn only when stderr is a terminal.
pub struct Bar {
    bar: indicatif::ProgressBar,
    state: Mutex<BarState>,
}

#[derive(Default)]
struct BarState {
    /// Bytes read so far of each capture being converted.
    reading: FxHashMap<usize, u64>,
    found: usize,
    done: usize,
}

impl Bar {
    pub fn new() -> Bar {
        let bar = indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        Bar {
            bar,
            state: Mutex::new(BarState::default()),
        }
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    fn message(&self, s: &BarState) {
        self.bar
            .set_message(format!("{}/{} captures", s.done, s.found));
    }
}

impl batch::Observer for Bar {
    fn found(&self, _index: usize, _input: &str, bytes: u64) {
        self.bar.inc_length(bytes);
        if let Ok(mut s) = self.state.lock() {
            s.found += 1;
            self.message(&s);
        }
    }

    fn progress(&self, index: usize, done: u64, _total: u64) {
        if let Ok(mut s) = self.state.lock() {
            let before = s.reading.insert(index, done).unwrap_or(0);
            self.bar.inc(done.saturating_sub(before));
        }
    }

    fn finished(&self, o: &Capture) {
        if let Ok(mut s) = self.state.lock() {
            let read = s.reading.remove(&o.index).unwrap_or(0);
            self.bar.inc(o.bytes.saturating_sub(read));
            s.done += 1;
            self.message(&s);
        }
        if o.is_failure() {
            if let Status::Failed(e) = &o.status {
                self.bar.println(format!("perfq: {}: {e}", o.input));
            }
        }
    }
}

/// The bar of one capture read from start to end (`perfq report`, `perfq
/// dump`): bytes of its data section read.
pub struct ReadBar {
    bar: indicatif::ProgressBar,
}

impl ReadBar {
    /// A bar labelled `what` (the file's name, say).
    pub fn new(what: &str) -> ReadBar {
        let bar = indicatif::ProgressBar::new(0).with_style(
            indicatif::ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} {eta}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        bar.set_message(what.to_string());
        ReadBar { bar }
    }

    /// A bar that never draws (output goes to the terminal itself).
    pub fn hidden() -> ReadBar {
        ReadBar {
            bar: indicatif::ProgressBar::hidden(),
        }
    }

    /// `done` of `total` bytes read.
    pub fn update(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done.min(total));
    }

    /// Says what is being done after the reading (symbolizing, say).
    pub fn stage(&self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// Clears the bar.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

/// A spinner with the time spent, for work whose progress cannot be
/// measured (a query running), cleared when dropped; drawn only on a
/// terminal. Drop it before printing anything else to stderr.
pub struct Spinner(indicatif::ProgressBar);

impl Spinner {
    pub fn start(what: &str) -> Spinner {
        let bar = indicatif::ProgressBar::new_spinner().with_style(
            indicatif::ProgressStyle::with_template("{spinner} {msg} {elapsed}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.set_message(what.to_string());
        bar.enable_steady_tick(std::time::Duration::from_millis(250));
        Spinner(bar)
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}
