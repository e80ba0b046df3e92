//! Stacks interned once each, as a parent-pointer tree (a stack is its
//! leaf frame and the stack of its callers). Per thread, the part of a
//! callchain shared with the thread's previous sample is not looked up
//! again: deep stacks cost only their changed frames.

use rustc_hash::FxHashMap;

use crate::{Error, Table};

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
    /// Root first: each frame...
    frames: Vec<u32>,
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
        let r = self.recent.entry(tid).or_default();
        let shared = r
            .frames
            .iter()
            .zip(frames)
            .take_while(|(a, b)| a == b)
            .count();
        r.frames.truncate(shared);
        r.nodes.truncate(shared);
        let mut parent = r.nodes.last().copied().unwrap_or(ROOT);
        for (at, &frame) in frames.iter().enumerate().skip(shared) {
            let nodes = &mut self.nodes;
            parent = *self.ids.entry((frame, parent)).or_insert_with(|| {
                // Root first: the frame at `at` ends a stack of `at + 1`
                // frames (known here, not read from the caller's node,
                // which is rarely in cache).
                let depth = at as u32 + 1;
                nodes.push(Node {
                    frame,
                    parent,
                    depth,
                    sampled: false,
                });
                (nodes.len() - 1) as u32
            });
            r.frames.push(frame);
            r.nodes.push(parent);
        }
        if let Some(n) = self.nodes.get_mut(parent as usize) {
            n.sampled = true;
        }
        Some(parent)
    }

    /// Writes the stacks table into `t`: every stack with its leaf frame,
    /// depth and caller stack, and for the stacks samples have, all frames
    /// leaf first. (Listing them for every caller stack too would grow
    /// with the square of the depth.)
    pub(crate) fn write(self, mut t: Table) -> Result<(), Error> {
        // The tree is no longer looked up: its index goes before the
        // table's buffers grow.
        drop(self.ids);
        drop(self.recent);
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
            let mut row = t.row();
            row.u(i as u64);
            if n.sampled {
                row.list(&frame_ids);
            } else {
                row.null();
            }
            row.u(u64::from(n.frame)).u(u64::from(n.depth));
            if n.parent == ROOT {
                row.null();
            } else {
                row.u(u64::from(n.parent));
            }
            row.end()?;
        }
        t.finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(s.nodes[d.unwrap() as usize].sampled);
        assert!(
            !s.nodes[0].sampled,
            "the root frame alone was never sampled"
        );
    }
}
