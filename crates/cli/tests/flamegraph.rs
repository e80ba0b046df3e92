//! `perfq flamegraph` against independent oracles:
//!
//! 1. Folded stacks equal those this file builds from `perf script`'s text
//!    of the same capture, by `stackcollapse-perf.pl`'s rules (process
//!    name, `+0x..` offsets dropped, `[unknown]` frames named by their
//!    module, tidying, the first event only, periods added up): the
//!    captures in `testdata/` (frame pointers with forks and execs,
//!    `--call-graph dwarf`, a group read, two events) and a C program
//!    recorded in the test both ways. Differences perf and perfq are known to
//!    have are matched sample by sample, each kind named and counted, and
//!    must stay rare; everything else must be equal, stack for stack and
//!    count for count (see `compare`).
//! 2. The SVG opens in headless Chromium: the screenshot is a PNG of the
//!    window's size with many colours, the top-down categories' colours
//!    among them, and the SVG's text names the program's functions.
//! 3. `--color topdown` on a generated Sapphire Rapids capture: every
//!    frame is filled with the colour the legend gives the dominant
//!    level-1 category of its function in `perfq topdown --total`, and its
//!    tooltip holds that function's four shares.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{
    perfq_cached_fails as perfq_fails, perfq_cached_ok as perfq_ok, perfq_cached_rows as perfq_rows,
};

fn scratch(name: &str) -> PathBuf {
    common::scratch("fg", name)
}

// ---------------------------------------------------------------------
// The oracle: perf script's text, collapsed as stackcollapse-perf.pl does.

/// One frame line of `perf script`: `ip rawfunc (module)`.
#[derive(Clone, Debug)]
struct PerfFrame {
    ip: String,
    rawfunc: String,
    module: String,
}

/// One sample of `perf script`.
#[derive(Clone, Debug)]
struct PerfSample {
    comm: String,
    period: Option<u64>,
    event: String,
    /// Leaf first, as perf prints them.
    frames: Vec<PerfFrame>,
}

/// Parses `perf script`'s default output with the regular expressions of
/// stackcollapse-perf.pl: a header `comm pid[/tid] ... [period] event:`,
/// frame lines `ip func (module)`, a blank line after each sample.
fn parse_perf_script(text: &str) -> Vec<PerfSample> {
    let mut out = Vec::new();
    let mut cur: Option<PerfSample> = None;
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        if line.trim().is_empty() {
            out.extend(cur.take());
            continue;
        }
        if !line.starts_with(char::is_whitespace) {
            out.extend(cur.take());
            cur = parse_header(line);
            assert!(cur.is_some(), "unrecognized sample header: {line}");
            continue;
        }
        let Some(s) = cur.as_mut() else { continue };
        // `^\s*(\w+)\s*(.+) \((.*)\)`
        let t = line.trim_start();
        let (ip, rest) = t.split_once(char::is_whitespace).expect("frame line");
        let rest = rest.trim_start();
        let open = rest.rfind(" (").expect("frame module");
        let close = rest.rfind(')').expect("frame module end");
        s.frames.push(PerfFrame {
            ip: ip.to_string(),
            rawfunc: rest[..open].to_string(),
            module: rest[open + 2..close].to_string(),
        });
    }
    out.extend(cur);
    out
}

/// `^(\S.+?)\s+(\d+)\/*(\d+)*\s+`: the comm is the shortest prefix followed
/// by a pid (or pid/tid) token; `:\s*(\d+)*\s+(\S+):\s*$`: the event is the
/// last word, the period the number before it.
fn parse_header(line: &str) -> Option<PerfSample> {
    let is_id = |t: &str| {
        let mut parts = t.split('/');
        parts.all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
    };
    let mut comm = None;
    let bytes = line.as_bytes();
    for (i, _) in line.match_indices(char::is_whitespace) {
        if i == 0 || bytes[i - 1].is_ascii_whitespace() {
            continue;
        }
        let rest = line[i..].trim_start();
        let token = rest.split_whitespace().next().unwrap_or("");
        let followed = rest.len() > token.len();
        if is_id(token) && followed {
            comm = Some(line[..i].to_string());
            break;
        }
    }
    let words: Vec<&str> = line.split_whitespace().collect();
    let event = words.last()?.strip_suffix(':')?.to_string();
    let period = words
        .get(words.len().checked_sub(2)?)
        .and_then(|w| w.parse().ok());
    Some(PerfSample {
        comm: comm?,
        period,
        event,
        frames: Vec::new(),
    })
}

