//! `perfq report`: per-function self and total (inclusive) samples and
//! periods, as `perf report --no-children` / `--children` compute them.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use perfq_reader::{Capture, MemberDelta, ReadDeltas, RecordType};
use perfq_symbolize::{
    leaf_lookup, Config, FrameLookup, Location, Resolved, StackUnwinder, Symbolizer, Tracker,
};
use rustc_hash::FxHashMap;
use serde_json::json;

use crate::Outcome;

/// Callchain frame lookups remembered at most.
const FRAME_CACHE_LIMIT: usize = 1 << 20;

/// How rows are keyed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SortKey {
    /// Shared object and symbol (perf's `--sort dso,sym`).
    #[value(name = "dso,sym")]
    DsoSym,
    /// Symbol only.
    Sym,
    /// Shared object only.
    Dso,
}

/// Output formats of `perfq report`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    /// Aligned columns.
    Table,
    /// Comma-separated values with a header line.
    Csv,
    /// One JSON array of rows.
    Json,
}

/// Options of `perfq report`.
pub struct Options {
    pub children: bool,
    pub sort: SortKey,
    pub event: Option<String>,
    pub format: ReportFormat,
    pub symbols: Config,
}

#[derive(Default, Clone, Copy)]
struct Acc {
    samples: u64,
    period: u64,
    total_samples: u64,
    total_period: u64,
    /// Own samples whose symbol could not be resolved.
    unresolved_samples: u64,
}

/// One row of the report.
struct Row {
    event: String,
    dso: String,
    symbol: String,
    reason: Option<&'static str>,
    acc: Acc,
}

/// An unresolved address as perf prints it (`%-#.*llx` with 16 digits:
/// `0x` then 16 digits, or 16 zeros for 0, which C prints without prefix).
fn perf_address(a: u64) -> String {
    if a == 0 {
        "0".repeat(16)
    } else {
        format!("{a:#018x}")
    }
}

