//! The frames table: one row per inlining level of each distinct location
//! (callchain frames and branch endpoints), outermost function first.

use perfq_symbolize::{DsoKind, InlineFrame, Location, Resolved, Tracker};

use crate::convert::schema::FRAMES;
use crate::{CaptureWriter, Cell, Error, Table};

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

/// Writes the frames of `locations` (by id), with what symbolization
/// found for each in `resolved` (empty without symbols).
pub(crate) fn write(
    w: &CaptureWriter,
    tracker: &Tracker,
    locations: &[Location],
    resolved: &[Resolved],
) -> Result<(), Error> {
    let mut t = w.table("frames", FRAMES)?;
    let dsos = tracker.dsos();
    for (i, l) in locations.iter().enumerate() {
        let r = resolved.get(i);
        let row = match *l {
            Location::Dso { dso, offset } => {
                let d = dsos.get(dso);
                Row {
                    kind: kind_name(d.kind),
                    dso_id: Some(dso.0),
                    dso_path: Some(d.path.as_str()),
                    build_id: d.build_id.as_deref().map(super::hex),
                    address: r
                        .and_then(|r| r.binary.as_ref().map(|b| b.1))
                        .unwrap_or(offset),
                    offset: Some(offset),
                }
            }
            Location::Kernel { addr, module } => Row {
                dso_id: module.map(|m| m.0),
                ..Row::bare("kernel", addr)
            },
            Location::Unmapped { addr } => Row::bare("unknown", addr),
        };
        // Without symbolization, the names perf shows for the DSO.
        let dso = match (r, *l) {
            (Some(r), _) => r.dso.clone(),
            (None, Location::Dso { dso, .. }) => dsos.get(dso).short_name().into_owned(),
            (
                None,
                Location::Kernel {
                    module: Some(m), ..
                },
            ) => dsos.get(m).short_name().into_owned(),
            (None, Location::Kernel { module: None, .. }) => "[kernel.kallsyms]".to_string(),
            (None, Location::Unmapped { .. }) => "[unknown]".to_string(),
        };
        match r.map(|r| &r.inlined[..]) {
            // Outermost function first: depth 0 is the symbol's function.
            Some(levels) if !levels.is_empty() => {
                for (depth, f) in levels.iter().rev().enumerate() {
                    row.push(&mut t, i, depth, &dso, r, Some(f))?;
                }
            }
            _ => row.push(&mut t, i, 0, &dso, r, None)?,
        }
    }
    t.finish()
}

/// What a location's rows share.
struct Row<'a> {
    kind: &'static str,
    dso_id: Option<u32>,
    dso_path: Option<&'a str>,
    build_id: Option<String>,
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
        t.push(&[
            Cell::U(frame_id as u64),
            Cell::U(depth as u64),
            Cell::str(f.and_then(|f| f.function.as_deref()).or(symbol)),
            Cell::str(f.and_then(|f| f.raw_function.as_deref()).or(raw_symbol)),
            Cell::str(f.and_then(|f| f.file.as_deref())),
            f.and_then(|f| f.line)
                .map_or(Cell::Null, |l| Cell::U(u64::from(l))),
            Cell::str(symbol),
            Cell::str(raw_symbol),
            Cell::S(dso),
            self.dso_id.map_or(Cell::Null, |d| Cell::U(u64::from(d))),
            Cell::str(self.dso_path),
            Cell::str(self.build_id.as_deref()),
            Cell::U(self.address),
            self.offset.map_or(Cell::Null, Cell::U),
            Cell::S(self.kind),
            Cell::str(r.and_then(|r| r.reason.as_ref()).map(|why| why.name())),
        ])
    }
}
