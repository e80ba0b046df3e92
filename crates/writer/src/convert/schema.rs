//! The columns of every table, in one place; `docs/schema.md` describes
//! them in the same order.

use crate::{Column, ColumnType::*};

/// One row per sample, in time order.
pub(crate) const SAMPLES: &[Column<'static>] = &[
    Column::new("sample_id", U64).delta(),
    Column::new("time", U64).nullable().delta(),
    // Few distinct values in long runs: stored plain, zstd packs them
    // smaller than deltas, in less time (dictionaries cost more still).
    Column::new("pid", I32).nullable().plain(),
    Column::new("tid", I32).nullable().plain(),
    Column::new("cpu", U32).nullable().plain(),
    Column::new("event_id", U32).plain(),
    Column::new("cpumode", U8).delta(),
    Column::new("period", U64).plain(),
    Column::new("stack_id", U32).nullable().plain(),
    Column::new("leaf_frame_id", U32).nullable().plain(),
    Column::new("ip", U64).nullable().plain(),
    Column::new("addr", U64).nullable().plain(),
    Column::new("weight", U64).nullable(),
    Column::new("weight2", U16).nullable(),
    Column::new("weight3", U16).nullable(),
    Column::new("data_src", U64).nullable(),
    Column::new("phys_addr", U64).nullable().plain(),
    Column::new("cgroup", U64).nullable(),
    Column::new("transaction", U64).nullable(),
    // Group-read deltas by member position (`events.member`): m0..m15.
    Column::new("m0", U64).nullable(),
    Column::new("m1", U64).nullable(),
    Column::new("m2", U64).nullable(),
    Column::new("m3", U64).nullable(),
    Column::new("m4", U64).nullable(),
    Column::new("m5", U64).nullable(),
    Column::new("m6", U64).nullable(),
    Column::new("m7", U64).nullable(),
    Column::new("m8", U64).nullable(),
    Column::new("m9", U64).nullable(),
    Column::new("m10", U64).nullable(),
    Column::new("m11", U64).nullable(),
    Column::new("m12", U64).nullable(),
    Column::new("m13", U64).nullable(),
    Column::new("m14", U64).nullable(),
    Column::new("m15", U64).nullable(),
];

/// How many `m<K>` columns the samples table has (the last columns).
pub(crate) const MEMBER_COLUMNS: usize = 16;

/// One row per group-read member of a sample.
pub(crate) const READ_VALUES: &[Column<'static>] = &[
    Column::new("sample_id", U64).delta(),
    Column::new("event_id", U32).nullable(),
    Column::new("id", U64),
    Column::new("value", U64).plain().counters(),
    Column::new("delta", U64).nullable(),
    Column::new("lost", U64).nullable(),
];

/// One row per branch-stack entry of a sample.
pub(crate) const BRANCHES: &[Column<'static>] = &[
    Column::new("sample_id", U64).delta(),
    Column::new("index", U16),
    Column::new("from", U64),
    Column::new("to", U64),
    Column::new("from_frame_id", U32),
    Column::new("to_frame_id", U32),
    Column::new("mispred", Bool),
    Column::new("predicted", Bool),
    Column::new("in_tx", Bool),
    Column::new("abort", Bool),
    Column::new("cycles", U16),
    Column::new("type", U8),
    Column::new("spec", U8),
    Column::new("new_type", U8),
    Column::new("priv", U8),
    Column::new("counter", U64).nullable(),
];

/// One row per sample with raw (tracepoint) data.
pub(crate) const RAW: &[Column<'static>] = &[
    Column::new("sample_id", U64).delta(),
    Column::new("data", Bytes).plain(),
];

/// One row per distinct data_src value, decoded.
pub(crate) const DATA_SRC: &[Column<'static>] = &[
    Column::new("data_src", U64),
    Column::new("op", Str).nullable(),
    Column::new("level", Str).nullable(),
    Column::new("level_num", Str).nullable(),
    Column::new("hit", Bool).nullable(),
    Column::new("remote", Bool),
    Column::new("snoop", Str).nullable(),
    Column::new("tlb", Str).nullable(),
    Column::new("tlb_hit", Bool).nullable(),
    Column::new("locked", Bool).nullable(),
    Column::new("blocked", Str).nullable(),
    Column::new("hops", U8).nullable(),
];

/// Interned stacks.
pub(crate) const STACKS: &[Column<'static>] = &[
    Column::new("stack_id", U32).delta(),
    Column::new("frame_ids", ListU32)
        .nullable()
        .plain()
        .without_statistics(),
    // Plain, not deltas like the links beside it: stacks repeat runs of
    // the same frames under different callers, which zstd finds in the
    // values and not in their deltas.
    Column::new("frame_id", U32).plain().without_statistics(),
    Column::new("depth", U32).delta().without_statistics(),
    Column::new("parent_stack_id", U32)
        .nullable()
        .delta()
        .without_statistics(),
];

/// One row per inlining level of each distinct location. Frames come in
/// the order their locations were first seen: only `frame_id` has
/// statistics worth keeping.
pub(crate) const FRAMES: &[Column<'static>] = &[
    Column::new("frame_id", U32).delta(),
    Column::new("inline_depth", U16).without_statistics(),
    Column::new("function", Str).nullable().without_statistics(),
    Column::new("raw_function", Str)
        .nullable()
        .without_statistics(),
    Column::new("file", Str).nullable().without_statistics(),
    Column::new("line", U32).nullable().without_statistics(),
    Column::new("symbol", Str).nullable().without_statistics(),
    Column::new("raw_symbol", Str)
        .nullable()
        .without_statistics(),
    Column::new("dso", Str).without_statistics(),
    Column::new("dso_id", U32).nullable().without_statistics(),
    Column::new("dso_path", Str).nullable().without_statistics(),
    Column::new("build_id", Str).nullable().without_statistics(),
    Column::new("address", U64).plain().without_statistics(),
    Column::new("dso_offset", U64)
        .nullable()
        .plain()
        .without_statistics(),
    Column::new("kind", Str).without_statistics(),
    Column::new("unresolved", Str)
        .nullable()
        .without_statistics(),
];

