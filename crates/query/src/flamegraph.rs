//! Folded stacks: one line per distinct stack, `comm;outermost;...;leaf
//! count`, the input of FlameGraph's `flamegraph.pl` and inferno, built
//! from a dataset the way `perf script | stackcollapse-perf.pl` (or
//! `inferno-collapse-perf`) builds them from a capture.
//!
//! What `perf script` prints, and so what the collapse tools count:
//!
//! - **Which samples.** A sample of an event that reads a group
//!   (`PERF_SAMPLE_READ`) is delivered once per member whose counter moved,
//!   as a sample of that member with its delta as period (perf's
//!   `deliver_sample_value`); other samples as they are. The collapse tools
//!   keep one event, by default the first one delivered: so does
//!   [`folded`] unless [`Options::event`] names one.
//! - **The count.** The collapse tools add up the period `perf script`
//!   prints in each sample's header (this perf prints one for every
//!   sample); [`Weight::Samples`] counts samples instead, as
//!   `stackcollapse-perf.pl` did before it read periods.
//! - **The process name.** `perf script` names a sample by its thread's
//!   comm when the sample is delivered: the last COMM (or exec) of that
//!   thread before it, or, after a FORK, the comm the parent had then; a
//!   thread perf never saw is `:<tid>`, and thread 0 is `swapper`. The
//!   `threads` table holds those records in time order; [`folded`] turns
//!   them into intervals per thread and joins each sample to the one its
//!   time falls in. A COMM and a sample of the same thread at the same
//!   nanosecond count the COMM as first (perf orders them by file position).
//!   Spaces in names become `_`, as the collapse tools write them.
//! - **Frame names.** The ELF/kallsyms symbol (`frames.symbol`) with perf's
//!   `+0x...` offset dropped; an unresolved frame `[<file name of its
//!   DSO>]` (`[libc.so.6]`, `[[kernel.kallsyms]]`), or `[unknown]` without
//!   a mapping. For `--call-graph dwarf` captures perf expands every
//!   unwound user frame into one frame per inlining level, outermost first,
//!   each named by its DWARF function (the collapse tools keep them, named
//!   without the `(inlined)` mark): so does [`folded`] for samples that
//!   carry a user stack, from `frames.function` at each `inline_depth`.
//!   Frame-pointer callchains are not expanded (perf 6.1 does not).
//! - **Tidying.** As inferno's collapse-perf: `;` inside a name becomes
//!   `:`, a parameter list (the first `(` outside `<>`, `{}`, `[]`, except
//!   Go's `.(` and C++'s `(anonymous namespace)`) is cut, and frames of
//!   processes named `java...` lose the `L` of `Lorg/...`.
//!   `stackcollapse-perf.pl` cuts at the first `(` whatever the brackets
//!   and drops quotes: the two differ only on C++/Rust names with `(` inside
//!   template brackets or quotes in names.
//!
//! The samples are chosen, named and counted by SQL over the dataset; only
//! the per-frame names (a row per distinct address) are put together here.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use datafusion::arrow::array::RecordBatch;
use perfq_ids::TextIds;

use crate::helpers::{self, Param};
use crate::{columns, events, named_samples};
use crate::{topdown, views, Error, Session};

/// What a stack's count adds up.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Weight {
    /// The samples' periods (for a group read, each member's delta), as
    /// `stackcollapse-perf.pl` and inferno count `perf script` output.
    #[default]
    Period,
    /// One per sample.
    Samples,
}

/// What to fold.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only this event (`events.name`); by default the event of the first
    /// sample delivered, as the collapse tools choose.
    pub event: Option<String>,
    /// What a stack's count adds up.
    pub weight: Weight,
    /// The off-CPU intervals instead of an event's samples, each counting
    /// its length in ns (by `Weight::Period`) or once (`Weight::Samples`).
    pub off_cpu: bool,
}

/// The name a graph of off-CPU time gives its "event".
pub const OFF_CPU: &str = "off-CPU time (ns)";

/// A function as the standard views name it (`frame_functions`): the key
/// of per-function results such as topdown rows.
pub type FunctionKey = (String, String);

