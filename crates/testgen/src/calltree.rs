//! Where samples fall: a call tree of the program's functions, each node
//! with a share of the samples (its self weight) and the top-down mix of
//! the code it runs.

use crate::model::Mix;
use crate::rng::Rng;

/// A node: a function called from its parent's function.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// The function's symbol name.
    pub function: String,
    /// The calling node (`None` for the root).
    pub parent: Option<usize>,
    /// Relative share of samples whose leaf is this node.
    pub weight: f64,
    /// The mix of the node's own samples.
    pub mix: Mix,
}

/// A call tree; node 0 is the root (usually `main`).
#[derive(Clone, Debug, PartialEq)]
pub struct CallTree {
    nodes: Vec<Node>,
}

/// The demo program's functions with the mix their code has
/// (`testdata/td-demo.c`).
pub fn demo_mix(function: &str) -> Mix {
    match function {
        // Long, branchy decode loop: instruction supply limits it.
        "parse_input" => Mix::l1(0.25, 0.10, 0.45, 0.20).with_l2(0.10, 0.70, 0.70, 0.40),
        // Random loads over a 4 MiB table.
        "hash_table_probe" => Mix::l1(0.15, 0.03, 0.07, 0.75).with_l2(0.05, 0.50, 0.50, 0.85),
        // Data-dependent compares.
        "sort_records" => Mix::l1(0.35, 0.35, 0.10, 0.20).with_l2(0.05, 0.90, 0.40, 0.30),
        "branchy_search" => Mix::l1(0.30, 0.40, 0.10, 0.20).with_l2(0.05, 0.95, 0.50, 0.60),
        // A tight ALU loop.
        "checksum" => Mix::l1(0.75, 0.02, 0.08, 0.15).with_l2(0.05, 0.50, 0.30, 0.20),
        _ => Mix::l1(0.40, 0.10, 0.20, 0.30),
    }
}

/// A mix for a function of another program: one of a few typical shapes,
/// picked by name so that it stays the same from run to run.
fn archetype(function: &str) -> Mix {
    const NAMES: [&str; 5] = [
        "parse_input",
        "hash_table_probe",
        "sort_records",
        "checksum",
        "",
    ];
    let h = function.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    });
    demo_mix(NAMES[(h % NAMES.len() as u64) as usize])
}

impl CallTree {
    /// A tree of only `root`, with no samples of its own.
    pub fn new(root: &str) -> CallTree {
        CallTree {
            nodes: vec![Node {
                function: root.to_string(),
                parent: None,
                weight: 0.0,
                mix: demo_mix(root),
            }],
        }
    }

    /// Adds a call from node `parent` to `function`; returns the new node.
    pub fn add(&mut self, parent: usize, function: &str, weight: f64, mix: Mix) -> usize {
        self.nodes.push(Node {
            function: function.to_string(),
            parent: Some(parent),
            weight: weight.max(0.0),
            mix,
        });
        self.nodes.len() - 1
    }

    /// Sets a node's self weight and mix.
    pub fn set(&mut self, node: usize, weight: f64, mix: Mix) {
        if let Some(n) = self.nodes.get_mut(node) {
            n.weight = weight.max(0.0);
            n.mix = mix;
        }
    }

    /// The nodes; 0 is the root.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// The node's stack, leaf first: itself, its caller, ..., the root.
    pub fn stack(&self, node: usize) -> Vec<usize> {
        let mut v = vec![node];
        let mut n = node;
        while let Some(p) = self.nodes.get(n).and_then(|x| x.parent) {
            v.push(p);
            n = p;
        }
        v
    }

    /// The demo program's call tree: `main → run →` each worker, with
    /// `sort_records` and `branchy_search` recursing, and the share of
    /// time each has.
    pub fn td_demo() -> CallTree {
        let mut t = CallTree::new("main");
        t.set(0, 0.01, demo_mix("main"));
        let m = demo_mix;
        let run = t.add(0, "run", 0.02, m("run"));
        let parse = t.add(run, "parse_input", 0.14, m("parse_input"));
        t.add(parse, "checksum", 0.04, m("checksum"));
        t.add(run, "hash_table_probe", 0.25, m("hash_table_probe"));
        let mut sort = t.add(run, "sort_records", 0.04, m("sort_records"));
        for w in [0.06, 0.07, 0.06, 0.04] {
            sort = t.add(sort, "sort_records", w, m("sort_records"));
        }
        let mut search = t.add(run, "branchy_search", 0.03, m("branchy_search"));
        for w in [0.05, 0.05, 0.04] {
            search = t.add(search, "branchy_search", w, m("branchy_search"));
        }
        t.add(run, "checksum", 0.10, m("checksum"));
        t
    }

