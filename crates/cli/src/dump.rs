//! `perfq dump`: every sample, every decoded field, in time order.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::Path;

use perfq_reader::{Capture, EventRef, MemberDelta, ReadDeltas, Sample};
use serde_json::json;

use crate::jsonw::Obj;
use crate::progress::ReadBar;
use crate::{sideband, DumpFormat, DumpRecords, Outcome};
use perfq_symbolize::{
    Config, FrameLookup, LocationInterner, Resolutions, Resolved, StackUnwinder, Symbolizer,
    Tracker,
};

const CSV_HEADER: &str = "offset,event,time,pid,tid,cpu,cpumode,ip,addr,id,stream_id,period,weight,data_src,phys_addr,cgroup,callchain,read";

/// The resolved locations and, per frame of one sample, its lookup and
/// location index.
type SymbolizedFrames<'a> = (&'a Resolutions, &'a [(FrameLookup, u32)]);

/// Symbolization of `perfq dump --symbols`: every sample location resolved
/// up front (one pass over the capture), so the output pass only looks up.
struct Symbols {
    interner: LocationInterner,
    resolved: Resolutions,
    /// The output pass's own view of the address spaces and stacks.
    tracker: Tracker,
    symbolizer: Symbolizer,
    unwinder: StackUnwinder,
}

impl Symbols {
    fn collect(capture: &Capture, config: &Config) -> anyhow::Result<Symbols> {
        let mut tracker = Tracker::new(capture);
        let symbolizer = Symbolizer::new(
            config,
            tracker.kernel_build_id(),
            capture.meta().os_release.as_deref(),
        );
        let mut unwinder = StackUnwinder::new(capture.meta().arch.as_deref());
        let mut lookups = Vec::new();
        let mut interner = LocationInterner::new();
        let mut records = capture.records_by_time();
        // Errors are reported by the output pass.
        while let Ok(Some(r)) = records.next_record() {
            if r.kind != perfq_reader::RecordType::SAMPLE {
                if let Ok((data, _)) = capture.parse(&r) {
                    tracker.observe(&data);
                }
                continue;
            }
            let Ok(s) = capture.sample(&r) else { continue };
            let Some(pid) = s.pid else { continue };
            unwinder.sample_frames(&tracker, &symbolizer, &s, &mut lookups);
            for f in &lookups {
                interner.intern(&tracker, pid, f);
            }
        }
        let resolved = symbolizer.resolve_all(&tracker, interner.locations());
        let unwinder = StackUnwinder::new(capture.meta().arch.as_deref());
        Ok(Symbols {
            interner,
            resolved,
            tracker: Tracker::new(capture),
            symbolizer,
            unwinder,
        })
    }
}

pub fn run(
    path: &Path,
    format: DumpFormat,
    which: DumpRecords,
    symbols: Option<Config>,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    if which == DumpRecords::All && matches!(format, DumpFormat::Csv) {
        anyhow::bail!(
            "--records all needs --format jsonl: records other than samples have no CSV columns"
        );
    }
    let capture = Capture::open(path)?;
    let events = capture.events();
    let mut symbols = match &symbols {
        Some(config) => Some(Symbols::collect(&capture, config)?),
        None => None,
    };
    let mut frames: Vec<(FrameLookup, u32)> = Vec::new();
    let mut lookups: Vec<FrameLookup> = Vec::new();
    let mut records = capture.records_by_time();
    let mut deltas = ReadDeltas::new();
    let mut members: Vec<MemberDelta> = Vec::new();
    let mut bad_samples = 0u64;
    let mut bad_records = 0u64;
    let mut line = Vec::with_capacity(4096);
    let mut first_bad = None;
    let mut error = None;
    if let DumpFormat::Csv = format {
        writeln!(out, "{CSV_HEADER}")?;
    }
    // Lines on a terminal show the progress themselves; a bar between them
    // would only garble them.
    let bar = if std::io::stdout().is_terminal() {
        ReadBar::hidden()
    } else {
        ReadBar::new(&path.display().to_string())
    };
    loop {
        if let Some(done) = records.progress() {
            bar.update(done, capture.file_len());
        }
        let Some(r) = records.next_ok(&mut error) else {
            break;
        };
        if r.kind != perfq_reader::RecordType::SAMPLE {
            if let Some(sym) = symbols.as_mut() {
                if let Ok((data, _)) = capture.parse(&r) {
                    sym.tracker.observe(&data);
                }
            }
            if which == DumpRecords::All {
                match capture.parse(&r) {
                    Ok((data, sample_id)) => {
                        serde_json::to_writer(
                            &mut *out,
                            &sideband::record_json(&capture, &r, &data, sample_id),
                        )?;
                        writeln!(out)?;
                    }
                    Err(e) => {
                        bad_records += 1;
                        first_bad.get_or_insert_with(|| e.to_string());
                    }
                }
            }
            continue;
        }
        let offset = format!("{:#x}", r.offset.0);
        let ev = match r.event {
            EventRef::Known(i) => i,
            other => {
                let id = match other {
                    EventRef::UnknownId(id) => Some(id),
                    _ => None,
                };
                match format {
                    DumpFormat::Jsonl => {
                        serde_json::to_writer(
                            &mut *out,
                            &json!({"offset": offset, "event": null, "unknown_id": id, "time": r.time}),
                        )?;
                        writeln!(out)?;
                    }
                    DumpFormat::Csv => writeln!(
                        out,
                        "{offset},,{},,,,,,,{},,,,,,,,,",
                        r.time.map(|t| t.to_string()).unwrap_or_default(),
                        id.map(|i| i.to_string()).unwrap_or_default()
                    )?,
                }
                continue;
            }
        };
        let sample = match capture.sample(&r) {
            Ok(s) => s,
            Err(e) => {
                bad_samples += 1;
                first_bad.get_or_insert_with(|| e.to_string());
                continue;
            }
        };
        members.clear();
        deltas.apply(events, ev, &sample, &mut members);
        let name = events.get(ev).map_or("", |e| e.name.as_str());
        frames.clear();
        if let (Some(sym), Some(pid)) = (symbols.as_mut(), sample.pid) {
            sym.unwinder
                .sample_frames(&sym.tracker, &sym.symbolizer, &sample, &mut lookups);
            for &f in &lookups {
                let l = sym.tracker.locate(pid, f.lookup, f.kernel);
                if let Some(id) = sym.interner.get(&l) {
                    frames.push((f, id));
                }
            }
        }
        let resolved = symbols.as_ref().map(|s| &s.resolved);
        match format {
            DumpFormat::Jsonl => {
                line.clear();
                write_sample(
                    &mut line,
                    r.offset.0,
                    name,
                    &sample,
                    &members,
                    &capture,
                    resolved.map(|r| (r, frames.as_slice())),
                );
                line.push(b'\n');
                out.write_all(&line)?;
            }
            DumpFormat::Csv => write_csv(out, &offset, name, &sample, &members, &capture)?,
        }
    }
    bar.finish();
    let mut problems = Vec::new();
    for w in records.warnings() {
        eprintln!("perfq: warning: {}: {w}", path.display());
    }
    if bad_samples + bad_records > 0 {
        problems.push(format!(
            "{} records could not be decoded (first: {})",
            bad_samples + bad_records,
            first_bad.unwrap_or_default()
        ));
    }
    if let Some(e) = error {
        problems.push(e.with_path(path).to_string());
    }
    Ok(Outcome::from_problems(problems))
}