pub fn run(path: &Path, opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let capture = Capture::open(path)?;
    let events = capture.events();
    let mut tracker = Tracker::new(&capture);
    // Unique locations. Unresolved, perf shows a sample's own ip as its
    // offset in the DSO but a callchain entry as the address itself (for
    // return addresses: the return address, though it is looked up at
    // pc - 1, the call), so chain entries carry the address to show.
    // Frames perf unwound from a DWARF user stack also count every function
    // inlined at their address ("name (inlined)"): those are expanded.
    let mut loc_ids: FxHashMap<(Location, Option<u64>, bool), u32> = FxHashMap::default();
    let mut locations: Vec<Location> = Vec::new();
    let mut shown: Vec<(Option<u64>, bool)> = Vec::new();
    let mut intern = |l: Location,
                      show: Option<u64>,
                      expand: bool,
                      locations: &mut Vec<Location>,
                      shown: &mut Vec<(Option<u64>, bool)>|
     -> u32 {
        *loc_ids.entry((l, show, expand)).or_insert_with(|| {
            locations.push(l);
            shown.push((show, expand));
            (locations.len() - 1) as u32
        })
    };
    // Per delivered (event, period) sample: its leaf location and, for
    // --children, its callchain's locations (flat, with start offsets).
    let mut samples: Vec<(usize, u64, u32, u32, u32)> = Vec::new();
    let mut chain_locs: Vec<u32> = Vec::new();
    // (address space, address, lookup bits) → (location id, the space's
    // mappings stamp): valid while the process (or, for kernel addresses,
    // the kernel) maps nothing new.
    let mut frame_cache: FxHashMap<(u32, u64, u8), (u32, u64)> = FxHashMap::default();
    let mut deltas = ReadDeltas::new();
    let mut members: Vec<MemberDelta> = Vec::new();
    let mut bad = 0u64;
    let mut error = None;
    let symbolizer = Symbolizer::new(
        &opt.symbols,
        tracker.kernel_build_id(),
        capture.meta().os_release.as_deref(),
    );
    // User stacks recorded with --call-graph dwarf are unwound (x86_64).
    let mut unwinder = StackUnwinder::new(capture.meta().arch.as_deref());
    let mut any_expanded = false;
    let mut lookups: Vec<FrameLookup> = Vec::new();
    let mut records = capture.records_by_time();
    while let Some(r) = records.next_ok(&mut error) {
        if r.kind != RecordType::SAMPLE {
            if let Ok((data, _)) = capture.parse(&r) {
                tracker.observe(&data);
            }
            continue;
        }
        let Some(ev) = r.event.index() else { continue };
        let Ok(s) = capture.sample(&r) else {
            bad += 1;
            continue;
        };
        let (Some(pid), Some(leaf_frame)) = (s.pid, leaf_lookup(&s)) else {
            continue;
        };
        let leaf = intern(
            tracker.locate(pid, leaf_frame.lookup, leaf_frame.kernel),
            None,
            false,
            &mut locations,
            &mut shown,
        );
        let chain_start = chain_locs.len() as u32;
        if opt.children {
            let unwound = unwinder.sample_frames(&tracker, &symbolizer, &s, &mut lookups);
            for &f in &lookups {
                // Most frames recur: remember what (pid, address, how looked
                // up) gave until the address spaces change.
                let expand = unwound && f.kernel == Some(false);
                any_expanded |= expand;
                let flags = f.lookup_bits() | (u8::from(expand) << 3);
                let (space, stamp) = tracker.lookup_space(pid, &f);
                let id = match frame_cache.get(&(space, f.addr, flags)) {
                    Some(&(id, at)) if at == stamp => id,
                    _ => {
                        let l = tracker.locate(pid, f.lookup, f.kernel);
                        let id = intern(l, Some(f.addr), expand, &mut locations, &mut shown);
                        // Bounded: a long system-wide capture keeps
                        // bringing new processes.
                        if frame_cache.len() >= FRAME_CACHE_LIMIT {
                            frame_cache.clear();
                        }
                        frame_cache.insert((space, f.addr, flags), (id, stamp));
                        id
                    }
                };
                chain_locs.push(id);
            }
        }
        let chain_end = chain_locs.len() as u32;
        // perf splits a sample-read sample into one sample per member with
        // its delta as period, dropping zero deltas.
        if s.read.is_some() {
            members.clear();
            deltas.apply(events, ev, &s, &mut members);
            for m in &members {
                if let (Some(e), Some(d)) = (m.event, m.delta) {
                    if d != 0 {
                        samples.push((e.0, d, leaf, chain_start, chain_end));
                    }
                }
            }
        } else {
            let period = s
                .period
                .unwrap_or_else(|| events.get(ev).map_or(1, |e| e.attr.sample_period_or_freq));
            samples.push((ev.0, period, leaf, chain_start, chain_end));
        }
    }
    let mut symbolizer = symbolizer;
    symbolizer.set_inline(any_expanded);
    let resolved = symbolizer.resolve_all(&tracker, &locations);
    let key_of = |(r, (show, _)): (&Resolved, &(Option<u64>, bool))| -> (String, String) {
        let sym = r
            .symbol
            .clone()
            .unwrap_or_else(|| perf_address(show.unwrap_or(r.addr)));
        match opt.sort {
            SortKey::DsoSym => (r.dso.clone(), sym),
            SortKey::Sym => (String::new(), sym),
            SortKey::Dso => (r.dso.clone(), String::new()),
        }
    };
    // Each location gets the id of its row key; rows are dense per event.
    let mut key_ids: FxHashMap<(String, String), u32> = FxHashMap::default();
    let mut keys: Vec<(String, String)> = Vec::new();
    let mut key_loc: Vec<u32> = Vec::new();
    let loc_key: Vec<u32> = resolved
        .iter()
        .zip(&shown)
        .enumerate()
        .map(|(loc, x)| {
            let k = key_of(x);
            *key_ids.entry(k.clone()).or_insert_with(|| {
                keys.push(k);
                key_loc.push(loc as u32);
                (keys.len() - 1) as u32
            })
        })
        .collect();
    // The keys a callchain entry counts for: its own, or for expanded
    // frames one per inlining level, as perf's `append_inlines` names them
    // (the function itself where the DWARF name is the symbol's).
    let mut chain_key_start: Vec<u32> = Vec::with_capacity(resolved.len() + 1);
    let mut chain_keys: Vec<u32> = Vec::new();
    for (loc, (r, (_, expand))) in resolved.iter().zip(&shown).enumerate() {
        chain_key_start.push(chain_keys.len() as u32);
        if !*expand || r.inlined.is_empty() || r.symbol.is_none() {
            chain_keys.push(loc_key[loc]);
            continue;
        }
        for f in &r.inlined {
            let name = f.function.as_deref().unwrap_or("??");
            let (dso, sym) = key_of((r, &(None, false)));
            let k = if Some(name) == r.symbol.as_deref() {
                (dso, sym)
            } else {
                (dso, format!("{name} (inlined)"))
            };
            let id = *key_ids.entry(k.clone()).or_insert_with(|| {
                keys.push(k);
                key_loc.push(loc as u32);
                (keys.len() - 1) as u32
            });
            chain_keys.push(id);
        }
    }
    chain_key_start.push(chain_keys.len() as u32);

    let wanted = |e: usize| -> bool {
        match &opt.event {
            Some(name) => events.list().get(e).is_some_and(|ev| &ev.name == name),
            None => true,
        }
    };
    if let Some(name) = &opt.event {
        if !events.list().iter().any(|e| &e.name == name) {
            anyhow::bail!("no event named {name:?} in {}", path.display());
        }
    }
    let nev = events.len().max(1);
    let mut unresolved_by_reason: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut acc: Vec<Acc> = vec![Acc::default(); keys.len() * nev];
    let mut totals: BTreeMap<usize, (u64, u64)> = BTreeMap::new();
    // stamp[key] = the last sample that counted it, so each key counts once
    // per sample however often it recurs in the chain.
    let mut stamp: Vec<usize> = vec![usize::MAX; keys.len()];
    for (si, &(e, period, leaf, cs, ce)) in samples.iter().enumerate() {
        if !wanted(e) || e >= nev {
            continue;
        }
        let t = totals.entry(e).or_default();
        t.0 += 1;
        t.1 += period;
        let a = &mut acc[loc_key[leaf as usize] as usize * nev + e];
        a.samples += 1;
        a.period += period;
        if let Some(why) = &resolved[leaf as usize].reason {
            a.unresolved_samples += 1;
            *unresolved_by_reason.entry(why.name()).or_default() += 1;
        }
        if opt.children {
            // The sample's own entry and every callchain entry.
            let own = loc_key[leaf as usize];
            let chain = chain_locs[cs as usize..ce as usize].iter().flat_map(|&l| {
                let (a, b) = (chain_key_start[l as usize], chain_key_start[l as usize + 1]);
                chain_keys[a as usize..b as usize].iter().copied()
            });
            for k in std::iter::once(own).chain(chain) {
                let k = k as usize;
                if stamp[k] == si {
                    continue;
                }
                stamp[k] = si;
                let a = &mut acc[k * nev + e];
                a.total_samples += 1;
                a.total_period += period;
            }
        }
    }
    let mut rows: Vec<Row> = acc
        .iter()
        .enumerate()
        .filter(|(_, a)| a.period > 0 || a.total_period > 0 || a.samples > 0)
        .map(|(i, a)| {
            let (k, e) = (i / nev, i % nev);
            Row {
                event: events
                    .list()
                    .get(e)
                    .map_or_else(String::new, |ev| ev.name.clone()),
                dso: keys[k].0.clone(),
                symbol: keys[k].1.clone(),
                // A DSO-only row may mix resolved and unresolved
                // locations: it carries a count, not a reason.
                reason: match opt.sort {
                    SortKey::Dso => None,
                    _ => resolved[key_loc[k] as usize]
                        .reason
                        .as_ref()
                        .map(|r| r.name()),
                },
                acc: *a,
            }
        })
        .collect();
    let event_index: FxHashMap<String, usize> = events
        .list()
        .iter()
        .enumerate()
        .map(|(i, e)| (e.name.clone(), i))
        .collect();
    rows.sort_by(|a, b| {
        let ea = event_index.get(&a.event);
        let eb = event_index.get(&b.event);
        let (ka, kb) = if opt.children {
            (a.acc.total_period, b.acc.total_period)
        } else {
            (a.acc.period, b.acc.period)
        };
        ea.cmp(&eb)
            .then(kb.cmp(&ka))
            .then(b.acc.period.cmp(&a.acc.period))
            .then(a.symbol.cmp(&b.symbol))
    });
    let total_of = |row: &Row| {
        event_index
            .get(&row.event)
            .and_then(|i| totals.get(i))
            .map_or(0, |t| t.1)
    };
    let pct = |v: u64, t: u64| {
        if t == 0 {
            0.0
        } else {
            100.0 * v as f64 / t as f64
        }
    };

    match opt.format {
        ReportFormat::Json => {
            let arr: Vec<_> = rows
                .iter()
                .filter(|r| r.acc.period > 0 || r.acc.total_period > 0)
                .map(|r| {
                    let t = total_of(r);
                    let mut o = json!({
                        "event": r.event, "dso": r.dso, "symbol": r.symbol,
                        "samples": r.acc.samples, "period": r.acc.period,
                        "self_percent": pct(r.acc.period, t),
                        "unresolved_samples": r.acc.unresolved_samples,
                    });
                    if opt.children {
                        o["total_samples"] = json!(r.acc.total_samples);
                        o["total_period"] = json!(r.acc.total_period);
                        o["total_percent"] = json!(pct(r.acc.total_period, t));
                    }
                    if let Some(why) = r.reason {
                        o["unresolved"] = json!(why);
                    }
                    o
                })
                .collect();
            serde_json::to_writer(&mut *out, &arr)?;
            writeln!(out)?;
        }
        ReportFormat::Csv => {
            writeln!(
                out,
                "event,dso,symbol,samples,period,self_percent{},unresolved",
                if opt.children {
                    ",total_samples,total_period,total_percent"
                } else {
                    ""
                }
            )?;
            for r in &rows {
                let t = total_of(r);
                let q = crate::csv::field;
                write!(
                    out,
                    "{},{},{},{},{},{:.4}",
                    q(&r.event),
                    q(&r.dso),
                    q(&r.symbol),
                    r.acc.samples,
                    r.acc.period,
                    pct(r.acc.period, t)
                )?;
                if opt.children {
                    write!(
                        out,
                        ",{},{},{:.4}",
                        r.acc.total_samples,
                        r.acc.total_period,
                        pct(r.acc.total_period, t)
                    )?;
                }
                writeln!(out, ",{}", r.reason.unwrap_or(""))?;
            }
        }
        ReportFormat::Table => {
            let mut last_event = None;
            for r in &rows {
                if last_event != Some(&r.event) {
                    let i = event_index.get(&r.event).copied().unwrap_or(0);
                    let (n, p) = totals.get(&i).copied().unwrap_or_default();
                    writeln!(out, "# Event: {}  ({n} samples, total period {p})", r.event)?;
                    if opt.children {
                        writeln!(
                            out,
                            "# {:>8} {:>8} {:>9} {:>14}  {:<24} Symbol",
                            "Children", "Self", "Samples", "Period", "Shared Object"
                        )?;
                    } else {
                        writeln!(
                            out,
                            "# {:>8} {:>9} {:>14}  {:<24} Symbol",
                            "Self", "Samples", "Period", "Shared Object"
                        )?;
                    }
                    last_event = Some(&r.event);
                }
                let t = total_of(r);
                let sym = match r.reason {
                    Some(why) => format!("{}  ({why})", r.symbol),
                    None => r.symbol.clone(),
                };
                if opt.children {
                    writeln!(
                        out,
                        "  {:>7.2}% {:>7.2}% {:>9} {:>14}  {:<24} {sym}",
                        pct(r.acc.total_period, t),
                        pct(r.acc.period, t),
                        r.acc.samples,
                        r.acc.period,
                        r.dso
                    )?;
                } else {
                    if r.acc.period == 0 {
                        continue;
                    }
                    writeln!(
                        out,
                        "  {:>7.2}% {:>9} {:>14}  {:<24} {sym}",
                        pct(r.acc.period, t),
                        r.acc.samples,
                        r.acc.period,
                        r.dso
                    )?;
                }
            }
            // What could not be resolved, by reason.
            let all: u64 = totals.values().map(|t| t.0).sum();
            for (why, n) in &unresolved_by_reason {
                writeln!(out, "# unresolved: {n} of {all} samples ({why})")?;
            }
        }
    }
    for n in symbolizer.notes() {
        eprintln!("perfq: note: {n}");
    }
    let mut problems = Vec::new();
    if bad > 0 {
        problems.push(format!("{bad} samples could not be decoded"));
    }
    if let Some(e) = error {
        problems.push(e.with_path(path).to_string());
    }
    Ok(Outcome::from_problems(problems))
}
