//! Samples named as `perf script` names them, the way the flame graph
//! and the profile export read them: each thread's name over time (an
//! in-memory table of comm intervals from the `threads` table), and the
//! delivered samples joined to the name their thread had at their time
//! (`_named_delivered`).

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use datafusion::arrow::array::{Int32Array, RecordBatch, StringArray, UInt64Array};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::datasource::MemTable;
use rustc_hash::FxHashMap;

use crate::helpers::{self, Param};
use crate::{columns, views, Error, Session};

/// The name of the in-memory table of comm intervals.
const COMMS: &str = "_perfq_flamegraph_comms";

/// The delivered samples with their process names (`_named_delivered`),
/// once [`register_comms`] has made the comm intervals' table.
pub(crate) fn named_delivered() -> String {
    helpers::fill(
        helpers::NAMED_DELIVERED,
        &[
            (
                "delivered",
                Param::Sql(helpers::query(helpers::FLAMEGRAPH_DELIVERED)),
            ),
            ("comms", Param::Sql(COMMS)),
        ],
    )
}

/// The comm intervals' table [`register_comms`] makes.
pub(crate) fn comms() -> &'static str {
    COMMS
}

/// Fails unless the session has every table the named samples' queries
/// read (the comm intervals' `threads` aside: without it, every thread is
/// named by its id).
pub(crate) fn require_tables(session: &Session) -> Result<(), Error> {
    let queries = [
        helpers::FLAMEGRAPH_DELIVERED,
        helpers::SAMPLED_EVENTS,
        helpers::FLAMEGRAPH_STACKS,
        helpers::FLAMEGRAPH_FRAMES,
    ];
    match views::tables_read_by(&queries)
        .into_iter()
        .find(|t| !session.has_table(t))
    {
        Some(t) => Err(Error::NotDataset {
            path: session.dataset().into(),
            why: format!("it has no {t} table"),
        }),
        None => Ok(()),
    }
}

/// Puts the comm of every thread over time into an in-memory table
/// (capture, tid, start_time, end_time, comm), one row per interval during
/// which the thread had one name; a null comm is a thread forked from one
/// perf had no name for (perf names it `:<tid>`).
pub(crate) fn register_comms(session: &Session) -> Result<(), Error> {
    let intervals = read_comm_intervals(session)?;
    let schema = Arc::new(Schema::new(vec![
        Field::new("capture", DataType::Utf8, false),
        Field::new("tid", DataType::Int32, false),
        Field::new("start_time", DataType::UInt64, false),
        Field::new("end_time", DataType::UInt64, false),
        Field::new("comm", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(StringArray::from_iter_values(
                intervals.iter().map(|r| r.0.as_str()),
            )),
            Arc::new(Int32Array::from_iter_values(intervals.iter().map(|r| r.1))),
            Arc::new(UInt64Array::from_iter_values(intervals.iter().map(|r| r.2))),
            Arc::new(UInt64Array::from_iter_values(intervals.iter().map(|r| r.3))),
            Arc::new(StringArray::from_iter(
                intervals.iter().map(|r| r.4.as_deref()),
            )),
        ],
    )
    .map_err(|e| Error::Shape(e.to_string()))?;
    let table = MemTable::try_new(schema, vec![vec![batch]]).map_err(|e| Error::query(COMMS, e))?;
    let ctx = session.context();
    ctx.deregister_table(COMMS)
        .map_err(|e| Error::query(COMMS, e))?;
    ctx.register_table(COMMS, Arc::new(table))
        .map_err(|e| Error::query(COMMS, e))?;
    Ok(())
}

/// Each thread's names over time, looked up in memory: the names
/// `_named_delivered` joins each sample to, for a reader of the delivered
/// samples that names them itself.
pub(crate) struct Comms {
    /// By capture, by tid: its intervals (from, until, name), in time
    /// order, none overlapping.
    by_thread: FxHashMap<String, FxHashMap<i32, Vec<Span>>>,
}

/// An interval of a thread's name: from, until (exclusive), the name.
type Span = (u64, u64, Option<String>);

impl Comms {
    /// The session's comm intervals ([`register_comms`]'s rows).
    pub(crate) fn read(session: &Session) -> Result<Self, Error> {
        let mut by_thread: FxHashMap<String, FxHashMap<i32, Vec<Span>>> = FxHashMap::default();
        for (capture, tid, from, until, name) in read_comm_intervals(session)? {
            let threads = by_thread.entry(capture).or_default();
            threads.entry(tid).or_default().push((from, until, name));
        }
        Ok(Comms { by_thread })
    }

    /// The name of thread `tid` of `capture` at `time`, as
    /// `_named_delivered` gives it: its comm then, else `swapper` for
    /// thread 0 and `:<tid>` (`:` without a tid) for a thread perf never
    /// named.
    pub(crate) fn name(&self, capture: &str, tid: Option<i64>, time: Option<u64>) -> Cow<'_, str> {
        let named = tid
            .and_then(|t| i32::try_from(t).ok())
            .zip(time)
            .and_then(|(t, time)| self.named(capture, t, time).0);
        Self::or_unnamed(named, tid)
    }

    /// [`Comms::name`] of thread `tid` at `time`, and the times `from..until`
    /// around it over which the thread keeps that name: a reader of many
    /// samples of a thread names it once for them.
    pub(crate) fn name_over(
        &self,
        capture: &str,
        tid: i32,
        time: u64,
    ) -> (Cow<'_, str>, Range<u64>) {
        let (named, over) = self.named(capture, tid, time);
        (Self::or_unnamed(named, Some(i64::from(tid))), over)
    }

    /// The comm of thread `tid` at `time`, if it has one then, and the
    /// times around it over which that holds, span by span as
    /// [`Comms::name`] looks them up: the last span that starts by then
    /// names the thread until it ends.
    fn named(&self, capture: &str, tid: i32, time: u64) -> (Option<&str>, Range<u64>) {
        let no_spans: &[Span] = &[];
        let spans = self
            .by_thread
            .get(capture)
            .and_then(|t| t.get(&tid))
            .map_or(no_spans, Vec::as_slice);
        let after = spans.partition_point(|s| s.0 <= time);
        let next = spans.get(after).map_or(u64::MAX, |s| s.0);
        let Some((from, until, name)) = after.checked_sub(1).and_then(|i| spans.get(i)) else {
            return (None, 0..next);
        };
        match time < *until {
            true => (name.as_deref(), *from..next.min(*until)),
            false => (None, (*from).max(*until)..next),
        }
    }

    /// A thread's name where it has no comm: `swapper` for thread 0,
    /// else `:<tid>` (`:` without a tid).
    fn or_unnamed(named: Option<&str>, tid: Option<i64>) -> Cow<'_, str> {
        match (named, tid) {
            (Some(name), _) => Cow::Borrowed(name),
            (None, Some(0)) => Cow::Borrowed("swapper"),
            (None, Some(t)) => Cow::Owned(format!(":{t}")),
            (None, None) => Cow::Borrowed(":"),
        }
    }
}

