//! Decoded records other than samples, and the `sample_id` trailer that
//! kernel records carry when the attr has `sample_id_all`.

use crate::attr::{Attr, AttrFlags, SampleType};
use crate::endian::{c_str, Cursor, Endian, U64s};
use crate::error::ErrorKind;
use crate::record_type::{misc, RecordType};
use crate::sample::{parse_read, parse_sample, ReadValues, Sample};
use crate::user_records::{self as user, AuxtraceError, EventUpdate, Stat, TimeConv};

/// The `sample_id` trailer of a kernel record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleId {
    /// Process id.
    pub pid: Option<u32>,
    /// Thread id.
    pub tid: Option<u32>,
    /// Timestamp.
    pub time: Option<u64>,
    /// Event instance id (`ID` or `IDENTIFIER`).
    pub id: Option<u64>,
    /// Stream id.
    pub stream_id: Option<u64>,
    /// cpu.
    pub cpu: Option<u32>,
}

/// Bytes of `sample_id` trailer an attr puts on kernel records.
pub(crate) fn trailer_len(attr: &Attr) -> usize {
    if !attr.flags.contains(AttrFlags::SAMPLE_ID_ALL) {
        return 0;
    }
    let t = attr.sample_type;
    [
        SampleType::TID,
        SampleType::TIME,
        SampleType::ID,
        SampleType::STREAM_ID,
        SampleType::CPU,
        SampleType::IDENTIFIER,
    ]
    .iter()
    .filter(|f| t.contains(**f))
    .count()
        * 8
}

/// Distance from the end of a kernel record's body to its event id, if the
/// attr puts one in the trailer.
pub(crate) fn trailer_id_from_end(attr: &Attr) -> Option<usize> {
    if !attr.flags.contains(AttrFlags::SAMPLE_ID_ALL) {
        return None;
    }
    let t = attr.sample_type;
    if t.contains(SampleType::IDENTIFIER) {
        return Some(8);
    }
    if !t.contains(SampleType::ID) {
        return None;
    }
    let after = [SampleType::STREAM_ID, SampleType::CPU];
    Some(8 * (1 + after.iter().filter(|f| t.contains(**f)).count()))
}

/// Distance from the end of a kernel record's body to its timestamp.
pub(crate) fn trailer_time_from_end(attr: &Attr) -> Option<usize> {
    if !attr.flags.contains(AttrFlags::SAMPLE_ID_ALL)
        || !attr.sample_type.contains(SampleType::TIME)
    {
        return None;
    }
    let t = attr.sample_type;
    let after = [
        SampleType::ID,
        SampleType::STREAM_ID,
        SampleType::CPU,
        SampleType::IDENTIFIER,
    ];
    Some(8 * (1 + after.iter().filter(|f| t.contains(**f)).count()))
}

fn parse_trailer(b: &[u8], attr: &Attr, endian: Endian) -> SampleId {
    let mut c = Cursor::new(b, endian);
    let t = attr.sample_type;
    let mut s = SampleId::default();
    if t.contains(SampleType::TID) {
        s.pid = c.u32();
        s.tid = c.u32();
    }
    if t.contains(SampleType::TIME) {
        s.time = c.u64();
    }
    if t.contains(SampleType::ID) {
        s.id = c.u64();
    }
    if t.contains(SampleType::STREAM_ID) {
        s.stream_id = c.u64();
    }
    if t.contains(SampleType::CPU) {
        s.cpu = c.u32();
        c.skip(4);
    }
    if t.contains(SampleType::IDENTIFIER) {
        s.id = c.u64();
    }
    s
}