/// stackcollapse-perf.pl's `$tidy_generic`: `;` → `:`, everything from
/// the first `(` cut (unless the name looks like Go's `pkg.(*T).M` or the
/// `(` opens `(anonymous namespace)`), quotes dropped.
fn tidy_perl(func: &str) -> String {
    let mut f = func.replace(';', ":");
    let go = f
        .find(".(")
        .is_some_and(|i| f[i + 2..].find(").").is_some());
    if !go {
        let mut from = 0;
        while let Some(i) = f[from..].find('(') {
            let at = from + i;
            if f[at..].starts_with("(anonymous namespace)") {
                from = at + 1;
                continue;
            }
            f.truncate(at);
            break;
        }
    }
    f.retain(|c| c != '"' && c != '\'');
    f
}

/// One sample's folded frames (root first, comm excluded) by the script's
/// rules.
fn fold_frames(s: &PerfSample) -> Vec<String> {
    let pname = s.comm.replace(' ', "_");
    let mut stack = Vec::new();
    for f in &s.frames {
        // `$rawfunc =~ s/\+0x[\da-f]+$//`
        let mut raw = f.rawfunc.as_str();
        if let Some(i) = raw.rfind("+0x") {
            let hex = &raw[i + 3..];
            if !hex.is_empty() && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                raw = &raw[..i];
            }
        }
        if raw.starts_with('(') {
            continue;
        }
        let mut inline = Vec::new();
        for func in raw.split("->") {
            let mut func = if func == "[unknown]" {
                if f.module != "[unknown]" {
                    format!("[{}]", f.module.rsplit('/').next().unwrap_or(&f.module))
                } else {
                    "[unknown]".to_string()
                }
            } else {
                func.to_string()
            };
            func = tidy_perl(&func);
            if pname.starts_with("java") && func.contains('/') {
                if let Some(rest) = func.strip_prefix('L') {
                    func = rest.to_string();
                }
            }
            if !inline.is_empty() && !func.contains("_[i]") {
                func.push_str("_[i]");
            }
            inline.push(func);
        }
        // Leaf first in the input; each frame goes before the ones seen.
        for func in inline.into_iter().rev() {
            stack.insert(0, func);
        }
    }
    stack
}

/// `perf script`'s text of `data`.
fn perf_script(data: &Path) -> String {
    common::perf(&["script", "-i", data.to_str().expect("path")]).expect("perf script")
}

// ---------------------------------------------------------------------
// The comparison.

/// How a capture's callchains were recorded.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Chains {
    FramePointer,
    Dwarf,
}

/// Differences perf and perfq are known to have, each matched and counted
/// sample by sample.
#[derive(Default, Debug)]
struct Known {
    /// `--call-graph dwarf`: the all-ones address libunwind ends some
    /// chains with, which perf prints as a `[unknown]` frame: an end
    /// marker, not a frame (dropped from the oracle).
    end_markers: usize,
    /// `--call-graph dwarf`: perf's unwinder stopped before perfq's (a
    /// binary without symbols, a libc start frame): perf's chain is a
    /// leaf-side part of perfq's, which goes on to callers.
    perf_stopped_early: usize,
    /// `--call-graph dwarf`: a sample taken in the kernel while the
    /// program was being exec'd (perf's chain is the `execve` system
    /// call's kernel frames alone): perf shows no user frame, perfq the
    /// user address the sample's registers hold, which nothing mapped
    /// then contains (`[unknown]`). How many there are follows how long
    /// the exec takes on a loaded machine (the binary's pages read, its
    /// access time written), so they are not bounded with the others.
    exec_user_ip: usize,
    /// Frame pointers: a return address at the first byte of a function
    /// (a call that does not return, as `_start`'s call of
    /// `_dl_start_user`): perf names the function it returns into
    /// (`_dl_start_user+0x0`), perfq the one holding the call (pc − 1,
    /// `_start`).
    return_at_symbol_start: usize,
    /// A sample in a PLT stub (the lazy-binding `push` a stub runs on its
    /// first call): perf 6.1 names it `_init`, the size-less symbol of
    /// `.init`, which it stretches over `.plt` up to the next symbol;
    /// perfq names the stub as objdump labels it (`lib_hot@plt`), and the
    /// PLT's header `.plt`, as perf >= 6.3 does.
    plt_stub_as_init: usize,
    /// A sample in a shared library's PLT stub that perf 6.1 names after
    /// another stub's function: it takes `.rela.plt` in section order,
    /// where glibc keeps its IFUNC relocations last (named `@plt`), though
    /// their stubs are spread through the PLT; perfq names the stub as
    /// objdump labels it and perf >= 6.3 names it (`__mempcpy@plt` where
    /// perf 6.1 says `__tls_get_addr@plt`).
    plt_stub_order: usize,
}

