//! The topdown queries as SQL text, compiled from a [`SetPlan`].
//!
//! Layers (each a CTE):
//! 1. `t`: per-sample role values (`r_<role>`, DOUBLE) — the
//!    `topdown_samples` view;
//! 2. `g`: sums per stack, leaf frame or thread — the sums are additive,
//!    so most of the work is done over samples once;
//! 3. `k`: sums per output key: `n` samples, `s_<role>` sums and
//!    `p_<a>__<b>` sums of products (for the standard errors, only of
//!    roles that meet in a formula);
//! 4. `l1` .. `lN` and `v`: node values (`v_<node>`) and the variances of
//!    their estimates (`var_<node>`): the delta method over the per-sample
//!    values, `Var = n/(n-1) Σ_ab g_a g_b (p_ab - s_a s_b / n)` with `g`
//!    the formula's derivatives (for a plain ratio, the ratio estimator's
//!    variance). The formulas, their derivatives and the variances are
//!    written as layers of shared subexpressions
//!    ([`perfq_topdown::layer`]), each a column computed once;
//!    inlined whole they were tens of kilobytes of SQL per query, which
//!    DataFusion took longer to plan than to run;
//! 5. `c`: values clamped to [0, 1], with the reason when one was not,
//!    and the standard errors (the variances' square roots);
//! 6. the flags: a node's threshold holds and its parent is flagged.

use std::collections::BTreeSet;

use perfq_topdown::expr::Op;
use perfq_topdown::{layer, CompiledNode, Expr, LEVEL1};

use crate::columns::quote;
use crate::topdown::plan::{SetPlan, Source};
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
                    // Cast before COALESCE: a UInt64 column and an
                    // integer literal meet as DECIMAL(20), slow per row.
                    let (mut ids, col) = match c.roles.get(r) {
                        Some(Source::Member { samplers, member }) => {
                            (samplers.clone(), format!("m{member}"))
                        }
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

/// Sums and sums of products of the roles: over the samples of `t`
/// (`first`), or re-adding the sums of an earlier grouping.
fn sums(plan: &SetPlan, first: bool) -> Vec<String> {
    let mut out = Vec::new();
    out.push(if first {
        "COUNT(*) AS n".into()
    } else {
        "SUM(n) AS n".into()
    });
    for r in &plan.compiled.roles {
        out.push(if first {
            format!("SUM(r_{r}) AS s_{r}")
        } else {
            format!("SUM(s_{r}) AS s_{r}")
        });
    }
    for (a, b) in pairs(plan) {
        out.push(if first {
            format!("SUM(r_{a} * r_{b}) AS p_{a}__{b}")
        } else {
            format!("SUM(p_{a}__{b}) AS p_{a}__{b}")
        });
    }
    out
}

/// The function and DSO of a `frame_functions` row `f` (`crate::views`:
/// perf's names, unresolved frames by offset or address), `[unknown]`
/// where the row is missing.
const SYMBOL: &str = "COALESCE(f.symbol, '[unknown]')";
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
    let first = sums(plan, true).join(", ");
    let again = sums(plan, false).join(", ");
    let cap = if multi { "g.capture AS capture, " } else { "" };
    // `g` passes over every sample: with one capture, its name is a
    // constant rather than a string key hashed per sample.
    let (gsel, gby) = match plan.captures.as_slice() {
        [one] => (format!("{} AS capture, ", quote(&one.capture)), ""),
        _ => ("capture, ".to_string(), "capture, "),
    };
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
                "g AS (SELECT {gsel}leaf_frame_id, {first} FROM t GROUP BY {gby}leaf_frame_id), \
                 gk AS (SELECT {sel}, g.* FROM g LEFT JOIN frame_functions f ON f.capture = g.capture \
                 AND f.frame_id = g.leaf_frame_id), \
                 k AS (SELECT {keys}, {again} FROM gk GROUP BY {keys})"
            )
        }
        (By::Function, Mode::Total) => {
            // A sample counts once for each function on its stack: what
            // matters of a stack is its set of functions, and far fewer
            // sets occur than stacks (call sites and return addresses
            // differ where the functions do not: 33 sets for 94 K stacks
            // in the benchmark capture). The pass over every sample sums
            // per set (`stack_sets`, `crate::views`): a handful of groups whose sums stay
            // in cache, where one group per stack made them miss it and
            // took a third of the time on 10 M samples.
            let sets = match plan.captures.as_slice() {
                [one] => format!(
                    "(SELECT stack_id, set_id FROM stack_sets WHERE capture = {}) ss \
                     JOIN t ON ss.stack_id = t.stack_id",
                    quote(&one.capture)
                ),
                _ => "stack_sets ss JOIN t ON ss.capture = t.capture AND ss.stack_id = t.stack_id"
                    .to_string(),
            };
            // Summed per function id, then named: ids group faster than
            // names, and each function is named once.
            format!(
                "g AS (SELECT ss.set_id AS set_id, {first} FROM {sets} GROUP BY ss.set_id), \
                 gf AS (SELECT fs.function_id AS function_id, {again} FROM g \
                 JOIN set_functions fs ON fs.set_id = g.set_id GROUP BY fs.function_id), \
                 k AS (SELECT fn.symbol AS symbol, fn.dso AS dso, {} FROM gf \
                 JOIN functions fn ON fn.function_id = gf.function_id)",
                pass(plan, "gf")
            )
        }
        (By::Thread, _) => format!(
            "g AS (SELECT {gsel}pid, tid, {first} FROM t GROUP BY {gby}pid, tid), \
             k AS (SELECT {cap}g.pid AS pid, g.tid AS tid, c.comm AS comm, {} FROM g \
             LEFT JOIN {comm} c ON c.capture = g.capture AND c.tid = g.tid)",
            pass(plan, "g")
        ),
        (By::Process, _) => format!(
            "g AS (SELECT {gsel}pid, {first} FROM t GROUP BY {gby}pid), \
             k AS (SELECT {cap}g.pid AS pid, c.comm AS comm, {} FROM g \
             LEFT JOIN {comm} c ON c.capture = g.capture AND c.tid = g.pid)",
            pass(plan, "g")
        ),
        (By::Interval, _) => format!(
            "g AS (SELECT t.capture AS capture, \
             CAST(FLOOR(CAST(t.time - c.time_first AS DOUBLE) / {interval_ns}) AS BIGINT) AS bucket, \
             {first} FROM t JOIN capture c ON c.capture = t.capture \
             GROUP BY t.capture, CAST(FLOOR(CAST(t.time - c.time_first AS DOUBLE) / {interval_ns}) AS BIGINT)), \
             k AS (SELECT {cap}CAST(g.bucket AS DOUBLE) * {} AS start_s, {} FROM g)",
            interval_ns as f64 / 1e9,
            pass(plan, "g")
        ),
    }
}

