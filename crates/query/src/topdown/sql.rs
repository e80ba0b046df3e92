//! The topdown queries as SQL text, compiled from a [`SetPlan`].
//!
//! Layers (each a CTE):
//! 1. `t`: per-sample role values (`r_<role>`, DOUBLE) — the
//!    `topdown_samples` view;
//! 2. `g`: sums per stack, leaf frame or thread — the sums are additive,
//!    so most of the work is done over samples once;
//! 3. `k`: sums per output key: `n` samples, `s_<role>` sums and
//!    `p_<a>_<b>` sums of products (for the standard errors);
//! 4. `v`: node values (`v_<node>`) and their gradients with respect to
//!    each role (`g_<node>_<role>`);
//! 5. `e`: standard errors: the delta method over the per-sample values,
//!    `Var = n/(n-1) Σ_ab g_a g_b (p_ab - s_a s_b / n)` (for a plain ratio
//!    this is the ratio estimator's variance);
//! 6. `c`: values clamped to [0, 1], with the reason when one was not;
//! 7. the flags: a node's threshold holds and its parent is flagged.

use std::collections::BTreeSet;

use perfq_topdown::{CompiledNode, LEVEL1};

use crate::topdown::plan::{SetPlan, Source};
use crate::topdown::{By, Mode};

/// Tolerance under which a value outside [0, 1] is rounding, not an
/// impossible value worth a note.
const SLACK: f64 = 0.0005;
/// How far the level-1 shares may sum from 1 before the row says so.
const SUM_SLACK: f64 = 0.005;

fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn list(ids: &[u32]) -> String {
    ids.iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The per-sample view: one row per sample that carries any of the set's
/// roles, with the role values as DOUBLE columns `r_<role>`.
pub(crate) fn samples(plan: &SetPlan) -> String {
    let roles = &plan.compiled.roles;
    let parts: Vec<String> = plan
        .captures
        .iter()
        .map(|c| {
            let cols: Vec<String> = roles
                .iter()
                .map(|r| {
                    let v = match c.roles.get(r) {
                        Some(Source::Member { samplers, member }) => format!(
                            "CASE WHEN event_id IN ({}) THEN m{member} END",
                            list(samplers)
                        ),
                        Some(Source::Period { event }) => {
                            format!("CASE WHEN event_id = {event} THEN period END")
                        }
                        // An optional role this capture lacks.
                        None => "0".into(),
                    };
                    format!("CAST(COALESCE({v}, 0) AS DOUBLE) AS r_{r}")
                })
                .collect();
            format!(
                "SELECT capture, sample_id, time, pid, tid, cpu, stack_id, leaf_frame_id, {} \
                 FROM samples WHERE capture = {} AND event_id IN ({})",
                cols.join(", "),
                quote(&c.capture),
                list(&c.events)
            )
        })
        .collect();
    parts.join(" UNION ALL ")
}

/// Sums and sums of products of the roles: over the samples of `t`
/// (`first`), or re-adding the sums of an earlier grouping.
fn sums(roles: &BTreeSet<String>, first: bool) -> Vec<String> {
    let roles: Vec<&String> = roles.iter().collect();
    let mut out = Vec::new();
    out.push(if first {
        "COUNT(*) AS n".into()
    } else {
        "SUM(n) AS n".into()
    });
    for r in &roles {
        out.push(if first {
            format!("SUM(r_{r}) AS s_{r}")
        } else {
            format!("SUM(s_{r}) AS s_{r}")
        });
    }
    for (i, a) in roles.iter().enumerate() {
        for b in &roles[i..] {
            out.push(if first {
                format!("SUM(r_{a} * r_{b}) AS p_{a}__{b}")
            } else {
                format!("SUM(p_{a}__{b}) AS p_{a}__{b}")
            });
        }
    }
    out
}

/// The function name of a frame row `f` (perf shows an unresolved frame
/// by its offset in the DSO, else its address).
const SYMBOL: &str = "COALESCE(f.symbol, CASE WHEN f.frame_id IS NULL THEN '[unknown]' \
     ELSE concat('0x', to_hex(CAST(COALESCE(f.dso_offset, f.address) AS BIGINT))) END)";
const DSO: &str = "COALESCE(f.dso, '[unknown]')";

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

/// `g` and `k`: the sums per output key.
fn grouped(plan: &SetPlan, by: By, mode: Mode, interval_ns: u64, multi: bool) -> String {
    let roles = &plan.compiled.roles;
    let first = sums(roles, true).join(", ");
    let again = sums(roles, false).join(", ");
    let cap = if multi { "g.capture AS capture, " } else { "" };
    let comm = "(SELECT capture, tid, comm FROM (SELECT capture, tid, comm, \
                row_number() OVER (PARTITION BY capture, tid ORDER BY time DESC) AS rn \
                FROM threads WHERE comm IS NOT NULL) WHERE rn = 1)";
    match (by, mode) {
        (By::Function, Mode::SelfTime) | (By::Dso, _) => {
            let (sel, keys) = match by {
                By::Dso => (format!("{DSO} AS dso"), "dso"),
                _ => (format!("{SYMBOL} AS symbol, {DSO} AS dso"), "symbol, dso"),
            };
            format!(
                "g AS (SELECT capture, leaf_frame_id, {first} FROM t GROUP BY capture, leaf_frame_id), \
                 gk AS (SELECT {sel}, g.* FROM g LEFT JOIN frames f ON f.capture = g.capture \
                 AND f.frame_id = g.leaf_frame_id AND f.inline_depth = 0), \
                 k AS (SELECT {keys}, {again} FROM gk GROUP BY {keys})"
            )
        }
        (By::Function, Mode::Total) => {
            // `g` is named once: DataFusion inlines a CTE at each use,
            // and `g` is the pass over every sample. Stacks are unnested
            // whole (only sampled stacks have their frames listed).
            let captures: Vec<String> = plan.captures.iter().map(|c| quote(&c.capture)).collect();
            let stack_filter = format!(" AND capture IN ({})", captures.join(", "));
            format!(
            "g AS (SELECT capture, stack_id, {first} FROM t WHERE stack_id IS NOT NULL \
             GROUP BY capture, stack_id), \
             u AS (SELECT capture, stack_id, unnest(frame_ids) AS frame_id FROM stacks \
             WHERE frame_ids IS NOT NULL{stack_filter}), \
             sf AS (SELECT DISTINCT u.capture, u.stack_id, {SYMBOL} AS symbol, {DSO} AS dso \
             FROM u LEFT JOIN frames f ON f.capture = u.capture AND f.frame_id = u.frame_id \
             AND f.inline_depth = 0), \
             gk AS (SELECT sf.symbol, sf.dso, g.* FROM g JOIN sf ON sf.capture = g.capture \
             AND sf.stack_id = g.stack_id), \
             k AS (SELECT symbol, dso, {again} FROM gk GROUP BY symbol, dso)"
            )
        }
        (By::Thread, _) => format!(
            "g AS (SELECT capture, pid, tid, {first} FROM t GROUP BY capture, pid, tid), \
             k AS (SELECT {cap}g.pid AS pid, g.tid AS tid, c.comm AS comm, {} FROM g \
             LEFT JOIN {comm} c ON c.capture = g.capture AND c.tid = g.tid)",
            pass(roles, "g")
        ),
        (By::Process, _) => format!(
            "g AS (SELECT capture, pid, {first} FROM t GROUP BY capture, pid), \
             k AS (SELECT {cap}g.pid AS pid, c.comm AS comm, {} FROM g \
             LEFT JOIN {comm} c ON c.capture = g.capture AND c.tid = g.pid)",
            pass(roles, "g")
        ),
        (By::Interval, _) => format!(
            "g AS (SELECT t.capture AS capture, \
             CAST(FLOOR(CAST(t.time - c.time_first AS DOUBLE) / {interval_ns}) AS BIGINT) AS bucket, \
             {first} FROM t JOIN capture c ON c.capture = t.capture \
             GROUP BY t.capture, CAST(FLOOR(CAST(t.time - c.time_first AS DOUBLE) / {interval_ns}) AS BIGINT)), \
             k AS (SELECT {cap}CAST(g.bucket AS DOUBLE) * {} AS start_s, {} FROM g)",
            interval_ns as f64 / 1e9,
            pass(roles, "g")
        ),
    }
}

/// `n`, the sums and the products of `t`, passed through.
fn pass(roles: &BTreeSet<String>, t: &str) -> String {
    let roles: Vec<&String> = roles.iter().collect();
    let mut out = vec![format!("{t}.n AS n")];
    for r in &roles {
        out.push(format!("{t}.s_{r} AS s_{r}"));
    }
    for (i, a) in roles.iter().enumerate() {
        for b in &roles[i..] {
            out.push(format!("{t}.p_{a}__{b} AS p_{a}__{b}"));
        }
    }
    out.join(", ")
}

fn sum_col(r: &str) -> String {
    format!("s_{r}")
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
    let nodes = &plan.compiled.nodes;
    let roles = &plan.compiled.roles;

    // v: values and gradients.
    let mut v_cols = vec![keys_sql.clone(), pass(roles, "k")];
    for n in nodes {
        v_cols.push(format!("{} AS v_{}", n.expr.to_sql(&sum_col), n.name));
        for r in node_roles(n) {
            let d = n.expr.derivative(&r);
            v_cols.push(format!("{} AS g_{}__{r}", d.to_sql(&sum_col), n.name));
        }
    }
    // e: standard errors.
    let sums_cols: Vec<String> = roles.iter().map(|r| format!("s_{r}")).collect();
    let mut e_cols = vec![keys_sql.clone(), "n".to_string()];
    e_cols.extend(sums_cols.iter().cloned());
    for n in nodes {
        e_cols.push(format!("v_{}", n.name));
        let rs: Vec<String> = node_roles(n).into_iter().collect();
        let mut terms = Vec::new();
        for (i, a) in rs.iter().enumerate() {
            for b in &rs[i..] {
                let (x, y) = if a <= b { (a, b) } else { (b, a) };
                let cov = format!("(p_{x}__{y} - s_{x} * s_{y} / n)");
                let w = if a == b { "" } else { "2.0 * " };
                terms.push(format!("{w}g_{n}__{a} * g_{n}__{b} * {cov}", n = n.name));
            }
        }
        let var = if terms.is_empty() {
            "0.0".into()
        } else {
            format!("(CAST(n AS DOUBLE) / (n - 1)) * ({})", terms.join(" + "))
        };
        e_cols.push(format!(
            "CASE WHEN n > 1 THEN SQRT(CASE WHEN {var} > 0 THEN {var} ELSE 0.0 END) END AS se_{}",
            n.name
        ));
    }
    // c: clamped values and the reasons.
    let mut c_cols = vec![keys_sql.clone(), "n".to_string()];
    c_cols.extend(sums_cols.iter().cloned());
    let mut reasons = Vec::new();
    for n in nodes {
        let v = format!("v_{}", n.name);
        c_cols.push(format!(
            "CASE WHEN {v} < 0 THEN 0.0 WHEN {v} > 1 THEN 1.0 ELSE {v} END AS {}",
            n.name
        ));
        c_cols.push(format!("se_{}", n.name));
        reasons.push(format!(
            "CASE WHEN {v} < -{SLACK} THEN concat('{} ', CAST(ROUND({v} * 100, 2) AS VARCHAR), '% clamped to 0') \
             WHEN {v} > 1 + {SLACK} THEN concat('{} ', CAST(ROUND({v} * 100, 2) AS VARCHAR), '% clamped to 100') END",
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
             CAST(ROUND(({sum}) * 100, 2) AS VARCHAR), '%') END"
        ));
    }
    reasons.push("CASE WHEN n = 0 THEN 'no samples' END".into());
    c_cols.push(format!("concat_ws('; ', {}) AS issues", reasons.join(", ")));
    // Flags.
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
    let mut f_cols = vec![
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
        f_cols.push(format!("({}) AS flag_{}", conds.join(" AND "), n.name));
    }
    let order = keys
        .iter()
        .map(|k| format!("{k} ASC"))
        .collect::<Vec<_>>()
        .join(", ");
    let order = match by {
        By::Interval => order,
        _ => format!("n DESC, {order}"),
    };
    format!(
        "WITH t AS ({}), {}, v AS (SELECT {} FROM k), e AS (SELECT {} FROM v), c AS (SELECT {} FROM e) \
         SELECT {} FROM c ORDER BY {order}",
        samples(plan),
        grouped(plan, by, mode, interval_ns, multi),
        v_cols.join(", "),
        e_cols.join(", "),
        c_cols.join(", "),
        f_cols.join(", "),
    )
}

fn node_roles(n: &CompiledNode) -> BTreeSet<String> {
    let mut v = BTreeSet::new();
    n.expr.vars(&mut v);
    v
}
