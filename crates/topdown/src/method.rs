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

/// A way of recording a set's events: sampled read groups, each led by
/// its own sampler; several take turns on the counters.
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
    /// The groups' items in order: the set's event roles, or perf's
    /// generic `cycles` and `instructions`.
    pub groups: Vec<Vec<String>>,
    /// The set's counters.
    pub budget: &'static Budget,
}

/// Generic hardware events a group may name without a role.
pub const GENERIC: [&str; 2] = ["cycles", "instructions"];

/// Why a method's groups cannot be laid out on the counters there are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooFew {
    /// The general-purpose counters it would take at the least.
    pub needed: u32,
}

impl Method {
    /// The general-purpose counters `item` takes: `cycles_fixed` false
    /// when the cycles counter is someone else's (an NMI watchdog).
    fn gp_of(&self, item: &str, cycles_fixed: bool) -> u32 {
        let free = self.budget.free.iter().any(|f| f == item);
        u32::from(!free || (!cycles_fixed && item == "cycles"))
    }

    /// The general-purpose counters a group of its items takes.
    pub fn gp_of_group<S: AsRef<str>>(&self, group: &[S], cycles_fixed: bool) -> u32 {
        group
            .iter()
            .map(|i| self.gp_of(i.as_ref(), cycles_fixed))
            .sum()
    }

    /// The most general-purpose counters one of its groups takes.
    pub fn gp_needed(&self, cycles_fixed: bool) -> u32 {
        self.groups
            .iter()
            .map(|g| self.gp_of_group(g, cycles_fixed))
            .max()
            .unwrap_or(0)
    }

    /// Whether a group led by `cycles` can be cut into several: each part
    /// then leads with its own `cycles`, the clock by which the query
    /// scales groups that took turns to the whole time, which it can only
    /// be as a role of the set.
    fn splits(&self, group: &[String]) -> bool {
        group.first().is_some_and(|g| g == "cycles") && self.set.role("cycles").is_some()
    }

    /// The groups as recorded on `counters` general-purpose counters: a
    /// group that does not fit is cut, in order, into groups that do,
    /// each led by `cycles`.
    pub fn layout(&self, counters: u32, cycles_fixed: bool) -> Result<Vec<Vec<&str>>, TooFew> {
        let mut out = Vec::new();
        for group in &self.groups {
            let needed = self.gp_of_group(group, cycles_fixed);
            if needed <= counters {
                out.push(group.iter().map(String::as_str).collect());
                continue;
            }
            let clock = self.gp_of("cycles", cycles_fixed);
            if !self.splits(group) || clock + 1 > counters {
                let needed = if self.splits(group) {
                    clock + 1
                } else {
                    needed
                };
                return Err(TooFew { needed });
            }
            let mut part = vec!["cycles"];
            let mut used = clock;
            for item in &group[1..] {
                let gp = self.gp_of(item, cycles_fixed);
                if used + gp > counters {
                    out.push(std::mem::replace(&mut part, vec!["cycles"]));
                    used = clock;
                }
                part.push(item);
                used += gp;
            }
            out.push(part);
        }
        Ok(out)
    }

    /// Every item of every group.
    pub fn items(&self) -> impl Iterator<Item = &String> {
        self.groups.iter().flatten()
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
        match f.as_slice() {
            ["budget", name, gp, gp_smt, free] => {
                let budget = budget_row(name, gp, gp_smt, free, &err)?;
                t.budgets
                    .push((name.to_string(), Box::leak(Box::new(budget))));
            }
            ["method", name, set_name, level, perf, group] => {
                let row = MethodRow {
                    name,
                    set_name,
                    level,
                    perf,
                    group,
                };
                let m = row.read(&t.budgets, &err)?;
                t.methods.push(m);
            }
            _ => return Err(err(format!("not a budget or method row: `{line}`"))),
        }
    }
    Ok(t)
}

/// The budget a `budget` row gives, for the set `name` (which must
/// exist); `err` places an error on the row's line.
fn budget_row(
    name: &str,
    gp: &str,
    gp_smt: &str,
    free: &str,
    err: &impl Fn(String) -> SetError,
) -> Result<Budget, SetError> {
    let number = |s: &str| {
        s.parse::<u32>()
            .map_err(|_| err(format!("`{s}` is not a number")))
    };
    set(name).ok_or_else(|| err(format!("no set `{name}`")))?;
    let free = match free {
        "-" => Vec::new(),
        list => list.split_whitespace().map(str::to_string).collect(),
    };
    Ok(Budget {
        gp: number(gp)?,
        gp_smt: number(gp_smt)?,
        free,
    })
}

/// The fields of a `method` row, as written.
struct MethodRow<'a> {
    name: &'a str,
    set_name: &'a str,
    level: &'a str,
    perf: &'a str,
    group: &'a str,
}

