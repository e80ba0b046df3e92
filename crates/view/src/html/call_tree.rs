//! The page's call tree: the sampled stacks' paths of functions, named as
//! `perf report` names them (symbol, DSO), its samples per (interval,
//! thread, node), and the tree cut to the nodes that hold a share of them.

use perfq_query::stack_counts::StackCounts;
use perfq_query::views::SampledStacks;
use rustc_hash::FxHashMap;
use serde::Serialize;
use std::sync::Arc;

/// The call tree of the sampled stacks, as their paths of functions
/// sorted: the paths through a node lie side by side, so that a node is
/// a run of them, and its samples their sum. No node is made until it is
/// known to be kept ([`Pruned`]): a system-wide capture's unresolved
/// frames make nearly every path a branch of its own, millions of nodes
/// of which the page shows a few thousand.
pub(super) struct CallTree {
    /// The functions, by tree id: each one's function id (as
    /// [`SampledStacks::canonical`] gives it).
    functions: Vec<u32>,
    /// By function id: its tree id (`ROOT`: none yet).
    tree_id: Vec<u32>,
    stacks: Arc<SampledStacks>,
    /// The paths, in (capture, stack id) order: the page's order, in
    /// which nodes and functions are numbered as met.
    paths: Paths,
    /// Each path's stack's place.
    order: Vec<usize>,
    /// The paths (by their place in that order) sorted by function, equal
    /// paths in that order.
    sorted: Vec<usize>,
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

/// Bits of a function in a [`digit`]: tree ids below `2^21 - 1`.
const DIGIT_BITS: u32 = 21;

/// Functions in a [`digit`].
const DIGIT: usize = 3;

/// The functions of `path` from `depth` on, three of them, as one number
/// that orders as they do (0 where the path has ended: a prefix first).
fn digit(path: &[u32], depth: usize) -> u64 {
    (0..DIGIT).fold(0, |d, i| {
        let f = path.get(depth + i).map_or(0, |&f| u64::from(f) + 1);
        (d << DIGIT_BITS) | f
    })
}

/// Sorts `sorted` (paths by their place in order, 0 up) as their paths
/// compare, equal paths in that order. A sort of whole paths walks their
/// shared prefixes at each comparison; here each run of paths that agree
/// so far is sorted by its next three functions as one number (with its
/// place, which keeps equal paths in order), then each run that agrees
/// on those and goes on, by the next three. `functions` bounds the tree
/// ids.
fn sort_paths(paths: &Paths, functions: usize, sorted: &mut [usize]) {
    let fits = functions < (1 << DIGIT_BITS) - 1 && u32::try_from(sorted.len()).is_ok();
    if !fits {
        sorted.sort_by(|&a, &b| paths.get(a).cmp(paths.get(b)));
        return;
    }
    let last = (1 << DIGIT_BITS) - 1;
    let mut runs = vec![(0, sorted.len(), 0)];
    let mut keyed: Vec<(u64, u32)> = Vec::new();
    while let Some((lo, hi, depth)) = runs.pop() {
        let run = &mut sorted[lo..hi];
        keyed.clear();
        // (Places fit in u32: checked above.)
        keyed.extend(run.iter().map(|&w| (digit(paths.get(w), depth), w as u32)));
        keyed.sort_unstable();
        for (at, &(_, w)) in run.iter_mut().zip(&keyed) {
            *at = w as usize;
        }
        let mut start = lo;
        for same in keyed.chunk_by(|a, b| a.0 == b.0) {
            // Paths that agree on all three go on past them, or end with
            // them alike.
            if same.len() > 1 && same[0].0 & last != 0 {
                runs.push((start, start + same.len(), depth + DIGIT));
            }
            start += same.len();
        }
    }
}

/// A node, as the run of sorted paths through it.
struct Span {
    /// The sorted paths `lo..hi` go through it.
    lo: usize,
    hi: usize,
    depth: usize,
    function: u32,
    /// Its place in the walk of the paths in the page's order, each from
    /// its root: the first path through it (high half) and its depth.
    first: u64,
}

/// A node of the path being walked, not yet closed: its samples and
/// first path so far (its callees' are added as they close).
struct Open {
    function: u32,
    lo: usize,
    /// The first path through it, in the page's order.
    first: usize,
    samples: u64,
}

/// The nodes closed so far: those kept, and how many others had samples.
struct Closed {
    threshold: u64,
    kept: Vec<Span>,
    cut: usize,
}

impl Closed {
    /// Closes the nodes of `open` deeper than `to`: their runs end before
    /// the sorted path `hi`.
    fn close(&mut self, open: &mut Vec<Open>, to: usize, hi: usize) {
        while open.len() > to {
            let depth = open.len() - 1;
            let Some(o) = open.pop() else { break };
            if let Some(caller) = open.last_mut() {
                caller.samples += o.samples;
                caller.first = caller.first.min(o.first);
            }
            if o.samples >= self.threshold {
                let (lo, function) = (o.lo, o.function);
                let first = ((o.first as u64) << 32) | depth as u64;
                self.kept.push(Span {
                    lo,
                    hi,
                    depth,
                    function,
                    first,
                });
            } else if o.samples > 0 {
                self.cut += 1;
            }
        }
    }
}

impl CallTree {
    /// The sampled stacks' paths, sorted. Tree functions are numbered as
    /// the stacks in (capture, stack id) order meet them, each path from
    /// its root.
    pub(super) fn of(stacks: Arc<SampledStacks>) -> Self {
        let order = stacks.in_order();
        let mut tree = CallTree {
            functions: Vec::new(),
            tree_id: vec![ROOT; stacks.last_function() as usize + 1],
            paths: Paths {
                functions: Vec::with_capacity(stacks.path_frames()),
                ends: Vec::with_capacity(order.len()),
            },
            sorted: (0..order.len()).collect(),
            order: Vec::new(),
            stacks: stacks.clone(),
        };
        for &place in &order {
            for &id in stacks.path(place).unwrap_or_default().iter().rev() {
                let f = tree.tree_function(id);
                tree.paths.functions.push(f);
            }
            tree.paths.ends.push(tree.paths.functions.len());
        }
        tree.order = order;
        sort_paths(&tree.paths, tree.functions.len(), &mut tree.sorted);
        tree
    }