/// `MMAP` and `MMAP2`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mmap<'a> {
    /// Process id (-1 / u32::MAX for the kernel).
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Start address.
    pub addr: u64,
    /// Length.
    pub len: u64,
    /// File offset of the mapping.
    pub pgoff: u64,
    /// Device/inode or build id (MMAP2 only).
    pub file_id: Option<MmapFileId<'a>>,
    /// Protection (MMAP2 only).
    pub prot: Option<u32>,
    /// Flags (MMAP2 only).
    pub flags: Option<u32>,
    /// Path or name (`[kernel.kallsyms]_text`, `[vdso]`, `//anon`, ...).
    pub filename: String,
    /// Whether this is a data (non-exec) mapping.
    pub is_data: bool,
}

/// How an MMAP2 identifies the mapped file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MmapFileId<'a> {
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
    /// An inline build id (`PERF_RECORD_MISC_MMAP_BUILD_ID`).
    BuildId(&'a [u8]),
}

/// `COMM` (and exec, when `misc` has `COMM_EXEC`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Comm {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The new command name.
    pub comm: String,
    /// Whether the name changed because of exec.
    pub is_exec: bool,
}

/// `FORK` and `EXIT`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ForkExit {
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
}

/// A record with its fields decoded.
// Samples are the hot path and by far the most common record: boxing the
// large variant would allocate once per sample.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum RecordData<'a> {
    /// `SAMPLE`.
    Sample(Sample<'a>),
    /// `MMAP` or `MMAP2`.
    Mmap(Mmap<'a>),
    /// `COMM`.
    Comm(Comm),
    /// `FORK`.
    Fork(ForkExit),
    /// `EXIT`.
    Exit(ForkExit),
    /// `LOST`: records the kernel dropped.
    Lost {
        /// The event instance.
        id: u64,
        /// How many records were lost.
        lost: u64,
    },
    /// `LOST_SAMPLES`.
    LostSamples {
        /// How many samples were lost.
        lost: u64,
    },
    /// `THROTTLE` / `UNTHROTTLE`.
    Throttle {
        /// Whether this is UNTHROTTLE.
        unthrottle: bool,
        /// Time.
        time: u64,
        /// Event instance id.
        id: u64,
        /// Stream id.
        stream_id: u64,
    },
    /// `READ`.
    Read {
        /// Process id.
        pid: u32,
        /// Thread id.
        tid: u32,
        /// The values.
        values: ReadValues<'a>,
    },
    /// `AUX`.
    Aux {
        /// Offset in the AUX buffer.
        aux_offset: u64,
        /// Size.
        aux_size: u64,
        /// `PERF_AUX_FLAG_*`.
        flags: u64,
    },
    /// `ITRACE_START`.
    ItraceStart {
        /// Process id.
        pid: u32,
        /// Thread id.
        tid: u32,
    },
    /// `SWITCH` / `SWITCH_CPU_WIDE`.
    Switch {
        /// Switched out (else in).
        out: bool,
        /// Out while still runnable.
        preempt: bool,
        /// For CPU-wide switches: the next (out) or previous (in) pid/tid.
        next_prev: Option<(u32, u32)>,
    },
    /// `NAMESPACES`.
    Namespaces {
        /// Process id.
        pid: u32,
        /// Thread id.
        tid: u32,
        /// `{dev, ino}` pairs.
        namespaces: U64s<'a>,
    },
    /// `KSYMBOL`: a kernel symbol appeared or went (BPF, ftrace trampolines).
    Ksymbol {
        /// Address.
        addr: u64,
        /// Length.
        len: u32,
        /// `PERF_RECORD_KSYMBOL_TYPE_*`.
        ksym_type: u16,
        /// Flags (1 = unregister).
        flags: u16,
        /// Name.
        name: String,
    },
    /// `BPF_EVENT`.
    BpfEvent {
        /// `PERF_BPF_EVENT_*`.
        type_: u16,
        /// Flags.
        flags: u16,
        /// Program id.
        id: u32,
        /// Program tag.
        tag: [u8; 8],
    },
    /// `CGROUP`.
    Cgroup {
        /// cgroup id.
        id: u64,
        /// Path.
        path: String,
    },
    /// `TEXT_POKE`.
    TextPoke {
        /// Address.
        addr: u64,
        /// Old bytes.
        old: &'a [u8],
        /// New bytes.
        new: &'a [u8],
    },
    /// `AUX_OUTPUT_HW_ID`.
    AuxOutputHwId {
        /// Hardware id.
        hw_id: u64,
    },
    /// `HEADER_BUILD_ID`.
    BuildId {
        /// Process id.
        pid: i32,
        /// Build id bytes.
        build_id: &'a [u8],
        /// Path.
        filename: String,
    },
    /// `AUXTRACE`: trace data follows the record.
    Auxtrace {
        /// Size of the trace data.
        size: u64,
        /// Offset.
        offset: u64,
        /// Reference.
        reference: u64,
        /// Buffer index.
        idx: u32,
        /// Thread.
        tid: u32,
        /// cpu.
        cpu: u32,
        /// The trace data.
        data: &'a [u8],
    },
    /// `ID_INDEX`: `{id, idx, cpu, tid}` per event instance.
    IdIndex {
        /// The entries as u64 words, four per entry.
        entries: U64s<'a>,
    },
    /// `HEADER_ATTR` (pipe mode): an event's attr and ids.
    HeaderAttr {
        /// The attr.
        attr: Attr,
        /// Its ids.
        ids: U64s<'a>,
    },
    /// `HEADER_FEATURE` (pipe mode): a feature section.
    HeaderFeature {
        /// Feature number (see [`crate::features::id`]).
        feature: u64,
        /// Its bytes, in the file-mode section format.
        data: &'a [u8],
    },
    /// `EVENT_UPDATE`.
    EventUpdate {
        /// Event instance id.
        id: u64,
        /// What changes.
        update: EventUpdate<'a>,
    },
    /// `THREAD_MAP`: (pid, comm) per thread.
    ThreadMap(Vec<(u64, String)>),
    /// `CPU_MAP`: the cpus.
    CpuMap(Vec<u32>),
    /// `STAT`: a `perf stat` counter value.
    Stat(Stat),
    /// `STAT_ROUND`.
    StatRound {
        /// Round type (interval or final).
        type_: u64,
        /// Time.
        time: u64,
    },
    /// `STAT_CONFIG`: (tag, value) word pairs.
    StatConfig(U64s<'a>),
    /// `TIME_CONV`.
    TimeConv(TimeConv),
    /// `AUXTRACE_INFO`.
    AuxtraceInfo {
        /// AUX type (Intel PT, CoreSight, ...).
        type_: u32,
        /// Type-specific words.
        private: U64s<'a>,
    },
    /// `AUXTRACE_ERROR`.
    AuxtraceError(AuxtraceError),
    /// `FINISHED_ROUND`.
    FinishedRound,
    /// `FINISHED_INIT`.
    FinishedInit,
    /// `COMPRESSED` / `COMPRESSED2`: the records inside are delivered on
    /// their own after this one.
    Compressed {
        /// The compressed bytes (with COMPRESSED2's size word).
        data: &'a [u8],
    },
    /// Any other record, undecoded.
    Other,
}

fn short(what: &'static str, why: &str) -> ErrorKind {
    ErrorKind::ShortRecord {
        what,
        why: why.to_string(),
    }
}

/// Decodes a record body. `attr` is the record's event (`None` for perf's
/// own records, or when the event is unknown: then the trailer is not read).
pub fn parse_record<'a>(
    kind: RecordType,
    misc_bits: u16,
    body: &'a [u8],
    payload: &'a [u8],
    attr: Option<&Attr>,
    endian: Endian,
) -> Result<(RecordData<'a>, Option<SampleId>), ErrorKind> {
    if kind == RecordType::SAMPLE {
        let attr = attr.ok_or_else(|| short("SAMPLE", "no event for its id"))?;
        return Ok((
            RecordData::Sample(parse_sample(body, misc_bits, attr, endian)?),
            None,
        ));
    }
    // Split off the sample_id trailer of kernel records.
    let (fields, trailer) = match attr {
        Some(a) if kind.is_kernel() => {
            let n = trailer_len(a);
            let cut = body
                .len()
                .checked_sub(n)
                .ok_or_else(|| short("sample_id", "trailer longer than the record"))?;
            let (f, t) = body.split_at(cut);
            (f, Some(parse_trailer(t, a, endian)))
        }
        _ => (body, None),
    };
    let mut f = Fields {
        c: Cursor::new(fields, endian),
        name: kind.known_name().unwrap_or("unknown"),
    };
    let data = match kind {
        RecordType::MMAP | RecordType::MMAP2 => mmap(kind, misc_bits, &mut f)?,
        RecordType::COMM
        | RecordType::FORK
        | RecordType::EXIT
        | RecordType::NAMESPACES
        | RecordType::CGROUP
        | RecordType::SWITCH
        | RecordType::SWITCH_CPU_WIDE
        | RecordType::ITRACE_START => task_record(kind, misc_bits, &mut f)?,
        k if k.is_kernel() => event_record(kind, &mut f, attr)?,
        _ => perf_record(kind, misc_bits, &mut f, payload)?,
    };
    Ok((data, trailer))
}

/// A record's fields as they are read, naming the record in what is short.
struct Fields<'a> {
    c: Cursor<'a>,
    name: &'static str,
}