pub(crate) fn hex(v: u64) -> String {
    format!("{v:#x}")
}

fn cpumode(misc: u16) -> &'static str {
    match misc & perfq_reader::misc::CPUMODE_MASK {
        perfq_reader::misc::KERNEL => "kernel",
        perfq_reader::misc::USER => "user",
        perfq_reader::misc::HYPERVISOR => "hypervisor",
        perfq_reader::misc::GUEST_KERNEL => "guest_kernel",
        perfq_reader::misc::GUEST_USER => "guest_user",
        _ => "unknown",
    }
}

fn member_name<'c>(capture: &'c Capture, m: &MemberDelta) -> Option<&'c str> {
    m.event
        .and_then(|e| capture.events().get(e))
        .map(|e| e.name.as_str())
}

/// One sample as a JSON object (without the newline).
fn write_sample(
    buf: &mut Vec<u8>,
    offset: u64,
    event: &str,
    s: &Sample<'_>,
    members: &[MemberDelta],
    capture: &Capture,
    frames: Option<SymbolizedFrames<'_>>,
) {
    let mut o = Obj::new(buf);
    o.hex("offset", offset)
        .str("event", event)
        .str("cpumode", cpumode(s.misc));
    o.opt_num("identifier", s.identifier);
    o.opt_hex("ip", s.ip);
    o.opt_num("pid", s.pid.map(|v| v as i32));
    o.opt_num("tid", s.tid.map(|v| v as i32));
    o.opt_num("time", s.time);
    o.opt_hex("addr", s.addr);
    o.opt_num("id", s.id);
    o.opt_num("stream_id", s.stream_id);
    o.opt_num("cpu", s.cpu);
    o.opt_num("period", s.period);
    if let Some(r) = &s.read {
        o.object("read", |o| {
            o.num_or_null("time_enabled", r.time_enabled);
            o.num_or_null("time_running", r.time_running);
            o.array("values", |a| {
                for m in members {
                    a.object(|o| {
                        match member_name(capture, m) {
                            Some(n) => o.str("event", n),
                            None => o.raw("event", "null"),
                        };
                        o.num("id", m.id).num("value", m.value);
                        o.num_or_null("delta", m.delta).num_or_null("lost", m.lost);
                    });
                }
            });
        });
    }
    if let Some(c) = s.callchain {
        o.array("callchain", |a| {
            for f in c.frames() {
                a.object(|o| {
                    o.hex("addr", f.addr);
                    match f.context {
                        Some(ctx) => o.str("context", ctx.name()),
                        None => o.raw("context", "null"),
                    };
                });
            }
        });
    }
    if let Some(raw) = s.raw {
        o.str("raw", &bytes_hex(raw));
    }
    if let Some(b) = s.branch_stack {
        o.object("branch_stack", |o| {
            o.num_or_null("hw_idx", b.hw_idx);
            o.array("entries", |a| {
                for (i, e) in b.entries().enumerate() {
                    let f = e.flags();
                    a.object(|o| {
                        o.hex("from", e.from).hex("to", e.to);
                        o.raw("mispred", bool_str(f.mispred))
                            .raw("predicted", bool_str(f.predicted));
                        o.raw("in_tx", bool_str(f.in_tx))
                            .raw("abort", bool_str(f.abort));
                        o.num("cycles", f.cycles)
                            .num("type", f.type_)
                            .num("spec", f.spec);
                        o.num("new_type", f.new_type).num("priv", f.priv_);
                        o.opt_num("counters", b.counters.and_then(|c| c.get(i)));
                    });
                }
            });
        });
    }
    for (key, regs) in [("regs_user", s.regs_user), ("regs_intr", s.regs_intr)] {
        if let Some(r) = regs {
            o.object(key, |o| {
                o.num("abi", r.abi).hex("mask", r.mask);
                o.array("values", |a| r.values.iter().for_each(|v| a.hex(v)));
            });
        }
    }
    if let Some(st) = s.stack_user {
        o.object("stack_user", |o| {
            o.num("size", st.data.len())
                .num_or_null("dyn_size", st.dyn_size);
        });
    }
    o.opt_num("weight", s.weight_value());
    o.opt_num("weight_var2", s.weight_var2());
    o.opt_num("weight_var3", s.weight_var3());
    o.opt_hex("data_src", s.data_src);
    o.opt_hex("transaction", s.transaction);
    o.opt_hex("phys_addr", s.phys_addr);
    o.opt_num("cgroup", s.cgroup);
    o.opt_num("data_page_size", s.data_page_size);
    o.opt_num("code_page_size", s.code_page_size);
    o.opt_num("aux_size", s.aux.map(<[u8]>::len));
    if let Some((resolved, frames)) = frames {
        o.array("frames", |a| {
            for (f, id) in frames {
                let Some(r) = resolved.get(*id as usize) else {
                    continue;
                };
                a.object(|o| write_frame(o, f, &r));
            }
        });
    }
    o.end();
}

