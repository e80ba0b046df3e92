//! JSON for records other than samples (`perfq dump --records all`).

use perfq_reader::{
    read_format_names, sample_type_names, Capture, EventUpdate, Mmap, MmapFileId, RawRecord,
    RecordData, SampleId,
};
use serde_json::{json, Map, Value};

use super::{bytes_hex, hex};

/// One record as a JSON object: where it is, its type, its event and time,
/// its fields, and its `sample_id` trailer.
pub fn record_json(
    capture: &Capture,
    r: &RawRecord<'_>,
    data: &RecordData<'_>,
    sid: Option<SampleId>,
) -> Value {
    let mut o = Map::new();
    o.insert("offset".into(), json!(hex(r.offset.0)));
    o.insert("type".into(), json!(r.kind.name()));
    if r.compressed {
        o.insert("in_compressed".into(), json!(true));
    }
    if let Some(ev) = r.event.index().and_then(|i| capture.events().get(i)) {
        o.insert("event".into(), json!(ev.name));
    }
    if let Some(t) = r.time {
        o.insert("time".into(), json!(t));
    }
    // Fields never reuse the keys above ("time" is the record's sort time;
    // a time inside a record's body has its own name).
    if let Value::Object(f) = fields(data) {
        o.extend(f);
    }
    if let Some(s) = sid {
        let mut m = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                m.insert(k.into(), v);
            }
        };
        put("pid", s.pid.map(|v| json!(v as i32)));
        put("tid", s.tid.map(|v| json!(v as i32)));
        put("time", s.time.map(|v| json!(v)));
        put("id", s.id.map(|v| json!(v)));
        put("stream_id", s.stream_id.map(|v| json!(v)));
        put("cpu", s.cpu.map(|v| json!(v)));
        o.insert("sample_id".into(), Value::Object(m));
    }
    Value::Object(o)
}

/// The fields of a record's body, by kind of record.
fn fields(data: &RecordData<'_>) -> Value {
    task_fields(data)
        .or_else(|| loss_fields(data))
        .or_else(|| code_fields(data))
        .or_else(|| aux_fields(data))
        .or_else(|| counter_fields(data))
        .or_else(|| session_fields(data))
        .unwrap_or_else(|| json!({}))
}

/// Records of tasks and their memory: maps, names, forks and exits, switches, namespaces, cgroups.
fn task_fields(data: &RecordData<'_>) -> Option<Value> {
    Some(match data {
        RecordData::Mmap(m) => mmap_fields(m),
        RecordData::Comm(c) => {
            json!({"pid": c.pid as i32, "tid": c.tid as i32, "comm": c.comm, "exec": c.is_exec})
        }
        RecordData::Fork(f) | RecordData::Exit(f) => json!({
            "pid": f.pid as i32, "ppid": f.ppid as i32, "tid": f.tid as i32, "ptid": f.ptid as i32, "task_time": f.time,
        }),
        RecordData::ItraceStart { pid, tid } => json!({"pid": *pid as i32, "tid": *tid as i32}),
        RecordData::Switch {
            out,
            preempt,
            next_prev,
        } => json!({
            "out": out, "preempt": preempt,
            "next_prev_pid": next_prev.map(|p| p.0 as i32), "next_prev_tid": next_prev.map(|p| p.1 as i32),
        }),
        RecordData::Namespaces {
            pid,
            tid,
            namespaces,
        } => json!({
            "pid": *pid as i32, "tid": *tid as i32,
            "namespaces": namespaces.iter().collect::<Vec<_>>().chunks(2).map(|p| json!({"dev": p[0], "ino": p.get(1)})).collect::<Vec<_>>(),
        }),
        RecordData::Cgroup { id, path } => json!({"cgroup_id": id, "path": path}),
        _ => return None,
    })
}

/// Records of what the kernel lost or throttled.
fn loss_fields(data: &RecordData<'_>) -> Option<Value> {
    Some(match data {
        RecordData::Lost { id, lost } => json!({"id": id, "lost": lost}),
        RecordData::LostSamples { lost } => json!({"lost": lost}),
        RecordData::Throttle {
            unthrottle,
            time,
            id,
            stream_id,
        } => {
            json!({"unthrottle": unthrottle, "throttle_time": time, "id": id, "stream_id": stream_id})
        }
        _ => return None,
    })
}

/// Records of code that appeared or changed: kernel symbols, BPF programs, patched text, build ids.
fn code_fields(data: &RecordData<'_>) -> Option<Value> {
    Some(match data {
        RecordData::Ksymbol {
            addr,
            len,
            ksym_type,
            flags,
            name,
        } => {
            json!({"addr": hex(*addr), "len": len, "ksym_type": ksym_type, "flags": flags, "name": name})
        }
        RecordData::BpfEvent {
            type_,
            flags,
            id,
            tag,
        } => {
            json!({"bpf_type": type_, "flags": flags, "prog_id": id, "tag": bytes_hex(tag)})
        }
        RecordData::TextPoke { addr, old, new } => {
            json!({"addr": hex(*addr), "old": bytes_hex(old), "new": bytes_hex(new)})
        }
        RecordData::BuildId {
            pid,
            build_id,
            filename,
        } => {
            json!({"pid": pid, "build_id": bytes_hex(build_id), "filename": filename})
        }
        _ => return None,
    })
}