/// The folded stacks of one event.
#[derive(Clone, Debug, Default)]
pub struct Folded {
    /// The event folded.
    pub event: String,
    /// The other events with samples (not folded).
    pub other_events: Vec<String>,
    /// The captures the samples come from.
    pub captures: Vec<String>,
    /// `comm;outermost;...;leaf` and its count, in byte order of the text
    /// (the collapse tools' order). Counts are never 0.
    pub stacks: Vec<(String, u64)>,
    /// Samples folded.
    pub samples: u64,
    /// The sum of the counts.
    pub total: u64,
    /// Every frame name of `stacks` (not the comm) and the functions
    /// (`frame_functions`' symbol and DSO) it stands for: an inlined
    /// function stands for the function it is inlined into, `[libc.so.6]`
    /// for every unresolved address of libc.
    pub functions: BTreeMap<String, BTreeSet<FunctionKey>>,
}

impl Folded {
    /// Writes `stack count` lines.
    pub fn write(&self, out: &mut dyn std::io::Write) -> std::io::Result<()> {
        for (stack, count) in &self.stacks {
            writeln!(out, "{stack} {count}")?;
        }
        Ok(())
    }
}

/// Folds the session's samples of one event (or its off-CPU intervals)
/// into stacks.
pub fn folded(session: &Session, opt: &Options) -> Result<Folded, Error> {
    named_samples::require_tables(session)?;
    views::ensure(session, "frame_functions")?;
    named_samples::register_comms(session)?;
    let (rows, event, other_events) = match opt.off_cpu {
        true => (off_cpu_rows(session)?, OFF_CPU.to_string(), Vec::new()),
        false => match sampled_rows(session, opt)? {
            Some(chosen) => chosen,
            // Nothing sampled (a damaged capture may have lost every
            // sample): a graph without stacks.
            None => return Ok(Folded::default()),
        },
    };
    let (capture_ids, names) = frame_names(session)?;
    let mut lines = Lines::new(&capture_ids, &names);
    for b in &rows {
        lines.add(b)?;
    }
    Ok(lines.folded(event, other_events, opt.weight))
}

/// The rows to fold, the event they are of, and the other events sampled.
type Chosen = (Vec<RecordBatch>, String, Vec<String>);

/// The chosen event's samples per (capture, comm, stack), with the
/// stack's frames (`_flamegraph_stacks`), the event and the others
/// sampled; `None` when nothing was sampled.
fn sampled_rows(session: &Session, opt: &Options) -> Result<Option<Chosen>, Error> {
    views::ensure(session, "delivered_samples")?;
    let named = named_samples::named_delivered();
    let events = events::sampled_events(session)?;
    let Some(event) = events::chosen(opt.event.as_deref(), &events)? else {
        return Ok(None);
    };
    let other_events = events.into_iter().filter(|e| *e != event).collect();
    let rows = session.sql(&helpers::fill(
        helpers::FLAMEGRAPH_STACKS,
        &[
            ("named", Param::Sql(&named)),
            ("event", Param::Text(&event)),
        ],
    ))?;
    Ok(Some((rows, event, other_events)))
}

/// The off-CPU intervals per (capture, comm, stack), in the same shape
/// (`_flamegraph_off_cpu`).
fn off_cpu_rows(session: &Session) -> Result<Vec<RecordBatch>, Error> {
    views::ensure(session, "off_cpu_stacks")?;
    session.sql(&helpers::fill(
        helpers::FLAMEGRAPH_OFF_CPU,
        &[("comms", Param::Sql(named_samples::comms()))],
    ))
}

/// Folded stacks as they are put together from the rows of
/// `_flamegraph_stacks`.
struct Lines<'a> {
    capture_ids: &'a TextIds,
    names: &'a HashMap<(u32, u32), FrameName>,
    /// Each line's samples and weight.
    lines: BTreeMap<String, (u64, u64)>,
    functions: BTreeMap<String, BTreeSet<FunctionKey>>,
    captures: BTreeSet<String>,
    /// The line being written.
    line: String,
    /// The one name of a frame the frames table lacks.
    unknown: [String; 1],
}

/// The name of a frame the frames table lacks.
const UNKNOWN: &str = "[unknown]";

