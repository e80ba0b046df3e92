//! `perfq convert`: captures into a normalized Parquet dataset
//! (`docs/schema.md`), one `capture=<id>/` folder each.

use std::io::Write;
use std::path::{Path, PathBuf};

use perfq_reader::{
    read_format_names, sample_type_names, Capture, Endian, MemberDelta, Mode, ReadDeltas,
    RecordType,
};
use perfq_symbolize::{
    chain_lookups, Config, DsoKind, Location, LocationInterner, Resolved, StackUnwinder,
    Symbolizer, Tracker,
};
use perfq_writer::{CaptureWriter, Cell, ColumnType::*};
use rustc_hash::FxHashMap;

use crate::Outcome;

/// Options of `perfq convert`.
pub struct Options {
    pub files: Vec<PathBuf>,
    pub output: PathBuf,
    pub force: bool,
    pub symbols: Option<Config>,
}

pub fn run(opt: &Options, out: &mut dyn Write) -> anyhow::Result<Outcome> {
    let mut problems = Vec::new();
    for file in &opt.files {
        match convert_one(file, opt) {
            Ok((dir, warnings, error)) => {
                writeln!(out, "{} -> {}", file.display(), dir.display())?;
                for w in warnings {
                    eprintln!("perfq: warning: {}: {w}", file.display());
                }
                if let Some(e) = error {
                    problems.push(e);
                }
            }
            Err(e) => problems.push(format!("{}: {e:#}", file.display())),
        }
    }
    Ok(Outcome::from_problems(problems))
}

/// The capture's id: a hash of its bytes, so the same capture converts to
/// the same folder.
fn capture_id(capture: &Capture) -> (String, u64) {
    let h = xxhash_rust::xxh3::xxh3_64(capture.bytes());
    (format!("{h:016x}"), h)
}

/// The capture folder written, warnings, and the error that ended reading
/// early, if one did.
type Converted = (PathBuf, Vec<String>, Option<String>);