impl<'a> Fields<'a> {
    fn u16(&mut self, what: &str) -> Result<u16, ErrorKind> {
        self.c.u16().ok_or_else(|| short(self.name, what))
    }

    fn u32(&mut self) -> Result<u32, ErrorKind> {
        self.c.u32().ok_or_else(|| short(self.name, "4 bytes"))
    }

    fn u64(&mut self) -> Result<u64, ErrorKind> {
        self.c.u64().ok_or_else(|| short(self.name, "8 bytes"))
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<&'a [u8], ErrorKind> {
        self.c.bytes(n).ok_or_else(|| short(self.name, what))
    }

    /// `nr` entries of `words` u64 each, after their count.
    fn entries(&mut self, words: u64) -> Result<U64s<'a>, ErrorKind> {
        let nr = self.u64()?;
        let n = nr
            .checked_mul(words)
            .ok_or_else(|| short(self.name, "entry count"))?;
        self.c.u64s(n).ok_or_else(|| short(self.name, "entries"))
    }

    /// The rest of the fields as a NUL-terminated string.
    fn text(&self) -> String {
        c_str(self.c.rest())
    }
}

/// MMAP and MMAP2: a mapping of a process.
fn mmap<'a>(
    kind: RecordType,
    misc_bits: u16,
    f: &mut Fields<'a>,
) -> Result<RecordData<'a>, ErrorKind> {
    let (pid, tid, addr, len, pgoff) = (f.u32()?, f.u32()?, f.u64()?, f.u64()?, f.u64()?);
    let (mut file_id, mut prot, mut flags) = (None, None, None);
    if kind == RecordType::MMAP2 {
        let id_bytes = f.bytes(24, "device/build id")?;
        file_id = Some(if misc_bits & misc::MMAP_BUILD_ID != 0 {
            let n = id_bytes[0] as usize;
            if n > 20 {
                return Err(short(f.name, &format!("build id size {n} > 20")));
            }
            MmapFileId::BuildId(&id_bytes[4..4 + n])
        } else {
            let mut ic = Cursor::new(id_bytes, f.c.endian());
            MmapFileId::Inode {
                maj: ic.u32().unwrap_or(0),
                min: ic.u32().unwrap_or(0),
                ino: ic.u64().unwrap_or(0),
                ino_generation: ic.u64().unwrap_or(0),
            }
        });
        (prot, flags) = (Some(f.u32()?), Some(f.u32()?));
    }
    Ok(RecordData::Mmap(Mmap {
        pid,
        tid,
        addr,
        len,
        pgoff,
        file_id,
        prot,
        flags,
        filename: f.text(),
        is_data: misc_bits & misc::MMAP_DATA != 0,
    }))
}

