//! Stacks interned once each, as a parent-pointer tree (a stack is its
//! leaf frame and the stack of its callers). Per thread, the part of a
//! callchain shared with the thread's previous sample is not looked up
//! again: deep stacks cost only their changed frames.

use std::sync::Arc;

use arrow_array::{ArrayRef, ListArray, UInt32Array};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use rustc_hash::FxHashMap;

use crate::table::ROWS_PER_GROUP;
use crate::{Error, Table};

/// "No caller stack" in [`Node::parent`].
const ROOT: u32 = u32::MAX;
/// "None" in [`Node::first_child`] and [`Node::next_sibling`].
const NONE: u32 = u32::MAX;
/// In [`Node::first_child`]: the node's callees are in [`Stacks::wide`].
const WIDE: u32 = u32::MAX - 1;
/// Callees a node lists before they move to [`Stacks::wide`]: finding a
/// callee then visits at most this many nodes.
const LIST_LIMIT: u32 = 8;

/// One stack: its leaf frame and the stack of its callers.
///
/// Callees (the stacks one frame deeper) are found through the caller:
/// a short list of them, or, for a caller with many, a hash table. Most
/// new stacks extend a stack just made (on system-wide frame-pointer
/// captures three stacks in four are new, many under a garbage root
/// frame), whose callee list is empty and in cache: one probe of a table
/// of millions of stacks per frame, a cache miss each, cost more than
/// reading the samples.
///
/// 16 bytes (millions of them on system-wide captures): a stack's depth
/// is not kept while interning, which never reads it; writing computes it
/// in the place of `first_child` (a caller is made before its callees).
#[derive(Clone, Copy)]
struct Node {
    frame: u32,
    parent: u32,
    /// The latest callee made, [`NONE`], or [`WIDE`]; once interning is
    /// over, the stack's depth.
    first_child: u32,
    /// The caller's callee made before this one, or [`NONE`].
    next_sibling: u32,
}

/// The last stack interned for one thread: consecutive samples of a
/// thread mostly share their callers, so the next one only interns the
/// frames past the shared part.
#[derive(Default)]
struct Recent {
    /// Root first: each frame...
    frames: Vec<u32>,
    /// ...and the stack ending at it.
    nodes: Vec<u32>,
}

/// Threads remembered at most; past it they are forgotten (a cache).
const RECENT_LIMIT: usize = 1 << 16;

/// The stacks of a capture.
pub(crate) struct Stacks {
    /// (leaf frame, caller stack or [`ROOT`]) → stack id, for the callees
    /// of callers with more than [`LIST_LIMIT`] of them.
    wide: FxHashMap<(u32, u32), u32>,
    nodes: Vec<Node>,
    /// By stack id: whether a sample has the stack (and so gets its
    /// `frame_ids`); a bit each (a byte each was 19 MB on a system-wide
    /// capture's 18 M stacks).
    sampled: BooleanBufferBuilder,
    /// The root stacks' list head, as [`Node::first_child`].
    roots: u32,
    /// By thread id.
    recent: FxHashMap<u32, Recent>,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            wide: FxHashMap::default(),
            nodes: Vec::new(),
            sampled: BooleanBufferBuilder::new(0),
            roots: NONE,
            recent: FxHashMap::default(),
        }
    }
}

impl Stacks {
    /// The stack id of a sample of thread `tid` whose frames (location
    /// ids, root first) are `frames`; `None` for a sample without frames.
    /// Stacks are frames only: the same frames in two processes are one
    /// stack.
    pub(crate) fn intern(&mut self, tid: u32, frames: &[u32]) -> Option<u32> {
        if frames.is_empty() {
            return None;
        }
        if self.recent.len() >= RECENT_LIMIT && !self.recent.contains_key(&tid) {
            self.recent.clear();
        }
        let mut r = self.recent.remove(&tid).unwrap_or_default();
        let shared = r
            .frames
            .iter()
            .zip(frames)
            .take_while(|(a, b)| a == b)
            .count();
        r.frames.truncate(shared);
        r.nodes.truncate(shared);
        let mut parent = r.nodes.last().copied().unwrap_or(ROOT);
        for &frame in frames.iter().skip(shared) {
            parent = self.callee(parent, frame);
            r.frames.push(frame);
            r.nodes.push(parent);
        }
        if (parent as usize) < self.sampled.len() {
            self.sampled.set_bit(parent as usize, true);
        }
        self.recent.insert(tid, r);
        Some(parent)
    }

