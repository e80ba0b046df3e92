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
    let mut c = Cursor::new(fields, endian);
    let name: &'static str = kind.known_name().unwrap_or("unknown");
    macro_rules! u32f {
        () => {
            c.u32().ok_or_else(|| short(name, "4 bytes"))?
        };
    }
    macro_rules! u64f {
        () => {
            c.u64().ok_or_else(|| short(name, "8 bytes"))?
        };
    }
    let data = match kind {
        RecordType::MMAP => {
            let (pid, tid, addr, len, pgoff) = (u32f!(), u32f!(), u64f!(), u64f!(), u64f!());
            RecordData::Mmap(Mmap {
                pid,
                tid,
                addr,
                len,
                pgoff,
                file_id: None,
                prot: None,
                flags: None,
                filename: c_str(c.rest()),
                is_data: misc_bits & misc::MMAP_DATA != 0,
            })
        }
        RecordType::MMAP2 => {
            let (pid, tid, addr, len, pgoff) = (u32f!(), u32f!(), u64f!(), u64f!(), u64f!());
            let id_bytes = c.bytes(24).ok_or_else(|| short(name, "device/build id"))?;
            let file_id = if misc_bits & misc::MMAP_BUILD_ID != 0 {
                let n = id_bytes[0] as usize;
                if n > 20 {
                    return Err(short(name, &format!("build id size {n} > 20")));
                }
                MmapFileId::BuildId(&id_bytes[4..4 + n])
            } else {
                let mut ic = Cursor::new(id_bytes, endian);
                MmapFileId::Inode {
                    maj: ic.u32().unwrap_or(0),
                    min: ic.u32().unwrap_or(0),
                    ino: ic.u64().unwrap_or(0),
                    ino_generation: ic.u64().unwrap_or(0),
                }
            };
            let (prot, flags) = (u32f!(), u32f!());
            RecordData::Mmap(Mmap {
                pid,
                tid,
                addr,
                len,
                pgoff,
                file_id: Some(file_id),
                prot: Some(prot),
                flags: Some(flags),
                filename: c_str(c.rest()),
                is_data: misc_bits & misc::MMAP_DATA != 0,
            })
        }
        RecordType::COMM => {
            let (pid, tid) = (u32f!(), u32f!());
            RecordData::Comm(Comm {
                pid,
                tid,
                comm: c_str(c.rest()),
                is_exec: misc_bits & misc::COMM_EXEC != 0,
            })
        }
        RecordType::FORK | RecordType::EXIT => {
            let f = ForkExit {
                pid: u32f!(),
                ppid: u32f!(),
                tid: u32f!(),
                ptid: u32f!(),
                time: u64f!(),
            };
            if kind == RecordType::FORK {
                RecordData::Fork(f)
            } else {
                RecordData::Exit(f)
            }
        }
        RecordType::LOST => RecordData::Lost {
            id: u64f!(),
            lost: u64f!(),
        },
        RecordType::LOST_SAMPLES => RecordData::LostSamples { lost: u64f!() },
        RecordType::THROTTLE | RecordType::UNTHROTTLE => RecordData::Throttle {
            unthrottle: kind == RecordType::UNTHROTTLE,
            time: u64f!(),
            id: u64f!(),
            stream_id: u64f!(),
        },
        RecordType::READ => {
            let (pid, tid) = (u32f!(), u32f!());
            let a = attr.ok_or_else(|| short(name, "no event for its id"))?;
            RecordData::Read {
                pid,
                tid,
                values: parse_read(&mut c, a.read_format)?,
            }
        }
        RecordType::AUX => RecordData::Aux {
            aux_offset: u64f!(),
            aux_size: u64f!(),
            flags: u64f!(),
        },
        RecordType::ITRACE_START => RecordData::ItraceStart {
            pid: u32f!(),
            tid: u32f!(),
        },
        RecordType::SWITCH | RecordType::SWITCH_CPU_WIDE => RecordData::Switch {
            out: misc_bits & misc::SWITCH_OUT != 0,
            preempt: misc_bits & misc::SWITCH_OUT_PREEMPT != 0,
            next_prev: if kind == RecordType::SWITCH_CPU_WIDE {
                Some((u32f!(), u32f!()))
            } else {
                None
            },
        },
        RecordType::NAMESPACES => {
            let (pid, tid, nr) = (u32f!(), u32f!(), u64f!());
            let words = nr
                .checked_mul(2)
                .ok_or_else(|| short(name, "namespace count"))?;
            let namespaces = c.u64s(words).ok_or_else(|| short(name, "namespaces"))?;
            RecordData::Namespaces {
                pid,
                tid,
                namespaces,
            }
        }
        RecordType::KSYMBOL => {
            let addr = u64f!();
            let len = u32f!();
            let ksym_type = c.u16().ok_or_else(|| short(name, "type"))?;
            let flags = c.u16().ok_or_else(|| short(name, "flags"))?;
            RecordData::Ksymbol {
                addr,
                len,
                ksym_type,
                flags,
                name: c_str(c.rest()),
            }
        }
        RecordType::BPF_EVENT => {
            let type_ = c.u16().ok_or_else(|| short(name, "type"))?;
            let flags = c.u16().ok_or_else(|| short(name, "flags"))?;
            let id = u32f!();
            let mut tag = [0u8; 8];
            tag.copy_from_slice(c.bytes(8).ok_or_else(|| short(name, "tag"))?);
            RecordData::BpfEvent {
                type_,
                flags,
                id,
                tag,
            }
        }
        RecordType::CGROUP => RecordData::Cgroup {
            id: u64f!(),
            path: c_str(c.rest()),
        },
        RecordType::TEXT_POKE => {
            let addr = u64f!();
            let old_len = c.u16().ok_or_else(|| short(name, "old_len"))? as usize;
            let new_len = c.u16().ok_or_else(|| short(name, "new_len"))? as usize;
            let old = c.bytes(old_len).ok_or_else(|| short(name, "old bytes"))?;
            let new = c.bytes(new_len).ok_or_else(|| short(name, "new bytes"))?;
            RecordData::TextPoke { addr, old, new }
        }
        RecordType::AUX_OUTPUT_HW_ID => RecordData::AuxOutputHwId { hw_id: u64f!() },
        RecordType::HEADER_BUILD_ID => {
            let pid = u32f!() as i32;
            let id = c.bytes(24).ok_or_else(|| short(name, "build id"))?;
            let n = if misc_bits & misc::BUILD_ID_SIZE != 0 {
                (id[20] as usize).min(20)
            } else {
                20
            };
            RecordData::BuildId {
                pid,
                build_id: &id[..n],
                filename: c_str(c.rest()),
            }
        }
        RecordType::AUXTRACE => {
            let (size, offset, reference) = (u64f!(), u64f!(), u64f!());
            let (idx, tid, cpu) = (u32f!(), u32f!(), u32f!());
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
        RecordType::ID_INDEX => {
            let nr = u64f!();
            let words = nr
                .checked_mul(4)
                .ok_or_else(|| short(name, "entry count"))?;
            RecordData::IdIndex {
                entries: c.u64s(words).ok_or_else(|| short(name, "entries"))?,
            }
        }
        RecordType::HEADER_ATTR => {
            let (attr, ids) = user::header_attr(fields, endian)?;
            RecordData::HeaderAttr { attr, ids }
        }
        RecordType::HEADER_FEATURE => RecordData::HeaderFeature {
            feature: u64f!(),
            data: c.rest(),
        },
        RecordType::EVENT_UPDATE => {
            let (id, update) = user::event_update(fields, endian)?;
            RecordData::EventUpdate { id, update }
        }
        RecordType::THREAD_MAP => RecordData::ThreadMap(user::thread_map(fields, endian)?),
        RecordType::CPU_MAP => RecordData::CpuMap(user::cpu_map(fields, endian)?),
        RecordType::STAT => RecordData::Stat(user::stat(fields, endian)?),
        RecordType::STAT_ROUND => RecordData::StatRound {
            type_: u64f!(),
            time: u64f!(),
        },
        RecordType::STAT_CONFIG => {
            let nr = u64f!();
            let words = nr
                .checked_mul(2)
                .ok_or_else(|| short(name, "entry count"))?;
            RecordData::StatConfig(c.u64s(words).ok_or_else(|| short(name, "entries"))?)
        }
        RecordType::TIME_CONV => RecordData::TimeConv(user::time_conv(fields, endian)?),
        RecordType::AUXTRACE_INFO => {
            let type_ = u32f!();
            c.skip(4).ok_or_else(|| short(name, "reserved"))?;
            let n = (c.remaining() / 8) as u64;
            RecordData::AuxtraceInfo {
                type_,
                private: c.u64s(n).unwrap_or(U64s::EMPTY),
            }
        }
        RecordType::AUXTRACE_ERROR => {
            RecordData::AuxtraceError(user::auxtrace_error(fields, endian)?)
        }
        RecordType::FINISHED_ROUND => RecordData::FinishedRound,
        RecordType::FINISHED_INIT => RecordData::FinishedInit,
        RecordType::COMPRESSED | RecordType::COMPRESSED2 => RecordData::Compressed { data: fields },
        _ => RecordData::Other,
    };
    Ok((data, trailer))
}