/// The kernel's records of a task's life: its names, forks and exits,
/// namespaces, cgroups, context switches, trace starts.
fn task_record<'a>(
    kind: RecordType,
    misc_bits: u16,
    f: &mut Fields<'a>,
) -> Result<RecordData<'a>, ErrorKind> {
    Ok(match kind {
        RecordType::COMM => {
            let (pid, tid) = (f.u32()?, f.u32()?);
            RecordData::Comm(Comm {
                pid,
                tid,
                comm: f.text(),
                is_exec: misc_bits & misc::COMM_EXEC != 0,
            })
        }
        RecordType::FORK | RecordType::EXIT => {
            let fe = ForkExit {
                pid: f.u32()?,
                ppid: f.u32()?,
                tid: f.u32()?,
                ptid: f.u32()?,
                time: f.u64()?,
            };
            if kind == RecordType::FORK {
                RecordData::Fork(fe)
            } else {
                RecordData::Exit(fe)
            }
        }
        RecordType::NAMESPACES => {
            let (pid, tid) = (f.u32()?, f.u32()?);
            RecordData::Namespaces {
                pid,
                tid,
                namespaces: f.entries(2)?,
            }
        }
        RecordType::CGROUP => RecordData::Cgroup {
            id: f.u64()?,
            path: f.text(),
        },
        RecordType::SWITCH | RecordType::SWITCH_CPU_WIDE => RecordData::Switch {
            out: misc_bits & misc::SWITCH_OUT != 0,
            preempt: misc_bits & misc::SWITCH_OUT_PREEMPT != 0,
            next_prev: if kind == RecordType::SWITCH_CPU_WIDE {
                Some((f.u32()?, f.u32()?))
            } else {
                None
            },
        },
        RecordType::ITRACE_START => RecordData::ItraceStart {
            pid: f.u32()?,
            tid: f.u32()?,
        },
        _ => RecordData::Other,
    })
}

