//! The page's call tree: the sampled stacks' paths of functions, named as
//! `perf report` names them (symbol, DSO), its samples per (interval,
//! thread, node), and the tree cut to the nodes that hold a share of them.

use perfq_query::stack_counts::StackCounts;
use perfq_query::views::SampledStacks;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::sync::Arc;

use crate::Error;

/// The call tree of the sampled stacks: nodes (parent, function), node 0
/// the root; a node's id is its place in a walk of the paths sorted by
/// their functions (a caller before its callees), and [`CallTree::first`]
/// says when the page's order met it.
pub(super) struct CallTree {
    /// Each node's parent (the root's: 0) and function (tree id; `ROOT`
    /// for the root).
    parent: Vec<u32>,
    function: Vec<u32>,
    /// Each node's place in the walk of the stacks in (capture, stack id)
    /// order, each path from its root: that walk's first stack through it
    /// (high half) and its depth there. The page numbers nodes so.
    first: Vec<u64>,
    /// The functions, by tree id: each one's function id (as
    /// [`SampledStacks::canonical`] gives it).
    functions: Vec<u32>,
    /// By function id: its tree id (`ROOT`: none yet).
    tree_id: Vec<u32>,
    stacks: Arc<SampledStacks>,
    /// Each sampled stack's leaf node, by its place.
    leaf_of: Vec<u32>,
}

/// The root's parent and function.
const ROOT: u32 = u32::MAX;

/// The sampled stacks' paths of tree functions, from the root, in
/// (capture, stack id) order, end to end.
struct Paths {
    functions: Vec<u32>,
    ends: Vec<usize>,
}

impl Paths {
    /// The path of the stack `w`-th in order.
    fn get(&self, w: usize) -> &[u32] {
        let start = w.checked_sub(1).map_or(0, |b| self.ends[b]);
        &self.functions[start..self.ends[w]]
    }
}

impl CallTree {
    /// The tree of the sampled stacks' paths. Tree functions are numbered
    /// as the stacks in (capture, stack id) order meet them, each path
    /// from its root; nodes are made from the paths sorted, where the
    /// paths through a node are side by side: one comparison a frame, not
    /// a lookup of (caller, function) in a table of millions of nodes (a
    /// system-wide capture's unresolved frames make nearly every path a
    /// branch of its own).
    pub(super) fn of(stacks: Arc<SampledStacks>) -> Self {
        let mut tree = CallTree {
            parent: vec![0],
            function: vec![ROOT],
            first: vec![0],
            functions: Vec::new(),
            tree_id: vec![ROOT; stacks.last_function() as usize + 1],
            leaf_of: vec![0; stacks.len()],
            stacks: stacks.clone(),
        };
        let order = stacks.in_order();
        let mut paths = Paths {
            functions: Vec::with_capacity(stacks.path_frames()),
            ends: Vec::with_capacity(order.len()),
        };
        for &place in &order {
            for &id in stacks.path(place).unwrap_or_default().iter().rev() {
                let f = tree.tree_function(id);
                paths.functions.push(f);
            }
            paths.ends.push(paths.functions.len());
        }
        // (A stable sort: equal paths stay in order.)
        let mut sorted: Vec<usize> = (0..order.len()).collect();
        sorted.sort_by(|&a, &b| paths.get(a).cmp(paths.get(b)));
        tree.add_paths(&paths, &sorted, &order);
        tree
    }

    /// Makes the nodes of `paths`, taken in the `sorted` order (`order`:
    /// each one's stack's place).
    fn add_paths(&mut self, paths: &Paths, sorted: &[usize], order: &[usize]) {
        // The nodes of the path before, from the root.
        let mut open: Vec<u32> = Vec::new();
        let mut before: &[u32] = &[];
        for &w in sorted {
            let path = paths.get(w);
            let shared = before.iter().zip(path).take_while(|(a, b)| a == b).count();
            open.truncate(shared);
            for (depth, &n) in open.iter().enumerate() {
                let at = &mut self.first[n as usize];
                *at = (*at).min(((w as u64) << 32) | depth as u64);
            }
            for (depth, &f) in path.iter().enumerate().skip(shared) {
                let id = self.parent.len() as u32;
                self.parent.push(open.last().copied().unwrap_or(0));
                self.function.push(f);
                self.first.push(((w as u64) << 32) | depth as u64);
                open.push(id);
            }
            self.leaf_of[order[w]] = open.last().copied().unwrap_or(0);
            before = path;
        }
    }

    /// The tree id of function `id`, the next one if it is new.
    fn tree_function(&mut self, id: u32) -> u32 {
        let id = self.stacks.canonical(id);
        let Some(at) = self.tree_id.get_mut(id as usize) else {
            return ROOT;
        };
        if *at == ROOT {
            *at = self.functions.len() as u32;
            self.functions.push(id);
        }
        *at
    }

    /// The tree id of function (`symbol`, `dso`), the next one if it is
    /// new.
    pub(super) fn function(&mut self, symbol: &str, dso: &str) -> Result<u32, Error> {
        match self.stacks.function_id(symbol, dso) {
            Some(id) => Ok(self.tree_function(id)),
            None => Err(Error::Query(perfq_query::Error::Shape(format!(
                "function {symbol} in {dso} of the sums, which the functions table lacks"
            )))),
        }
    }

