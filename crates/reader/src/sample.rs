//! The body of `PERF_RECORD_SAMPLE`, decoded field by field from
//! `attr.sample_type`, `read_format` and `branch_sample_type`.
//!
//! The order is the kernel's (`perf_output_sample`): every field sits after
//! all the fields with a lower bit, except `IDENTIFIER`, which comes first,
//! and `AUX`, which comes last. Variable-length parts (callchain, raw data,
//! branch stack, registers, stacks) are borrowed, not copied.

use crate::attr::{Attr, BranchSampleType, ReadFormat, SampleType};
use crate::endian::{Cursor, Endian, U64s};
use crate::error::ErrorKind;

/// A decoded sample. Fields the attr did not request are `None`.
#[derive(Clone, Debug, Default)]
pub struct Sample<'a> {
    /// `PERF_SAMPLE_IDENTIFIER`.
    pub identifier: Option<u64>,
    /// Instruction pointer.
    pub ip: Option<u64>,
    /// Process id.
    pub pid: Option<u32>,
    /// Thread id.
    pub tid: Option<u32>,
    /// Timestamp (ns, perf clock unless the attr chose another).
    pub time: Option<u64>,
    /// Data address.
    pub addr: Option<u64>,
    /// `PERF_SAMPLE_ID`.
    pub id: Option<u64>,
    /// Stream id.
    pub stream_id: Option<u64>,
    /// cpu.
    pub cpu: Option<u32>,
    /// Sampling period.
    pub period: Option<u64>,
    /// Counter values (`PERF_SAMPLE_READ`).
    pub read: Option<ReadValues<'a>>,
    /// Callchain, markers included.
    pub callchain: Option<Callchain<'a>>,
    /// Raw data (tracepoint fields, PMU-specific data).
    pub raw: Option<&'a [u8]>,
    /// Branch stack (LBR).
    pub branch_stack: Option<BranchStack<'a>>,
    /// User registers.
    pub regs_user: Option<Regs<'a>>,
    /// User stack dump.
    pub stack_user: Option<StackUser<'a>>,
    /// `WEIGHT` or `WEIGHT_STRUCT` as the raw 64-bit word (see
    /// [`Sample::weight_value`]).
    pub weight: Option<u64>,
    /// Whether `weight` is a `WEIGHT_STRUCT` (three fields in one word).
    pub weight_struct: bool,
    /// Data source (`perf_mem_data_src`).
    pub data_src: Option<u64>,
    /// Transaction flags.
    pub transaction: Option<u64>,
    /// Interrupt registers.
    pub regs_intr: Option<Regs<'a>>,
    /// Physical data address.
    pub phys_addr: Option<u64>,
    /// cgroup id.
    pub cgroup: Option<u64>,
    /// Data page size.
    pub data_page_size: Option<u64>,
    /// Code page size.
    pub code_page_size: Option<u64>,
    /// AUX area data.
    pub aux: Option<&'a [u8]>,
    /// `header.misc` (cpu mode in the low three bits).
    pub misc: u16,
}

impl Sample<'_> {
    /// The event instance id, from `IDENTIFIER` or `ID`.
    pub fn event_id(&self) -> Option<u64> {
        self.identifier.or(self.id)
    }

    /// The weight as perf reports it: the whole word for `WEIGHT`, the low
    /// 32 bits (`var1_dw`) for `WEIGHT_STRUCT`.
    pub fn weight_value(&self) -> Option<u64> {
        let w = self.weight?;
        Some(if self.weight_struct {
            w & 0xffff_ffff
        } else {
            w
        })
    }

    /// `WEIGHT_STRUCT`'s second field (`var2_w`: instruction latency on x86).
    pub fn weight_var2(&self) -> Option<u16> {
        self.weight
            .filter(|_| self.weight_struct)
            .map(|w| (w >> 32) as u16)
    }

    /// `WEIGHT_STRUCT`'s third field (`var3_w`: retire latency or pipeline
    /// stage cycles, by architecture).
    pub fn weight_var3(&self) -> Option<u16> {
        self.weight
            .filter(|_| self.weight_struct)
            .map(|w| (w >> 48) as u16)
    }

    /// The cpu mode (`PERF_RECORD_MISC_*`, low three bits of misc).
    pub fn cpu_mode(&self) -> u16 {
        self.misc & crate::record_type::misc::CPUMODE_MASK
    }
}

