//! What the page shows of off-CPU time, where the captures have it: the
//! off-CPU flame graph (the stacks `perfq flamegraph --off-cpu` folds,
//! `perfq_query::flamegraph`) and each thread's running and waiting time
//! per interval of the time line (`perfq_query::off_cpu`). Both are the
//! query layer's; the page only lays them out.

use perfq_ids::TextIds;
use perfq_query::flamegraph::{self, Weight};
use perfq_query::{off_cpu, Session};
use serde::Serialize;

use crate::Error;

/// The off-CPU part of the page's data.
#[derive(Serialize)]
pub(super) struct OffCpu {
    /// Each folded stack's frames as ids of `names`, the process name
    /// first, then outermost to leaf, and its off-CPU time (ns).
    stacks: Vec<(Vec<u32>, u64)>,
    /// The frames' names, by id.
    names: Vec<String>,
    /// The time of every stack.
    total_ns: u64,
    /// Per thread and interval, the time of each state.
    spans: SpanColumns,
}

/// [`off_cpu::Span`]s as columns; `state` an index of `states`.
#[derive(Serialize, Default)]
struct SpanColumns {
    pid: Vec<i64>,
    tid: Vec<i64>,
    bucket: Vec<u64>,
    state: Vec<u8>,
    ns: Vec<u64>,
    states: Vec<String>,
}

/// The off-CPU data of the session's captures, intervals of
/// `interval_ns`; `None` where they have no off-CPU time.
pub(super) fn of(session: &Session, interval_ns: u64) -> Result<Option<OffCpu>, Error> {
    if !off_cpu::any(session)? {
        return Ok(None);
    }
    let folded = flamegraph::folded(
        session,
        &flamegraph::Options {
            off_cpu: true,
            weight: Weight::Period,
            event: None,
        },
    )?;
    if folded.total == 0 {
        return Ok(None);
    }
    let mut names = TextIds::new();
    let mut stacks = Vec::with_capacity(folded.stacks.len());
    for (line, ns) in &folded.stacks {
        let frames: Option<Vec<u32>> = line.split(';').map(|f| names.id(f)).collect();
        let frames = frames.ok_or_else(|| Error::TooLarge("the off-CPU frames' names".into()))?;
        stacks.push((frames, *ns));
    }
    Ok(Some(OffCpu {
        stacks,
        names: names.iter().map(str::to_string).collect(),
        total_ns: folded.total,
        spans: spans(session, interval_ns)?,
    }))
}

/// Each thread's time per interval and state, as columns.
fn spans(session: &Session, interval_ns: u64) -> Result<SpanColumns, Error> {
    let mut c = SpanColumns::default();
    for s in off_cpu::by_interval(session, interval_ns)? {
        let state = match c.states.iter().position(|x| *x == s.state) {
            Some(i) => i,
            None => {
                c.states.push(s.state);
                c.states.len() - 1
            }
        };
        c.pid.push(s.pid.unwrap_or(-1));
        c.tid.push(s.tid);
        c.bucket.push(s.bucket);
        c.state.push(state as u8);
        c.ns.push(s.ns);
    }
    Ok(c)
}