/// The kernel's other records: losses, throttling, counter reads, AUX
/// areas, kernel symbols, BPF programs and code patches.
fn event_record<'a>(
    kind: RecordType,
    f: &mut Fields<'a>,
    attr: Option<&Attr>,
) -> Result<RecordData<'a>, ErrorKind> {
    Ok(match kind {
        RecordType::LOST => RecordData::Lost {
            id: f.u64()?,
            lost: f.u64()?,
        },
        RecordType::LOST_SAMPLES => RecordData::LostSamples { lost: f.u64()? },
        RecordType::THROTTLE | RecordType::UNTHROTTLE => RecordData::Throttle {
            unthrottle: kind == RecordType::UNTHROTTLE,
            time: f.u64()?,
            id: f.u64()?,
            stream_id: f.u64()?,
        },
        RecordType::READ => {
            let (pid, tid) = (f.u32()?, f.u32()?);
            let a = attr.ok_or_else(|| short(f.name, "no event for its id"))?;
            RecordData::Read {
                pid,
                tid,
                values: parse_read(&mut f.c, a.read_format)?,
            }
        }
        RecordType::AUX => RecordData::Aux {
            aux_offset: f.u64()?,
            aux_size: f.u64()?,
            flags: f.u64()?,
        },
        RecordType::AUX_OUTPUT_HW_ID => RecordData::AuxOutputHwId { hw_id: f.u64()? },
        RecordType::KSYMBOL => {
            let (addr, len) = (f.u64()?, f.u32()?);
            let (ksym_type, flags) = (f.u16("type")?, f.u16("flags")?);
            RecordData::Ksymbol {
                addr,
                len,
                ksym_type,
                flags,
                name: f.text(),
            }
        }
        RecordType::BPF_EVENT => {
            let (type_, flags, id) = (f.u16("type")?, f.u16("flags")?, f.u32()?);
            let mut tag = [0u8; 8];
            tag.copy_from_slice(f.bytes(8, "tag")?);
            RecordData::BpfEvent {
                type_,
                flags,
                id,
                tag,
            }
        }
        RecordType::TEXT_POKE => {
            let addr = f.u64()?;
            let old_len = f.u16("old_len")? as usize;
            let new_len = f.u16("new_len")? as usize;
            let old = f.bytes(old_len, "old bytes")?;
            let new = f.bytes(new_len, "new bytes")?;
            RecordData::TextPoke { addr, old, new }
        }
        _ => RecordData::Other,
    })
}

