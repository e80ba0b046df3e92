//! `perf_event_attr` as perf stores it in the attr section and in
//! `EVENT_DESC`: the fields a recording sets, and their bytes.

/// `PERF_TYPE_*` values with fixed numbers; PMUs such as `cpu_atom` or
/// `armv8_pmuv3_0` get a dynamic type, listed in `PMU_MAPPINGS`.
pub mod event_type {
    /// Generalized hardware event (`cycles`, `instructions`, ...).
    pub const HARDWARE: u32 = 0;
    /// Software event.
    pub const SOFTWARE: u32 = 1;
    /// Raw PMU event; on x86 also the `cpu` (or `cpu_core`) PMU.
    pub const RAW: u32 = 4;
}

/// `PERF_SAMPLE_*`: fields a sample carries.
pub mod sample_type {
    /// Instruction pointer.
    pub const IP: u64 = 1 << 0;
    /// pid and tid.
    pub const TID: u64 = 1 << 1;
    /// Timestamp.
    pub const TIME: u64 = 1 << 2;
    /// Counter values (`read_format` layout).
    pub const READ: u64 = 1 << 4;
    /// Callchain.
    pub const CALLCHAIN: u64 = 1 << 5;
    /// Event instance id.
    pub const ID: u64 = 1 << 6;
    /// cpu (and a reserved u32).
    pub const CPU: u64 = 1 << 7;
    /// Sampling period.
    pub const PERIOD: u64 = 1 << 8;
    /// Event instance id at a fixed place: first in a sample, last in a
    /// `sample_id` trailer.
    pub const IDENTIFIER: u64 = 1 << 16;
    /// The bits this writer can lay out; others are refused.
    pub const SUPPORTED: u64 = IP | TID | TIME | READ | CALLCHAIN | ID | CPU | PERIOD | IDENTIFIER;
}

/// `PERF_FORMAT_*`: layout of read values.
pub mod read_format {
    /// `time_enabled` before the values.
    pub const TOTAL_TIME_ENABLED: u64 = 1 << 0;
    /// `time_running` before the values.
    pub const TOTAL_TIME_RUNNING: u64 = 1 << 1;
    /// Each value carries its event id.
    pub const ID: u64 = 1 << 2;
    /// The values of the whole group.
    pub const GROUP: u64 = 1 << 3;
    /// Each value carries its lost-sample count.
    pub const LOST: u64 = 1 << 4;
}

/// Bits of the `perf_event_attr` bitfield word.
pub mod flags {
    /// Off until enabled (group leaders; members follow their leader).
    pub const DISABLED: u64 = 1 << 0;
    /// Children inherit the event.
    pub const INHERIT: u64 = 1 << 1;
    /// Don't count user space.
    pub const EXCLUDE_USER: u64 = 1 << 4;
    /// Don't count the kernel.
    pub const EXCLUDE_KERNEL: u64 = 1 << 5;
    /// Don't count the hypervisor.
    pub const EXCLUDE_HV: u64 = 1 << 6;
    /// MMAP records (the tracking event).
    pub const MMAP: u64 = 1 << 8;
    /// COMM records (the tracking event).
    pub const COMM: u64 = 1 << 9;
    /// `sample_period` is a frequency.
    pub const FREQ: u64 = 1 << 10;
    /// Enabled by the workload's exec.
    pub const ENABLE_ON_EXEC: u64 = 1 << 12;
    /// FORK/EXIT records (the tracking event).
    pub const TASK: u64 = 1 << 13;
    /// Non-sample records carry the `sample_id` trailer.
    pub const SAMPLE_ID_ALL: u64 = 1 << 18;
    /// Don't count in guests (perf sets it unless asked for `G`).
    pub const EXCLUDE_GUEST: u64 = 1 << 20;
    /// MMAP2 records instead of MMAP.
    pub const MMAP2: u64 = 1 << 23;
    /// COMM records on exec carry `COMM_EXEC`.
    pub const COMM_EXEC: u64 = 1 << 24;
    /// KSYMBOL records.
    pub const KSYMBOL: u64 = 1 << 29;
    /// BPF_EVENT records.
    pub const BPF_EVENT: u64 = 1 << 30;
    /// MMAP2 records carry build ids.
    pub const BUILD_ID: u64 = 1 << 34;
    /// The flags `perf record` gives the first (tracking) event.
    pub const TRACKING: u64 =
        MMAP | COMM | TASK | MMAP2 | COMM_EXEC | KSYMBOL | BPF_EVENT | SAMPLE_ID_ALL;
}

/// Which `perf_event_attr` size to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttrSize {
    /// `PERF_ATTR_SIZE_VER7` (128 bytes, up to `sig_data`): what perf 5.13
    /// to 6.2 write, and the largest perf 6.1 reads (it refuses larger
    /// attrs as "a more recent and unsupported ABI").
    Ver7,
    /// `PERF_ATTR_SIZE_VER8` (136 bytes, with `config3`): perf 6.3 and later.
    Ver8,
}

impl AttrSize {
    /// The size in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            AttrSize::Ver7 => 128,
            AttrSize::Ver8 => 136,
        }
    }
}

/// How an event samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Counting only: `sample_period` 0, as perf makes every member of a
    /// `:S` group but the sampler.
    None,
    /// A sample every this many events (`-c N`).
    Period(u64),
    /// This many samples a second; the kernel adjusts the period (`-F N`).
    Freq(u64),
}

