/*!
A perf.data capture's samples, in time order, each with what the sideband
says of its addresses: the one read every command that goes over a
capture's records shares (`perfq convert`, `report`, `dump`).

[`Stream`] reads the records by time and keeps a [`Tracker`] of the
address spaces up to date with every record other than a sample. Each
sample its [`Sink`] takes reaches it as [`Located`]: the decoded sample
([`SampleView`]: its event, its period by perf's rule, the deltas of its
group read), and what the sink asked to have located of it ([`Locate`]:
the stack, from the recorded callchain or the user stack unwound with
DWARF; the sample's own address; its branch endpoints), numbered by the
numbering the sink lends. Locating is done here once, for every command
that reads a capture: its order of numbering, its caches and the rule
that gives self time to the sample's own address live in [`Locating`].

What could not be read is counted in one [`Damage`], said in one line
([`Damage::summary`]): the read goes on past a record that does not
decode, and stops at one whose framing is broken, keeping what came
before it.

```no_run
use perfq_stream::{Flow, Interner, Interrupted, Locate, Located, Locating, Location, Sink, Stream};

/// Periods delivered, and the distinct stack frames met.
struct Count(u64);
impl Sink for Count {
    type Key = Location;
    type Numbers = Interner<Location>;
    type Error = Interrupted;
    fn sample(&mut self, s: &Located<'_, '_, '_>, _: &mut Interner<Location>) -> Result<Flow, Self::Error> {
        self.0 += s.view().delivered().map(|(_, period)| period).sum::<u64>();
        Ok(Flow::Go)
    }
}

let capture = perfq_reader::Capture::open("perf.data")?;
let mut stream = Stream::new(&capture);
let locate = Locate { stack: true, cache: true, ..Locate::default() };
let (mut total, mut frames) = (Count(0), Interner::new());
stream.run(&mut Locating::new(locate), &mut frames, &mut total, &mut |_, _| {})?;
let read = stream.finish();
if let Some(lost) = read.damage.summary() {
    eprintln!("perf.data: {lost}");
}
println!("{} periods, {} frames", total.0, frames.keys().len());
# Ok::<(), Box<dyn std::error::Error>>(())
```
*/
#![deny(missing_docs)]

mod damage;
mod located;
pub mod off_cpu;
pub mod process_tree;

pub use damage::{Count, Damage};
pub use located::{Locate, Located, Locating, LocationKey, Own, Role, Unnumbered};
pub use perfq_ids::interrupt::{self, Interrupted};
pub use perfq_ids::{Interner, Numbering};

use perfq_reader::{
    Capture, EventIndex, MemberDelta, RawRecord, ReadDeltas, RecordData, RecordType, ReleaseBehind,
    Sample, SampleId, Stats, TimeOrdered, Warning,
};
use perfq_symbolize::{leaf_lookup, push_chain_lookups, FrameLookup, StackUnwinder, Symbolizer};

pub use perfq_symbolize::Location;

pub use perfq_symbolize::Tracker;

/// What a read hands its sink, as it goes. Every method but
/// [`Sink::sample`] does nothing unless implemented.
pub trait Sink {
    /// What the sink numbers locations as ([`Location`] alone, or with
    /// more that tells two numbers apart).
    type Key: LocationKey;
    /// What gives those numbers ([`Unnumbered`] for a sink that locates
    /// nothing).
    type Numbers: Numbering<Self::Key>;
    /// What stops the read (writing its output failed, ...; a requested
    /// stop, [`Interrupted`], when nothing else can).
    type Error: From<Interrupted>;

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