impl<'a> Lines<'a> {
    fn new(capture_ids: &'a TextIds, names: &'a HashMap<(u32, u32), FrameName>) -> Self {
        Lines {
            capture_ids,
            names,
            lines: BTreeMap::new(),
            functions: BTreeMap::new(),
            captures: BTreeSet::new(),
            line: String::new(),
            unknown: [String::from(UNKNOWN)],
        }
    }

    /// Adds a batch of rows: each a (capture, comm, stack) with its
    /// samples, weight and frames.
    fn add(&mut self, b: &RecordBatch) -> Result<(), Error> {
        let capture = columns::strings(b, "capture")?;
        let comm = columns::strings(b, "comm")?;
        let unwound = columns::bools(b, "unwound")?;
        let samples = columns::i64s(b, "samples")?;
        let weight = columns::u64s(b, "weight")?;
        let frame_ids = columns::u32_lists(b, "frame_ids")?;
        for i in 0..b.num_rows() {
            let capture = capture[i].clone().unwrap_or_default();
            let comm = comm[i].clone().unwrap_or_default();
            self.line.clear();
            self.line.push_str(&comm.replace(' ', "_"));
            let cid = self.capture_ids.get(&capture);
            let frames = frame_ids[i].as_deref().unwrap_or_default();
            self.push_frames(cid, frames, unwound[i], comm.starts_with("java"));
            let n = samples[i].unwrap_or(0).max(0) as u64;
            let w = weight[i].unwrap_or(0);
            let e = self.lines.entry(self.line.clone()).or_default();
            // Periods add up wrapping, as perf's and SQL's sums do (a
            // damaged counter's read delta wraps to near 2^64).
            e.0 += n;
            e.1 = e.1.wrapping_add(w);
            self.captures.insert(capture);
        }
        Ok(())
    }

    /// Writes a stack's frames (`frames`, leaf first, of capture number
    /// `cid`) onto the line, root first, and notes the functions each
    /// name stands for.
    fn push_frames(&mut self, cid: Option<u32>, frames: &[u32], unwound: bool, java: bool) {
        let names = self.names;
        for id in frames.iter().rev() {
            let frame = cid.and_then(|c| names.get(&(c, *id)));
            let levels: &[String] = match frame {
                Some(f) if unwound && !f.inlined.is_empty() => &f.inlined,
                Some(f) => std::slice::from_ref(&f.plain),
                None => &self.unknown,
            };
            for name in levels {
                let name = if java { tidy_java(name) } else { name.as_str() };
                self.line.push(';');
                self.line.push_str(name);
                if let Some(f) = frame {
                    if !self.functions.get(name).is_some_and(|k| k.contains(&f.key)) {
                        self.functions
                            .entry(name.to_string())
                            .or_default()
                            .insert(f.key.clone());
                    }
                }
            }
        }
    }

    /// The folded stacks, counted by `weight`.
    fn folded(self, event: String, other_events: Vec<String>, weight: Weight) -> Folded {
        let mut folded = Folded {
            event,
            other_events,
            captures: self.captures.into_iter().collect(),
            functions: self.functions,
            ..Folded::default()
        };
        for (stack, (n, w)) in self.lines {
            let count = match weight {
                Weight::Period => w,
                Weight::Samples => n,
            };
            folded.samples += n;
            // perf does not deliver a sample of period 0, so neither count
            // is 0 unless a period is missing: such a line says nothing.
            if count > 0 {
                folded.total = folded.total.wrapping_add(count);
                folded.stacks.push((stack, count));
            }
        }
        folded
    }
}

/// How one distinct address is named in folded stacks.
struct FrameName {
    /// Its symbol, or `[dso]` / `[unknown]`.
    plain: String,
    /// One name per inlining level, outermost first, for frames perf
    /// expands (resolved user frames); empty for the others.
    inlined: Vec<String>,
    /// The function it counts for in the standard views.
    key: FunctionKey,
}

/// Captures numbered, and every frame's names by (capture number,
/// frame_id).
type FrameNames = (TextIds, HashMap<(u32, u32), FrameName>);

