//! The topdown queries as SQL text, compiled from a [`SetPlan`] into the
//! templates of `sql/_topdown*.sql` (`crate::helpers`).
//!
//! Layers (each a CTE of `_topdown.sql`):
//! 1. `t`: per-sample role values (`r_<role>`, DOUBLE) — the
//!    `topdown_samples` view (`_topdown_samples.sql`, one part per
//!    capture);
//! 2. `k`: sums per output key: `n` samples, `s_<role>` sums and
//!    `p_<a>__<b>` sums of products (for the standard errors, only of
//!    roles that meet in a formula). The sums are additive, so most of the
//!    work is done over samples once, summed per leaf frame, thread or
//!    stack set first (`_topdown_by_*.sql`; total rows
//!    `_inclusive_sums.sql`, as `function_total`);
//! 3. `l1` .. `lN` and `v`: node values (`v_<node>`) and the variances of
//!    their estimates (`var_<node>`): the delta method over the per-sample
//!    values, `Var = n/(n-1) Σ_ab g_a g_b (p_ab - s_a s_b / n)` with `g`
//!    the formula's derivatives (for a plain ratio, the ratio estimator's
//!    variance). The formulas, their derivatives and the variances are
//!    written as layers of shared subexpressions
//!    ([`perfq_topdown::layer`]), each a column computed once;
//!    inlined whole they were tens of kilobytes of SQL per query, which
//!    DataFusion took longer to plan than to run;
//! 4. `c`: values clamped to [0, 1], with the reason when one was not,
//!    and the standard errors (the variances' square roots);
//! 5. the flags: a node's threshold holds and its parent is flagged.

use std::collections::BTreeSet;

use perfq_topdown::expr::Op;
use perfq_topdown::{layer, CompiledNode, Expr, Layers, LEVEL1};

use crate::columns::quote;
use crate::helpers::{self, Param};
use crate::inclusive::{Inclusive, SAME_STACK};
use crate::topdown::plan::{CaptureSources, SetPlan, Source};
use crate::topdown::{By, Mode};

/// Tolerance under which a value outside [0, 1] is rounding, not an
/// impossible value worth a note.
const SLACK: f64 = 0.0005;
/// How far the level-1 shares may sum from 1 before the row says so.
const SUM_SLACK: f64 = 0.005;
/// The text type a percentage is cast to in `issues`: Spark wants
/// VARCHAR's length, and STRING is not standard SQL (Trino lacks it).
const TEXT: &str = "VARCHAR(32)";