/// Why perfq may name a frame of a perf sample otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Wild {
    /// [`Known::return_at_symbol_start`]: any name.
    ReturnAtStart,
    /// [`Known::plt_stub_as_init`]: a `@plt` name (or `.plt`) where perf
    /// has `_init`.
    PltStub,
    /// [`Known::plt_stub_order`]: a `@plt` name for perf's.
    PltOrder,
}

/// One perf sample, folded as the oracle folds it, to be matched with
/// perfq's stacks.
struct PerfStack {
    /// The comm, then the frames, root first.
    folded: Vec<String>,
    count: u64,
    /// Positions (in `folded`) where perfq may name a frame otherwise.
    wild: BTreeSet<(usize, Wild)>,
}

/// Compares perfq's folded output with the oracle built from `samples`:
/// every perf sample is matched to a perfq stack with the same comm and
/// frames (subtracting its count), first exactly, then allowing the known
/// differences; in the end both sides must be used up. The known
/// differences must stay below 2% of the samples (and 3 samples).
fn compare(
    what: &str,
    samples: &[PerfSample],
    chains: Chains,
    event: Option<&str>,
    samples_only: bool,
    ours: &str,
) -> Known {
    let mut known = Known::default();
    let mut left = perfq_stacks(what, ours);
    let pending = perf_stacks(samples, chains, event, samples_only, &mut known);
    let total = pending.len();
    assert!(total > 0, "{what}: no perf samples");
    let rest = take_exact_matches(pending, &mut left);
    let unmatched = take_known_differences(what, rest, chains, &mut left, &mut known);
    assert!(
        unmatched.is_empty() && left.is_empty(),
        "{what}: perf's stacks perfq lacks:\n{}\nperfq's stacks perf lacks:\n{}",
        unmatched.join("\n"),
        left.iter()
            .map(|(k, v)| format!("{} {v}", k.join(";")))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let differing = known.perf_stopped_early
        + known.return_at_symbol_start
        + known.plt_stub_as_init
        + known.plt_stub_order;
    assert!(
        differing <= 3.max(total / 50),
        "{what}: {differing} of {total} samples differ in known ways: {known:?}"
    );
    println!("{what}: {total} samples folded as perf script + stackcollapse-perf.pl fold them; known differences: {known:?}");
    known
}

/// perfq's folded stacks: frames → count. Each stack is printed once, with
/// a count above zero, in byte order.
fn perfq_stacks(what: &str, ours: &str) -> BTreeMap<Vec<String>, u64> {
    let mut stacks: BTreeMap<Vec<String>, u64> = BTreeMap::new();
    for line in ours.lines() {
        let (stack, count) = line.rsplit_once(' ').expect("folded line");
        let count: u64 = count.parse().expect("count");
        assert!(count > 0, "{what}: zero count: {line}");
        let frames: Vec<String> = stack.split(';').map(str::to_string).collect();
        assert!(
            stacks.insert(frames, count).is_none(),
            "{what}: stack printed twice: {stack}"
        );
    }
    let lines: Vec<&str> = ours.lines().collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "{what}: lines in byte order");
    stacks
}

/// perf's samples of `event` (by default the first sample's), folded by
/// the oracle's rules, each with the positions where a known difference
/// may name a frame otherwise; libunwind's end markers dropped (counted in
/// `known`).
fn perf_stacks(
    samples: &[PerfSample],
    chains: Chains,
    event: Option<&str>,
    samples_only: bool,
    known: &mut Known,
) -> Vec<PerfStack> {
    let event = event
        .map(str::to_string)
        .or_else(|| samples.first().map(|s| s.event.clone()));
    let mut pending = Vec::new();
    for s in samples.iter().filter(|s| Some(&s.event) == event.as_ref()) {
        let mut s = s.clone();
        if chains == Chains::Dwarf {
            let before = s.frames.len();
            s.frames.retain(|f| {
                !(f.ip == "ffffffffffffffff" && f.rawfunc == "[unknown]" && f.module == "[unknown]")
            });
            known.end_markers += before - s.frames.len();
        }
        let mut folded = vec![s.comm.replace(' ', "_")];
        folded.extend(fold_frames(&s));
        let count = if samples_only {
            1
        } else {
            s.period.unwrap_or(1)
        };
        let mut wild = BTreeSet::new();
        let n = folded.len();
        for (i, f) in s.frames.iter().enumerate() {
            // Leaf-first index i is folded position n - 1 - i (no inline
            // splitting: perf 6.1 prints no `->`).
            if chains == Chains::FramePointer && i > 0 && f.rawfunc.ends_with("+0x0") {
                wild.insert((n - 1 - i, Wild::ReturnAtStart));
            } else if f.rawfunc.starts_with("_init+") {
                wild.insert((n - 1 - i, Wild::PltStub));
            } else if f.rawfunc.contains("@plt+") {
                wild.insert((n - 1 - i, Wild::PltOrder));
            }
        }
        pending.push(PerfStack {
            folded,
            count,
            wild,
        });
    }
    pending
}