/// `n`, the sums and the products of `t`, passed through.
fn pass(plan: &SetPlan, t: &str) -> String {
    let mut out = vec![format!("{t}.n AS n")];
    for r in &plan.compiled.roles {
        out.push(format!("{t}.s_{r} AS s_{r}"));
    }
    for (a, b) in pairs(plan) {
        out.push(format!("{t}.p_{a}__{b} AS p_{a}__{b}"));
    }
    out.join(", ")
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

    // v: values and variances, through layers of shared subexpressions
    // (`perfq_topdown::layer`): the formulas inlined down to event sums
    // and their derivatives repeat the same terms many times over.
    let sums_cols: Vec<String> = roles.iter().map(|r| format!("s_{r}")).collect();
    let (v_layers, v_cols) = values(plan, &keys_sql, &sums_cols);
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
        // A variance below 0 is rounding (the covariance terms cancel).
        c_cols.push(format!(
            "CASE WHEN var_{n} > 0 THEN SQRT(var_{n}) WHEN var_{n} IS NOT NULL THEN 0.0 END AS se_{n}",
            n = n.name
        ));
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
        "WITH t AS ({}), {}, {v_layers}v AS ({v_cols}), c AS (SELECT {} FROM v) \
         SELECT {} FROM c ORDER BY {order}",
        samples(plan),
        grouped(plan, by, mode, interval_ns, multi),
        c_cols.join(", "),
        f_cols.join(", "),
    )
}

/// The layers from `k` to `v` (`l1 AS (...), l2 AS (...), `) and `v`'s
/// body: the keys, `n`, the sums, each node's value `v_<node>` and the
/// variance of its estimate `var_<node>` (the delta method over the
/// per-sample values: `n/(n-1) Σ_ab g_a g_b (p_ab - s_a s_b / n)`, the
/// `g` being the formula's derivatives; for a plain ratio this is the
/// ratio estimator's variance).
fn values(plan: &SetPlan, keys_sql: &str, sums_cols: &[String]) -> (String, String) {
    let var = |v: &str| Expr::Var(v.to_string());
    let sum = |r: &str| Expr::Var(format!("s_{r}"));
    let bin = |op, a: Expr, b: Expr| Expr::Bin(op, Box::new(a), Box::new(b));
    let mut outputs = Vec::new();
    for n in &plan.compiled.nodes {
        let to_sums = |e: &Expr| e.substitute(&|v| Some(sum(v)));
        outputs.push((format!("v_{}", n.name), to_sums(&n.expr)));
        let rs: Vec<String> = node_roles(n).into_iter().collect();
        let grads: Vec<Expr> = rs.iter().map(|r| to_sums(&n.expr.derivative(r))).collect();
        let mut total: Option<Expr> = None;
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
                total = Some(match total {
                    Some(t) => bin(Op::Add, t, term),
                    None => term,
                });
            }
        }
        outputs.push((format!("var_{}", n.name), total.unwrap_or(Expr::Num(0.0))));
    }
    let layers = layer(&outputs, "x");
    let ident = |v: &str| v.to_string();
    let always: Vec<String> = std::iter::once("n".to_string())
        .chain(sums_cols.iter().cloned())
        .collect();
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
        let mut pass = always.clone();
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

fn node_roles(n: &CompiledNode) -> BTreeSet<String> {
    let mut v = BTreeSet::new();
    n.expr.vars(&mut v);
    v
}