/// One event's `perf_event_attr`, with the fields a recording sets.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    /// `PERF_TYPE_*` or a dynamic PMU type.
    pub type_: u32,
    /// Event selector.
    pub config: u64,
    /// `config1` (extended selector bits).
    pub config1: u64,
    /// `config2`.
    pub config2: u64,
    /// Period or frequency.
    pub sampling: Sampling,
    /// `PERF_SAMPLE_*` bits.
    pub sample_type: u64,
    /// `PERF_FORMAT_*` bits.
    pub read_format: u64,
    /// The bitfield word ([`flags`]); `FREQ` is set from `sampling`.
    pub flags: u64,
    /// Maximum callchain depth; 0 (the kernel's limit) unless `perf record
    /// --max-stack` was given.
    pub sample_max_stack: u16,
}

impl Attr {
    /// A counting attr of `type_`/`config` with no sample fields, and the
    /// flags perf gives every event (`exclude_guest`, `sample_id_all`).
    pub fn new(type_: u32, config: u64) -> Attr {
        Attr {
            type_,
            config,
            config1: 0,
            config2: 0,
            sampling: Sampling::None,
            sample_type: 0,
            read_format: 0,
            flags: flags::EXCLUDE_GUEST | flags::SAMPLE_ID_ALL,
            sample_max_stack: 0,
        }
    }

    /// The flags word as written: `FREQ` follows `sampling`.
    pub fn flags_word(&self) -> u64 {
        match self.sampling {
            Sampling::Freq(_) => self.flags | flags::FREQ,
            _ => self.flags & !flags::FREQ,
        }
    }

    /// Whether this event takes samples.
    pub fn is_sampling(&self) -> bool {
        !matches!(self.sampling, Sampling::None)
    }

    /// Whether read values of this event are per-thread counts (kernel
    /// 6.12 or later with inherit + SAMPLE_READ + TID), so the cumulative value
    /// of a sample is kept per (id, tid) rather than per id.
    pub fn per_thread_read(&self) -> bool {
        let need = sample_type::READ | sample_type::TID;
        self.flags & flags::INHERIT != 0 && self.sample_type & need == need
    }

    /// The attr's bytes, `size` long, little-endian.
    pub fn encode(&self, size: AttrSize) -> Vec<u8> {
        let mut b = Vec::with_capacity(size.bytes() as usize);
        let period = match self.sampling {
            Sampling::None => 0,
            Sampling::Period(p) | Sampling::Freq(p) => p,
        };
        b.extend_from_slice(&self.type_.to_le_bytes());
        b.extend_from_slice(&size.bytes().to_le_bytes());
        for v in [
            self.config,
            period,
            self.sample_type,
            self.read_format,
            self.flags_word(),
        ] {
            b.extend_from_slice(&v.to_le_bytes());
        }
        b.extend_from_slice(&0u32.to_le_bytes()); // wakeup_events
        b.extend_from_slice(&0u32.to_le_bytes()); // bp_type
        b.extend_from_slice(&self.config1.to_le_bytes());
        b.extend_from_slice(&self.config2.to_le_bytes());
        b.extend_from_slice(&0u64.to_le_bytes()); // branch_sample_type
        b.extend_from_slice(&0u64.to_le_bytes()); // sample_regs_user
        b.extend_from_slice(&0u32.to_le_bytes()); // sample_stack_user
        b.extend_from_slice(&0i32.to_le_bytes()); // clockid
        b.extend_from_slice(&0u64.to_le_bytes()); // sample_regs_intr
        b.extend_from_slice(&0u32.to_le_bytes()); // aux_watermark
        b.extend_from_slice(&self.sample_max_stack.to_le_bytes());
        b.extend_from_slice(&0u16.to_le_bytes()); // __reserved_2
        b.extend_from_slice(&0u32.to_le_bytes()); // aux_sample_size
        b.extend_from_slice(&0u32.to_le_bytes()); // __reserved_3
        b.extend_from_slice(&0u64.to_le_bytes()); // sig_data
        if size == AttrSize::Ver8 {
            b.extend_from_slice(&0u64.to_le_bytes()); // config3
        }
        debug_assert_eq!(b.len(), size.bytes() as usize);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_offsets_are_the_kernel_abi() {
        let mut a = Attr::new(4, 0x8300);
        a.config1 = 7;
        a.sampling = Sampling::Freq(4000);
        a.sample_type = sample_type::IP | sample_type::READ;
        a.read_format = read_format::ID | read_format::GROUP | read_format::LOST;
        a.sample_max_stack = 127;
        let b = a.encode(AttrSize::Ver8);
        assert_eq!(b.len(), 136);
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().expect("8 bytes"));
        assert_eq!(u32::from_le_bytes(b[4..8].try_into().expect("4")), 136);
        assert_eq!(u64_at(8), 0x8300);
        assert_eq!(u64_at(16), 4000);
        assert_eq!(u64_at(24), 0x11);
        assert_eq!(u64_at(32), 0x1c);
        assert_ne!(u64_at(40) & flags::FREQ, 0);
        assert_eq!(u64_at(56), 7);
        assert_eq!(u16::from_le_bytes([b[108], b[109]]), 127);
        assert_eq!(a.encode(AttrSize::Ver7).len(), 128);
    }
}
