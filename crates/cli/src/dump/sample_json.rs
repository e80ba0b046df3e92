//! A sample as one JSON line of `perfq dump`, written field by field into a
//! reused buffer (see `jsonw`).

use perfq_reader::{BranchStack, Callchain, Capture, MemberDelta, ReadValues, Sample};
use perfq_symbolize::{FrameLookup, Resolutions, Resolved};

use super::symbolized::SymbolizedFrames;
use super::{bytes_hex, cpumode, member_name};
use crate::jsonw::{Arr, Obj};

/// One sample as a JSON object (without the newline).
pub(super) fn write_sample(
    buf: &mut Vec<u8>,
    offset: u64,
    event: &str,
    s: &Sample<'_>,
    members: &[MemberDelta],
    capture: &Capture,
    frames: Option<SymbolizedFrames<'_>>,
) {
    let mut o = Obj::new(buf);
    write_identity(&mut o, offset, event, s);
    if let Some(r) = &s.read {
        o.object("read", |o| write_read(o, r, members, capture));
    }
    if let Some(c) = s.callchain {
        o.array("callchain", |a| write_callchain(a, &c));
    }
    if let Some(raw) = s.raw {
        o.str("raw", &bytes_hex(raw));
    }
    if let Some(b) = s.branch_stack {
        o.object("branch_stack", |o| write_branch_stack(o, &b));
    }
    write_registers_and_stack(&mut o, s);
    write_memory_fields(&mut o, s);
    if let Some((resolved, frames)) = frames {
        o.array("frames", |a| write_frames(a, resolved, frames));
    }
    o.end();
}

/// Where the sample is and what it is of: the fields up to its period.
fn write_identity(o: &mut Obj<'_>, offset: u64, event: &str, s: &Sample<'_>) {
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
}

/// The group read: its times and each member's value and delta.
fn write_read(o: &mut Obj<'_>, r: &ReadValues<'_>, members: &[MemberDelta], capture: &Capture) {
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
}

fn write_callchain(a: &mut Arr<'_>, c: &Callchain<'_>) {
    for f in c.frames() {
        a.object(|o| {
            o.hex("addr", f.addr);
            match f.context {
                Some(ctx) => o.str("context", ctx.name()),
                None => o.raw("context", "null"),
            };
        });
    }
}

fn write_branch_stack(o: &mut Obj<'_>, b: &BranchStack<'_>) {
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
}

/// The user and interrupt registers, and the size of the user stack copied.
fn write_registers_and_stack(o: &mut Obj<'_>, s: &Sample<'_>) {
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
}

/// Weights, the data source, physical address, page sizes and the rest
/// after the stacks.
fn write_memory_fields(o: &mut Obj<'_>, s: &Sample<'_>) {
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
}

fn write_frames(a: &mut Arr<'_>, resolved: &Resolutions, frames: &[(FrameLookup, u32)]) {
    for (f, id) in frames {
        let Some(r) = resolved.get(*id as usize) else {
            continue;
        };
        a.object(|o| write_frame(o, f, &r));
    }
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
