//! `perf_event_attr`: what an event counts and what its samples carry.
//!
//! Decoded from the raw bytes of every attr size from VER0 (64 bytes,
//! perf 3.x) to VER8 (136 bytes, perf 6.3+); fields a shorter attr lacks
//! read as zero, as the kernel treats them.

use crate::endian::Endian;

bitflags::bitflags! {
    /// `attr.sample_type`: which fields a sample record carries, in kernel
    /// output order.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct SampleType: u64 {
        /// Instruction pointer.
        const IP = 1 << 0;
        /// pid and tid.
        const TID = 1 << 1;
        /// Timestamp.
        const TIME = 1 << 2;
        /// Data address.
        const ADDR = 1 << 3;
        /// Counter values (`read_format`).
        const READ = 1 << 4;
        /// Callchain.
        const CALLCHAIN = 1 << 5;
        /// Event instance id.
        const ID = 1 << 6;
        /// cpu.
        const CPU = 1 << 7;
        /// Period.
        const PERIOD = 1 << 8;
        /// Stream id.
        const STREAM_ID = 1 << 9;
        /// Raw tracepoint/PMU data.
        const RAW = 1 << 10;
        /// Branch stack (LBR).
        const BRANCH_STACK = 1 << 11;
        /// User registers.
        const REGS_USER = 1 << 12;
        /// User stack dump.
        const STACK_USER = 1 << 13;
        /// Weight.
        const WEIGHT = 1 << 14;
        /// Data source.
        const DATA_SRC = 1 << 15;
        /// Event id at a fixed position.
        const IDENTIFIER = 1 << 16;
        /// Transaction flags.
        const TRANSACTION = 1 << 17;
        /// Interrupt registers.
        const REGS_INTR = 1 << 18;
        /// Physical data address.
        const PHYS_ADDR = 1 << 19;
        /// AUX area sample.
        const AUX = 1 << 20;
        /// cgroup id.
        const CGROUP = 1 << 21;
        /// Data page size.
        const DATA_PAGE_SIZE = 1 << 22;
        /// Code page size.
        const CODE_PAGE_SIZE = 1 << 23;
        /// Weight as a struct (same 8 bytes as WEIGHT).
        const WEIGHT_STRUCT = 1 << 24;
        // Bits added by later kernels are kept, not dropped, so `bits()`
        // shows them and the layout check can refuse what it cannot place.
        const _ = !0;
    }
}

bitflags::bitflags! {
    /// `attr.read_format`: the layout of `PERF_SAMPLE_READ` values.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct ReadFormat: u64 {
        /// Time enabled.
        const TOTAL_TIME_ENABLED = 1 << 0;
        /// Time running.
        const TOTAL_TIME_RUNNING = 1 << 1;
        /// Each value carries its event id.
        const ID = 1 << 2;
        /// Values of the whole group.
        const GROUP = 1 << 3;
        /// Each value carries its lost-sample count.
        const LOST = 1 << 4;
        const _ = !0;
    }
}

bitflags::bitflags! {
    /// `attr.branch_sample_type`: the bits that change the sample layout
    /// are `HW_INDEX` and `COUNTERS`; the rest are filters, kept as is.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct BranchSampleType: u64 {
        /// Branch stack carries a `hw_idx` before the entries.
        const HW_INDEX = 1 << 17;
        /// Branch stack carries a counters word per entry after them.
        const COUNTERS = 1 << 19;
        const _ = !0;
    }
}

