//! Stacks interned once each, as a parent-pointer tree (a stack is its
//! leaf frame and the stack of its callers). Per thread, the part of a
//! callchain shared with the thread's previous sample is not looked up
//! again: deep stacks cost only their changed frames.
//!
//! The tree grows with a capture's distinct stacks, which on system-wide
//! captures grow with its length (most samples of deep, varied code make
//! new ones). Under a memory limit the tree is written whenever it
//! reaches it ([`Stacks::cut`]) and interning starts afresh: memory stays
//! flat, and a stack met on both sides of such a cut gets two ids (see
//! docs/schema.md, "Stacks and frames interned in segments").

use std::sync::Arc;

use arrow_array::{ArrayRef, ListArray, UInt32Array};
use arrow_buffer::{BooleanBuffer, BooleanBufferBuilder, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_schema::{DataType, Field};
use rustc_hash::FxHashMap;

use crate::convert::stack_memo::{ChainHash, StackMemo};
use crate::table::ROWS_PER_GROUP;
use crate::{Error, Table};

/// "No caller stack" in a [`Node`]'s [`PARENT`].
const ROOT: u32 = u32::MAX;
/// "None" in a [`Node`]'s [`FIRST_CHILD`] and [`NEXT_SIBLING`].
const NONE: u32 = u32::MAX;
/// In a [`Node`]'s [`FIRST_CHILD`]: its callees are in [`Stacks::wide`].
const WIDE: u32 = u32::MAX - 1;
/// Callees a node lists before they move to [`Stacks::wide`]: finding a
/// callee then visits at most this many nodes.
const LIST_LIMIT: u32 = 8;

/// One stack: its leaf frame and the stack of its callers, as four words
/// indexed by [`FRAME`], [`PARENT`], [`FIRST_CHILD`] and [`NEXT_SIBLING`].
///
/// Callees (the stacks one frame deeper) are found through the caller:
/// a short list of them, or, for a caller with many, a hash table. Most
/// new stacks extend a stack just made (on system-wide frame-pointer
/// captures three stacks in four are new, many under a garbage root
/// frame), whose callee list is empty and in cache: one probe of a table
/// of millions of stacks per frame, a cache miss each, cost more than
/// reading the samples.
///
/// 16 bytes, one per stack; an array rather than a struct so that
/// writing can drop the two list words in place ([`Vec::into_flattened`])
/// and keep 8 bytes a stack: a system-wide capture's nodes are a large
/// table, held while the locations are being symbolized beside them. A
/// stack's depth is not kept while interning, which never reads it.
type Node = [u32; 4];
/// [`Node`]'s leaf frame (a location id).
const FRAME: usize = 0;
/// [`Node`]'s caller stack, or [`ROOT`].
const PARENT: usize = 1;
/// [`Node`]'s latest callee made, [`NONE`], or [`WIDE`].
const FIRST_CHILD: usize = 2;
/// [`Node`]'s caller's callee made before this one, or [`NONE`].
const NEXT_SIBLING: usize = 3;

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

/// Leaf frames less than this past [`Stacks::first_frame`] have their
/// root stack in [`Stacks::roots`] (at most 256 MB of index); any others
/// in [`Stacks::wide`].
const DENSE_FRAMES: usize = 1 << 26;

/// Threads remembered at most; past it they are forgotten (a cache).
const RECENT_LIMIT: usize = 1 << 16;

/// Frames past those shared with the thread's previous sample from which
/// a callchain is looked up whole in [`Stacks::memo`]: fewer cost less to
/// look up one by one than to hash.
const MEMO_FROM: usize = 4;

/// A sample's frames (location ids, root first), with their hash where
/// the memo may be asked for them: made once, for the prefetch rows ahead
/// and for the interning.
pub(crate) struct Chain<'a> {
    frames: &'a [u32],
    hash: Option<ChainHash>,
}

