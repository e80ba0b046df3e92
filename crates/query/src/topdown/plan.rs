//! From a dataset's small tables (capture, events, pmus) to what the
//! topdown queries need: each capture's CPU model and formula sets, and
//! where each event role's per-sample value is (a group-read member's
//! column `mK` of the sampler's rows, or the period of an independently
//! sampled event's rows).

use std::collections::{BTreeMap, BTreeSet};

use perfq_topdown::{
    by_name, detect, pmu_types, role_of, Compiled, CpuInfo, EventKey, Expr, Model, PmuClass,
    PmuInfo, SetUse,
};

use crate::columns::{quote, strings, u32s, u64s};
use crate::helpers::{self, Param};
use crate::{Error, Session};

/// Read-value columns the samples table carries (`m0` .. `m15`).
pub(crate) const MEMBER_COLUMNS: u32 = 16;

/// Where one role's value is, in one capture's samples.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Source {
    /// Column `m{member}` of the rows of these sampler events.
    Member { samplers: Vec<u32>, member: u32 },
    /// The period of this event's own samples.
    Period { event: u32 },
}

/// One capture's part in a set's query.
#[derive(Clone, Debug)]
pub(crate) struct CaptureSources {
    pub(crate) capture: String,
    /// The events whose samples carry the roles.
    pub(crate) events: Vec<u32>,
    pub(crate) roles: BTreeMap<String, Source>,
}

/// Captures that share a formula set and the roles they carry: one
/// query.
#[derive(Clone, Debug)]
pub struct SetPlan {
    /// The set as the model uses it.
    pub set_use: SetUse,
    /// What the roles allow.
    pub compiled: Compiled,
    /// The models (one per distinct CPU among the captures).
    pub models: Vec<String>,
    pub(crate) captures: Vec<CaptureSources>,
    /// Only the samples of these processes (all when `None`).
    pub(crate) pids: Option<Vec<u32>>,
}

impl SetPlan {
    /// `intel_glc`, or `intel_grt_cpu_atom` for a hybrid part's E-core set.
    pub fn view_suffix(&self) -> String {
        let base = self.set_use.set.name.replace('-', "_");
        match self.set_use.pmu {
            PmuClass::Atom => format!("{base}_cpu_atom"),
            _ => base,
        }
    }

    /// Which core type the rows are for (hybrid parts), or `None`.
    pub fn core(&self) -> Option<&'static str> {
        match self.set_use.pmu {
            PmuClass::Atom => Some("cpu_atom"),
            PmuClass::Core if self.models.iter().any(|m| is_hybrid_model(m)) => Some("cpu_core"),
            _ => None,
        }
    }
}

fn is_hybrid_model(name: &str) -> bool {
    matches!(
        name,
        "alderlake" | "meteorlake" | "lunarlake" | "arrowlake" | "pantherlake"
    )
}

#[derive(Clone, Debug)]
struct EventRow {
    event_id: u32,
    type_: u32,
    config: u64,
    group_leader: Option<u32>,
    /// Its position in its group's read (`None` in older datasets).
    member: Option<u32>,
}

/// Everything planned, and what could not be.
pub struct Plans {
    /// One per (formula set, roles present).
    pub sets: Vec<SetPlan>,
    /// Why some captures or nodes are left out.
    pub warnings: Vec<String>,
    /// Captures with no usable topdown events, and what they would need.
    pub unusable: Vec<String>,
}

/// Reads the small tables and plans the topdown queries. `only` limits
/// them to one capture; `cpu_model` overrides detection.
pub fn plan(
    session: &Session,
    only: Option<&str>,
    cpu_model: Option<&str>,
) -> Result<Plans, Error> {
    let filter = only
        .map(|c| format!("WHERE capture = {}", quote(c)))
        .unwrap_or_default();
    let mut infos = read_cpus(session, &filter)?;
    if session.has_table("pmus") {
        read_pmus(session, &filter, &mut infos)?;
    }
    let events = read_events(session, &filter)?;
    // Which events have samples: only those carry values.
    let mut member_counts = BTreeMap::new();
    for capture in infos.keys() {
        let evs = events.get(capture).map(Vec::as_slice).unwrap_or(&[]);
        member_counts.insert(capture.clone(), member_counts_of(session, capture, evs)?);
    }
    let mut plans = Plans {
        sets: Vec::new(),
        warnings: Vec::new(),
        unusable: Vec::new(),
    };
    let mut groups: BTreeMap<String, SetPlan> = BTreeMap::new();
    let empty = MemberCounts::new();
    for (capture, info) in &infos {
        let facts = Capture {
            id: capture,
            info,
            events: events.get(capture).map(Vec::as_slice).unwrap_or(&[]),
            counts: member_counts.get(capture).unwrap_or(&empty),
        };
        plan_capture(&facts, only, cpu_model, &mut groups, &mut plans)?;
    }
    plans.sets = groups.into_values().collect();
    Ok(plans)
}