bitflags::bitflags! {
    /// The `perf_event_attr` bitfield word (disabled, inherit, ...).
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub struct AttrFlags: u64 {
        /// Off by default.
        const DISABLED = 1 << 0;
        /// Children inherit it.
        const INHERIT = 1 << 1;
        /// Must always be on PMU.
        const PINNED = 1 << 2;
        /// Only group on PMU.
        const EXCLUSIVE = 1 << 3;
        /// Don't count user.
        const EXCLUDE_USER = 1 << 4;
        /// Don't count kernel.
        const EXCLUDE_KERNEL = 1 << 5;
        /// Don't count hypervisor.
        const EXCLUDE_HV = 1 << 6;
        /// Don't count when idle.
        const EXCLUDE_IDLE = 1 << 7;
        /// Include mmap data.
        const MMAP = 1 << 8;
        /// Include comm data.
        const COMM = 1 << 9;
        /// Sample by frequency, not period.
        const FREQ = 1 << 10;
        /// Per-task counts.
        const INHERIT_STAT = 1 << 11;
        /// Next exec enables.
        const ENABLE_ON_EXEC = 1 << 12;
        /// Trace fork/exit.
        const TASK = 1 << 13;
        /// Wakeup by watermark.
        const WATERMARK = 1 << 14;
        /// Low bit of precise_ip.
        const PRECISE_IP_0 = 1 << 15;
        /// High bit of precise_ip.
        const PRECISE_IP_1 = 1 << 16;
        /// Non-exec mmap data.
        const MMAP_DATA = 1 << 17;
        /// All records carry the sample_id trailer.
        const SAMPLE_ID_ALL = 1 << 18;
        /// Don't count in host.
        const EXCLUDE_HOST = 1 << 19;
        /// Don't count in guest.
        const EXCLUDE_GUEST = 1 << 20;
        /// Exclude kernel callchains.
        const EXCLUDE_CALLCHAIN_KERNEL = 1 << 21;
        /// Exclude user callchains.
        const EXCLUDE_CALLCHAIN_USER = 1 << 22;
        /// MMAP2 records.
        const MMAP2 = 1 << 23;
        /// COMM records on exec.
        const COMM_EXEC = 1 << 24;
        /// Use `clockid` for time.
        const USE_CLOCKID = 1 << 25;
        /// Context switch records.
        const CONTEXT_SWITCH = 1 << 26;
        /// Write ring buffer from end.
        const WRITE_BACKWARD = 1 << 27;
        /// Namespaces records.
        const NAMESPACES = 1 << 28;
        /// Ksymbol records.
        const KSYMBOL = 1 << 29;
        /// BPF event records.
        const BPF_EVENT = 1 << 30;
        /// Generate AUX records instead of events.
        const AUX_OUTPUT = 1 << 31;
        /// cgroup records.
        const CGROUP = 1 << 32;
        /// Text poke records.
        const TEXT_POKE = 1 << 33;
        /// Build ids in MMAP2.
        const BUILD_ID = 1 << 34;
        /// Children only inherit if cloned with CLONE_THREAD.
        const INHERIT_THREAD = 1 << 35;
        /// Event is removed from task on exec.
        const REMOVE_ON_EXEC = 1 << 36;
        /// Send synchronous SIGTRAP on event.
        const SIGTRAP = 1 << 37;
        const _ = !0;
    }
}

/// `PERF_TYPE_*`: the event's type.
pub mod event_type {
    /// Generalized hardware event.
    pub const HARDWARE: u32 = 0;
    /// Software event.
    pub const SOFTWARE: u32 = 1;
    /// Tracepoint.
    pub const TRACEPOINT: u32 = 2;
    /// Hardware cache event.
    pub const HW_CACHE: u32 = 3;
    /// Raw PMU event (also `cpu` on x86).
    pub const RAW: u32 = 4;
    /// Breakpoint.
    pub const BREAKPOINT: u32 = 5;
}

/// The smallest attr perf ever wrote (`PERF_ATTR_SIZE_VER0`).
pub const ATTR_SIZE_VER0: usize = 64;

