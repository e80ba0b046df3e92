//! Off-CPU time per thread and interval of the captures' time: how long
//! each thread ran and waited, and in which state, in each interval
//! (`sql/_off_cpu_by_interval.sql`, over the `off_cpu` table). The HTML
//! page's time line of one thread reads them; its off-CPU flame graph
//! reads [`crate::flamegraph::folded`]'s stacks.
//!
//! An interval is counted from its capture's first sample, as
//! `crate::function_sums` counts the samples' intervals.

use crate::helpers::{self, Param};
use crate::{columns, Error, Session};

/// A thread's time of one state in one interval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// The thread's process (none where it was not known).
    pub pid: Option<i64>,
    /// The thread.
    pub tid: i64,
    /// The interval, counted from its capture's first sample.
    pub bucket: u64,
    /// `off_cpu.state`, or `running`: on CPU before a switch-out
    /// (`off_cpu.run_ns`).
    pub state: String,
    /// How long of the interval (ns).
    pub ns: u64,
}

/// Whether the session's captures have off-CPU intervals (a dataset
/// converted before the `off_cpu` table was written has none).
pub fn any(session: &Session) -> Result<bool, Error> {
    if !session.has_table("off_cpu") {
        return Ok(false);
    }
    let found = session.sql("SELECT 1 AS found FROM off_cpu LIMIT 1")?;
    Ok(found.iter().any(|b| b.num_rows() > 0))
}

/// Each thread's time per interval of `interval_ns` and state, in (pid,
/// tid, interval, state) order; none for a session without the `off_cpu`
/// table (a dataset converted before it was written).
pub fn by_interval(session: &Session, interval_ns: u64) -> Result<Vec<Span>, Error> {
    if !session.has_table("off_cpu") {
        return Ok(Vec::new());
    }
    let interval_ns = interval_ns.max(1).to_string();
    let sql = helpers::fill(
        helpers::OFF_CPU_BY_INTERVAL,
        &[("interval_ns", Param::Sql(&interval_ns))],
    );
    let mut spans = Vec::new();
    for b in &session.sql(&sql)? {
        let (pids, tids) = (columns::i64s(b, "pid")?, columns::i64s(b, "tid")?);
        let (buckets, ns) = (columns::u64s(b, "bucket")?, columns::u64s(b, "ns")?);
        let states = columns::strings(b, "state")?;
        let rows = pids.into_iter().zip(tids).zip(buckets).zip(states).zip(ns);
        for ((((pid, tid), bucket), state), ns) in rows {
            let (Some(tid), Some(bucket), Some(state), Some(ns)) = (tid, bucket, state, ns) else {
                continue;
            };
            spans.push(Span {
                pid,
                tid,
                bucket,
                state,
                ns,
            });
        }
    }
    Ok(spans)
}
