//! The per-sample tables, streamed in time order: samples, group-read
//! values with their deltas, branch-stack entries and raw data.
//!
//! The samples table and the stack tree are built on a thread of their
//! own: the reading thread sends each sample's fields and frames (as
//! location tickets, with the locations found: a [`TicketBook`]) in
//! batches, and that thread gives the locations their ids (its
//! [`TicketIds`]), interns the
//! stack, writes the row and, at the end, the stacks table. Interning
//! probes a table of hundreds of thousands of stacks per new frame, the
//! largest cost per sample after decoding; on its own thread it overlaps
//! the reading. Branch entries, whose endpoints are locations too, are
//! written there as well.
//!
//! A sample's group-read values travel to the samples thread in the batch
//! too (as the frames do; a sample without a read carries nothing extra)
//! and are written there: as read_values rows, and their deltas in the
//! sample's own row, `m0..m15` by member position, so that per-sample
//! counter values need no pivot of read_values.

use std::convert::Infallible;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use perfq_ids::handoff::{handoff, Down, Handoff, Inbox};
use perfq_ids::{TicketBook, TicketIds};
use perfq_reader::{BranchEntry, EventIndex, Events, MemberDelta, Sample};
use perfq_symbolize::Location;
use rustc_hash::FxHashSet;

use crate::convert::columns::flush;
use crate::convert::read_values::{MemberPositions, ReadValue, ReadValueColumns};
use crate::convert::sample_columns::SampleColumns;
use crate::convert::schema::{BRANCHES, MEMBER_COLUMNS, RAW, READ_VALUES, SAMPLES, STACKS};
use crate::convert::stacks::{Chain, Stacks};
use crate::convert::ReadValues;
use crate::{CaptureWriter, Error, Table, ThreadFailure};

/// Samples a batch carries to the samples thread.
const BATCH: usize = 4096;

/// Batches under way at most (memory stays bounded whatever the capture).
const BATCHES_IN_FLIGHT: usize = 4;

/// How many rows ahead the samples thread prefetches a stack's lookup:
/// enough for a cache miss to be served while the rows between are
/// written.
const PREFETCH_ROWS: usize = 8;

/// How a location counts against a memory limit: the location (24
/// bytes), its slot in the id table, and its resolution and frames rows
/// when its segment is written.
const LOCATION_BYTES: usize = 64;

/// A limit on the memory the stack tree and the distinct locations hold:
/// past it, both are written and interning starts afresh (see
/// `Stacks::cut`, `TicketIds::cut`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segments {
    /// The limit.
    pub(crate) bytes: u64,
    /// Whether the locations are cut too (else only the stacks count and
    /// are cut): not for a pipe-mode capture, whose build ids come at its
    /// end, after which alone its locations can be symbolized.
    pub(crate) locations: bool,
}

/// Locations the samples thread hands back to be symbolized and written,
/// ids in order: a segment's as it is cut, then the last segment's once
/// every batch is in.
pub(crate) enum Located {
    Segment(Vec<Location>),
    Last(Vec<Location>),
}

pub(crate) struct SampleTables {
    rows: RowsThread,
    raw: Table,
    /// Distinct data_src values, for the data_src table.
    pub(crate) data_src: FxHashSet<u64>,
    /// Rows written to the samples table.
    pub(crate) count: u64,
}

/// What the caller worked out for one sample.
pub(crate) struct SampleRow<'a> {
    pub(crate) event: EventIndex,
    pub(crate) period: u64,
    /// The thread whose previous callchain `frames` likely shares callers
    /// with.
    pub(crate) tid: u32,
    /// The stack's frames as location tickets, root first (empty: no
    /// stack).
    pub(crate) frames: &'a [u32],
    /// The ticket of the sample's own address.
    pub(crate) leaf_frame: Option<u32>,
    /// The tickets of the branch entries' (from, to) addresses.
    pub(crate) branch_frames: &'a [(u32, u32)],
    /// The group read's values with their deltas, as the stream computed
    /// them (empty without a read).
    pub(crate) members: &'a [MemberDelta],
}