/// Takes from `left` the perf stacks it holds exactly: the others.
fn take_exact_matches(
    pending: Vec<PerfStack>,
    left: &mut BTreeMap<Vec<String>, u64>,
) -> Vec<PerfStack> {
    let mut rest = Vec::new();
    for p in pending {
        match left.get_mut(&p.folded) {
            Some(c) if *c >= p.count => {
                *c -= p.count;
                if *c == 0 {
                    left.remove(&p.folded);
                }
            }
            _ => rest.push(p),
        }
    }
    rest
}

/// Takes from `left` the perf stacks it holds but for the known
/// differences, counting each in `known`: the others, as folded lines.
fn take_known_differences(
    what: &str,
    rest: Vec<PerfStack>,
    chains: Chains,
    left: &mut BTreeMap<Vec<String>, u64>,
    known: &mut Known,
) -> Vec<String> {
    let mut unmatched = Vec::new();
    for PerfStack {
        folded,
        count,
        wild,
    } in rest
    {
        let fits = |q: &Vec<String>| -> Option<bool> {
            // Some(stopped_early) when q explains the sample.
            if q.first() != folded.first() {
                return None;
            }
            let (p, qf) = (&folded[1..], &q[1..]);
            let early = qf.len() > p.len();
            if (early && chains != Chains::Dwarf) || qf.len() < p.len() {
                return None;
            }
            let tail = &qf[qf.len() - p.len()..];
            let ok = p.iter().zip(tail).enumerate().all(|(i, (a, b))| {
                a == b
                    || wild.iter().any(|&(at, why)| {
                        at == i + 1
                            && (why == Wild::ReturnAtStart || b.ends_with("@plt") || b == ".plt")
                    })
            });
            ok.then_some(early)
        };
        let hit = left
            .iter()
            .filter(|(_, c)| **c >= count)
            .find_map(|(q, _)| fits(q).map(|e| (q.clone(), e)));
        match hit {
            Some((q, early)) => {
                println!(
                    "{what}: known difference: perf {} / perfq {}",
                    folded.join(";"),
                    q.join(";")
                );
                let p = &folded[1..];
                let tail = &q[q.len() - p.len()..];
                let extra = &q[1..q.len() - p.len()];
                let in_exec = p.iter().any(|f| f.contains("sys_execve"));
                match early {
                    true if in_exec && extra == ["[unknown]"] => known.exec_user_ip += 1,
                    true => known.perf_stopped_early += 1,
                    false => {}
                }
                for (i, _) in p.iter().zip(tail).enumerate().filter(|(_, (a, b))| a != b) {
                    match wild.iter().find(|w| w.0 == i + 1).map(|w| w.1) {
                        Some(Wild::PltStub) => known.plt_stub_as_init += 1,
                        Some(Wild::PltOrder) => known.plt_stub_order += 1,
                        _ => known.return_at_symbol_start += 1,
                    }
                }
                let c = left.get_mut(&q).expect("matched stack");
                *c -= count;
                if *c == 0 {
                    left.remove(&q);
                }
            }
            None => unmatched.push(format!("{} {count}", folded.join(";"))),
        }
    }
    unmatched
}

/// The folded stacks of `data` (with `args`) compared with perf's: what
/// differed in known ways, or `None` where perf's DWARF stacks are no
/// oracle here (said with [`common::skip`]).
fn folded_agree(
    what: &str,
    data: &Path,
    chains: Chains,
    args: &[&str],
    cache: &Path,
) -> Option<Known> {
    if chains == Chains::Dwarf {
        // perf unwinds through a binary whose build id is not the recorded
        // one, where perfq stops; and for a libc without its debug file
        // (libc6-dbg) perf expands addr2line's symbol-table name as an
        // inlined frame (`_IO_printf (inlined)` under `printf`).
        let why = common::recorded_binaries_here(data)
            .err()
            .or_else(|| common::libc_debug_info_here().err());
        if let Some(why) = why {
            common::skip(format_args!("in part: {why}; {what} not compared"));
            return None;
        }
    }
    let samples = parse_perf_script(&perf_script(data));
    let mut a = vec!["flamegraph", "--folded", data.to_str().expect("path")];
    a.extend_from_slice(args);
    let ours = perfq_ok(&a, cache);
    let event = args
        .iter()
        .position(|a| *a == "--event")
        .and_then(|i| args.get(i + 1).copied());
    Some(compare(
        what,
        &samples,
        chains,
        event,
        args.contains(&"--samples"),
        &ours,
    ))
}