impl<'a> Chain<'a> {
    pub(crate) fn new(frames: &'a [u32]) -> Chain<'a> {
        Chain {
            frames,
            hash: (frames.len() >= MEMO_FROM).then(|| ChainHash::of(frames)),
        }
    }
}

/// The stacks of a capture.
pub(crate) struct Stacks {
    /// Ids of the stacks already written (earlier segments): the id of
    /// `nodes[i]` is `base + i`.
    base: u32,
    /// (leaf frame, caller stack or [`ROOT`]) → stack id, for the callees
    /// of callers with more than [`LIST_LIMIT`] of them.
    wide: FxHashMap<(u32, u32), u32>,
    nodes: Vec<Node>,
    /// By stack id: whether a sample has the stack (and so gets its
    /// `frame_ids`); a bit each (a byte each made a sizable array on a
    /// system-wide capture).
    sampled: BooleanBufferBuilder,
    /// The root stack of each leaf frame (a location id, dense), or
    /// [`NONE`]. A system-wide capture has as many roots as garbage
    /// frames end its callchains, a great many: found in a table of their
    /// own by (frame, root) they cost two or three cache misses each, a
    /// large part of interning's time; here one.
    roots: Vec<u32>,
    /// The location id `roots` starts at: the first of the segment's own
    /// locations (see [`Stacks::cut`]), so that the index stays as large
    /// as one segment's locations however many came before.
    first_frame: u32,
    /// By thread id.
    recent: FxHashMap<u32, Recent>,
    /// Whole callchains, by their frames' hash.
    memo: StackMemo,
}

impl Default for Stacks {
    fn default() -> Self {
        Stacks {
            base: 0,
            wide: FxHashMap::default(),
            nodes: Vec::new(),
            sampled: BooleanBufferBuilder::new(0),
            roots: Vec::new(),
            first_frame: 0,
            recent: FxHashMap::default(),
            memo: StackMemo::default(),
        }
    }
}

impl Stacks {
    /// The stack id of a sample of thread `tid` whose frames are `chain`;
    /// `None` for a sample without frames. Stacks are frames only: the
    /// same frames in two processes are one stack.
    pub(crate) fn intern(&mut self, tid: u32, chain: &Chain<'_>) -> Option<u32> {
        let frames = chain.frames;
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
        let hash = chain.hash.filter(|_| frames.len() - shared >= MEMO_FROM);
        let remembered = hash.and_then(|h| self.memo.get(h));
        let parent = match remembered.filter(|&s| self.follow(s, frames, &mut r)) {
            Some(stack) => stack,
            None => {
                let mut parent = r.nodes.last().copied().unwrap_or(ROOT);
                for &frame in frames.iter().skip(shared) {
                    parent = self.callee(parent, frame);
                    r.frames.push(frame);
                    r.nodes.push(parent);
                }
                if let Some(h) = hash {
                    self.memo.put(h, parent);
                }
                parent
            }
        };
        if (parent as usize) < self.sampled.len() {
            self.sampled.set_bit(parent as usize, true);
        }
        self.recent.insert(tid, r);
        Some(self.base.saturating_add(parent))
    }

    /// Starts fetching what interning `chain` soon will read: the memo's
    /// slot for it, which a capture of many call paths in random order
    /// finds in no cache.
    #[inline]
    pub(crate) fn prefetch(&self, chain: &Chain<'_>) {
        if let Some(h) = chain.hash {
            self.memo.prefetch(h);
        }
    }

    /// Whether `stack` is the callchain `frames`, of which `r` holds the
    /// first ones (with their stacks): if so, `r` is given the rest. Only
    /// the frames past `r`'s are compared, leaf first: the stack reached
    /// there must be `r`'s last.
    fn follow(&self, stack: u32, frames: &[u32], r: &mut Recent) -> bool {
        let shared = r.nodes.len();
        let top = r.nodes.last().copied().unwrap_or(ROOT);
        r.nodes.resize(frames.len(), ROOT);
        let mut at = stack;
        for (i, &frame) in frames.iter().enumerate().skip(shared).rev() {
            match self.nodes.get(at as usize) {
                Some(n) if n[FRAME] == frame => {
                    r.nodes[i] = at;
                    at = n[PARENT];
                }
                _ => break,
            }
            if i == shared {
                if at == top {
                    r.frames.extend_from_slice(&frames[shared..]);
                    return true;
                }
                break;
            }
        }
        r.nodes.truncate(shared);
        false
    }

    /// The memory the tree holds since the last cut, as counted against
    /// a limit: 16 bytes a stack (its index and the callee tables add a
    /// little).
    pub(crate) fn bytes(&self) -> usize {
        self.nodes.len() * size_of::<Node>()
    }

