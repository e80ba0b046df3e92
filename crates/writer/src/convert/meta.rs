//! The capture table (header facts, counts, warnings), the events table
//! (every attr) and the pmus table (the header's PMU features).

use perfq_reader::{
    read_format_names, sample_type_names, Capture, Endian, Events, Meta, Mode, Stats,
};

use crate::convert::schema::{CAPTURE, EVENTS, PMUS};
use crate::{CaptureWriter, Cell, Error};

/// Each event's position in its group's read: 0 for a leader and for
/// events in no group, members counted in event order. Groups are runs of
/// consecutive events (GROUP_DESC gives a leader and a count), which is
/// also the kernel's sibling order, so this is where each member's value
/// sits in a sample's group read.
pub(crate) fn members(events: &Events) -> Vec<u32> {
    let mut seen = vec![0u32; events.len()];
    events
        .list()
        .iter()
        .map(|e| match e.group_leader.and_then(|l| seen.get_mut(l.0)) {
            Some(n) => {
                *n += 1;
                *n - 1
            }
            None => 0,
        })
        .collect()
}

pub(crate) fn write_events(w: &CaptureWriter, capture: &Capture) -> Result<(), Error> {
    let mut t = w.table("events", EVENTS)?;
    let members = members(capture.events());
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
            Cell::U(u64::from(members.get(i).copied().unwrap_or(0))),
        ])?;
    }
    t.finish()
}

/// One PMU, gathered from the features that name it.
struct Pmu<'a> {
    name: &'a str,
    type_: Option<u32>,
    cpus: Option<&'a str>,
    caps: Vec<&'a (String, String)>,
}

/// The PMU named `name` in `out`, added if new. A linear search: a
/// capture names tens of PMUs, a hundred or two at most.
fn pmu_entry<'a, 'b>(out: &'b mut Vec<Pmu<'a>>, name: &'a str) -> &'b mut Pmu<'a> {
    let i = match out.iter().position(|p| p.name == name) {
        Some(i) => i,
        None => {
            out.push(Pmu {
                name,
                type_: None,
                cpus: None,
                caps: Vec::new(),
            });
            out.len() - 1
        }
    };
    &mut out[i]
}

/// Every PMU the header names, once each: in PMU_MAPPINGS order, then
/// those only the caps or the hybrid topology name, in their order.
fn pmus(m: &Meta) -> Vec<Pmu<'_>> {
    let mut out: Vec<Pmu<'_>> = Vec::new();
    for p in &m.pmu_mappings {
        // A name mapped twice keeps its first type, as a lookup would.
        let e = pmu_entry(&mut out, &p.name);
        e.type_ = e.type_.or(Some(p.type_));
    }
    for p in &m.pmu_caps {
        pmu_entry(&mut out, &p.pmu).caps.extend(&p.caps);
    }
    for (pmu, cpus) in &m.hybrid_topology {
        let e = pmu_entry(&mut out, pmu);
        e.cpus = e.cpus.or(Some(cpus));
    }
    out
}

pub(crate) fn write_pmus(w: &CaptureWriter, capture: &Capture) -> Result<(), Error> {
    let mut t = w.table("pmus", PMUS)?;
    for p in pmus(capture.meta()) {
        let caps: Vec<String> = p.caps.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let caps = (!caps.is_empty()).then(|| caps.join("\n"));
        t.push(&[
            Cell::num(p.type_.map(u64::from)),
            Cell::S(p.name),
            Cell::str(p.cpus),
            Cell::str(caps.as_deref()),
        ])?;
    }
    t.finish()
}

/// What the capture row says beyond the header.
pub(crate) struct Summary<'a> {
    pub(crate) id: &'a str,
    pub(crate) hash: u64,
    pub(crate) source: &'a std::path::Path,
    /// How the source is named instead of its path (an archive member:
    /// `ARCHIVE!MEMBER`).
    pub(crate) source_name: Option<&'a str>,
    pub(crate) stats: &'a Stats,
    pub(crate) decode_errors: u64,
    /// What could not be read: `capture.read_error`.
    pub(crate) damage: Option<&'a str>,
    pub(crate) warnings: &'a [String],
}

pub(crate) fn write_capture(
    w: &CaptureWriter,
    capture: &Capture,
    sum: &Summary<'_>,
) -> Result<(), Error> {
    let mut t = w.table("capture", CAPTURE)?;
    let m = capture.meta();
    let abs = match sum.source_name {
        Some(name) => name.into(),
        None => std::fs::canonicalize(sum.source).unwrap_or_else(|_| sum.source.to_path_buf()),
    };
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
        Cell::str(sum.damage),
        Cell::S(&warnings),
    ])?;
    t.finish()
}
