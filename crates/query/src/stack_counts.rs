//! One event's samples, each in its cell (interval, thread, sampled stack):
//! what the HTML page's flame graph and time line are drawn from, with
//! the stacks as the stack tables read them (`views::sampled_stacks`),
//! whose paths give the call tree. The samples are those of every other
//! count (`delivered_samples`), each thread named by its comm when they
//! were delivered, as the flame graph and the exported profiles name them
//! (`_named_delivered`'s names, looked up in memory rather than joined:
//! `named_samples::Comms`); threads are numbered as the profiles number them
//! (by their first sample in `_profile_samples`' order). Each sample
//! keeps its leaf frame's function too: the per-function sums per
//! interval are summed from these samples (`function_sums`), not read
//! again.

use std::cmp::Ordering;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{Array, AsArray, PrimitiveArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Int64Type, UInt64Type};
use perfq_ids::{Interner, TextIds};
use rustc_hash::FxHashMap;

use crate::helpers::{self, Param};
use crate::named_samples::{self, Comms};
use crate::profile::{self, Thread};
use crate::views::SampledStacks;
use crate::{columns, events, views, Error, Session};

/// A cell: (interval, thread, the stack's place among the sampled stacks;
/// `None` for a sample without one).
pub type Cell = (u64, usize, Option<usize>);

/// One sample as counted: 32 bytes, however many cells there are (a
/// system-wide capture's samples are nearly all cells of their own, and
/// a table of them grew by rehashing into several times their size).
#[derive(Clone, Copy, Debug)]
struct Counted {
    bucket: u64,
    period: u64,
    /// The thread as met.
    thread: u32,
    /// The stack's place ([`NO_STACK`]: none).
    place: u32,
    /// The leaf frame's function (0: none, or `[unknown]`).
    leaf: u32,
    /// Whether its capture has a `capture` row (without one, its
    /// intervals count from 0, and it has none in the function sums).
    listed: bool,
}

/// A sample as the per-function sums read it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leaf {
    /// Its interval, where its capture has a `capture` row.
    pub bucket: Option<u64>,
    /// Its leaf frame's function id (0: none).
    pub function: u32,
    /// Its stack's place among the sampled stacks.
    pub place: Option<usize>,
    pub period: u64,
}

/// [`Counted::place`] of a sample without a sampled stack.
const NO_STACK: u32 = u32::MAX;

impl Counted {
    /// Its stack's place among the sampled stacks.
    fn place(&self) -> Option<usize> {
        (self.place != NO_STACK).then_some(self.place as usize)
    }
}

/// The samples of one event, each in its cell.
#[derive(Debug)]
pub struct StackCounts {
    /// The sampled stacks, each with its path.
    pub stacks: Arc<SampledStacks>,
    /// The threads, numbered by their first sample in `_profile_samples`'
    /// order (capture, thread, time); [`Thread::capture`] numbers the
    /// captures as their samples were read.
    pub threads: Vec<Thread>,
    /// The samples as read, threads numbered as met
    /// ([`StackCounts::samples`] numbers them).
    counted: Vec<Counted>,
    /// Each thread's number, by its number as met.
    numbers: Vec<usize>,
    /// Samples in all.
    pub all: u64,
    /// Samples whose leaf frame has a symbol.
    pub resolved: u64,
    /// One more than the last interval with samples (0 without samples).
    pub intervals: u64,
}

impl StackCounts {
    /// Each sample's cell and period, in no order (a cell's samples are
    /// summed by the reader, who may first merge cells).
    pub fn samples(&self) -> impl Iterator<Item = (Cell, u64)> + '_ {
        self.counted.iter().map(|c| {
            let thread = self.numbers[c.thread as usize];
            ((c.bucket, thread, c.place()), c.period)
        })
    }

    /// Each sample's interval, leaf function, stack and period, in no
    /// order.
    pub(crate) fn leaves(&self) -> impl Iterator<Item = Leaf> + '_ {
        self.counted.iter().map(|c| Leaf {
            bucket: c.listed.then_some(c.bucket),
            function: c.leaf,
            place: c.place(),
            period: c.period,
        })
    }
}

/// `event`'s samples in intervals of `interval_ns` (counted from their
/// capture's first sample, as `perfq topdown --by interval` counts), on
/// the sampled stacks. Fails for an event without samples, and where
/// perfq does not compute the stack tables itself (a session that
/// defines some of them).
pub fn by_interval(session: &Session, event: &str, interval_ns: u64) -> Result<StackCounts, Error> {
    by_interval_chosen(session, Choice::given(event, interval_ns)).map(|(counts, _)| counts)
}