/// One event's `perf_event_attr`, with every field kept as a number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    /// `PERF_TYPE_*` or a dynamic PMU type.
    pub type_: u32,
    /// The attr's own size field (0 in the oldest files, meaning VER0).
    pub size: u32,
    /// Event selector.
    pub config: u64,
    /// Sample period, or frequency when `flags` has `FREQ`.
    pub sample_period_or_freq: u64,
    /// What samples carry.
    pub sample_type: SampleType,
    /// Layout of read values.
    pub read_format: ReadFormat,
    /// The bitfield word.
    pub flags: AttrFlags,
    /// wakeup_events / wakeup_watermark.
    pub wakeup: u32,
    /// Breakpoint type.
    pub bp_type: u32,
    /// config1 / bp_addr.
    pub config1: u64,
    /// config2 / bp_len.
    pub config2: u64,
    /// Branch sampling filter and layout bits.
    pub branch_sample_type: BranchSampleType,
    /// Mask of user registers in samples.
    pub sample_regs_user: u64,
    /// Bytes of user stack dumped per sample.
    pub sample_stack_user: u32,
    /// Clock id, when `USE_CLOCKID`.
    pub clockid: i32,
    /// Mask of interrupt registers in samples.
    pub sample_regs_intr: u64,
    /// AUX watermark.
    pub aux_watermark: u32,
    /// Max callchain depth.
    pub sample_max_stack: u16,
    /// AUX sample size.
    pub aux_sample_size: u32,
    /// Signal data.
    pub sig_data: u64,
    /// config3.
    pub config3: u64,
}

impl Attr {
    /// Decodes an attr from `b`, which holds the attr's own `size` bytes (or
    /// more; the tail is ignored). Fields past the end of a short attr are 0.
    ///
    /// Returns `None` if `b` is shorter than VER0.
    pub fn parse(b: &[u8], endian: Endian) -> Option<Attr> {
        if b.len() < ATTR_SIZE_VER0 {
            return None;
        }
        // Read through a zero-padded copy so that a short (old) attr gives
        // 0 for the fields it lacks.
        let mut buf = [0u8; 136];
        let n = b.len().min(buf.len());
        buf[..n].copy_from_slice(&b[..n]);
        let u32_at = |o: usize| endian.u32_at(&buf, o).unwrap_or(0);
        let u64_at = |o: usize| endian.u64_at(&buf, o).unwrap_or(0);
        // The bitfield word: on a big-endian machine the first bitfield is
        // the most significant bit of the first byte, so each byte's bits are
        // reversed relative to little-endian while the bytes stay in place
        // (perf's `swap_bitfield`).
        let flags_bytes: [u8; 8] = buf[40..48].try_into().ok()?;
        let flags = match endian {
            Endian::Little => u64::from_le_bytes(flags_bytes),
            Endian::Big => u64::from_le_bytes(flags_bytes.map(u8::reverse_bits)),
        };
        Some(Attr {
            type_: u32_at(0),
            size: u32_at(4),
            config: u64_at(8),
            sample_period_or_freq: u64_at(16),
            sample_type: SampleType::from_bits_retain(u64_at(24)),
            read_format: ReadFormat::from_bits_retain(u64_at(32)),
            flags: AttrFlags::from_bits_retain(flags),
            wakeup: u32_at(48),
            bp_type: u32_at(52),
            config1: u64_at(56),
            config2: u64_at(64),
            branch_sample_type: BranchSampleType::from_bits_retain(u64_at(72)),
            sample_regs_user: u64_at(80),
            sample_stack_user: u32_at(88),
            clockid: u32_at(92) as i32,
            sample_regs_intr: u64_at(96),
            aux_watermark: u32_at(104),
            sample_max_stack: endian.u16_at(&buf, 108).unwrap_or(0),
            aux_sample_size: u32_at(112),
            sig_data: u64_at(120),
            config3: u64_at(128),
        })
    }

    /// The attr's size on disk: its `size` field, or VER0 when that is 0.
    pub fn on_disk_size(size_field: u32) -> usize {
        if size_field == 0 {
            ATTR_SIZE_VER0
        } else {
            size_field as usize
        }
    }

    /// Whether samples are taken by frequency rather than period.
    pub fn is_freq(&self) -> bool {
        self.flags.contains(AttrFlags::FREQ)
    }

    /// `precise_ip` (0..=3).
    pub fn precise_ip(&self) -> u8 {
        ((self.flags.bits() >> 15) & 3) as u8
    }

    /// Whether group read values are tracked per thread: inherit together
    /// with SAMPLE_READ and TID (kernel >= 6.12; perf >= 6.13 keeps
    /// the deltas per (id, tid)).
    pub fn per_thread_sample_read(&self) -> bool {
        self.flags.contains(AttrFlags::INHERIT)
            && self
                .sample_type
                .contains(SampleType::READ | SampleType::TID)
    }
}

