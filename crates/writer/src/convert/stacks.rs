//! Stacks interned once each, as a parent-pointer tree (a stack is its
//! leaf frame and the stack of its callers). Per thread, the part of a
//! callchain shared with the thread's previous sample is not looked up
//! again: deep stacks cost only their changed frames.

use perfq_symbolize::{FrameLookup, LocationInterner, Tracker};
use rustc_hash::FxHashMap;

use crate::convert::schema::STACKS;
use crate::{CaptureWriter, Cell, Error};

/// "No caller stack" in [`Node::parent`].
const ROOT: u32 = u32::MAX;

/// One stack: its leaf frame and the stack of its callers.
#[derive(Clone, Copy)]
struct Node {
    frame: u32,
    parent: u32,
    depth: u32,
    /// Whether a sample has this stack (and so gets its `frame_ids`).
    sampled: bool,
}

/// The last stack interned for one thread: consecutive samples of a
/// thread mostly share their callers, so the next one only interns the
/// frames past the shared part.
#[derive(Default)]
struct Recent {
    pid: u32,
    /// The process's mappings stamp: other mappings, other locations.
    stamp: u64,
    /// Root first: each frame's address and lookup bits...
    keys: Vec<(u64, u8)>,
    /// ...and the stack ending at it.
    nodes: Vec<u32>,
}

/// Threads remembered at most; past it they are forgotten (a cache).
const RECENT_LIMIT: usize = 1 << 16;

/// The stacks of a capture.
#[derive(Default)]
pub(crate) struct Stacks {
    /// (leaf frame, caller stack or [`ROOT`]) → stack id.
    ids: FxHashMap<(u32, u32), u32>,
    nodes: Vec<Node>,
    /// By thread id.
    recent: FxHashMap<u32, Recent>,
}

impl Stacks {
    /// The stack id of a sample of `pid`/`tid` whose frames (leaf first)
    /// are looked up as `lookups`; `None` for a sample without frames.
    pub(crate) fn intern_sample(
        &mut self,
        tracker: &Tracker,
        locations: &mut LocationInterner,
        pid: u32,
        tid: u32,
        lookups: &[FrameLookup],
    ) -> Option<u32> {
        if lookups.is_empty() {
            return None;
        }
        let stamp = tracker.spaces().stamp(pid);
        if self.recent.len() >= RECENT_LIMIT && !self.recent.contains_key(&tid) {
            self.recent.clear();
        }
        let r = self.recent.entry(tid).or_default();
        if r.pid != pid || r.stamp != stamp {
            *r = Recent {
                pid,
                stamp,
                ..Recent::default()
            };
        }
        // Equal addresses looked up the same way in the same mappings are
        // the same locations, so the shared root part has the same stacks.
        let shared = r
            .keys
            .iter()
            .zip(lookups.iter().rev())
            .take_while(|(k, f)| **k == (f.addr, f.lookup_bits()))
            .count();
        r.keys.truncate(shared);
        r.nodes.truncate(shared);
        let mut parent = r.nodes.last().copied().unwrap_or(ROOT);
        for f in lookups.iter().rev().skip(shared) {
            let frame = locations.intern(tracker, pid, f);
            let nodes = &mut self.nodes;
            parent = *self.ids.entry((frame, parent)).or_insert_with(|| {
                let depth = nodes.get(parent as usize).map_or(1, |p| p.depth + 1);
                nodes.push(Node {
                    frame,
                    parent,
                    depth,
                    sampled: false,
                });
                (nodes.len() - 1) as u32
            });
            r.keys.push((f.addr, f.lookup_bits()));
            r.nodes.push(parent);
        }
        if let Some(n) = self.nodes.get_mut(parent as usize) {
            n.sampled = true;
        }
        Some(parent)
    }

    /// The leaf frame of stack `id`.
    pub(crate) fn frame_of(&self, id: u32) -> Option<u32> {
        self.nodes.get(id as usize).map(|n| n.frame)
    }

    /// Writes the stacks table: every stack with its leaf frame, depth and
    /// caller stack, and for the stacks samples have, all frames leaf
    /// first. (Listing them for every caller stack too would grow with the
    /// square of the depth.)
    pub(crate) fn write(&self, w: &CaptureWriter) -> Result<(), Error> {
        let mut t = w.table("stacks", STACKS)?;
        let mut frame_ids = Vec::new();
        for (i, n) in self.nodes.iter().enumerate() {
            frame_ids.clear();
            if n.sampled {
                let mut at = i as u32;
                while let Some(node) = self.nodes.get(at as usize) {
                    frame_ids.push(node.frame);
                    at = node.parent;
                }
            }
            t.push(&[
                Cell::U(i as u64),
                if n.sampled {
                    Cell::L(&frame_ids)
                } else {
                    Cell::Null
                },
                Cell::U(u64::from(n.frame)),
                Cell::U(u64::from(n.depth)),
                if n.parent == ROOT {
                    Cell::Null
                } else {
                    Cell::U(u64::from(n.parent))
                },
            ])?;
        }
        t.finish()
    }
}
