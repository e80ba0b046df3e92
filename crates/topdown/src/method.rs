//! How each formula set's events are recorded (`../methods.td`): the
//! event group perf is given, the perf versions that can open it, and the
//! counters a hardware thread has for it. Read here, beside the sets whose
//! roles the groups name; `perfq-record` chooses among them for a machine.

use std::sync::OnceLock;

use crate::set::{fields, set, strip_comment, FormulaSet, SetError};

/// The counters one hardware thread has for a set's events.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Budget {
    /// General-purpose counters with SMT off.
    pub gp: u32,
    /// General-purpose counters with SMT on.
    pub gp_smt: u32,
    /// Group items that take no general-purpose counter (fixed counters,
    /// PERF_METRICS).
    pub free: Vec<String>,
}

/// A way of recording a set's events: one sampled read group.
#[derive(Clone, Debug)]
pub struct Method {
    /// `glc-metrics`.
    pub name: String,
    /// The set whose events it records.
    pub set: &'static FormulaSet,
    /// The deepest level it records.
    pub level: u8,
    /// The oldest perf (major, minor) that can open the group.
    pub perf_min: Option<(u32, u32)>,
    /// The group's items in order: the set's event roles, or perf's
    /// generic `cycles` and `instructions`.
    pub group: Vec<String>,
    /// The set's counters.
    pub budget: &'static Budget,
}

/// Generic hardware events a group may name without a role.
pub const GENERIC: [&str; 2] = ["cycles", "instructions"];

impl Method {
    /// The general-purpose counters the group takes: `cycles_fixed` false
    /// when the cycles counter is someone else's (an NMI watchdog).
    pub fn gp_needed(&self, cycles_fixed: bool) -> u32 {
        self.group
            .iter()
            .filter(|item| {
                let free = self.budget.free.iter().any(|f| f == *item);
                !free || (!cycles_fixed && item.as_str() == "cycles")
            })
            .count() as u32
    }
}

const METHODS: &str = include_str!("../methods.td");

struct Tables {
    budgets: Vec<(String, &'static Budget)>,
    methods: Vec<Method>,
}

/// Every method, in the table's order.
pub fn methods() -> Result<&'static [Method], SetError> {
    static TABLES: OnceLock<Result<Tables, SetError>> = OnceLock::new();
    match TABLES.get_or_init(|| parse(METHODS)) {
        Ok(t) => Ok(&t.methods),
        Err(e) => Err(e.clone()),
    }
}

/// The methods that record `set`, shallowest first.
pub fn methods_for(set: &str) -> Result<Vec<&'static Method>, SetError> {
    let mut out: Vec<&Method> = methods()?.iter().filter(|m| m.set.name == set).collect();
    out.sort_by_key(|m| m.level);
    Ok(out)
}

fn parse(text: &str) -> Result<Tables, SetError> {
    let mut t = Tables {
        budgets: Vec::new(),
        methods: Vec::new(),
    };
    for (n, line) in text.lines().enumerate() {
        let err = |message: String| SetError {
            file: "methods.td".into(),
            line: n + 1,
            message,
        };
        let line = strip_comment(line).trim();
        if line.is_empty() {
            continue;
        }
        let f = fields(line);
        let number = |s: &str| {
            s.parse::<u32>()
                .map_err(|_| err(format!("`{s}` is not a number")))
        };
        match f.as_slice() {
            ["budget", name, gp, gp_smt, free] => {
                set(name).ok_or_else(|| err(format!("no set `{name}`")))?;
                let free = match *free {
                    "-" => Vec::new(),
                    list => list.split_whitespace().map(str::to_string).collect(),
                };
                let budget = Budget {
                    gp: number(gp)?,
                    gp_smt: number(gp_smt)?,
                    free,
                };
                t.budgets
                    .push((name.to_string(), Box::leak(Box::new(budget))));
            }
            ["method", name, set_name, level, perf, group] => {
                let s = set(set_name).ok_or_else(|| err(format!("no set `{set_name}`")))?;
                let budget = t
                    .budgets
                    .iter()
                    .find(|(b, _)| b == set_name)
                    .map(|(_, b)| *b)
                    .ok_or_else(|| err(format!("no budget row for `{set_name}` before it")))?;
                let level = match *level {
                    "1" => 1,
                    "2" => 2,
                    l => return Err(err(format!("level `{l}` is not 1 or 2"))),
                };
                let perf_min = match *perf {
                    "any" => None,
                    p => {
                        let v = p.strip_prefix(">=").and_then(|v| v.split_once('.'));
                        let v = v.and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                        Some(v.ok_or_else(|| err(format!("perf `{p}`: want `any` or `>=N.N`")))?)
                    }
                };
                let group: Vec<String> = group.split_whitespace().map(str::to_string).collect();
                for item in &group {
                    if s.role(item).is_none() && !GENERIC.contains(&item.as_str()) {
                        return Err(err(format!("`{item}` is no event of `{set_name}`")));
                    }
                }
                if group.is_empty() {
                    return Err(err("an empty group".into()));
                }
                let m = Method {
                    name: name.to_string(),
                    set: s,
                    level,
                    perf_min,
                    group,
                    budget,
                };
                if m.gp_needed(true) > budget.gp {
                    return Err(err(format!(
                        "the group takes {} general-purpose counters; the set has {}",
                        m.gp_needed(true),
                        budget.gp
                    )));
                }
                t.methods.push(m);
            }
            _ => return Err(err(format!("not a budget or method row: `{line}`"))),
        }
    }
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_method_records_level_1_of_its_set() {
        let methods = methods().expect("methods.td reads");
        assert!(!methods.is_empty());
        for m in methods {
            for node in crate::LEVEL1 {
                let node = m.set.node(node).expect("level-1 node");
                for role in m.set.node_roles(node) {
                    let optional = m.set.role(&role).is_some_and(|r| r.optional);
                    assert!(
                        optional || m.group.contains(&role),
                        "{}: level 1 of {} needs `{role}`",
                        m.name,
                        m.set.name
                    );
                }
            }
        }
    }

    #[test]
    fn every_set_has_a_level_1_method() {
        for s in crate::sets().expect("sets") {
            let ms = methods_for(&s.name).expect("methods");
            assert!(
                ms.iter().any(|m| m.level == 1),
                "{} has no level-1 method",
                s.name
            );
        }
    }
}