/// One symbolized frame: where it is, what function, the inline chain with
/// file:line (innermost first), or why it has no symbol.
fn write_frame(o: &mut Obj<'_>, f: &FrameLookup, r: &Resolved) {
    o.hex("addr", f.addr);
    if let Some(c) = f.context {
        o.str("context", c.name());
    }
    o.str("dso", &r.dso);
    match &r.symbol {
        Some(sym) => o.str("symbol", sym),
        None => o.raw("symbol", "null"),
    };
    if let Some(raw) = &r.raw_symbol {
        o.str("raw_symbol", raw);
    }
    o.hex("dso_offset", r.addr);
    if let Some((path, vaddr)) = &r.binary {
        o.str("binary", &path.to_string_lossy())
            .hex("vaddr", *vaddr);
    }
    if let Some(why) = &r.reason {
        o.str("unresolved", why.name());
    }
    if !r.inlined.is_empty() {
        o.array("inlined", |a| {
            for i in &r.inlined {
                a.object(|o| {
                    match &i.function {
                        Some(n) => o.str("function", n),
                        None => o.raw("function", "null"),
                    };
                    match &i.file {
                        Some(n) => o.str("file", n),
                        None => o.raw("file", "null"),
                    };
                    o.num_or_null("line", i.line);
                });
            }
        });
    }
}

fn bool_str(b: bool) -> &'static str {
    if b {
        "true"
    } else {
        "false"
    }
}

pub(crate) fn bytes_hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn write_csv(
    out: &mut dyn Write,
    offset: &str,
    event: &str,
    s: &Sample<'_>,
    members: &[MemberDelta],
    capture: &Capture,
) -> std::io::Result<()> {
    fn opt<T: ToString>(v: Option<T>) -> String {
        v.map(|v| v.to_string()).unwrap_or_default()
    }
    let oh = |v: Option<u64>| v.map(hex).unwrap_or_default();
    let callchain = s
        .callchain
        .map(|c| {
            c.frames()
                .map(|f| match f.context {
                    Some(ctx) => format!("{}:{}", ctx.name(), hex(f.addr)),
                    None => hex(f.addr),
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default();
    let read = members
        .iter()
        .map(|m| {
            let name = member_name(capture, m);
            format!("{}={}/{}", name.unwrap_or("?"), m.value, opt(m.delta))
        })
        .collect::<Vec<_>>()
        .join(" ");
    let event = crate::csv::field(event);
    writeln!(
        out,
        "{offset},{event},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{callchain},{read}",
        opt(s.time),
        opt(s.pid.map(|v| v as i32)),
        opt(s.tid.map(|v| v as i32)),
        opt(s.cpu),
        cpumode(s.misc),
        oh(s.ip),
        oh(s.addr),
        opt(s.id),
        opt(s.stream_id),
        opt(s.period),
        opt(s.weight_value()),
        oh(s.data_src),
        oh(s.phys_addr),
        opt(s.cgroup),
    )
}