/// perf's own records (types from 64): build ids, AUX trace data, the
/// header of a pipe, `perf stat`'s records, rounds, compressed data.
fn perf_record<'a>(
    kind: RecordType,
    misc_bits: u16,
    f: &mut Fields<'a>,
    payload: &'a [u8],
) -> Result<RecordData<'a>, ErrorKind> {
    let (fields, endian) = (f.c.rest(), f.c.endian());
    Ok(match kind {
        RecordType::HEADER_BUILD_ID => {
            let pid = f.u32()? as i32;
            let id = f.bytes(24, "build id")?;
            let n = if misc_bits & misc::BUILD_ID_SIZE != 0 {
                (id[20] as usize).min(20)
            } else {
                20
            };
            RecordData::BuildId {
                pid,
                build_id: &id[..n],
                filename: f.text(),
            }
        }
        RecordType::AUXTRACE => {
            let (size, offset, reference) = (f.u64()?, f.u64()?, f.u64()?);
            let (idx, tid, cpu) = (f.u32()?, f.u32()?, f.u32()?);
            RecordData::Auxtrace {
                size,
                offset,
                reference,
                idx,
                tid,
                cpu,
                data: payload,
            }
        }
        RecordType::ID_INDEX => RecordData::IdIndex {
            entries: f.entries(4)?,
        },
        RecordType::HEADER_ATTR => {
            let (attr, ids) = user::header_attr(fields, endian)?;
            RecordData::HeaderAttr { attr, ids }
        }
        RecordType::HEADER_FEATURE => RecordData::HeaderFeature {
            feature: f.u64()?,
            data: f.c.rest(),
        },
        RecordType::EVENT_UPDATE => {
            let (id, update) = user::event_update(fields, endian)?;
            RecordData::EventUpdate { id, update }
        }
        RecordType::THREAD_MAP => RecordData::ThreadMap(user::thread_map(fields, endian)?),
        RecordType::CPU_MAP => RecordData::CpuMap(user::cpu_map(fields, endian)?),
        RecordType::STAT => RecordData::Stat(user::stat(fields, endian)?),
        RecordType::STAT_ROUND => RecordData::StatRound {
            type_: f.u64()?,
            time: f.u64()?,
        },
        RecordType::STAT_CONFIG => RecordData::StatConfig(f.entries(2)?),
        RecordType::TIME_CONV => RecordData::TimeConv(user::time_conv(fields, endian)?),
        RecordType::AUXTRACE_INFO => {
            let type_ = f.u32()?;
            f.c.skip(4).ok_or_else(|| short(f.name, "reserved"))?;
            let n = (f.c.remaining() / 8) as u64;
            RecordData::AuxtraceInfo {
                type_,
                private: f.c.u64s(n).unwrap_or(U64s::EMPTY),
            }
        }
        RecordType::AUXTRACE_ERROR => {
            RecordData::AuxtraceError(user::auxtrace_error(fields, endian)?)
        }
        RecordType::FINISHED_ROUND => RecordData::FinishedRound,
        RecordType::FINISHED_INIT => RecordData::FinishedInit,
        RecordType::COMPRESSED | RecordType::COMPRESSED2 => RecordData::Compressed { data: fields },
        _ => RecordData::Other,
    })
}