/// One counter value from `PERF_SAMPLE_READ`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReadValue {
    /// Cumulative count since the event was enabled.
    pub value: u64,
    /// The event instance id (`PERF_FORMAT_ID`).
    pub id: Option<u64>,
    /// Lost samples (`PERF_FORMAT_LOST`).
    pub lost: Option<u64>,
}

/// The values of `PERF_SAMPLE_READ`, in either layout.
#[derive(Clone, Copy, Debug)]
pub struct ReadValues<'a> {
    /// `TOTAL_TIME_ENABLED`.
    pub time_enabled: Option<u64>,
    /// `TOTAL_TIME_RUNNING`.
    pub time_running: Option<u64>,
    entries: ReadEntries<'a>,
}

#[derive(Clone, Copy, Debug)]
enum ReadEntries<'a> {
    /// `PERF_FORMAT_GROUP`: `{value, [id], [lost]}` per member.
    Group {
        words: U64s<'a>,
        has_id: bool,
        has_lost: bool,
    },
    /// One value.
    Single(ReadValue),
}

impl<'a> ReadValues<'a> {
    /// Whether this is a group read.
    pub fn is_group(&self) -> bool {
        matches!(self.entries, ReadEntries::Group { .. })
    }

    /// Number of values (group members, or 1).
    pub fn len(&self) -> usize {
        match self.entries {
            ReadEntries::Group {
                words,
                has_id,
                has_lost,
            } => words.len() / (1 + has_id as usize + has_lost as usize),
            ReadEntries::Single(_) => 1,
        }
    }

    /// Whether there are no values (a group read with `nr == 0`).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The values: the leader first, then the other members in kernel
    /// sibling order.
    pub fn values(&self) -> impl Iterator<Item = ReadValue> + 'a {
        let (words, has_id, has_lost, single) = match self.entries {
            ReadEntries::Group {
                words,
                has_id,
                has_lost,
            } => (words, has_id, has_lost, None),
            ReadEntries::Single(v) => (U64s::EMPTY, false, false, Some(v)),
        };
        let stride = 1 + has_id as usize + has_lost as usize;
        let n = if single.is_some() {
            0
        } else {
            words.len() / stride
        };
        single.into_iter().chain((0..n).map(move |i| {
            let base = i * stride;
            ReadValue {
                value: words.get(base).unwrap_or(0),
                id: has_id.then(|| words.get(base + 1).unwrap_or(0)),
                lost: has_lost.then(|| words.get(base + 1 + has_id as usize).unwrap_or(0)),
            }
        }))
    }
}

/// Where the callchain entries that follow a context marker ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CallchainContext {
    /// `PERF_CONTEXT_HV`.
    Hypervisor,
    /// `PERF_CONTEXT_KERNEL`.
    Kernel,
    /// `PERF_CONTEXT_USER`.
    User,
    /// `PERF_CONTEXT_GUEST`.
    Guest,
    /// `PERF_CONTEXT_GUEST_KERNEL`.
    GuestKernel,
    /// `PERF_CONTEXT_GUEST_USER`.
    GuestUser,
    /// A value at or above `PERF_CONTEXT_MAX` that is none of the above.
    Other(u64),
}

/// `PERF_CONTEXT_MAX` (-4095): entries at or above it are markers.
pub const PERF_CONTEXT_MAX: u64 = -4095i64 as u64;

