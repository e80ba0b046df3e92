//! The capture table (header facts, counts, warnings) and the events table
//! (every attr).

use perfq_reader::{read_format_names, sample_type_names, Capture, Endian, Mode, Stats};

use crate::convert::schema::{CAPTURE, EVENTS};
use crate::{CaptureWriter, Cell, Error};

pub(crate) fn write_events(w: &CaptureWriter, capture: &Capture) -> Result<(), Error> {
    let mut t = w.table("events", EVENTS)?;
    for (i, e) in capture.events().list().iter().enumerate() {
        let a = &e.attr;
        let (period, freq) = if a.is_freq() {
            (Cell::Null, Cell::U(a.sample_period_or_freq))
        } else {
            (Cell::U(a.sample_period_or_freq), Cell::Null)
        };
        t.push(&[
            Cell::U(i as u64),
            Cell::S(&e.name),
            Cell::U(u64::from(a.type_)),
            Cell::U(a.config),
            Cell::U(a.config1),
            Cell::U(a.config2),
            Cell::S(&sample_type_names(a.sample_type)),
            Cell::S(&read_format_names(a.read_format)),
            period,
            freq,
            e.group_leader.map_or(Cell::Null, |l| Cell::U(l.0 as u64)),
            e.group_name.as_deref().map_or(Cell::Null, Cell::S),
        ])?;
    }
    t.finish()
}

/// What the capture row says beyond the header.
pub(crate) struct Summary<'a> {
    pub(crate) id: &'a str,
    pub(crate) hash: u64,
    pub(crate) source: &'a std::path::Path,
    pub(crate) stats: &'a Stats,
    pub(crate) decode_errors: u64,
    pub(crate) read_error: Option<&'a str>,
    pub(crate) warnings: &'a [String],
}

pub(crate) fn write_capture(
    w: &CaptureWriter,
    capture: &Capture,
    sum: &Summary<'_>,
) -> Result<(), Error> {
    let mut t = w.table("capture", CAPTURE)?;
    let m = capture.meta();
    let abs = std::fs::canonicalize(sum.source).unwrap_or_else(|_| sum.source.to_path_buf());
    let cmdline = m.cmdline.as_ref().map(|c| c.join(" "));
    let time = sum.stats.sample_time.or(m.sample_time);
    let warnings = sum.warnings.join("\n");
    t.push(&[
        Cell::S(sum.id),
        Cell::S(&abs.to_string_lossy()),
        Cell::U(capture.file_len()),
        Cell::S(&format!("{:016x}", sum.hash)),
        Cell::S(match capture.header().mode {
            Mode::File => "file",
            Mode::Pipe => "pipe",
        }),
        Cell::S(match capture.endian() {
            Endian::Little => "little",
            Endian::Big => "big",
        }),
        Cell::str(m.hostname.as_deref()),
        Cell::str(m.os_release.as_deref()),
        Cell::str(m.arch.as_deref()),
        Cell::str(m.cpuid.as_deref()),
        Cell::str(m.cpu_desc.as_deref()),
        Cell::str(m.perf_version.as_deref()),
        Cell::str(cmdline.as_deref()),
        m.nr_cpus.map_or(Cell::Null, |n| Cell::U(u64::from(n.1))),
        time.map_or(Cell::Null, |t| Cell::U(t.0)),
        time.map_or(Cell::Null, |t| Cell::U(t.1)),
        Cell::U(sum.stats.samples()),
        Cell::U(sum.stats.lost_records),
        Cell::U(sum.stats.lost_samples),
        Cell::U(sum.stats.samples_unknown_id),
        Cell::U(sum.decode_errors),
        Cell::str(sum.read_error),
        Cell::S(&warnings),
    ])?;
    t.finish()
}