impl SampleTables {
    /// The tables of `w`'s samples; `segments` bounds the memory of the
    /// stacks and locations.
    pub(crate) fn create(
        w: &CaptureWriter,
        events: &Events,
        segments: Option<Segments>,
        read_values: ReadValues,
    ) -> Result<SampleTables, Error> {
        Ok(SampleTables {
            rows: RowsThread::start(
                w.table("samples", SAMPLES)?,
                w.table("branches", BRANCHES)?,
                w.table("stacks", STACKS)?,
                w.table("read_values", READ_VALUES)?,
                MemberPositions::of(events),
                segments,
                read_values,
            )?,
            raw: w.table("raw", RAW)?,
            data_src: FxHashSet::default(),
            count: 0,
        })
    }

    /// The locations of a segment the samples thread has cut, if one is
    /// waiting: to be symbolized and written now.
    pub(crate) fn segment(&mut self) -> Option<Vec<Location>> {
        match self.rows.locations.as_ref()?.try_recv() {
            Ok(Located::Segment(l)) => Some(l),
            // The last comes only after `finish`.
            Ok(Located::Last(_)) | Err(_) => None,
        }
    }

    /// Writes sample `s`, whose tickets were taken from `tickets`.
    pub(crate) fn push(
        &mut self,
        s: &Sample<'_>,
        row: SampleRow<'_>,
        tickets: &mut TicketBook<Location>,
    ) -> Result<(), Error> {
        if tickets.exhausted() {
            // More frame lookups than tickets can number: the stacks
            // written would be wrong.
            return Err(Error::TooManyLocations);
        }
        let sample_id = self.count;
        self.rows.push(
            Fields {
                sample_id,
                time: s.time,
                pid: s.pid,
                tid: s.tid,
                cpu: s.cpu,
                event: row.event.0 as u32,
                // Three bits (`CPUMODE_MASK`): the cast keeps them all.
                cpumode: s.cpu_mode() as u8,
                period: row.period,
                leaf_frame: row.leaf_frame,
                ip: s.ip,
                addr: s.addr,
                weight: s.weight_value(),
                weight2: s.weight_var2(),
                weight3: s.weight_var3(),
                data_src: s.data_src,
                phys_addr: s.phys_addr,
                cgroup: s.cgroup,
                transaction: s.transaction,
                chain_tid: row.tid,
                // A read's values are counted in a u64 field, but each
                // takes 8 bytes or more of a record of at most 64 KiB.
                reads: row.members.len() as u32,
            },
            row.frames,
            row.members,
            s.branch_stack.as_ref().map(|b| {
                b.entries().zip(row.branch_frames).enumerate().map(
                    |(index, (entry, &(from_frame, to_frame)))| Branch {
                        sample_id,
                        index: index as u32,
                        entry,
                        counter: b.counters.and_then(|c| c.get(index)),
                        from_frame,
                        to_frame,
                    },
                )
            }),
            tickets,
        )?;
        self.push_beside(s, sample_id)?;
        self.count += 1;
        Ok(())
    }

    /// The rows sample `s` adds beside its own on this thread: its raw
    /// bytes, its data source.
    fn push_beside(&mut self, s: &Sample<'_>, sample_id: u64) -> Result<(), Error> {
        if let Some(v) = s.data_src {
            self.data_src.insert(v);
        }
        if let Some(raw) = s.raw {
            self.raw.row().u(sample_id).bytes(raw).end()?;
        }
        Ok(())
    }

    /// Finishes the tables written on this thread and hands the last
    /// samples (and `tickets`' last locations) to the samples thread,
    /// which then writes the stacks table: [`Pending::wait`] for it.
    pub(crate) fn finish(self, tickets: &mut TicketBook<Location>) -> Result<Pending, Error> {
        self.raw.finish()?;
        self.rows.finish(tickets)
    }
}

/// One sample's fields for the samples table.
pub(crate) struct Fields {
    pub(crate) sample_id: u64,
    pub(crate) time: Option<u64>,
    pub(crate) pid: Option<u32>,
    pub(crate) tid: Option<u32>,
    pub(crate) cpu: Option<u32>,
    pub(crate) event: u32,
    /// The cpu mode: three bits of `misc`.
    pub(crate) cpumode: u8,
    pub(crate) period: u64,
    /// A location ticket on the way, its id once on the samples thread.
    pub(crate) leaf_frame: Option<u32>,
    pub(crate) ip: Option<u64>,
    pub(crate) addr: Option<u64>,
    pub(crate) weight: Option<u64>,
    pub(crate) weight2: Option<u16>,
    pub(crate) weight3: Option<u16>,
    pub(crate) data_src: Option<u64>,
    pub(crate) phys_addr: Option<u64>,
    pub(crate) cgroup: Option<u64>,
    pub(crate) transaction: Option<u64>,
    pub(crate) chain_tid: u32,
    /// How many of the batch's `reads` are this sample's group read's
    /// values; 0 without a group read.
    pub(crate) reads: u32,
}

