//! Formulas as layers of small expressions, each naming the columns of
//! the layers before it.
//!
//! A node's formula inlined down to event sums, and its derivatives for
//! the standard errors, repeat the same subexpressions many times (Golden
//! Cove's Machine_Clears holds `sum4` twenty times over). Written out as
//! one SQL expression each, that is tens of kilobytes that a query
//! planner hashes and rewrites again and again (DataFusion spent far
//! longer planning it than running it). [`layer`] shares every repeated
//! subexpression instead: each becomes a column of its own, computed once
//! in the first layer where all it names exists; what is used once stays
//! inline in its single user. Any SQL engine runs the layers as a chain of
//! projections.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::expr::{Cond, Expr};

/// Formulas split into layers.
#[derive(Clone, Debug, Default)]
pub struct Layers {
    /// Layer after layer, the columns each computes: `(name, expr)`, where
    /// `expr` names the outputs' own variables and the columns of earlier
    /// layers.
    pub layers: Vec<Vec<(String, Expr)>>,
    /// Each output, over the variables and the layers' columns (most are
    /// a column of the last layers; a constant or a bare variable stays
    /// itself).
    pub outputs: Vec<(String, Expr)>,
}

impl Layers {
    /// The names that layer `i` or a later one, or an output, still
    /// reads (what the layer before `i` must pass on): variables and
    /// earlier layers' columns.
    pub fn live_from(&self, i: usize) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        for layer in self.layers.iter().skip(i) {
            for (_, e) in layer {
                e.vars(&mut out);
            }
        }
        for (_, e) in &self.outputs {
            e.vars(&mut out);
        }
        out
    }
}

/// Splits `outputs` into layers. Generated columns are named `prefix`
/// and a number; the variables of `outputs` must not start with
/// `prefix`.
pub fn layer(outputs: &[(String, Expr)], prefix: &str) -> Layers {
    let mut dag = Dag::default();
    let roots: Vec<Expr> = outputs.iter().map(|(_, e)| dag.intern(e)).collect();
    let mut keep: BTreeSet<usize> = (0..dag.nodes.len())
        .filter(|&i| dag.nodes[i].uses >= 2)
        .collect();
    keep.extend(roots.iter().filter_map(Dag::id));
    let name = |i: usize| format!("{prefix}{i}");

    let mut depth: BTreeMap<usize, usize> = BTreeMap::new();
    let mut by_depth: BTreeMap<usize, Vec<(String, Expr)>> = BTreeMap::new();
    // Nodes are numbered children first, so one pass in order sees every
    // child's depth before its parents.
    for &i in &keep {
        let d = 1 + dag
            .kept_children(i, &keep)
            .map(|c| depth[&c])
            .max()
            .unwrap_or(0);
        depth.insert(i, d);
        by_depth
            .entry(d)
            .or_default()
            .push((name(i), dag.expand(i, &keep, &name)));
    }
    Layers {
        layers: by_depth.into_values().collect(),
        outputs: outputs
            .iter()
            .zip(&roots)
            .map(|((n, _), r)| {
                let e = match Dag::id(r) {
                    Some(i) => Expr::Var(name(i)),
                    None => r.clone(),
                };
                (n.clone(), e)
            })
            .collect(),
    }
}

/// Placeholders for interned subexpressions: a name no formula has.
const MARK: char = '\u{1}';

#[derive(Default)]
struct Dag {
    /// Each distinct subexpression, its children replaced by
    /// placeholders; children come before their parents.
    nodes: Vec<DagNode>,
    index: HashMap<String, usize>,
}

struct DagNode {
    shallow: Expr,
    children: Vec<usize>,
    /// Parents (distinct) and outputs that name it.
    uses: usize,
}

impl Dag {
    fn id(e: &Expr) -> Option<usize> {
        match e {
            Expr::Var(v) => v.strip_prefix(MARK).and_then(|s| s.parse().ok()),
            _ => None,
        }
    }

    /// `e` with every operation interned: a constant, a variable, or the
    /// placeholder of a node.
    fn intern(&mut self, e: &Expr) -> Expr {
        let shallow = match e {
            Expr::Num(_) | Expr::Var(_) => return e.clone(),
            Expr::Neg(a) => Expr::Neg(Box::new(self.intern(a))),
            Expr::Bin(op, a, b) => {
                Expr::Bin(*op, Box::new(self.intern(a)), Box::new(self.intern(b)))
            }
            Expr::Call(f, a, b) => {
                Expr::Call(*f, Box::new(self.intern(a)), Box::new(self.intern(b)))
            }
            Expr::If(c, a, b) => Expr::If(
                Box::new(self.intern_cond(c)),
                Box::new(self.intern(a)),
                Box::new(self.intern(b)),
            ),
        };
        let key = format!("{shallow:?}");
        let id = match self.index.get(&key) {
            Some(&id) => id,
            None => {
                // Every occurrence counts: a child named twice by one
                // parent (`b * b`) is a column, not written out twice.
                let mut children = Vec::new();
                placeholders(&shallow, &mut children);
                for &c in &children {
                    self.nodes[c].uses += 1;
                }
                self.nodes.push(DagNode {
                    shallow,
                    children,
                    uses: 0,
                });
                let id = self.nodes.len() - 1;
                self.index.insert(key, id);
                id
            }
        };
        Expr::Var(format!("{MARK}{id}"))
    }