    /// The stack of `frame` called from stack `parent` (or a root stack),
    /// made if new.
    fn callee(&mut self, parent: u32, frame: u32) -> u32 {
        let head = match self.nodes.get(parent as usize) {
            Some(p) => p.first_child,
            None => self.roots,
        };
        if head == WIDE {
            let next = self.nodes.len() as u32;
            let id = *self.wide.entry((frame, parent)).or_insert(next);
            if id == next {
                self.push(frame, parent, NONE);
            }
            return id;
        }
        let mut listed = 0;
        let mut at = head;
        while let Some(n) = self.nodes.get(at as usize) {
            if n.frame == frame {
                return at;
            }
            at = n.next_sibling;
            listed += 1;
        }
        let id = self.push(frame, parent, head);
        let head = if listed < LIST_LIMIT {
            id
        } else {
            // Too many to list: all of them go to the table.
            let mut at = id;
            while let Some(n) = self.nodes.get(at as usize) {
                self.wide.insert((n.frame, parent), at);
                at = n.next_sibling;
            }
            WIDE
        };
        match self.nodes.get_mut(parent as usize) {
            Some(p) => p.first_child = head,
            None => self.roots = head,
        }
        id
    }

    fn push(&mut self, frame: u32, parent: u32, next_sibling: u32) -> u32 {
        self.nodes.push(Node {
            frame,
            parent,
            first_child: NONE,
            next_sibling,
        });
        self.sampled.append(false);
        (self.nodes.len() - 1) as u32
    }

    /// Writes the stacks table into `t`: every stack with its leaf frame,
    /// depth and caller stack, and for the stacks samples have, all frames
    /// leaf first. (Listing them for every caller stack too would grow
    /// with the square of the depth.) The columns are built a row group at
    /// a time straight from the tree's vectors: a system-wide capture has
    /// millions of stacks, and a builder call per cell was a third of the
    /// time of writing them.
    pub(crate) fn write(self, mut t: Table) -> Result<(), Error> {
        // The tree is no longer looked up: its index goes before the
        // table's buffers grow.
        drop(self.wide);
        drop(self.recent);
        // The vectors grown by doubling give back their spare capacity
        // (a large block shrinks in place: no copy).
        let mut nodes = self.nodes;
        nodes.shrink_to_fit();
        let mut sampled = self.sampled;
        let sampled = sampled.finish();
        // Depths, callers first, where the callee lists were.
        for i in 0..nodes.len() {
            let parent = nodes[i].parent;
            let depth = nodes.get(parent as usize).map_or(1, |p| p.first_child + 1);
            nodes[i].first_child = depth;
        }
        // `push` grows `nodes` and `sampled` together: equally long.
        for start in (0..nodes.len()).step_by(ROWS_PER_GROUP) {
            let len = ROWS_PER_GROUP.min(nodes.len() - start);
            t.push_group(group_columns(&nodes, start, sampled.slice(start, len)))?;
        }
        t.finish()
    }
}