/// Records of the hardware trace (AUX) buffer.
fn aux_fields(data: &RecordData<'_>) -> Option<Value> {
    Some(match data {
        RecordData::Aux {
            aux_offset,
            aux_size,
            flags,
        } => {
            json!({"aux_offset": hex(*aux_offset), "aux_size": aux_size, "flags": hex(*flags)})
        }
        RecordData::AuxOutputHwId { hw_id } => json!({"hw_id": hw_id}),
        RecordData::Auxtrace {
            size,
            offset,
            reference,
            idx,
            tid,
            cpu,
            ..
        } => json!({
            "size": size, "aux_offset": hex(*offset), "reference": hex(*reference), "idx": idx, "tid": *tid as i32, "cpu": *cpu as i32,
        }),
        RecordData::AuxtraceInfo { type_, private } => {
            json!({"aux_type": type_, "private": private.iter().map(hex).collect::<Vec<_>>()})
        }
        RecordData::AuxtraceError(e) => json!({
            "error_type": e.type_, "code": e.code, "cpu": e.cpu, "pid": e.pid as i32, "tid": e.tid as i32,
            "ip": hex(e.ip), "msg": e.msg, "error_time": e.time,
        }),
        _ => return None,
    })
}

/// Records of counter values: task reads and `perf stat`'s records.
fn counter_fields(data: &RecordData<'_>) -> Option<Value> {
    Some(match data {
        RecordData::Read { pid, tid, values } => json!({
            "pid": *pid as i32, "tid": *tid as i32, "time_enabled": values.time_enabled,
            "time_running": values.time_running,
            "values": values.values().map(|v| json!({"value": v.value, "id": v.id, "lost": v.lost})).collect::<Vec<_>>(),
        }),
        RecordData::Stat(s) => {
            json!({"id": s.id, "cpu": s.cpu, "thread": s.thread, "val": s.val, "ena": s.ena, "run": s.run})
        }
        RecordData::StatRound { type_, time } => json!({"round_type": type_, "round_time": time}),
        RecordData::StatConfig(w) => {
            let w: Vec<u64> = w.iter().collect();
            json!({"config": w.chunks(2).map(|p| json!({"tag": p[0], "val": p.get(1)})).collect::<Vec<_>>()})
        }
        _ => return None,
    })
}

/// Records perf writes about the session: attributes, ids, features, event updates, thread and CPU maps, time conversion, compression.
fn session_fields(data: &RecordData<'_>) -> Option<Value> {
    Some(match data {
        RecordData::IdIndex { entries } => {
            let e: Vec<u64> = entries.iter().collect();
            json!({"entries": e.chunks(4).map(|c| json!({"id": c[0], "idx": c.get(1), "cpu": c.get(2).map(|v| *v as i64 as i32), "tid": c.get(3).map(|v| *v as i64 as i32)})).collect::<Vec<_>>()})
        }
        RecordData::HeaderAttr { attr, ids } => json!({
            "attr_type": attr.type_, "config": hex(attr.config),
            "sample_type": sample_type_names(attr.sample_type), "read_format": read_format_names(attr.read_format),
            "ids": ids.iter().collect::<Vec<_>>(),
        }),
        RecordData::HeaderFeature { feature, data } => json!({
            "feature": perfq_reader::features::feature_name(*feature as u32), "size": data.len(),
        }),
        RecordData::EventUpdate { id, update } => {
            let (kind, value) = match update {
                EventUpdate::Unit(u) => ("unit", json!(u)),
                EventUpdate::Scale(s) => ("scale", json!(s)),
                EventUpdate::Name(n) => ("name", json!(n)),
                EventUpdate::Cpus(c) => ("cpus", json!(bytes_hex(c))),
                EventUpdate::Other { type_, data } => {
                    ("other", json!({"type": type_, "data": bytes_hex(data)}))
                }
            };
            json!({"id": id, kind: value})
        }
        RecordData::ThreadMap(t) => {
            json!({"threads": t.iter().map(|(pid, comm)| json!({"pid": *pid as i64, "comm": comm})).collect::<Vec<_>>()})
        }
        RecordData::CpuMap(c) => json!({"cpus": c}),
        RecordData::TimeConv(t) => json!({
            "time_shift": t.time_shift, "time_mult": t.time_mult, "time_zero": t.time_zero,
            "time_cycles": t.time_cycles, "time_mask": t.time_mask,
            "cap_user_time_zero": t.cap_user_time_zero, "cap_user_time_short": t.cap_user_time_short,
        }),
        RecordData::Compressed { data } => json!({"size": data.len()}),
        _ => return None,
    })
}

/// An MMAP or MMAP2 record: the mapping, and the file's inode or build id
/// and protection where MMAP2 has them.
fn mmap_fields(m: &Mmap<'_>) -> Value {
    let mut v = json!({
        "pid": m.pid as i32, "tid": m.tid as i32, "addr": hex(m.addr), "len": hex(m.len),
        "pgoff": hex(m.pgoff), "filename": m.filename, "data": m.is_data,
    });
    match m.file_id {
        Some(MmapFileId::Inode {
            maj,
            min,
            ino,
            ino_generation,
        }) => {
            v["maj"] = json!(maj);
            v["min"] = json!(min);
            v["ino"] = json!(ino);
            v["ino_generation"] = json!(ino_generation);
        }
        Some(MmapFileId::BuildId(b)) => v["build_id"] = json!(bytes_hex(b)),
        None => {}
    }
    if let (Some(p), Some(f)) = (m.prot, m.flags) {
        v["prot"] = json!(p);
        v["flags"] = json!(f);
    }
    v
}