/// Names the set bits of `sample_type` the way `perf evlist -v` does
/// (`IP|TID|TIME|...`).
pub fn sample_type_names(t: SampleType) -> String {
    const NAMES: &[(u64, &str)] = &[
        (1 << 0, "IP"),
        (1 << 1, "TID"),
        (1 << 2, "TIME"),
        (1 << 3, "ADDR"),
        (1 << 4, "READ"),
        (1 << 5, "CALLCHAIN"),
        (1 << 6, "ID"),
        (1 << 7, "CPU"),
        (1 << 8, "PERIOD"),
        (1 << 9, "STREAM_ID"),
        (1 << 10, "RAW"),
        (1 << 11, "BRANCH_STACK"),
        (1 << 12, "REGS_USER"),
        (1 << 13, "STACK_USER"),
        (1 << 14, "WEIGHT"),
        (1 << 15, "DATA_SRC"),
        (1 << 16, "IDENTIFIER"),
        (1 << 17, "TRANSACTION"),
        (1 << 18, "REGS_INTR"),
        (1 << 19, "PHYS_ADDR"),
        (1 << 20, "AUX"),
        (1 << 21, "CGROUP"),
        (1 << 22, "DATA_PAGE_SIZE"),
        (1 << 23, "CODE_PAGE_SIZE"),
        (1 << 24, "WEIGHT_STRUCT"),
    ];
    bit_names(t.bits(), NAMES)
}

/// Names the set bits of `read_format` as `perf evlist -v` does.
pub fn read_format_names(r: ReadFormat) -> String {
    const NAMES: &[(u64, &str)] = &[
        (1 << 0, "TOTAL_TIME_ENABLED"),
        (1 << 1, "TOTAL_TIME_RUNNING"),
        (1 << 2, "ID"),
        (1 << 3, "GROUP"),
        (1 << 4, "LOST"),
    ];
    bit_names(r.bits(), NAMES)
}

fn bit_names(bits: u64, names: &[(u64, &str)]) -> String {
    let mut out = Vec::new();
    let mut known = 0;
    for &(bit, name) in names {
        known |= bit;
        if bits & bit != 0 {
            out.push(name.to_string());
        }
    }
    let unknown = bits & !known;
    if unknown != 0 {
        out.push(format!("{unknown:#x}"));
    }
    out.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_attr_reads_missing_fields_as_zero() {
        let mut b = vec![0u8; 64];
        b[0] = 1; // type: software
        b[8] = 9; // config
        b[24] = 0x07; // IP|TID|TIME
        b[42] = 0x04; // flags bit 18: sample_id_all
        let a = Attr::parse(&b, Endian::Little).expect("64 bytes is VER0");
        assert_eq!(a.type_, 1);
        assert_eq!(a.config, 9);
        assert_eq!(
            a.sample_type,
            SampleType::IP | SampleType::TID | SampleType::TIME
        );
        assert!(a.flags.contains(AttrFlags::SAMPLE_ID_ALL));
        assert_eq!(a.branch_sample_type.bits(), 0);
        assert!(Attr::parse(&b[..63], Endian::Little).is_none());
    }

    #[test]
    fn big_endian_bitfield_is_bit_reversed_per_byte() {
        let mut b = vec![0u8; 64];
        b[4..8].copy_from_slice(&64u32.to_be_bytes());
        // disabled (bit 0) is the MSB of byte 0 on big-endian; sample_id_all
        // (bit 18) is bit 7-2 of byte 2.
        b[40] = 0x80;
        b[42] = 0x20;
        let a = Attr::parse(&b, Endian::Big).expect("VER0");
        assert_eq!(a.size, 64);
        assert_eq!(a.flags, AttrFlags::DISABLED | AttrFlags::SAMPLE_ID_ALL);
    }

    #[test]
    fn names_like_perf_evlist() {
        let t = SampleType::IP | SampleType::TID | SampleType::READ | SampleType::ID;
        assert_eq!(sample_type_names(t), "IP|TID|READ|ID");
        let r = ReadFormat::ID | ReadFormat::GROUP | ReadFormat::LOST;
        assert_eq!(read_format_names(r), "ID|GROUP|LOST");
    }
}
