//! Formula sets: one per CPU family, read from the `sets/*.td` tables
//! compiled into the crate (their format is in `sets/README.md`).

mod read;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::OnceLock;

use crate::expr::{Cond, Expr};

pub(crate) use read::{fields, parse_u64, strip_comment};

/// The PMU a set's events are on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PmuClass {
    /// x86 `cpu`, or hybrid `cpu_core`: type 4 (`PERF_TYPE_RAW`).
    Core,
    /// Hybrid `cpu_atom`: the type PMU_MAPPINGS gives it.
    Atom,
    /// An Arm core PMU (`armv8_pmuv3_0`, `armv9_neoverse_n2`, ...): the
    /// type PMU_MAPPINGS gives it, or `PERF_TYPE_RAW`.
    Arm,
}

/// How an event is recognized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matcher {
    /// A raw config on the set's PMU, compared under the set's mask.
    Raw(u64),
    /// A `PERF_TYPE_HARDWARE` event id (`0` cycles, `1` instructions).
    Hw(u64),
}

/// An event the formulas use, by the role they name it with.
#[derive(Clone, Debug)]
pub struct EventRole {
    /// The name formulas use (`slots`, `td_retiring`).
    pub role: String,
    /// Any of these encodings is the event.
    pub matchers: Vec<Matcher>,
    /// Counts 0 when the capture lacks it (perf's correction terms).
    pub optional: bool,
    /// The event's name in the vendor's documentation.
    pub text: String,
}

/// A node of the top-down tree.
#[derive(Clone, Debug)]
pub struct Node {
    /// The JSON name (`frontend_bound`).
    pub name: String,
    /// The parent node; `None` at level 1.
    pub parent: Option<String>,
    /// 1 or 2.
    pub level: u8,
    /// The metric's name in the vendor's tables (`Frontend_Bound`).
    pub label: String,
    /// When the node is flagged (before its parent's flag is required).
    pub threshold: Option<Cond>,
    /// Its value as a fraction of slots.
    pub expr: Expr,
}

/// A named constant.
#[derive(Clone, Debug)]
pub struct Const {
    /// Its name.
    pub name: String,
    /// Its value unless a model overrides it.
    pub value: f64,
    /// What it is.
    pub text: String,
}

/// One CPU family's formulas.
#[derive(Clone, Debug)]
pub struct FormulaSet {
    /// `intel-glc`.
    pub name: String,
    /// The cores it covers.
    pub title: String,
    /// The PMU its events are on unless the model says otherwise.
    pub pmu: PmuClass,
    /// The config bits that select an event.
    pub mask: u64,
    /// Where the formulas come from.
    pub source: String,
    /// The `perf record` line that captures what the set needs.
    pub record: String,
    /// Constants (`width`).
    pub consts: Vec<Const>,
    /// Events.
    pub events: Vec<EventRole>,
    /// Intermediates, in order.
    pub lets: Vec<(String, Expr)>,
    /// Nodes, parents before children.
    pub nodes: Vec<Node>,
}

/// A formula table that could not be read (a defect of perfq: the tables
/// are compiled in, and a test reads every one).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct SetError {
    /// The table.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// The level-1 nodes every set has; level 1 is available when all four
/// can be computed.
pub const LEVEL1: [&str; 4] = [
    "retiring",
    "bad_speculation",
    "frontend_bound",
    "backend_bound",
];

impl FormulaSet {
    /// Every name is defined once, every formula names only defined
    /// things, nothing refers to itself, level 1 is complete.
    fn check(&self) -> Result<(), String> {
        if self.name.is_empty() {
            return Err("no `set` line".into());
        }
        let mut defined = BTreeSet::new();
        let names = self
            .consts
            .iter()
            .map(|c| &c.name)
            .chain(self.events.iter().map(|e| &e.role))
            .chain(self.lets.iter().map(|l| &l.0))
            .chain(self.nodes.iter().map(|n| &n.name));
        for n in names {
            if !defined.insert(n.as_str()) {
                return Err(format!("`{n}` is defined twice"));
            }
        }
        for l in LEVEL1 {
            if !self.nodes.iter().any(|n| n.name == l && n.level == 1) {
                return Err(format!("level-1 node `{l}` is missing"));
            }
        }
        if !defined.contains("slots") {
            return Err(
                "`slots` is not defined: the pipeline slots the level-1 nodes are fractions of"
                    .into(),
            );
        }
        let mut used = BTreeSet::new();
        for (_, e) in &self.lets {
            e.vars(&mut used);
        }
        for n in &self.nodes {
            n.expr.vars(&mut used);
            if let Some(t) = &n.threshold {
                t.vars(&mut used);
            }
        }
        if let Some(u) = used.iter().find(|u| !defined.contains(u.as_str())) {
            return Err(format!("`{u}` is not defined"));
        }
        // Expanding every node terminates only without cycles.
        for n in &self.nodes {
            self.expand(&n.expr, &BTreeMap::new(), &mut Vec::new())?;
        }
        Ok(())
    }

    /// `e` with intermediates, nodes and constants replaced, down to
    /// event roles. `consts` overrides the set's constants.
    fn expand(
        &self,
        e: &Expr,
        consts: &BTreeMap<String, f64>,
        stack: &mut Vec<String>,
    ) -> Result<Expr, String> {
        let mut vars = BTreeSet::new();
        e.vars(&mut vars);
        let mut map: BTreeMap<String, Expr> = BTreeMap::new();
        for v in vars {
            let body = if let Some(c) = consts.get(&v) {
                Expr::Num(*c)
            } else if let Some(c) = self.consts.iter().find(|c| c.name == v) {
                Expr::Num(c.value)
            } else if let Some(l) = self.lets.iter().find(|l| l.0 == v) {
                self.expand_named(&v, &l.1, consts, stack)?
            } else if let Some(n) = self.nodes.iter().find(|n| n.name == v) {
                self.expand_named(&v, &n.expr, consts, stack)?
            } else {
                continue;
            };
            map.insert(v, body);
        }
        Ok(e.substitute(&|v| map.get(v).cloned()))
    }