fn list(ids: &[u32]) -> String {
    ids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// `ids` for `IN (...)`; `NULL` (which no value equals) for none.
fn list_or_none(ids: &[u32]) -> String {
    match ids.is_empty() {
        true => "NULL".into(),
        false => list(ids),
    }
}

/// The per-sample view: one row per sample that carries any of the set's
/// roles, with the role values as DOUBLE columns `r_<role>`.
pub(crate) fn samples(plan: &SetPlan) -> String {
    let only = match &plan.pids {
        Some(pids) => format!(" AND pid IN ({})", list_or_none(pids)),
        None => String::new(),
    };
    let parts: Vec<String> = plan
        .captures
        .iter()
        .map(|c| {
            let roles: Vec<String> = plan
                .compiled
                .roles
                .iter()
                .map(|r| role_column(c, r))
                .collect();
            helpers::fill(
                helpers::TOPDOWN_SAMPLES,
                &[
                    ("roles", Param::Sql(&roles.join(", "))),
                    ("capture", Param::Text(&c.capture)),
                    ("events", Param::Sql(&list(&c.events))),
                    ("only", Param::Sql(&only)),
                ],
            )
        })
        .collect();
    parts.join(" UNION ALL ")
}

/// Role `r`'s column of capture `c`'s samples, `r_<role>`.
fn role_column(c: &CaptureSources, r: &str) -> String {
    // Cast before COALESCE: a UInt64 column and an integer literal meet
    // as DECIMAL(20), slow per row.
    let (mut ids, col) = match c.roles.get(r) {
        Some(Source::Member { samplers, member }) => (samplers.clone(), format!("m{member}")),
        Some(Source::Period { event }) => (vec![*event], "period".into()),
        // An optional role this capture lacks.
        None => return format!("0.0 AS r_{r}"),
    };
    ids.sort_unstable();
    ids.dedup();
    let v = format!("CAST({col} AS DOUBLE)");
    let v = if ids == c.events {
        v
    } else {
        format!("CASE WHEN event_id IN ({}) THEN {v} END", list(&ids))
    };
    format!("COALESCE({v}, 0.0) AS r_{r}")
}

/// The pairs of roles whose products the standard errors need: those
/// that meet in some node's formula (Zen 4's level 2 in three groups
/// taking turns has many that never do).
fn pairs(plan: &SetPlan) -> Vec<(String, String)> {
    let mut out = BTreeSet::new();
    for n in &plan.compiled.nodes {
        let rs: Vec<String> = node_roles(n).into_iter().collect();
        for (i, a) in rs.iter().enumerate() {
            for b in &rs[i..] {
                out.insert((a.clone(), b.clone()));
            }
        }
    }
    out.into_iter().collect()
}

/// The sums over the samples of `t`, each its name and its aggregate:
/// `n` samples, `s_<role>` sums and `p_<a>__<b>` sums of products.
fn sums(plan: &SetPlan) -> Vec<(String, String)> {
    let mut out = vec![("n".to_string(), "COUNT(*)".to_string())];
    for r in &plan.compiled.roles {
        out.push((format!("s_{r}"), format!("SUM(r_{r})")));
    }
    for (a, b) in pairs(plan) {
        out.push((format!("p_{a}__{b}"), format!("SUM(r_{a} * r_{b})")));
    }
    out
}

/// The sums as columns of a query over `t`'s rows, or (`again`) over
/// earlier sums of them.
fn sum_columns(plan: &SetPlan, again: bool) -> String {
    sums(plan)
        .iter()
        .map(|(name, sum)| match again {
            false => format!("{sum} AS {name}"),
            true => format!("SUM({name}) AS {name}"),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The key columns of a grouping, as they appear in the output.
pub(crate) fn key_columns(by: By, multi_capture: bool) -> Vec<&'static str> {
    let mut k = match by {
        By::Function => vec!["symbol", "dso"],
        By::Dso => vec!["dso"],
        By::Thread => vec!["pid", "tid", "comm"],
        By::Process => vec!["pid", "comm"],
        By::Interval => vec!["start_s"],
    };
    if multi_capture && !matches!(by, By::Function | By::Dso) {
        k.insert(0, "capture");
    }
    k
}

/// `k`: the sums per output key, from the per-sample rows `t`.
fn grouped(plan: &SetPlan, by: By, mode: Mode, interval_ns: u64, multi: bool) -> String {
    let (template, keys) = match (by, mode) {
        (By::Function, Mode::Total) => return total(plan),
        (By::Function, Mode::SelfTime) => (helpers::TOPDOWN_BY_LEAF, "symbol, dso"),
        (By::Dso, _) => (helpers::TOPDOWN_BY_LEAF, "dso"),
        (By::Thread, _) => (helpers::TOPDOWN_BY_THREAD, ""),
        (By::Process, _) => (helpers::TOPDOWN_BY_PROCESS, ""),
        (By::Interval, _) => (helpers::TOPDOWN_BY_INTERVAL, ""),
    };
    // The sums pass over every sample: with one capture, its name is a
    // constant rather than a string key hashed per sample.
    let one = match plan.captures.as_slice() {
        [one] => Some(quote(&one.capture)),
        _ => None,
    };
    helpers::fill(
        template,
        &[
            ("capture", Param::Sql(one.as_deref().unwrap_or("capture"))),
            (
                "by_capture",
                Param::Sql(if one.is_some() { "" } else { "capture, " }),
            ),
            (
                "capture_key",
                Param::Sql(if multi { "g.capture AS capture, " } else { "" }),
            ),
            ("keys", Param::Sql(keys)),
            ("sums", Param::Sql(&sum_columns(plan, false))),
            ("resums", Param::Sql(&sum_columns(plan, true))),
            ("pass", Param::Sql(&pass(plan, "g"))),
            ("comms", Param::Sql(helpers::query(helpers::TOPDOWN_COMMS))),
            ("interval_ns", Param::Sql(&interval_ns.to_string())),
            (
                "interval_s",
                Param::Sql(&(interval_ns as f64 / 1e9).to_string()),
            ),
        ],
    )
}

/// Total rows' `k`: a sample counts once for each function on its stack.
/// What matters of a stack is its set of functions, and far fewer sets
/// occur than stacks (call sites and return addresses differ where the
/// functions do not). The pass over every sample sums per set
/// (`stack_sets`, `crate::views`): few groups, whose sums stay in cache,
/// where one group per stack made them miss it and the pass markedly
/// slower.
fn total(plan: &SetPlan) -> String {
    // With one capture, its rows of stack_sets joined by stack id alone.
    let one = match plan.captures.as_slice() {
        [one] => Some(format!(
            "({})",
            helpers::fill(
                helpers::STACK_SETS_OF_CAPTURE,
                &[("capture", Param::Text(&one.capture))],
            )
        )),
        _ => None,
    };
    Inclusive {
        keys: &[],
        samples: "t",
        stack_sets: one.as_deref().unwrap_or("stack_sets"),
        on: match one {
            Some(_) => "ss.stack_id = s.stack_id",
            None => SAME_STACK,
        },
        sums: sums(plan),
    }
    .sql()
}

/// `n`, the sums and the products of `t`, passed through.
fn pass(plan: &SetPlan, t: &str) -> String {
    sums(plan)
        .iter()
        .map(|(name, _)| format!("{t}.{name} AS {name}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The whole query for one set, one grouping.
pub(crate) fn query(
    plan: &SetPlan,
    by: By,
    mode: Mode,
    interval_ns: u64,
    min_samples: u64,
) -> String {
    let multi = plan.captures.len() > 1;
    let keys = key_columns(by, multi);
    let keys_sql = keys.join(", ");
    // v: values and variances, through layers of shared subexpressions
    // (`perfq_topdown::layer`): the formulas inlined down to event sums
    // and their derivatives repeat the same terms many times over.
    let sums_cols: Vec<String> = plan
        .compiled
        .roles
        .iter()
        .map(|r| format!("s_{r}"))
        .collect();
    let (layers, values) = values(plan, &keys_sql, &sums_cols);
    helpers::fill(
        helpers::TOPDOWN,
        &[
            ("samples", Param::Sql(&samples(plan))),
            (
                "sums",
                Param::Sql(&grouped(plan, by, mode, interval_ns, multi)),
            ),
            ("layers", Param::Sql(&layers)),
            ("values", Param::Sql(&values)),
            (
                "clamped",
                Param::Sql(&clamped(plan, &keys_sql, &sums_cols).join(", ")),
            ),
            (
                "flagged",
                Param::Sql(&flagged(plan, min_samples).join(", ")),
            ),
            ("order", Param::Sql(&order(by, &keys))),
        ],
    )
}

/// `c`'s columns: the keys, `n`, the sums, each node's value clamped to
/// [0, 1] and its standard error, and the issues.
fn clamped(plan: &SetPlan, keys_sql: &str, sums_cols: &[String]) -> Vec<String> {
    let mut cols = vec![keys_sql.to_string(), "n".to_string()];
    cols.extend(sums_cols.iter().cloned());
    for n in &plan.compiled.nodes {
        let v = format!("v_{}", n.name);
        cols.push(format!(
            "CASE WHEN {v} < 0 THEN 0.0 WHEN {v} > 1 THEN 1.0 ELSE {v} END AS {}",
            n.name
        ));
        // A variance below 0 is rounding (the covariance terms cancel).
        cols.push(format!(
            "CASE WHEN var_{n} > 0 THEN SQRT(var_{n}) WHEN var_{n} IS NOT NULL THEN 0.0 END AS se_{n}",
            n = n.name
        ));
    }
    cols.push(format!(
        "concat_ws('; ', {}) AS issues",
        issues(&plan.compiled.nodes).join(", ")
    ));
    cols
}

/// Why a row's numbers need a note, one text column each (null when
/// not): values clamped, level-1 shares that do not sum to 1, no samples.
fn issues(nodes: &[CompiledNode]) -> Vec<String> {
    let mut reasons = Vec::new();
    for n in nodes {
        let v = format!("v_{}", n.name);
        reasons.push(format!(
            "CASE WHEN {v} < -{SLACK} THEN concat('{} ', CAST(ROUND({v} * 100, 2) AS {TEXT}), '% clamped to 0') \
             WHEN {v} > 1 + {SLACK} THEN concat('{} ', CAST(ROUND({v} * 100, 2) AS {TEXT}), '% clamped to 100') END",
            n.name, n.name
        ));
    }
    let level1: Vec<String> = nodes
        .iter()
        .filter(|n| n.level == 1)
        .map(|n| format!("v_{}", n.name))
        .collect();
    if LEVEL1.iter().all(|l| nodes.iter().any(|n| n.name == *l)) {
        let sum = level1.join(" + ");
        reasons.push(format!(
            "CASE WHEN ABS({sum} - 1) > {SUM_SLACK} THEN concat('level-1 shares sum to ', \
             CAST(ROUND(({sum}) * 100, 2) AS {TEXT}), '%') END"
        ));
    }
    reasons.push("CASE WHEN n = 0 THEN 'no samples' END".into());
    reasons
}

/// The result's columns: `c`'s, `low_samples`, and each node's flag (its
/// threshold holds and so do its ancestors').
fn flagged(plan: &SetPlan, min_samples: u64) -> Vec<String> {
    let nodes = &plan.compiled.nodes;
    let computed: BTreeSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let node_col = |name: &str| {
        if computed.contains(name) {
            name.to_string()
        } else {
            "CAST(NULL AS DOUBLE)".to_string()
        }
    };
    let own = |n: &CompiledNode| match &n.threshold {
        Some(t) => format!("COALESCE({}, false)", t.to_sql(&node_col)),
        None => "false".into(),
    };
    let mut cols = vec![
        "c.*".to_string(),
        format!("n < {min_samples} AS low_samples"),
    ];
    for n in nodes {
        let mut conds = vec![own(n)];
        let mut parent = n.parent.clone();
        while let Some(p) = parent {
            match nodes.iter().find(|x| x.name == p) {
                Some(pn) => {
                    conds.push(own(pn));
                    parent = pn.parent.clone();
                }
                None => {
                    conds.push("false".into());
                    parent = None;
                }
            }
        }
        cols.push(format!("({}) AS flag_{}", conds.join(" AND "), n.name));
    }
    cols
}

/// The rows' order: most samples first, then by key; intervals in time
/// order.
fn order(by: By, keys: &[&str]) -> String {
    let order = keys
        .iter()
        .map(|k| format!("{k} ASC"))
        .collect::<Vec<_>>()
        .join(", ");
    match by {
        By::Interval => order,
        _ => format!("n DESC, {order}"),
    }
}

/// The layers from `k` to `v` (`l1 AS (...), l2 AS (...), `) and `v`'s
/// body: the keys, `n`, the sums, each node's value `v_<node>` and the
/// variance of its estimate `var_<node>` (see [`variance`]).
fn values(plan: &SetPlan, keys_sql: &str, sums_cols: &[String]) -> (String, String) {
    let sum = |r: &str| Expr::Var(format!("s_{r}"));
    let mut outputs = Vec::new();
    for n in &plan.compiled.nodes {
        outputs.push((
            format!("v_{}", n.name),
            n.expr.substitute(&|v| Some(sum(v))),
        ));
        outputs.push((format!("var_{}", n.name), variance(n)));
    }
    let layers = layer(&outputs, "x");
    let always: Vec<String> = std::iter::once("n".to_string())
        .chain(sums_cols.iter().cloned())
        .collect();
    let (sql, from) = layer_ctes(&layers, keys_sql, &always);
    let ident = |v: &str| v.to_string();
    let mut v_cols = vec![keys_sql.to_string()];
    v_cols.extend(always);
    for (name, e) in &layers.outputs {
        let e = e.to_sql(&ident);
        v_cols.push(match name.strip_prefix("var_") {
            // The `n/(n-1)` of the sample variance; none from one sample.
            Some(_) => {
                format!("CASE WHEN n > 1 THEN CAST(n AS DOUBLE) / (n - 1) * {e} END AS {name}")
            }
            None => format!("{e} AS {name}"),
        });
    }
    (sql, format!("SELECT {} FROM {from}", v_cols.join(", ")))
}

/// The variance of node `n`'s estimate over the sums, but for its
/// `n/(n-1)`: the delta method over the per-sample values,
/// `Σ_ab g_a g_b (p_ab - s_a s_b / n)`, the `g` being the formula's
/// derivatives (for a plain ratio, the ratio estimator's variance).
fn variance(n: &CompiledNode) -> Expr {
    let var = |v: &str| Expr::Var(v.to_string());
    let sum = |r: &str| Expr::Var(format!("s_{r}"));
    let bin = |op, a: Expr, b: Expr| Expr::Bin(op, Box::new(a), Box::new(b));
    let to_sums = |e: &Expr| e.substitute(&|v| Some(sum(v)));
    let rs: Vec<String> = node_roles(n).into_iter().collect();
    let grads: Vec<Expr> = rs.iter().map(|r| to_sums(&n.expr.derivative(r))).collect();
    let mut terms = Vec::new();
    for i in 0..rs.len() {
        for j in i..rs.len() {
            let (a, b) = (&rs[i], &rs[j]);
            let cov = bin(
                Op::Sub,
                var(&format!("p_{a}__{b}")),
                bin(Op::Div, bin(Op::Mul, sum(a), sum(b)), var("n")),
            );
            let mut term = bin(
                Op::Mul,
                bin(Op::Mul, grads[i].clone(), grads[j].clone()),
                cov,
            );
            if i != j {
                term = bin(Op::Mul, Expr::Num(2.0), term);
            }
            terms.push(term);
        }
    }
    balanced_sum(terms)
}

/// The sum of `terms` as a balanced tree of additions: a node with many
/// roles has hundreds of covariance terms, and a chain of that depth is
/// past what SQL parsers take (DataFusion's default recursion limit is
/// 50).
fn balanced_sum(mut terms: Vec<Expr>) -> Expr {
    match terms.len() {
        0 => Expr::Num(0.0),
        1 => terms.remove(0),
        n => {
            let right = terms.split_off(n / 2);
            Expr::Bin(
                Op::Add,
                Box::new(balanced_sum(terms)),
                Box::new(balanced_sum(right)),
            )
        }
    }
}

/// The layers of shared subexpressions as CTEs from `k` (`l1 AS (...),
/// l2 AS (...), `), each passing on the keys, `always` and what later
/// layers read; and the name of the last (`k` without layers).
fn layer_ctes(layers: &Layers, keys_sql: &str, always: &[String]) -> (String, String) {
    let ident = |v: &str| v.to_string();
    let mut sql = String::new();
    let mut from = "k".to_string();
    for (i, cols) in layers.layers.iter().enumerate() {
        // What the later layers read, besides the keys, that exists
        // already.
        let later: BTreeSet<&String> = layers.layers[i..]
            .iter()
            .flatten()
            .map(|(n, _)| n)
            .collect();
        let mut pass = always.to_vec();
        for v in layers.live_from(i + 1) {
            if !pass.contains(&v) && !later.contains(&v) {
                pass.push(v);
            }
        }
        let new: Vec<String> = cols
            .iter()
            .map(|(name, e)| format!("{} AS {name}", e.to_sql(&ident)))
            .collect();
        let this = format!("l{}", i + 1);
        sql.push_str(&format!(
            "{this} AS (SELECT {keys_sql}, {}, {} FROM {from}), ",
            pass.join(", "),
            new.join(", ")
        ));
        from = this;
    }
    (sql, from)
}

fn node_roles(n: &CompiledNode) -> BTreeSet<String> {
    let mut v = BTreeSet::new();
    n.expr.vars(&mut v);
    v
}