/// The comm intervals (capture, tid, start_time, end_time, comm) of the
/// session's `threads` table (none without one).
fn read_comm_intervals(session: &Session) -> Result<Vec<CommInterval>, Error> {
    let mut rows: Vec<ThreadRecord> = Vec::new();
    if session.has_table("threads") {
        for b in &session.sql(helpers::FLAMEGRAPH_THREADS)? {
            let capture = columns::strings(b, "capture")?;
            let time = columns::u64s(b, "time")?;
            let kind = columns::strings(b, "kind")?;
            let tid = columns::i64s(b, "tid")?;
            let ptid = columns::i64s(b, "ptid")?;
            let comm = columns::strings(b, "comm")?;
            for i in 0..b.num_rows() {
                let (Some(c), Some(k), Some(t)) = (&capture[i], &kind[i], tid[i]) else {
                    continue;
                };
                let Ok(t) = i32::try_from(t) else { continue };
                rows.push(ThreadRecord {
                    capture: c.clone(),
                    time: time[i].unwrap_or(0),
                    kind: k.clone(),
                    tid: t,
                    ptid: ptid[i].and_then(|p| i32::try_from(p).ok()),
                    comm: comm[i].clone(),
                });
            }
        }
    }
    // The table is in time order per capture (the order perf delivers the
    // records in); a stable sort keeps records of the same time in it
    // when captures' rows arrive interleaved.
    rows.sort_by(|a, b| (&a.capture, a.time).cmp(&(&b.capture, b.time)));
    Ok(comm_intervals(&rows))
}

/// A COMM, exec, FORK or EXIT row of the `threads` table.
#[derive(Clone, Debug)]
struct ThreadRecord {
    capture: String,
    time: u64,
    kind: String,
    tid: i32,
    ptid: Option<i32>,
    comm: Option<String>,
}

/// One interval of a thread's name: capture, tid, from, until (exclusive),
/// the name.
type CommInterval = (String, i32, u64, u64, Option<String>);

