//! The sampled stacks as the stack tables read them, kept for the
//! session's life for the readers that go on from them (`function_total`
//! here, and `crate::function_sums` and the HTML page's call tree
//! outside): each found by capture and stack id, with its set of
//! functions, whether its leaf resolved to a symbol and, where asked, its
//! functions leaf first (its path); and each frame's function.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringArray};
use datafusion::arrow::datatypes::{DataType, UInt64Type};
use perfq_ids::TextIds;

use super::function_names::FunctionNames;
use super::{text_id, Bits, SetList};
use crate::Error;

/// The sampled stacks, their functions and the functions' names.
#[derive(Debug)]
pub struct SampledStacks {
    /// The captures, numbered as met.
    captures: TextIds,
    /// Per capture number: its sampled stacks' places, by stack id.
    index: Vec<StackIndex>,
    /// By place (the order the stacks were read): capture number and
    /// stack id.
    stacks: Vec<(u32, u32)>,
    /// By place: the stack's set (its number in `sets`).
    set_of: Vec<u32>,
    /// By place: the stack's leaf frame has a symbol.
    leaf_resolved: Bits,
    /// By place: where each stack's path ends in `path_functions` (empty
    /// unless paths were asked for).
    path_ends: Vec<usize>,
    path_functions: Vec<u32>,
    /// Per capture number: each frame's function id (0: none).
    frames: Vec<Vec<u32>>,
    sets: Arc<SetList>,
    names: Arc<FunctionNames>,
    /// The id of a function `[unknown]` in `[unknown]` among the named
    /// ones (0 if there is none): see [`SampledStacks::canonical`]; and
    /// where that name falls among them ([`SampledStacks::name_order`]).
    unknown: u32,
    unknown_at: u32,
}

/// What the stack tables read, from which [`SampledStacks`] is made.
pub(super) struct Read<'a> {
    /// Each batch of sampled stacks: its capture and stack id columns.
    pub(super) ids: &'a [[ArrayRef; 2]],
    /// In the order read: each stack's set, whether its leaf resolved, and
    /// its path (`path_ends` empty without paths).
    pub(super) set_of_stack: Vec<u32>,
    pub(super) leaf_resolved: Bits,
    pub(super) path_ends: Vec<usize>,
    pub(super) path_functions: Vec<u32>,
    /// Each capture's frames' function ids, by capture name.
    pub(super) frames: Vec<(String, Vec<u32>)>,
    pub(super) sets: Arc<SetList>,
    pub(super) names: Arc<FunctionNames>,
}

impl SampledStacks {
    /// The stacks of `read`, or `None` for a stacks table perfq does not
    /// write ([`StackIndex::build`]).
    pub(super) fn new(read: Read<'_>) -> Result<Option<Self>, Error> {
        let mut captures = TextIds::new();
        let Some((index, stacks)) = StackIndex::build(read.ids, &mut captures)? else {
            return Ok(None);
        };
        // (A capture whose samples have no stack still has frames.)
        let mut frames = vec![Vec::new(); captures.len()];
        for (name, ids) in read.frames {
            let c = text_id(&mut captures, &name)? as usize;
            if frames.len() <= c {
                frames.resize(c + 1, Vec::new());
            }
            frames[c] = ids;
        }
        let unknown_at = lower_bound(&read.names, "[unknown]", "[unknown]");
        let unknown = match named_at(&read.names, unknown_at, "[unknown]", "[unknown]") {
            true => unknown_at,
            false => 0,
        };
        Ok(Some(SampledStacks {
            unknown,
            unknown_at,
            captures,
            index,
            stacks,
            set_of: read.set_of_stack,
            leaf_resolved: read.leaf_resolved,
            path_ends: read.path_ends,
            path_functions: read.path_functions,
            frames,
            sets: read.sets,
            names: read.names,
        }))
    }

    /// Capture `name`'s number, if it has sampled stacks.
    pub fn capture(&self, name: &str) -> Option<u32> {
        self.captures.get(name)
    }