    /// Writes the stacks so far into `t` and starts a new segment: the
    /// stacks interned from now on get ids after theirs, and none is
    /// looked up again (a stack met again gets a new id). The vectors keep
    /// their room for the next segment, which the caller's limit bounds;
    /// the root index starts again at `first_frame`, the first location id
    /// the next segment gives (frames before it, of locations met earlier,
    /// find their root stacks in the table).
    pub(crate) fn cut(&mut self, t: &mut Table, first_frame: u32) -> Result<(), Error> {
        let held = self.nodes.len();
        self.wide.clear();
        self.recent.clear();
        self.memo.clear();
        self.roots = Vec::new();
        self.first_frame = first_frame;
        let nodes = std::mem::replace(&mut self.nodes, Vec::with_capacity(held));
        let sampled = std::mem::replace(&mut self.sampled, BooleanBufferBuilder::new(held));
        write_segment(t, self.base, nodes, sampled)?;
        self.base = self.base.saturating_add(held as u32);
        Ok(())
    }

    /// The stack of `frame` called from stack `parent` (or a root stack),
    /// made if new.
    fn callee(&mut self, parent: u32, frame: u32) -> u32 {
        let head = match self.nodes.get(parent as usize) {
            Some(p) => p[FIRST_CHILD],
            None => return self.root(frame),
        };
        if head == WIDE {
            return self.wide_callee(parent, frame);
        }
        let mut listed = 0;
        let mut at = head;
        while let Some(n) = self.nodes.get(at as usize) {
            if n[FRAME] == frame {
                return at;
            }
            at = n[NEXT_SIBLING];
            listed += 1;
        }
        let id = self.push(frame, parent, head);
        let head = if listed < LIST_LIMIT {
            id
        } else {
            // Too many to list: all of them go to the table.
            let mut at = id;
            while let Some(n) = self.nodes.get(at as usize) {
                self.wide.insert((n[FRAME], parent), at);
                at = n[NEXT_SIBLING];
            }
            WIDE
        };
        if let Some(p) = self.nodes.get_mut(parent as usize) {
            p[FIRST_CHILD] = head;
        }
        id
    }

    /// The stack of `frame` called from `parent`, found in (or made and
    /// added to) [`Stacks::wide`].
    fn wide_callee(&mut self, parent: u32, frame: u32) -> u32 {
        let next = self.nodes.len() as u32;
        let id = *self.wide.entry((frame, parent)).or_insert(next);
        if id == next {
            self.push(frame, parent, NONE);
        }
        id
    }

    /// The root stack of `frame`, made if new.
    fn root(&mut self, frame: u32) -> u32 {
        let at = frame.wrapping_sub(self.first_frame) as usize;
        if at >= DENSE_FRAMES {
            // A location of an earlier segment, or not a location id of
            // any capture this side of 64 M locations: the table, so that
            // the index stays small.
            return self.wide_callee(ROOT, frame);
        }
        if let Some(&id) = self.roots.get(at).filter(|&&id| id != NONE) {
            return id;
        }
        if at >= self.roots.len() {
            // Location ids are dense: the index grows as they come.
            self.roots.resize((at + 1).next_power_of_two(), NONE);
        }
        let id = self.push(frame, ROOT, NONE);
        self.roots[at] = id;
        id
    }

    fn push(&mut self, frame: u32, parent: u32, next_sibling: u32) -> u32 {
        let mut node = [0; 4];
        node[FRAME] = frame;
        node[PARENT] = parent;
        node[FIRST_CHILD] = NONE;
        node[NEXT_SIBLING] = next_sibling;
        self.nodes.push(node);
        self.sampled.append(false);
        (self.nodes.len() - 1) as u32
    }