impl MethodRow<'_> {
    /// The method the row gives, checked against its set and against the
    /// budget row read before it (in `budgets`); `err` places an error on
    /// the row's line.
    fn read(
        &self,
        budgets: &[(String, &'static Budget)],
        err: &impl Fn(String) -> SetError,
    ) -> Result<Method, SetError> {
        let set_name = self.set_name;
        let s = set(set_name).ok_or_else(|| err(format!("no set `{set_name}`")))?;
        let budget = budgets
            .iter()
            .find(|(b, _)| b == set_name)
            .map(|(_, b)| *b)
            .ok_or_else(|| err(format!("no budget row for `{set_name}` before it")))?;
        let level = match self.level {
            "1" => 1,
            "2" => 2,
            l => return Err(err(format!("level `{l}` is not 1 or 2"))),
        };
        let perf_min = self.perf_min(err)?;
        let groups: Vec<Vec<String>> = self
            .group
            .split(';')
            .map(|g| g.split_whitespace().map(str::to_string).collect())
            .collect();
        for item in groups.iter().flatten() {
            if s.role(item).is_none() && !GENERIC.contains(&item.as_str()) {
                return Err(err(format!("`{item}` is no event of `{set_name}`")));
            }
        }
        if groups.iter().any(Vec::is_empty) {
            return Err(err("an empty group".into()));
        }
        let m = Method {
            name: self.name.to_string(),
            set: s,
            level,
            perf_min,
            groups,
            budget,
        };
        if m.gp_needed(true) > budget.gp {
            return Err(err(format!(
                "a group takes {} general-purpose counters; the set has {}",
                m.gp_needed(true),
                budget.gp
            )));
        }
        Ok(m)
    }

    /// The oldest perf the row names: `any` is none, `>=N.N` that version.
    fn perf_min(&self, err: &impl Fn(String) -> SetError) -> Result<Option<(u32, u32)>, SetError> {
        Ok(match self.perf {
            "any" => None,
            p => {
                let v = p.strip_prefix(">=").and_then(|v| v.split_once('.'));
                let v = v.and_then(|(a, b)| Some((a.parse().ok()?, b.parse().ok()?)));
                Some(v.ok_or_else(|| err(format!("perf `{p}`: want `any` or `>=N.N`")))?)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every role `node` needs, unless optional, is in one of `m`'s groups.
    fn assert_records(m: &Method, node: &crate::set::Node) {
        for role in m.set.node_roles(node) {
            let optional = m.set.role(&role).is_some_and(|r| r.optional);
            assert!(
                optional || m.items().any(|i| *i == role),
                "{}: {} of {} needs `{role}`",
                m.name,
                node.name,
                m.set.name
            );
        }
    }

    #[test]
    fn every_method_records_level_1_of_its_set() {
        let methods = methods().expect("methods.td reads");
        assert!(!methods.is_empty());
        for m in methods {
            for node in crate::LEVEL1 {
                assert_records(m, m.set.node(node).expect("level-1 node"));
            }
        }
    }

    #[test]
    fn every_level_2_method_records_level_2_of_its_set() {
        for m in methods().expect("methods.td reads") {
            if m.level < 2 {
                continue;
            }
            for node in m.set.nodes.iter().filter(|n| n.level == 2) {
                assert_records(m, node);
            }
        }
    }

    #[test]
    fn a_group_too_large_is_cut_into_groups_led_by_cycles() {
        let by_name = |n: &str| {
            methods()
                .expect("methods")
                .iter()
                .find(|m| m.name == n)
                .expect(n)
        };
        // Zen 4 level 1 with the NMI watchdog: cycles takes a counter too.
        let zen = by_name("zen4-l1");
        assert_eq!(zen.layout(6, true).expect("fits").len(), 1);
        assert_eq!(
            zen.layout(5, false).expect("cut"),
            vec![
                vec!["cycles", "fe_slots", "be_slots", "dispatched", "retired"],
                vec!["cycles", "smt_slots"],
            ]
        );
        assert_eq!(zen.layout(1, false), Err(TooFew { needed: 2 }));
        // Skylake level 2 with SMT on: four counters a group.
        let skl = by_name("skl-l2");
        let groups = skl.layout(4, true).expect("cut");
        assert!(groups.iter().all(|g| g[0] == "cycles"));
        assert!(groups.iter().all(|g| g
            .iter()
            .filter(|i| !skl.budget.free.iter().any(|f| f == *i))
            .count()
            <= 4));
        let laid: Vec<&str> = groups
            .iter()
            .flatten()
            .copied()
            .filter(|i| *i != "cycles")
            .collect();
        let items: Vec<&str> = skl
            .items()
            .map(String::as_str)
            .filter(|i| *i != "cycles")
            .collect();
        assert_eq!(laid, items, "every item once, in order");
        // A PERF_METRICS group is never cut: its slots leader is not a clock.
        let glc = by_name("glc-metrics2");
        assert_eq!(glc.layout(0, true), Err(TooFew { needed: 1 }));
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
