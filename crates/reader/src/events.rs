//! The capture's events: each attr with its name, ids and group, and the
//! map from an event instance id back to its event.

use rustc_hash::FxHashMap;

use crate::attr::{event_type, Attr};
use crate::endian::Endian;
use crate::record_type::RecordType;
use crate::records::{trailer_id_from_end, trailer_time_from_end};
use crate::sample::{sample_id_offset, sample_time_offset};

/// Index of an event in [`Events::list`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventIndex(pub usize);

/// One event (`perf_evsel`).
#[derive(Clone, Debug)]
pub struct Event {
    /// The event's name: from `EVENT_DESC`, `EVENT_UPDATE` or simpleperf's
    /// meta info, else made from type and config as perf does.
    pub name: String,
    /// The attr.
    pub attr: Attr,
    /// Its instance ids (one per cpu or thread it was opened on).
    pub ids: Vec<u64>,
    /// The group leader, if it is in a group of more than one event.
    pub group_leader: Option<EventIndex>,
    /// The group's name, from `GROUP_DESC`.
    pub group_name: Option<String>,
}

/// Which event a record belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventRef {
    /// A known event.
    Known(EventIndex),
    /// The record carries an id that no event has.
    UnknownId(u64),
    /// The record's event cannot be told: perf's own records, kernel
    /// records without a `sample_id` trailer in a multi-event capture, or
    /// events whose layouts put the id in different places.
    None,
}

impl EventRef {
    /// The event index, if known.
    pub fn index(self) -> Option<EventIndex> {
        match self {
            EventRef::Known(i) => Some(i),
            _ => None,
        }
    }
}

/// Where to find an id in a record, for all events at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum IdPos {
    /// One event: every record is its.
    OnlyOne,
    /// The id is at this offset (from the start for samples, from the end
    /// for other kernel records).
    At(usize),
    /// The events disagree, or carry no id.
    Unknown,
}

/// All events of a capture.
#[derive(Clone, Debug, Default)]
pub struct Events {
    list: Vec<Event>,
    by_id: FxHashMap<u64, EventIndex>,
    sample_id: Option<IdPosPair>,
}

#[derive(Clone, Copy, Debug)]
struct IdPosPair {
    sample: IdPos,
    other: IdPos,
}

impl Events {
    /// Builds the table. Ids claimed by two events keep the first and are
    /// returned as duplicates.
    pub fn new(list: Vec<Event>) -> (Events, Vec<u64>) {
        let mut by_id: FxHashMap<u64, EventIndex> = FxHashMap::default();
        let mut duplicates = Vec::new();
        for (i, e) in list.iter().enumerate() {
            for &id in &e.ids {
                // The first event to claim an id keeps it.
                let owner = *by_id.entry(id).or_insert(EventIndex(i));
                if owner != EventIndex(i) {
                    duplicates.push(id);
                }
            }
        }
        let mut ev = Events {
            list,
            by_id,
            sample_id: None,
        };
        ev.sample_id = Some(ev.compute_id_pos());
        (ev, duplicates)
    }

    fn compute_id_pos(&self) -> IdPosPair {
        if self.list.len() <= 1 {
            return IdPosPair {
                sample: IdPos::OnlyOne,
                other: IdPos::OnlyOne,
            };
        }
        let all_same = |f: &dyn Fn(&Attr) -> Option<usize>| {
            let first = f(&self.list[0].attr);
            match first {
                Some(p) if self.list.iter().all(|e| f(&e.attr) == Some(p)) => IdPos::At(p),
                _ => IdPos::Unknown,
            }
        };
        IdPosPair {
            sample: all_same(&|a| sample_id_offset(a.sample_type)),
            other: all_same(&trailer_id_from_end),
        }
    }

    /// Puts event `i` in the group led by `leader` (groups read off the
    /// samples when the header does not describe them).
    pub(crate) fn set_group_leader(&mut self, i: EventIndex, leader: EventIndex) {
        if let Some(e) = self.list.get_mut(i.0) {
            e.group_leader = Some(leader);
        }
    }

    /// The events, in attr order.
    pub fn list(&self) -> &[Event] {
        &self.list
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The event at `i`.
    pub fn get(&self, i: EventIndex) -> Option<&Event> {
        self.list.get(i.0)
    }

    /// The event owning instance id `id`.
    pub fn by_id(&self, id: u64) -> Option<EventIndex> {
        self.by_id.get(&id).copied()
    }

    /// Which event a kernel record belongs to.
    pub fn resolve(&self, kind: RecordType, body: &[u8], endian: Endian) -> EventRef {
        if !kind.is_kernel() || self.list.is_empty() {
            return EventRef::None;
        }
        let pos = self.sample_id.map_or(IdPos::Unknown, |p| {
            if kind == RecordType::SAMPLE {
                p.sample
            } else {
                p.other
            }
        });
        let id = match pos {
            IdPos::OnlyOne => return EventRef::Known(EventIndex(0)),
            IdPos::Unknown => return EventRef::None,
            IdPos::At(off) if kind == RecordType::SAMPLE => endian.u64_at(body, off),
            IdPos::At(off) => body
                .len()
                .checked_sub(off)
                .and_then(|o| endian.u64_at(body, o)),
        };
        match id {
            Some(id) => match self.by_id(id) {
                Some(i) => EventRef::Known(i),
                None => EventRef::UnknownId(id),
            },
            None => EventRef::None,
        }
    }

    /// The timestamp of a kernel record of event `ev`, if it carries one.
    pub fn record_time(
        &self,
        kind: RecordType,
        body: &[u8],
        ev: EventRef,
        endian: Endian,
    ) -> Option<u64> {
        if !kind.is_kernel() {
            return None;
        }
        // An unresolved record still has a time if every event puts it in
        // the same place.
        let attr_time = |a: &Attr| {
            if kind == RecordType::SAMPLE {
                sample_time_offset(a.sample_type)
            } else {
                trailer_time_from_end(a)
            }
        };
        let pos = match ev.index().and_then(|i| self.get(i)) {
            Some(e) => attr_time(&e.attr),
            None => {
                let first = attr_time(&self.list.first()?.attr);
                if self.list.iter().all(|e| attr_time(&e.attr) == first) {
                    first
                } else {
                    None
                }
            }
        }?;
        if kind == RecordType::SAMPLE {
            endian.u64_at(body, pos)
        } else {
            endian.u64_at(body, body.len().checked_sub(pos)?)
        }
    }
}

/// The name perf gives an event that has none recorded (`evsel__name`).
pub fn default_event_name(attr: &Attr) -> String {
    const HW: &[&str] = &[
        "cycles",
        "instructions",
        "cache-references",
        "cache-misses",
        "branches",
        "branch-misses",
        "bus-cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "ref-cycles",
    ];
    const SW: &[&str] = &[
        "cpu-clock",
        "task-clock",
        "page-faults",
        "context-switches",
        "cpu-migrations",
        "minor-faults",
        "major-faults",
        "alignment-faults",
        "emulation-faults",
        "dummy",
        "bpf-output",
        "cgroup-switches",
    ];
    let cfg = attr.config;
    match attr.type_ {
        event_type::HARDWARE if (cfg as usize) < HW.len() => HW[cfg as usize].to_string(),
        event_type::SOFTWARE if (cfg as usize) < SW.len() => SW[cfg as usize].to_string(),
        event_type::TRACEPOINT => format!("tracepoint:{cfg:#x}"),
        event_type::RAW => format!("raw {cfg:#x}"),
        t => format!("{t}/{cfg:#x}/"),
    }
}