/// What the small tables say of one capture.
struct Capture<'a> {
    id: &'a str,
    info: &'a CpuInfo,
    events: &'a [EventRow],
    /// Its sampled events' samples and member values.
    counts: &'a MemberCounts,
}

/// Plans one capture's sets into `groups` (captures that share a set
/// and the layout of its roles share a plan), or says in `plans` why it
/// has none.
fn plan_capture(
    capture: &Capture<'_>,
    only: Option<&str>,
    cpu_model: Option<&str>,
    groups: &mut BTreeMap<String, SetPlan>,
    plans: &mut Plans,
) -> Result<(), Error> {
    let id = capture.id;
    // Nothing to share out (a damaged capture may have lost every
    // sample): no rows, whatever its CPU and events.
    if capture.counts.is_empty() {
        plans.warnings.push(format!("capture {id} has no samples"));
        return Ok(());
    }
    let model = match cpu_model {
        Some(name) => by_name(name, capture.info)?,
        None => detect(capture.info).map_err(|e| match only {
            Some(_) => Error::Cpu(e),
            None => Error::NoTopdown(format!("capture {id}: {e}")),
        })?,
    };
    if model.sets.is_empty() {
        plans.unusable.push(format!(
            "capture {id} was recorded on {} ({}): {}",
            model.name, model.found_by, model.note
        ));
        return Ok(());
    }
    let mut usable = false;
    for u in &model.sets {
        let Some((key, compiled, roles)) = plan_set(capture, u, &mut plans.warnings) else {
            continue;
        };
        usable = true;
        let entry = groups.entry(key).or_insert_with(|| SetPlan {
            set_use: u.clone(),
            compiled,
            models: Vec::new(),
            captures: Vec::new(),
            pids: None,
        });
        if !entry.models.contains(&model.name) {
            entry.models.push(model.name.clone());
        }
        let mut carriers: Vec<u32> = roles.values().flat_map(group_of).collect();
        carriers.sort_unstable();
        carriers.dedup();
        entry.captures.push(CaptureSources {
            capture: id.to_string(),
            events: carriers,
            roles,
        });
    }
    if !usable {
        plans.unusable.push(needed(id, &model));
    }
    Ok(())
}

/// Formula set `u` as one capture's events allow it: the key of the
/// plan it shares with captures of the same set and layout, the formulas
/// compiled over the roles it has (laid out by [`layout`]), and where
/// each variable is. `None` when the capture cannot compute level 1.
fn plan_set(
    capture: &Capture<'_>,
    u: &SetUse,
    warnings: &mut Vec<String>,
) -> Option<(String, Compiled, BTreeMap<String, Source>)> {
    let types = pmu_types(u.pmu, &capture.info.pmus)?;
    let hybrid = capture
        .info
        .pmus
        .iter()
        .any(|p| p.name == "cpu_atom" || p.name == "cpu_core");
    let roles = sources(u, &types, hybrid, capture, warnings);
    let mut compiled = u.compile(&|r| roles.contains_key(r));
    if !compiled.has_level1() {
        return None;
    }
    let lay = layout(&roles);
    if !lay.subst.is_empty() {
        for n in &mut compiled.nodes {
            n.expr = n.expr.substitute(&|v| lay.subst.get(v).cloned()).simplify();
        }
        if let Some(s) = &mut compiled.slots {
            *s = s.substitute(&|v| lay.subst.get(v).cloned()).simplify();
        }
    }
    compiled.roles = compiled
        .nodes
        .iter()
        .map(|n| &n.expr)
        .chain(&compiled.slots)
        .flat_map(|e| {
            let mut v = BTreeSet::new();
            e.vars(&mut v);
            v
        })
        .collect();
    let key = format!(
        "{}|{:?}|{:?}|{}",
        u.set.name, u.pmu, u.consts, lay.signature
    );
    Some((key, compiled, lay.vars))
}