fn convert_one(path: &Path, opt: &Options) -> anyhow::Result<Converted> {
    let capture = Capture::open(path)?;
    let (id, hash) = capture_id(&capture);
    let w = CaptureWriter::create(&opt.output, &id, opt.force)?;
    let events = capture.events();

    let mut samples = w.table(
        "samples",
        &[
            ("sample_id", U64, false),
            ("time", U64, true),
            ("pid", I32, true),
            ("tid", I32, true),
            ("cpu", U32, true),
            ("event_id", U32, false),
            ("period", U64, false),
            ("stack_id", U32, true),
            ("ip", U64, true),
            ("addr", U64, true),
            ("weight", U64, true),
            ("data_src", U64, true),
        ],
    )?;
    let mut read_values = w.table(
        "read_values",
        &[
            ("sample_id", U64, false),
            ("event_id", U32, true),
            ("id", U64, false),
            ("value", U64, false),
            ("delta", U64, true),
            ("lost", U64, true),
        ],
    )?;

    let mut sideband = Sideband::create(&w)?;
    let mut tracker = Tracker::new(&capture);
    let mut symbolizer = opt.symbols.as_ref().map(|c| {
        Symbolizer::new(
            c,
            tracker.kernel_build_id(),
            capture.meta().os_release.as_deref(),
        )
    });
    let mut unwinder = StackUnwinder::new(capture.meta().arch.as_deref());
    let mut lookups = Vec::new();
    let mut interner = LocationInterner::new();
    // Stacks as a parent-pointer tree: (leaf frame, caller stack) → id.
    let mut stack_ids: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut stacks: Vec<(u32, Option<u32>)> = Vec::new();
    let mut deltas = ReadDeltas::new();
    let mut members: Vec<MemberDelta> = Vec::new();
    let mut frames: Vec<u32> = Vec::new();
    let mut sample_id = 0u64;
    let mut decode_errors = 0u64;
    let mut records = capture.records_by_time();
    let mut error = None;
    // Progress by bytes of the capture; drawn only when stderr is a terminal.
    let progress = indicatif::ProgressBar::new(capture.file_len()).with_style(
        indicatif::ProgressStyle::with_template("{msg} {wide_bar} {bytes}/{total_bytes} {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    progress.set_message(path.display().to_string());
    let mut seen = 0u64;
    loop {
        seen += 1;
        if seen.is_multiple_of(65_536) {
            progress.set_position(records.stats().data_bytes);
        }
        let Some(r) = records.next_ok(&mut error) else {
            break;
        };
        if r.kind != RecordType::SAMPLE {
            if let Ok((data, sid)) = capture.parse(&r) {
                sideband.push(r.time, r.event.index().map(|e| e.0 as u64), &data, sid)?;
                tracker.observe(&data);
            }
            continue;
        }
        let Some(ev) = r.event.index() else { continue };
        let Ok(s) = capture.sample(&r) else {
            decode_errors += 1;
            continue;
        };
        frames.clear();
        // Without symbols there are no binaries to unwind DWARF stacks
        // with: the recorded callchain is stored.
        match symbolizer.as_ref() {
            Some(sym) => {
                unwinder.sample_frames(&tracker, sym, &s, &mut lookups);
            }
            None => {
                lookups.clear();
                lookups.extend(chain_lookups(&s));
            }
        }
        if let Some(pid) = s.pid {
            frames.extend(lookups.iter().map(|f| interner.intern(&tracker, pid, f)));
        }
        let stack_id =
            (!frames.is_empty()).then(|| intern_stack(&frames, &mut stack_ids, &mut stacks));
        let period = s
            .period
            .unwrap_or_else(|| events.get(ev).map_or(1, |e| e.attr.sample_period_or_freq));
        let opt_u = |v: Option<u64>| v.map_or(Cell::Null, Cell::U);
        samples.push(&[
            Cell::U(sample_id),
            opt_u(s.time),
            s.pid.map_or(Cell::Null, |v| Cell::I(i64::from(v as i32))),
            s.tid.map_or(Cell::Null, |v| Cell::I(i64::from(v as i32))),
            opt_u(s.cpu.map(u64::from)),
            Cell::U(ev.0 as u64),
            Cell::U(period),
            opt_u(stack_id.map(u64::from)),
            opt_u(s.ip),
            opt_u(s.addr),
            opt_u(s.weight_value()),
            opt_u(s.data_src),
        ])?;
        if s.read.is_some() {
            members.clear();
            deltas.apply(events, ev, &s, &mut members);
            for m in &members {
                read_values.push(&[
                    Cell::U(sample_id),
                    m.event.map_or(Cell::Null, |e| Cell::U(e.0 as u64)),
                    Cell::U(m.id),
                    Cell::U(m.value),
                    m.delta.map_or(Cell::Null, Cell::U),
                    m.lost.map_or(Cell::Null, Cell::U),
                ])?;
            }
        }
        sample_id += 1;
    }
    progress.finish_and_clear();
    samples.finish()?;
    read_values.finish()?;
    sideband.finish()?;

    // Stacks: leaf-first frame ids and the stack of the caller frames.
    let mut t = w.table(
        "stacks",
        &[
            ("stack_id", U32, false),
            ("frame_ids", ListU32, false),
            ("parent_stack_id", U32, true),
        ],
    )?;
    // Each stack's frames, leaf first, by walking its callers.
    let mut frame_ids = Vec::new();
    for (i, &(_, parent)) in stacks.iter().enumerate() {
        frame_ids.clear();
        let mut at = Some(i as u32);
        while let Some(s) = at {
            let (frame, up) = stacks[s as usize];
            frame_ids.push(frame);
            at = up;
        }
        t.push(&[
            Cell::U(i as u64),
            Cell::L(&frame_ids),
            parent.map_or(Cell::Null, |p| Cell::U(u64::from(p))),
        ])?;
    }
    t.finish()?;

    // Frames: one row per inlining level of each address.
    let resolved: Vec<Resolved> = match symbolizer.as_mut() {
        Some(s) => {
            s.set_inline(true);
            s.resolve_all(tracker.dsos(), interner.locations())
        }
        None => Vec::new(),
    };
    write_frames(&w, &tracker, interner.locations(), &resolved)?;
    write_events(&w, &capture)?;
    let stats = records.stats().clone();
    let mut warnings: Vec<String> = capture.warnings().iter().map(|w| w.to_string()).collect();
    warnings.extend(records.warnings().iter().map(|w| w.to_string()));
    if decode_errors > 0 {
        warnings.push(format!("{decode_errors} samples could not be decoded"));
    }
    let m = capture.meta();
    let mut t = w.table(
        "capture",
        &[
            ("capture_id", Str, false),
            ("source_path", Str, false),
            ("source_size", U64, false),
            ("source_xxh3", Str, false),
            ("mode", Str, false),
            ("endian", Str, false),
            ("hostname", Str, true),
            ("os_release", Str, true),
            ("arch", Str, true),
            ("cpuid", Str, true),
            ("cpudesc", Str, true),
            ("perf_version", Str, true),
            ("cmdline", Str, true),
            ("nrcpus_online", U32, true),
            ("time_first", U64, true),
            ("time_last", U64, true),
            ("samples", U64, false),
            ("lost_records", U64, false),
            ("lost_samples", U64, false),
            ("samples_unknown_id", U64, false),
            ("warnings", Str, false),
        ],
    )?;
    fn s(v: &Option<String>) -> Cell<'_> {
        v.as_deref().map_or(Cell::Null, Cell::S)
    }
    let abs = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let cmdline = m.cmdline.as_ref().map(|c| c.join(" "));
    let time = stats.sample_time.or(m.sample_time);
    let warnings_text = warnings.join("\n");
    t.push(&[
        Cell::S(&id),
        Cell::S(&abs.to_string_lossy()),
        Cell::U(capture.file_len()),
        Cell::S(&format!("{hash:016x}")),
        Cell::S(match capture.header().mode {
            Mode::File => "file",
            Mode::Pipe => "pipe",
        }),
        Cell::S(match capture.endian() {
            Endian::Little => "little",
            Endian::Big => "big",
        }),
        s(&m.hostname),
        s(&m.os_release),
        s(&m.arch),
        s(&m.cpuid),
        s(&m.cpu_desc),
        s(&m.perf_version),
        s(&cmdline),
        m.nr_cpus.map_or(Cell::Null, |n| Cell::U(u64::from(n.1))),
        time.map_or(Cell::Null, |t| Cell::U(t.0)),
        time.map_or(Cell::Null, |t| Cell::U(t.1)),
        Cell::U(stats.samples()),
        Cell::U(stats.lost_records),
        Cell::U(stats.lost_samples),
        Cell::U(stats.samples_unknown_id),
        Cell::S(&warnings_text),
    ])?;
    t.finish()?;
    // What was read before an error is kept; the error is reported.
    let dir = w.finish()?;
    Ok((dir, warnings, error.map(|e| e.to_string())))
}

/// Interns a leaf-first stack, root first, as a parent-pointer tree: each
/// stack is its leaf frame and its callers' stack.
fn intern_stack(
    frames: &[u32],
    ids: &mut FxHashMap<(u32, u32), u32>,
    stacks: &mut Vec<(u32, Option<u32>)>,
) -> u32 {
    let mut parent: Option<u32> = None;
    for &f in frames.iter().rev() {
        // u32::MAX stands for "no parent" in the key.
        let key = (f, parent.unwrap_or(u32::MAX));
        let id = *ids.entry(key).or_insert_with(|| {
            stacks.push((f, parent));
            (stacks.len() - 1) as u32
        });
        parent = Some(id);
    }
    parent.unwrap_or(0)
}

fn write_frames(
    w: &CaptureWriter,
    tracker: &Tracker,
    locations: &[Location],
    resolved: &[Resolved],
) -> anyhow::Result<()> {
    let mut t = w.table(
        "frames",
        &[
            ("frame_id", U32, false),
            ("inline_depth", U16, false),
            ("function", Str, true),
            ("raw_function", Str, true),
            ("file", Str, true),
            ("line", U32, true),
            ("symbol", Str, true),
            ("raw_symbol", Str, true),
            ("dso", Str, false),
            ("dso_path", Str, true),
            ("build_id", Str, true),
            ("address", U64, false),
            ("dso_offset", U64, true),
            ("kind", Str, false),
            ("unresolved", Str, true),
        ],
    )?;
    let dsos = tracker.dsos();
    for (i, l) in locations.iter().enumerate() {
        let r = resolved.get(i);
        let (kind, dso_path, build_id, address, offset) = match *l {
            Location::Dso { dso, offset } => {
                let d = dsos.get(dso);
                let kind = match d.kind {
                    DsoKind::Jit => "jit",
                    DsoKind::Anon => "anon",
                    DsoKind::Vdso => "vdso",
                    DsoKind::Kernel | DsoKind::KernelModule => "kernel",
                    DsoKind::User => "user",
                };
                let bid = d
                    .build_id
                    .as_ref()
                    .map(|b| b.iter().map(|x| format!("{x:02x}")).collect::<String>());
                (
                    kind,
                    Some(d.path.clone()),
                    bid,
                    r.and_then(|r| r.binary.as_ref().map(|b| b.1))
                        .unwrap_or(offset),
                    Some(offset),
                )
            }
            Location::Kernel { addr } => ("kernel", None, None, addr, None),
            Location::Unmapped { addr } => ("unknown", None, None, addr, None),
        };
        let dso = r.map_or_else(
            || dso_path.clone().unwrap_or_else(|| "[unknown]".into()),
            |r| r.dso.clone(),
        );
        let common = |t: &mut perfq_writer::Table,
                      depth: usize,
                      f: Option<&perfq_symbolize::InlineFrame>| {
            t.push(&[
                Cell::U(i as u64),
                Cell::U(depth as u64),
                f.and_then(|f| f.function.as_deref())
                    .or(r.and_then(|r| r.symbol.as_deref()))
                    .map_or(Cell::Null, Cell::S),
                f.and_then(|f| f.raw_function.as_deref())
                    .or(r.and_then(|r| r.raw_symbol.as_deref()))
                    .map_or(Cell::Null, Cell::S),
                f.and_then(|f| f.file.as_deref())
                    .map_or(Cell::Null, Cell::S),
                f.and_then(|f| f.line)
                    .map_or(Cell::Null, |l| Cell::U(u64::from(l))),
                r.and_then(|r| r.symbol.as_deref())
                    .map_or(Cell::Null, Cell::S),
                r.and_then(|r| r.raw_symbol.as_deref())
                    .map_or(Cell::Null, Cell::S),
                Cell::S(&dso),
                dso_path.as_deref().map_or(Cell::Null, Cell::S),
                build_id.as_deref().map_or(Cell::Null, Cell::S),
                Cell::U(address),
                offset.map_or(Cell::Null, Cell::U),
                Cell::S(kind),
                r.and_then(|r| r.reason.as_ref())
                    .map_or(Cell::Null, |why| Cell::S(why.name())),
            ])
        };
        match r.map(|r| &r.inlined[..]) {
            // Outermost function first: depth 0 is the symbol's function.
            Some(levels) if !levels.is_empty() => {
                for (depth, f) in levels.iter().rev().enumerate() {
                    common(&mut t, depth, Some(f))?;
                }
            }
            _ => common(&mut t, 0, None)?,
        }
    }
    t.finish()?;
    Ok(())
}

fn write_events(w: &CaptureWriter, capture: &Capture) -> anyhow::Result<()> {
    let mut t = w.table(
        "events",
        &[
            ("event_id", U32, false),
            ("name", Str, false),
            ("type", U32, false),
            ("config", U64, false),
            ("config1", U64, false),
            ("config2", U64, false),
            ("sample_type", Str, false),
            ("read_format", Str, false),
            ("sample_period", U64, true),
            ("sample_freq", U64, true),
            ("group_leader", U32, true),
            ("group_name", Str, true),
        ],
    )?;
    for (i, e) in capture.events().list().iter().enumerate() {
        let a = &e.attr;
        t.push(&[
            Cell::U(i as u64),
            Cell::S(&e.name),
            Cell::U(u64::from(a.type_)),
            Cell::U(a.config),
            Cell::U(a.config1),
            Cell::U(a.config2),
            Cell::S(&sample_type_names(a.sample_type)),
            Cell::S(&read_format_names(a.read_format)),
            if a.is_freq() {
                Cell::Null
            } else {
                Cell::U(a.sample_period_or_freq)
            },
            if a.is_freq() {
                Cell::U(a.sample_period_or_freq)
            } else {
                Cell::Null
            },
            e.group_leader.map_or(Cell::Null, |l| Cell::U(l.0 as u64)),
            e.group_name.as_deref().map_or(Cell::Null, Cell::S),
        ])?;
    }
    t.finish()?;
    Ok(())
}

/// The sideband tables: threads (comm, fork, exit), mappings, and data
/// quality (lost records and samples, throttling), streamed as read.
struct Sideband {
    threads: perfq_writer::Table,
    mappings: perfq_writer::Table,
    quality: perfq_writer::Table,
}

impl Sideband {
    fn create(w: &CaptureWriter) -> anyhow::Result<Sideband> {
        Ok(Sideband {
            threads: w.table(
                "threads",
                &[
                    ("time", U64, true),
                    ("kind", Str, false),
                    ("pid", I32, false),
                    ("tid", I32, false),
                    ("ppid", I32, true),
                    ("ptid", I32, true),
                    ("comm", Str, true),
                ],
            )?,
            mappings: w.table(
                "mappings",
                &[
                    ("time", U64, true),
                    ("pid", I32, false),
                    ("tid", I32, false),
                    ("start", U64, false),
                    ("end", U64, false),
                    ("pgoff", U64, false),
                    ("path", Str, false),
                    ("build_id", Str, true),
                    ("prot", U32, true),
                    ("flags", U32, true),
                    ("executable", U16, false),
                ],
            )?,
            quality: w.table(
                "quality",
                &[
                    ("time", U64, true),
                    ("kind", Str, false),
                    ("event_id", U32, true),
                    ("id", U64, true),
                    ("count", U64, false),
                ],
            )?,
        })
    }

    fn push(
        &mut self,
        time: Option<u64>,
        event: Option<u64>,
        data: &perfq_reader::RecordData<'_>,
        sid: Option<perfq_reader::SampleId>,
    ) -> anyhow::Result<()> {
        use perfq_reader::{MmapFileId, RecordData};
        let t = time.map_or(Cell::Null, Cell::U);
        let i = |v: u32| Cell::I(i64::from(v as i32));
        match data {
            RecordData::Comm(c) => self.threads.push(&[
                t,
                Cell::S(if c.is_exec { "exec" } else { "comm" }),
                i(c.pid),
                i(c.tid),
                Cell::Null,
                Cell::Null,
                Cell::S(&c.comm),
            ])?,
            RecordData::Fork(f) | RecordData::Exit(f) => self.threads.push(&[
                Cell::U(f.time),
                Cell::S(if matches!(data, RecordData::Fork(_)) {
                    "fork"
                } else {
                    "exit"
                }),
                i(f.pid),
                i(f.tid),
                i(f.ppid),
                i(f.ptid),
                Cell::Null,
            ])?,
            RecordData::Mmap(m) => {
                let build_id = match m.file_id {
                    Some(MmapFileId::BuildId(b)) => {
                        Some(b.iter().map(|x| format!("{x:02x}")).collect::<String>())
                    }
                    _ => None,
                };
                self.mappings.push(&[
                    t,
                    i(m.pid),
                    i(m.tid),
                    Cell::U(m.addr),
                    Cell::U(m.addr.saturating_add(m.len)),
                    Cell::U(m.pgoff),
                    Cell::S(&m.filename),
                    build_id.as_deref().map_or(Cell::Null, Cell::S),
                    m.prot.map_or(Cell::Null, |p| Cell::U(u64::from(p))),
                    m.flags.map_or(Cell::Null, |f| Cell::U(u64::from(f))),
                    Cell::U(u64::from(!m.is_data)),
                ])?
            }
            RecordData::Lost { id, lost } => self.quality.push(&[
                t,
                Cell::S("lost_records"),
                event.map_or(Cell::Null, Cell::U),
                Cell::U(*id),
                Cell::U(*lost),
            ])?,
            RecordData::LostSamples { lost } => self.quality.push(&[
                t,
                Cell::S("lost_samples"),
                event.map_or(Cell::Null, Cell::U),
                sid.and_then(|s| s.id).map_or(Cell::Null, Cell::U),
                Cell::U(*lost),
            ])?,
            RecordData::Throttle { unthrottle, id, .. } => self.quality.push(&[
                t,
                Cell::S(if *unthrottle {
                    "unthrottle"
                } else {
                    "throttle"
                }),
                event.map_or(Cell::Null, Cell::U),
                Cell::U(*id),
                Cell::U(1),
            ])?,
            _ => {}
        }
        Ok(())
    }

    fn finish(self) -> anyhow::Result<()> {
        self.threads.finish()?;
        self.mappings.finish()?;
        self.quality.finish()?;
        Ok(())
    }
}