    /// An off-CPU interval of a thread, once it has ended ([`off_cpu`]):
    /// only in captures that recorded `sched:sched_switch` or
    /// context-switch records.
    fn off_cpu(&mut self, _interval: &off_cpu::Interval) -> Result<(), Self::Error> {
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

    /// Whether a decoded sample is wanted, and located: asked before
    /// anything of it is numbered.
    fn take(&mut self, _sample: &SampleView<'_, '_>) -> Take {
        Take::Locate
    }

    /// The symbolizer a `--call-graph dwarf` user stack is unwound with
    /// (without one, the recorded callchain alone is the stack).
    fn symbolizer(&self) -> Option<&Symbolizer> {
        None
    }

    /// A decoded sample of a known event that the sink took, located as
    /// its [`Locating`] asks, with the numbering that numbered it.
    fn sample(
        &mut self,
        sample: &Located<'_, '_, '_>,
        numbers: &mut Self::Numbers,
    ) -> Result<Flow, Self::Error>;

    /// After [`Flow::Restart`], once the [`Locating`] has forgotten every
    /// number given.
    fn restarted(
        &mut self,
        _numbers: &mut Self::Numbers,
        _tracker: &Tracker,
    ) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// What becomes of a decoded sample ([`Sink::take`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// Not handed to the sink.
    Skip,
    /// Handed over with nothing located.
    AsIs,
    /// Located, then handed over.
    Locate,
}

/// What the read does after a sample ([`Sink::sample`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Goes on.
    Go,
    /// Goes on once every number given is forgotten: the sink's numbering
    /// starts again (a report's pass of bounded memory ends).
    Restart,
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
    off_cpu: Option<off_cpu::OffCpu>,
    /// Why a switch tracepoint recorded gives no off-CPU intervals.
    off_cpu_warning: Option<Warning>,
    /// The next decoded sample's number.
    number: u64,
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
        let (off_cpu, off_cpu_warning) = off_cpu::OffCpu::new(capture);
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
            off_cpu,
            off_cpu_warning,
            number: 0,
        }
    }

    /// The address spaces as of the records read so far (before the first
    /// record, what the header says: the kernel's build id, ...).
    pub fn tracker(&self) -> &Tracker {
        &self.tracker
    }

    /// What the read finds of off-CPU time, where the capture has any.
    pub fn off_cpu(&self) -> Option<&off_cpu::OffCpu> {
        self.off_cpu.as_ref()
    }

    /// Reads the records to the end of the capture (or to an error in its
    /// framing, counted in the damage), handing them to `sink`, each
    /// sample it takes located by `locating` and numbered by `numbers`,
    /// and calls `progress` now and then with (bytes of the capture read,
    /// its size), the last time with both equal. A sink's error stops the
    /// read and is returned.
    pub fn run<S: Sink>(
        &mut self,
        locating: &mut Locating,
        numbers: &mut S::Numbers,
        sink: &mut S,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<(), S::Error> {
        let capture = self.capture;
        let events = capture.events();
        loop {
            if let Some(done) = self.records.progress() {
                progress(done, capture.file_len());
                interrupt::check()?;
            }
            let Some(r) = self.records.next_ok(&mut self.damage.read_error) else {
                break;
            };
            // Pages behind the reading position go back to the OS: they
            // are not read again.
            self.release.reached(capture, r.offset.0);
            if r.kind != RecordType::SAMPLE {
                let (tracker, off_cpu) = (&mut self.tracker, &mut self.off_cpu);
                Self::other_record(capture, tracker, off_cpu, &mut self.damage, &r, sink)?;
                continue;
            }
            let Some(event) = r.event.index() else {
                sink.unknown_event(&r)?;
                continue;
            };
            // Borrowed where it was parsed: a sample is some 500 bytes,
            // and moving it out of the result copies them.
            let parsed = capture.sample_fields(&r);
            let sample = match parsed {
                Ok(ref s) => s,
                Err(kind) => {
                    let e = capture.record_error(&r, kind);
                    self.damage.undecoded_samples.add(&e);
                    if let Some(o) = &mut self.off_cpu {
                        o.lost();
                    }
                    sink.lost(&r)?;
                    continue;
                }
            };
            let number = self.number;
            self.number += 1;
            if let Some(o) = &mut self.off_cpu {
                o.sample(number, event, sample);
            }
            self.members.clear();
            self.lookups.clear();
            if sample.read.is_some() {
                self.deltas.apply(events, event, sample, &mut self.members);
            }
            let period = sample.period.unwrap_or_else(|| {
                events
                    .get(event)
                    .map_or(1, |e| e.attr.sample_period_or_freq)
            });
            let mut view = SampleView {
                record: &r,
                number,
                event,
                sample,
                period,
                members: &self.members,
                tracker: &self.tracker,
                unwinder: &mut self.unwinder,
                lookups: &mut self.lookups,
            };
            Self::hand(&mut view, locating, numbers, sink)?;
            hand_off_cpu(&mut self.off_cpu, sink)?;
        }
        progress(capture.file_len(), capture.file_len());
        self.ended(sink)
    }

    /// A record other than a sample: the tracker and the off-CPU intervals
    /// see it, then `sink`. (Of the read's parts, those the record, which
    /// borrows the records, leaves free.)
    fn other_record<S: Sink>(
        capture: &Capture,
        tracker: &mut Tracker,
        off_cpu: &mut Option<off_cpu::OffCpu>,
        damage: &mut Damage,
        r: &RawRecord<'_>,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        // Borrowed where they were decoded (see `Stream::run`).
        match capture.record_fields(r) {
            Ok((ref data, sample_id)) => {
                tracker.observe(data);
                if let Some(o) = off_cpu {
                    o.sideband(data, sample_id);
                }
                sink.sideband(tracker, r, data, sample_id)?;
            }
            Err(kind) => {
                damage.unparsed_records.add(&capture.record_error(r, kind));
                if let Some(o) = off_cpu {
                    o.lost();
                }
                sink.lost(r)?;
            }
        }
        hand_off_cpu(off_cpu, sink)
    }

    /// The read is over: the off-CPU intervals still open end, and an
    /// error that stopped it is placed.
    fn ended<S: Sink>(&mut self, sink: &mut S) -> Result<(), S::Error> {
        if let Some(o) = &mut self.off_cpu {
            if self.damage.read_error.is_some() {
                // The records after the error are lost.
                o.lost();
            }
            o.finish();
        }
        hand_off_cpu(&mut self.off_cpu, sink)?;
        if let Some(e) = self.damage.read_error.take() {
            let capture = self.capture;
            self.damage.unread_bytes = capture.data_range().end.saturating_sub(e.offset.0);
            self.damage.read_error = Some(e.with_path(capture.path()));
        }
        Ok(())
    }

    /// Hands a decoded sample to `sink`, located if it asks.
    fn hand<S: Sink>(
        view: &mut SampleView<'_, '_>,
        locating: &mut Locating,
        numbers: &mut S::Numbers,
        sink: &mut S,
    ) -> Result<(), S::Error> {
        match sink.take(view) {
            Take::Skip => return Ok(()),
            Take::AsIs => locating.clear(),
            Take::Locate => locating.locate(view, sink.symbolizer(), numbers),
        }
        let tracker = view.tracker();
        if sink.sample(&locating.located(view), numbers)? == Flow::Restart {
            locating.restart();
            sink.restarted(numbers, tracker)?;
        }
        Ok(())
    }

    /// What the read saw.
    pub fn finish(self) -> Read {
        let mut warnings = self.capture.warnings().to_vec();
        warnings.extend(self.records.warnings());
        warnings.extend(self.off_cpu_warning);
        Read {
            stats: self.records.stats().clone(),
            warnings,
            damage: self.damage,
            tracker: self.tracker,
        }
    }
}

/// Hands the off-CPU intervals that ended to `sink`.
fn hand_off_cpu<S: Sink>(
    off_cpu: &mut Option<off_cpu::OffCpu>,
    sink: &mut S,
) -> Result<(), S::Error> {
    if let Some(o) = off_cpu {
        for interval in o.ended() {
            sink.off_cpu(&interval)?;
        }
    }
    Ok(())
}

/// One decoded sample as a sink sees it.
pub struct SampleView<'s, 'r> {
    record: &'s RawRecord<'r>,
    number: u64,
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

    /// Its number among the capture's decoded samples of known events,
    /// from 0 in time order: a converted capture's `sample_id`, and how an
    /// off-CPU interval names the sample whose stack it has.
    pub fn number(&self) -> u64 {
        self.number
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
    pub(crate) fn locate_frames(&mut self, symbolizer: Option<&Symbolizer>) -> bool {
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

    /// The frames of its stack, leaf first, when the sink asked for the
    /// stack ([`Locate::stack`]); empty otherwise.
    pub fn frames(&self) -> &[FrameLookup] {
        self.lookups
    }
}