/// The comparison itself, on a sample perf 6.1 was seen to name so: the
/// lazy-binding `push` of `lib_hot@plt` (0x1036 of the recorded program),
/// `_init` to perf. Only a `@plt` name may stand for it.
#[test]
fn a_plt_stub_perf_names_init_is_a_known_difference() {
    let frame = |ip: &str, rawfunc: &str| PerfFrame {
        ip: ip.into(),
        rawfunc: rawfunc.into(),
        module: "/tmp/prog".into(),
    };
    let samples = vec![PerfSample {
        comm: "prog".into(),
        period: Some(1),
        event: "cpu-clock".into(),
        frames: vec![frame("1036", "_init+0x36"), frame("11a9", "main+0x20")],
    }];
    let known = compare(
        "plt",
        &samples,
        Chains::FramePointer,
        None,
        false,
        "prog;main;lib_hot@plt 1\n",
    );
    assert_eq!(known.plt_stub_as_init, 1, "{known:?}");
    let other = std::panic::catch_unwind(|| {
        compare(
            "plt",
            &samples,
            Chains::FramePointer,
            None,
            false,
            "prog;main;lib_cold 1\n",
        )
    });
    assert!(
        other.is_err(),
        "a name other than a stub's is no known difference"
    );
}

#[test]
fn folded_stacks_of_testdata_equal_perf_scripts() {
    if !common::have_perf() {
        common::skip("perf is not installed; folded stacks not compared");
        return;
    }
    let dir = scratch("testdata");
    let cache = dir.join("cache");
    // Several processes forking and exec'ing (sh, seq, sort, gzip): the
    // comm of each sample follows COMM, exec and FORK in time.
    folded_agree(
        "fp.data",
        &common::testdata("fp.data"),
        Chains::FramePointer,
        &[],
        &cache,
    );
    folded_agree(
        "fp.data --samples",
        &common::testdata("fp.data"),
        Chains::FramePointer,
        &["--samples"],
        &cache,
    );
    let dwarf = folded_agree(
        "dwarf.data",
        &common::testdata("dwarf.data"),
        Chains::Dwarf,
        &[],
        &cache,
    );
    if let Some(dwarf) = dwarf {
        assert!(dwarf.end_markers > 0, "libunwind's end markers seen");
    }
    // A group read: each member delivered with its delta, the leader first.
    folded_agree(
        "group.data",
        &common::testdata("group.data"),
        Chains::FramePointer,
        &[],
        &cache,
    );
    folded_agree(
        "group.data page-faults",
        &common::testdata("group.data"),
        Chains::FramePointer,
        &["--event", "page-faults"],
        &cache,
    );
    // Two events sampled independently.
    folded_agree(
        "multi.data",
        &common::testdata("multi.data"),
        Chains::FramePointer,
        &[],
        &cache,
    );
    // It has no page-fault samples (fewer faults than its period).
    let err = perfq_fails(
        &[
            "flamegraph",
            "--folded",
            "testdata/multi.data",
            "--event",
            "page-faults",
        ],
        &cache,
    );
    assert!(
        err.contains("no samples of event page-faults; the samples are of cpu-clock"),
        "{err}"
    );
    let err = perfq_fails(
        &[
            "flamegraph",
            "--folded",
            "testdata/multi.data",
            "--event",
            "nope",
        ],
        &cache,
    );
    assert!(err.contains("no samples of event nope"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// Records `command` (run in `dir`) into `dir/out` with `callgraph`.
fn record(dir: &Path, out: &str, callgraph: &[&str], command: &[&str]) -> PathBuf {
    common::record(dir, out, &[], callgraph, command)
}

#[test]
fn folded_stacks_of_a_recorded_program_equal_perf_scripts() {
    let Some(dir) = common::c_program_or_skip("fg", "recorded", "recorded") else {
        return;
    };
    let cache = dir.join("cache");
    let fp = record(&dir, "fp.data", &["-g"], &["./prog", "10000000"]);
    folded_agree(
        "C program, frame pointers",
        &fp,
        Chains::FramePointer,
        &[],
        &cache,
    );
    let ours = perfq_ok(
        &["flamegraph", "--folded", fp.to_str().expect("path")],
        &cache,
    );
    // leaf_sum and lib_inner keep no frame pointer of their own (leaf
    // functions), so their callers' frames are skipped, by perf as here.
    assert!(
        ours.lines()
            .any(|l| l.starts_with("prog;") && l.contains(";main;leaf_sum ")),
        "main → leaf_sum folded:\n{ours}"
    );
    assert!(ours.contains(";main;lib_inner "), "the library's frames");
    // DWARF: perf expands unwound user frames into their inlined functions
    // (leaf_sum's `mix`, lib_inner's `step`).
    let dwarf = record(
        &dir,
        "dwarf.data",
        &["--call-graph", "dwarf,4096"],
        &["./prog", "10000000"],
    );
    folded_agree("C program, dwarf", &dwarf, Chains::Dwarf, &[], &cache);
    let ours = perfq_ok(
        &["flamegraph", "--folded", dwarf.to_str().expect("path")],
        &cache,
    );
    assert!(
        ours.contains(";middle;leaf_sum;mix ") && ours.contains(";lib_inner;step "),
        "inlined frames expanded:\n{ours}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// A stack through a frame whose CFA is kept in rbx (as ld.so's
/// lazy-binding trampoline keeps it), in code without frame pointers:
/// framehop cannot follow that frame and would take the frame pointer for
/// its caller; unwound with every register tracked, every sample's stack
/// is perf's, from `_start` to `spin`.
#[test]
fn a_frame_with_its_cfa_in_rbx_unwinds_as_perfs() {
    if !common::have_perf() || !common::can_record() {
        common::skip("perf cannot record here; unwinding through rbx not checked");
        return;
    }
    let dir = common::scratch("fg", "realign");
    let src = common::root().join("crates/cli/tests/programs/realign.c");
    let src = src.to_str().expect("path");
    if !common::gcc(
        &dir,
        &["-O2", "-g", "-fomit-frame-pointer", src, "-o", "realign"],
    ) {
        common::skip("gcc is not available; unwinding through rbx not checked");
        return;
    }
    let data = record(
        &dir,
        "dwarf.data",
        &["--call-graph", "dwarf,4096"],
        &["./realign", "100000000"],
    );
    let cache = dir.join("cache");
    folded_agree("rbx-based CFA, dwarf", &data, Chains::Dwarf, &[], &cache);
    let ours = perfq_ok(
        &["flamegraph", "--folded", data.to_str().expect("path")],
        &cache,
    );
    assert!(
        ours.lines().any(|l| l.contains(";main;outer;tramp;spin ")),
        "main → outer → tramp → spin:\n{ours}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------------
// The SVG in a browser.

/// Debian's Chromium (`.ci/setup.sh` installs it), if present.
fn chromium() -> Option<PathBuf> {
    let bin = PathBuf::from("/usr/bin/chromium");
    bin.is_file().then_some(bin)
}

/// A screenshot of `svg` by headless Chromium, 1200×800.
fn screenshot(chromium: &Path, svg: &Path, dir: &Path) -> PathBuf {
    let png = dir.join(format!(
        "{}.png",
        svg.file_stem().expect("name").to_string_lossy()
    ));
    let profile = dir.join(format!(
        "chromium-{}",
        png.file_stem().expect("name").to_string_lossy()
    ));
    let url = format!("file://{}", svg.canonicalize().expect("svg").display());
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("--screenshot={}", png.display()))
        .args(["--window-size=1200,800", &url])
        .output()
        .expect("run chromium");
    assert!(
        png.is_file(),
        "chromium wrote no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    png
}

/// A PNG's size and its pixels' distinct colours (8-bit RGB or RGBA,
/// non-interlaced: what Chromium writes).
fn png_colours(png: &Path) -> ((u32, u32), BTreeSet<[u8; 3]>) {
    let bytes = std::fs::read(png).expect("read png");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "PNG signature");
    let be = |b: &[u8]| u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
    let (mut pos, mut size, mut kind) = (8, (0, 0), (0u8, 0u8, 0u8));
    let mut idat = Vec::new();
    while pos + 8 <= bytes.len() {
        let len = be(&bytes[pos..]) as usize;
        let name = &bytes[pos + 4..pos + 8];
        let body = &bytes[pos + 8..pos + 8 + len];
        match name {
            b"IHDR" => {
                size = (be(body), be(&body[4..]));
                kind = (body[8], body[9], body[12]);
            }
            b"IDAT" => idat.extend_from_slice(body),
            _ => {}
        }
        pos += 12 + len;
    }
    let (depth, colour, interlace) = kind;
    assert!(
        depth == 8 && (colour == 2 || colour == 6) && interlace == 0,
        "PNG kind {kind:?}"
    );
    let bpp = if colour == 6 { 4 } else { 3 };
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .expect("inflate IDAT");
    let stride = size.0 as usize * bpp;
    assert_eq!(raw.len(), (stride + 1) * size.1 as usize, "image data size");
    let mut prev = vec![0u8; stride];
    let mut colours = BTreeSet::new();
    for row in raw.chunks(stride + 1) {
        let filter = row[0];
        let mut cur = row[1..].to_vec();
        for i in 0..stride {
            let a = if i >= bpp { cur[i - bpp] as i16 } else { 0 };
            let b = prev[i] as i16;
            let c = if i >= bpp { prev[i - bpp] as i16 } else { 0 };
            let add = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                f => panic!("PNG filter {f}"),
            };
            cur[i] = cur[i].wrapping_add(add as u8);
        }
        for px in cur.chunks(bpp) {
            colours.insert([px[0], px[1], px[2]]);
        }
        prev = cur;
    }
    (size, colours)
}

/// The frames of an inferno SVG: (tooltip, fill).
fn svg_frames(svg: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let frames = &svg[svg.find("<svg id=\"frames\"").expect("frames")..];
    for g in frames.split("<g>").skip(1) {
        let title = between(g, "<title>", "</title>").expect("title");
        let fill = between(g, "fill=\"", "\"").expect("fill");
        out.push((unescape(title), fill.to_string()));
    }
    out
}

fn between<'a>(s: &'a str, a: &str, b: &str) -> Option<&'a str> {
    let i = s.find(a)? + a.len();
    let j = s[i..].find(b)?;
    Some(&s[i..i + j])
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

/// A frame's function: its tooltip up to the last ` (`.
fn function_of(title: &str) -> &str {
    title.rfind(" (").map_or(title, |i| &title[..i])
}

#[test]
fn the_svg_renders_in_chromium() {
    let Some(dir) = common::c_program_or_skip("fg", "svg", "svg") else {
        return;
    };
    let Some(chromium) = chromium() else {
        common::skip(
            "/usr/bin/chromium is missing (bash .ci/setup.sh installs it); the SVG is not rendered",
        );
        return;
    };
    let cache = dir.join("cache");
    let data = record(&dir, "fp.data", &["-g"], &["./prog", "10000000"]);
    let svg = dir.join("prog.svg");
    perfq_ok(
        &[
            "flamegraph",
            data.to_str().expect("path"),
            "-o",
            svg.to_str().expect("path"),
        ],
        &cache,
    );
    let text = std::fs::read_to_string(&svg).expect("svg");
    assert!(
        text.contains("fp.data: cpu-clock"),
        "title names the capture and event"
    );
    let names: BTreeSet<String> = svg_frames(&text)
        .iter()
        .map(|(t, _)| function_of(t).to_string())
        .collect();
    for f in ["prog", "main", "leaf_sum", "other_work", "lib_inner"] {
        assert!(names.contains(f), "frame {f} in the SVG: {names:?}");
    }
    // The same input draws the same picture.
    let again = dir.join("again.svg");
    perfq_ok(
        &[
            "flamegraph",
            data.to_str().expect("path"),
            "-o",
            again.to_str().expect("path"),
        ],
        &cache,
    );
    assert_eq!(
        text,
        std::fs::read_to_string(&again).expect("svg"),
        "deterministic SVG"
    );
    let png = screenshot(&chromium, &svg, &dir);
    let (size, colours) = png_colours(&png);
    assert_eq!(size, (1200, 800), "screenshot size");
    assert!(
        colours.len() >= 20,
        "a flame graph, not a blank page: {} colours",
        colours.len()
    );
    println!(
        "prog.svg: {} colours in a {size:?} screenshot",
        colours.len()
    );

    // The top-down colouring renders too: its category colours are painted.
    let (td, svg) = topdown_svg(&dir, &cache);
    let png = screenshot(&chromium, &svg, &dir);
    let (size, colours) = png_colours(&png);
    assert_eq!(size, (1200, 800));
    for (label, rgb) in legend(&std::fs::read_to_string(&svg).expect("svg")) {
        let rgb = parse_rgb(&rgb);
        assert!(
            colours.contains(&rgb),
            "{label}'s colour {rgb:?} painted in {}",
            td.display()
        );
    }
    std::fs::remove_dir_all(&dir).ok();
}

// ---------------------------------------------------------------------
// Top-down colours.

/// A generated Sapphire Rapids top-down capture of td-demo and its
/// `--color topdown` SVG.
fn topdown_svg(dir: &Path, cache: &Path) -> (PathBuf, PathBuf) {
    let data = common::td_demo_capture(
        &dir.join("spr.data"),
        &common::preset("sapphirerapids"),
        3000,
    );
    let svg = dir.join("spr.svg");
    perfq_ok(
        &[
            "flamegraph",
            data.to_str().expect("path"),
            "--color",
            "topdown",
            "-o",
            svg.to_str().expect("path"),
        ],
        cache,
    );
    (data, svg)
}

/// The legend: label → `rgb(r,g,b)`.
fn legend(svg: &str) -> Vec<(String, String)> {
    let g = between(svg, "<g id=\"legend\">", "</g>").expect("legend");
    g.split("<rect ")
        .skip(1)
        .map(|item| {
            let fill = between(item, "fill=\"", "\"").expect("fill").to_string();
            let label = between(item, "\">", "</text>").expect("label");
            (unescape(label), fill)
        })
        .collect()
}

fn parse_rgb(s: &str) -> [u8; 3] {
    let inner = between(s, "rgb(", ")").expect("rgb");
    let v: Vec<u8> = inner
        .split(',')
        .map(|x| x.trim().parse().expect("byte"))
        .collect();
    [v[0], v[1], v[2]]
}

/// The legend's label of a node: `bad_speculation` → `Bad Speculation`.
fn node_label(node: &str) -> String {
    node.split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn topdown_colours_follow_perfq_topdown_total() {
    let dir = scratch("topdown");
    let cache = dir.join("cache");
    let (data, svg) = topdown_svg(&dir, &cache);
    let text = std::fs::read_to_string(&svg).expect("svg");
    let legend: BTreeMap<String, String> = legend(&text).into_iter().collect();
    const NODES: [&str; 4] = [
        "retiring",
        "bad_speculation",
        "frontend_bound",
        "backend_bound",
    ];
    for n in NODES {
        assert!(
            legend.contains_key(&node_label(n)),
            "{n} in the legend: {legend:?}"
        );
    }
    let grey = legend
        .get("no top-down data")
        .expect("legend for frames without numbers");
    let values: std::collections::HashSet<&String> = legend.values().collect();
    assert_eq!(values.len(), legend.len(), "distinct legend colours");

    let rows = perfq_rows(
        &[
            "topdown",
            data.to_str().expect("path"),
            "--total",
            "--format",
            "json",
        ],
        &cache,
    );
    let mut checked = 0;
    for (title, fill) in svg_frames(&text) {
        let name = function_of(&title);
        if title.starts_with("all (") {
            continue;
        }
        let row = rows.iter().find(|r| r["symbol"] == name);
        let Some(row) = row else {
            assert_eq!(&fill, grey, "{name}: no topdown row, grey");
            assert!(title.contains("no top-down samples"), "{title}");
            continue;
        };
        let shares: Vec<f64> = NODES
            .iter()
            .map(|n| row[n].as_f64().expect("share"))
            .collect();
        let mut best = 0;
        for (i, v) in shares.iter().enumerate() {
            if *v > shares[best] {
                best = i;
            }
        }
        let want = &legend[&node_label(NODES[best])];
        assert_eq!(&fill, want, "{name}: dominant {} ({shares:?})", NODES[best]);
        for (n, v) in NODES.iter().zip(&shares) {
            let shown = format!("{} {:.1}%", node_label(n), v * 100.0);
            assert!(
                title.contains(&shown),
                "{name}: tooltip {title} holds {shown}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 6, "frames checked: {checked}");
    println!("topdown colours: {checked} frames coloured by their function's dominant category");

    // A capture without topdown events is refused, clearly.
    if common::have_perf() {
        let err = perfq_fails(
            &["flamegraph", "testdata/fp.data", "--color", "topdown"],
            &cache,
        );
        assert!(
            err.contains("--color topdown") && err.contains("no top-down events"),
            "{err}"
        );
    }
    // --folded has no colours.
    perfq_fails(
        &[
            "flamegraph",
            "--folded",
            "--color",
            "topdown",
            data.to_str().expect("path"),
        ],
        &cache,
    );
    std::fs::remove_dir_all(&dir).ok();
}