/// The stacks table's columns for the stacks of `nodes` from `start` on,
/// as many as `sampled` (whether each has samples) has bits; their depths
/// are in `first_child`.
fn group_columns(nodes: &[Node], start: usize, sampled: BooleanBuffer) -> Vec<ArrayRef> {
    let range = start..start + sampled.len();
    let group = nodes.get(range.clone()).unwrap_or_default();
    let ids = UInt32Array::from_iter_values(range.map(|i| i as u32));
    // frame_ids: each sampled stack's frames, leaf first, walking up the
    // callers; null for the others.
    let mut items: Vec<u32> = Vec::new();
    let mut offsets: Vec<i32> = Vec::with_capacity(group.len() + 1);
    offsets.push(0);
    for (i, is_sampled) in sampled.iter().enumerate() {
        if is_sampled {
            let mut at = (start + i) as u32;
            while let Some(node) = nodes.get(at as usize) {
                items.push(node.frame);
                at = node.parent;
            }
        }
        offsets.push(i32::try_from(items.len()).unwrap_or(i32::MAX));
    }
    let item = Arc::new(Field::new("item", DataType::UInt32, true));
    let list_nulls = NullBuffer::new(sampled);
    let frame_ids = ListArray::new(
        item,
        OffsetBuffer::new(ScalarBuffer::from(offsets)),
        Arc::new(UInt32Array::from(items)),
        (list_nulls.null_count() > 0).then_some(list_nulls),
    );
    let frames = UInt32Array::from_iter_values(group.iter().map(|n| n.frame));
    let depths = UInt32Array::from_iter_values(group.iter().map(|n| n.first_child));
    let parents: UInt32Array = group
        .iter()
        .map(|n| (n.parent != ROOT).then_some(n.parent))
        .collect();
    vec![
        Arc::new(ids),
        Arc::new(frame_ids),
        Arc::new(frames),
        Arc::new(depths),
        Arc::new(parents),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::schema::STACKS;

    /// A xorshift64 sequence from `seed`: random stacks, the same each run.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn shared_callers_are_one_stack_across_threads() {
        let mut s = Stacks::default();
        // Root first: main → work → leaf.
        let a = s.intern(1, &[10, 20, 30]);
        let b = s.intern(2, &[10, 20, 30]);
        assert_eq!(a, b, "same frames, same stack, whatever the thread");
        let c = s.intern(1, &[10, 20, 31]);
        assert_ne!(a, c);
        let parent_of = |s: &Stacks, id: Option<u32>| s.nodes[id.unwrap() as usize].parent;
        assert_eq!(parent_of(&s, a), parent_of(&s, c), "callers shared");
        // A shorter chain after a longer one on the same thread.
        let d = s.intern(1, &[10, 20]);
        assert_eq!(d, Some(parent_of(&s, a)));
        assert_eq!(s.intern(1, &[]), None);
        assert_eq!(s.nodes.len(), 4);
        assert!(s.sampled.get_bit(d.unwrap() as usize));
        assert!(
            !s.sampled.get_bit(0),
            "the root frame alone was never sampled"
        );
    }

    /// The ids a plain (frame, caller) → id table gives, for stacks of
    /// every fan-out: few callees listed, many in the table, roots too.
    #[test]
    fn ids_are_those_of_one_table() {
        let mut s = Stacks::default();
        let mut plain: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        for i in 0..20_000u32 {
            let depth = 1 + (next() % 12) as usize;
            // Few distinct frames near the root, many near the leaf.
            let frames: Vec<u32> = (0..depth)
                .map(|d| (next() % (2 + 4 * d as u64 * d as u64)) as u32)
                .collect();
            let mut parent = ROOT;
            for &f in &frames {
                let n = plain.len() as u32;
                parent = *plain.entry((f, parent)).or_insert(n);
            }
            assert_eq!(s.intern(i % 7, &frames), Some(parent));
        }
        assert_eq!(s.nodes.len(), plain.len());
        assert!(!s.wide.is_empty(), "some callers had many callees");
    }

    /// The columns built from the tree's vectors make the file rows given
    /// one at a time through the table's builders make, byte for byte,
    /// over more than one row group, with unsampled stacks (null lists)
    /// and root stacks (null callers).
    #[test]
    fn whole_groups_write_what_rows_write() {
        let mut s = Stacks::default();
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        while s.nodes.len() < ROWS_PER_GROUP + 5_000 {
            let depth = 1 + (next() % 20) as usize;
            let frames: Vec<u32> = (0..depth).map(|_| (next() % 50) as u32).collect();
            s.intern((next() % 5) as u32, &frames);
        }
        // The expected rows, from the tree before it is written.
        let depth_of = |s: &Stacks, mut at: u32| {
            let mut d = 0u64;
            while let Some(n) = s.nodes.get(at as usize) {
                d += 1;
                at = n.parent;
            }
            d
        };
        let dir = std::env::temp_dir().join(format!("perfq-stacks-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (by_rows, by_groups) = (dir.join("rows.parquet"), dir.join("groups.parquet"));
        let mut t = Table::create(&by_rows, STACKS).unwrap();
        for (i, n) in s.nodes.iter().enumerate() {
            let mut row = t.row();
            row.u(i as u64);
            if s.sampled.get_bit(i) {
                let mut frames = Vec::new();
                let mut at = i as u32;
                while let Some(node) = s.nodes.get(at as usize) {
                    frames.push(node.frame);
                    at = node.parent;
                }
                row.list(&frames);
            } else {
                row.null();
            }
            row.u(u64::from(n.frame)).u(depth_of(&s, i as u32));
            if n.parent == ROOT {
                row.null();
            } else {
                row.u(u64::from(n.parent));
            }
            row.end().unwrap();
        }
        t.finish().unwrap();
        let bits: Vec<bool> = (0..s.sampled.len()).map(|i| s.sampled.get_bit(i)).collect();
        assert!(bits.iter().any(|&x| !x) && bits.iter().any(|&x| x));
        s.write(Table::create(&by_groups, STACKS).unwrap()).unwrap();
        let (a, b) = (
            std::fs::read(&by_rows).unwrap(),
            std::fs::read(&by_groups).unwrap(),
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(a == b, "the two ways wrote different files");
    }
}
