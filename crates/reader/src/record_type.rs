//! Record type numbers and the names `perf report -D` counts them under.

use std::fmt;

/// A `perf_event_header.type`: kernel records below 64, perf's own
/// ("user") records from 64 up.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RecordType(pub u32);

macro_rules! record_types {
    ($($name:ident = $n:expr, $s:expr;)*) => {
        impl RecordType {
            $(
                #[doc = concat!("`PERF_RECORD_", $s, "`")]
                pub const $name: RecordType = RecordType($n);
            )*

            /// The name perf's record-type statistics use, without the
            /// `PERF_RECORD_` prefix, or `None` for a type perfq does not
            /// know.
            pub fn known_name(self) -> Option<&'static str> {
                match self.0 {
                    $($n => Some($s),)*
                    _ => None,
                }
            }
        }
    };
}

record_types! {
    MMAP = 1, "MMAP";
    LOST = 2, "LOST";
    COMM = 3, "COMM";
    EXIT = 4, "EXIT";
    THROTTLE = 5, "THROTTLE";
    UNTHROTTLE = 6, "UNTHROTTLE";
    FORK = 7, "FORK";
    READ = 8, "READ";
    SAMPLE = 9, "SAMPLE";
    MMAP2 = 10, "MMAP2";
    AUX = 11, "AUX";
    ITRACE_START = 12, "ITRACE_START";
    LOST_SAMPLES = 13, "LOST_SAMPLES";
    SWITCH = 14, "SWITCH";
    SWITCH_CPU_WIDE = 15, "SWITCH_CPU_WIDE";
    NAMESPACES = 16, "NAMESPACES";
    KSYMBOL = 17, "KSYMBOL";
    BPF_EVENT = 18, "BPF_EVENT";
    CGROUP = 19, "CGROUP";
    TEXT_POKE = 20, "TEXT_POKE";
    AUX_OUTPUT_HW_ID = 21, "AUX_OUTPUT_HW_ID";
    CALLCHAIN_DEFERRED = 22, "CALLCHAIN_DEFERRED";
    HEADER_ATTR = 64, "HEADER_ATTR";
    HEADER_EVENT_TYPE = 65, "HEADER_EVENT_TYPE";
    HEADER_TRACING_DATA = 66, "HEADER_TRACING_DATA";
    HEADER_BUILD_ID = 67, "HEADER_BUILD_ID";
    FINISHED_ROUND = 68, "FINISHED_ROUND";
    ID_INDEX = 69, "ID_INDEX";
    AUXTRACE_INFO = 70, "AUXTRACE_INFO";
    AUXTRACE = 71, "AUXTRACE";
    AUXTRACE_ERROR = 72, "AUXTRACE_ERROR";
    THREAD_MAP = 73, "THREAD_MAP";
    CPU_MAP = 74, "CPU_MAP";
    STAT_CONFIG = 75, "STAT_CONFIG";
    STAT = 76, "STAT";
    STAT_ROUND = 77, "STAT_ROUND";
    EVENT_UPDATE = 78, "EVENT_UPDATE";
    TIME_CONV = 79, "TIME_CONV";
    HEADER_FEATURE = 80, "HEADER_FEATURE";
    COMPRESSED = 81, "COMPRESSED";
    FINISHED_INIT = 82, "FINISHED_INIT";
    COMPRESSED2 = 83, "COMPRESSED2";
    BPF_METADATA = 84, "BPF_METADATA";
}

impl RecordType {
    /// Whether this is a kernel record (which may carry a `sample_id`
    /// trailer) rather than one perf synthesized.
    pub fn is_kernel(self) -> bool {
        self.0 < 64
    }

    /// The name for statistics: the known name, else `USER_<n>` for perf-side
    /// types and `KERNEL_<n>` for kernel-side ones.
    pub fn name(self) -> String {
        match self.known_name() {
            Some(n) => n.to_string(),
            None if self.is_kernel() => format!("KERNEL_{}", self.0),
            None => format!("USER_{}", self.0),
        }
    }
}

impl fmt::Debug for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

impl fmt::Display for RecordType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.name())
    }
}

/// Bits of `perf_event_header.misc`.
pub mod misc {
    /// Mask of the cpu mode.
    pub const CPUMODE_MASK: u16 = 7;
    /// cpu mode: unknown.
    pub const CPUMODE_UNKNOWN: u16 = 0;
    /// cpu mode: kernel.
    pub const KERNEL: u16 = 1;
    /// cpu mode: user.
    pub const USER: u16 = 2;
    /// cpu mode: hypervisor.
    pub const HYPERVISOR: u16 = 3;
    /// cpu mode: guest kernel.
    pub const GUEST_KERNEL: u16 = 4;
    /// cpu mode: guest user.
    pub const GUEST_USER: u16 = 5;
    /// MMAP/MMAP2 of a non-executable mapping.
    pub const MMAP_DATA: u16 = 1 << 13;
    /// COMM caused by exec.
    pub const COMM_EXEC: u16 = 1 << 13;
    /// SWITCH: switching out.
    pub const SWITCH_OUT: u16 = 1 << 13;
    /// SWITCH out while still runnable.
    pub const SWITCH_OUT_PREEMPT: u16 = 1 << 14;
    /// MMAP2 carries a build id instead of device/inode.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
    /// Sample: ip is exact.
    pub const EXACT_IP: u16 = 1 << 14;
    /// HEADER_BUILD_ID: size byte is valid.
    pub const BUILD_ID_SIZE: u16 = 1 << 15;
}