/// Which samples to count, and in intervals of what length, with what
/// else the caller worked out to choose them.
pub struct Choice<T> {
    /// The event whose samples are counted.
    pub event: String,
    /// The intervals' length.
    pub interval_ns: u64,
    /// What else the caller worked out.
    pub rest: T,
}

impl Choice<()> {
    /// The choice of a caller that knows the event and intervals already.
    pub(crate) fn given(
        event: &str,
        interval_ns: u64,
    ) -> impl FnOnce() -> Result<Choice<()>, Error> + Send + '_ {
        move || {
            Ok(Choice {
                event: event.to_string(),
                interval_ns,
                rest: (),
            })
        }
    }
}

/// [`by_interval`] of the event and interval `choose` gives: it runs
/// while the stack tables are made (it may read the dataset too, as the
/// HTML page's choice of event and intervals does).
pub fn by_interval_chosen<T: Send, E: From<Error> + Send>(
    session: &Session,
    choose: impl FnOnce() -> Result<Choice<T>, E> + Send,
) -> Result<(StackCounts, Choice<T>), E> {
    let (read, choice) = read_chosen(session, choose)?;
    Ok((read.place()?, choice))
}

/// [`by_interval_chosen`]'s samples as read, not yet placed among the
/// sampled stacks: a caller may start on the stacks
/// ([`Unplaced::stacks`]) while another thread places the samples.
pub fn read_chosen<T: Send, E: From<Error> + Send>(
    session: &Session,
    choose: impl FnOnce() -> Result<Choice<T>, E> + Send,
) -> Result<(Unplaced, Choice<T>), E> {
    named_samples::require_tables(session)?;
    let (counts, choice) = count(session, choose, true)?;
    // Whether the event has samples is asked only where it has none here
    // (the question reads every sample again).
    let not_sampled = || events::chosen(Some(&choice.event), &events::sampled_events(session)?);
    let Some(counts) = counts else {
        not_sampled()?;
        return Err(Error::Shape(
            "the call tree reads the stack tables perfq computes itself, and this session \
             defines some of them (stack_sets, set_functions, stack_functions, functions)"
                .into(),
        )
        .into());
    };
    // (Every sample read is counted.)
    if counts.read.rows.is_empty() {
        not_sampled()?;
    }
    Ok((counts, choice))
}

/// One event's samples as read, and the sampled stacks they are placed
/// among by [`Unplaced::place`].
pub struct Unplaced {
    read: Read,
    stacks: Arc<SampledStacks>,
}

impl Unplaced {
    /// The sampled stacks, each with its path.
    pub fn stacks(&self) -> &Arc<SampledStacks> {
        &self.stacks
    }

    /// The counts, each sample's stack placed among the sampled stacks.
    pub fn place(self) -> Result<StackCounts, Error> {
        self.read.place(self.stacks)
    }
}

/// The samples of the event `choose` gives, in its intervals (none for an
/// event without samples), with the sampled stacks, each with its path
/// where `paths` asks; `None` where perfq does not compute the stack
/// tables itself. The tables [`named_samples::require_tables`] names are
/// there.
pub(crate) fn count<T: Send, E: From<Error> + Send>(
    session: &Session,
    choose: impl FnOnce() -> Result<Choice<T>, E> + Send,
    paths: bool,
) -> Result<(Option<Unplaced>, Choice<T>), E> {
    views::ensure(session, "delivered_samples")?;
    // The event is chosen and its samples read on a thread of their own
    // while the stack tables are made on this one: each keeps about one
    // core busy, the query's workers and the thread that takes its rows
    // in turn.
    let (stacks, scanned) = perfq_ids::beside(
        || views::sampled_stacks(session, paths),
        || -> Result<_, E> {
            let choice = choose()?;
            let mut read = Read::new(session, choice.interval_ns)?;
            read.scan(session, &choice.event)?;
            Ok((read, choice))
        },
    );
    let (read, choice) = scanned?;
    let Some(stacks) = stacks? else {
        return Ok((None, choice));
    };
    Ok((Some(Unplaced { read, stacks }), choice))
}

