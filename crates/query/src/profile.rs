//! A dataset's samples as profile viewers take them (pprof, speedscope:
//! the `perfq-view` crate writes them): locations with their inlining
//! levels, functions, mappings with build ids, stacks, threads, and the
//! samples as runs — consecutive samples of one thread on one stack, in
//! time order.
//!
//! The samples are the ones every other count is made of
//! (`delivered_samples`: a group read once per member whose counter
//! moved, its delta as period), named by their thread's comm when they
//! were delivered, as the flame graph names them (`named_samples`).
//! A location is named as `perf report` names the function
//! (`frame_functions`: the ELF or kallsyms symbol, an unresolved address
//! by its hex), so that a viewer's per-function sums are `perf report`'s,
//! and carries its DWARF levels (the functions inlined there), which perf
//! shows as frames of their own for unwound user stacks.

use std::collections::HashMap;

use datafusion::arrow::array::RecordBatch;
use perfq_ids::{IdTable, Interner};
use rustc_hash::FxHashMap;

use crate::helpers::{self, Param};
use crate::named_samples;
use crate::{columns, events, topdown, Error, Session};

/// What to take.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Only this event (`events.name`); by default every event sampled.
    pub event: Option<String>,
    /// On captures with top-down events, each node's slots per run
    /// ([`Profile::topdown`]).
    pub topdown: bool,
    /// Runs do not cross intervals of this length (ns) from their
    /// capture's first sample ([`Profile::interval`]); 0: no intervals.
    pub interval_ns: u64,
}

/// The unit of an event's period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// A clock event (`cpu-clock`, `task-clock`): nanoseconds.
    Nanoseconds,
    /// Anything else: events counted.
    Count,
}

impl Unit {
    /// The unit as pprof and speedscope spell it.
    pub fn name(self) -> &'static str {
        match self {
            Unit::Nanoseconds => "nanoseconds",
            Unit::Count => "count",
        }
    }
}

/// An event the samples are of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// `events.name`.
    pub name: String,
    /// The unit of its periods.
    pub unit: Unit,
}

/// A file code was mapped from (a DSO), or the kernel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Mapping {
    /// The short name `perf report` shows (`libc.so.6`, `[kernel.kallsyms]`).
    pub name: String,
    /// The path recorded, when there is one.
    pub path: Option<String>,
    /// Its build id (hex), when recorded.
    pub build_id: Option<String>,
}

/// A function of some inlining level.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Function {
    /// Its name: at the outermost level as `perf report` names it, inlined
    /// ones by DWARF, demangled.
    pub name: String,
    /// The name as stored (mangled).
    pub system_name: String,
    /// The source file, when DWARF gives it.
    pub file: Option<String>,
    /// The mapping it belongs to (index into [`Profile::mappings`]).
    pub mapping: Option<usize>,
}

/// One inlining level of a location.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Index into [`Profile::functions`].
    pub function: usize,
    /// The source line at this level, when known.
    pub line: Option<u32>,
}

/// One distinct address of a capture.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    /// Index into [`Profile::mappings`]; `None` outside every mapping.
    pub mapping: Option<usize>,
    /// The offset in the mapped file, or the address itself outside files
    /// (kernel, unmapped).
    pub address: u64,
    /// The function as `perf report` names it (`frame_functions`: the ELF
    /// or kallsyms symbol, an unresolved address by its hex), with the
    /// outermost level's line: what a viewer counts the address for.
    pub symbol: Level,
    /// Its functions by DWARF, outermost first (the symbol's name where
    /// DWARF has none): the levels perf shows for an unwound user frame.
    pub levels: Vec<Level>,
    /// Whether its symbol resolved (an ELF or kallsyms symbol, not an
    /// address).
    pub resolved: bool,
    /// perf shows its inlined levels as frames of their own when the user
    /// stack was unwound (a resolved user frame); otherwise only the
    /// outermost.
    pub expands: bool,
}

/// A thread under one name.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Thread {
    /// Index into [`Profile::captures`].
    pub capture: usize,
    /// Process and thread id.
    pub pid: i32,
    /// The thread id.
    pub tid: i32,
    /// Its name when the samples were delivered.
    pub comm: String,
}