/// One row per DSO the mappings name.
pub(crate) const DSOS: &[Column<'static>] = &[
    Column::new("dso_id", U32),
    Column::new("name", Str),
    Column::new("path", Str),
    Column::new("build_id", Str).nullable(),
    Column::new("kind", Str),
    Column::new("binary", Str).nullable(),
    Column::new("unresolved", Str).nullable(),
];

/// Every event (attr) of the capture.
pub(crate) const EVENTS: &[Column<'static>] = &[
    Column::new("event_id", U32),
    Column::new("name", Str),
    Column::new("type", U32),
    Column::new("config", U64),
    Column::new("config1", U64),
    Column::new("config2", U64),
    Column::new("sample_type", Str),
    Column::new("read_format", Str),
    Column::new("sample_period", U64).nullable(),
    Column::new("sample_freq", U64).nullable(),
    Column::new("group_leader", U32).nullable(),
    Column::new("group_name", Str).nullable(),
    Column::new("member", U32),
];

/// One row per PMU the header features name.
pub(crate) const PMUS: &[Column<'static>] = &[
    Column::new("type", U32).nullable(),
    Column::new("name", Str),
    Column::new("cpus", Str).nullable(),
    Column::new("caps", Str).nullable(),
];

/// COMM, FORK and EXIT records.
pub(crate) const THREADS: &[Column<'static>] = &[
    Column::new("time", U64).nullable(),
    Column::new("kind", Str),
    Column::new("pid", I32),
    Column::new("tid", I32),
    Column::new("ppid", I32).nullable(),
    Column::new("ptid", I32).nullable(),
    Column::new("comm", Str).nullable(),
];

/// MMAP and MMAP2 records.
pub(crate) const MAPPINGS: &[Column<'static>] = &[
    Column::new("time", U64).nullable(),
    Column::new("pid", I32),
    Column::new("tid", I32),
    Column::new("start", U64),
    Column::new("end", U64),
    Column::new("pgoff", U64),
    Column::new("path", Str),
    Column::new("build_id", Str).nullable(),
    Column::new("prot", U32).nullable(),
    Column::new("flags", U32).nullable(),
    Column::new("executable", U16),
];

/// Off-CPU intervals (`perfq_stream::off_cpu`), in the order they end.
pub(crate) const OFF_CPU: &[Column<'static>] = &[
    Column::new("pid", I32).nullable(),
    Column::new("tid", I32),
    Column::new("start_time", U64).nullable(),
    Column::new("end_time", U64).nullable(),
    Column::new("duration_ns", U64),
    Column::new("cpu", U32).nullable(),
    Column::new("cpu_in", U32).nullable(),
    Column::new("state", Str),
    Column::new("end_from", Str),
    Column::new("uncertain", Bool),
    Column::new("sample_id", U64).nullable(),
    Column::new("stack_from", Str).nullable(),
    Column::new("wake_time", U64).nullable(),
    Column::new("waker_pid", I32).nullable(),
    Column::new("waker_tid", I32).nullable(),
    Column::new("waker_sample_id", U64).nullable(),
    Column::new("run_ns", U64).nullable(),
];

/// Lost records and samples, throttling.
pub(crate) const QUALITY: &[Column<'static>] = &[
    Column::new("time", U64).nullable(),
    Column::new("kind", Str),
    Column::new("event_id", U32).nullable(),
    Column::new("id", U64).nullable(),
    Column::new("count", U64),
];

/// One row: the capture's header facts and counts.
pub(crate) const CAPTURE: &[Column<'static>] = &[
    Column::new("capture_id", Str),
    Column::new("source_path", Str),
    Column::new("source_size", U64),
    Column::new("source_xxh3", Str),
    Column::new("mode", Str),
    Column::new("endian", Str),
    Column::new("hostname", Str).nullable(),
    Column::new("os_release", Str).nullable(),
    Column::new("arch", Str).nullable(),
    Column::new("cpuid", Str).nullable(),
    Column::new("cpudesc", Str).nullable(),
    Column::new("perf_version", Str).nullable(),
    Column::new("cmdline", Str).nullable(),
    Column::new("nrcpus_online", U32).nullable(),
    Column::new("time_first", U64).nullable(),
    Column::new("time_last", U64).nullable(),
    Column::new("samples", U64),
    Column::new("lost_records", U64),
    Column::new("lost_samples", U64),
    Column::new("samples_unknown_id", U64),
    Column::new("decode_errors", U64),
    Column::new("read_error", Str).nullable(),
    Column::new("warnings", Str),
];

#[cfg(test)]
mod tests {
    use super::*;

    /// The samples thread writes a sample's member deltas as the last
    /// cells of its row, in order: the schema must end with m0..m15.
    #[test]
    fn samples_end_with_the_member_columns() {
        let tail = &SAMPLES[SAMPLES.len() - MEMBER_COLUMNS..];
        for (k, c) in tail.iter().enumerate() {
            assert_eq!(c.name, format!("m{k}"));
            assert_eq!(c.ty, U64);
            assert!(c.nullable);
        }
    }
}
