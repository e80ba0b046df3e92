//! Streams a file-mode perf.data: header, ids and attrs up front, records
//! as they come, then the feature sections and the final header.
//!
//! The layout is perf's (`perf_session__do_write_header`): the 104-byte
//! header, every event's ids, the attr section (each attr followed by the
//! `{offset, size}` of its ids), the data section, then one `{offset,
//! size}` per set feature bit followed by the features' bytes.

use std::fs::File;
use std::io::{self, BufWriter, Seek, SeekFrom, Write};
use std::path::Path;

use crate::attr::{read_format as rf, sample_type as st};
use crate::features::{self, id as feat};
use crate::records::{self, kind, misc, SampleId, PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER};
use crate::spec::CaptureSpec;

/// Size of `perf_file_header` with its 256-bit feature bitmap.
const HEADER_SIZE: u64 = 104;

/// Addresses at or above this are the kernel's (x86-64 and arm64 alike):
/// a sample there is in kernel mode.
const KERNEL_START: u64 = 0xffff_8000_0000_0000;

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg)
}

/// A callchain as the kernel writes it: kernel frames (if any) after a
/// `PERF_CONTEXT_KERNEL` marker, then user frames after
/// `PERF_CONTEXT_USER`. The first frame is the sampled ip; the others are
/// return addresses.
#[derive(Clone, Copy, Debug, Default)]
pub struct Callchain<'a> {
    /// Kernel addresses, innermost first.
    pub kernel: &'a [u64],
    /// User addresses, innermost first.
    pub user: &'a [u64],
}

/// One `PERF_RECORD_SAMPLE`.
#[derive(Clone, Copy, Debug)]
pub struct SampleSpec<'a> {
    /// The sampling event (index in [`CaptureSpec::events`]).
    pub event: usize,
    /// Instruction pointer; at or above `0xffff800000000000` the sample
    /// is marked kernel mode, else user mode.
    pub ip: u64,
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Time (ns).
    pub time: u64,
    /// cpu; picks the instance id of each event.
    pub cpu: u32,
    /// Sampling period.
    pub period: u64,
    /// Callchain (written when the event samples `CALLCHAIN`).
    pub callchain: Callchain<'a>,
    /// Read values as (event index, cumulative value): the whole group,
    /// leader first, in group order, for a group read; the event itself
    /// otherwise.
    pub reads: &'a [(usize, u64)],
}

/// A `PERF_RECORD_COMM`.
#[derive(Clone, Copy, Debug)]
pub struct Comm<'a> {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The command name (16 bytes at most in a real kernel).
    pub name: &'a str,
    /// Whether exec set it (`PERF_RECORD_MISC_COMM_EXEC`).
    pub exec: bool,
    /// Time and cpu for the trailer.
    pub time: u64,
    /// cpu for the trailer.
    pub cpu: u32,
}

/// A `PERF_RECORD_FORK` or `PERF_RECORD_EXIT`.
#[derive(Clone, Copy, Debug)]
pub struct Task {
    /// Process id.
    pub pid: u32,
    /// Parent process id.
    pub ppid: u32,
    /// Thread id.
    pub tid: u32,
    /// Parent thread id.
    pub ptid: u32,
    /// Time.
    pub time: u64,
    /// cpu for the trailer.
    pub cpu: u32,
}

/// How an MMAP2 names its file.
#[derive(Clone, Copy, Debug)]
pub enum MmapFile<'a> {
    /// Device and inode.
    Inode {
        /// Major device number.
        maj: u32,
        /// Minor device number.
        min: u32,
        /// Inode.
        ino: u64,
        /// Inode generation.
        ino_generation: u64,
    },
    /// An inline build id (kernel >= 5.12 with `attr.build_id`).
    BuildId(&'a [u8]),
}

/// A `PERF_RECORD_MMAP2`.
#[derive(Clone, Copy, Debug)]
pub struct Mmap2<'a> {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Start address.
    pub addr: u64,
    /// Length.
    pub len: u64,
    /// File offset of `addr`.
    pub pgoff: u64,
    /// `PROT_*` (5 = read + exec).
    pub prot: u32,
    /// `MAP_*` (2 = private).
    pub flags: u32,
    /// Build id or inode.
    pub file: MmapFile<'a>,
    /// The path written; may be relative (`testdata/td-demo`).
    pub filename: &'a str,
    /// Time for the trailer.
    pub time: u64,
    /// cpu for the trailer.
    pub cpu: u32,
}

