//! The sideband tables, streamed as records arrive: threads (comm, fork,
//! exit), mappings (every MMAP/MMAP2), data quality (lost records and
//! samples, throttling), and the off-CPU intervals the read finds.

use perfq_reader::{MmapFileId, RawRecord, RecordData, RecordType, SampleId};
use perfq_stream::off_cpu::{Interval, StackFrom};

use crate::convert::schema::{MAPPINGS, OFF_CPU, QUALITY, THREADS};
use crate::{CaptureWriter, Cell, Error, Table};

/// The sideband tables: threads (comm, fork, exit), mappings, and data
/// quality (lost records and samples, throttling), streamed as read.
pub(crate) struct Sideband {
    threads: Table,
    mappings: Table,
    quality: Table,
    off_cpu: Table,
}

impl Sideband {
    pub(crate) fn create(w: &CaptureWriter) -> Result<Sideband, Error> {
        Ok(Sideband {
            threads: w.table("threads", THREADS)?,
            mappings: w.table("mappings", MAPPINGS)?,
            quality: w.table("quality", QUALITY)?,
            off_cpu: w.table("off_cpu", OFF_CPU)?,
        })
    }

    pub(crate) fn push(
        &mut self,
        time: Option<u64>,
        event: Option<u64>,
        data: &RecordData<'_>,
        sid: Option<SampleId>,
    ) -> Result<(), Error> {
        let t = time.map_or(Cell::Null, Cell::U);
        let i = |v: u32| Cell::I(i64::from(v as i32));
        match data {
            RecordData::Comm(c) => self.threads.push(&[
                t,
                Cell::S(if c.is_exec { "exec" } else { "comm" }),
                i(c.pid),
                i(c.tid),
                Cell::Null,
                Cell::Null,
                Cell::S(&c.comm),
            ])?,
            RecordData::Fork(f) | RecordData::Exit(f) => self.threads.push(&[
                Cell::U(f.time),
                Cell::S(if matches!(data, RecordData::Fork(_)) {
                    "fork"
                } else {
                    "exit"
                }),
                i(f.pid),
                i(f.tid),
                i(f.ppid),
                i(f.ptid),
                Cell::Null,
            ])?,
            RecordData::Mmap(m) => {
                let build_id = match m.file_id {
                    Some(MmapFileId::BuildId(b)) => Some(super::hex(b)),
                    _ => None,
                };
                self.mappings.push(&[
                    t,
                    i(m.pid),
                    i(m.tid),
                    Cell::U(m.addr),
                    Cell::U(m.addr.saturating_add(m.len)),
                    Cell::U(m.pgoff),
                    Cell::S(&m.filename),
                    build_id.as_deref().map_or(Cell::Null, Cell::S),
                    m.prot.map_or(Cell::Null, |p| Cell::U(u64::from(p))),
                    m.flags.map_or(Cell::Null, |f| Cell::U(u64::from(f))),
                    Cell::U(u64::from(!m.is_data)),
                ])?
            }
            RecordData::Lost { id, lost } => self.quality.push(&[
                t,
                Cell::S("lost_records"),
                event.map_or(Cell::Null, Cell::U),
                Cell::U(*id),
                Cell::U(*lost),
            ])?,
            RecordData::LostSamples { lost } => self.quality.push(&[
                t,
                Cell::S("lost_samples"),
                event.map_or(Cell::Null, Cell::U),
                sid.and_then(|s| s.id).map_or(Cell::Null, Cell::U),
                Cell::U(*lost),
            ])?,
            RecordData::Throttle { unthrottle, id, .. } => self.quality.push(&[
                t,
                Cell::S(if *unthrottle {
                    "unthrottle"
                } else {
                    "throttle"
                }),
                event.map_or(Cell::Null, Cell::U),
                Cell::U(*id),
                Cell::U(1),
            ])?,
            _ => {}
        }
        Ok(())
    }

    /// An off-CPU interval: an `off_cpu` row.
    pub(crate) fn off_cpu(&mut self, i: &Interval) -> Result<(), Error> {
        let pid = |v: Option<u32>| v.map(|p| p as i32);
        let (stack, stack_from) = match i.stack {
            Some((n, StackFrom::Switch)) => (Some(n), Some("switch")),
            Some((n, StackFrom::LastSample)) => (Some(n), Some("last_sample")),
            None => (None, None),
        };
        let w = i.wake.as_ref();
        self.off_cpu
            .row()
            .opt_i32(pid(i.pid))
            .opt_i32(Some(i.tid as i32))
            .opt_u(i.times().then_some(i.start))
            .opt_u(i.times().then_some(i.end))
            .u(i.duration_ns())
            .opt_u(i.cpu.map(u64::from))
            .opt_u(i.cpu_in.map(u64::from))
            .str(i.state.name())
            .str(i.end_from.name())
            .u(u64::from(i.uncertain))
            .opt_u(stack)
            .opt_str(stack_from)
            .opt_u(w.map(|w| w.time))
            .opt_i32(pid(w.and_then(|w| w.pid)))
            .opt_i32(pid(w.and_then(|w| w.tid)))
            .opt_u(w.map(|w| w.sample))
            .opt_u(i.run_ns)
            .end()
    }

    /// A record that could not be used (a sample that does not decode,
    /// another record that does not parse): a `quality` row of its own.
    pub(crate) fn lost(&mut self, r: &RawRecord<'_>) -> Result<(), Error> {
        let kind = if r.kind == RecordType::SAMPLE {
            "undecoded_sample"
        } else {
            "unparsed_record"
        };
        self.quality.push(&[
            r.time.map_or(Cell::Null, Cell::U),
            Cell::S(kind),
            r.event.index().map_or(Cell::Null, |e| Cell::U(e.0 as u64)),
            Cell::Null,
            Cell::U(1),
        ])
    }

    /// The bytes past the error that stopped the read: a `quality` row.
    pub(crate) fn unread(&mut self, bytes: u64) -> Result<(), Error> {
        self.quality.push(&[
            Cell::Null,
            Cell::S("unread_bytes"),
            Cell::Null,
            Cell::Null,
            Cell::U(bytes),
        ])
    }

    pub(crate) fn finish(self) -> Result<(), Error> {
        self.threads.finish()?;
        self.mappings.finish()?;
        self.quality.finish()?;
        self.off_cpu.finish()
    }
}