/// perf's thread names over time from COMM/exec, FORK and EXIT rows in
/// delivery order: a COMM renames its thread; a FORK makes a new thread
/// with its parent's name at that moment (perf's `thread__fork`, which
/// copies it only when the parent has one); an EXIT changes nothing (perf
/// keeps an exited thread's name).
fn comm_intervals(rows: &[ThreadRecord]) -> Vec<CommInterval> {
    let mut current: HashMap<(&str, i32), Option<String>> = HashMap::new();
    let mut starts: Vec<(String, i32, u64, Option<String>)> = Vec::new();
    for r in rows {
        let name = match r.kind.as_str() {
            "comm" | "exec" => r.comm.clone(),
            "fork" => r
                .ptid
                .and_then(|p| current.get(&(r.capture.as_str(), p)).cloned())
                .flatten(),
            _ => continue,
        };
        current.insert((r.capture.as_str(), r.tid), name.clone());
        starts.push((r.capture.clone(), r.tid, r.time, name));
    }
    // Each thread's intervals end where its next one starts.
    starts.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    let mut out: Vec<CommInterval> = Vec::with_capacity(starts.len());
    for (i, (capture, tid, start, name)) in starts.iter().enumerate() {
        let end = match starts.get(i + 1) {
            Some(next) if next.0 == *capture && next.1 == *tid => next.2,
            _ => u64::MAX,
        };
        if end > *start {
            out.push((capture.clone(), *tid, *start, end, name.clone()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comms_follow_exec_and_fork() {
        let r = |t: u64, k: &str, tid: i32, ptid: Option<i32>, c: Option<&str>| ThreadRecord {
            capture: "x".to_string(),
            time: t,
            kind: k.to_string(),
            tid,
            ptid,
            comm: c.map(str::to_string),
        };
        let rows = vec![
            r(0, "comm", 10, None, Some("sh")),
            r(5, "fork", 11, Some(10), None),
            r(7, "exec", 11, None, Some("sort")),
            r(8, "fork", 12, Some(99), None),
            r(9, "exit", 11, Some(10), None),
        ];
        let got = comm_intervals(&rows);
        let want: Vec<CommInterval> = vec![
            ("x".into(), 10, 0, u64::MAX, Some("sh".into())),
            ("x".into(), 11, 5, 7, Some("sh".into())),
            ("x".into(), 11, 7, u64::MAX, Some("sort".into())),
            ("x".into(), 12, 8, u64::MAX, None),
        ];
        assert_eq!(got, want);
    }

    /// The names `_named_delivered`'s LEFT JOIN and COALESCE give: the
    /// interval a time falls in (its end excluded), else `swapper` for
    /// thread 0 and `:<tid>`, also where the interval has no name.
    #[test]
    fn comms_name_as_the_join_does() {
        let spans = vec![(5, 7, Some("sh".to_string())), (7, u64::MAX, None)];
        let threads = FxHashMap::from_iter([(11, spans), (0, vec![])]);
        let comms = Comms {
            by_thread: FxHashMap::from_iter([("x".to_string(), threads)]),
        };
        let name = |c, tid, time| comms.name(c, tid, time).into_owned();
        assert_eq!(name("x", Some(11), Some(5)), "sh");
        assert_eq!(name("x", Some(11), Some(6)), "sh");
        assert_eq!(name("x", Some(11), Some(7)), ":11", "a nameless interval");
        assert_eq!(name("x", Some(11), Some(4)), ":11", "before the first");
        assert_eq!(name("x", Some(11), None), ":11");
        assert_eq!(name("y", Some(11), Some(5)), ":11", "another capture");
        assert_eq!(name("x", Some(0), Some(5)), "swapper");
        assert_eq!(
            name("x", Some(1 << 40), Some(5)),
            format!(":{}", 1u64 << 40)
        );
        assert_eq!(name("x", None, Some(5)), ":");
    }

    /// `name_over` names a thread as `name` does, and over every time it
    /// gives, `name` gives that name: with gaps between spans, spans that
    /// end before the next starts, a nameless one and a last one that
    /// ends.
    #[test]
    fn a_name_holds_over_the_times_given() {
        let spans = vec![
            (3, 6, Some("a".to_string())),
            (6, 9, None),
            (12, 14, Some("b".to_string())),
            (14, 20, Some("c".to_string())),
        ];
        let comms = Comms {
            by_thread: FxHashMap::from_iter([(
                "x".to_string(),
                FxHashMap::from_iter([(11, spans)]),
            )]),
        };
        for tid in [11, 12, 0] {
            for time in 0..25 {
                let (named, over) = comms.name_over("x", tid, time);
                let name = |t| comms.name("x", Some(i64::from(tid)), Some(t));
                assert_eq!(named, name(time), "tid {tid} at {time}");
                assert!(over.contains(&time), "{over:?} holds {time}");
                for t in over.start..over.end.min(30) {
                    assert_eq!(name(t), named, "tid {tid} at {t}, over {over:?}");
                }
            }
        }
    }
}
