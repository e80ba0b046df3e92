//! `perfq dump`: every sample, every decoded field, in time order.

use std::fmt::Write as _;
use std::io::Write;
use std::path::Path;

use perfq_reader::{Capture, EventRef, MemberDelta, ReadDeltas, Sample};
use serde_json::{json, Map, Value};

use crate::{DumpFormat, Outcome};

const CSV_HEADER: &str = "offset,event,time,pid,tid,cpu,cpumode,ip,addr,id,stream_id,period,weight,data_src,phys_addr,cgroup,callchain,read";

pub fn run(path: &Path, format: DumpFormat, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let capture = Capture::open(path)?;
    let events = capture.events();
    let mut records = capture.records_by_time();
    let mut deltas = ReadDeltas::new();
    let mut members: Vec<MemberDelta> = Vec::new();
    let mut bad_samples = 0u64;
    let mut first_bad = None;
    let mut error = None;
    if let DumpFormat::Csv = format {
        writeln!(out, "{CSV_HEADER}")?;
    }
    loop {
        let r = match records.next_record() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => {
                error = Some(e.with_path(path).to_string());
                break;
            }
        };
        if r.kind != perfq_reader::RecordType::SAMPLE {
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
        match format {
            DumpFormat::Jsonl => {
                let v = sample_json(&offset, name, &sample, &members, &capture);
                serde_json::to_writer(&mut *out, &v)?;
                writeln!(out)?;
            }
            DumpFormat::Csv => write_csv(out, &offset, name, &sample, &members, &capture)?,
        }
    }
    let mut problems = Vec::new();
    for w in records.warnings() {
        eprintln!("perfq: warning: {}: {w}", path.display());
    }
    if bad_samples > 0 {
        problems.push(format!(
            "{bad_samples} samples could not be decoded (first: {})",
            first_bad.unwrap_or_default()
        ));
    }
    if let Some(e) = error {
        problems.push(e);
    }
    Ok(if problems.is_empty() {
        Outcome::Ok
    } else {
        Outcome::Failed(problems.join("; "))
    })
}

fn hex(v: u64) -> String {
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

fn member_name(capture: &Capture, m: &MemberDelta) -> Value {
    m.event
        .and_then(|e| capture.events().get(e))
        .map_or(Value::Null, |e| json!(e.name))
}

fn sample_json(
    offset: &str,
    event: &str,
    s: &Sample<'_>,
    members: &[MemberDelta],
    capture: &Capture,
) -> Value {
    let mut o = Map::new();
    o.insert("offset".into(), json!(offset));
    o.insert("event".into(), json!(event));
    o.insert("cpumode".into(), json!(cpumode(s.misc)));
    let mut put = |k: &str, v: Option<Value>| {
        if let Some(v) = v {
            o.insert(k.into(), v);
        }
    };
    put("identifier", s.identifier.map(|v| json!(v)));
    put("ip", s.ip.map(|v| json!(hex(v))));
    put("pid", s.pid.map(|v| json!(v as i32)));
    put("tid", s.tid.map(|v| json!(v as i32)));
    put("time", s.time.map(|v| json!(v)));
    put("addr", s.addr.map(|v| json!(hex(v))));
    put("id", s.id.map(|v| json!(v)));
    put("stream_id", s.stream_id.map(|v| json!(v)));
    put("cpu", s.cpu.map(|v| json!(v)));
    put("period", s.period.map(|v| json!(v)));
    put(
        "read",
        s.read.as_ref().map(|r| {
            json!({
                "time_enabled": r.time_enabled,
                "time_running": r.time_running,
                "values": members.iter().map(|m| json!({
                    "event": member_name(capture, m),
                    "id": m.id,
                    "value": m.value,
                    "delta": m.delta,
                    "lost": m.lost,
                })).collect::<Vec<_>>(),
            })
        }),
    );
    put(
        "callchain",
        s.callchain.map(|c| {
            Value::Array(
                c.frames()
                    .map(|f| json!({"addr": hex(f.addr), "context": f.context.map(|c| c.name())}))
                    .collect(),
            )
        }),
    );
    put("raw", s.raw.map(|b| json!(bytes_hex(b))));
    put(
        "branch_stack",
        s.branch_stack.map(|b| {
            let counters = b.counters;
            json!({
                "hw_idx": b.hw_idx,
                "entries": b.entries().enumerate().map(|(i, e)| {
                    let f = e.flags();
                    json!({
                        "from": hex(e.from), "to": hex(e.to), "mispred": f.mispred, "predicted": f.predicted,
                        "in_tx": f.in_tx, "abort": f.abort, "cycles": f.cycles, "type": f.type_,
                        "spec": f.spec, "new_type": f.new_type, "priv": f.priv_,
                        "counters": counters.and_then(|c| c.get(i)),
                    })
                }).collect::<Vec<_>>(),
            })
        }),
    );
    put(
        "regs_user",
        s.regs_user.map(|r| json!({"abi": r.abi, "mask": hex(r.mask), "values": r.values.iter().map(hex).collect::<Vec<_>>()})),
    );
    put(
        "stack_user",
        s.stack_user
            .map(|st| json!({"size": st.data.len(), "dyn_size": st.dyn_size})),
    );
    put("weight", s.weight.map(|v| json!(v)));
    put("data_src", s.data_src.map(|v| json!(hex(v))));
    put("transaction", s.transaction.map(|v| json!(hex(v))));
    put(
        "regs_intr",
        s.regs_intr.map(|r| json!({"abi": r.abi, "mask": hex(r.mask), "values": r.values.iter().map(hex).collect::<Vec<_>>()})),
    );
    put("phys_addr", s.phys_addr.map(|v| json!(hex(v))));
    put("cgroup", s.cgroup.map(|v| json!(v)));
    put("data_page_size", s.data_page_size.map(|v| json!(v)));
    put("code_page_size", s.code_page_size.map(|v| json!(v)));
    put("aux_size", s.aux.map(|a| json!(a.len())));
    Value::Object(o)
}

fn bytes_hex(b: &[u8]) -> String {
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
            format!(
                "{}={}/{}",
                name.as_str().unwrap_or("?"),
                m.value,
                opt(m.delta)
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let event = if event.contains([',', '"']) {
        format!("\"{}\"", event.replace('"', "\"\""))
    } else {
        event.to_string()
    };
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
        opt(s.weight),
        oh(s.data_src),
        oh(s.phys_addr),
        opt(s.cgroup),
    )
}
