//! The frames table: one row per inlining level of each distinct location
//! (callchain frames and branch endpoints), outermost function first.

use perfq_symbolize::{DsoId, DsoKind, InlineFrame, Location, Resolutions, Resolved, Tracker};

use crate::convert::schema::FRAMES;
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
        match r.map(|r| &r.inlined[..]) {
            // Outermost function first: depth 0 is the symbol's function.
            Some(levels) if !levels.is_empty() => {
                for (depth, f) in levels.iter().rev().enumerate() {
                    row.push(&mut t, i, depth, dso, r, Some(f))?;
                }
            }
            _ => row.push(&mut t, i, 0, dso, r, None)?,
        }
    }
    t.finish()
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

    fn push(
        &self,
        t: &mut Table,
        frame_id: usize,
        depth: usize,
        dso: &str,
        r: Option<&Resolved>,
        f: Option<&InlineFrame>,
    ) -> Result<(), Error> {
        let symbol = r.and_then(|r| r.symbol.as_deref());
        let raw_symbol = r.and_then(|r| r.raw_symbol.as_deref());
        t.row()
            .u(frame_id as u64)
            .u(depth as u64)
            .opt_str(f.and_then(|f| f.function.as_deref()).or(symbol))
            .opt_str(f.and_then(|f| f.raw_function.as_deref()).or(raw_symbol))
            .opt_str(f.and_then(|f| f.file.as_deref()))
            .opt_u(f.and_then(|f| f.line).map(u64::from))
            .opt_str(symbol)
            .opt_str(raw_symbol)
            .str(dso)
            .opt_u(self.dso_id.map(u64::from))
            .opt_str(self.dso_path)
            .opt_str(self.build_id)
            .u(self.address)
            .opt_u(self.offset)
            .str(self.kind)
            .opt_str(r.and_then(|r| r.reason.as_ref()).map(|why| why.name()))
            .end()
    }
}
