//! The frames table: one row per inlining level of each distinct location
//! (callchain frames and branch endpoints), outermost function first.

use std::borrow::Cow;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::builder::{UInt16Builder, UInt32Builder, UInt64Builder};
use arrow_array::ArrayRef;
use perfq_symbolize::{
    DsoId, DsoKind, Dsos, InlineFrame, Location, Placed, Resolutions, Resolved, Symbolizer,
    TrackerAt,
};

use crate::convert::schema::FRAMES;
use crate::dictionary::{Text, TextDictionary};
use crate::table::ROWS_PER_GROUP;
use crate::{CaptureWriter, Error, Table, ThreadFailure};

/// The `kind` column's word for a DSO kind.
pub(crate) fn kind_name(kind: DsoKind) -> &'static str {
    match kind {
        DsoKind::Jit => "jit",
        DsoKind::Anon => "anon",
        DsoKind::Vdso => "vdso",
        DsoKind::Kernel | DsoKind::KernelModule => "kernel",
        DsoKind::User => "user",
    }
}

/// What frames show of one DSO, worked out once per DSO rather than once
/// per frame (a capture has hundreds of thousands of frames in a few
/// hundred DSOs).
struct DsoText<'a> {
    path: &'a str,
    build_id: Option<String>,
    /// The name perf shows, for frames without symbolization.
    short_name: String,
}

/// The frames table, written a segment of locations at a time (all of
/// them at once unless the stacks are cut into segments, see
/// `Stacks::cut`).
pub(crate) struct Frames {
    /// Where the locations' names come from (`None`: addresses only).
    symbolizer: Option<Arc<Symbolizer>>,
    t: Table,
    /// The id of the next location written.
    next: usize,
}

impl Frames {
    pub(crate) fn create(
        w: &CaptureWriter,
        symbolizer: Option<Arc<Symbolizer>>,
    ) -> Result<Frames, Error> {
        Ok(Frames {
            symbolizer,
            t: w.table("frames", FRAMES)?,
            next: 0,
        })
    }

    /// Symbolizes `locations` (the next ids, in order; in `dsos`, with the
    /// kernel reference symbol `kernel_ref`) and writes their frames.
    /// Gives back them and their resolutions, to be dropped when
    /// convenient.
    pub(crate) fn write(
        &mut self,
        dsos: &Dsos,
        kernel_ref: Option<(&str, u64)>,
        locations: Vec<Location>,
    ) -> Result<(Vec<Location>, Resolutions), Error> {
        let resolved = match &self.symbolizer {
            Some(s) => s.resolve_in(dsos, kernel_ref, &locations),
            None => Resolutions::default(),
        };
        write(&mut self.t, self.next, dsos, &locations, &resolved)?;
        self.next += locations.len();
        Ok((locations, resolved))
    }

    pub(crate) fn finish(self) -> Result<(), Error> {
        self.t.finish()
    }
}

/// A segment of locations for [`FramesThread`], with the DSOs and kernel
/// reference as of its cut.
struct Segment {
    locations: Vec<Location>,
    at: TrackerAt,
}

/// [`Frames`], written on a thread of its own once there are segments:
/// the segments of locations cut while the capture is read (see
/// `Stacks::cut`) are symbolized and written there, while the reading
/// thread, which every other one waits for, goes on. Without segments
/// there is no thread.
pub(crate) struct FramesThread {
    /// The table until the first segment, when it moves to the thread.
    here: Option<Frames>,
    tx: Option<SyncSender<Segment>>,
    thread: Option<JoinHandle<Result<Frames, Error>>>,
}

impl FramesThread {
    pub(crate) fn new(frames: Frames) -> FramesThread {
        FramesThread {
            here: Some(frames),
            tx: None,
            thread: None,
        }
    }