/// Consecutive samples of one thread, event and stack.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// Index into [`Profile::threads`].
    pub thread: usize,
    /// Index into [`Profile::stacks`]; `None` for samples without one.
    pub stack: Option<usize>,
    /// Index into [`Profile::events`].
    pub event: usize,
    /// The event samples the user stack (`--call-graph dwarf`): its
    /// resolved user frames are shown with their inlined levels.
    pub unwound: bool,
    /// Samples in the run.
    pub samples: u64,
    /// The sum of their periods (wrapping, as perf's sums do).
    pub period: u64,
    /// The time of the first (ns, perf clock).
    pub time: u64,
}

/// The samples of a dataset, or of one of its captures, as a profile.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    /// The events, the first sampled first.
    pub events: Vec<Event>,
    /// The capture ids.
    pub captures: Vec<String>,
    /// Every mapping a location is in.
    pub mappings: Vec<Mapping>,
    /// Every function of a location's levels.
    pub functions: Vec<Function>,
    /// Every location of a stack.
    pub locations: Vec<Location>,
    /// Every sampled stack: indices into `locations`, leaf first.
    pub stacks: Vec<Vec<usize>>,
    /// Every thread (under each of its names).
    pub threads: Vec<Thread>,
    /// The samples: per thread, in time order.
    pub runs: Vec<Run>,
    /// The first and last sample time.
    pub time_range: Option<(u64, u64)>,
    /// The top-down nodes (levels 1 and 2 where the capture has them),
    /// when asked for and the captures have top-down events.
    pub topdown: Vec<TopdownNode>,
    /// Per run, each node's pipeline slots (`topdown`'s order); empty
    /// without top-down nodes. See [`topdown_slots`].
    pub run_slots: Vec<Vec<u64>>,
    /// What could not be done, for the user.
    pub notes: Vec<String>,
    /// Each capture's first sample time (`capture.time_first`), in
    /// `captures`' order.
    pub capture_starts: Vec<Option<u64>>,
}

impl Profile {
    /// The interval (of `interval_ns`) a run falls in, counted from its
    /// capture's first sample, as `perfq topdown --by interval` counts.
    pub fn interval(&self, run: &Run, interval_ns: u64) -> u64 {
        let capture = self.threads[run.thread].capture;
        let start = self
            .capture_starts
            .get(capture)
            .copied()
            .flatten()
            .unwrap_or(0);
        run.time.saturating_sub(start) / interval_ns.max(1)
    }
}

/// Events `names`, with the unit of their periods.
pub fn events_of(session: &Session, names: &[String]) -> Result<Vec<Event>, Error> {
    let mut units: HashMap<String, Unit> = HashMap::new();
    for b in &session.sql("SELECT DISTINCT name, type, config FROM events")? {
        let name = columns::strings(b, "name")?;
        let ty = columns::u64s(b, "type")?;
        let config = columns::u64s(b, "config")?;
        for i in 0..b.num_rows() {
            let Some(n) = &name[i] else { continue };
            // PERF_TYPE_SOFTWARE's cpu-clock (0) and task-clock (1)
            // count nanoseconds.
            let clock = ty[i] == Some(1) && matches!(config[i], Some(0 | 1));
            let unit = if clock {
                Unit::Nanoseconds
            } else {
                Unit::Count
            };
            units.insert(n.clone(), unit);
        }
    }
    Ok(names
        .iter()
        .map(|n| Event {
            name: n.clone(),
            unit: units.get(n).copied().unwrap_or(Unit::Count),
        })
        .collect())
}

/// A top-down node, as the values of a profile's runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopdownNode {
    /// Its name (`backend_bound`).
    pub name: String,
    /// The vendor's name (`Backend_Bound`).
    pub label: String,
    /// 1 or 2.
    pub level: u8,
}

/// The name of a location outside the frames table.
const UNKNOWN: &str = "[unknown]";