/// Every frame's names.
fn frame_names(session: &Session) -> Result<FrameNames, Error> {
    let rows = session.sql(helpers::FLAMEGRAPH_FRAMES)?;
    let mut captures = TextIds::new();
    let mut out: HashMap<(u32, u32), FrameName> = HashMap::new();
    for b in &rows {
        let capture = columns::strings(b, "capture")?;
        let frame_id = columns::u64s(b, "frame_id")?;
        let function = columns::strings(b, "function")?;
        let symbol = columns::strings(b, "symbol")?;
        let dso = columns::strings(b, "dso")?;
        let dso_path = columns::strings(b, "dso_path")?;
        let kind = columns::strings(b, "kind")?;
        let key_symbol = columns::strings(b, "key_symbol")?;
        let key_dso = columns::strings(b, "key_dso")?;
        for i in 0..b.num_rows() {
            let (Some(capture), Some(id)) = (&capture[i], frame_id[i]) else {
                continue;
            };
            let Ok(id) = u32::try_from(id) else { continue };
            let symbol = symbol[i].as_deref();
            let level = function[i].as_deref().or(symbol).map(tidy);
            let Some(c) = captures.id(capture) else {
                return Err(Error::Shape("capture ids beyond 4 GiB".into()));
            };
            let entry = out.entry((c, id)).or_insert_with(|| {
                let module = dso_path[i]
                    .as_deref()
                    .map(|p| p.rsplit('/').next().unwrap_or(p))
                    .or(dso[i].as_deref());
                FrameName {
                    plain: match symbol {
                        Some(s) => tidy(s),
                        None => unresolved(module),
                    },
                    inlined: Vec::new(),
                    key: (
                        key_symbol[i].clone().unwrap_or_default(),
                        key_dso[i].clone().unwrap_or_default(),
                    ),
                }
            });
            // perf's append_inlines needs a symbol and leaves kernel
            // frames (which come from the recorded callchain, not the
            // unwinder) as they are.
            if symbol.is_some() && kind[i].as_deref() != Some("kernel") {
                if let Some(level) = level {
                    entry.inlined.push(level);
                }
            }
        }
    }
    Ok((captures, out))
}

/// An unresolved frame as the collapse tools name `[unknown] (module)`:
/// the module's file name in brackets, `[unknown]` without one.
fn unresolved(module: Option<&str>) -> String {
    match module {
        Some(m) if !m.is_empty() && m != UNKNOWN => format!("[{m}]"),
        _ => UNKNOWN.to_string(),
    }
}

/// A function name tidied as inferno's collapse-perf does: `;` is the
/// frame separator, and a parameter list is noise in a flame graph.
fn tidy(func: &str) -> String {
    let func = func.replace(';', ":");
    let mut depth = 0i32;
    let mut last_dot = None;
    let mut cut = func.len();
    for (i, c) in func.char_indices() {
        match c {
            '<' | '{' | '[' => depth += 1,
            '>' | '}' | ']' | ')' => depth -= 1,
            '(' => {
                if depth == 0 {
                    // Go methods (`net/http.(*Client).Do`) and C++
                    // anonymous namespaces keep their parentheses.
                    let go = last_dot == Some(i);
                    let anonymous = func[i..].starts_with("(anonymous namespace)");
                    if !go && !anonymous {
                        cut = i;
                        break;
                    }
                }
                depth += 1;
            }
            '.' => last_dot = Some(i + 1),
            _ => {}
        }
    }
    func[..cut].to_string()
}

/// Java frames of processes named `java...` lose the `L` of `Lorg/...;`.
fn tidy_java(func: &str) -> &str {
    match func.strip_prefix('L') {
        Some(rest) if func.contains('/') => rest,
        _ => func,
    }
}

/// A top-down category: a level-1 node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Category {
    /// The node (`backend_bound`).
    pub name: String,
    /// Its vendor name (`Backend Bound`).
    pub label: String,
}

/// A frame name's level-1 shares (total: the samples whose stack holds
/// the function) and the largest of them.
#[derive(Clone, Debug, PartialEq)]
pub struct Shade {
    /// Index into [`Shading::categories`] of the largest share.
    pub dominant: usize,
    /// Each category's share of slots, 0..1, `None` where it could not be
    /// computed.
    pub shares: Vec<Option<f64>>,
    /// The function's topdown samples.
    pub samples: u64,
}

