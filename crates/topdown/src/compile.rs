//! A formula set made ready for one capture: which nodes its events allow,
//! each node's formula over the event roles the capture has (optional
//! corrections it lacks count 0), and its threshold.

use std::collections::{BTreeMap, BTreeSet};

use crate::cpu::SetUse;
use crate::expr::{Cond, Expr};
use crate::set::LEVEL1;

/// A node ready to be computed.
#[derive(Clone, Debug)]
pub struct CompiledNode {
    /// The JSON name.
    pub name: String,
    /// The parent node.
    pub parent: Option<String>,
    /// 1 or 2.
    pub level: u8,
    /// The vendor's metric name.
    pub label: String,
    /// Its value over event sums (names are roles).
    pub expr: Expr,
    /// When it is flagged, over node values (names are nodes; a node the
    /// capture cannot compute has no value there, and a comparison with
    /// it does not hold).
    pub threshold: Option<Cond>,
}

/// What a capture's events allow of a set.
#[derive(Clone, Debug)]
pub struct Compiled {
    /// Nodes that can be computed, parents before children.
    pub nodes: Vec<CompiledNode>,
    /// Nodes that cannot, with the roles they lack.
    pub missing: Vec<(String, Vec<String>)>,
    /// The roles the computed nodes use (and `slots`).
    pub roles: BTreeSet<String>,
    /// The set's `slots` over roles, when the capture has what it needs:
    /// a node's value in slots is its share times this.
    pub slots: Option<Expr>,
}

impl Compiled {
    /// Whether level 1 can be computed.
    pub fn has_level1(&self) -> bool {
        LEVEL1
            .iter()
            .all(|l| self.nodes.iter().any(|n| n.name == *l))
    }

    /// Whether any level-2 node can be computed.
    pub fn has_level2(&self) -> bool {
        self.nodes.iter().any(|n| n.level == 2)
    }

    /// The nodes down to `level`, and the deeper ones their thresholds
    /// name (Golden Cove's Retiring is flagged on Heavy_Operations too, so
    /// a level-1 question still needs it), with the roles they use: a
    /// level-1 question then sums and plans only what level 1 needs.
    pub fn up_to(&self, level: u8) -> Compiled {
        let mut keep: BTreeSet<&str> = self
            .nodes
            .iter()
            .filter(|n| n.level <= level)
            .map(|n| n.name.as_str())
            .collect();
        // Thresholds may name nodes that name others in theirs.
        loop {
            let mut named = BTreeSet::new();
            for n in self.nodes.iter().filter(|n| keep.contains(n.name.as_str())) {
                if let Some(t) = &n.threshold {
                    t.vars(&mut named);
                }
            }
            let before = keep.len();
            for n in &self.nodes {
                if named.contains(&n.name) {
                    keep.insert(n.name.as_str());
                }
            }
            if keep.len() == before {
                break;
            }
        }
        let nodes: Vec<CompiledNode> = self
            .nodes
            .iter()
            .filter(|n| keep.contains(n.name.as_str()))
            .cloned()
            .collect();
        let mut roles = BTreeSet::new();
        for n in &nodes {
            n.expr.vars(&mut roles);
        }
        if let Some(s) = &self.slots {
            s.vars(&mut roles);
        }
        Compiled {
            nodes,
            missing: self.missing.clone(),
            roles,
            slots: self.slots.clone(),
        }
    }

    /// The node values for given event sums (for tests, and to check
    /// the SQL the query layer runs): `None` where a divisor is 0.
    pub fn evaluate(&self, sums: &dyn Fn(&str) -> Option<f64>) -> Vec<(String, Option<f64>)> {
        self.nodes
            .iter()
            .map(|n| (n.name.clone(), n.expr.eval(sums)))
            .collect()
    }

    /// Hierarchical flags for given node values: a node is flagged when
    /// its threshold holds and its parent is flagged.
    pub fn flags(&self, values: &[(String, Option<f64>)]) -> BTreeMap<String, bool> {
        let value = |n: &str| values.iter().find(|v| v.0 == n).and_then(|v| v.1);
        let mut out: BTreeMap<String, bool> = BTreeMap::new();
        for n in &self.nodes {
            let own = n
                .threshold
                .as_ref()
                .and_then(|t| t.eval(&value))
                .unwrap_or(false);
            let parent = n
                .parent
                .as_ref()
                .is_none_or(|p| out.get(p).copied().unwrap_or(false));
            out.insert(n.name.clone(), own && parent);
        }
        out
    }
}

impl SetUse {
    /// Compiles the set for a capture that has the roles `present` says.
    pub fn compile(&self, present: &dyn Fn(&str) -> bool) -> Compiled {
        let set = self.set;
        let mut nodes = Vec::new();
        let mut missing = Vec::new();
        let mut roles = BTreeSet::new();
        for n in &set.nodes {
            let needs = set.node_roles(n);
            let lacking: Vec<String> = needs
                .iter()
                .filter(|r| !present(r) && set.role(r).is_some_and(|d| !d.optional))
                .cloned()
                .collect();
            if !lacking.is_empty() {
                missing.push((n.name.clone(), lacking));
                continue;
            }
            let absent_optional: BTreeSet<&String> = needs.iter().filter(|r| !present(r)).collect();
            let expr = set
                .node_expr(n, &self.consts)
                .substitute(&|v| {
                    absent_optional
                        .contains(&v.to_string())
                        .then_some(Expr::Num(0.0))
                })
                .simplify();
            let mut used = BTreeSet::new();
            expr.vars(&mut used);
            roles.extend(used);
            nodes.push(CompiledNode {
                name: n.name.clone(),
                parent: n.parent.clone(),
                level: n.level,
                label: n.label.clone(),
                expr,
                threshold: n.threshold.clone(),
            });
        }
        // `slots` as a node's formula is compiled: absent optional
        // corrections count 0, an absent required event leaves it out.
        let slots = set.slots_expr(&self.consts);
        let mut slots_roles = BTreeSet::new();
        slots.vars(&mut slots_roles);
        let lacking = slots_roles
            .iter()
            .any(|r| !present(r) && set.role(r).is_none_or(|d| !d.optional));
        let slots = (!lacking).then(|| {
            let slots = slots
                .substitute(&|v| (!present(v)).then_some(Expr::Num(0.0)))
                .simplify();
            slots.vars(&mut roles);
            slots
        });
        Compiled {
            nodes,
            missing,
            roles,
            slots,
        }
    }
}