    /// The nodes with `threshold` samples or more (`samples`: each
    /// sampled stack's, by place), and how many nodes with samples have
    /// fewer. A node's samples are those of the run of sorted paths
    /// through it: those that end in it, and its callees' (added as they
    /// close, not frame by frame of every path); a callee's run lies
    /// within its caller's, so that a kept node's callers are kept.
    fn kept(&self, samples: &[u64], threshold: u64) -> (Vec<Span>, usize) {
        let mut closed = Closed {
            threshold,
            kept: Vec::new(),
            cut: 0,
        };
        let mut open: Vec<Open> = Vec::new();
        let mut before: &[u32] = &[];
        for (k, &w) in self.sorted.iter().enumerate() {
            let path = self.paths.get(w);
            let shared = before.iter().zip(path).take_while(|(a, b)| a == b).count();
            closed.close(&mut open, shared, k);
            for &function in &path[shared..] {
                open.push(Open {
                    function,
                    lo: k,
                    first: w,
                    samples: 0,
                });
            }
            // (Paths end in the root where they are empty.)
            if let Some(end) = open.last_mut().filter(|_| !path.is_empty()) {
                end.samples += samples.get(self.order[w]).copied().unwrap_or(0);
                end.first = end.first.min(w);
            }
            before = path;
        }
        closed.close(&mut open, 0, self.sorted.len());
        (closed.kept, closed.cut)
    }

    /// The tree id of function `id` of the sampled stacks (a path's, or
    /// one `function_sums::of_counts_by_id` gives), the next one if it is
    /// new.
    pub(super) fn tree_function(&mut self, id: u32) -> u32 {
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
}

/// Samples and periods per (interval, thread, kept node).
type Cells = FxHashMap<(u64, usize, usize), (u64, u64)>;

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
    /// Each sampled stack's node, by place: its leaf's nearest kept node
    /// (0: the root).
    leaf: Vec<usize>,
    /// The kept nodes: parent and function (tree ids; `ROOT` for the
    /// root), node 0 the root, the others numbered as the page's order
    /// meets them.
    pub(super) parent: Vec<usize>,
    pub(super) function: Vec<u32>,
    /// Nodes with samples that were cut.
    pub(super) cut: usize,
}

impl Pruned {
    /// The samples of each sampled stack, by place.
    pub(super) fn samples_per_stack(counts: &StackCounts) -> Vec<u64> {
        let mut samples = vec![0u64; counts.stacks.len()];
        for ((_, _, place), _) in counts.samples() {
            if let Some(n) = place.and_then(|p| samples.get_mut(p)) {
                *n += 1;
            }
        }
        samples
    }

