//! The DSOs table: every file the mappings name, with the binary used to
//! symbolize it or why there is none.

use perfq_symbolize::{DsoKind, Symbolizer, Tracker};

use crate::convert::frames::kind_name;
use crate::convert::schema::DSOS;
use crate::{CaptureWriter, Cell, Error};

pub(crate) fn write(
    w: &CaptureWriter,
    tracker: &Tracker,
    symbolizer: Option<&Symbolizer>,
) -> Result<(), Error> {
    let mut t = w.table("dsos", DSOS)?;
    let dsos = tracker.dsos();
    for (id, d) in dsos.iter() {
        // Kernel and JIT code are symbolized from kallsyms and perf maps,
        // not from an ELF file of their own.
        let binary = match symbolizer {
            Some(s) if matches!(d.kind, DsoKind::User | DsoKind::Vdso) => Some(s.binary(dsos, id)),
            _ => None,
        };
        let path = binary
            .as_ref()
            .and_then(|b| b.as_ref().ok())
            .map(|b| b.path().display().to_string());
        let build_id = d.build_id.as_deref().map(super::hex);
        t.push(&[
            Cell::U(u64::from(id.0)),
            Cell::S(&d.short_name()),
            Cell::S(&d.path),
            build_id.as_deref().map_or(Cell::Null, Cell::S),
            Cell::S(kind_name(d.kind)),
            path.as_deref().map_or(Cell::Null, Cell::S),
            match &binary {
                Some(Err(why)) => Cell::S(why.name()),
                _ => Cell::Null,
            },
        ])?;
    }
    t.finish()
}