/// Each capture's first sample time, by name (`None` for one without a
/// `capture` row, whose intervals count from 0).
fn capture_starts(session: &Session) -> Result<FxHashMap<String, Option<u64>>, Error> {
    let mut starts = FxHashMap::default();
    for b in &session.sql("SELECT capture, time_first FROM capture")? {
        let capture = columns::strings(b, "capture")?;
        let first = columns::u64s(b, "time_first")?;
        for (c, t) in capture.into_iter().zip(first) {
            if let Some(c) = c {
                starts.insert(c, t);
            }
        }
    }
    Ok(starts)
}

/// The ids `event` (a name) has in each capture, by capture name.
fn event_ids(session: &Session, event: &str) -> Result<FxHashMap<String, Vec<u64>>, Error> {
    let sql = format!(
        "SELECT capture, event_id FROM events WHERE name = {}",
        columns::quote(event)
    );
    let mut ids: FxHashMap<String, Vec<u64>> = FxHashMap::default();
    for b in &session.sql(&sql)? {
        let capture = columns::strings(b, "capture")?;
        let id = columns::u64s(b, "event_id")?;
        for (c, id) in capture.into_iter().zip(id) {
            if let (Some(c), Some(id)) = (c, id) {
                ids.entry(c).or_default().push(id);
            }
        }
    }
    Ok(ids)
}

/// Where a sample comes in `_profile_samples`' order (`ORDER BY capture,
/// tid, time, sample_id, event_id`, nulls last), its capture by number
/// among [`Read::captures`]: each `Option` as `(is null, value)`.
type SampleOrder = (u32, (bool, i64), (bool, u64), (bool, u64), (bool, u64));

/// The samples as they are read: before the sampled stacks are there,
/// each with its stack and leaf frame as ids, placed among the sampled
/// stacks once they are ([`Read::place`]).
struct Read {
    /// Each capture's first sample time, by name.
    starts: FxHashMap<String, Option<u64>>,
    /// The threads' names over time, which name the samples' threads.
    comms: Comms,
    interval_ns: u64,
    /// The samples' captures, numbered as met, and where each one is.
    captures: TextIds,
    capture_at: Vec<At>,
    /// The event's ids, by capture name, and by capture as met.
    wanted: FxHashMap<String, Vec<u64>>,
    events_at: Vec<Vec<u64>>,
    /// The threads, numbered as met, and each one's first sample.
    threads: Interner<Thread>,
    first: Vec<SampleOrder>,
    /// By (capture, pid, tid): the times over which the thread keeps the
    /// name it had at its last sample, and its number with that name.
    recent: FxHashMap<(u32, i32, i32), (Range<u64>, usize)>,
    /// The samples, threads numbered as met.
    rows: Vec<Scanned>,
}

/// Where a capture is.
#[derive(Clone, Copy)]
struct At {
    /// Its first sample's time (0 without one).
    start: u64,
    /// Whether it has a `capture` row.
    listed: bool,
}

/// One sample as read: 40 bytes.
#[derive(Clone, Copy)]
struct Scanned {
    bucket: u64,
    period: u64,
    /// Its stack and leaf frame ids ([`NO_ID`]: none).
    stack: u64,
    leaf: u64,
    /// The thread as met.
    thread: u32,
    /// The capture as met.
    capture: u32,
}

/// [`Scanned::stack`] or [`Scanned::leaf`] of a sample without one.
const NO_ID: u64 = u64::MAX;

/// A batch's columns.
struct Columns<'b> {
    capture: &'b datafusion::arrow::array::StringArray,
    pid: &'b PrimitiveArray<Int64Type>,
    tid: &'b PrimitiveArray<Int64Type>,
    u64s: [&'b PrimitiveArray<UInt64Type>; 6],
}

/// The value of row `i`, if not null.
fn at<T: datafusion::arrow::datatypes::ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    i: usize,
) -> Option<T::Native> {
    // (The null buffer asked directly: `is_valid` was a call per value.)
    match a.nulls() {
        Some(n) if n.is_null(i) => None,
        _ => Some(a.value(i)),
    }
}

/// `(is null, value)`: orders as `ORDER BY` does, nulls last.
fn nulls_last<T: Default>(v: Option<T>) -> (bool, T) {
    match v {
        Some(v) => (false, v),
        None => (true, T::default()),
    }
}