/// The session's samples (of one event, or all) as a profile.
pub fn profile(session: &Session, opt: &Options) -> Result<Profile, Error> {
    named_samples::require_tables(session)?;
    crate::views::ensure(session, "frame_functions")?;
    named_samples::register_comms(session)?;
    let sampled = events::sampled_events(session)?;
    let chosen: Vec<String> = match &opt.event {
        Some(e) => events::chosen(Some(e), &sampled)?.into_iter().collect(),
        None => sampled,
    };
    let mut b = Builder {
        interval_ns: opt.interval_ns,
        ..Builder::default()
    };
    b.starts(session)?;
    b.events(session, &chosen)?;
    b.frames(session)?;
    b.stacks(session)?;
    let only = match &opt.event {
        Some(e) => format!("name = {}", columns::quote(e)),
        None => "TRUE".to_string(),
    };
    let named = named_samples::named_delivered();
    let rows = session.sql(&helpers::fill(
        helpers::PROFILE_SAMPLES,
        &[("named", Param::Sql(&named)), ("only", Param::Sql(&only))],
    ))?;
    for batch in &rows {
        b.samples(batch)?;
    }
    let mut profile = b.finish();
    if opt.topdown {
        topdown_slots(session, &mut profile)?;
    }
    Ok(profile)
}

/// Each top-down node's slots per run: a function's own (self) slots of
/// the node, as `perfq topdown --format json` gives them (`node_slots`:
/// its share times its slots), shared among the runs of the first event
/// whose leaf is in the function, in proportion to their samples, as
/// whole slots that add up to the function's rounded value. A function's
/// shares hold for each of its samples: the share of one sample is not
/// measured (its counter deltas are noise), so every sample carries its
/// function's. Summed per function the runs give the topdown answer;
/// summed per caller, the slots of each node spent below it.
pub fn topdown_slots(session: &Session, p: &mut Profile) -> Result<(), Error> {
    let report = match topdown::run(
        session,
        &topdown::Options {
            by: topdown::By::Function,
            mode: topdown::Mode::SelfTime,
            level: 2,
            min_samples: 0,
            ..topdown::Options::default()
        },
    ) {
        Ok(r) => r,
        // No top-down events: a profile without the nodes.
        Err(Error::NoTopdown(_)) => return Ok(()),
        Err(e) => return Err(e),
    };
    p.notes.extend(report.warnings.iter().cloned());
    p.topdown = report
        .nodes
        .iter()
        .map(|n| TopdownNode {
            name: n.name.clone(),
            label: n.label.clone(),
            level: n.level,
        })
        .collect();
    let by_function = slots_by_function(&report, p);
    let runs_of = runs_by_function(p);
    p.run_slots = vec![Vec::new(); p.runs.len()];
    for (key, values) in &by_function {
        let Some(runs) = runs_of.get(key) else {
            continue;
        };
        let weights: Vec<u64> = runs.iter().map(|&i| p.runs[i].samples).collect();
        for (node, value) in values.iter().enumerate() {
            let parts = apportion(value.max(0.0).round() as u64, &weights);
            for (&i, part) in runs.iter().zip(parts) {
                let slots = &mut p.run_slots[i];
                if slots.is_empty() {
                    slots.resize(p.topdown.len(), 0);
                }
                slots[node] = part;
            }
        }
    }
    Ok(())
}

/// A function of a capture: (capture, symbol, DSO).
type FunctionKey = (String, String, String);

/// Per function of a capture: each top-down node's self slots, the rows
/// of a hybrid part's core types added up.
fn slots_by_function(report: &topdown::Report, p: &Profile) -> HashMap<FunctionKey, Vec<f64>> {
    let several = p.captures.len() > 1;
    let mut by_function: HashMap<FunctionKey, Vec<f64>> = HashMap::new();
    for r in &report.rows {
        let key = |k: &str| r.key(k).to_string();
        let capture = if several {
            key("capture")
        } else {
            p.captures.first().cloned().unwrap_or_default()
        };
        let e = by_function
            .entry((capture, key("symbol"), key("dso")))
            .or_insert_with(|| vec![0.0; p.topdown.len()]);
        for (i, n) in p.topdown.iter().enumerate() {
            e[i] += r.slots_of(&n.name).unwrap_or(0.0);
        }
    }
    by_function
}

/// The runs of the first event per function of their leaf.
fn runs_by_function(p: &Profile) -> HashMap<FunctionKey, Vec<usize>> {
    let mut runs_of: HashMap<FunctionKey, Vec<usize>> = HashMap::new();
    for (i, r) in p.runs.iter().enumerate() {
        let Some(leaf) = r.stack.and_then(|s| p.stacks[s].first()) else {
            continue;
        };
        if r.event != 0 {
            continue;
        }
        let loc = &p.locations[*leaf];
        let f = &p.functions[loc.symbol.function];
        let dso = f
            .mapping
            .map_or_else(|| UNKNOWN.to_string(), |m| p.mappings[m].name.clone());
        let capture = p.captures[p.threads[r.thread].capture].clone();
        runs_of
            .entry((capture, f.name.clone(), dso))
            .or_default()
            .push(i);
    }
    runs_of
}