/// Top-down colouring of a flame graph's frames.
#[derive(Clone, Debug, Default)]
pub struct Shading {
    /// The level-1 categories, in perf's order (retiring, bad speculation,
    /// frontend, backend; AMD's SMT contention last).
    pub categories: Vec<Category>,
    /// Frame names with topdown numbers; the others have none.
    pub names: HashMap<String, Shade>,
    /// What `topdown` warned about.
    pub warnings: Vec<String>,
    /// The CPU models and formula sets used.
    pub models: Vec<String>,
}

/// Each frame name's dominant level-1 category, from the functions'
/// total (inclusive) level-1 shares of `topdown::run`. A name that stands
/// for several functions (the same symbol in two DSOs, every unresolved
/// address of a DSO) takes the shares of the one with the most topdown
/// samples. Fails with [`Error::NoTopdown`] when the captures have no
/// topdown events.
pub fn topdown_shading(
    session: &Session,
    folded: &Folded,
    capture: Option<&str>,
) -> Result<Shading, Error> {
    let report = topdown::run(
        session,
        &topdown::Options {
            by: topdown::By::Function,
            mode: topdown::Mode::Total,
            level: 1,
            min_samples: 0,
            capture: capture.map(str::to_string),
            ..topdown::Options::default()
        },
    )?;
    let categories: Vec<Category> = report
        .level1()
        .iter()
        .map(|n| Category {
            name: n.name.clone(),
            label: n.label.clone(),
        })
        .collect();
    let rows = report.rows_by(&["symbol", "dso"]);
    let mut names = HashMap::new();
    for (name, keys) in &folded.functions {
        // The function with the most topdown samples speaks for the name.
        let Some(row) = keys
            .iter()
            .filter_map(|(symbol, dso)| rows.get(&[symbol.clone(), dso.clone()][..]))
            .max_by_key(|r| r.samples)
        else {
            continue;
        };
        let shares: Vec<Option<f64>> = categories.iter().map(|c| row.value(&c.name)).collect();
        if let Some(dominant) = dominant(&shares) {
            names.insert(
                name.clone(),
                Shade {
                    dominant,
                    shares,
                    samples: row.samples,
                },
            );
        }
    }
    Ok(Shading {
        categories,
        names,
        warnings: report.warnings,
        models: report.models,
    })
}

/// The index of the largest share (the first of equal ones), `None` when
/// no share is known.
pub fn dominant(shares: &[Option<f64>]) -> Option<usize> {
    let mut best: Option<(usize, f64)> = None;
    for (i, s) in shares.iter().enumerate() {
        if let Some(v) = s {
            if best.is_none_or(|(_, b)| *v > b) {
                best = Some((i, *v));
            }
        }
    }
    best.map(|(i, _)| i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tidy_cuts_parameter_lists_as_inferno_does() {
        assert_eq!(tidy("foo(int, char)"), "foo");
        assert_eq!(tidy("a;b"), "a:b");
        assert_eq!(
            tidy("<F as core::ops::function::FnOnce<()>>::call_once"),
            "<F as core::ops::function::FnOnce<()>>::call_once"
        );
        assert_eq!(tidy("net/http.(*Client).Do"), "net/http.(*Client).Do");
        assert_eq!(
            tidy("(anonymous namespace)::f(int)"),
            "(anonymous namespace)::f"
        );
        assert_eq!(
            tidy("update_active.constprop.0"),
            "update_active.constprop.0"
        );
    }

    #[test]
    fn unresolved_frames_are_named_by_their_module() {
        assert_eq!(unresolved(Some("libc.so.6")), "[libc.so.6]");
        assert_eq!(unresolved(Some("[kernel.kallsyms]")), "[[kernel.kallsyms]]");
        assert_eq!(unresolved(Some("[unknown]")), "[unknown]");
        assert_eq!(unresolved(None), "[unknown]");
    }

    #[test]
    fn dominant_is_the_largest_known_share() {
        assert_eq!(dominant(&[Some(0.1), None, Some(0.5), Some(0.4)]), Some(2));
        assert_eq!(dominant(&[None, None]), None);
        assert_eq!(dominant(&[Some(0.5), Some(0.5)]), Some(0));
    }
}
