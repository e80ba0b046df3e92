//! speedscope's file format (`https://www.speedscope.app/file-format-schema.json`):
//! one sampled profile per thread, its samples in time order (consecutive
//! samples on one stack as one, weighted by their periods), frames shared.
//!
//! Frames are named as `perf report` names functions, and a sample's
//! frames are the ones perf shows: a resolved user frame of an unwound
//! stack (`--call-graph dwarf`) once per inlining level, the inlined ones
//! marked `(inlined)`; every other frame once. So speedscope's total per
//! frame is `perf report --children`'s.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;

use perfq_ids::Interner;
use perfq_query::profile::Profile;
use serde::Serialize;

use crate::Error;

/// The schema a file names.
pub const SCHEMA: &str = "https://www.speedscope.app/file-format-schema.json";

#[derive(Serialize)]
struct File<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    shared: Shared,
    profiles: Vec<SampledProfile<'a>>,
    name: String,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: usize,
    exporter: String,
}

#[derive(Serialize)]
struct Shared {
    frames: Vec<Frame>,
}

#[derive(Serialize, Clone, Debug, PartialEq, Eq, Hash)]
struct Frame {
    name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    line: Option<u32>,
}

#[derive(Serialize)]
struct SampledProfile<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    name: String,
    unit: &'a str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    samples: Vec<Vec<usize>>,
    weights: Vec<u64>,
}

/// One thread's profile as it fills: its last name, each sample's frames
/// (root first) and weight.
type ThreadSamples = (String, Vec<Vec<usize>>, Vec<u64>);

/// What to write.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The file's name (shown in speedscope's title).
    pub name: String,
}

/// Writes the profile's first event (a profile built for one event has
/// only it) as a speedscope file.
pub fn write(p: &Profile, opt: &Options, out: &mut dyn Write) -> Result<(), Error> {
    let Some(event) = p.events.first() else {
        return Err(Error::Empty);
    };
    let mut frames = Frames::default();
    let profiles = profiles(p, event, threads(p, &mut frames));
    // speedscope opens on the thread with the most weight.
    let heaviest = profiles
        .iter()
        .enumerate()
        .max_by_key(|(i, p): &(usize, &SampledProfile)| (p.end_value, std::cmp::Reverse(*i)))
        .map_or(0, |(i, _)| i);
    let file = File {
        schema: SCHEMA,
        shared: Shared {
            frames: frames.ids.into_keys(),
        },
        profiles,
        name: format!("{} ({})", opt.name, event.name),
        active_profile_index: heaviest,
        exporter: format!("perfq {}", env!("CARGO_PKG_VERSION")),
    };
    let mut w = std::io::BufWriter::new(out);
    serde_json::to_writer(&mut w, &file)?;
    w.flush()?;
    Ok(())
}

/// The frames, shared by every profile, numbered as met.
#[derive(Default)]
struct Frames {
    ids: Interner<Frame>,
    /// (location, expanded) → its frames, outermost first.
    of_location: HashMap<(usize, bool), Vec<usize>>,
}

impl Frames {
    /// Location `l`'s frames, outermost first: perf's names, the symbol,
    /// or for an unwound user frame (`expanded`) one frame per DWARF
    /// level, each not the symbol marked `(inlined)`.
    fn of(&mut self, p: &Profile, l: usize, expanded: bool) -> &[usize] {
        let ids = &mut self.ids;
        self.of_location.entry((l, expanded)).or_insert_with(|| {
            let loc = &p.locations[l];
            let symbol = &p.functions[loc.symbol.function].name;
            let levels = match expanded {
                true => &loc.levels[..],
                false => std::slice::from_ref(&loc.symbol),
            };
            let frame = |level: &perfq_query::profile::Level| {
                let f = &p.functions[level.function];
                let mapping = f.mapping.map(|m| &p.mappings[m]);
                Frame {
                    name: if expanded && f.name != *symbol {
                        format!("{} (inlined)", f.name)
                    } else {
                        f.name.clone()
                    },
                    file: f
                        .file
                        .clone()
                        .or_else(|| mapping.map(|m| m.path.clone().unwrap_or(m.name.clone()))),
                    line: level.line.filter(|_| f.file.is_some()),
                }
            };
            levels
                .iter()
                .map(|level| ids.id_owned(frame(level)) as usize)
                .collect()
        })
    }
}

/// The first event's samples per thread: threads by (capture, pid, tid),
/// a thread renamed by exec one profile, named by its last name.
fn threads(p: &Profile, frames: &mut Frames) -> BTreeMap<(usize, i32, i32), ThreadSamples> {
    let mut threads: BTreeMap<(usize, i32, i32), ThreadSamples> = BTreeMap::new();
    for r in p.runs.iter().filter(|r| r.event == 0) {
        let t = &p.threads[r.thread];
        let mut stack = Vec::new();
        if let Some(s) = r.stack {
            for &l in p.stacks[s].iter().rev() {
                let expanded = r.unwound && p.locations[l].expands;
                stack.extend_from_slice(frames.of(p, l, expanded));
            }
        }
        let entry = threads
            .entry((t.capture, t.pid, t.tid))
            .or_insert_with(|| (String::new(), Vec::new(), Vec::new()));
        entry.0 = t.comm.clone();
        entry.1.push(stack);
        entry.2.push(r.period);
    }
    threads
}

/// Each thread's profile.
fn profiles<'a>(
    p: &Profile,
    event: &'a perfq_query::profile::Event,
    threads: BTreeMap<(usize, i32, i32), ThreadSamples>,
) -> Vec<SampledProfile<'a>> {
    let several = p.captures.len() > 1;
    let unit = match event.unit {
        perfq_query::profile::Unit::Nanoseconds => "nanoseconds",
        perfq_query::profile::Unit::Count => "none",
    };
    threads
        .into_iter()
        .map(|((capture, pid, tid), (comm, samples, weights))| {
            let total = weights.iter().fold(0u64, |a, w| a.wrapping_add(*w));
            SampledProfile {
                kind: "sampled",
                name: if several {
                    format!("{comm} {pid}/{tid} ({})", p.captures[capture])
                } else {
                    format!("{comm} {pid}/{tid}")
                },
                unit,
                start_value: 0,
                end_value: total,
                samples,
                weights,
            }
        })
        .collect()
}