impl Read {
    /// A read of samples in intervals of `interval_ns`.
    fn new(session: &Session, interval_ns: u64) -> Result<Read, Error> {
        Ok(Read {
            starts: capture_starts(session)?,
            comms: Comms::read(session)?,
            interval_ns: interval_ns.max(1),
            captures: TextIds::new(),
            capture_at: Vec::new(),
            wanted: FxHashMap::default(),
            events_at: Vec::new(),
            threads: Interner::new(),
            first: Vec::new(),
            recent: FxHashMap::default(),
            rows: Vec::new(),
        })
    }

    /// Reads `event`'s samples: those of every id it has in some capture,
    /// each capture's own kept ([`Read::row`]).
    fn scan(&mut self, session: &Session, event: &str) -> Result<(), Error> {
        self.wanted = event_ids(session, event)?;
        let mut ids: Vec<u64> = self.wanted.values().flatten().copied().collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Ok(());
        }
        let list: Vec<String> = ids.iter().map(u64::to_string).collect();
        let only = format!("event_id IN ({})", list.join(", "));
        let sql = helpers::fill(helpers::EVENT_SAMPLES, &[("only", Param::Sql(&only))]);
        session.for_each_batch(&sql, |b| self.batch(&b))
    }

    fn batch(&mut self, b: &RecordBatch) -> Result<(), Error> {
        let text = |c: &str| columns::cast(b, c, &DataType::Utf8);
        let capture = text("capture")?;
        let int = |c: &str| columns::cast(b, c, &DataType::Int64);
        let (pid, tid) = (int("pid")?, int("tid")?);
        let u64s = [
            "time",
            "stack_id",
            "leaf_frame_id",
            "weight",
            "sample_id",
            "event_id",
        ]
        .map(|c| columns::cast(b, c, &DataType::UInt64));
        let [time, stack, leaf, weight, sample, event] = u64s;
        let (time, stack, leaf, weight) = (time?, stack?, leaf?, weight?);
        let (sample, event) = (sample?, event?);
        let cols = Columns {
            capture: capture.as_string::<i32>(),
            pid: pid.as_primitive(),
            tid: tid.as_primitive(),
            u64s: [&time, &stack, &leaf, &weight, &sample, &event].map(|a| a.as_primitive()),
        };
        for i in 0..b.num_rows() {
            if cols.capture.is_valid(i) {
                self.row(&cols, i)?;
            }
        }
        Ok(())
    }

    fn row(&mut self, cols: &Columns<'_>, i: usize) -> Result<(), Error> {
        let [time, stack, leaf, weight, sample, event] = cols.u64s;
        let id = |a: &PrimitiveArray<Int64Type>| {
            at(a, i).and_then(|v| i32::try_from(v).ok()).unwrap_or(-1)
        };
        let name = cols.capture.value(i);
        let (capture, At { start, .. }) = self.capture(name)?;
        let wanted = &self.events_at[capture as usize];
        if !at(event, i).is_some_and(|e| wanted.contains(&e)) {
            return Ok(());
        }
        let thread = self.thread(capture, name, (id(cols.pid), at(cols.tid, i)), at(time, i));
        let order: SampleOrder = (
            capture,
            nulls_last(at(cols.tid, i)),
            nulls_last(at(time, i)),
            nulls_last(at(sample, i)),
            nulls_last(at(event, i)),
        );
        match self.first.get_mut(thread) {
            Some(first) => *first = (*first).min(order),
            None => self.first.push(order),
        }
        let bucket = at(time, i).unwrap_or(0).saturating_sub(start) / self.interval_ns;
        self.rows.push(Scanned {
            bucket,
            period: at(weight, i).unwrap_or(0),
            stack: at(stack, i).unwrap_or(NO_ID),
            leaf: at(leaf, i).unwrap_or(NO_ID),
            thread: u32::try_from(thread).map_err(|_| too_many())?,
            capture,
        });
        Ok(())
    }

    /// The number of the thread of a sample of capture `capture` (named
    /// `name`) by `pid` and `tid` at `time`, the next one if it is new. A
    /// thread keeps its number while it keeps its name ([`Read::recent`]).
    fn thread(
        &mut self,
        capture: u32,
        name: &str,
        ids: (i32, Option<i64>),
        time: Option<u64>,
    ) -> usize {
        let (pid, tid) = ids;
        let id = tid.and_then(|t| i32::try_from(t).ok());
        let (Some(tid), Some(time)) = (id, time) else {
            let comm = self.comms.name(name, tid, time);
            let tid = id.unwrap_or(-1);
            return profile::number_thread(&mut self.threads, capture as usize, pid, tid, &comm);
        };
        let key = (capture, pid, tid);
        if let Some((over, thread)) = self.recent.get(&key) {
            if over.contains(&time) {
                return *thread;
            }
        }
        let (comm, over) = self.comms.name_over(name, tid, time);
        let thread = profile::number_thread(&mut self.threads, capture as usize, pid, tid, &comm);
        self.recent.insert(key, (over, thread));
        thread
    }

    /// The number of capture `name` among those met (`TextIds` asks the
    /// last one first: a batch mostly holds one capture's rows), and
    /// where it is.
    fn capture(&mut self, name: &str) -> Result<(u32, At), Error> {
        let n = self
            .captures
            .id(name)
            .ok_or_else(|| Error::Shape("capture names beyond 4 GiB".into()))?;
        if self.capture_at.len() <= n as usize {
            let listed = self.starts.get(name).copied();
            let events = self.wanted.get(name).cloned().unwrap_or_default();
            self.events_at.push(events);
            self.capture_at.push(At {
                start: listed.flatten().unwrap_or(0),
                listed: listed.is_some(),
            });
        }
        Ok((n, self.capture_at[n as usize]))
    }

    /// The counts, each sample's stack placed among `stacks` and its leaf
    /// frame made a function, the threads in order.
    fn place(self, stacks: Arc<SampledStacks>) -> Result<StackCounts, Error> {
        let numbers = self.threads_in_order();
        // Each capture's number among the sampled stacks' captures.
        let among: Vec<Option<u32>> = (0..self.capture_at.len() as u32)
            .map(|c| stacks.capture(self.captures.text(c)))
            .collect();
        let mut counts = StackCounts {
            threads: Vec::new(),
            counted: Vec::with_capacity(self.rows.len()),
            numbers: Vec::new(),
            all: 0,
            resolved: 0,
            intervals: 0,
            stacks,
        };
        for r in &self.rows {
            let c = among.get(r.capture as usize).copied().flatten();
            let id = |v: u64| (v != NO_ID).then_some(v);
            let place = c
                .zip(id(r.stack))
                .and_then(|(c, s)| counts.stacks.place(c, s));
            counts.counted.push(Counted {
                bucket: r.bucket,
                period: r.period,
                thread: r.thread,
                place: match place {
                    Some(p) => u32::try_from(p)
                        .ok()
                        .filter(|&p| p != NO_STACK)
                        .ok_or_else(too_many)?,
                    None => NO_STACK,
                },
                leaf: c
                    .zip(id(r.leaf))
                    .map_or(0, |(c, l)| counts.stacks.function_of(c, l)),
                listed: self
                    .capture_at
                    .get(r.capture as usize)
                    .is_some_and(|a| a.listed),
            });
            counts.all += 1;
            if place.is_some_and(|p| counts.stacks.leaf_resolved(p)) {
                counts.resolved += 1;
            }
            counts.intervals = counts.intervals.max(r.bucket + 1);
        }
        counts.threads = numbers_to_threads(self.threads, &numbers);
        counts.numbers = numbers;
        Ok(counts)
    }

    /// Each thread's number by its first sample in `_profile_samples`'
    /// order (captures by name), by its number as met.
    fn threads_in_order(&self) -> Vec<usize> {
        let captures = &self.captures;
        let by_name = |a: &SampleOrder, b: &SampleOrder| -> Ordering {
            let name = |o: &SampleOrder| captures.text(o.0);
            name(a)
                .cmp(name(b))
                .then_with(|| (a.1, a.2, a.3, a.4).cmp(&(b.1, b.2, b.3, b.4)))
        };
        let mut order: Vec<usize> = (0..self.first.len()).collect();
        order.sort_unstable_by(|&a, &b| by_name(&self.first[a], &self.first[b]));
        let mut number = vec![0usize; order.len()];
        for (n, &t) in order.iter().enumerate() {
            number[t] = n;
        }
        number
    }
}

fn too_many() -> Error {
    Error::Shape("more than 4G threads or sampled stacks".into())
}

/// The threads, as numbered anew (`numbers`, by number as met).
fn numbers_to_threads(threads: Interner<Thread>, numbers: &[usize]) -> Vec<Thread> {
    let mut placed: Vec<(usize, Thread)> =
        numbers.iter().copied().zip(threads.into_keys()).collect();
    placed.sort_unstable_by_key(|(n, _)| *n);
    placed.into_iter().map(|(_, t)| t).collect()
}