/// One branch-stack entry of a sample, for the branches table.
struct Branch {
    sample_id: u64,
    index: u32,
    entry: BranchEntry,
    counter: Option<u64>,
    /// Location tickets of `entry.from` and `entry.to`.
    from_frame: u32,
    to_frame: u32,
}

/// Samples on their way to the samples thread: row `i`'s frames are
/// `frames[ends[i - 1]..ends[i]]`; its group read's values are the next
/// `rows[i].reads` entries of `reads`. `locations` are the
/// locations found since the last batch, in ticket order: the batch's
/// tickets are theirs or those of batches before.
struct Batch {
    rows: Vec<Fields>,
    frames: Vec<u32>,
    ends: Vec<usize>,
    reads: Vec<ReadValue>,
    branches: Vec<Branch>,
    locations: Vec<Location>,
}

impl Batch {
    fn new() -> Batch {
        Batch {
            rows: Vec::with_capacity(BATCH),
            frames: Vec::with_capacity(BATCH * 8),
            ends: Vec::with_capacity(BATCH),
            reads: Vec::new(),
            branches: Vec::new(),
            locations: Vec::new(),
        }
    }

    fn clear(&mut self) {
        self.rows.clear();
        self.frames.clear();
        self.ends.clear();
        self.reads.clear();
        self.branches.clear();
        self.locations.clear();
    }
}

/// The reading thread's end of the samples thread.
struct RowsThread {
    batch: Batch,
    /// Batches to the samples thread, and back emptied to fill again.
    tx: Option<Handoff<Batch, Infallible>>,
    /// Where the samples thread sends the locations of each segment, and
    /// the last ones when the last batch is in; handed to [`Pending`].
    locations: Option<Receiver<Located>>,
    thread: Option<JoinHandle<Result<(), Error>>>,
}

/// The samples thread, writing the stacks table once the samples are in.
pub(crate) struct Pending {
    thread: Option<JoinHandle<Result<(), Error>>>,
    /// The distinct locations, by id, once every ticket is interned.
    locations: Receiver<Located>,
}

impl Pending {
    /// The capture's distinct locations not yet taken with
    /// [`SampleTables::segment`], by id: those of the segments still
    /// waiting, then the last ones, ready as soon as the samples thread
    /// has taken in the last batch (it then goes on writing the samples
    /// and stacks). Each set goes to `each` in order.
    pub(crate) fn locations(
        &mut self,
        mut each: impl FnMut(Vec<Location>) -> Result<(), Error>,
    ) -> Result<(), Error> {
        loop {
            match self.locations.recv() {
                Ok(Located::Segment(l)) => each(l)?,
                Ok(Located::Last(l)) => return each(l),
                // The thread ended without them: its error says why.
                Err(_) => {
                    return Err(join(&mut self.thread)
                        .err()
                        .unwrap_or_else(|| Error::thread("samples", ThreadFailure::StoppedEarly)))
                }
            }
        }
    }

    /// Waits for the samples and stacks tables to be written.
    pub(crate) fn wait(mut self) -> Result<(), Error> {
        join(&mut self.thread)
    }
}

impl Drop for Pending {
    /// A conversion that stopped early still waits for the samples thread
    /// (which then finds its channel closed), leaving no thread behind.
    fn drop(&mut self) {
        let _ = join(&mut self.thread);
    }
}

fn join(thread: &mut Option<JoinHandle<Result<(), Error>>>) -> Result<(), Error> {
    match thread.take().map(JoinHandle::join) {
        Some(Ok(r)) => r,
        Some(Err(_)) => Err(Error::thread("samples", ThreadFailure::Panicked)),
        None => Ok(()),
    }
}

