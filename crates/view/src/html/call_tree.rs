//! The page's call tree: the profile's stacks as paths of functions named
//! as `perf report` names them (symbol, DSO), its samples per (interval,
//! thread, node), and the tree cut to the nodes that hold a share of them.

use std::collections::HashMap;

use perfq_ids::{Interner, Numbering, TextIds};
use perfq_query::profile::Profile;
use serde_json::{json, Value};

use crate::Error;

/// The call tree of a profile's stacks: nodes (parent, function), node 0
/// the root.
pub(super) struct CallTree {
    /// Each node's (parent, function); the root's is (`ROOT`, `ROOT`).
    nodes: Interner<(u32, u32)>,
    /// The functions, (symbol, DSO) numbers, by id.
    functions: Interner<(u32, u32)>,
    symbols: TextIds,
    dsos: TextIds,
    /// Each stack's leaf node.
    pub(super) leaf_of: Vec<usize>,
}

/// The root's parent and function.
const ROOT: u32 = u32::MAX;

impl CallTree {
    /// The tree of `p`'s stacks.
    pub(super) fn of(p: &Profile) -> Result<Self, Error> {
        let mut tree = CallTree {
            nodes: Interner::new(),
            functions: Interner::new(),
            symbols: TextIds::new(),
            dsos: TextIds::new(),
            leaf_of: Vec::with_capacity(p.stacks.len()),
        };
        tree.nodes.number((ROOT, ROOT));
        // A profile function's tree function, found once: stacks repeat
        // their functions many times over.
        let mut of_profile = vec![ROOT; p.functions.len()];
        for stack in &p.stacks {
            let mut node = 0;
            for &l in stack.iter().rev() {
                let pf = p.locations[l].symbol.function;
                let f = match of_profile[pf] {
                    ROOT => {
                        let f = &p.functions[pf];
                        let dso = f.mapping.map_or("[unknown]", |m| &p.mappings[m].name);
                        let id = tree.function(&f.name, dso)?;
                        of_profile[pf] = id;
                        id
                    }
                    id => id,
                };
                node = tree.nodes.number((node, f));
            }
            tree.leaf_of.push(node as usize);
        }
        Ok(tree)
    }

    /// The id of function (`symbol`, `dso`), the next one if it is new.
    pub(super) fn function(&mut self, symbol: &str, dso: &str) -> Result<u32, Error> {
        let too_many = || Error::TooLarge("the names of the call tree's functions".into());
        let symbol = self.symbols.id(symbol).ok_or_else(too_many)?;
        let dso = self.dsos.id(dso).ok_or_else(too_many)?;
        Ok(self.functions.number((symbol, dso)))
    }

    /// Function `f`'s (symbol, DSO).
    pub(super) fn names(&self, f: u32) -> (&str, &str) {
        let (symbol, dso) = self.functions.keys()[f as usize];
        (self.symbols.text(symbol), self.dsos.text(dso))
    }

    /// How many functions there are.
    pub(super) fn functions(&self) -> usize {
        self.functions.len()
    }

    /// How many nodes there are, the root's included.
    fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Node `n`'s parent (the root's own: 0).
    fn parent(&self, n: usize) -> usize {
        match self.nodes.keys()[n].0 {
            ROOT => 0,
            p => p as usize,
        }
    }

    /// Node `n`'s function (`ROOT` for the root).
    fn function_of(&self, n: usize) -> u32 {
        self.nodes.keys()[n].1
    }
}

/// A profile's samples on the tree.
pub(super) struct Counts {
    /// Samples and periods per (interval, thread, node).
    pub(super) cells: HashMap<(u64, usize, usize), (u64, u64)>,
    /// Samples, and those whose leaf is a resolved function.
    pub(super) all: u64,
    pub(super) resolved: u64,
    /// Intervals met.
    pub(super) buckets: u64,
}

impl Counts {
    /// The runs of `p` on `tree`, in intervals of `interval_ns`.
    pub(super) fn of(p: &Profile, tree: &CallTree, interval_ns: u64) -> Self {
        let mut c = Counts {
            cells: HashMap::new(),
            all: 0,
            resolved: 0,
            buckets: 0,
        };
        for r in &p.runs {
            let node = r.stack.map_or(0, |s| tree.leaf_of[s]);
            let b = p.interval(r, interval_ns);
            c.buckets = c.buckets.max(b + 1);
            let e = c.cells.entry((b, r.thread, node)).or_default();
            e.0 += r.samples;
            e.1 = e.1.wrapping_add(r.period);
            c.all += r.samples;
            if r.stack
                .and_then(|s| p.stacks[s].first())
                .is_some_and(|&l| p.locations[l].resolved)
            {
                c.resolved += r.samples;
            }
        }
        c
    }
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
    /// `tree` cut to the nodes with `threshold` samples or more.
    pub(super) fn new(tree: &CallTree, counts: &Counts, threshold: u64) -> Self {
        let n = tree.len();
        let mut tot = vec![0u64; n];
        for ((_, _, node), (c, _)) in &counts.cells {
            tot[*node] += c;
        }
        for i in (1..n).rev() {
            tot[tree.parent(i)] += tot[i];
        }
        let mut p = Pruned {
            kept: vec![0usize; n],
            parent: vec![0usize],
            function: vec![ROOT],
            cut: 0,
        };
        for (i, &below) in tot.iter().enumerate().skip(1) {
            if below >= threshold {
                p.kept[i] = p.parent.len();
                p.parent.push(p.kept[tree.parent(i)]);
                p.function.push(tree.function_of(i));
            } else {
                p.kept[i] = p.kept[tree.parent(i)];
                p.cut += usize::from(below > 0);
            }
        }
        p
    }

    /// The samples per (interval, thread, kept node), as the page reads
    /// them: columns, in that order.
    pub(super) fn samples(&self, cells: HashMap<(u64, usize, usize), (u64, u64)>) -> Value {
        let mut merged: HashMap<(u64, usize, usize), (u64, u64)> = HashMap::new();
        for ((b, t, node), (c, w)) in cells {
            let e = merged.entry((b, t, self.kept[node])).or_default();
            e.0 += c;
            e.1 = e.1.wrapping_add(w);
        }
        let mut cells: Vec<_> = merged.into_iter().collect();
        cells.sort_unstable();
        json!({
            "bucket": cells.iter().map(|c| c.0 .0).collect::<Vec<_>>(),
            "thread": cells.iter().map(|c| c.0 .1).collect::<Vec<_>>(),
            "node": cells.iter().map(|c| c.0 .2).collect::<Vec<_>>(),
            "count": cells.iter().map(|c| c.1 .0).collect::<Vec<_>>(),
            "period": cells.iter().map(|c| c.1 .1).collect::<Vec<_>>(),
        })
    }
}