/// Each capture's CPU (`filter` a WHERE clause, or empty).
fn read_cpus(session: &Session, filter: &str) -> Result<BTreeMap<String, CpuInfo>, Error> {
    let mut infos = BTreeMap::new();
    let q = helpers::fill(helpers::TOPDOWN_CPUS, &[("filter", Param::Sql(filter))]);
    for b in session.sql(&q)? {
        let (c, id, arch) = (
            strings(&b, "capture")?,
            strings(&b, "cpuid")?,
            strings(&b, "arch")?,
        );
        for i in 0..b.num_rows() {
            let Some(cap) = c[i].clone() else { continue };
            infos.insert(
                cap,
                CpuInfo {
                    arch: arch[i].clone(),
                    cpuid: id[i].clone(),
                    pmus: Vec::new(),
                },
            );
        }
    }
    Ok(infos)
}

/// Adds each capture's PMUs to its CPU.
fn read_pmus(
    session: &Session,
    filter: &str,
    infos: &mut BTreeMap<String, CpuInfo>,
) -> Result<(), Error> {
    let q = helpers::fill(helpers::TOPDOWN_PMUS, &[("filter", Param::Sql(filter))]);
    for b in session.sql(&q)? {
        let (c, t, n, caps) = (
            strings(&b, "capture")?,
            u32s(&b, "type")?,
            strings(&b, "name")?,
            strings(&b, "caps")?,
        );
        for i in 0..b.num_rows() {
            let Some(info) = c[i].as_ref().and_then(|c| infos.get_mut(c)) else {
                continue;
            };
            let caps = caps[i]
                .as_deref()
                .unwrap_or("")
                .lines()
                .filter_map(|l| l.split_once('='))
                .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
                .collect();
            info.pmus.push(PmuInfo {
                type_: t[i],
                name: n[i].clone().unwrap_or_default(),
                caps,
            });
        }
    }
    Ok(())
}

/// Each capture's events.
fn read_events(session: &Session, filter: &str) -> Result<BTreeMap<String, Vec<EventRow>>, Error> {
    let mut events: BTreeMap<String, Vec<EventRow>> = BTreeMap::new();
    let q = helpers::fill(helpers::TOPDOWN_EVENTS, &[("filter", Param::Sql(filter))]);
    for b in session.sql(&q)? {
        let (c, id, t, cfg, gl) = (
            strings(&b, "capture")?,
            u32s(&b, "event_id")?,
            u32s(&b, "type")?,
            u64s(&b, "config")?,
            u32s(&b, "group_leader")?,
        );
        let member = match b.column_by_name("member") {
            Some(_) => u32s(&b, "member")?,
            None => vec![None; b.num_rows()],
        };
        for i in 0..b.num_rows() {
            let (Some(cap), Some(event_id), Some(type_), Some(config)) =
                (c[i].clone(), id[i], t[i], cfg[i])
            else {
                continue;
            };
            events.entry(cap).or_default().push(EventRow {
                event_id,
                type_,
                config,
                group_leader: gl[i],
                member: member[i],
            });
        }
    }
    Ok(events)
}

/// Per sampler event of one capture: samples, and samples with a value
/// in each member column its groups can fill (`events`' members; every
/// column for an older dataset without them): a scan of the samples,
/// one capture's, grouped by a number.
fn member_counts_of(
    session: &Session,
    capture: &str,
    events: &[EventRow],
) -> Result<MemberCounts, Error> {
    let members = match events.iter().filter_map(|e| e.member).max() {
        Some(m) => m.min(MEMBER_COLUMNS - 1) + 1,
        None => MEMBER_COLUMNS,
    };
    let cols: Vec<String> = (0..members)
        .map(|k| format!("COUNT(m{k}) AS c{k}"))
        .collect();
    let mut out = MemberCounts::new();
    let q = helpers::fill(
        helpers::TOPDOWN_MEMBER_COUNTS,
        &[
            ("counts", Param::Sql(&cols.join(", "))),
            ("capture", Param::Text(capture)),
        ],
    );
    for b in session.sql(&q)? {
        let (e, n) = (u32s(&b, "event_id")?, u64s(&b, "n")?);
        let ks = (0..members)
            .map(|k| u64s(&b, &format!("c{k}")))
            .collect::<Result<Vec<_>, _>>()?;
        for i in 0..b.num_rows() {
            let Some(e) = e[i] else { continue };
            let mut per = [0u64; MEMBER_COLUMNS as usize];
            for (k, col) in ks.iter().enumerate() {
                per[k] = col[i].unwrap_or(0);
            }
            out.insert(e, (n[i].unwrap_or(0), per));
        }
    }
    Ok(out)
}

/// What a capture of this model would need, as a `perf record` line.
fn needed(capture: &str, model: &Model) -> String {
    let records: Vec<String> = model
        .sets
        .iter()
        .map(|u| u.set.record.replace("CMD", "<command>"))
        .collect();
    format!(
        "capture {capture} has no topdown events for {} ({}); record them with: {}",
        model.name,
        model.found_by,
        records.join("  and  ")
    )
}

