//! `perfq info`: what is in a capture.

use std::io::Write;
use std::path::Path;

use crate::input::CaptureFile;

use perfq_reader::{
    features::feature_name, read_format_names, sample_type_names, Capture, Endian, Events, Mode,
    RawRecord, Stats,
};
use perfq_stream::{
    Flow, Interrupted, Located, Locating, Location, Notes, Read, Sink, Stream, Take, Unnumbered,
};
use serde_json::{json, Map, Value};

use crate::damage::Policy;
use crate::Outcome;

/// `perfq info`'s output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum InfoFormat {
    Text,
    Json,
}

pub fn run(
    file: &CaptureFile,
    as_json: bool,
    policy: Policy,
    out: &mut dyn Write,
) -> anyhow::Result<Outcome> {
    let path = file.name.as_path();
    let capture = Capture::open(&file.path).map_err(|e| e.with_path(path))?;
    let (read, undecodable) = read_every_record(&capture)?;
    let notes = read.notes();
    let doc = describe(path, &capture, &read, &notes, &undecodable);
    if as_json {
        serde_json::to_writer(&mut *out, &doc)?;
        writeln!(out)?;
    } else {
        print_text(&doc, out)?;
    }
    out.flush()?;
    let problem = policy.damage(&path.display().to_string(), notes.damage.as_deref());
    Ok(Outcome::from_problems(problem))
}

/// Reads the whole capture. Every record is decoded, not only framed, so
/// that a record whose body does not fit its event's layout is counted
/// here.
fn read_every_record(capture: &Capture) -> Result<(Read, Undecodable), Interrupted> {
    let mut stream = Stream::new(capture);
    let mut undecodable = Undecodable::default();
    stream.run(
        &mut Locating::default(),
        &mut Unnumbered,
        &mut undecodable,
        &mut |_, _| {},
    )?;
    Ok((stream.finish(), undecodable))
}

/// What `info --json` prints: the header's description of the capture and
/// what the read counted.
fn describe(
    path: &Path,
    capture: &Capture,
    read: &Read,
    notes: &Notes,
    undecodable: &Undecodable,
) -> Value {
    let stats = &read.stats;
    let error = read.damage.read_error.as_ref().map(|e| e.to_string());
    let warning_text: Vec<&String> = notes.warnings.iter().chain(&notes.damage).collect();
    let m = capture.meta();
    let (by_type, in_compressed) = record_counts(stats);
    let time_range = stats.sample_time.or(m.sample_time);
    json!({
        "file": path.display().to_string(),
        "size": capture.file_len(),
        "mode": match capture.header().mode { Mode::File => "file", Mode::Pipe => "pipe" },
        "endian": match capture.endian() { Endian::Little => "little", Endian::Big => "big" },
        "hostname": m.hostname,
        "os_release": m.os_release,
        "arch": m.arch,
        "cpuid": m.cpuid,
        "cpudesc": m.cpu_desc,
        "nrcpus_online": m.nr_cpus.map(|n| n.1),
        "nrcpus_avail": m.nr_cpus.map(|n| n.0),
        "total_mem_kb": m.total_mem_kb,
        "perf_version": m.perf_version,
        "cmdline": m.cmdline.as_ref().map(|c| c.join(" ")),
        "features": m.features.iter().map(|&f| feature_name(f)).collect::<Vec<_>>(),
        "pmu_mappings": m.pmu_mappings.iter().map(|p| json!({"name": p.name, "type": p.type_})).collect::<Vec<_>>(),
        "pmu_caps": m.pmu_caps.iter().map(pmu_caps_json).collect::<Vec<_>>(),
        "hybrid_topology": m.hybrid_topology.iter().map(|(pmu, cpus)| json!({"pmu": pmu, "cpus": cpus})).collect::<Vec<_>>(),
        "time_first": time_range.map(|t| t.0),
        "time_last": time_range.map(|t| t.1),
        "events": events_json(capture.events(), stats),
        "samples": stats.samples(),
        "records": by_type,
        "records_in_compressed": in_compressed,
        "samples_unknown_id": stats.samples_unknown_id,
        "samples_no_event": stats.samples_no_event,
        "lost_records": stats.lost_records,
        "lost_samples": stats.lost_samples,
        "decompressed_bytes": stats.decompressed_bytes,
        "build_ids": m.build_ids.len(),
        "records_undecodable": undecodable.0.iter().map(|(k, n)| (k.clone(), json!(n))).collect::<Map<_, _>>(),
        "warnings": warning_text,
        "error": error,
        "damage": notes.damage,
    })
}