impl CallchainContext {
    /// The marker's context, or `None` if `v` is an address.
    pub fn from_marker(v: u64) -> Option<Self> {
        if v < PERF_CONTEXT_MAX {
            return None;
        }
        Some(match v as i64 {
            -32 => CallchainContext::Hypervisor,
            -128 => CallchainContext::Kernel,
            -512 => CallchainContext::User,
            -2048 => CallchainContext::Guest,
            -2176 => CallchainContext::GuestKernel,
            -2560 => CallchainContext::GuestUser,
            _ => CallchainContext::Other(v),
        })
    }

    /// Short name: `kernel`, `user`, `hv`, `guest`, `guest_kernel`,
    /// `guest_user`, `other`.
    pub fn name(self) -> &'static str {
        match self {
            CallchainContext::Hypervisor => "hv",
            CallchainContext::Kernel => "kernel",
            CallchainContext::User => "user",
            CallchainContext::Guest => "guest",
            CallchainContext::GuestKernel => "guest_kernel",
            CallchainContext::GuestUser => "guest_user",
            CallchainContext::Other(_) => "other",
        }
    }
}

/// A callchain as the kernel wrote it: addresses interleaved with
/// `PERF_CONTEXT_*` markers.
#[derive(Clone, Copy, Debug)]
pub struct Callchain<'a> {
    /// The raw entries, markers included.
    pub raw: U64s<'a>,
}

/// One address of a callchain, with the context it ran in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallchainFrame {
    /// The address (the first is the sampled ip; later ones are return
    /// addresses).
    pub addr: u64,
    /// The context from the last marker before it, if any.
    pub context: Option<CallchainContext>,
}

impl<'a> Callchain<'a> {
    /// The addresses with their contexts, markers removed.
    pub fn frames(&self) -> impl Iterator<Item = CallchainFrame> + 'a {
        let mut context = None;
        self.raw
            .iter()
            .filter_map(move |v| match CallchainContext::from_marker(v) {
                Some(c) => {
                    context = Some(c);
                    None
                }
                None => Some(CallchainFrame { addr: v, context }),
            })
    }
}

/// The branch stack of a sample.
#[derive(Clone, Copy, Debug)]
pub struct BranchStack<'a> {
    /// `hw_idx`, when `branch_sample_type` has `HW_INDEX`.
    pub hw_idx: Option<u64>,
    entries: U64s<'a>,
    /// Per-entry counters, when `branch_sample_type` has `COUNTERS`.
    pub counters: Option<U64s<'a>>,
    endian: Endian,
}

/// One taken branch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BranchEntry {
    /// Source address.
    pub from: u64,
    /// Target address.
    pub to: u64,
    /// The flags word as the kernel wrote it (decode with
    /// [`BranchEntry::flags`]).
    pub flags_raw: u64,
    endian: Endian,
}

/// The decoded `perf_branch_entry` bitfield.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct BranchFlags {
    /// Mispredicted.
    pub mispred: bool,
    /// Predicted.
    pub predicted: bool,
    /// In a transaction.
    pub in_tx: bool,
    /// Transaction abort.
    pub abort: bool,
    /// Cycles since the previous branch (0 = unknown).
    pub cycles: u16,
    /// Branch type.
    pub type_: u8,
    /// Speculation outcome.
    pub spec: u8,
    /// Extended branch type.
    pub new_type: u8,
    /// Privilege level.
    pub priv_: u8,
}

impl BranchEntry {
    /// Decodes the flags bitfield. On big-endian captures the bitfield is
    /// allocated from the most significant bit.
    pub fn flags(&self) -> BranchFlags {
        let v = self.flags_raw;
        // (shift, width) of each field counted from the first-declared end.
        let field = |lsb_shift: u32, width: u32| -> u64 {
            let shift = match self.endian {
                Endian::Little => lsb_shift,
                Endian::Big => 64 - lsb_shift - width,
            };
            (v >> shift) & ((1u64 << width) - 1)
        };
        BranchFlags {
            mispred: field(0, 1) != 0,
            predicted: field(1, 1) != 0,
            in_tx: field(2, 1) != 0,
            abort: field(3, 1) != 0,
            cycles: field(4, 16) as u16,
            type_: field(20, 4) as u8,
            spec: field(24, 2) as u8,
            new_type: field(26, 4) as u8,
            priv_: field(30, 3) as u8,
        }
    }
}