/// Where a capture's samples carry one role: every source (a role may be
/// in several groups, e.g. the cycles that lead each of several groups the
/// kernel multiplexes).
type RoleSources = BTreeMap<String, Vec<Source>>;

/// The group a source belongs to: its sampler events.
fn group_of(s: &Source) -> Vec<u32> {
    match s {
        Source::Member { samplers, .. } => samplers.clone(),
        Source::Period { event } => vec![*event],
    }
}

/// Per sampler event, how many samples it has and how many carry a value
/// in each member column (an id no event has leaves its column null).
pub(crate) type MemberCounts = BTreeMap<u32, (u64, [u64; MEMBER_COLUMNS as usize])>;

/// The roles a capture's events carry for one set, and where.
fn sources(
    u: &SetUse,
    types: &[u32],
    hybrid: bool,
    capture: &Capture<'_>,
    warnings: &mut Vec<String>,
) -> RoleSources {
    let mut out: RoleSources = BTreeMap::new();
    let mut independent = Vec::new();
    for e in capture.events {
        let key = EventKey {
            type_: e.type_,
            config: e.config,
        };
        let Some(role) = role_of(u, types, hybrid, key) else {
            continue;
        };
        let source = match e.group_leader {
            Some(leader) => match member_source(capture, e, leader, role, warnings) {
                Some(s) => s,
                None => continue,
            },
            None if capture.counts.contains_key(&e.event_id) => {
                independent.push(role.to_string());
                Source::Period { event: e.event_id }
            }
            None => continue,
        };
        let list = out.entry(role.to_string()).or_default();
        if !list.contains(&source) {
            list.push(source);
        }
    }
    if independent.len() > 1 {
        let w = format!(
            "capture {}: {} were sampled independently, each with its own period; if there were more events than counters the kernel multiplexed them, and this capture does not record for how long each ran, so their sums are not scaled",
            capture.id,
            independent.join(", ")
        );
        warnings.push(w);
    }
    out
}

/// Where event `e`, a member of `leader`'s group playing `role`, has its
/// values: its column of the rows of the group's sampled events. `None`
/// (with a warning where it is worth one) when no sample carries them.
fn member_source(
    capture: &Capture<'_>,
    e: &EventRow,
    leader: u32,
    role: &str,
    warnings: &mut Vec<String>,
) -> Option<Source> {
    let id = capture.id;
    // Members in event order; the leader is member 0.
    let mut members: Vec<u32> = capture
        .events
        .iter()
        .filter(|x| x.group_leader == Some(leader) || x.event_id == leader)
        .map(|x| x.event_id)
        .collect();
    members.sort_unstable();
    members.dedup();
    let member = members.iter().position(|&x| x == e.event_id)?;
    let samplers: Vec<u32> = members
        .iter()
        .copied()
        .filter(|x| capture.counts.contains_key(x))
        .collect();
    if samplers.is_empty() {
        return None;
    }
    if member as u32 >= MEMBER_COLUMNS {
        warnings.push(format!(
            "capture {id}: {role} is member {member} of its group; only members 0-{} have per-sample columns",
            MEMBER_COLUMNS - 1
        ));
        return None;
    }
    // Samples whose read gives this member no value (its id is unknown to
    // the capture) do not carry the role.
    let (total, with) = samplers.iter().fold((0, 0), |(t, w), s| {
        let (n, c) = capture.counts.get(s).copied().unwrap_or((0, [0; 16]));
        (t + n, w + c[member])
    });
    if with == 0 {
        warnings.push(format!(
            "capture {id}: no sample carries a value for {role} (event {}): its id is in no sample's read group as the capture names it; nodes that need it are not computed",
            e.event_id
        ));
        return None;
    }
    if with < total {
        warnings.push(format!(
            "capture {id}: {} of {total} samples carry no value for {role} (an id the capture does not name); they count 0 for it",
            total - with
        ));
    }
    Some(Source::Member {
        samplers,
        member: member as u32,
    })
}

/// How one capture's role values are laid out for the queries: each
/// variable (a per-sample column) and its source, and what replaces each
/// role in the formulas.
pub(crate) struct Layout {
    /// Variable → where its value is.
    pub(crate) vars: BTreeMap<String, Source>,
    /// Role → its expression over variables (absent: the role is the
    /// variable of the same name).
    pub(crate) subst: BTreeMap<String, Expr>,
    /// A signature of the layout: captures that share it share a query.
    pub(crate) signature: String,
}