    /// Writes the stacks table into `t`: every stack with its leaf frame,
    /// depth and caller stack, and for the stacks samples have, all frames
    /// leaf first. (Listing them for every caller stack too would grow
    /// with the square of the depth.) The columns are built a row group at
    /// a time straight from the tree's vectors: a builder call per cell
    /// was a large part of the time of writing a system-wide capture's
    /// stacks.
    pub(crate) fn write(self, mut t: Table) -> Result<(), Error> {
        // The tree is no longer looked up: its index goes before the
        // table's buffers grow.
        drop(self.wide);
        drop(self.recent);
        drop(self.memo);
        write_segment(&mut t, self.base, self.nodes, self.sampled)?;
        t.finish()
    }
}

/// Writes the stacks of `nodes`, whose ids start at `base`, into `t`.
fn write_segment(
    t: &mut Table,
    base: u32,
    nodes: Vec<Node>,
    mut sampled: BooleanBufferBuilder,
) -> Result<(), Error> {
    let sampled = sampled.finish();
    let depths = Depths::of(&nodes);
    let links = frames_and_callers(nodes);
    let (links, _) = links.as_chunks::<2>();
    // `push` grows `nodes` and `sampled` together: equally long.
    for start in (0..links.len()).step_by(ROWS_PER_GROUP) {
        let len = ROWS_PER_GROUP.min(links.len() - start);
        t.push_group(group_columns(
            links,
            &depths,
            base,
            start,
            sampled.slice(start, len),
        ))?;
    }
    Ok(())
}

// `frames_and_callers` moves these two words to the front of each node.
const _: () = assert!(FRAME < 2 && PARENT < 2);

/// Each stack's [`FRAME`] and [`PARENT`] words, two words a stack in the
/// place of its four: the callee lists are no longer needed, and the
/// vector's second half goes back to the allocator (a large block shrinks
/// in place: no copy, and no second vector beside the first).
fn frames_and_callers(nodes: Vec<Node>) -> Vec<u32> {
    let n = nodes.len();
    let mut words = nodes.into_flattened();
    for i in 0..n {
        words[2 * i + FRAME] = words[4 * i + FRAME];
        words[2 * i + PARENT] = words[4 * i + PARENT];
    }
    words.truncate(2 * n);
    words.shrink_to_fit();
    words
}

/// Stack depths, two bytes each: perf cuts callchains at 127 frames by
/// default, and a stack of 65,535 frames or more (deep recursion unwound
/// from DWARF) keeps its depth in `deep`.
struct Depths {
    small: Vec<u16>,
    deep: FxHashMap<u32, u32>,
}

impl Depths {
    /// The depths of the stacks of `nodes` (callers come before their
    /// callees).
    fn of(nodes: &[Node]) -> Depths {
        let mut d = Depths {
            small: Vec::with_capacity(nodes.len()),
            deep: FxHashMap::default(),
        };
        for n in nodes {
            let depth = d.get(n[PARENT]).map_or(1, |p| p.saturating_add(1));
            match u16::try_from(depth) {
                Ok(small) if small < u16::MAX => d.small.push(small),
                _ => {
                    d.deep.insert(d.small.len() as u32, depth);
                    d.small.push(u16::MAX);
                }
            }
        }
        d
    }

