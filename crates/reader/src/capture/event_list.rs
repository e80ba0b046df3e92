//! The capture's event list: the attrs (or `EVENT_DESC`'s), named from
//! the feature sections, pipe-mode records or simpleperf's meta info, and
//! grouped from `GROUP_DESC` or, when a cut capture lost it, from the
//! samples' group reads.

use super::Capture;
use crate::attr::{Attr, ReadFormat, SampleType};
use crate::error::Warning;
use crate::events::{default_event_name, Event, EventIndex, Events};
use crate::features::{self, id as feat, EventDesc};
use crate::record_type::RecordType;

impl Capture {
    /// The events of `attrs` (of `EVENT_DESC` when there are none), named
    /// and grouped.
    pub(super) fn build_events(&mut self, attrs: Vec<(Attr, Vec<u64>)>) {
        let desc = self.event_desc();
        let mut list: Vec<Event> = attrs
            .into_iter()
            .map(|(attr, ids)| unnamed(attr, ids))
            .collect();
        // A file without an attr section (some old or simpleperf files) has
        // its events only in EVENT_DESC.
        if list.is_empty() {
            if let Some(d) = &desc {
                list = d
                    .iter()
                    .map(|d| unnamed(d.attr.clone(), d.ids.clone()))
                    .collect();
            }
        }
        if let Some(d) = &desc {
            name_from_event_desc(&mut list, d);
        }
        self.name_from_event_updates(&mut list);
        self.name_from_simpleperf_meta(&mut list);
        for ev in &mut list {
            if ev.name.is_empty() {
                ev.name = default_event_name(&ev.attr);
            }
        }
        self.group_from_group_desc(&mut list);
        let (events, dups) = Events::new(list);
        if let Some(first) = dups.first() {
            self.warnings.push(Warning::general(
                format!(
                    "{} event ids belong to more than one event (first: {first}); the first event keeps each",
                    dups.len()
                ),
            ));
        }
        self.events = events;
    }

    /// `EVENT_DESC`, decoded; a malformed one is a warning.
    fn event_desc(&mut self) -> Option<Vec<EventDesc>> {
        let e = self.endian();
        let desc = self
            .feature_data(feat::EVENT_DESC)
            .and_then(|b| features::parse_event_desc(b, e));
        if self.feature_data(feat::EVENT_DESC).is_some() && desc.is_none() {
            self.warnings.push(self.feature_warning(
                feat::EVENT_DESC,
                "EVENT_DESC feature is malformed; event names come from type and config",
            ));
        }
        desc
    }

    /// Pipe mode: the names `EVENT_UPDATE` records gave, by id.
    fn name_from_event_updates(&mut self, list: &mut [Event]) {
        let owner = id_owners(list);
        for (id, name) in std::mem::take(&mut self.pipe_names) {
            if let Some(&i) = owner.get(&id) {
                list[i].name = name;
            }
        }
    }

    /// simpleperf: "event_type_info" lists "name,type,config" per attr;
    /// it names the events nothing else named.
    fn name_from_simpleperf_meta(&self, list: &mut [Event]) {
        let Some((_, info)) = self
            .meta
            .simpleperf_meta
            .iter()
            .find(|(k, _)| k == "event_type_info")
        else {
            return;
        };
        for (ev, line) in list.iter_mut().zip(info.lines()) {
            if ev.name.is_empty() {
                if let Some(name) = line.split(',').next() {
                    ev.name = name.to_string();
                }
            }
        }
    }

    /// The groups of `GROUP_DESC`: each of more than one event that lies
    /// within the list.
    fn group_from_group_desc(&self, list: &mut [Event]) {
        for g in &self.meta.groups {
            let (l, n) = (g.leader as usize, g.nr_members as usize);
            if n > 1 && l.checked_add(n).is_some_and(|end| end <= list.len()) {
                for ev in &mut list[l..l + n] {
                    ev.group_leader = Some(EventIndex(l));
                    ev.group_name = Some(g.name.clone());
                }
            }
        }
    }
}

/// An event of `attr` and `ids`, not yet named or grouped.
fn unnamed(attr: Attr, ids: Vec<u64>) -> Event {
    Event {
        name: String::new(),
        attr,
        ids,
        group_leader: None,
        group_name: None,
    }
}

/// Names and ids from `EVENT_DESC`: by position when it lists as many
/// events, else by each entry's first id, as perf does.
fn name_from_event_desc(list: &mut [Event], desc: &[EventDesc]) {
    if desc.len() == list.len() {
        for (ev, d) in list.iter_mut().zip(desc) {
            ev.name = d.name.clone();
            if !d.ids.is_empty() {
                ev.ids = d.ids.clone();
            }
        }
    } else {
        let owner = id_owners(list);
        for d in desc {
            if let Some(&i) = d.ids.first().and_then(|id| owner.get(id)) {
                list[i].name = d.name.clone();
            }
        }
    }
}

/// How many records [`Capture::infer_groups`] reads at most looking for
/// each group's first sample.
const GROUP_SCAN_RECORDS: usize = 100_000;

impl Capture {
    /// A capture cut before its feature sections has no `GROUP_DESC`, but
    /// its samples' group reads still name every member's id, the
    /// leader's first (the kernel's order): the groups are read off the
    /// first sample of each event whose samples carry one.
    pub(super) fn infer_groups(&mut self) {
        if !self.meta.groups.is_empty() {
            return;
        }
        let group_read = |e: &Event| {
            e.group_leader.is_none()
                && e.attr.sample_type.contains(SampleType::READ)
                && e.attr
                    .read_format
                    .contains(ReadFormat::GROUP | ReadFormat::ID)
        };
        let mut pending: std::collections::BTreeSet<usize> = self
            .events
            .list()
            .iter()
            .enumerate()
            .filter(|(_, e)| group_read(e))
            .map(|(i, _)| i)
            .collect();
        if pending.is_empty() {
            return;
        }
        let mut found: Vec<(EventIndex, EventIndex)> = Vec::new();
        let mut records = self.records();
        let (mut error, mut seen) = (None, 0);
        while let Some(r) = records.next_ok(&mut error) {
            seen += 1;
            if pending.is_empty() || seen > GROUP_SCAN_RECORDS {
                break;
            }
            let Some(i) = r.event.index() else { continue };
            if r.kind != RecordType::SAMPLE || !pending.contains(&i.0) {
                continue;
            }
            let Some(read) = self.sample(&r).ok().and_then(|s| s.read) else {
                continue;
            };
            let members: Vec<EventIndex> = read
                .values()
                .filter_map(|v| v.id.and_then(|id| self.events.by_id(id)))
                .collect();
            pending.remove(&i.0);
            // A read of one value is no group.
            if let [leader, _, ..] = members[..] {
                for m in members {
                    pending.remove(&m.0);
                    found.push((m, leader));
                }
            }
        }
        if found.is_empty() {
            return;
        }
        for &(m, leader) in &found {
            self.events.set_group_leader(m, leader);
        }
        self.warnings.push(Warning::general(
            "the capture does not describe its event groups (no GROUP_DESC feature; a cut capture loses it): they are read off the samples' group reads",
        ));
    }
}

/// Which event (by position) first claims each id.
fn id_owners(list: &[Event]) -> std::collections::HashMap<u64, usize> {
    let mut owner = std::collections::HashMap::new();
    for (i, e) in list.iter().enumerate() {
        for &id in &e.ids {
            owner.entry(id).or_insert(i);
        }
    }
    owner
}