    /// The capture number of each row of `names` (a batch's capture
    /// column; a null row has none): looked up only where the name
    /// changes (a batch mostly holds one capture's rows).
    pub fn capture_numbers(&self, names: &StringArray) -> Vec<Option<u32>> {
        let mut last: Option<(&str, Option<u32>)> = None;
        (0..names.len())
            .map(|row| {
                if names.is_null(row) {
                    return None;
                }
                let name = names.value(row);
                match last {
                    Some((n, c)) if n == name => c,
                    _ => {
                        let c = self.capture(name);
                        last = Some((name, c));
                        c
                    }
                }
            })
            .collect()
    }

    /// The place of capture `c`'s stack `id`, if it is sampled.
    pub fn place(&self, c: u32, id: u64) -> Option<usize> {
        let index = self.index.get(c as usize)?;
        index.place(usize::try_from(id).ok()?)
    }

    /// How many sampled stacks there are.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// The places of the stacks, ordered by capture name and then stack id
    /// (as `ORDER BY capture, stack_id` orders the rows of `stacks`).
    pub fn in_order(&self) -> Vec<usize> {
        let mut names: Vec<(&str, u32)> = self.captures.iter().zip(0..).collect();
        names.sort_unstable();
        let mut rank = vec![0u32; names.len()];
        for (r, &(_, c)) in (0..).zip(&names) {
            rank[c as usize] = r;
        }
        let mut keyed: Vec<(u32, u32, usize)> = (self.stacks.iter().enumerate())
            .filter(|(_, &(c, _))| (c as usize) < rank.len())
            .map(|(place, &(c, id))| (rank[c as usize], id, place))
            .collect();
        keyed.sort_unstable();
        keyed.into_iter().map(|(_, _, place)| place).collect()
    }

    /// The set of the stack at `place` (its number; [`Self::set`] lists
    /// it).
    pub fn set_of(&self, place: usize) -> u32 {
        self.set_of[place]
    }

    /// Set `n`'s function ids, sorted.
    pub fn set(&self, n: u32) -> &[u32] {
        self.sets.get(n)
    }

    /// How many sets there are.
    pub fn sets(&self) -> u32 {
        self.sets.len()
    }

    /// Whether the leaf frame of the stack at `place` has a symbol.
    pub fn leaf_resolved(&self, place: usize) -> bool {
        self.leaf_resolved.get(place)
    }

    /// The function ids of the stack at `place`, leaf first, one per frame;
    /// `None` where paths were not kept.
    pub fn path(&self, place: usize) -> Option<&[u32]> {
        let end = *self.path_ends.get(place)?;
        let start = place.checked_sub(1).map_or(0, |p| self.path_ends[p]);
        Some(&self.path_functions[start..end])
    }

    /// How many frames the kept paths hold together.
    pub fn path_frames(&self) -> usize {
        self.path_functions.len()
    }

    /// The function of capture `c`'s frame `frame` (0, `[unknown]`, for a
    /// frame without one).
    pub fn function_of(&self, c: u32, frame: u64) -> u32 {
        let frames = self.frames.get(c as usize).map_or(&[][..], Vec::as_slice);
        usize::try_from(frame)
            .ok()
            .and_then(|f| frames.get(f))
            .copied()
            .unwrap_or(0)
    }

    /// The largest function id.
    pub fn last_function(&self) -> u32 {
        self.names.last()
    }

    /// Calls `f` with function `id`'s symbol and DSO, as the `functions`
    /// table names it.
    pub fn with_name<R>(&self, id: u32, f: impl FnOnce(&str, &str) -> R) -> R {
        self.names.with_name(id, f)
    }

    /// The id function `id`'s name is summed under: its own, but for
    /// `[unknown]` (id 0), which a symbol `[unknown]` without a DSO names
    /// too. The SQL sums and joins functions by name, so as one.
    pub fn canonical(&self, id: u32) -> u32 {
        if id == 0 {
            self.unknown
        } else {
            id
        }
    }

    /// A key that orders function ids as their names (symbol, then DSO)
    /// order, `[unknown]`'s (id 0) among them.
    pub fn name_order(&self, id: u32) -> u64 {
        match id {
            0 => u64::from(self.unknown_at) << 1,
            id => (u64::from(id) << 1) | 1,
        }
    }