impl RowsThread {
    fn start(
        samples: Table,
        branches: Table,
        stacks: Table,
        read_values: Table,
        positions: MemberPositions,
        segments: Option<Segments>,
        rows_of_reads: ReadValues,
    ) -> Result<RowsThread, Error> {
        let (tx, rx) = handoff::<Batch, Infallible>(BATCHES_IN_FLIGHT);
        // Not bounded: the samples thread must never wait for the reading
        // thread, which may be waiting to send it a batch. The reading
        // thread takes each segment within a few thousand samples.
        let (located_tx, located) = channel::<Located>();
        let tables = RowTables {
            samples,
            branches,
            stacks,
            read_values,
            positions,
        };
        let groups = Groups::new(rows_of_reads);
        let thread = std::thread::Builder::new()
            .name("samples".into())
            .spawn(move || write_rows(rx, located_tx, tables, groups, segments))
            .map_err(|e| Error::thread("samples", ThreadFailure::Start(e)))?;
        Ok(RowsThread {
            batch: Batch::new(),
            tx: Some(tx),
            locations: Some(located),
            thread: Some(thread),
        })
    }

    fn push(
        &mut self,
        fields: Fields,
        frames: &[u32],
        reads: &[MemberDelta],
        branches: Option<impl Iterator<Item = Branch>>,
        tickets: &mut TicketBook<Location>,
    ) -> Result<(), Error> {
        self.batch.rows.push(fields);
        self.batch.frames.extend_from_slice(frames);
        self.batch.reads.extend(reads.iter().map(ReadValue::of));
        self.batch.ends.push(self.batch.frames.len());
        if let Some(b) = branches {
            self.batch.branches.extend(b);
        }
        if self.batch.rows.len() >= BATCH {
            self.send(tickets)?;
        }
        Ok(())
    }

    fn send(&mut self, tickets: &mut TicketBook<Location>) -> Result<(), Error> {
        tickets.hand_over(&mut self.batch.locations);
        let next = self.tx.as_ref().and_then(Handoff::spare);
        let batch = std::mem::replace(&mut self.batch, next.unwrap_or_else(Batch::new));
        if self.tx.as_ref().is_some_and(|tx| tx.send(batch)) {
            return Ok(());
        }
        // The samples thread stopped: its error says why.
        self.tx = None;
        Err(join(&mut self.thread)
            .err()
            .unwrap_or_else(|| Error::thread("samples", ThreadFailure::StoppedEarly)))
    }

    fn finish(mut self, tickets: &mut TicketBook<Location>) -> Result<Pending, Error> {
        // Sent even without rows: the last locations found must arrive.
        self.send(tickets)?;
        self.tx = None;
        // An Option only so that `finish` can move it out of a type with
        // a Drop: nothing else takes it.
        let locations = self.locations.take().expect("taken only by finish");
        Ok(Pending {
            thread: self.thread.take(),
            locations,
        })
    }
}

impl Drop for RowsThread {
    /// An abandoned conversion still stops the samples thread.
    fn drop(&mut self) {
        self.tx = None;
        let _ = join(&mut self.thread);
    }
}

/// The tables the samples thread writes.
struct RowTables {
    samples: Table,
    branches: Table,
    stacks: Table,
    read_values: Table,
    /// Where a read's values go among `m0..m15`.
    positions: MemberPositions,
}

/// The row groups the samples thread fills.
struct Groups {
    samples: SampleColumns,
    /// `None` where read_values is left without rows.
    read_values: Option<ReadValueColumns>,
}

impl Groups {
    /// Empty groups; read_values' only where it gets rows.
    fn new(read_values: ReadValues) -> Groups {
        Groups {
            samples: SampleColumns::new(),
            read_values: (read_values == ReadValues::Rows).then(ReadValueColumns::new),
        }
    }

    /// Appends sample `f`'s row, of stack `stack_id`, and the rows of its
    /// group read's values `reads`.
    fn push(
        &mut self,
        tables: &mut RowTables,
        f: &Fields,
        stack_id: Option<u32>,
        reads: &[ReadValue],
    ) -> Result<(), Error> {
        if let Some(rows) = &mut self.read_values {
            let mut rest = reads;
            while !rest.is_empty() {
                let n = rows.extend(f.sample_id, rest);
                rest = rest.get(n..).unwrap_or_default();
                flush(rows, &mut tables.read_values, false)?;
            }
        }
        let mut by_member = [None; MEMBER_COLUMNS];
        let n = tables.positions.place(reads, &mut by_member);
        self.samples.push(f, stack_id, &by_member[..n]);
        flush(&mut self.samples, &mut tables.samples, false)
    }

