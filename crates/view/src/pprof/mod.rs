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
use perfq_ids::TextIds;
use perfq_query::profile::Profile;
use prost::Message;

pub mod proto;

use proto::{Function, Label, Line, Location, Mapping, Sample, ValueType};

use crate::Error;

/// The string table: index 0 is the empty string, as the format requires.
struct Strings(TextIds);

impl Strings {
    fn new() -> Result<Self, Error> {
        let mut s = Strings(TextIds::new());
        s.id("")?;
        Ok(s)
    }

    fn id(&mut self, s: &str) -> Result<i64, Error> {
        match self.0.id(s) {
            Some(i) => Ok(i64::from(i)),
            None => Err(Error::TooLarge("the profile's strings".into())),
        }
    }

    fn into_table(self) -> Vec<String> {
        self.0.iter().map(str::to_string).collect()
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
pub fn message(p: &Profile) -> Result<proto::Profile, Error> {
    let mut s = Strings::new()?;
    let sample_type = sample_types(p, &mut s)?;
    let default_sample_type = match p.events.is_empty() {
        true => 0,
        false => sample_type[1].r#type,
    };
    let mapping = mappings(p, &mut s)?;
    let function = p
        .functions
        .iter()
        .zip(1..)
        .map(|(f, id)| {
            Ok(Function {
                id,
                name: s.id(&f.name)?,
                system_name: s.id(&f.system_name)?,
                filename: f.file.as_deref().map_or(Ok(0), |n| s.id(n))?,
                start_line: 0,
            })
        })
        .collect::<Result<_, Error>>()?;
    let sample = samples(p, &mut s, sample_type.len())?;
    Ok(proto::Profile {
        sample_type,
        sample,
        mapping,
        location: locations(p),
        function,
        string_table: s.into_table(),
        drop_frames: 0,
        keep_frames: 0,
        time_nanos: 0,
        duration_nanos: p.time_range.map_or(0, |(a, z)| value(z.saturating_sub(a))),
        period_type: None,
        period: 0,
        comment: Vec::new(),
        default_sample_type,
    })
}

/// Per event its samples and periods, then the top-down nodes in slots
/// (`-sample_index=backend_bound`).
fn sample_types(p: &Profile, s: &mut Strings) -> Result<Vec<ValueType>, Error> {
    let mut types = Vec::new();
    for e in &p.events {
        types.push(ValueType {
            r#type: s.id(&samples_type(&e.name))?,
            unit: s.id("count")?,
        });
        types.push(ValueType {
            r#type: s.id(&e.name)?,
            unit: s.id(e.unit.name())?,
        });
    }
    for n in &p.topdown {
        types.push(ValueType {
            r#type: s.id(&n.name)?,
            unit: s.id("slots")?,
        });
    }
    Ok(types)
}

/// The mappings, each starting at 0: a location's address is its offset
/// in the file.
fn mappings(p: &Profile, s: &mut Strings) -> Result<Vec<Mapping>, Error> {
    let mut limits = vec![0u64; p.mappings.len()];
    for l in &p.locations {
        if let Some(m) = l.mapping {
            limits[m] = limits[m].max(l.address.saturating_add(1));
        }
    }
    let mapping = |(m, (id, limit)): (&perfq_query::profile::Mapping, (u64, u64))| {
        Ok(Mapping {
            id,
            memory_start: 0,
            memory_limit: limit,
            file_offset: 0,
            filename: s.id(m.path.as_deref().unwrap_or(&m.name))?,
            build_id: m.build_id.as_deref().map_or(Ok(0), |b| s.id(b))?,
            has_functions: true,
            has_filenames: true,
            has_line_numbers: true,
            has_inline_frames: true,
        })
    };
    p.mappings
        .iter()
        .zip((1..).zip(limits))
        .map(mapping)
        .collect()
}

/// The locations: innermost line first, the outermost named as perf
/// report names the function.
fn locations(p: &Profile) -> Vec<Location> {
    let line = |level: &perfq_query::profile::Level| Line {
        function_id: level.function as u64 + 1,
        line: i64::from(level.line.unwrap_or(0)),
        column: 0,
    };
    p.locations
        .iter()
        .zip(1..)
        .map(|(l, id)| Location {
            id,
            mapping_id: l.mapping.map_or(0, |m| m as u64 + 1),
            address: l.address,
            line: l
                .levels
                .iter()
                .skip(1)
                .rev()
                .chain(std::iter::once(&l.symbol))
                .map(line)
                .collect(),
            is_folded: false,
        })
        .collect()
}

/// One sample per thread and stack, every event's values in it (`width`
/// of them: each event's samples and periods, then the top-down nodes').
fn samples(p: &Profile, s: &mut Strings, width: usize) -> Result<Vec<Sample>, Error> {
    let first_node = 2 * p.events.len();
    let mut out: Vec<Sample> = Vec::new();
    let mut at: HashMap<(usize, Option<usize>), usize> = HashMap::new();
    let keys = ThreadKeys::new(p, s)?;
    for (i, r) in p.runs.iter().enumerate() {
        let n = match at.get(&(r.thread, r.stack)) {
            Some(&n) => n,
            None => {
                out.push(Sample {
                    location_id: r
                        .stack
                        .map(|st| p.stacks[st].iter().map(|&l| l as u64 + 1).collect())
                        .unwrap_or_default(),
                    value: vec![0; width],
                    label: keys.labels(p, r.thread, s)?,
                });
                at.insert((r.thread, r.stack), out.len() - 1);
                out.len() - 1
            }
        };
        let v = &mut out[n].value;
        v[2 * r.event] = v[2 * r.event].saturating_add(value(r.samples));
        v[2 * r.event + 1] = v[2 * r.event + 1].saturating_add(value(r.period));
        if let Some(slots) = p.run_slots.get(i) {
            for (k, s) in slots.iter().enumerate() {
                v[first_node + k] = v[first_node + k].saturating_add(value(*s));
            }
        }
    }
    Ok(out)
}

/// The label keys of a sample's thread: pid, tid, comm, and the capture
/// when there are several.
struct ThreadKeys {
    pid: i64,
    tid: i64,
    comm: i64,
    capture: Option<i64>,
}

impl ThreadKeys {
    fn new(p: &Profile, s: &mut Strings) -> Result<Self, Error> {
        Ok(ThreadKeys {
            pid: s.id("pid")?,
            tid: s.id("tid")?,
            comm: s.id("comm")?,
            capture: match p.captures.len() > 1 {
                true => Some(s.id("capture")?),
                false => None,
            },
        })
    }

    /// Thread `thread`'s labels.
    fn labels(&self, p: &Profile, thread: usize, s: &mut Strings) -> Result<Vec<Label>, Error> {
        let t = &p.threads[thread];
        let label = |key, str, num| Label {
            key,
            str,
            num,
            num_unit: 0,
        };
        let mut labels = vec![
            label(self.pid, 0, i64::from(t.pid)),
            label(self.tid, 0, i64::from(t.tid)),
            label(self.comm, s.id(&t.comm)?, 0),
        ];
        if let Some(k) = self.capture {
            labels.push(label(k, s.id(&p.captures[t.capture])?, 0));
        }
        Ok(labels)
    }
}

/// Writes the profile gzipped, as pprof files are.
pub fn write(p: &Profile, out: &mut dyn Write) -> Result<(), Error> {
    let bytes = message(p)?.encode_to_vec();
    let mut gz = GzEncoder::new(out, flate2::Compression::default());
    gz.write_all(&bytes)?;
    gz.finish()?;
    Ok(())
}