impl<'a> BranchStack<'a> {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.entries.len() / 3
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The entries, most recent first.
    pub fn entries(&self) -> impl Iterator<Item = BranchEntry> + 'a {
        let e = self.entries;
        let endian = self.endian;
        (0..e.len() / 3).map(move |i| BranchEntry {
            from: e.get(3 * i).unwrap_or(0),
            to: e.get(3 * i + 1).unwrap_or(0),
            flags_raw: e.get(3 * i + 2).unwrap_or(0),
            endian,
        })
    }
}

/// A register dump (`REGS_USER` / `REGS_INTR`).
#[derive(Clone, Copy, Debug)]
pub struct Regs<'a> {
    /// `PERF_SAMPLE_REGS_ABI_*` (0 = none, 1 = 32-bit, 2 = 64-bit).
    pub abi: u64,
    /// Which registers: the attr's mask.
    pub mask: u64,
    /// One value per set bit of `mask`, lowest bit first (empty when abi 0).
    pub values: U64s<'a>,
}

/// A user stack dump (`STACK_USER`).
#[derive(Clone, Copy, Debug)]
pub struct StackUser<'a> {
    /// The bytes reserved for the stack (`size` bytes).
    pub data: &'a [u8],
    /// How many of them are valid (`dyn_size`), absent when size is 0.
    pub dyn_size: Option<u64>,
}

impl<'a> StackUser<'a> {
    /// The valid part of the dump.
    pub fn valid(&self) -> &'a [u8] {
        let n = self
            .dyn_size
            .map_or(0, |d| usize::try_from(d).unwrap_or(usize::MAX));
        &self.data[..n.min(self.data.len())]
    }
}

/// Why a sample body could not be decoded: the field that ran short.
fn short(field: &str, need: &str) -> ErrorKind {
    ErrorKind::ShortRecord {
        what: "SAMPLE",
        why: format!("{field}: {need}"),
    }
}

/// Decodes a sample body (the bytes after the 8-byte record header).
///
/// The steps follow the kernel's field order; what they return borrows
/// from `body`.
pub fn parse_sample<'a>(
    body: &'a [u8],
    misc: u16,
    attr: &Attr,
    endian: Endian,
) -> Result<Sample<'a>, ErrorKind> {
    let t = attr.sample_type;
    let mut c = Cursor::new(body, endian);
    let mut s = Sample {
        misc,
        ..Sample::default()
    };
    parse_ids_and_times(&mut c, t, &mut s)?;
    if t.contains(SampleType::READ) {
        s.read = Some(parse_read(&mut c, attr.read_format)?);
    }
    if t.contains(SampleType::CALLCHAIN) {
        s.callchain = Some(parse_callchain(&mut c)?);
    }
    if t.contains(SampleType::RAW) {
        s.raw = Some(parse_raw(&mut c)?);
    }
    if t.contains(SampleType::BRANCH_STACK) {
        s.branch_stack = Some(parse_branch_stack(&mut c, attr.branch_sample_type)?);
    }
    if t.contains(SampleType::REGS_USER) {
        s.regs_user = Some(parse_regs(&mut c, attr.sample_regs_user, "regs_user")?);
    }
    if t.contains(SampleType::STACK_USER) {
        s.stack_user = Some(parse_stack_user(&mut c)?);
    }
    parse_memory_access(&mut c, t, &mut s)?;
    if t.contains(SampleType::REGS_INTR) {
        s.regs_intr = Some(parse_regs(&mut c, attr.sample_regs_intr, "regs_intr")?);
    }
    s.phys_addr = u64_field_if(&mut c, t, SampleType::PHYS_ADDR, "phys_addr")?;
    s.cgroup = u64_field_if(&mut c, t, SampleType::CGROUP, "cgroup")?;
    s.data_page_size = u64_field_if(&mut c, t, SampleType::DATA_PAGE_SIZE, "data_page_size")?;
    s.code_page_size = u64_field_if(&mut c, t, SampleType::CODE_PAGE_SIZE, "code_page_size")?;
    if t.contains(SampleType::AUX) {
        s.aux = Some(sized_bytes(&mut c, "aux size", "aux")?.1);
    }
    Ok(s)
}