    /// Starts the thread, handing it the table.
    fn start(&mut self) -> Result<(), Error> {
        let Some(frames) = self.here.take() else {
            return Ok(());
        };
        // One segment waits at most: a reading thread ahead of the
        // symbolizing waits rather than piling segments up in memory.
        let (tx, rx) = sync_channel::<Segment>(1);
        let thread = std::thread::Builder::new()
            .name("frames".into())
            .spawn(move || {
                let mut frames = frames;
                for s in rx {
                    frames.write(s.at.dsos(), s.at.kernel_ref(), s.locations)?;
                }
                Ok(frames)
            })
            .map_err(|e| Error::thread("frames", ThreadFailure::Start(e)))?;
        self.tx = Some(tx);
        self.thread = Some(thread);
        Ok(())
    }

    /// Hands over a segment's `locations`, the next ids, with the
    /// tracker as of its cut.
    pub(crate) fn write(&mut self, at: TrackerAt, locations: Vec<Location>) -> Result<(), Error> {
        self.start()?;
        let segment = Segment { locations, at };
        if self.tx.as_ref().is_some_and(|tx| tx.send(segment).is_ok()) {
            return Ok(());
        }
        // The thread stopped: its error says why.
        self.join().map(drop)
    }

    /// Waits for the segments handed over to be written; gives back the
    /// table, to write the rest on.
    pub(crate) fn finish(mut self) -> Result<Frames, Error> {
        match self.here.take() {
            Some(frames) => Ok(frames),
            None => self.join(),
        }
    }

    fn join(&mut self) -> Result<Frames, Error> {
        self.tx = None;
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(Error::thread("frames", ThreadFailure::Panicked)),
            None => Err(Error::thread("frames", ThreadFailure::StoppedEarly)),
        }
    }
}