    /// Writes the last groups, whatever their length.
    fn finish(mut self, tables: &mut RowTables) -> Result<(), Error> {
        flush(&mut self.samples, &mut tables.samples, true)?;
        match &mut self.read_values {
            Some(rows) => flush(rows, &mut tables.read_values, true),
            None => Ok(()),
        }
    }
}

/// The samples thread: locations given ids, stacks interned, rows written;
/// then the locations sent back, and the stacks written. Under a limit
/// (`segments`), the stacks are written and the locations sent back
/// whenever they reach it.
fn write_rows(
    rx: Inbox<Batch, Infallible>,
    located: Sender<Located>,
    mut tables: RowTables,
    mut groups: Groups,
    segments: Option<Segments>,
) -> Result<(), Error> {
    let mut ids = TicketIds::new();
    let mut stacks = Stacks::default();
    while let Some(Down::Batch(mut b)) = rx.recv() {
        ids.add(&b.locations);
        for t in &mut b.frames {
            *t = ids.id(*t);
        }
        let mut start = 0;
        let chains: Vec<Chain<'_>> = (b.ends.iter())
            .map(|&end| {
                let frames = b.frames.get(start..end).unwrap_or_default();
                start = end;
                Chain::new(frames)
            })
            .collect();
        let mut reads = b.reads.as_slice();
        for (i, (f, chain)) in b.rows.iter_mut().zip(&chains).enumerate() {
            // A later row's stack lookup is fetched into the cache
            // meanwhile.
            if let Some(ahead) = chains.get(i + PREFETCH_ROWS) {
                stacks.prefetch(ahead);
            }
            let (mine, rest) = reads.split_at((f.reads as usize).min(reads.len()));
            reads = rest;
            f.leaf_frame = f.leaf_frame.map(|t| ids.id(t));
            let stack_id = stacks.intern(f.chain_tid, chain);
            if let Some(limit) = segments {
                let locations = match limit.locations {
                    true => ids.segment_len() * LOCATION_BYTES,
                    false => 0,
                };
                if (stacks.bytes() + locations) as u64 >= limit.bytes {
                    // Ids given before stay valid: this batch's rows and
                    // the reading thread's cached tickets may still
                    // name locations of the segment cut.
                    if limit.locations {
                        let segment = ids.cut();
                        if !segment.is_empty() {
                            let _ = located.send(Located::Segment(segment));
                        }
                    }
                    stacks.cut(&mut tables.stacks, ids.first_id())?;
                }
            }
            groups.push(&mut tables, f, stack_id, mine)?;
        }
        for b in &b.branches {
            write_branch(&mut tables.branches, b, &ids)?;
        }
        b.clear();
        // The reading thread may have finished: then the batch is dropped.
        rx.give_back(b);
    }
    // The reading thread waits for these to symbolize while this one
    // finishes the samples and writes the stacks. It may have stopped
    // early on an error: then nobody waits.
    let _ = located.send(Located::Last(ids.into_numbered().keys));
    groups.finish(&mut tables)?;
    tables.samples.finish()?;
    tables.read_values.finish()?;
    tables.branches.finish()?;
    stacks.write(tables.stacks)
}

/// Writes branch entry `b`, its endpoints' tickets made ids.
fn write_branch(branches: &mut Table, b: &Branch, ids: &TicketIds<Location>) -> Result<(), Error> {
    let e = &b.entry;
    let f = e.flags();
    branches
        .row()
        .u(b.sample_id)
        .u(u64::from(b.index))
        .u(e.from)
        .u(e.to)
        .u(u64::from(ids.id(b.from_frame)))
        .u(u64::from(ids.id(b.to_frame)))
        .u(u64::from(f.mispred))
        .u(u64::from(f.predicted))
        .u(u64::from(f.in_tx))
        .u(u64::from(f.abort))
        .u(u64::from(f.cycles))
        .u(u64::from(f.type_))
        .u(u64::from(f.spec))
        .u(u64::from(f.new_type))
        .u(u64::from(f.priv_))
        .opt_u(b.counter)
        .end()
}