    /// Function `f`'s (symbol, DSO).
    pub(super) fn names(&self, f: u32) -> (String, String) {
        let id = self.functions[f as usize];
        self.stacks
            .with_name(id, |s, d| (s.to_string(), d.to_string()))
    }

    /// How many functions there are.
    pub(super) fn functions(&self) -> usize {
        self.functions.len()
    }

    /// How many nodes there are, the root's included.
    fn len(&self) -> usize {
        self.parent.len()
    }
}

/// Samples per (interval, thread, node).
pub(super) type Cells = FxHashMap<(u64, usize, usize), (u64, u64)>;

/// Samples and periods of (interval, thread, node), a cell's more than
/// once where several stacks end in one node.
pub(super) type NodeCells = Vec<((u64, usize, usize), (u64, u64))>;

/// The samples on the tree.
pub(super) struct Counts {
    /// Samples and periods per (interval, thread, node).
    pub(super) cells: NodeCells,
    /// Samples, and those whose leaf is a resolved function.
    pub(super) all: u64,
    pub(super) resolved: u64,
    /// Intervals met.
    pub(super) buckets: u64,
}

impl Counts {
    /// The samples of `counts` on `tree`: a sample without a sampled
    /// stack at the root.
    pub(super) fn of(counts: &StackCounts, tree: &CallTree) -> Self {
        let cells = counts
            .cells()
            .map(|((b, thread, place), sums)| {
                let node = place.map_or(0, |p| tree.leaf_of[p] as usize);
                ((b, thread, node), sums)
            })
            .collect();
        Counts {
            cells,
            all: counts.all,
            resolved: counts.resolved,
            buckets: counts.intervals,
        }
    }
}

/// The samples per (interval, thread, kept node) as the page reads them:
/// columns, written as they are (hundreds of thousands of numbers, each a
/// JSON value of its own when made as one), fields in the order a JSON
/// object's keys are written (sorted).
#[derive(Serialize)]
pub(super) struct SampleColumns {
    bucket: Vec<u64>,
    count: Vec<u64>,
    node: Vec<usize>,
    period: Vec<u64>,
    thread: Vec<usize>,
}

/// The tree cut to the nodes with at least a threshold of samples below
/// them: a cut node's samples count in its nearest kept caller.
pub(super) struct Pruned {
    /// Each node's kept node (itself, or the caller it counts in).
    pub(super) kept: Vec<usize>,
    /// The kept nodes: parent and function (tree ids; `ROOT` for the
    /// root).
    pub(super) parent: Vec<usize>,
    pub(super) function: Vec<u32>,
    /// Nodes with samples that were cut.
    pub(super) cut: usize,
}

impl Pruned {
    /// `tree` cut to the nodes with `threshold` samples or more, the kept
    /// ones numbered as [`CallTree::first`] orders them.
    pub(super) fn new(tree: &CallTree, counts: &Counts, threshold: u64) -> Self {
        let n = tree.len();
        let mut tot = vec![0u64; n];
        for ((_, _, node), (c, _)) in &counts.cells {
            tot[*node] += c;
        }
        // (A node's id is past its caller's.)
        for i in (1..n).rev() {
            tot[tree.parent[i] as usize] += tot[i];
        }
        let mut kept: Vec<usize> = (1..n).filter(|&i| tot[i] >= threshold).collect();
        kept.sort_unstable_by_key(|&i| tree.first[i]);
        let mut p = Pruned {
            kept: vec![usize::MAX; n],
            parent: vec![0usize],
            function: vec![ROOT],
            cut: 0,
        };
        p.kept[0] = 0;
        // A kept node's caller is kept (it has at least its samples), and
        // met before it.
        for &i in &kept {
            p.kept[i] = p.parent.len();
            p.parent.push(p.kept[tree.parent[i] as usize]);
            p.function.push(tree.function[i]);
        }
        for (i, &below) in tot.iter().enumerate().skip(1) {
            if p.kept[i] == usize::MAX {
                p.kept[i] = p.kept[tree.parent[i] as usize];
                p.cut += usize::from(below > 0);
            }
        }
        p
    }

    /// The samples per (interval, thread, kept node), as the page reads
    /// them: columns, in that order.
    pub(super) fn samples(&self, cells: NodeCells) -> SampleColumns {
        let mut merged = Cells::default();
        for ((b, t, node), (c, w)) in cells {
            let e = merged.entry((b, t, self.kept[node])).or_default();
            e.0 += c;
            e.1 = e.1.wrapping_add(w);
        }
        let mut cells: Vec<_> = merged.into_iter().collect();
        cells.sort_unstable();
        SampleColumns {
            bucket: cells.iter().map(|c| c.0 .0).collect(),
            count: cells.iter().map(|c| c.1 .0).collect(),
            node: cells.iter().map(|c| c.0 .2).collect(),
            period: cells.iter().map(|c| c.1 .1).collect(),
            thread: cells.iter().map(|c| c.0 .1).collect(),
        }
    }
}