/// Lays out the roles. With one group (or independent events) each role
/// is a variable. When the roles come from several groups the kernel
/// multiplexed (taking turns on the counters), each group measured part of
/// the time: every group's counts are scaled to the whole time by the
/// group's own share of a clock event that leads every group (`cycles`),
/// `x_G · C / C_G` with `C = Σ C_G`, so that a formula mixing events of two
/// groups divides rates of the same time (perf stat scales by
/// time_enabled/time_running to the same end; sampled reads do not carry
/// them).
fn layout(roles: &RoleSources) -> Layout {
    let groups = groups(roles);
    let grouped = groups.len() > 1
        && roles
            .values()
            .flatten()
            .all(|s| matches!(s, Source::Member { .. }));
    // The clock: a role every group carries; cycles if it is one.
    let clock = roles
        .iter()
        .filter(|(_, srcs)| groups.iter().all(|g| in_group(srcs, g).is_some()))
        .map(|(r, _)| r.clone())
        .min_by_key(|r| (r != "cycles", r.clone()));
    let (vars, subst) = match (grouped, clock) {
        (true, Some(clock)) => scaled(roles, &groups, &clock),
        _ => (unscaled(roles, &groups), BTreeMap::new()),
    };
    let signature = format!(
        "{}|{}",
        vars.keys().cloned().collect::<Vec<_>>().join(","),
        subst
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",")
    );
    Layout {
        vars,
        subst,
        signature,
    }
}

/// The groups the roles come from, those with more roles first: a role
/// found in several groups is taken from the one that carries the most
/// of the set.
fn groups(roles: &RoleSources) -> Vec<Vec<u32>> {
    let mut groups: Vec<Vec<u32>> = Vec::new();
    for srcs in roles.values() {
        for s in srcs {
            let g = group_of(s);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    let weight = |g: &Vec<u32>| {
        roles
            .values()
            .filter(|srcs| srcs.iter().any(|s| group_of(s) == *g))
            .count()
    };
    groups.sort_by(|a, b| weight(b).cmp(&weight(a)).then(a.cmp(b)));
    groups
}

/// A role's source in group `g`, if it has one there.
fn in_group(srcs: &[Source], g: &Vec<u32>) -> Option<Source> {
    srcs.iter().find(|s| group_of(s) == *g).cloned()
}

/// Each role a variable, from the first group that has it.
fn unscaled(roles: &RoleSources, groups: &[Vec<u32>]) -> BTreeMap<String, Source> {
    let mut vars = BTreeMap::new();
    for (role, srcs) in roles {
        let s = groups
            .iter()
            .find_map(|g| in_group(srcs, g))
            .or_else(|| srcs.first().cloned());
        if let Some(s) = s {
            vars.insert(role.clone(), s);
        }
    }
    vars
}

/// The variables and substitutions of roles from multiplexed groups, each
/// scaled by its group's share of `clock`: the clock is a variable per
/// group (`<clock>__g<i>`) and stands for their sum; every other role is
/// taken from the first group that has it, as `x_G · C / C_G`.
fn scaled(
    roles: &RoleSources,
    groups: &[Vec<u32>],
    clock: &str,
) -> (BTreeMap<String, Source>, BTreeMap<String, Expr>) {
    use perfq_topdown::expr::Op;
    let bin = |op, a: Expr, b: Expr| Expr::Bin(op, Box::new(a), Box::new(b));
    let clock_var = |i: usize| format!("{clock}__g{i}");
    let total = (0..groups.len())
        .map(|i| Expr::Var(clock_var(i)))
        .reduce(|a, b| bin(Op::Add, a, b))
        .unwrap_or(Expr::Num(0.0));
    let mut vars = BTreeMap::new();
    let mut subst = BTreeMap::new();
    for (i, g) in groups.iter().enumerate() {
        if let Some(s) = roles.get(clock).and_then(|srcs| in_group(srcs, g)) {
            vars.insert(clock_var(i), s);
        }
    }
    subst.insert(clock.to_string(), total.clone());
    for (role, srcs) in roles {
        if role == clock {
            continue;
        }
        let Some((i, s)) = groups
            .iter()
            .enumerate()
            .find_map(|(i, g)| in_group(srcs, g).map(|s| (i, s)))
        else {
            continue;
        };
        vars.insert(role.clone(), s);
        let scaled = bin(
            Op::Div,
            bin(Op::Mul, Expr::Var(role.clone()), total.clone()),
            Expr::Var(clock_var(i)),
        );
        subst.insert(role.clone(), scaled);
    }
    (vars, subst)
}