    fn intern_cond(&mut self, c: &Cond) -> Cond {
        match c {
            Cond::Cmp(op, a, b) => Cond::Cmp(*op, self.intern(a), self.intern(b)),
            Cond::And(a, b) => {
                Cond::And(Box::new(self.intern_cond(a)), Box::new(self.intern_cond(b)))
            }
            Cond::Or(a, b) => {
                Cond::Or(Box::new(self.intern_cond(a)), Box::new(self.intern_cond(b)))
            }
        }
    }

    /// The kept nodes `i` names, directly or through inlined ones.
    fn kept_children<'a>(
        &'a self,
        i: usize,
        keep: &'a BTreeSet<usize>,
    ) -> impl Iterator<Item = usize> + 'a {
        let mut out = Vec::new();
        let mut todo: Vec<usize> = self.nodes[i].children.clone();
        while let Some(c) = todo.pop() {
            if keep.contains(&c) {
                out.push(c);
            } else {
                todo.extend(self.nodes[c].children.iter().copied());
            }
        }
        out.into_iter()
    }

    /// Node `i` written out: kept children by their column name, the
    /// others inline.
    fn expand(&self, i: usize, keep: &BTreeSet<usize>, name: &dyn Fn(usize) -> String) -> Expr {
        self.nodes[i].shallow.substitute(&|v| {
            let c = Dag::id(&Expr::Var(v.to_string()))?;
            Some(if keep.contains(&c) {
                Expr::Var(name(c))
            } else {
                self.expand(c, keep, name)
            })
        })
    }
}

fn placeholders(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Num(_) => {}
        Expr::Var(_) => out.extend(Dag::id(e)),
        Expr::Neg(a) => placeholders(a, out),
        Expr::Bin(_, a, b) | Expr::Call(_, a, b) => {
            placeholders(a, out);
            placeholders(b, out);
        }
        Expr::If(c, a, b) => {
            cond_placeholders(c, out);
            placeholders(a, out);
            placeholders(b, out);
        }
    }
}

fn cond_placeholders(c: &Cond, out: &mut Vec<usize>) {
    match c {
        Cond::Cmp(_, a, b) => {
            placeholders(a, out);
            placeholders(b, out);
        }
        Cond::And(a, b) | Cond::Or(a, b) => {
            cond_placeholders(a, out);
            cond_placeholders(b, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval_layers(l: &Layers, base: &dyn Fn(&str) -> Option<f64>) -> Vec<(String, Option<f64>)> {
        let mut cols: HashMap<String, Option<f64>> = HashMap::new();
        for layer in &l.layers {
            let mut new = Vec::new();
            for (n, e) in layer {
                let v = e.eval(&|v| cols.get(v).copied().unwrap_or_else(|| base(v)));
                new.push((n.clone(), v));
            }
            cols.extend(new);
        }
        l.outputs
            .iter()
            .map(|(n, e)| {
                (
                    n.clone(),
                    e.eval(&|v| cols.get(v).copied().unwrap_or_else(|| base(v))),
                )
            })
            .collect()
    }

    #[test]
    fn layers_compute_what_the_formulas_do() {
        let set = crate::set("intel-glc").expect("set");
        let consts = BTreeMap::new();
        let mut outputs = Vec::new();
        for n in &set.nodes {
            let e = set.node_expr(n, &consts);
            let mut roles = BTreeSet::new();
            e.vars(&mut roles);
            for r in &roles {
                outputs.push((format!("g_{}_{r}", n.name), e.derivative(r)));
            }
            outputs.push((format!("v_{}", n.name), e));
        }
        outputs.push(("one".into(), Expr::Num(1.0)));
        let l = layer(&outputs, "x");
        assert!(l.layers.len() > 1);
        let sums = |v: &str| -> Option<f64> {
            // Deterministic, distinct values per role.
            Some(v.bytes().map(f64::from).sum::<f64>() * 1000.0)
        };
        let got = eval_layers(&l, &sums);
        for ((n, e), (gn, g)) in outputs.iter().zip(&got) {
            assert_eq!(n, gn);
            let want = e.eval(&sums);
            match (want, *g) {
                (Some(a), Some(b)) => {
                    assert!((a - b).abs() <= 1e-12 * a.abs().max(1.0), "{n}: {a} {b}")
                }
                (a, b) => assert_eq!(a, b, "{n}"),
            }
        }
        // Every repeated subexpression is computed once: no layer column
        // is written out twice.
        let all: Vec<String> = l
            .layers
            .iter()
            .flatten()
            .map(|(_, e)| format!("{e:?}"))
            .collect();
        let distinct: BTreeSet<&String> = all.iter().collect();
        assert_eq!(all.len(), distinct.len());
    }
}