/// `total` cut into whole parts in proportion to `weights`, the
/// remainders going to the largest fractions first (Hamilton's method):
/// the parts add up to `total` exactly.
fn apportion(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u128 = weights.iter().map(|&w| u128::from(w)).sum();
    if sum == 0 {
        return vec![0; weights.len()];
    }
    let mut parts: Vec<u64> = Vec::with_capacity(weights.len());
    let mut rest: Vec<(u128, usize)> = Vec::with_capacity(weights.len());
    for (i, &w) in weights.iter().enumerate() {
        let exact = u128::from(total) * u128::from(w);
        parts.push((exact / sum) as u64);
        rest.push((exact % sum, i));
    }
    let given: u64 = parts.iter().sum();
    rest.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in rest.iter().take((total - given) as usize) {
        parts[i] += 1;
    }
    parts
}

/// The number of thread (`capture`, `pid`, `tid`, `comm`) among
/// `threads`, the next one if it is new (looked up by its parts: the comm
/// is copied only for a new thread).
pub(crate) fn number_thread(
    threads: &mut Interner<Thread>,
    capture: usize,
    pid: i32,
    tid: i32,
    comm: &str,
) -> usize {
    let hash = IdTable::hash((capture, pid, tid, comm));
    let same = |t: &Thread| t.capture == capture && t.pid == pid && t.tid == tid && t.comm == comm;
    let make = || Thread {
        capture,
        pid,
        tid,
        comm: comm.to_string(),
    };
    threads.id_by(hash, same, make) as usize
}

/// A profile as it is put together: the captures, mappings, functions
/// and threads interned (looked up by borrowed text, each made once),
/// moved into the profile at the end.
#[derive(Default)]
struct Builder {
    profile: Profile,
    captures: Interner<String>,
    mappings: Interner<Mapping>,
    functions: Interner<Function>,
    threads: Interner<Thread>,
    /// (capture, frame_id) → location.
    location_ids: FxHashMap<(usize, u32), usize>,
    /// (capture, stack_id) → stack.
    stack_ids: FxHashMap<(usize, u32), usize>,
    /// Runs do not cross intervals of this length (0: none).
    interval_ns: u64,
}

/// A frame row's texts, borrowed from its batch.
struct FrameRow<'a> {
    /// Its function as perf report names it (`frame_functions`).
    key: &'a str,
    /// The DWARF function of its level, and both as stored.
    dwarf: &'a str,
    raw_function: Option<&'a str>,
    raw_symbol: Option<&'a str>,
    file: Option<&'a str>,
    line: Option<u32>,
}

impl Builder {
    /// The profile, its interned parts in place.
    fn finish(self) -> Profile {
        Profile {
            captures: self.captures.into_keys(),
            mappings: self.mappings.into_keys(),
            functions: self.functions.into_keys(),
            threads: self.threads.into_keys(),
            ..self.profile
        }
    }

    fn capture(&mut self, id: &str) -> usize {
        let c = self
            .captures
            .id_by(IdTable::hash(id), |k| k == id, || id.to_string());
        if c as usize == self.profile.capture_starts.len() {
            self.profile.capture_starts.push(None);
        }
        c as usize
    }

    fn mapping(&mut self, name: &str, path: Option<&str>, build_id: Option<&str>) -> usize {
        let hash = IdTable::hash((name, path, build_id));
        let same = |m: &Mapping| {
            m.name == name && m.path.as_deref() == path && m.build_id.as_deref() == build_id
        };
        let make = || Mapping {
            name: name.to_string(),
            path: path.map(str::to_string),
            build_id: build_id.map(str::to_string),
        };
        self.mappings.id_by(hash, same, make) as usize
    }

    fn function(
        &mut self,
        name: &str,
        system_name: &str,
        file: Option<&str>,
        mapping: Option<usize>,
    ) -> usize {
        let hash = IdTable::hash((name, system_name, file, mapping));
        let same = |f: &Function| {
            f.name == name
                && f.system_name == system_name
                && f.file.as_deref() == file
                && f.mapping == mapping
        };
        let make = || Function {
            name: name.to_string(),
            system_name: system_name.to_string(),
            file: file.map(str::to_string),
            mapping,
        };
        self.functions.id_by(hash, same, make) as usize
    }