    /// The functions table these stacks' ids are rows of.
    pub(super) fn names(&self) -> &Arc<FunctionNames> {
        &self.names
    }

    /// The captures' names, by number.
    pub(super) fn capture_names(&self) -> impl Iterator<Item = &str> {
        self.captures.iter()
    }
}

/// The first of ids 1 to the last (ranked by symbol and DSO, as their
/// texts order) whose name is not below `symbol` in `dso` (one past the
/// last if there is none), found by bisection.
fn lower_bound(names: &FunctionNames, symbol: &str, dso: &str) -> u32 {
    let (mut lo, mut hi) = (1u32, names.last() + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match names.with_name(mid, |s, d| (s, d).cmp(&(symbol, dso))) {
            std::cmp::Ordering::Less => lo = mid + 1,
            _ => hi = mid,
        }
    }
    lo
}

/// Whether id `at` (from [`lower_bound`]) is function `symbol` in `dso`.
fn named_at(names: &FunctionNames, at: u32, symbol: &str, dso: &str) -> bool {
    at <= names.last() && names.with_name(at, |s, d| (s, d) == (symbol, dso))
}

/// Each sampled stack's place, by stack id, in a few bytes per stack of
/// the capture: a bit per stack id (whether it is sampled), the sampled
/// ones counted up to each 64 ids, and the places of the sampled stacks
/// in id order. A lookup reads three small arrays (a system-wide capture
/// has many stacks, most of them never sampled: an array indexed by stack
/// id was far larger).
#[derive(Debug, Default)]
pub(super) struct StackIndex {
    sampled: Vec<u64>,
    /// Sampled stacks before each word of `sampled`.
    before: Vec<u32>,
    /// The places, by rank among the sampled stacks.
    places: Vec<u32>,
}

/// Stack ids [`StackIndex::build`] takes: up to this many per sampled
/// stack, plus [`ID_SLACK`] (the index then costs at most 32 bytes a
/// sampled stack, and 2 MB). A system-wide capture has about twelve
/// stacks per sampled one; a table with ids beyond is summed by the SQL
/// instead.
const ID_SPREAD: usize = 256;
const ID_SLACK: usize = 1 << 24;

impl StackIndex {
    /// Marks stack `id` sampled (before [`StackIndex::rank_all`]); false
    /// if it was already.
    fn mark(&mut self, id: usize) -> bool {
        let word = id / 64;
        if self.sampled.len() <= word {
            self.sampled.resize(word + 1, 0);
        }
        let bit = 1 << (id % 64);
        let new = self.sampled[word] & bit == 0;
        self.sampled[word] |= bit;
        new
    }

    /// Counts the marked stacks, for [`StackIndex::rank`] (which finds
    /// none before).
    fn rank_all(&mut self) {
        let mut n = 0u32;
        self.before = self
            .sampled
            .iter()
            .map(|w| {
                let at = n;
                n += w.count_ones();
                at
            })
            .collect();
        self.places = vec![0; n as usize];
    }

    /// Stack `id`'s rank among the sampled stacks, if it is one.
    fn rank(&self, id: usize) -> Option<usize> {
        let (word, bit) = (id / 64, id % 64);
        let w = *self.sampled.get(word)?;
        if w & (1 << bit) == 0 {
            return None;
        }
        let below = (w & ((1u64 << bit) - 1)).count_ones();
        Some((self.before.get(word)? + below) as usize)
    }

    /// The place of sampled stack `id`.
    fn place(&self, id: usize) -> Option<usize> {
        Some(*self.places.get(self.rank(id)?)? as usize)
    }