/// The next 8-byte field, `name`d in the error when the body ends first.
#[inline]
fn u64_field(c: &mut Cursor<'_>, name: &str) -> Result<u64, ErrorKind> {
    c.u64().ok_or_else(|| short(name, "8 bytes"))
}

/// The 8-byte field `name`, when the attr's `t` has `flag`.
#[inline]
fn u64_field_if(
    c: &mut Cursor<'_>,
    t: SampleType,
    flag: SampleType,
    name: &str,
) -> Result<Option<u64>, ErrorKind> {
    if t.contains(flag) {
        u64_field(c, name).map(Some)
    } else {
        Ok(None)
    }
}

/// The 4-byte field `name`.
#[inline]
fn u32_field(c: &mut Cursor<'_>, name: &str) -> Result<u32, ErrorKind> {
    c.u32().ok_or_else(|| short(name, "4 bytes"))
}

/// The fixed fields before the first variable-length one: `IDENTIFIER`
/// through `PERIOD`.
#[inline]
fn parse_ids_and_times(
    c: &mut Cursor<'_>,
    t: SampleType,
    s: &mut Sample<'_>,
) -> Result<(), ErrorKind> {
    s.identifier = u64_field_if(c, t, SampleType::IDENTIFIER, "identifier")?;
    s.ip = u64_field_if(c, t, SampleType::IP, "ip")?;
    if t.contains(SampleType::TID) {
        s.pid = Some(u32_field(c, "pid")?);
        s.tid = Some(u32_field(c, "tid")?);
    }
    s.time = u64_field_if(c, t, SampleType::TIME, "time")?;
    s.addr = u64_field_if(c, t, SampleType::ADDR, "addr")?;
    s.id = u64_field_if(c, t, SampleType::ID, "id")?;
    s.stream_id = u64_field_if(c, t, SampleType::STREAM_ID, "stream_id")?;
    if t.contains(SampleType::CPU) {
        s.cpu = Some(u32_field(c, "cpu")?);
        c.skip(4).ok_or_else(|| short("cpu", "4 reserved bytes"))?;
    }
    s.period = u64_field_if(c, t, SampleType::PERIOD, "period")?;
    Ok(())
}

/// `CALLCHAIN`: `nr`, then `nr` entries.
#[inline]
fn parse_callchain<'a>(c: &mut Cursor<'a>) -> Result<Callchain<'a>, ErrorKind> {
    let nr = u64_field(c, "callchain nr")?;
    let raw = c
        .u64s(nr)
        .ok_or_else(|| short("callchain", &format!("{nr} entries")))?;
    Ok(Callchain { raw })
}

/// `RAW`: a 4-byte size, then that many bytes.
#[inline]
fn parse_raw<'a>(c: &mut Cursor<'a>) -> Result<&'a [u8], ErrorKind> {
    let size = u32_field(c, "raw size")?;
    c.bytes(size as usize)
        .ok_or_else(|| short("raw", &format!("{size} bytes")))
}