impl Drop for FramesThread {
    /// An abandoned conversion still waits for the thread.
    fn drop(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Writes the frames of `locations`, whose ids start at `first`.
fn write(
    t: &mut Table,
    first: usize,
    dsos: &Dsos,
    locations: &[Location],
    resolved: &Resolutions,
) -> Result<(), Error> {
    let text: Vec<DsoText<'_>> = dsos
        .iter()
        .map(|(_, d)| DsoText {
            path: d.path.as_str(),
            build_id: d.build_id.as_deref().map(super::hex),
            short_name: d.short_name().into_owned(),
        })
        .collect();
    let text_of = |id: DsoId| text.get(id.0 as usize);
    // The locations no mapping contains (most of a system-wide capture's)
    // resolve alike but for their address, which no column takes from
    // the resolution: one is made for all of them, and the dictionaries
    // find its texts by where they are stored.
    let unmapped = resolved.unmapped(0);
    // Without symbolization there are no resolutions.
    let placed = (resolved.iter_placed().map(Some)).chain(std::iter::repeat_with(|| None));
    let mut group = Group::new();
    for ((i, l), placed) in locations.iter().enumerate().zip(placed) {
        let resolution = placed.map(|p| match p {
            Placed::Mapped(r) => r,
            Placed::Unmapped(_) => Cow::Borrowed(&unmapped),
        });
        let res = resolution.as_ref().map(|r| match r {
            Cow::Borrowed(r) => Res::Kept(r),
            Cow::Owned(r) => Res::Made(r),
        });
        let r = res.map(Res::get);
        let row = match *l {
            Location::Dso { dso, offset } => Row {
                kind: kind_name(dsos.get(dso).kind),
                dso_id: Some(dso.0),
                dso_path: text_of(dso).map(|d| d.path),
                build_id: text_of(dso).and_then(|d| d.build_id.as_deref()),
                address: r
                    .and_then(|r| r.binary.as_ref().map(|b| b.1))
                    .unwrap_or(offset),
                offset: Some(offset),
            },
            Location::Kernel { addr, module } => Row {
                dso_id: module.map(|m| m.0),
                ..Row::bare("kernel", addr)
            },
            Location::Unmapped { addr } => Row::bare("unknown", addr),
        };
        // Without symbolization, the names perf shows for the DSO.
        let dso = match (res, *l) {
            (Some(r), _) => r.text(|r| Some(&*r.dso)).unwrap_or(Text::Kept("[unknown]")),
            (None, Location::Dso { dso, .. })
            | (
                None,
                Location::Kernel {
                    module: Some(dso), ..
                },
            ) => Text::Kept(text_of(dso).map_or("[unknown]", |d| d.short_name.as_str())),
            (None, Location::Kernel { module: None, .. }) => Text::Kept("[kernel.kallsyms]"),
            (None, Location::Unmapped { .. }) => Text::Kept("[unknown]"),
        };
        // A row per inlining level, outermost function first (depth 0 is
        // the symbol's function); one without a level if there are none.
        let inlined = r.map_or(&[][..], |r| &r.inlined[..]);
        let levels = (inlined.iter().rev().map(Some)).chain(inlined.is_empty().then_some(None));
        for (depth, f) in levels.enumerate() {
            group.push(&row, first + i, depth, dso, res, f);
            group.send_if_full(t)?;
        }
    }
    if group.rows > 0 {
        t.push_group(group.finish())?;
    }
    Ok(())
}

/// One row group of the frames table being filled, a builder per column
/// (in [`FRAMES`]' order): a system-wide capture has hundreds of
/// thousands of frames, and [`Table::row`]'s call per cell, which finds
/// the column's builder and matches its kind, was most of the time of
/// writing them on the thread every other step waits for.
struct Group<'a> {
    rows: usize,
    frame_id: UInt32Builder,
    inline_depth: UInt16Builder,
    function: TextDictionary<'a>,
    raw_function: TextDictionary<'a>,
    file: TextDictionary<'a>,
    line: UInt32Builder,
    symbol: TextDictionary<'a>,
    raw_symbol: TextDictionary<'a>,
    dso: TextDictionary<'a>,
    dso_id: UInt32Builder,
    dso_path: TextDictionary<'a>,
    build_id: TextDictionary<'a>,
    address: UInt64Builder,
    dso_offset: UInt64Builder,
    kind: TextDictionary<'a>,
    unresolved: TextDictionary<'a>,
}

impl<'a> Group<'a> {
    fn new() -> Group<'a> {
        let n = ROWS_PER_GROUP;
        Group {
            rows: 0,
            frame_id: UInt32Builder::with_capacity(n),
            inline_depth: UInt16Builder::with_capacity(n),
            function: TextDictionary::with_capacity(n),
            raw_function: TextDictionary::with_capacity(n),
            file: TextDictionary::with_capacity(n),
            line: UInt32Builder::with_capacity(n),
            symbol: TextDictionary::with_capacity(n),
            raw_symbol: TextDictionary::with_capacity(n),
            dso: TextDictionary::with_capacity(n),
            dso_id: UInt32Builder::with_capacity(n),
            dso_path: TextDictionary::with_capacity(n),
            build_id: TextDictionary::with_capacity(n),
            address: UInt64Builder::with_capacity(n),
            dso_offset: UInt64Builder::with_capacity(n),
            kind: TextDictionary::with_capacity(n),
            unresolved: TextDictionary::with_capacity(n),
        }
    }

    /// Appends the row of inlining level `depth` (`f`, if any) of
    /// location `frame_id`, resolved as `r` (if symbolized).
    fn push(
        &mut self,
        row: &Row<'a>,
        frame_id: usize,
        depth: usize,
        dso: Text<'a, '_>,
        r: Option<Res<'a, '_>>,
        f: Option<&InlineFrame>,
    ) {
        let symbol = r.and_then(|r| r.text(|r| r.symbol.as_deref()));
        let raw_symbol = r.and_then(|r| r.text(|r| r.raw_symbol.as_deref()));
        // Numbers too large for their column are null, as `Table::row`
        // writes them.
        self.frame_id.append_option(u32::try_from(frame_id).ok());
        self.inline_depth.append_option(u16::try_from(depth).ok());
        // An inlined function's names and file are strings of its own,
        // found by their text.
        fn own<'a, 'b>(v: &'b Option<String>) -> Option<Text<'a, 'b>> {
            v.as_deref().map(Text::Made)
        }
        self.function
            .put(f.and_then(|f| own(&f.function)).or(symbol));
        self.raw_function
            .put(f.and_then(|f| own(&f.raw_function)).or(raw_symbol));
        self.file.put(f.and_then(|f| own(&f.file)));
        self.line.append_option(f.and_then(|f| f.line));
        self.symbol.put(symbol);
        self.raw_symbol.put(raw_symbol);
        self.dso.put(Some(dso));
        self.dso_id.append_option(row.dso_id);
        self.dso_path.push(row.dso_path);
        self.build_id.push(row.build_id);
        self.address.append_value(row.address);
        self.dso_offset.append_option(row.offset);
        self.kind.push(Some(row.kind));
        let why = r.and_then(|r| r.get().reason.as_ref());
        self.unresolved.push(why.map(|why| why.name()));
        self.rows += 1;
    }

