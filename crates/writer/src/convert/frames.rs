//! The frames table: one row per inlining level of each distinct location
//! (callchain frames and branch endpoints), outermost function first.

use std::sync::Arc;

use arrow_array::builder::{StringBuilder, UInt16Builder, UInt32Builder, UInt64Builder};
use arrow_array::ArrayRef;
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
    function: StringBuilder,
    raw_function: StringBuilder,
    file: StringBuilder,
    line: UInt32Builder,
    symbol: StringBuilder,
    raw_symbol: StringBuilder,
    dso: StringBuilder,
    dso_id: UInt32Builder,
    dso_path: StringBuilder,
    build_id: StringBuilder,
    address: UInt64Builder,
    dso_offset: UInt64Builder,
    kind: StringBuilder,
    unresolved: StringBuilder,
}

impl Group {
    /// An empty group whose text buffers are as large as `like`'s (the
    /// group before, if any) ended: made that large at once instead of
    /// doubling their way there.
    fn sized_like(like: Option<&Group>) -> Group {
        let n = ROWS_PER_GROUP;
        let text = |column: fn(&Group) -> &StringBuilder| {
            StringBuilder::with_capacity(n, like.map_or(0, |g| column(g).values_slice().len()))
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
            .append_option(f.and_then(|f| f.function.as_deref()).or(symbol));
        self.raw_function
            .append_option(f.and_then(|f| f.raw_function.as_deref()).or(raw_symbol));
        self.file.append_option(f.and_then(|f| f.file.as_deref()));
        self.line.append_option(f.and_then(|f| f.line));
        self.symbol.append_option(symbol);
        self.raw_symbol.append_option(raw_symbol);
        self.dso.append_value(dso);
        self.dso_id.append_option(row.dso_id);
        self.dso_path.append_option(row.dso_path);
        self.build_id.append_option(row.build_id);
        self.address.append_value(row.address);
        self.dso_offset.append_option(row.offset);
        self.kind.append_value(row.kind);
        self.unresolved
            .append_option(r.and_then(|r| r.reason.as_ref()).map(|why| why.name()));
        self.rows += 1;
    }

    /// Hands the group to `t` once it is full, and starts the next.
    fn send_if_full(&mut self, t: &mut Table) -> Result<(), Error> {
        if self.rows < ROWS_PER_GROUP {
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
            Arc::new(self.function.finish()),
            Arc::new(self.raw_function.finish()),
            Arc::new(self.file.finish()),
            Arc::new(self.line.finish()),
            Arc::new(self.symbol.finish()),
            Arc::new(self.raw_symbol.finish()),
            Arc::new(self.dso.finish()),
            Arc::new(self.dso_id.finish()),
            Arc::new(self.dso_path.finish()),
            Arc::new(self.build_id.finish()),
            Arc::new(self.address.finish()),
            Arc::new(self.dso_offset.finish()),
            Arc::new(self.kind.finish()),
            Arc::new(self.unresolved.finish()),
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