/// The kernel's text mapping as `perf record` synthesizes it
/// (`PERF_RECORD_MMAP`, pid -1, `[kernel.kallsyms]_text`). perf report
/// warns that kernel maps were restricted when a capture has none.
#[derive(Clone, Copy, Debug)]
pub struct KernelMmap<'a> {
    /// Start of kernel text (`_stext`).
    pub addr: u64,
    /// Length.
    pub len: u64,
    /// The address of the reference symbol (`_text`), which perf stores
    /// in `pgoff`.
    pub pgoff: u64,
    /// `[kernel.kallsyms]_text`.
    pub filename: &'a str,
}

/// What a finished capture holds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// SAMPLE records.
    pub samples: u64,
    /// SAMPLE records per event.
    pub samples_per_event: Vec<u64>,
    /// Records of every kind, perf's FINISHED_ROUND included.
    pub records: u64,
    /// Bytes of the data section.
    pub data_size: u64,
    /// First and last sample time.
    pub sample_time: Option<(u64, u64)>,
    /// Size of the file.
    pub file_size: u64,
}

/// A sample's fields before `READ`, as sample type `t` asks: `IDENTIFIER`
/// through `PERIOD` (`id` is the event's instance id on the sample's cpu).
fn write_sample_fields(b: &mut Vec<u8>, t: u64, id: u64, s: &SampleSpec<'_>) {
    if t & st::IDENTIFIER != 0 {
        records::u64(b, id);
    }
    if t & st::IP != 0 {
        records::u64(b, s.ip);
    }
    if t & st::TID != 0 {
        records::u32s(b, s.pid, s.tid);
    }
    if t & st::TIME != 0 {
        records::u64(b, s.time);
    }
    if t & st::ID != 0 {
        records::u64(b, id);
    }
    if t & st::CPU != 0 {
        records::u32s(b, s.cpu, 0);
    }
    if t & st::PERIOD != 0 {
        records::u64(b, s.period);
    }
}

/// `READ` of a sample of event `e`: its group's values in member order,
/// or its own value, each with what `e`'s read format asks (times since
/// `start`, ids, lost counts).
fn write_read_values(
    b: &mut Vec<u8>,
    events: &[EventLayout],
    e: &EventLayout,
    s: &SampleSpec<'_>,
    start: u64,
) -> io::Result<()> {
    let f = e.read_format;
    let group = f & rf::GROUP != 0;
    if group {
        if s.reads.len() != e.read_members.len()
            || s.reads.iter().zip(&e.read_members).any(|(r, m)| r.0 != *m)
        {
            return Err(invalid(format!(
                "group read of event {} needs members {:?} in that order, got {:?}",
                s.event,
                e.read_members,
                s.reads.iter().map(|r| r.0).collect::<Vec<_>>()
            )));
        }
        records::u64(b, s.reads.len() as u64);
    } else if s.reads.len() != 1 || s.reads[0].0 != s.event {
        return Err(invalid(format!(
            "single read of event {} needs its own value only",
            s.event
        )));
    }
    if f & rf::TOTAL_TIME_ENABLED != 0 {
        records::u64(b, s.time - start);
    }
    if f & rf::TOTAL_TIME_RUNNING != 0 {
        records::u64(b, s.time - start);
    }
    for &(ev, value) in s.reads {
        records::u64(b, value);
        if f & rf::ID != 0 {
            let id = events[ev].id_by_cpu.get(s.cpu as usize).copied().flatten();
            let id =
                id.ok_or_else(|| invalid(format!("member {ev} is not opened on cpu {}", s.cpu)))?;
            records::u64(b, id);
        }
        if f & rf::LOST != 0 {
            records::u64(b, 0);
        }
    }
    Ok(())
}