    /// Hands the group to `t` once it is full (or its dictionaries near
    /// the most a column's 32-bit offsets can address), and starts the
    /// next.
    fn send_if_full(&mut self, t: &mut Table) -> Result<(), Error> {
        let text = [
            &self.function,
            &self.raw_function,
            &self.file,
            &self.symbol,
            &self.raw_symbol,
        ];
        let near_limit = text
            .iter()
            .any(|c| c.dictionary_bytes() > TextDictionary::GROUP_BYTES);
        if self.rows < ROWS_PER_GROUP && !near_limit {
            return Ok(());
        }
        t.push_group(self.finish())
    }

    /// The group's columns, in [`FRAMES`]' order; the group is left
    /// empty for the next rows, its dictionaries' tables as large as they
    /// grew.
    fn finish(&mut self) -> Vec<ArrayRef> {
        let n = ROWS_PER_GROUP;
        let u32s = |b: &mut UInt32Builder| {
            Arc::new(std::mem::replace(b, UInt32Builder::with_capacity(n)).finish()) as ArrayRef
        };
        let u64s = |b: &mut UInt64Builder| {
            Arc::new(std::mem::replace(b, UInt64Builder::with_capacity(n)).finish()) as ArrayRef
        };
        let columns: Vec<ArrayRef> = vec![
            u32s(&mut self.frame_id),
            Arc::new(
                std::mem::replace(&mut self.inline_depth, UInt16Builder::with_capacity(n)).finish(),
            ),
            self.function.finish(),
            self.raw_function.finish(),
            self.file.finish(),
            u32s(&mut self.line),
            self.symbol.finish(),
            self.raw_symbol.finish(),
            self.dso.finish(),
            u32s(&mut self.dso_id),
            self.dso_path.finish(),
            self.build_id.finish(),
            u64s(&mut self.address),
            u64s(&mut self.dso_offset),
            self.kind.finish(),
            self.unresolved.finish(),
        ];
        debug_assert_eq!(columns.len(), FRAMES.len());
        self.rows = 0;
        columns
    }
}

/// A location's resolution: one kept for the whole write, or one made
/// for it (a location no mapping contains).
#[derive(Clone, Copy)]
enum Res<'a, 'b> {
    Kept(&'a Resolved),
    Made(&'b Resolved),
}

impl<'a, 'b> Res<'a, 'b> {
    fn get(self) -> &'b Resolved
    where
        'a: 'b,
    {
        match self {
            Res::Kept(r) | Res::Made(r) => r,
        }
    }

    /// A text of the resolution, as kept or made.
    fn text(self, of: impl for<'r> Fn(&'r Resolved) -> Option<&'r str>) -> Option<Text<'a, 'b>> {
        match self {
            Res::Kept(r) => of(r).map(Text::Kept),
            Res::Made(r) => of(r).map(Text::Made),
        }
    }
}
/// What a location's rows share.
struct Row<'a> {
    kind: &'static str,
    dso_id: Option<u32>,
    dso_path: Option<&'a str>,
    build_id: Option<&'a str>,
    address: u64,
    offset: Option<u64>,
}

impl Row<'_> {
    fn bare(kind: &'static str, address: u64) -> Self {
        Row {
            kind,
            dso_id: None,
            dso_path: None,
            build_id: None,
            address,
            offset: None,
        }
    }
}