    /// A tree of `paths` random call paths through `functions`, each
    /// `main → run →` a chain of the others, its depth drawn from `depth`
    /// (inclusive). Leaves carry most of the weight; each node's mix is
    /// its function's. Paths share prefixes, as real call trees do.
    pub fn random(
        functions: &[String],
        depth: (usize, usize),
        paths: usize,
        seed: u64,
    ) -> CallTree {
        let mut rng = Rng::new(seed);
        let mix = |f: &str| {
            if functions.iter().any(|x| x == "parse_input") {
                demo_mix(f)
            } else {
                archetype(f)
            }
        };
        let root = if functions.iter().any(|f| f == "main") {
            "main"
        } else {
            functions.first().map_or("main", String::as_str)
        };
        let mut t = CallTree::new(root);
        t.set(0, 0.001, mix(root));
        let spine = ["run"]
            .into_iter()
            .filter(|r| functions.iter().any(|f| f == r))
            .collect::<Vec<_>>();
        let body: Vec<&String> = functions
            .iter()
            .filter(|f| *f != root && !spine.contains(&f.as_str()))
            .collect();
        if body.is_empty() {
            return t;
        }
        let (lo, hi) = (depth.0.max(1), depth.1.max(depth.0.max(1)));
        for _ in 0..paths.max(1) {
            let d = lo + rng.below((hi - lo + 1) as u64) as usize;
            let mut node = 0;
            let mut chain: Vec<&str> = spine.clone();
            while chain.len() + 1 < d {
                chain.push(body[rng.below(body.len() as u64) as usize]);
            }
            for f in chain {
                node = t.child(node, f).unwrap_or_else(|| {
                    let w = 0.002 * rng.unit();
                    t.add(node, f, w, mix(f))
                });
            }
            let w = 0.2 + rng.unit();
            let n = t.nodes[node].weight;
            t.nodes[node].weight = n + w;
        }
        t
    }

    fn child(&self, parent: usize, function: &str) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.parent == Some(parent) && n.function == function)
    }

    /// Per function: its share of the samples and its expected mix (the
    /// self-weighted average of its nodes' mixes).
    pub fn expected_by_function(&self) -> Vec<(String, f64, Mix)> {
        let total: f64 = self.nodes.iter().map(|n| n.weight).sum();
        let mut out: Vec<(String, f64, Mix)> = Vec::new();
        for n in &self.nodes {
            if n.weight <= 0.0 {
                continue;
            }
            let share = if total > 0.0 { n.weight / total } else { 0.0 };
            match out.iter_mut().find(|(f, _, _)| *f == n.function) {
                Some((_, s, m)) => {
                    let (a, b) = (*s / (*s + share), share / (*s + share));
                    *m = Mix {
                        retiring: a * m.retiring + b * n.mix.retiring,
                        bad_speculation: a * m.bad_speculation + b * n.mix.bad_speculation,
                        frontend: a * m.frontend + b * n.mix.frontend,
                        backend: a * m.backend + b * n.mix.backend,
                        smt: a * m.smt + b * n.mix.smt,
                        heavy: a * m.heavy + b * n.mix.heavy,
                        mispredict: a * m.mispredict + b * n.mix.mispredict,
                        fetch_latency: a * m.fetch_latency + b * n.mix.fetch_latency,
                        memory: a * m.memory + b * n.mix.memory,
                    };
                    *s += share;
                }
                None => out.push((n.function.clone(), share, n.mix)),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_tree_stacks_end_at_main() {
        let t = CallTree::td_demo();
        for i in 0..t.nodes().len() {
            let s = t.stack(i);
            assert_eq!(t.nodes()[*s.last().expect("non-empty")].function, "main");
        }
        let deepest = (0..t.nodes().len()).map(|i| t.stack(i).len()).max();
        assert_eq!(deepest, Some(7));
    }

    #[test]
    fn random_paths_have_the_asked_depths() {
        let f: Vec<String> = ["main", "run", "a", "b", "c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = CallTree::random(&f, (8, 20), 50, 3);
        for (i, n) in t.nodes().iter().enumerate() {
            if n.weight > 0.1 {
                let d = t.stack(i).len();
                assert!((8..=20).contains(&d), "{d}");
            }
        }
    }
}