/// Each event: its attributes and how many samples it has.
fn events_json(events: &Events, stats: &Stats) -> Vec<Value> {
    events
        .list()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let a = &e.attr;
            json!({
                "index": i,
                "name": e.name,
                "type": a.type_,
                "config": format!("{:#x}", a.config),
                "config1": format!("{:#x}", a.config1),
                "config2": format!("{:#x}", a.config2),
                "attr_size": a.size,
                "sample_type": sample_type_names(a.sample_type),
                "read_format": read_format_names(a.read_format),
                if a.is_freq() { "sample_freq" } else { "sample_period" }: a.sample_period_or_freq,
                "flags": format!("{:#x}", a.flags.bits()),
                "inherit": a.flags.contains(perfq_reader::AttrFlags::INHERIT),
                "sample_id_all": a.flags.contains(perfq_reader::AttrFlags::SAMPLE_ID_ALL),
                "branch_sample_type": format!("{:#x}", a.branch_sample_type.bits()),
                "group_leader": e.group_leader.map(|l| l.0),
                "group": e.group_name,
                "ids": e.ids.len(),
                "samples": stats.samples_per_event.get(i).copied().unwrap_or(0),
            })
        })
        .collect()
}

/// Records per type, and of those how many were inside compressed records.
fn record_counts(stats: &Stats) -> (Map<String, Value>, Map<String, Value>) {
    let mut by_type = Map::new();
    let mut in_compressed = Map::new();
    for (t, c) in stats.by_type() {
        by_type.insert(t.name(), json!(c.total()));
        if c.compressed > 0 {
            in_compressed.insert(t.name(), json!(c.compressed));
        }
    }
    (by_type, in_compressed)
}

/// Records that could not be decoded, by type.
#[derive(Default)]
struct Undecodable(std::collections::BTreeMap<String, u64>);

impl Sink for Undecodable {
    type Key = Location;
    type Numbers = Unnumbered;
    type Error = Interrupted;

    fn lost(&mut self, r: &RawRecord<'_>) -> Result<(), Self::Error> {
        *self.0.entry(r.kind.name()).or_default() += 1;
        Ok(())
    }

    fn take(&mut self, _: &perfq_stream::SampleView<'_, '_>) -> Take {
        Take::Skip
    }

    fn sample(&mut self, _: &Located<'_, '_, '_>, _: &mut Unnumbered) -> Result<Flow, Self::Error> {
        Ok(Flow::Go)
    }
}

/// A PMU's capabilities as JSON: a list, in perf's order, of name/value.
fn pmu_caps_json(p: &perfq_reader::PmuCaps) -> Value {
    let caps: Vec<Value> = p
        .caps
        .iter()
        .map(|(name, value)| json!({"name": name, "value": value}))
        .collect();
    json!({"pmu": p.pmu, "caps": caps})
}

