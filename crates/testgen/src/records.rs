//! Record bodies of the data section, in the kernel's layouts
//! (`include/uapi/linux/perf_event.h`), appended to a byte buffer.

use crate::attr::sample_type as st;

/// `PERF_RECORD_*` types this writer emits.
pub mod kind {
    /// `PERF_RECORD_MMAP`.
    pub const MMAP: u32 = 1;
    /// `PERF_RECORD_COMM`.
    pub const COMM: u32 = 3;
    /// `PERF_RECORD_EXIT`.
    pub const EXIT: u32 = 4;
    /// `PERF_RECORD_FORK`.
    pub const FORK: u32 = 7;
    /// `PERF_RECORD_SAMPLE`.
    pub const SAMPLE: u32 = 9;
    /// `PERF_RECORD_MMAP2`.
    pub const MMAP2: u32 = 10;
    /// `PERF_RECORD_FINISHED_ROUND` (perf's own record).
    pub const FINISHED_ROUND: u32 = 68;
}

/// `PERF_RECORD_MISC_*` bits.
pub mod misc {
    /// Kernel mode.
    pub const KERNEL: u16 = 1;
    /// User mode.
    pub const USER: u16 = 2;
    /// COMM caused by exec.
    pub const COMM_EXEC: u16 = 1 << 13;
    /// MMAP2 carries a build id instead of device and inode.
    pub const MMAP_BUILD_ID: u16 = 1 << 14;
}

/// `PERF_CONTEXT_KERNEL`: kernel addresses follow in a callchain.
pub const PERF_CONTEXT_KERNEL: u64 = -128i64 as u64;
/// `PERF_CONTEXT_USER`: user addresses follow in a callchain.
pub const PERF_CONTEXT_USER: u64 = -512i64 as u64;

/// Starts a record: an 8-byte header whose size is fixed by [`end`].
pub(crate) fn begin(out: &mut Vec<u8>, kind: u32, misc: u16) -> usize {
    let at = out.len();
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(&misc.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    at
}

/// Ends the record begun at `at`: writes its size. Records are at most
/// 64 KiB, the u16 the header has for it.
pub(crate) fn end(out: &mut [u8], at: usize) -> std::io::Result<()> {
    let size = out.len() - at;
    let size = u16::try_from(size).map_err(|_| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            format!("record of {size} bytes exceeds the 65535 a perf record header holds"),
        )
    })?;
    out[at + 6..at + 8].copy_from_slice(&size.to_le_bytes());
    Ok(())
}

pub(crate) fn u32s(out: &mut Vec<u8>, a: u32, b: u32) {
    out.extend_from_slice(&a.to_le_bytes());
    out.extend_from_slice(&b.to_le_bytes());
}

pub(crate) fn u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

/// A NUL-terminated string padded with NULs to a multiple of 8, as the
/// kernel writes comm and file names.
pub(crate) fn padded_str(out: &mut Vec<u8>, s: &str) {
    let len = (s.len() + 1).div_ceil(8) * 8;
    out.extend_from_slice(s.as_bytes());
    out.resize(out.len() + len - s.len(), 0);
}

/// What a non-sample record's `sample_id` trailer says.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct SampleId {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// Time (ns).
    pub time: u64,
    /// cpu.
    pub cpu: u32,
}

/// Appends the `sample_id` trailer of an event with `sample_type` and
/// instance id `id`: `{ pid, tid; time; id; stream_id; cpu, res;
/// identifier }`, each field only if `sample_type` has it.
pub(crate) fn trailer(out: &mut Vec<u8>, sample_type: u64, s: &SampleId, id: u64) {
    if sample_type & st::TID != 0 {
        u32s(out, s.pid, s.tid);
    }
    if sample_type & st::TIME != 0 {
        u64(out, s.time);
    }
    if sample_type & st::ID != 0 {
        u64(out, id);
    }
    if sample_type & st::CPU != 0 {
        u32s(out, s.cpu, 0);
    }
    if sample_type & st::IDENTIFIER != 0 {
        u64(out, id);
    }
}