    /// Each capture's index (by number in `captures`), and each stack's
    /// (capture number, stack id) in the order read. `None` for a stacks
    /// table perfq does not write, which the SQL sums instead: a stack id
    /// listed twice (the SQL's join then counts its samples twice), or far
    /// beyond the sampled stacks' count (perfq numbers stacks from 0, a
    /// sampled one in every few: the index would be mostly empty words).
    #[allow(clippy::type_complexity)]
    fn build(
        ids: &[[ArrayRef; 2]],
        captures: &mut TextIds,
    ) -> Result<Option<(Vec<StackIndex>, Vec<(u32, u32)>)>, Error> {
        let count: usize = ids.iter().map(|[_, s]| s.len()).sum();
        let largest = ID_SPREAD.saturating_mul(count).saturating_add(ID_SLACK);
        let mut index: Vec<StackIndex> = Vec::new();
        let mut stacks = Vec::with_capacity(count);
        for [capture, stack_id] in ids {
            let capture = datafusion::arrow::compute::cast(capture, &DataType::Utf8)
                .map_err(|e| Error::Shape(format!("stacks.capture: {e}")))?;
            let capture = capture.as_string::<i32>();
            let stack_ids = datafusion::arrow::compute::cast(stack_id, &DataType::UInt64)
                .map_err(|e| Error::Shape(format!("stacks.stack_id: {e}")))?;
            let stack_ids = stack_ids.as_primitive::<UInt64Type>();
            for row in 0..stack_ids.len() {
                // A row without a capture or id: no sample finds it, but
                // its place is kept (places follow the rows read).
                if !(stack_ids.is_valid(row) && capture.is_valid(row)) {
                    stacks.push((u32::MAX, u32::MAX));
                    continue;
                }
                let id = stack_ids.value(row);
                let id32 = match u32::try_from(id) {
                    Ok(i) if i as usize <= largest => i,
                    _ => return Ok(None),
                };
                let c = text_id(captures, capture.value(row))?;
                if index.len() <= c as usize {
                    index.resize_with(c as usize + 1, StackIndex::default);
                }
                if !index[c as usize].mark(id32 as usize) {
                    return Ok(None);
                }
                stacks.push((c, id32));
            }
        }
        index.iter_mut().for_each(StackIndex::rank_all);
        for (place, &(c, id)) in stacks.iter().enumerate() {
            if let Some(index) = index.get_mut(c as usize) {
                if let Some(r) = index.rank(id as usize) {
                    index.places[r] = place as u32;
                }
            }
        }
        Ok(Some((index, stacks)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use datafusion::arrow::array::{ArrayRef, StringArray, UInt64Array};
    use perfq_ids::TextIds;

    use super::StackIndex;

    /// The index of stacks given as (capture, stack id) rows.
    fn index_of(rows: &[(&str, u64)]) -> Option<Vec<StackIndex>> {
        let captures: StringArray = rows.iter().map(|r| Some(r.0)).collect();
        let ids = UInt64Array::from_iter_values(rows.iter().map(|r| r.1));
        let columns = [[Arc::new(captures) as ArrayRef, Arc::new(ids) as ArrayRef]];
        StackIndex::build(&columns, &mut TextIds::new())
            .unwrap()
            .map(|(index, _)| index)
    }

    /// Each capture's stacks found by id; a stack id listed twice, or one
    /// far beyond the stacks' count (no table perfq writes), leaves the
    /// sums to the SQL.
    #[test]
    fn index_of_stacks_tables() {
        let index = index_of(&[("a", 5), ("b", 5), ("a", 9)]).unwrap();
        assert_eq!(index[0].place(5), Some(0));
        assert_eq!(index[1].place(5), Some(1));
        assert_eq!(index[0].place(9), Some(2));
        assert_eq!(index[0].place(6), None);
        assert!(index_of(&[("a", 9), ("a", 9)]).is_none());
        assert!(index_of(&[("a", 1 << 30)]).is_none());
    }

    /// Ranks of sampled stacks across words, and none for the others or
    /// past the end.
    #[test]
    fn index_finds_sampled_stacks() {
        let sampled = [0usize, 1, 63, 64, 65, 200, 1_000];
        let mut index = StackIndex::default();
        for &id in &sampled {
            assert!(index.mark(id));
        }
        index.rank_all();
        for (rank, &id) in sampled.iter().enumerate() {
            assert_eq!(index.rank(id), Some(rank), "stack {id}");
            index.places[rank] = 10 * id as u32;
        }
        for &id in &sampled {
            assert_eq!(index.place(id), Some(10 * id));
        }
        for id in [2, 62, 66, 199, 999, 1_001, 1 << 20] {
            assert_eq!(index.place(id), None, "stack {id}");
        }
    }
}