/// The PMU features, each on lines of its own when present.
fn print_pmus(doc: &Value, out: &mut dyn Write) -> std::io::Result<()> {
    let list = |k: &str| doc[k].as_array().cloned().unwrap_or_default();
    let text = |v: &Value| v.as_str().unwrap_or("").to_string();
    let mappings: Vec<String> = list("pmu_mappings")
        .iter()
        .map(|p| format!("{} = {}", text(&p["name"]), p["type"]))
        .collect();
    if !mappings.is_empty() {
        writeln!(out, "pmu mappings:  {}", mappings.join(", "))?;
    }
    let caps = list("pmu_caps");
    if !caps.is_empty() {
        writeln!(out, "pmu caps:")?;
    }
    for p in &caps {
        let c: Vec<String> = p["caps"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{}={}", text(&c["name"]), text(&c["value"])))
            .collect();
        let c = if c.is_empty() {
            "-".into()
        } else {
            c.join(", ")
        };
        writeln!(out, "  {:<14} {c}", text(&p["pmu"]))?;
    }
    let hybrid = list("hybrid_topology");
    if !hybrid.is_empty() {
        writeln!(out, "hybrid cpus:")?;
    }
    for h in &hybrid {
        writeln!(out, "  {:<14} {}", text(&h["pmu"]), text(&h["cpus"]))?;
    }
    Ok(())
}

fn print_text(doc: &Value, out: &mut dyn Write) -> std::io::Result<()> {
    let s = |k: &str| match &doc[k] {
        Value::Null => "-".to_string(),
        Value::String(s) => s.clone(),
        v => v.to_string(),
    };
    writeln!(
        out,
        "file:          {} ({} bytes, {} mode, {}-endian)",
        s("file"),
        s("size"),
        s("mode"),
        s("endian")
    )?;
    writeln!(out, "host:          {}", s("hostname"))?;
    writeln!(out, "os release:    {}", s("os_release"))?;
    writeln!(out, "arch:          {}", s("arch"))?;
    writeln!(out, "cpu:           {} ({})", s("cpudesc"), s("cpuid"))?;
    writeln!(out, "cpus online:   {}", s("nrcpus_online"))?;
    writeln!(out, "perf version:  {}", s("perf_version"))?;
    writeln!(out, "command line:  {}", s("cmdline"))?;
    print_pmus(doc, out)?;
    if let (Some(a), Some(b)) = (doc["time_first"].as_u64(), doc["time_last"].as_u64()) {
        writeln!(
            out,
            "sample times:  {}.{:09} .. {}.{:09} ({:.3} s)",
            a / 1_000_000_000,
            a % 1_000_000_000,
            b / 1_000_000_000,
            b % 1_000_000_000,
            b.saturating_sub(a) as f64 / 1e9
        )?;
    }
    writeln!(out, "events:")?;
    for e in doc["events"].as_array().into_iter().flatten() {
        let group = e["group"]
            .as_str()
            .map(|g| format!(" group {g}"))
            .unwrap_or_default();
        writeln!(
            out,
            "  #{:<2} {:<24} type {} config {} sample_type {} read_format {}{} — {} samples",
            e["index"],
            e["name"].as_str().unwrap_or(""),
            e["type"],
            e["config"].as_str().unwrap_or(""),
            e["sample_type"].as_str().unwrap_or(""),
            e["read_format"].as_str().unwrap_or(""),
            group,
            e["samples"]
        )?;
    }
    writeln!(out, "records:")?;
    if let Some(m) = doc["records"].as_object() {
        for (k, v) in m {
            let z = doc["records_in_compressed"][k]
                .as_u64()
                .map(|n| format!(" ({n} inside compressed records)"))
                .unwrap_or_default();
            writeln!(out, "  {k:<20} {v}{z}")?;
        }
    }
    writeln!(out, "samples:       {}", s("samples"))?;
    for (k, label) in [
        ("samples_unknown_id", "samples with an unknown id"),
        ("samples_no_event", "samples without an event"),
        ("lost_records", "records lost"),
        ("lost_samples", "samples lost"),
    ] {
        if doc[k].as_u64().unwrap_or(0) > 0 {
            writeln!(out, "{label}: {}", s(k))?;
        }
    }
    for w in doc["warnings"].as_array().into_iter().flatten() {
        writeln!(out, "warning: {}", w.as_str().unwrap_or(""))?;
    }
    Ok(())
}
