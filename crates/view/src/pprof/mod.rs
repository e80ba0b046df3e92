//! pprof's `profile.proto` (github.com/google/pprof, `proto/profile.proto`),
//! gzipped, as `go tool pprof`, Pyroscope and Parca read it.
//!
//! - **Sample types**: per event, its samples (`<event>_samples`, count)
//!   and its periods (`<event>`, nanoseconds for clock events, else
//!   count). The first event's periods are the default.
//! - **Top-down nodes**: on captures with top-down events, one sample type
//!   per node (levels 1 and 2 where the capture has them) in slots: each
//!   function's own slots of the node (`perfq topdown --format json`'s
//!   `node_slots`) spread over its samples (`perfq_query::profile::topdown_slots`),
//!   so `-sample_index=backend_bound` shows what is backend bound.
//! - **Samples**: one per thread (pid, tid and comm as labels; the
//!   capture too when there are several) and stack, every event's values
//!   in it.
//! - **Locations**: one per distinct address; its address is the offset in
//!   its mapped file (the mapping starts at 0), or the kernel address.
//!   Inlined functions are lines of the location, innermost first, as the
//!   format has them.
//! - **Functions**: the outermost line's is named as `perf report` names
//!   the function (an unresolved address by its hex), so that pprof's flat
//!   and, with `-noinlines`, cumulative sums per function are the dataset's
//!   `function_self` and `function_total`: `perf report`'s, except that
//!   for `--call-graph dwarf` captures perf names unwound frames by their
//!   DWARF functions.
//! - **Mappings**: one per DSO with its path and build id, marked as
//!   symbolized (the names are in the file: pprof looks nothing up).

use std::collections::HashMap;
use std::io::Write;

use flate2::write::GzEncoder;
use perfq_query::profile::Profile;
use prost::Message;

pub mod proto;

use proto::{Function, Label, Line, Location, Mapping, Sample, ValueType};

use crate::Error;

/// The string table: index 0 is the empty string, as the format requires.
#[derive(Default)]
struct Strings {
    table: Vec<String>,
    ids: HashMap<String, i64>,
}

impl Strings {
    fn new() -> Self {
        let mut s = Strings::default();
        s.id("");
        s
    }

    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.table.len() as i64;
        self.table.push(s.to_string());
        self.ids.insert(s.to_string(), i);
        i
    }
}

/// The name of an event's samples type.
pub fn samples_type(event: &str) -> String {
    format!("{event}_samples")
}

/// Values are int64: a period sum past it (a wrapped delta of a damaged
/// counter) is clamped rather than shown negative.
fn value(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// The profile as pprof's message.
pub fn message(p: &Profile) -> proto::Profile {
    let mut s = Strings::new();
    let mut out = proto::Profile {
        sample_type: Vec::new(),
        sample: Vec::new(),
        mapping: Vec::new(),
        location: Vec::new(),
        function: Vec::new(),
        string_table: Vec::new(),
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: 0,
        duration_nanos: p.time_range.map_or(0, |(a, z)| value(z.saturating_sub(a))),
        period_type: None,
        period: 0,
        comment: Vec::new(),
        default_sample_type: 0,
    };
    for e in &p.events {
        out.sample_type.push(ValueType {
            r#type: s.id(&samples_type(&e.name)),
            unit: s.id("count"),
        });
        out.sample_type.push(ValueType {
            r#type: s.id(&e.name),
            unit: s.id(e.unit.name()),
        });
    }
    if !p.events.is_empty() {
        out.default_sample_type = out.sample_type[1].r#type;
    }
    // Top-down nodes in slots: `-sample_index=backend_bound`.
    let first_node = out.sample_type.len();
    for n in &p.topdown {
        out.sample_type.push(ValueType {
            r#type: s.id(&n.name),
            unit: s.id("slots"),
        });
    }
    // Mappings start at 0: a location's address is its offset in the file.
    let mut limits = vec![0u64; p.mappings.len()];
    for l in &p.locations {
        if let Some(m) = l.mapping {
            limits[m] = limits[m].max(l.address.saturating_add(1));
        }
    }
    for (i, m) in p.mappings.iter().enumerate() {
        out.mapping.push(Mapping {
            id: i as u64 + 1,
            memory_start: 0,
            memory_limit: limits[i],
            file_offset: 0,
            filename: s.id(m.path.as_deref().unwrap_or(&m.name)),
            build_id: m.build_id.as_deref().map_or(0, |b| s.id(b)),
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            has_inline_frames: true,
        });
    }
    for (i, f) in p.functions.iter().enumerate() {
        out.function.push(Function {
            id: i as u64 + 1,
            name: s.id(&f.name),
            system_name: s.id(&f.system_name),
            filename: f.file.as_deref().map_or(0, |n| s.id(n)),
            start_line: 0,
        });
    }
    for (i, l) in p.locations.iter().enumerate() {
        out.location.push(Location {
            id: i as u64 + 1,
            mapping_id: l.mapping.map_or(0, |m| m as u64 + 1),
            address: l.address,
            // Innermost first; the outermost named as perf report names
            // the function.
            line: l
                .levels
                .iter()
                .skip(1)
                .rev()
                .chain(std::iter::once(&l.symbol))
                .map(|level| Line {
                    function_id: level.function as u64 + 1,
                    line: i64::from(level.line.unwrap_or(0)),
                    column: 0,
                })
                .collect(),
            is_folded: false,
        });
    }
    // One sample per thread and stack, every event's values in it.
    let width = out.sample_type.len();
    let mut samples: HashMap<(usize, Option<usize>), usize> = HashMap::new();
    let keys = (
        s.id("pid"),
        s.id("tid"),
        s.id("comm"),
        (p.captures.len() > 1).then(|| s.id("capture")),
    );
    for (i, r) in p.runs.iter().enumerate() {
        let n = *samples.entry((r.thread, r.stack)).or_insert_with(|| {
            let t = &p.threads[r.thread];
            let mut label = vec![
                Label {
                    key: keys.0,
                    str: 0,
                    num: i64::from(t.pid),
                    num_unit: 0,
                },
                Label {
                    key: keys.1,
                    str: 0,
                    num: i64::from(t.tid),
                    num_unit: 0,
                },
                Label {
                    key: keys.2,
                    str: s.id(&t.comm),
                    num: 0,
                    num_unit: 0,
                },
            ];
            if let Some(k) = keys.3 {
                label.push(Label {
                    key: k,
                    str: s.id(&p.captures[t.capture]),
                    num: 0,
                    num_unit: 0,
                });
            }
            out.sample.push(Sample {
                location_id: r
                    .stack
                    .map(|st| p.stacks[st].iter().map(|&l| l as u64 + 1).collect())
                    .unwrap_or_default(),
                value: vec![0; width],
                label,
            });
            out.sample.len() - 1
        });
        let v = &mut out.sample[n].value;
        v[2 * r.event] = v[2 * r.event].saturating_add(value(r.samples));
        v[2 * r.event + 1] = v[2 * r.event + 1].saturating_add(value(r.period));
        if let Some(slots) = p.run_slots.get(i) {
            for (k, s) in slots.iter().enumerate() {
                v[first_node + k] = v[first_node + k].saturating_add(value(*s));
            }
        }
    }
    out.string_table = s.table;
    out
}

/// Writes the profile gzipped, as pprof files are.
pub fn write(p: &Profile, out: &mut dyn Write) -> Result<(), Error> {
    let bytes = message(p).encode_to_vec();
    let mut gz = GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&bytes)?;
    gz.finish()?;
    Ok(())
}