    /// `tree` cut to the nodes with `threshold` samples or more
    /// (`per_stack`: each sampled stack's, by place).
    pub(super) fn new(tree: &CallTree, per_stack: &[u64], threshold: u64) -> Self {
        let (spans, cut) = tree.kept(per_stack, threshold);
        let mut by_first: Vec<usize> = (0..spans.len()).collect();
        by_first.sort_unstable_by_key(|&i| spans[i].first);
        let mut id = vec![0usize; spans.len()];
        let mut p = Pruned {
            leaf: vec![0; tree.stacks.len()],
            parent: vec![0; spans.len() + 1],
            function: vec![ROOT; spans.len() + 1],
            cut,
        };
        for (n, &i) in (1..).zip(&by_first) {
            id[i] = n;
            p.function[n] = spans[i].function;
        }
        p.link(tree, &spans, &id);
        p
    }

    /// Sets each kept node's parent and each stack's node: a walk of the
    /// sorted paths with the kept nodes that hold the one walked, from the
    /// root (`id`: each span's node).
    fn link(&mut self, tree: &CallTree, spans: &[Span], id: &[usize]) {
        let mut pre: Vec<usize> = (0..spans.len()).collect();
        pre.sort_unstable_by_key(|&i| (spans[i].lo, spans[i].depth));
        let mut next = pre.into_iter().peekable();
        let mut holding: Vec<usize> = Vec::new();
        for (k, &w) in tree.sorted.iter().enumerate() {
            while holding.last().is_some_and(|&s| spans[s].hi <= k) {
                holding.pop();
            }
            while let Some(s) = next.next_if(|&s| spans[s].lo == k) {
                self.parent[id[s]] = holding.last().map_or(0, |&t| id[t]);
                holding.push(s);
            }
            self.leaf[tree.order[w]] = holding.last().map_or(0, |&t| id[t]);
        }
    }

    /// The samples per (interval, thread, kept node), as the page reads
    /// them: columns, in that order.
    pub(super) fn samples(&self, counts: &StackCounts) -> SampleColumns {
        let mut merged = Cells::default();
        for ((b, t, place), w) in counts.samples() {
            let node = place.and_then(|p| self.leaf.get(p)).copied().unwrap_or(0);
            let e = merged.entry((b, t, node)).or_default();
            e.0 += 1;
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

#[cfg(test)]
mod tests {
    use super::{sort_paths, Paths};

    /// Paths end to end, from lists.
    fn paths(lists: &[Vec<u32>]) -> Paths {
        let mut p = Paths {
            functions: Vec::new(),
            ends: Vec::new(),
        };
        for l in lists {
            p.functions.extend(l);
            p.ends.push(p.functions.len());
        }
        p
    }

    /// The order of a stable sort of whole paths: with equal paths,
    /// prefixes of others, empty paths, paths that agree on three
    /// functions and more, and a bound on the functions too large for the
    /// digits (the whole-path sort then).
    #[test]
    fn paths_sort_as_a_stable_sort_of_whole_paths() {
        // A small generator: the same lists in every run.
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n) as u32
        };
        let mut lists: Vec<Vec<u32>> = vec![vec![], vec![1, 2, 3], vec![1, 2], vec![1, 2, 3]];
        for _ in 0..2000 {
            // Few functions near the root, so that paths share prefixes.
            let len = next(12) as usize;
            lists.push((0..len).map(|d| next(2 + d as u64)).collect());
        }
        let p = paths(&lists);
        let mut want: Vec<usize> = (0..lists.len()).collect();
        want.sort_by(|&a, &b| p.get(a).cmp(p.get(b)));
        for bound in [16, 1 << 22] {
            let mut got: Vec<usize> = (0..lists.len()).collect();
            sort_paths(&p, bound, &mut got);
            assert_eq!(got, want, "functions below {bound}");
        }
    }
}
