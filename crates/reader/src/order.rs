//! Delivering records in time order, as perf's `ordered_events` does.
//!
//! The kernel writes one ring buffer per CPU and perf copies them out in
//! turn, so the file is only ordered within a round: `FINISHED_ROUND` says
//! that everything before the previous round mark is older than anything
//! after this one. At each round mark, records up to the largest time seen
//! before the previous mark are released, sorted by (time, file order).
//! Records without a time are delivered as they are read, as perf does.

use std::collections::VecDeque;

use crate::error::{Error, FileOffset, Result, Warning};
use crate::events::EventRef;
use crate::framing::{FileRecords, RawRecord, Stats};
use crate::record_type::RecordType;

/// Records held at most before the oldest half is released regardless
/// (files without round marks: old perf, simpleperf), as perf's
/// `OE_FLUSH__HALF` does when its queue is full.
const MAX_QUEUED: usize = 1 << 20;

#[derive(Debug)]
enum Bytes {
    /// Ranges in the file.
    File {
        body: (usize, usize),
        payload: (usize, usize),
    },
    /// A copy (records that came out of decompression).
    Owned(Vec<u8>),
}

#[derive(Debug)]
struct Entry {
    time: u64,
    seq: u64,
    kind: RecordType,
    misc: u16,
    offset: FileOffset,
    compressed: bool,
    event: EventRef,
    has_time: bool,
    bytes: Bytes,
}

/// Records in time order. A lending iterator like [`FileRecords`].
pub struct TimeOrdered<'f> {
    inner: FileRecords<'f>,
    queue: Vec<Entry>,
    ready: VecDeque<Entry>,
    current: Option<Entry>,
    spare: Vec<Vec<u8>>,
    next_flush: u64,
    max_time: u64,
    seq: u64,
    inner_done: bool,
    pending_error: Option<Error>,
    out_of_order: u64,
    last_emitted: u64,
    /// Calls of [`TimeOrdered::progress`] so far.
    progress_calls: u64,
}

/// [`TimeOrdered::progress`] answers once in this many calls.
const PROGRESS_EVERY: u64 = 1 << 16;

impl<'f> TimeOrdered<'f> {
    pub(crate) fn new(inner: FileRecords<'f>) -> Self {
        TimeOrdered {
            inner,
            queue: Vec::new(),
            ready: VecDeque::new(),
            current: None,
            spare: Vec::new(),
            next_flush: 0,
            max_time: 0,
            seq: 0,
            inner_done: false,
            pending_error: None,
            out_of_order: 0,
            last_emitted: 0,
            progress_calls: 0,
        }
    }

    /// Counts so far (of records read, which may be ahead of those delivered).
    pub fn stats(&self) -> &Stats {
        self.inner.stats()
    }

    /// For a progress display, called once per record taken: every 65,536
    /// calls the bytes of the data section read so far, else `None` (a
    /// reader that reports on every record would spend its time on it).
    pub fn progress(&mut self) -> Option<u64> {
        self.progress_calls += 1;
        self.progress_calls
            .is_multiple_of(PROGRESS_EVERY)
            .then(|| self.stats().data_bytes)
    }

    /// Problems met so far that did not stop reading.
    pub fn warnings(&self) -> Vec<Warning> {
        let mut w = self.inner.warnings().to_vec();
        if self.out_of_order > 0 {
            w.push(Warning::general(format!(
                "{} records arrived after their round was delivered and are out of time order",
                self.out_of_order
            )));
        }
        w
    }

    /// The next record; at the end, or at an error (stored in `error`, for
    /// the caller to report after it has used what came before), `None`.
    pub fn next_ok(&mut self, error: &mut Option<Error>) -> Option<RawRecord<'_>> {
        match self.next_record() {
            Ok(r) => r,
            Err(e) => {
                *error = Some(e);
                None
            }
        }
    }

    /// The next record in time order.
    pub fn next_record(&mut self) -> Result<Option<RawRecord<'_>>> {
        if let Some(Entry {
            bytes: Bytes::Owned(v),
            ..
        }) = self.current.take()
        {
            self.spare.push(v);
        }
        loop {
            if let Some(e) = self.ready.pop_front() {
                if e.has_time {
                    if e.time < self.last_emitted {
                        self.out_of_order += 1;
                    }
                    self.last_emitted = e.time;
                }
                self.current = Some(e);
                break;
            }
            if self.inner_done {
                return match self.pending_error.take() {
                    Some(e) => Err(e),
                    None => Ok(None),
                };
            }
            self.pull();
        }
        let file = self.inner.file();
        let Some(e) = self.current.as_ref() else {
            return Ok(None);
        };
        let (body, payload): (&[u8], &[u8]) = match &e.bytes {
            Bytes::File { body, payload } => (&file[body.0..body.1], &file[payload.0..payload.1]),
            Bytes::Owned(v) => (&v[..], &[][..]),
        };
        Ok(Some(RawRecord {
            kind: e.kind,
            misc: e.misc,
            offset: e.offset,
            compressed: e.compressed,
            body,
            payload,
            event: e.event,
            time: e.has_time.then_some(e.time),
        }))
    }

    /// Reads one record from the file into the queue or the ready list.
    fn pull(&mut self) {
        let file = self.inner.file();
        let base = file.as_ptr() as usize;
        let seq = self.seq;
        self.seq += 1;
        let entry = match self.inner.next_record() {
            Ok(Some(r)) => {
                let bytes = if r.compressed {
                    let mut v = self.spare.pop().unwrap_or_default();
                    v.clear();
                    v.extend_from_slice(r.body);
                    Bytes::Owned(v)
                } else {
                    let b = r.body.as_ptr() as usize - base;
                    let p = r.payload.as_ptr() as usize - base;
                    Bytes::File {
                        body: (b, b + r.body.len()),
                        payload: (p, p + r.payload.len()),
                    }
                };
                Entry {
                    time: r.time.unwrap_or(0),
                    seq,
                    kind: r.kind,
                    misc: r.misc,
                    offset: r.offset,
                    compressed: r.compressed,
                    event: r.event,
                    has_time: r.time.is_some(),
                    bytes,
                }
            }
            Ok(None) => {
                self.inner_done = true;
                self.flush(u64::MAX);
                return;
            }
            Err(e) => {
                self.inner_done = true;
                self.pending_error = Some(e);
                self.flush(u64::MAX);
                return;
            }
        };
        if entry.kind == RecordType::FINISHED_ROUND {
            self.flush(self.next_flush);
            self.next_flush = self.max_time;
            self.ready.push_back(entry);
        } else if !entry.has_time {
            self.ready.push_back(entry);
        } else {
            self.max_time = self.max_time.max(entry.time);
            self.queue.push(entry);
            if self.queue.len() >= MAX_QUEUED {
                self.queue.sort_by_key(|e| (e.time, e.seq));
                let half = self.queue[self.queue.len() / 2].time;
                self.flush(half);
            }
        }
    }

    /// Releases queued records with time <= `limit`, in (time, file order).
    ///
    /// The queue is a few sorted runs (one per CPU ring buffer, plus what the
    /// last flush kept), so the run-adaptive stable sort beats quicksort by
    /// far here.
    fn flush(&mut self, limit: u64) {
        self.queue.sort_by_key(|e| (e.time, e.seq));
        let n = self.queue.partition_point(|e| e.time <= limit);
        self.ready.extend(self.queue.drain(..n));
    }
}
