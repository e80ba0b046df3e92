//! `perfq dump`: every sample, every decoded field, in time order.

use std::fmt::Write as _;
use std::io::{IsTerminal, Write};
use std::path::Path;

use perfq_reader::{Capture, EventRef, MemberDelta, RawRecord, RecordData, Sample, SampleId};
use perfq_stream::{Consumer, SampleView, Stream, Tracker};
use perfq_symbolize::{Config, FrameLookup, LocationInterner, Resolutions, Resolved, Symbolizer};
use serde_json::json;

use crate::damage::Policy;
use crate::jsonw::Obj;
use crate::progress::ReadBar;
use crate::{sideband, DumpFormat, DumpRecords, Outcome};

const CSV_HEADER: &str = "offset,event,time,pid,tid,cpu,cpumode,ip,addr,id,stream_id,period,weight,data_src,phys_addr,cgroup,callchain,read";

/// The resolved locations and, per frame of one sample, its lookup and
/// location index.
type SymbolizedFrames<'a> = (&'a Resolutions, &'a [(FrameLookup, u32)]);

/// Symbolization of `perfq dump --symbols`: every sample location resolved
/// up front (one read of the capture), so the output's read only looks up.
struct Symbols {
    interner: LocationInterner,
    resolved: Resolutions,
    symbolizer: Symbolizer,
}

impl Symbols {
    fn collect(capture: &Capture, config: &Config) -> Symbols {
        let mut stream = Stream::new(capture);
        let symbolizer = Symbolizer::new(
            config,
            stream.tracker().kernel_build_id(),
            capture.meta().os_release.as_deref(),
        );
        let mut interning = Interning {
            symbolizer,
            interner: LocationInterner::new(),
        };
        // What could not be read is said by the output's read.
        let Ok(()) = stream.run(&mut interning, &mut |_, _| {});
        let tracker = stream.finish().tracker;
        let resolved = interning
            .symbolizer
            .resolve_all(&tracker, interning.interner.locations());
        Symbols {
            interner: interning.interner,
            resolved,
            symbolizer: interning.symbolizer,
        }
    }
}

/// The first read of `dump --symbols`: every frame's location numbered.
struct Interning {
    symbolizer: Symbolizer,
    interner: LocationInterner,
}

impl Consumer for Interning {
    type Error = std::convert::Infallible;

    fn sample(&mut self, view: &mut SampleView<'_, '_>) -> Result<(), Self::Error> {
        let Some(pid) = view.sample().pid else {
            return Ok(());
        };
        view.locate_frames(Some(&self.symbolizer));
        for f in view.frames() {
            self.interner.intern(view.tracker(), pid, f);
        }
        Ok(())
    }
}

pub fn run(
    path: &Path,
    format: DumpFormat,
    which: DumpRecords,
    symbols: Option<Config>,
    policy: Policy,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    if which == DumpRecords::All && matches!(format, DumpFormat::Csv) {
        anyhow::bail!(
            "--records all needs --format jsonl: records other than samples have no CSV columns"
        );
    }
    let capture = Capture::open(path)?;
    let symbols = symbols.map(|config| Symbols::collect(&capture, &config));
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
    let mut stream = Stream::new(&capture);
    let mut printing = Printing {
        capture: &capture,
        format,
        which,
        symbols,
        frames: Vec::new(),
        line: Vec::with_capacity(4096),
        out,
    };
    stream.run(&mut printing, &mut |done, total| bar.update(done, total))?;
    bar.finish();
    let problem = policy.say(&path.display().to_string(), &stream.finish().notes());
    Ok(Outcome::from_problems(problem))
}

/// The output's read of `perfq dump`: a line per record.
struct Printing<'c, 'o> {
    capture: &'c Capture,
    format: DumpFormat,
    which: DumpRecords,
    symbols: Option<Symbols>,
    frames: Vec<(FrameLookup, u32)>,
    line: Vec<u8>,
    out: &'o mut dyn Write,
}

impl Consumer for Printing<'_, '_> {
    type Error = anyhow::Error;

    fn sideband(
        &mut self,
        _tracker: &Tracker,
        r: &RawRecord<'_>,
        data: &RecordData<'_>,
        sample_id: Option<SampleId>,
    ) -> anyhow::Result<()> {
        if self.which == DumpRecords::All {
            let record = sideband::record_json(self.capture, r, data, sample_id);
            serde_json::to_writer(&mut *self.out, &record)?;
            writeln!(self.out)?;
        }
        Ok(())
    }

    fn unknown_event(&mut self, r: &RawRecord<'_>) -> anyhow::Result<()> {
        let offset = format!("{:#x}", r.offset.0);
        let id = match r.event {
            EventRef::UnknownId(id) => Some(id),
            _ => None,
        };
        match self.format {
            DumpFormat::Jsonl => {
                serde_json::to_writer(
                    &mut *self.out,
                    &json!({"offset": offset, "event": null, "unknown_id": id, "time": r.time}),
                )?;
                writeln!(self.out)?;
            }
            DumpFormat::Csv => writeln!(
                self.out,
                "{offset},,{},,,,,,,{},,,,,,,,,",
                r.time.map(|t| t.to_string()).unwrap_or_default(),
                id.map(|i| i.to_string()).unwrap_or_default()
            )?,
        }
        Ok(())
    }

    fn sample(&mut self, view: &mut SampleView<'_, '_>) -> anyhow::Result<()> {
        let capture = self.capture;
        let name = capture
            .events()
            .get(view.event())
            .map_or("", |e| e.name.as_str());
        self.frames.clear();
        if let (Some(sym), Some(pid)) = (self.symbols.as_ref(), view.sample().pid) {
            view.locate_frames(Some(&sym.symbolizer));
            for &f in view.frames() {
                let l = view.tracker().locate(pid, f.lookup, f.kernel);
                if let Some(id) = sym.interner.get(&l) {
                    self.frames.push((f, id));
                }
            }
        }
        let offset = view.record().offset.0;
        let (sample, members) = (view.sample(), view.members());
        match self.format {
            DumpFormat::Jsonl => {
                self.line.clear();
                let resolved = self.symbols.as_ref().map(|s| &s.resolved);
                write_sample(
                    &mut self.line,
                    offset,
                    name,
                    sample,
                    members,
                    capture,
                    resolved.map(|r| (r, self.frames.as_slice())),
                );
                self.line.push(b'\n');
                self.out.write_all(&self.line)?;
            }
            DumpFormat::Csv => write_csv(
                self.out,
                &format!("{offset:#x}"),
                name,
                sample,
                members,
                capture,
            )?,
        }
        Ok(())
    }
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
