//! The frames table: one row per inlining level of each distinct location
//! (callchain frames and branch endpoints), outermost function first.

use std::sync::Arc;

use arrow_array::builder::{UInt16Builder, UInt32Builder, UInt64Builder};
use arrow_array::{ArrayRef, StringArray};
use arrow_buffer::{Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use perfq_symbolize::{DsoId, DsoKind, InlineFrame, Location, Resolutions, Resolved, Tracker};

use crate::convert::schema::FRAMES;
use crate::table::ROWS_PER_GROUP;
use crate::{CaptureWriter, Error, Table};

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

/// Writes the frames of `locations` (by id), with what symbolization
/// found for each in `resolved` (empty without symbols).
pub(crate) fn write(
    w: &CaptureWriter,
    tracker: &Tracker,
    locations: &[Location],
    resolved: &Resolutions,
) -> Result<(), Error> {
    let mut t = w.table("frames", FRAMES)?;
    let dsos = tracker.dsos();
    let text: Vec<DsoText<'_>> = dsos
        .iter()
        .map(|(_, d)| DsoText {
            path: d.path.as_str(),
            build_id: d.build_id.as_deref().map(super::hex),
            short_name: d.short_name().into_owned(),
        })
        .collect();
    let text_of = |id: DsoId| text.get(id.0 as usize);
    let mut group = Group::sized_like(None);
    for (i, l) in locations.iter().enumerate() {
        let r = resolved.get(i);
        let r = r.as_deref();
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
        let dso = match (r, *l) {
            (Some(r), _) => &*r.dso,
            (None, Location::Dso { dso, .. })
            | (
                None,
                Location::Kernel {
                    module: Some(dso), ..
                },
            ) => text_of(dso).map_or("[unknown]", |d| d.short_name.as_str()),
            (None, Location::Kernel { module: None, .. }) => "[kernel.kallsyms]",
            (None, Location::Unmapped { .. }) => "[unknown]",
        };
        // A row per inlining level, outermost function first (depth 0 is
        // the symbol's function); one without a level if there are none.
        let inlined = r.map_or(&[][..], |r| &r.inlined[..]);
        let levels = (inlined.iter().rev().map(Some)).chain(inlined.is_empty().then_some(None));
        for (depth, f) in levels.enumerate() {
            group.push(&row, i, depth, dso, r, f);
            group.send_if_full(&mut t)?;
        }
    }
    if group.rows > 0 {
        t.push_group(group.finish())?;
    }
    t.finish()
}

/// One row group of the frames table being filled, a builder per column
/// (in [`FRAMES`]' order): a system-wide capture has hundreds of
/// thousands of frames, and [`Table::row`]'s call per cell, which finds
/// the column's builder and matches its kind, was most of the time of
/// writing them on the thread every other step waits for.
struct Group {
    rows: usize,
    frame_id: UInt32Builder,
    inline_depth: UInt16Builder,
    function: TextColumn,
    raw_function: TextColumn,
    file: TextColumn,
    line: UInt32Builder,
    symbol: TextColumn,
    raw_symbol: TextColumn,
    dso: TextColumn,
    dso_id: UInt32Builder,
    dso_path: TextColumn,
    build_id: TextColumn,
    address: UInt64Builder,
    dso_offset: UInt64Builder,
    kind: TextColumn,
    unresolved: TextColumn,
}

impl Group {
    /// An empty group whose text buffers are as large as `like`'s (the
    /// group before, if any) ended: made that large at once instead of
    /// doubling their way there.
    fn sized_like(like: Option<&Group>) -> Group {
        let n = ROWS_PER_GROUP;
        let text = |column: fn(&Group) -> &TextColumn| {
            TextColumn::with_capacity(n, like.map_or(0, |g| column(g).bytes.len()))
        };
        Group {
            rows: 0,
            frame_id: UInt32Builder::with_capacity(n),
            inline_depth: UInt16Builder::with_capacity(n),
            function: text(|g| &g.function),
            raw_function: text(|g| &g.raw_function),
            file: text(|g| &g.file),
            line: UInt32Builder::with_capacity(n),
            symbol: text(|g| &g.symbol),
            raw_symbol: text(|g| &g.raw_symbol),
            dso: text(|g| &g.dso),
            dso_id: UInt32Builder::with_capacity(n),
            dso_path: text(|g| &g.dso_path),
            build_id: text(|g| &g.build_id),
            address: UInt64Builder::with_capacity(n),
            dso_offset: UInt64Builder::with_capacity(n),
            kind: text(|g| &g.kind),
            unresolved: text(|g| &g.unresolved),
        }
    }

    /// Appends the row of inlining level `depth` of location `frame_id`.
    fn push(
        &mut self,
        row: &Row<'_>,
        frame_id: usize,
        depth: usize,
        dso: &str,
        r: Option<&Resolved>,
        f: Option<&InlineFrame>,
    ) {
        let symbol = r.and_then(|r| r.symbol.as_deref());
        let raw_symbol = r.and_then(|r| r.raw_symbol.as_deref());
        // Numbers too large for their column are null, as `Table::row`
        // writes them.
        self.frame_id.append_option(u32::try_from(frame_id).ok());
        self.inline_depth.append_option(u16::try_from(depth).ok());
        self.function
            .push(f.and_then(|f| f.function.as_deref()).or(symbol));
        self.raw_function
            .push(f.and_then(|f| f.raw_function.as_deref()).or(raw_symbol));
        self.file.push(f.and_then(|f| f.file.as_deref()));
        self.line.append_option(f.and_then(|f| f.line));
        self.symbol.push(symbol);
        self.raw_symbol.push(raw_symbol);
        self.dso.push(Some(dso));
        self.dso_id.append_option(row.dso_id);
        self.dso_path.push(row.dso_path);
        self.build_id.push(row.build_id);
        self.address.append_value(row.address);
        self.dso_offset.append_option(row.offset);
        self.kind.push(Some(row.kind));
        self.unresolved
            .push(r.and_then(|r| r.reason.as_ref()).map(|why| why.name()));
        self.rows += 1;
    }

    /// Hands the group to `t` once it is full (or its text near the
    /// most a column's 32-bit offsets can address), and starts the next.
    fn send_if_full(&mut self, t: &mut Table) -> Result<(), Error> {
        let text = [
            &self.function,
            &self.raw_function,
            &self.file,
            &self.symbol,
            &self.raw_symbol,
        ];
        let near_limit = text.iter().any(|c| c.bytes.len() > TextColumn::GROUP_BYTES);
        if self.rows < ROWS_PER_GROUP && !near_limit {
            return Ok(());
        }
        let next = Group::sized_like(Some(self));
        let full = std::mem::replace(self, next);
        t.push_group(full.finish())
    }

    /// The group's columns, in [`FRAMES`]' order.
    fn finish(mut self) -> Vec<ArrayRef> {
        let columns: Vec<ArrayRef> = vec![
            Arc::new(self.frame_id.finish()),
            Arc::new(self.inline_depth.finish()),
            self.function.finish(),
            self.raw_function.finish(),
            self.file.finish(),
            Arc::new(self.line.finish()),
            self.symbol.finish(),
            self.raw_symbol.finish(),
            self.dso.finish(),
            Arc::new(self.dso_id.finish()),
            self.dso_path.finish(),
            self.build_id.finish(),
            Arc::new(self.address.finish()),
            Arc::new(self.dso_offset.finish()),
            self.kind.finish(),
            self.unresolved.finish(),
        ];
        debug_assert_eq!(columns.len(), FRAMES.len());
        columns
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

/// A text column of a row group: offsets, bytes and validity in vectors
/// of their own. Arrow's string builder grows its validity bitmap a byte
/// at a time (a call to memset each) and made a null cost about fifty
/// instructions; the frames table's text columns are mostly null on
/// system-wide captures (the unmapped addresses' names, files, build ids),
/// millions of cells.
struct TextColumn {
    /// Where each value ends in `bytes`, after a leading 0.
    offsets: Vec<i32>,
    bytes: Vec<u8>,
    valid: Vec<bool>,
    nulls: usize,
}

impl TextColumn {
    /// Text a row group's column holds at most: past it the group is
    /// handed on early, far from where 32-bit offsets end.
    const GROUP_BYTES: usize = 1 << 30;

    /// Room for `rows` values of `bytes` bytes in all.
    fn with_capacity(rows: usize, bytes: usize) -> TextColumn {
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        TextColumn {
            offsets,
            bytes: Vec::with_capacity(bytes),
            valid: Vec::with_capacity(rows),
            nulls: 0,
        }
    }

    /// Appends a value or a null. A value that would take the column past
    /// what 32-bit offsets address is written as null; groups are handed
    /// on at [`TextColumn::GROUP_BYTES`], so only a single name of over a
    /// gigabyte could be.
    #[inline]
    fn push(&mut self, v: Option<&str>) {
        let fits = |s: &&str| self.bytes.len() + s.len() <= i32::MAX as usize;
        match v.filter(fits) {
            Some(s) => {
                self.bytes.extend_from_slice(s.as_bytes());
                self.valid.push(true);
            }
            None => {
                self.nulls += 1;
                self.valid.push(false);
            }
        }
        // At most i32::MAX (above): the conversion holds.
        self.offsets
            .push(i32::try_from(self.bytes.len()).unwrap_or(i32::MAX));
    }

    fn finish(&mut self) -> ArrayRef {
        let offsets = OffsetBuffer::new(ScalarBuffer::from(std::mem::take(&mut self.offsets)));
        let nulls = (self.nulls > 0).then(|| NullBuffer::from(std::mem::take(&mut self.valid)));
        let bytes = Buffer::from_vec(std::mem::take(&mut self.bytes));
        // SAFETY: every value was appended from a `&str`, so the bytes are
        // UTF-8 and each offset (taken after a whole value) is on a
        // character boundary; offsets start at 0, never decrease, and
        // are exact (`push` keeps the bytes within i32::MAX), so the
        // last is the length of the bytes.
        Arc::new(unsafe { StringArray::new_unchecked(offsets, bytes, nulls) })
    }
}