/// `BRANCH_STACK`: `nr`, `hw_idx` when asked for, `nr` entries of three
/// words, then `nr` counters when asked for.
#[inline]
fn parse_branch_stack<'a>(
    c: &mut Cursor<'a>,
    bst: BranchSampleType,
) -> Result<BranchStack<'a>, ErrorKind> {
    let nr = u64_field(c, "branch stack nr")?;
    let hw_idx = if bst.contains(BranchSampleType::HW_INDEX) {
        Some(u64_field(c, "branch hw_idx")?)
    } else {
        None
    };
    let words = nr
        .checked_mul(3)
        .ok_or_else(|| short("branch stack", "entries"))?;
    let entries = c
        .u64s(words)
        .ok_or_else(|| short("branch stack", &format!("{nr} entries")))?;
    let counters = if bst.contains(BranchSampleType::COUNTERS) {
        Some(
            c.u64s(nr)
                .ok_or_else(|| short("branch counters", &format!("{nr} words")))?,
        )
    } else {
        None
    };
    Ok(BranchStack {
        hw_idx,
        entries,
        counters,
        endian: c.endian(),
    })
}

/// `STACK_USER`: a size, that many bytes, and `dyn_size` when the size is
/// not 0.
#[inline]
fn parse_stack_user<'a>(c: &mut Cursor<'a>) -> Result<StackUser<'a>, ErrorKind> {
    let (size, data) = sized_bytes(c, "stack_user size", "stack_user")?;
    let dyn_size = if size != 0 {
        Some(u64_field(c, "stack_user dyn_size")?)
    } else {
        None
    };
    Ok(StackUser { data, dyn_size })
}

/// A 64-bit size (the field `size_name`), then that many bytes of `what`.
#[inline]
fn sized_bytes<'a>(
    c: &mut Cursor<'a>,
    size_name: &str,
    what: &str,
) -> Result<(u64, &'a [u8]), ErrorKind> {
    let size = u64_field(c, size_name)?;
    let len = usize::try_from(size).map_err(|_| short(what, "size fits memory"))?;
    let data = c
        .bytes(len)
        .ok_or_else(|| short(what, &format!("{size} bytes")))?;
    Ok((size, data))
}

/// What the sampled access cost and touched: `WEIGHT` (or
/// `WEIGHT_STRUCT`), `DATA_SRC`, `TRANSACTION`.
#[inline]
fn parse_memory_access(
    c: &mut Cursor<'_>,
    t: SampleType,
    s: &mut Sample<'_>,
) -> Result<(), ErrorKind> {
    if t.intersects(SampleType::WEIGHT | SampleType::WEIGHT_STRUCT) {
        s.weight = Some(u64_field(c, "weight")?);
        s.weight_struct = t.contains(SampleType::WEIGHT_STRUCT);
    }
    s.data_src = u64_field_if(c, t, SampleType::DATA_SRC, "data_src")?;
    s.transaction = u64_field_if(c, t, SampleType::TRANSACTION, "transaction")?;
    Ok(())
}

/// Decodes a `read_format` block (in samples and in `PERF_RECORD_READ`).
pub(crate) fn parse_read<'a>(
    c: &mut Cursor<'a>,
    rf: ReadFormat,
) -> Result<ReadValues<'a>, ErrorKind> {
    let has_id = rf.contains(ReadFormat::ID);
    let has_lost = rf.contains(ReadFormat::LOST);
    // A word present only when `rf` has `flag`.
    let opt = |c: &mut Cursor<'a>, flag: ReadFormat, what: &str| {
        if rf.contains(flag) {
            u64_field(c, what).map(Some)
        } else {
            Ok(None)
        }
    };
    // Group: {nr, [enabled], [running], {value, [id], [lost]} x nr}.
    // Single: {value, [enabled], [running], [id], [lost]}.
    // The first word: the member count of a group, or the single value.
    let first = u64_field(c, "read nr/value")?;
    let group = rf.contains(ReadFormat::GROUP);
    let time_enabled = opt(c, ReadFormat::TOTAL_TIME_ENABLED, "read time_enabled")?;
    let time_running = opt(c, ReadFormat::TOTAL_TIME_RUNNING, "read time_running")?;
    let entries = if group {
        let nr = first;
        let stride = 1 + has_id as u64 + has_lost as u64;
        let words = nr
            .checked_mul(stride)
            .ok_or_else(|| short("read values", "nr"))?;
        let words = c
            .u64s(words)
            .ok_or_else(|| short("read values", &format!("{nr} group members")))?;
        ReadEntries::Group {
            words,
            has_id,
            has_lost,
        }
    } else {
        ReadEntries::Single(ReadValue {
            value: first,
            id: opt(c, ReadFormat::ID, "read id")?,
            lost: opt(c, ReadFormat::LOST, "read lost")?,
        })
    };
    Ok(ReadValues {
        time_enabled,
        time_running,
        entries,
    })
}