    /// The depth of stack `id`, if it is one.
    fn get(&self, id: u32) -> Option<u32> {
        match *self.small.get(id as usize)? {
            u16::MAX => self.deep.get(&id).copied(),
            small => Some(u32::from(small)),
        }
    }
}

/// The stacks table's columns for the stacks from `start` on, as many as
/// `sampled` (whether each has samples) has bits, from each stack's
/// [leaf frame, caller] in `links` and its depth; ids (of stacks and
/// callers) start at `base`.
fn group_columns(
    links: &[[u32; 2]],
    depths: &Depths,
    base: u32,
    start: usize,
    sampled: BooleanBuffer,
) -> Vec<ArrayRef> {
    let range = start..start + sampled.len();
    let group = links.get(range.clone()).unwrap_or_default();
    let ids = UInt32Array::from_iter_values(range.clone().map(|i| base.saturating_add(i as u32)));
    let depths = UInt32Array::from_iter_values(range.map(|i| depths.get(i as u32).unwrap_or(1)));
    // frame_ids: each sampled stack's frames, leaf first, walking up the
    // callers; null for the others. A stack's frames are as many as its
    // depth: the list's items are allocated once, not grown (and copied)
    // as they are found.
    let listed: usize = sampled
        .set_indices()
        .map(|i| depths.value(i) as usize)
        .sum();
    let mut items: Vec<u32> = Vec::with_capacity(listed);
    let mut offsets: Vec<i32> = Vec::with_capacity(group.len() + 1);
    offsets.push(0);
    for (i, is_sampled) in sampled.iter().enumerate() {
        if is_sampled {
            let mut at = (start + i) as u32;
            while let Some(link) = links.get(at as usize) {
                items.push(link[FRAME]);
                at = link[PARENT];
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
    let frames = UInt32Array::from_iter_values(group.iter().map(|l| l[FRAME]));
    // Made as values and validity bits at once (a builder took a call a
    // cell); a root stack's value, under its null, is 0.
    let has_parent = BooleanBuffer::collect_bool(group.len(), |i| group[i][PARENT] != ROOT);
    let parents = UInt32Array::new(
        group
            .iter()
            .map(|l| match l[PARENT] {
                ROOT => 0,
                p => base.saturating_add(p),
            })
            .collect(),
        Some(NullBuffer::new(has_parent)).filter(|n| n.null_count() > 0),
    );
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
        let a = s.intern(1, &Chain::new(&[10, 20, 30]));
        let b = s.intern(2, &Chain::new(&[10, 20, 30]));
        assert_eq!(a, b, "same frames, same stack, whatever the thread");
        let c = s.intern(1, &Chain::new(&[10, 20, 31]));
        assert_ne!(a, c);
        let parent_of = |s: &Stacks, id: Option<u32>| s.nodes[id.unwrap() as usize][PARENT];
        assert_eq!(parent_of(&s, a), parent_of(&s, c), "callers shared");
        // A shorter chain after a longer one on the same thread.
        let d = s.intern(1, &Chain::new(&[10, 20]));
        assert_eq!(d, Some(parent_of(&s, a)));
        assert_eq!(s.intern(1, &Chain::new(&[])), None);
        assert_eq!(s.nodes.len(), 4);
        assert!(s.sampled.get_bit(d.unwrap() as usize));
        assert!(
            !s.sampled.get_bit(0),
            "the root frame alone was never sampled"
        );
    }

    /// Interns every callchain `chain` makes, one per sample of 7
    /// threads in turn, and holds each id equal to that of a table of
    /// (frame, caller) pairs numbered in order of first appearance.
    fn ids_are_those_of_one_table(mut chain: impl FnMut() -> Vec<u32>) -> Stacks {
        let mut s = Stacks::default();
        let mut plain: FxHashMap<(u32, u32), u32> = FxHashMap::default();
        for i in 0..20_000u32 {
            let frames = chain();
            let mut parent = ROOT;
            for &f in &frames {
                let n = plain.len() as u32;
                parent = *plain.entry((f, parent)).or_insert(n);
            }
            assert_eq!(s.intern(i % 7, &Chain::new(&frames)), Some(parent));
        }
        assert_eq!(s.nodes.len(), plain.len());
        s
    }

    /// The ids a plain (frame, caller) → id table gives, for stacks of
    /// every fan-out: few callees listed, many in the table, roots too.
    #[test]
    fn ids_of_varied_stacks_are_those_of_one_table() {
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let s = ids_are_those_of_one_table(|| {
            let depth = 1 + (next() % 12) as usize;
            // Few distinct frames near the root, many near the leaf.
            (0..depth)
                .map(|d| (next() % (2 + 4 * d as u64 * d as u64)) as u32)
                .collect()
        });
        assert!(!s.wide.is_empty(), "some callers had many callees");
    }

    /// Callchains met again in random order, as a loop's or a generated
    /// capture's are, are found whole in the memo: the ids stay those of
    /// the table, and a stale entry (a stack of other frames under the
    /// same hash) is not taken for a match.
    #[test]
    fn ids_of_repeated_stacks_are_those_of_one_table() {
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        let paths: Vec<Vec<u32>> = (0..300)
            .map(|_| {
                let depth = 1 + (next() % 20) as usize;
                (0..depth).map(|_| (next() % 40) as u32).collect()
            })
            .collect();
        let s = ids_are_those_of_one_table(|| paths[(next() % 300) as usize].clone());
        let long = paths
            .iter()
            .find(|p| p.len() >= MEMO_FROM)
            .expect("a long path");
        let h = ChainHash::of(long);
        assert!(s.memo.get(h).is_some(), "remembered");
        let mut stale = s;
        stale.memo.put(h, 0);
        stale.recent.clear();
        let found = stale.memo.get(h);
        let mut r = Recent::default();
        assert!(!stale.follow(found.expect("put"), long, &mut r));
        assert!(r.nodes.is_empty() && r.frames.is_empty());
    }

    /// With a limit, the tree is cut into segments as it fills: every
    /// sample's stack id still names its frames (through the callers and
    /// in `frame_ids`) in the table written, ids are dense across the
    /// cuts, callers are in the same segment, and depths hold.
    #[test]
    fn segments_keep_every_stack_whole() {
        use arrow_array::cast::AsArray;
        use arrow_array::types::UInt32Type;
        use arrow_array::Array;
        use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

        let limit = 300;
        let mut s = Stacks::default();
        let dir = crate::oracle::scratch("segments");
        let path = dir.join("stacks.parquet");
        let mut t = Table::create(&path, STACKS).unwrap();
        let mut next = xorshift(0x2545_f491_4f6c_dd1d);
        let mut samples = Vec::new();
        let mut cuts = 0;
        for _ in 0..5_000 {
            let depth = 1 + (next() % 15) as usize;
            let frames: Vec<u32> = (0..depth)
                .map(|d| (next() % (2 + 3 * d as u64 * d as u64)) as u32)
                .collect();
            let id = s.intern((next() % 4) as u32, &Chain::new(&frames)).unwrap();
            samples.push((id, frames));
            if s.bytes() >= limit * size_of::<Node>() {
                // Root frames of every id, old and new, as when the
                // locations are cut too.
                s.cut(&mut t, (next() % 60) as u32).unwrap();
                cuts += 1;
            }
            assert!(s.nodes.len() < limit);
        }
        s.write(t).unwrap();
        /// A row read back: frame, caller, depth, frame_ids.
        type Row = (u32, Option<u32>, u32, Option<Vec<u32>>);
        let mut rows: Vec<Row> = Vec::new();
        let file = std::fs::File::open(&path).unwrap();
        for batch in ParquetRecordBatchReaderBuilder::try_new(file)
            .unwrap()
            .build()
            .unwrap()
        {
            let b = batch.unwrap();
            let col = |i: usize| b.column(i).as_primitive::<UInt32Type>().clone();
            let (ids, frames, depths, parents) = (col(0), col(2), col(3), col(4));
            let lists = b.column(1).as_list::<i32>();
            for r in 0..b.num_rows() {
                assert_eq!(ids.value(r) as usize, rows.len(), "ids dense across cuts");
                let list = (!lists.is_null(r)).then(|| {
                    lists
                        .value(r)
                        .as_primitive::<UInt32Type>()
                        .values()
                        .to_vec()
                });
                let parent = (!parents.is_null(r)).then(|| parents.value(r));
                rows.push((frames.value(r), parent, depths.value(r), list));
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(cuts >= 5, "{cuts} cuts");
        for (id, frames) in &samples {
            let leaf_first: Vec<u32> = frames.iter().rev().copied().collect();
            let (_, _, depth, list) = &rows[*id as usize];
            assert_eq!(list.as_ref(), Some(&leaf_first), "stack {id}");
            assert_eq!(*depth as usize, frames.len());
            let mut walked = Vec::new();
            let mut at = Some(*id);
            while let Some(i) = at {
                let (frame, parent, _, _) = &rows[i as usize];
                assert!(
                    parent.is_none_or(|p| p < i && i - p < limit as u32 + 15),
                    "caller in segment"
                );
                walked.push(*frame);
                at = *parent;
            }
            assert_eq!(walked, leaf_first);
        }
    }

    /// Depths past two bytes' range are kept exactly: a chain of 70,000
    /// frames (recursion unwound from DWARF) and a second root.
    #[test]
    fn depths_of_very_deep_stacks_are_exact() {
        let mut s = Stacks::default();
        let chain: Vec<u32> = (0..70_000).collect();
        let leaf = s.intern(1, &Chain::new(&chain)).unwrap();
        let other = s.intern(2, &Chain::new(&[7])).unwrap();
        let d = Depths::of(&s.nodes);
        assert_eq!(d.get(0), Some(1));
        for id in [65_533u32, 65_534, 65_535, 65_536, leaf] {
            assert_eq!(d.get(id), Some(id + 1), "stack {id}");
        }
        assert_eq!(d.get(other), Some(1));
        assert_eq!(d.get(other + 1), None);
        assert_eq!(d.deep.len(), 70_000 - 65_534);
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
            s.intern((next() % 5) as u32, &Chain::new(&frames));
        }
        // The expected rows, from the tree before it is written.
        let depth_of = |s: &Stacks, mut at: u32| {
            let mut d = 0u64;
            while let Some(n) = s.nodes.get(at as usize) {
                d += 1;
                at = n[PARENT];
            }
            d
        };
        let dir = crate::oracle::scratch("stacks");
        let (by_rows, by_groups) = (dir.join("rows.parquet"), dir.join("groups.parquet"));
        let mut t = Table::create(&by_rows, STACKS).unwrap();
        for (i, n) in s.nodes.iter().enumerate() {
            let mut row = t.row();
            row.u(i as u64);
            if s.sampled.get_bit(i) {
                let mut frames = Vec::new();
                let mut at = i as u32;
                while let Some(node) = s.nodes.get(at as usize) {
                    frames.push(node[FRAME]);
                    at = node[PARENT];
                }
                row.list(&frames);
            } else {
                row.null();
            }
            row.u(u64::from(n[FRAME])).u(depth_of(&s, i as u32));
            if n[PARENT] == ROOT {
                row.null();
            } else {
                row.u(u64::from(n[PARENT]));
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
