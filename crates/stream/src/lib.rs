/*!
A perf.data capture's samples, in time order, each with what the sideband
says of its addresses: the one read every command that goes over a
capture's records shares (`perfq convert`, `report`, `dump`).

[`Stream`] reads the records by time and keeps a [`Tracker`] of the
address spaces up to date with every record other than a sample. Each
sample reaches the [`Consumer`] as a [`SampleView`]: the decoded sample,
its event, its period by perf's rule, the deltas of its group read, and
its frames to locate (the recorded callchain, or the user stack unwound
with DWARF). What could not be read is counted in one [`Damage`], said in
one line ([`Damage::summary`]): the read goes on past a record that does
not decode, and stops at one whose framing is broken, keeping what came
before it.

```no_run
use perfq_stream::{Consumer, SampleView, Stream};

struct Count(u64);
impl Consumer for Count {
    type Error = std::convert::Infallible;
    fn sample(&mut self, s: &mut SampleView<'_, '_>) -> Result<(), Self::Error> {
        self.0 += s.delivered().map(|(_, period)| period).sum::<u64>();
        Ok(())
    }
}

let capture = perfq_reader::Capture::open("perf.data")?;
let mut stream = Stream::new(&capture);
let mut total = Count(0);
stream.run(&mut total, &mut |_, _| {})?;
let read = stream.finish();
if let Some(lost) = read.damage.summary() {
    eprintln!("perf.data: {lost}");
}
println!("{} periods", total.0);
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/
#![deny(missing_docs)]

mod damage;
pub mod process_tree;

pub use damage::{Count, Damage};

use perfq_reader::{
    Capture, EventIndex, MemberDelta, RawRecord, ReadDeltas, RecordData, RecordType, ReleaseBehind,
    Sample, SampleId, Stats, TimeOrdered, Warning,
};
use perfq_symbolize::{leaf_lookup, push_chain_lookups, FrameLookup, StackUnwinder, Symbolizer};

pub use perfq_symbolize::Tracker;

/// What a read hands its consumer. Every method but [`Consumer::sample`]
/// does nothing unless implemented.
pub trait Consumer {
    /// What stops the read (writing its output failed, ...).
    type Error;

    /// A record other than a sample, parsed, once the tracker has seen it.
    fn sideband(
        &mut self,
        _tracker: &Tracker,
        _record: &RawRecord<'_>,
        _data: &RecordData<'_>,
        _sample_id: Option<SampleId>,
    ) -> Result<(), Self::Error> {
        Ok(())
    }

    /// A sample record whose event is not known (no id, or an id no event
    /// has): it is not decoded.
    fn unknown_event(&mut self, _record: &RawRecord<'_>) -> Result<(), Self::Error> {
        Ok(())
    }

    /// A record that could not be used: a sample that does not decode or
    /// another record that does not parse (also counted in the
    /// [`Damage`]).
    fn lost(&mut self, _record: &RawRecord<'_>) -> Result<(), Self::Error> {
        Ok(())
    }

    /// A decoded sample of a known event.
    fn sample(&mut self, sample: &mut SampleView<'_, '_>) -> Result<(), Self::Error>;
}

/// What a read of a capture has to say of it: its warnings, and what
/// could not be read. A dataset keeps both (`capture.warnings`,
/// `capture.read_error`), so a command over a converted capture says what
/// the read said.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Notes {
    /// What was odd and lost nothing counted as damage, one line each.
    pub warnings: Vec<String>,
    /// What could not be read ([`Damage::summary`]).
    pub damage: Option<String>,
}

/// The read of one capture: its records in time order, the address spaces
/// as of each, and what could not be read.
pub struct Stream<'c> {
    capture: &'c Capture,
    records: TimeOrdered<'c>,
    tracker: Tracker,
    unwinder: StackUnwinder,
    lookups: Vec<FrameLookup>,
    deltas: ReadDeltas,
    members: Vec<MemberDelta>,
    release: ReleaseBehind,
    damage: Damage,
}

/// What a read saw, once it is over.
#[derive(Debug)]
pub struct Read {
    /// Counts of the records read.
    pub stats: Stats,
    /// What was odd about the capture and did not lose anything counted
    /// in [`Read::damage`] (out-of-order records, corrected sizes, ...):
    /// the capture's header's and the records'.
    pub warnings: Vec<Warning>,
    /// What could not be read.
    pub damage: Damage,
    /// The address spaces as of the end of the read.
    pub tracker: Tracker,
}

impl Read {
    /// Its [`Notes`].
    pub fn notes(&self) -> Notes {
        Notes {
            warnings: self.warnings.iter().map(|w| w.to_string()).collect(),
            damage: self.damage.summary(),
        }
    }
}

impl<'c> Stream<'c> {
    /// A read of `capture` from its first record.
    pub fn new(capture: &'c Capture) -> Stream<'c> {
        Stream {
            capture,
            records: capture.records_by_time(),
            tracker: Tracker::new(capture),
            unwinder: StackUnwinder::new(capture.meta().arch.as_deref()),
            lookups: Vec::new(),
            deltas: ReadDeltas::new(),
            members: Vec::new(),
            release: ReleaseBehind::default(),
            damage: Damage::default(),
        }
    }

    /// The address spaces as of the records read so far (before the first
    /// record, what the header says: the kernel's build id, ...).
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// Reads the records to the end of the capture (or to an error in its
    /// framing, counted in the damage), handing them to `consumer`, and
    /// calls `progress` now and then with (bytes of the capture read, its
    /// size), the last time with both equal. A consumer's error stops the
    /// read and is returned.
    pub fn run<C: Consumer + ?Sized>(
        &mut self,
        consumer: &mut C,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), C::Error> {
        let capture = self.capture;
        let events = capture.events();
        loop {
            if let Some(done) = self.records.progress() {
                progress(done, capture.file_len());
            }
            let Some(r) = self.records.next_ok(&mut self.damage.read_error) else {
                break;
            };
            // Pages behind the reading position go back to the OS: they
            // are not read again.
            self.release.reached(capture, r.offset.0);
            if r.kind != RecordType::SAMPLE {
                match capture.parse(&r) {
                    Ok((data, sample_id)) => {
                        self.tracker.observe(&data);
                        consumer.sideband(&self.tracker, &r, &data, sample_id)?;
                    }
                    Err(e) => {
                        self.damage.unparsed_records.add(&e);
                        consumer.lost(&r)?;
                    }
                }
                continue;
            }
            let Some(event) = r.event.index() else {
                consumer.unknown_event(&r)?;
                continue;
            };
            let sample = match capture.sample(&r) {
                Ok(s) => s,
                Err(e) => {
                    self.damage.undecoded_samples.add(&e);
                    consumer.lost(&r)?;
                    continue;
                }
            };
            self.members.clear();
            self.lookups.clear();
            if sample.read.is_some() {
                self.deltas.apply(events, event, &sample, &mut self.members);
            }
            let period = sample.period.unwrap_or_else(|| {
                events
                    .get(event)
                    .map_or(1, |e| e.attr.sample_period_or_freq)
            });
            let mut view = SampleView {
                record: &r,
                event,
                sample: &sample,
                period,
                members: &self.members,
                tracker: &self.tracker,
                unwinder: &mut self.unwinder,
                lookups: &mut self.lookups,
            };
            consumer.sample(&mut view)?;
        }
        progress(capture.file_len(), capture.file_len());
        if let Some(e) = self.damage.read_error.take() {
            self.damage.unread_bytes = capture.data_range().end.saturating_sub(e.offset.0);
            self.damage.read_error = Some(e.with_path(capture.path()));
        }
        Ok(())
    }

    /// What the read saw.
    pub fn finish(self) -> Read {
        let mut warnings = self.capture.warnings().to_vec();
        warnings.extend(self.records.warnings());
        Read {
            stats: self.records.stats().clone(),
            warnings,
            damage: self.damage,
            tracker: self.tracker,
        }
    }
}

/// One decoded sample as a consumer sees it.
pub struct SampleView<'s, 'r> {
    record: &'s RawRecord<'r>,
    event: EventIndex,
    sample: &'s Sample<'r>,
    period: u64,
    members: &'s [MemberDelta],
    tracker: &'s Tracker,
    unwinder: &'s mut StackUnwinder,
    lookups: &'s mut Vec<FrameLookup>,
}

impl<'s, 'r> SampleView<'s, 'r> {
    /// The record it was decoded from (its offset and time).
    pub fn record(&self) -> &RawRecord<'r> {
        self.record
    }

    /// Its event.
    pub fn event(&self) -> EventIndex {
        self.event
    }

    /// The decoded sample.
    pub fn sample(&self) -> &Sample<'r> {
        self.sample
    }

    /// Its period: the one recorded, else the event's fixed sampling period
    /// (or frequency, as perf takes it).
    pub fn period(&self) -> u64 {
        self.period
    }

    /// A group read's values with their deltas since the previous read of
    /// the same member (and thread), one per value; empty without
    /// `PERF_SAMPLE_READ`.
    pub fn members(&self) -> &[MemberDelta] {
        self.members
    }

    /// What the sample counts for, as perf delivers it: a group read once
    /// per member whose counter moved, under the member's event with its
    /// delta as period; any other sample once, under its event with its
    /// period.
    pub fn delivered(&self) -> impl Iterator<Item = (EventIndex, u64)> + '_ {
        let own = self
            .sample
            .read
            .is_none()
            .then_some((self.event, self.period));
        let members = self
            .members
            .iter()
            .filter_map(|m| match (m.event, m.delta) {
                (Some(e), Some(d)) if d != 0 => Some((e, d)),
                _ => None,
            });
        own.into_iter().chain(members)
    }

    /// The address spaces as of this sample.
    pub fn tracker(&self) -> &'s Tracker {
        self.tracker
    }

    /// The frame of the sample's own address, if it has one.
    pub fn leaf(&self) -> Option<FrameLookup> {
        leaf_lookup(self.sample)
    }

    /// Finds the sample's frames, leaf first ([`SampleView::frames`]):
    /// with a symbolizer, a `--call-graph dwarf` user stack is unwound
    /// with the binaries' unwind tables; without one, the recorded
    /// callchain alone. Returns whether a user stack was unwound.
    pub fn locate_frames(&mut self, symbolizer: Option<&Symbolizer>) -> bool {
        match symbolizer {
            Some(sym) => self
                .unwinder
                .sample_frames(self.tracker, sym, self.sample, self.lookups),
            None => {
                self.lookups.clear();
                push_chain_lookups(self.sample, self.lookups);
                false
            }
        }
    }

    /// The frames [`SampleView::locate_frames`] found (empty before it is
    /// called).
    pub fn frames(&self) -> &[FrameLookup] {
        self.lookups
    }
}