fn parse_regs<'a>(c: &mut Cursor<'a>, mask: u64, what: &str) -> Result<Regs<'a>, ErrorKind> {
    let abi = c.u64().ok_or_else(|| short(what, "abi"))?;
    let values = if abi == 0 {
        U64s::EMPTY
    } else {
        let n = u64::from(mask.count_ones());
        c.u64s(n)
            .ok_or_else(|| short(what, &format!("{n} registers")))?
    };
    Ok(Regs { abi, mask, values })
}

/// Where the event id sits in a sample body of this attr, if anywhere:
/// `IDENTIFIER` is first; `ID` follows IP, TID, TIME and ADDR.
pub(crate) fn sample_id_offset(t: SampleType) -> Option<usize> {
    if t.contains(SampleType::IDENTIFIER) {
        return Some(0);
    }
    if !t.contains(SampleType::ID) {
        return None;
    }
    let before = [
        SampleType::IP,
        SampleType::TID,
        SampleType::TIME,
        SampleType::ADDR,
    ];
    Some(8 * before.iter().filter(|f| t.contains(**f)).count())
}

/// Where the timestamp sits in a sample body of this attr, if present.
pub(crate) fn sample_time_offset(t: SampleType) -> Option<usize> {
    if !t.contains(SampleType::TIME) {
        return None;
    }
    let before = [SampleType::IDENTIFIER, SampleType::IP, SampleType::TID];
    Some(8 * before.iter().filter(|f| t.contains(**f)).count())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::AttrFlags;

    fn attr(sample_type: SampleType, read_format: ReadFormat) -> Attr {
        let mut b = vec![0u8; 128];
        b[4..8].copy_from_slice(&128u32.to_le_bytes());
        b[24..32].copy_from_slice(&sample_type.bits().to_le_bytes());
        b[32..40].copy_from_slice(&read_format.bits().to_le_bytes());
        Attr::parse(&b, Endian::Little).expect("128-byte attr")
    }

    fn words(v: &[u64]) -> Vec<u8> {
        v.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    /// The layout `perf record -e '{task-clock,page-faults}:S'` writes:
    /// IP|TID|TIME|READ|CALLCHAIN|ID with read_format ID|GROUP|LOST.
    #[test]
    fn group_read_layout() {
        let a = attr(
            SampleType::IP
                | SampleType::TID
                | SampleType::TIME
                | SampleType::READ
                | SampleType::CALLCHAIN
                | SampleType::ID,
            ReadFormat::ID | ReadFormat::GROUP | ReadFormat::LOST,
        );
        #[rustfmt::skip]
        let body = words(&[
            0xffff_ffff_8100_0000,        // ip
            (7u64 << 32) | 5,             // pid 5, tid 7
            1_000,                        // time
            42,                           // id
            2,                            // read: nr
            100_000, 42, 0,               // leader {value, id, lost}
            3, 43, 1,                     // member {value, id, lost}
            3,                            // callchain nr
            -128i64 as u64, 0x1000, 0x2000,
        ]);
        let s = parse_sample(&body, 1, &a, Endian::Little).expect("valid layout");
        assert_eq!(s.pid, Some(5));
        assert_eq!(s.tid, Some(7));
        assert_eq!(s.id, Some(42));
        let r = s.read.expect("read");
        assert!(r.is_group());
        let v: Vec<_> = r.values().collect();
        assert_eq!(
            v,
            [
                ReadValue {
                    value: 100_000,
                    id: Some(42),
                    lost: Some(0)
                },
                ReadValue {
                    value: 3,
                    id: Some(43),
                    lost: Some(1)
                },
            ]
        );
        let frames: Vec<_> = s.callchain.expect("callchain").frames().collect();
        assert_eq!(frames.len(), 2);
        assert_eq!(frames[0].context, Some(CallchainContext::Kernel));
        assert_eq!(frames[1].addr, 0x2000);
    }

    #[test]
    fn single_read_layout_has_id_after_times() {
        let a = attr(
            SampleType::READ,
            ReadFormat::TOTAL_TIME_ENABLED | ReadFormat::TOTAL_TIME_RUNNING | ReadFormat::ID,
        );
        let body = words(&[55, 10, 9, 77]);
        let s = parse_sample(&body, 0, &a, Endian::Little).expect("valid");
        let r = s.read.expect("read");
        assert!(!r.is_group());
        assert_eq!(r.time_enabled, Some(10));
        assert_eq!(r.time_running, Some(9));
        assert_eq!(
            r.values().collect::<Vec<_>>(),
            [ReadValue {
                value: 55,
                id: Some(77),
                lost: None
            }]
        );
    }

    #[test]
    fn fields_after_weight_struct_cgroup_and_branch_counters_stay_in_place() {
        let mut a = attr(
            SampleType::BRANCH_STACK
                | SampleType::WEIGHT_STRUCT
                | SampleType::DATA_SRC
                | SampleType::CGROUP
                | SampleType::DATA_PAGE_SIZE
                | SampleType::AUX,
            ReadFormat::empty(),
        );
        a.branch_sample_type = BranchSampleType::HW_INDEX | BranchSampleType::COUNTERS;
        #[rustfmt::skip]
        let mut body = words(&[
            1,                // branch nr
            9,                // hw_idx
            0x10, 0x20, 0b11, // from, to, flags (mispred, predicted)
            0xc0,             // counters[0]
            0x0003_0000_0064, // weight struct
            0x1234,           // data_src
            0x77,             // cgroup
            4096,             // data page size
            3,                // aux size
        ]);
        body.extend_from_slice(&[1, 2, 3]);
        let s = parse_sample(&body, 0, &a, Endian::Little).expect("valid");
        let b = s.branch_stack.expect("branch stack");
        assert_eq!(b.hw_idx, Some(9));
        let e: Vec<_> = b.entries().collect();
        assert_eq!((e[0].from, e[0].to), (0x10, 0x20));
        assert!(e[0].flags().mispred && e[0].flags().predicted);
        assert_eq!(b.counters.expect("counters").get(0), Some(0xc0));
        assert_eq!(s.weight, Some(0x0003_0000_0064));
        assert_eq!(s.data_src, Some(0x1234));
        assert_eq!(s.cgroup, Some(0x77));
        assert_eq!(s.data_page_size, Some(4096));
        assert_eq!(s.aux, Some(&[1u8, 2, 3][..]));
    }

    #[test]
    fn truncated_fields_are_errors_not_panics() {
        let a = attr(SampleType::IP | SampleType::CALLCHAIN, ReadFormat::empty());
        // A callchain that claims 2^61 entries must not allocate or panic.
        let body = words(&[0x1, 1 << 61, 5]);
        assert!(parse_sample(&body, 0, &a, Endian::Little).is_err());
        for n in 0..body.len() {
            let _ = parse_sample(&body[..n], 0, &a, Endian::Little);
        }
        let _ = AttrFlags::empty();
    }
}