    fn thread(&mut self, capture: usize, pid: i32, tid: i32, comm: &str) -> usize {
        number_thread(&mut self.threads, capture, pid, tid, comm)
    }

    /// Each capture's first sample time.
    fn starts(&mut self, session: &Session) -> Result<(), Error> {
        for b in &session.sql("SELECT capture, time_first FROM capture")? {
            let capture = columns::strings(b, "capture")?;
            let first = columns::u64s(b, "time_first")?;
            for i in 0..b.num_rows() {
                let Some(c) = &capture[i] else { continue };
                let c = self.capture(c);
                self.profile.capture_starts[c] = first[i];
            }
        }
        Ok(())
    }

    /// The events taken, with the unit of their periods.
    fn events(&mut self, session: &Session, names: &[String]) -> Result<(), Error> {
        self.profile.events = events_of(session, names)?;
        Ok(())
    }

    /// Every frame's location, its levels and their functions.
    fn frames(&mut self, session: &Session) -> Result<(), Error> {
        for b in &session.sql(helpers::FLAMEGRAPH_FRAMES)? {
            let text = |c: &str| columns::strings(b, c);
            let (capture, frame_id) = (text("capture")?, columns::u32s(b, "frame_id")?);
            let (function, raw_function) = (text("function")?, text("raw_function")?);
            let (symbol, raw_symbol) = (text("symbol")?, text("raw_symbol")?);
            let (file, line) = (text("file")?, columns::u32s(b, "line")?);
            let (dso, dso_path, build_id) = (text("dso")?, text("dso_path")?, text("build_id")?);
            let address = columns::u64s(b, "address")?;
            let dso_offset = columns::u64s(b, "dso_offset")?;
            let (kind, key_symbol) = (text("kind")?, text("key_symbol")?);
            for i in 0..b.num_rows() {
                let (Some(c), Some(id)) = (&capture[i], frame_id[i]) else {
                    continue;
                };
                let c = self.capture(c);
                let mapping = dso[i]
                    .as_deref()
                    .map(|name| self.mapping(name, dso_path[i].as_deref(), build_id[i].as_deref()));
                let key = key_symbol[i].as_deref().unwrap_or(UNKNOWN);
                let row = FrameRow {
                    key,
                    dwarf: function[i].as_deref().unwrap_or(key),
                    raw_function: raw_function[i].as_deref(),
                    raw_symbol: raw_symbol[i].as_deref(),
                    file: file[i].as_deref(),
                    line: line[i].filter(|&l| l > 0),
                };
                let level = self.level(&row, mapping);
                match self.location_ids.get(&(c, id)) {
                    Some(&l) => self.profile.locations[l].levels.push(level),
                    None => {
                        let symbol_level = Level {
                            function: self.function(
                                row.key,
                                row.raw_symbol.unwrap_or(row.key),
                                row.file,
                                mapping,
                            ),
                            line: row.line,
                        };
                        self.location_ids
                            .insert((c, id), self.profile.locations.len());
                        self.profile.locations.push(Location {
                            mapping,
                            address: dso_offset[i].or(address[i]).unwrap_or(0),
                            symbol: symbol_level,
                            levels: vec![level],
                            resolved: symbol[i].is_some(),
                            // As the flame graph: perf's append_inlines
                            // needs a symbol and leaves kernel frames as
                            // they are.
                            expands: symbol[i].is_some() && kind[i].as_deref() != Some("kernel"),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// A frame row's inlining level: its DWARF function.
    fn level(&mut self, row: &FrameRow<'_>, mapping: Option<usize>) -> Level {
        let system_name = row.raw_function.unwrap_or(row.dwarf);
        Level {
            function: self.function(row.dwarf, system_name, row.file, mapping),
            line: row.line,
        }
    }

    /// A location the frames table lacks.
    fn unknown_location(&mut self, capture: usize, frame_id: u32) -> usize {
        let f = self.function(UNKNOWN, UNKNOWN, None, None);
        let l = self.profile.locations.len();
        let level = Level {
            function: f,
            line: None,
        };
        self.profile.locations.push(Location {
            mapping: None,
            address: 0,
            symbol: level,
            levels: vec![level],
            resolved: false,
            expands: false,
        });
        self.location_ids.insert((capture, frame_id), l);
        l
    }

    /// Every sampled stack's frames, in the order of their ids: a
    /// scan's batches come in any order, and the stacks' order is their
    /// numbering in the profile (and the page's call tree).
    fn stacks(&mut self, session: &Session) -> Result<(), Error> {
        let rows = session.sql(
            "SELECT capture, stack_id, frame_ids FROM stacks WHERE frame_ids IS NOT NULL \
                 ORDER BY capture, stack_id",
        )?;
        for b in &rows {
            let capture = columns::strings(b, "capture")?;
            let stack_id = columns::u32s(b, "stack_id")?;
            let frame_ids = columns::u32_lists(b, "frame_ids")?;
            for i in 0..b.num_rows() {
                let (Some(c), Some(id), Some(frames)) = (&capture[i], stack_id[i], &frame_ids[i])
                else {
                    continue;
                };
                let c = self.capture(c);
                let stack = frames
                    .iter()
                    .map(|f| match self.location_ids.get(&(c, *f)) {
                        Some(&l) => l,
                        None => self.unknown_location(c, *f),
                    })
                    .collect();
                self.stack_ids.insert((c, id), self.profile.stacks.len());
                self.profile.stacks.push(stack);
            }
        }
        Ok(())
    }

    /// A batch of `_profile_samples`' rows, merged into runs.
    fn samples(&mut self, b: &RecordBatch) -> Result<(), Error> {
        let capture = columns::strings(b, "capture")?;
        let pid = columns::i64s(b, "pid")?;
        let tid = columns::i64s(b, "tid")?;
        let comm = columns::strings(b, "comm")?;
        let time = columns::u64s(b, "time")?;
        let stack_id = columns::u32s(b, "stack_id")?;
        let name = columns::strings(b, "name")?;
        let unwound = columns::bools(b, "unwound")?;
        let weight = columns::u64s(b, "weight")?;
        for i in 0..b.num_rows() {
            let (Some(c), Some(n)) = (&capture[i], &name[i]) else {
                continue;
            };
            let Some(event) = self.profile.events.iter().position(|e| e.name == *n) else {
                continue;
            };
            let c = self.capture(c);
            let id = |v: Option<i64>| v.and_then(|v| i32::try_from(v).ok()).unwrap_or(-1);
            let comm = comm[i].as_deref().unwrap_or_default();
            let thread = self.thread(c, id(pid[i]), id(tid[i]), comm);
            let stack = stack_id[i].and_then(|s| self.stack_ids.get(&(c, s)).copied());
            let t = time[i].unwrap_or(0);
            let w = weight[i].unwrap_or(0);
            self.profile.time_range = Some(match self.profile.time_range {
                Some((a, z)) => (a.min(t), z.max(t)),
                None => (t, t),
            });
            let interval = |t: u64| {
                let start = self.profile.capture_starts[c].unwrap_or(0);
                t.saturating_sub(start) / self.interval_ns.max(1)
            };
            let same_interval = |r: &Run| self.interval_ns == 0 || interval(r.time) == interval(t);
            match self.profile.runs.last_mut() {
                Some(r)
                    if r.thread == thread
                        && r.stack == stack
                        && r.event == event
                        && r.unwound == unwound[i]
                        && same_interval(r) =>
                {
                    r.samples += 1;
                    r.period = r.period.wrapping_add(w);
                }
                _ => self.profile.runs.push(Run {
                    thread,
                    stack,
                    event,
                    unwound: unwound[i],
                    samples: 1,
                    period: w,
                    time: t,
                }),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::apportion;

    #[test]
    fn apportioned_parts_add_up_and_follow_the_weights() {
        assert_eq!(apportion(10, &[1, 1, 1]), [4, 3, 3]);
        assert_eq!(apportion(0, &[5, 0]), [0, 0]);
        assert_eq!(apportion(7, &[0, 0]), [0, 0]);
        assert_eq!(apportion(100, &[3, 1]), [75, 25]);
        let big = apportion(u64::MAX, &[u64::MAX, 1]);
        assert_eq!(
            big.iter().map(|&p| u128::from(p)).sum::<u128>(),
            u128::from(u64::MAX)
        );
        for total in 0..50 {
            let w = [7, 0, 3, 11, 1];
            assert_eq!(apportion(total, &w).iter().sum::<u64>(), total);
        }
    }
}