    fn expand_named(
        &self,
        name: &str,
        e: &Expr,
        consts: &BTreeMap<String, f64>,
        stack: &mut Vec<String>,
    ) -> Result<Expr, String> {
        if stack.iter().any(|s| s == name) {
            return Err(format!(
                "`{name}` refers to itself through {}",
                stack.join(" → ")
            ));
        }
        stack.push(name.into());
        let r = self.expand(e, consts, stack);
        stack.pop();
        r
    }

    /// The node's formula over event roles only, with `consts` overriding
    /// the set's constants.
    pub fn node_expr(&self, node: &Node, consts: &BTreeMap<String, f64>) -> Expr {
        // `check` expanded every node: a cycle cannot be met here.
        self.expand(&node.expr, consts, &mut Vec::new())
            .unwrap_or(Expr::Num(f64::NAN))
            .simplify()
    }

    /// The set's `slots` (every set defines it: `check`) over event roles
    /// only, with `consts` overriding the set's constants.
    pub fn slots_expr(&self, consts: &BTreeMap<String, f64>) -> Expr {
        self.expand(&Expr::Var("slots".into()), consts, &mut Vec::new())
            .unwrap_or(Expr::Num(f64::NAN))
            .simplify()
    }

    /// The event roles a node needs (through the nodes and intermediates
    /// it names).
    pub fn node_roles(&self, node: &Node) -> BTreeSet<String> {
        let mut vars = BTreeSet::new();
        self.node_expr(node, &BTreeMap::new()).vars(&mut vars);
        vars.retain(|v| self.events.iter().any(|e| e.role == *v));
        vars
    }

    /// The role definition.
    pub fn role(&self, role: &str) -> Option<&EventRole> {
        self.events.iter().find(|e| e.role == role)
    }

    /// A node by name.
    pub fn node(&self, name: &str) -> Option<&Node> {
        self.nodes.iter().find(|n| n.name == name)
    }

    /// The value of a constant, with `consts` overriding the set's.
    pub fn constant(&self, name: &str, consts: &BTreeMap<String, f64>) -> Option<f64> {
        consts
            .get(name)
            .copied()
            .or_else(|| self.consts.iter().find(|c| c.name == name).map(|c| c.value))
    }
}

macro_rules! tables {
    ($($f:literal),* $(,)?) => {
        &[$(($f, include_str!(concat!("../sets/", $f)))),*]
    };
}

/// The tables compiled in.
const TABLES: &[(&str, &str)] = tables![
    "intel-hsw.td",
    "intel-skl.td",
    "intel-icl.td",
    "intel-icl-gp.td",
    "intel-glc.td",
    "intel-glc-gp.td",
    "intel-lnc.td",
    "intel-lnc-gp.td",
    "intel-tremont.td",
    "intel-grt.td",
    "intel-cmt.td",
    "intel-skt.td",
    "amd-zen4.td",
    "amd-zen5.td",
    "arm-neoverse-v1.td",
    "arm-neoverse-n2v2.td",
    "arm-sbsa.td",
];

/// Every formula set, read once.
pub fn sets() -> Result<&'static [FormulaSet], SetError> {
    static SETS: OnceLock<Result<Vec<FormulaSet>, SetError>> = OnceLock::new();
    SETS.get_or_init(|| {
        TABLES
            .iter()
            .map(|(f, t)| FormulaSet::parse(f, t))
            .collect()
    })
    .as_deref()
    .map_err(Clone::clone)
}

/// A formula set by name.
pub fn set(name: &str) -> Option<&'static FormulaSet> {
    sets().ok()?.iter().find(|s| s.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_reads() {
        let sets = sets().unwrap();
        assert_eq!(sets.len(), TABLES.len());
        for s in sets {
            assert!(!s.record.is_empty() && !s.source.is_empty(), "{}", s.name);
            assert!(
                s.constant("width", &BTreeMap::new()).is_some(),
                "{}",
                s.name
            );
        }
    }

    #[test]
    fn fields_split_only_at_spaced_bars() {
        assert_eq!(
            fields("x86 | GenuineIntel-6-(97|9A) | a b |c"),
            vec!["x86", "GenuineIntel-6-(97|9A)", "a b |c"]
        );
        assert_eq!(strip_comment("a | b # c"), "a | b ");
        assert_eq!(strip_comment("a#b"), "a#b");
    }

    #[test]
    fn bad_tables_name_the_line() {
        let e = FormulaSet::parse("t", "set | x\nnode | a | nope | A | - | 1").unwrap_err();
        assert_eq!(e.line, 2);
        let e = FormulaSet::parse("t", "set | x\nconst | width | 4 | w").unwrap_err();
        assert!(e.message.contains("level-1 node"), "{e}");
        let nodes = "node | retiring | - | R | - | a\nnode | bad_speculation | - | B | - | 0\n\
                     node | frontend_bound | - | F | - | 0\nnode | backend_bound | - | K | - | 0";
        let t = format!("set | x\nlet | a | b\nlet | b | a\nlet | slots | 1\n{nodes}");
        let e = FormulaSet::parse("t", &t).unwrap_err();
        assert!(e.message.contains("refers to itself"), "{e}");
        let t = format!("set | x\nlet | a | 1\n{nodes}");
        let e = FormulaSet::parse("t", &t).unwrap_err();
        assert!(e.message.contains("`slots` is not defined"), "{e}");
    }
}