/// `CALLCHAIN`: the kernel frames after `PERF_CONTEXT_KERNEL`, then the
/// user frames after `PERF_CONTEXT_USER`, each part only when it has
/// frames.
fn write_callchain(b: &mut Vec<u8>, c: Callchain<'_>) {
    let nr = c.kernel.len()
        + c.user.len()
        + usize::from(!c.kernel.is_empty())
        + usize::from(!c.user.is_empty());
    records::u64(b, nr as u64);
    if !c.kernel.is_empty() {
        records::u64(b, PERF_CONTEXT_KERNEL);
        for &a in c.kernel {
            records::u64(b, a);
        }
    }
    if !c.user.is_empty() {
        records::u64(b, PERF_CONTEXT_USER);
        for &a in c.user {
            records::u64(b, a);
        }
    }
}

/// Per event: what its records need.
struct EventLayout {
    sample_type: u64,
    read_format: u64,
    /// Instance id by cpu (`None` where the event is not opened).
    id_by_cpu: Vec<Option<u64>>,
    ids: Vec<u64>,
    /// For a group read: the members in read order.
    read_members: Vec<usize>,
}

/// Writes one capture. Records must be given in time order; call
/// [`Writer::finish`] to complete the file (until then its header says
/// nothing).
pub struct Writer<W: Write + Seek> {
    out: W,
    spec: CaptureSpec,
    events: Vec<EventLayout>,
    attr_bytes: Vec<Vec<u8>>,
    data_offset: u64,
    buf: Vec<u8>,
    summary: Summary,
    start_time: Option<u64>,
}

impl Writer<BufWriter<File>> {
    /// Creates `path` and writes the start of a capture of `spec` into it.
    pub fn create(path: impl AsRef<Path>, spec: &CaptureSpec) -> io::Result<Self> {
        let file = File::create(path)?;
        Writer::new(BufWriter::with_capacity(1 << 20, file), spec)
    }
}

impl<W: Write + Seek> Writer<W> {
    /// Starts a capture of `spec` in `out` (at its current position 0).
    pub fn new(mut out: W, spec: &CaptureSpec) -> io::Result<Self> {
        let events = layouts(spec)?;
        let attr_bytes: Vec<Vec<u8>> = spec
            .events
            .iter()
            .map(|e| e.attr.encode(spec.attr_size))
            .collect();
        // The header is written last, when sizes are known.
        out.write_all(&[0u8; HEADER_SIZE as usize])?;
        let mut at = HEADER_SIZE;
        let mut id_offsets = Vec::new();
        for e in &events {
            id_offsets.push(at);
            for id in &e.ids {
                out.write_all(&id.to_le_bytes())?;
            }
            at += 8 * e.ids.len() as u64;
        }
        for ((a, e), off) in attr_bytes.iter().zip(&events).zip(&id_offsets) {
            out.write_all(a)?;
            out.write_all(&off.to_le_bytes())?;
            out.write_all(&(8 * e.ids.len() as u64).to_le_bytes())?;
        }
        let data_offset = at + (spec.attr_size.bytes() as u64 + 16) * spec.events.len() as u64;
        Ok(Writer {
            out,
            spec: spec.clone(),
            summary: Summary {
                samples_per_event: vec![0; events.len()],
                ..Summary::default()
            },
            events,
            attr_bytes,
            data_offset,
            buf: Vec::with_capacity(4096),
            start_time: None,
        })
    }

    /// The capture's spec.
    pub fn spec(&self) -> &CaptureSpec {
        &self.spec
    }

    /// The instance id of `event` on `cpu`.
    pub fn id(&self, event: usize, cpu: u32) -> Option<u64> {
        *self.events.get(event)?.id_by_cpu.get(cpu as usize)?
    }

    /// The instance ids of `event`, in cpu order.
    pub fn ids(&self, event: usize) -> &[u64] {
        self.events.get(event).map_or(&[], |e| &e.ids)
    }

    fn flush_record(&mut self) -> io::Result<()> {
        self.out.write_all(&self.buf)?;
        self.summary.records += 1;
        self.summary.data_size += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    fn note_time(&mut self, t: u64) {
        self.start_time.get_or_insert(t);
    }

    /// The event whose id goes in a non-sample record's trailer on `cpu`:
    /// the first (tracking) event if it is opened there, else the first
    /// event that is. `None`: a synthesized record, id 0, as perf writes.
    fn trailer_event(&self, cpu: u32) -> (u64, u64) {
        let first = self.events.first().map_or(0, |e| e.sample_type);
        for e in &self.events {
            if let Some(Some(id)) = e.id_by_cpu.get(cpu as usize) {
                return (e.sample_type, *id);
            }
        }
        (first, 0)
    }

    fn trailer(&mut self, s: SampleId) {
        let (sample_type, id) = self.trailer_event(s.cpu);
        if self
            .spec
            .events
            .first()
            .is_some_and(|e| e.attr.flags & crate::attr::flags::SAMPLE_ID_ALL != 0)
        {
            records::trailer(&mut self.buf, sample_type, &s, id);
        }
    }

    /// Writes a `COMM`.
    pub fn comm(&mut self, c: &Comm<'_>) -> io::Result<()> {
        self.note_time(c.time);
        let m = misc::USER | if c.exec { misc::COMM_EXEC } else { 0 };
        let at = records::begin(&mut self.buf, kind::COMM, m);
        records::u32s(&mut self.buf, c.pid, c.tid);
        records::padded_str(&mut self.buf, c.name);
        self.trailer(SampleId {
            pid: c.pid,
            tid: c.tid,
            time: c.time,
            cpu: c.cpu,
        });
        records::end(&mut self.buf, at)?;
        self.flush_record()
    }

    fn task(&mut self, k: u32, t: &Task) -> io::Result<()> {
        self.note_time(t.time);
        let at = records::begin(&mut self.buf, k, 0);
        records::u32s(&mut self.buf, t.pid, t.ppid);
        records::u32s(&mut self.buf, t.tid, t.ptid);
        records::u64(&mut self.buf, t.time);
        self.trailer(SampleId {
            pid: t.pid,
            tid: t.tid,
            time: t.time,
            cpu: t.cpu,
        });
        records::end(&mut self.buf, at)?;
        self.flush_record()
    }

    /// Writes a `FORK`.
    pub fn fork(&mut self, t: &Task) -> io::Result<()> {
        self.task(kind::FORK, t)
    }

    /// Writes an `EXIT`.
    pub fn exit(&mut self, t: &Task) -> io::Result<()> {
        self.task(kind::EXIT, t)
    }

    /// Writes an `MMAP2`.
    pub fn mmap2(&mut self, m: &Mmap2<'_>) -> io::Result<()> {
        self.note_time(m.time);
        let bid = matches!(m.file, MmapFile::BuildId(_));
        let flags = misc::USER | if bid { misc::MMAP_BUILD_ID } else { 0 };
        let at = records::begin(&mut self.buf, kind::MMAP2, flags);
        records::u32s(&mut self.buf, m.pid, m.tid);
        records::u64(&mut self.buf, m.addr);
        records::u64(&mut self.buf, m.len);
        records::u64(&mut self.buf, m.pgoff);
        match m.file {
            MmapFile::Inode {
                maj,
                min,
                ino,
                ino_generation,
            } => {
                records::u32s(&mut self.buf, maj, min);
                records::u64(&mut self.buf, ino);
                records::u64(&mut self.buf, ino_generation);
            }
            MmapFile::BuildId(b) => {
                if b.len() > 20 {
                    return Err(invalid(format!(
                        "build id of {} bytes; at most 20",
                        b.len()
                    )));
                }
                // u8 size, u8 reserved, u16 reserved, u8 build_id[20].
                let mut id = [0u8; 24];
                id[0] = b.len() as u8;
                id[4..4 + b.len()].copy_from_slice(b);
                self.buf.extend_from_slice(&id);
            }
        }
        records::u32s(&mut self.buf, m.prot, m.flags);
        records::padded_str(&mut self.buf, m.filename);
        self.trailer(SampleId {
            pid: m.pid,
            tid: m.tid,
            time: m.time,
            cpu: m.cpu,
        });
        records::end(&mut self.buf, at)?;
        self.flush_record()
    }

    /// Writes the kernel's `MMAP`, as perf synthesizes it: its trailer is
    /// all zeros (id 0 stands for the first event).
    pub fn kernel_mmap(&mut self, m: &KernelMmap<'_>) -> io::Result<()> {
        let at = records::begin(&mut self.buf, kind::MMAP, misc::KERNEL);
        records::u32s(&mut self.buf, u32::MAX, 0);
        records::u64(&mut self.buf, m.addr);
        records::u64(&mut self.buf, m.len);
        records::u64(&mut self.buf, m.pgoff);
        records::padded_str(&mut self.buf, m.filename);
        if let Some(e) = self.spec.events.first() {
            if e.attr.flags & crate::attr::flags::SAMPLE_ID_ALL != 0 {
                records::trailer(&mut self.buf, e.attr.sample_type, &SampleId::default(), 0);
            }
        }
        records::end(&mut self.buf, at)?;
        self.flush_record()
    }

    /// Writes a `FINISHED_ROUND`: every record before it may be sorted
    /// and delivered before those after it.
    pub fn finished_round(&mut self) -> io::Result<()> {
        let at = records::begin(&mut self.buf, kind::FINISHED_ROUND, 0);
        records::end(&mut self.buf, at)?;
        self.flush_record()
    }

    /// Writes a `SAMPLE`.
    pub fn sample(&mut self, s: &SampleSpec<'_>) -> io::Result<()> {
        self.note_time(s.time);
        let start = self.start_time.unwrap_or(s.time);
        let e = self.events.get(s.event).ok_or_else(|| {
            invalid(format!(
                "sample of event {} of {}",
                s.event,
                self.events.len()
            ))
        })?;
        let id = self
            .id(s.event, s.cpu)
            .ok_or_else(|| invalid(format!("event {} is not opened on cpu {}", s.event, s.cpu)))?;
        let t = e.sample_type;
        let m = if s.ip >= KERNEL_START {
            misc::KERNEL
        } else {
            misc::USER
        };
        let b = &mut self.buf;
        let at = records::begin(b, kind::SAMPLE, m);
        write_sample_fields(b, t, id, s);
        if t & st::READ != 0 {
            write_read_values(b, &self.events, e, s, start)?;
        }
        if t & st::CALLCHAIN != 0 {
            write_callchain(b, s.callchain);
        }
        records::end(b, at)?;
        self.flush_record()?;
        self.summary.samples += 1;
        self.summary.samples_per_event[s.event] += 1;
        self.summary.sample_time = Some(match self.summary.sample_time {
            None => (s.time, s.time),
            Some((a, z)) => (a.min(s.time), z.max(s.time)),
        });
        Ok(())
    }

    /// Writes the feature sections and the header; returns what was
    /// written and the output.
    pub fn finish_into(mut self) -> io::Result<(W, Summary)> {
        let feat_offset = self.data_offset + self.summary.data_size;
        let sections = self.features();
        // One {offset, size} per feature, then the features' bytes.
        let mut at = feat_offset + 16 * sections.len() as u64;
        let mut table = Vec::new();
        for (_, bytes) in &sections {
            table.extend_from_slice(&at.to_le_bytes());
            table.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
            at += bytes.len() as u64;
        }
        self.out.write_all(&table)?;
        for (_, bytes) in &sections {
            self.out.write_all(bytes)?;
        }
        let mut bits = [0u64; 4];
        for (f, _) in &sections {
            bits[(*f / 64) as usize] |= 1 << (f % 64);
        }
        let attrs_offset = HEADER_SIZE
            + self
                .events
                .iter()
                .map(|e| 8 * e.ids.len() as u64)
                .sum::<u64>();
        let attr_entry = self.spec.attr_size.bytes() as u64 + 16;
        let mut h = Vec::with_capacity(HEADER_SIZE as usize);
        h.extend_from_slice(b"PERFILE2");
        for v in [
            HEADER_SIZE,
            attr_entry,
            attrs_offset,
            attr_entry * self.events.len() as u64,
            self.data_offset,
            self.summary.data_size,
            0, // event_types: perf stores zeros
            0,
        ] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        for w in bits {
            h.extend_from_slice(&w.to_le_bytes());
        }
        self.out.seek(SeekFrom::Start(0))?;
        self.out.write_all(&h)?;
        self.out.flush()?;
        self.summary.file_size = at;
        Ok((self.out, self.summary))
    }

    /// Completes the capture (see [`Writer::finish_into`]).
    pub fn finish(self) -> io::Result<Summary> {
        let (mut out, summary) = self.finish_into()?;
        out.flush()?;
        Ok(summary)
    }

    /// The feature sections, in feature-number order.
    fn features(&self) -> Vec<(u32, Vec<u8>)> {
        let s = &self.spec;
        let mut f = vec![
            (feat::BUILD_ID, features::build_ids(&s.build_ids)),
            (feat::HOSTNAME, features::string(&s.hostname)),
            (feat::OSRELEASE, features::string(&s.os_release)),
            (feat::VERSION, features::string(&s.perf_version)),
            (feat::ARCH, features::string(&s.arch)),
            (feat::NRCPUS, features::nrcpus(s.nr_cpus.0, s.nr_cpus.1)),
        ];
        if let Some(d) = &s.cpu_desc {
            f.push((feat::CPUDESC, features::string(d)));
        }
        f.push((feat::CPUID, features::string(&s.cpuid)));
        f.push((feat::TOTAL_MEM, features::total_mem(s.total_mem_kb)));
        f.push((feat::CMDLINE, features::cmdline(&s.cmdline)));
        let entries: Vec<features::EventDescEntry<'_>> = s
            .events
            .iter()
            .zip(&self.attr_bytes)
            .zip(&self.events)
            .map(|((e, a), l)| features::EventDescEntry {
                attr: a,
                name: &e.name,
                ids: &l.ids,
            })
            .collect();
        f.push((
            feat::EVENT_DESC,
            features::event_desc(s.attr_size.bytes(), &entries),
        ));
        f.push((feat::PMU_MAPPINGS, features::pmu_mappings(&s.pmu_mappings)));
        if !s.groups.is_empty() {
            let groups: Vec<features::GroupDescEntry<'_>> = s
                .groups
                .iter()
                .map(|g| features::GroupDescEntry {
                    name: g.name.as_deref().unwrap_or("{anon_group}"),
                    leader: g.leader as u32,
                    nr_members: g.len as u32,
                })
                .collect();
            f.push((feat::GROUP_DESC, features::group_desc(&groups)));
        }
        let (first, last) = self.summary.sample_time.unwrap_or((0, 0));
        f.push((feat::SAMPLE_TIME, features::sample_time(first, last)));
        if let Some(c) = &s.cpu_pmu_caps {
            f.push((feat::CPU_PMU_CAPS, features::cpu_pmu_caps(c)));
        }
        if let Some(h) = &s.hybrid_topology {
            f.push((feat::HYBRID_TOPOLOGY, features::hybrid_topology(h)));
        }
        if let Some(p) = &s.pmu_caps {
            f.push((feat::PMU_CAPS, features::pmu_caps(p)));
        }
        f
    }
}

/// Checks the spec and assigns instance ids.
fn layouts(spec: &CaptureSpec) -> io::Result<Vec<EventLayout>> {
    let mut next = spec.first_id;
    let mut out = Vec::with_capacity(spec.events.len());
    for (i, e) in spec.events.iter().enumerate() {
        let t = e.attr.sample_type;
        if t & !st::SUPPORTED != 0 {
            return Err(invalid(format!(
                "event {i} ({}): sample_type {t:#x} has fields this writer does not lay out",
                e.name
            )));
        }
        if e.cpus.is_empty() {
            return Err(invalid(format!("event {i} ({}) is on no cpu", e.name)));
        }
        let max_cpu = e.cpus.iter().copied().max().unwrap_or(0) as usize;
        let mut id_by_cpu = vec![None; max_cpu + 1];
        let mut ids = Vec::with_capacity(e.cpus.len());
        for &c in &e.cpus {
            id_by_cpu[c as usize] = Some(next);
            ids.push(next);
            next += 1;
        }
        out.push(EventLayout {
            sample_type: t,
            read_format: e.attr.read_format,
            id_by_cpu,
            ids,
            read_members: Vec::new(),
        });
    }
    for g in &spec.groups {
        if g.len == 0 || g.leader + g.len > spec.events.len() {
            return Err(invalid(format!(
                "group at {} of {} events: only {} events",
                g.leader,
                g.len,
                spec.events.len()
            )));
        }
        for m in g.members() {
            out[m].read_members = g.members().collect();
        }
    }
    for (i, l) in out.iter_mut().enumerate() {
        if l.read_members.is_empty() {
            l.read_members = vec![i];
        }
    }
    Ok(out)
}
