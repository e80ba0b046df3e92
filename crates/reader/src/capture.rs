//! Opening a capture: the header, the events and the feature sections, in
//! file mode or pipe mode, tolerant of cut and damaged files.

use std::io::Read;
use std::ops::{Deref, Range};
use std::path::{Path, PathBuf};

use crate::attr::{Attr, ReadFormat, SampleType};
use crate::endian::Endian;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::events::{default_event_name, Event, EventIndex, Events};
use crate::features::{self, id as feat};
use crate::framing::{FileRecords, RawRecord};
use crate::header::{FileHeader, Mode};
use crate::order::TimeOrdered;
use crate::record_type::RecordType;
use crate::records::{parse_record, RecordData, SampleId};
use crate::sample::{parse_sample, Sample};
use crate::user_records::EventUpdate;

/// The bytes of a capture: mapped from a file, or read into memory (stdin,
/// pipes, tests).
enum Backing {
    Mapped(memmap2::Mmap),
    Owned(Vec<u8>),
}

impl Deref for Backing {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Backing::Mapped(m) => m,
            Backing::Owned(v) => v,
        }
    }
}

/// Facts about the recording machine and session, from the feature sections.
#[derive(Clone, Debug, Default)]
pub struct Meta {
    /// Host name.
    pub hostname: Option<String>,
    /// Kernel release (`uname -r`).
    pub os_release: Option<String>,
    /// perf version that recorded.
    pub perf_version: Option<String>,
    /// Architecture (`uname -m`).
    pub arch: Option<String>,
    /// CPU description (`model name`).
    pub cpu_desc: Option<String>,
    /// CPU id string (`GenuineIntel-6-55-4`, `0x00000000410fd0c0`, ...).
    pub cpuid: Option<String>,
    /// CPUs (available, online).
    pub nr_cpus: Option<(u32, u32)>,
    /// Memory in kB.
    pub total_mem_kb: Option<u64>,
    /// The `perf record` command line.
    pub cmdline: Option<Vec<String>>,
    /// First and last sample time, as perf recorded them.
    pub sample_time: Option<(u64, u64)>,
    /// How data records were compressed.
    pub compression: Option<features::CompressionInfo>,
    /// Build ids perf recorded for the DSOs that had samples.
    pub build_ids: Vec<features::BuildIdEntry>,
    /// Event groups.
    pub groups: Vec<features::GroupDesc>,
    /// simpleperf's key/value meta info.
    pub simpleperf_meta: Vec<(String, String)>,
    /// PMU names and the `type` their events carry (`PMU_MAPPINGS`).
    pub pmu_mappings: Vec<features::PmuMapping>,
    /// PMU capabilities: `CPU_PMU_CAPS` first, as PMU `cpu`, then each
    /// PMU of `PMU_CAPS`.
    pub pmu_caps: Vec<features::PmuCaps>,
    /// (core PMU, CPU list) of a hybrid machine (`HYBRID_TOPOLOGY`).
    pub hybrid_topology: Vec<(String, String)>,
    /// Feature numbers present.
    pub features: Vec<u32>,
}

/// An open perf.data capture.
///
/// ```no_run
/// let capture = perfq_reader::Capture::open("perf.data")?;
/// let mut records = capture.records();
/// while let Some(record) = records.next_record()? {
///     println!("{} at {}", record.kind, record.offset);
/// }
/// println!("{} samples", records.stats().samples());
/// # Ok::<(), perfq_reader::Error>(())
/// ```
pub struct Capture {
    bytes: Backing,
    path: PathBuf,
    header: FileHeader,
    meta: Meta,
    events: Events,
    data: Range<usize>,
    features: Vec<(u32, Range<usize>)>,
    /// Pipe mode: `EVENT_UPDATE` names by id, applied when events are built.
    pipe_names: Vec<(u64, String)>,
    warnings: Vec<Warning>,
}

impl Capture {
    /// Opens a capture file; `-` reads standard input.
    pub fn open(path: impl AsRef<Path>) -> Result<Capture> {
        let path = path.as_ref();
        let with_path = |e: Error| e.with_path(path);
        let bytes = if path == Path::new("-") {
            let mut v = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut v)
                .map_err(|e| with_path(Error::at(0, e)))?;
            Backing::Owned(v)
        } else {
            let mut file = std::fs::File::open(path).map_err(|e| with_path(Error::at(0, e)))?;
            // SAFETY: the map is read-only and perfq never writes the file.
            // Another process truncating it while we read would be undefined
            // behaviour; perf.data captures are not rewritten once perf has
            // exited, the same trade-off ripgrep makes for searched files.
            match unsafe { memmap2::Mmap::map(&file) } {
                Ok(m) => Backing::Mapped(m),
                // Pipes and other unmappable files are read instead.
                Err(_) => {
                    let mut v = Vec::new();
                    file.read_to_end(&mut v)
                        .map_err(|e| with_path(Error::at(0, e)))?;
                    Backing::Owned(v)
                }
            }
        };
        Self::from_backing(bytes, path.to_path_buf()).map_err(with_path)
    }

    /// Lets the OS take back the mapped pages of the file's first `upto`
    /// bytes: a capture read once from front to back then keeps only a
    /// window of itself resident, whatever its length. The bytes stay
    /// readable (touched again, they are paged in from the file). Does
    /// nothing for captures held in memory.
    pub fn release_before(&self, upto: u64) {
        if let Backing::Mapped(m) = &self.bytes {
            // Whole 64 KiB blocks: a multiple of every page size Linux uses.
            let len = (upto.min(m.len() as u64) & !0xffff) as usize;
            if len > 0 {
                // SAFETY: the map is a read-only shared mapping of a file
                // perfq does not write; MADV_DONTNEED only drops this
                // process's page table entries, and the next access reads
                // the same bytes from the page cache or the file. No
                // reference into the map is invalidated.
                let _ =
                    unsafe { m.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, 0, len) };
            }
        }
    }

    /// Reads a capture held in memory.
    pub fn from_bytes(bytes: Vec<u8>) -> Result<Capture> {
        Self::from_backing(Backing::Owned(bytes), PathBuf::from("<memory>"))
    }

    fn from_backing(bytes: Backing, path: PathBuf) -> Result<Capture> {
        let header = FileHeader::parse(&bytes)?;
        let mut c = Capture {
            bytes,
            path,
            header,
            meta: Meta::default(),
            events: Events::default(),
            data: 0..0,
            features: Vec::new(),
            pipe_names: Vec::new(),
            warnings: Vec::new(),
        };
        let attrs = match c.header.mode {
            Mode::File => c.read_file_layout()?,
            Mode::Pipe => c.read_pipe_layout()?,
        };
        c.read_meta();
        c.build_events(attrs);
        c.infer_groups();
        Ok(c)
    }

    /// The file's path (`-` for stdin).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The header.
    pub fn header(&self) -> &FileHeader {
        &self.header
    }

    /// Byte order.
    pub fn endian(&self) -> Endian {
        self.header.endian
    }

    /// Host, CPU and session facts.
    pub fn meta(&self) -> &Meta {
        &self.meta
    }

    /// The events.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// Problems found while opening that did not stop it.
    pub fn warnings(&self) -> &[Warning] {
        &self.warnings
    }

    /// The whole capture's bytes (mapped, not copied).
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Size of the file in bytes.
    pub fn file_len(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// The raw bytes of feature `f`, if present.
    pub fn feature_data(&self, f: u32) -> Option<&[u8]> {
        let r = self.features.iter().find(|(id, _)| *id == f)?.1.clone();
        self.bytes.get(r)
    }

    /// A warning about feature `f`, placed at its section.
    fn feature_warning(&self, f: u32, message: &str) -> Warning {
        match self.features.iter().find(|(id, _)| *id == f) {
            Some((_, r)) => Warning::at(r.start as u64, message),
            None => Warning::general(message),
        }
    }

    /// Where the records are: the data section as read (to the end of the
    /// file when the header gives no size or the file is cut; after the
    /// pipe header in pipe mode).
    pub fn data_range(&self) -> Range<u64> {
        self.data.start as u64..self.data.end as u64
    }

    /// The records in file order (fastest; what perf's counts are of).
    pub fn records(&self) -> FileRecords<'_> {
        FileRecords::new(
            &self.bytes,
            self.data.start,
            self.data.end,
            self.endian(),
            &self.events,
        )
    }

    /// The records in time order, as perf delivers them to its tools.
    pub fn records_by_time(&self) -> TimeOrdered<'_> {
        TimeOrdered::new(self.records())
    }

    /// Decodes a record's fields.
    pub fn parse<'a>(&self, r: &RawRecord<'a>) -> Result<(RecordData<'a>, Option<SampleId>)> {
        let attr = r
            .event
            .index()
            .and_then(|i| self.events.get(i))
            .map(|e| &e.attr);
        parse_record(r.kind, r.misc, r.body, r.payload, attr, self.endian()).map_err(|k| {
            let mut e = Error::at(r.offset.0, k);
            e.path = Some(self.path.clone());
            e
        })
    }

    /// Decodes a `SAMPLE` record of a known event. Cheaper than
    /// [`Capture::parse`] for loops over samples: no enum to move through.
    pub fn sample<'a>(&self, r: &RawRecord<'a>) -> Result<Sample<'a>> {
        let err = |kind: ErrorKind| {
            let mut e = Error::at(r.offset.0, kind);
            e.path = Some(self.path.clone());
            e
        };
        let attr = match r.event.index().and_then(|i| self.events.get(i)) {
            Some(e) if r.kind == RecordType::SAMPLE => &e.attr,
            _ => {
                return Err(err(ErrorKind::ShortRecord {
                    what: "SAMPLE",
                    why: "not a sample of a known event".into(),
                }))
            }
        };
        parse_sample(r.body, r.misc, attr, self.endian()).map_err(err)
    }

    /// File mode: data range, feature table, attr section. Returns the attrs
    /// with their ids.
    fn read_file_layout(&mut self) -> Result<Vec<(Attr, Vec<u64>)>> {
        let len = self.bytes.len() as u64;
        let h = self.header.clone();
        let e = h.endian;
        let start = h.data.offset;
        if start > len {
            self.warnings.push(Warning::at(
                start,
                format!("data section starts past the end of the {len}-byte file: no records"),
            ));
        }
        let end = if h.data.size == 0 {
            self.warnings.push(Warning::at(
                40,
                "header says the data section is empty (perf did not finish writing the header); reading records to the end of the file",
            ));
            len
        } else {
            let want = start.saturating_add(h.data.size);
            if want > len {
                self.warnings.push(Warning::at(
                    len,
                    format!("the file is cut: the data section should end at {want:#x} but the file has {len} bytes; {} bytes are missing", want - len),
                ));
            }
            want.min(len)
        };
        self.data = (start.min(len) as usize)..(end as usize);

        // Feature sections: one {offset, size} per set bit, after the data.
        if h.data.size != 0 {
            let mut at = start.saturating_add(h.data.size);
            for f in h.feature_ids().collect::<Vec<_>>() {
                let (Some(off), Some(size)) = (
                    usize::try_from(at)
                        .ok()
                        .and_then(|a| e.u64_at(&self.bytes, a)),
                    at.checked_add(8)
                        .and_then(|a| usize::try_from(a).ok())
                        .and_then(|a| e.u64_at(&self.bytes, a)),
                ) else {
                    self.warnings.push(Warning::at(
                        at,
                        format!(
                            "feature table is cut before feature {}; later features are missing",
                            features::feature_name(f)
                        ),
                    ));
                    break;
                };
                at = at.saturating_add(16);
                match off.checked_add(size) {
                    Some(end) if end <= len => self.features.push((f, off as usize..end as usize)),
                    _ => self.warnings.push(Warning::at(
                        off,
                        format!(
                            "feature {} ({size} bytes at {off:#x}) lies outside the file; skipped",
                            features::feature_name(f)
                        ),
                    )),
                }
            }
        }

        // Attr section: perf reads each attr by its own size, then its ids
        // section, sequentially (perf_session__read_header / read_attr).
        let mut attrs = Vec::new();
        if h.attrs.size > 0 {
            if h.attr_size == 0 {
                return Err(Error::at(16, ErrorKind::BadHeader("attr_size is 0".into())));
            }
            let nr = h.attrs.size / h.attr_size;
            let mut pos = h.attrs.offset;
            for index in 0..nr as usize {
                let bad = |why: String| Error::at(pos, ErrorKind::BadAttr { index, why });
                let p = usize::try_from(pos).map_err(|_| bad("offset too large".into()))?;
                let size_field = e
                    .u32_at(&self.bytes, p.saturating_add(4))
                    .ok_or_else(|| bad("cut by end of file".into()))?;
                let sz = Attr::on_disk_size(size_field);
                if sz as u64 > h.attr_size {
                    return Err(bad(format!(
                        "attr size {sz} exceeds the header's attr_size {}",
                        h.attr_size
                    )));
                }
                let b = self
                    .bytes
                    .get(p..p.saturating_add(sz))
                    .ok_or_else(|| bad("cut by end of file".into()))?;
                let attr =
                    Attr::parse(b, e).ok_or_else(|| bad(format!("attr size {sz} is below 64")))?;
                let ids_at = p.saturating_add(sz);
                let ids_off = e.u64_at(&self.bytes, ids_at);
                let ids_size = e.u64_at(&self.bytes, ids_at.saturating_add(8));
                let ids = match (ids_off, ids_size) {
                    (Some(o), Some(s)) => self.read_u64s(o, s).unwrap_or_else(|| {
                        self.warnings.push(Warning::at(
                            o,
                            format!("ids of event #{index} lie outside the file; ignored"),
                        ));
                        Vec::new()
                    }),
                    _ => return Err(bad("ids section cut by end of file".into())),
                };
                attrs.push((attr, ids));
                pos = pos.saturating_add(sz as u64 + 16);
            }
        }
        Ok(attrs)
    }

    fn read_u64s(&self, off: u64, size: u64) -> Option<Vec<u64>> {
        let end = off.checked_add(size)?;
        if end > self.bytes.len() as u64 {
            return None;
        }
        let b = &self.bytes[off as usize..end as usize];
        let e = self.endian();
        Some(b.chunks_exact(8).filter_map(|c| e.u64_at(c, 0)).collect())
    }

    /// Pipe mode: records run from byte 16 to the end; attrs, features and
    /// event names are records too. They are gathered by a first pass over
    /// the framing (no decompression), so events are known before any
    /// sample is decoded, even for attrs that arrive late.
    fn read_pipe_layout(&mut self) -> Result<Vec<(Attr, Vec<u64>)>> {
        self.data = 16.min(self.bytes.len())..self.bytes.len();
        let e = self.endian();
        let empty = Events::default();
        let mut attrs = Vec::new();
        let mut names: Vec<(u64, String)> = Vec::new();
        let base = self.bytes.as_ptr() as usize;
        let mut feats = Vec::new();
        {
            let mut it = FileRecords::new(&self.bytes, self.data.start, self.data.end, e, &empty)
                .without_decompression();
            // Framing problems are reported by the record pass itself.
            while let Ok(Some(r)) = it.next_record() {
                let wanted = [
                    RecordType::HEADER_ATTR,
                    RecordType::HEADER_FEATURE,
                    RecordType::EVENT_UPDATE,
                ];
                if !wanted.contains(&r.kind) {
                    continue;
                }
                match parse_record(r.kind, r.misc, r.body, r.payload, None, e) {
                    Ok((RecordData::HeaderAttr { attr, ids }, _)) => attrs.push((attr, ids.iter().collect())),
                    Ok((RecordData::HeaderFeature { feature, data }, _)) => {
                        // The data is inside the mapped file: keep its range.
                        let start = data.as_ptr() as usize - base;
                        feats.push((feature as u32, start..start + data.len()));
                    }
                    Ok((RecordData::EventUpdate { id, update: EventUpdate::Name(name) }, _)) => names.push((id, name)),
                    Err(why) if r.kind == RecordType::HEADER_ATTR => self.warnings.push(Warning::at(
                        r.offset.0,
                        format!("HEADER_ATTR #{} cannot be decoded ({why}); its samples will have no event", attrs.len()),
                    )),
                    _ => {}
                }
            }
        }
        self.features = feats;
        if attrs.is_empty() {
            self.warnings.push(Warning::at(
                16,
                "pipe-mode capture has no HEADER_ATTR record: samples cannot be decoded",
            ));
        }
        self.pipe_names = names;
        Ok(attrs)
    }

    fn read_meta(&mut self) {
        let e = self.endian();
        let mut m = Meta {
            features: self.features.iter().map(|(f, _)| *f).collect(),
            ..Meta::default()
        };
        let string = |c: &Capture, f| c.feature_data(f).and_then(|b| features::parse_string(b, e));
        m.hostname = string(self, feat::HOSTNAME);
        m.os_release = string(self, feat::OSRELEASE);
        m.perf_version = string(self, feat::VERSION);
        m.arch = string(self, feat::ARCH);
        m.cpu_desc = string(self, feat::CPUDESC);
        m.cpuid = string(self, feat::CPUID);
        m.nr_cpus = self
            .feature_data(feat::NRCPUS)
            .and_then(|b| features::parse_nrcpus(b, e));
        m.total_mem_kb = self
            .feature_data(feat::TOTAL_MEM)
            .and_then(|b| e.u64_at(b, 0));
        m.cmdline = self
            .feature_data(feat::CMDLINE)
            .and_then(|b| features::parse_cmdline(b, e));
        m.sample_time = self
            .feature_data(feat::SAMPLE_TIME)
            .and_then(|b| features::parse_sample_time(b, e));
        m.compression = self
            .feature_data(feat::COMPRESSED)
            .and_then(|b| features::parse_compressed(b, e));
        if let Some(b) = self.feature_data(feat::BUILD_ID) {
            match features::parse_build_ids(b, e) {
                Some(v) => m.build_ids = v,
                None => self.warnings.push(self.feature_warning(
                    feat::BUILD_ID,
                    "BUILD_ID feature is malformed; build ids ignored",
                )),
            }
        }
        if let Some(b) = self.feature_data(feat::GROUP_DESC) {
            match features::parse_group_desc(b, e) {
                Some(v) => m.groups = v,
                None => self.warnings.push(self.feature_warning(
                    feat::GROUP_DESC,
                    "GROUP_DESC feature is malformed; groups ignored",
                )),
            }
        }
        if let Some(b) = self.feature_data(feat::SIMPLEPERF_META_INFO) {
            m.simpleperf_meta = features::parse_simpleperf_meta_info(b);
        }
        self.read_pmu_meta(&mut m);
        self.meta = m;
    }

    /// The PMU features: mappings, capabilities, hybrid topology.
    fn read_pmu_meta(&mut self, m: &mut Meta) {
        let e = self.endian();
        if let Some(v) = self.decode_feature(feat::PMU_MAPPINGS, "PMU mappings", |b| {
            features::parse_pmu_mappings(b, e)
        }) {
            m.pmu_mappings = v;
        }
        if let Some(c) = self.decode_feature(feat::CPU_PMU_CAPS, "cpu PMU capabilities", |b| {
            features::parse_cpu_pmu_caps(b, e)
        }) {
            m.pmu_caps.push(c);
        }
        if let Some(v) = self.decode_feature(feat::PMU_CAPS, "PMU capabilities", |b| {
            features::parse_pmu_caps(b, e)
        }) {
            m.pmu_caps.extend(v);
        }
        if let Some(v) = self.decode_feature(feat::HYBRID_TOPOLOGY, "hybrid topology", |b| {
            features::parse_hybrid_topology(b, e)
        }) {
            m.hybrid_topology = v;
        }
    }

    /// Decodes feature `f` with `parse` if present; a section `parse`
    /// rejects is a warning (naming `what` is ignored), not an error.
    fn decode_feature<T>(
        &mut self,
        f: u32,
        what: &str,
        parse: impl FnOnce(&[u8]) -> Option<T>,
    ) -> Option<T> {
        let b = self.feature_data(f)?;
        let v = parse(b);
        if v.is_none() {
            let message = format!(
                "{} feature is malformed; {what} ignored",
                features::feature_name(f).to_uppercase()
            );
            self.warnings.push(self.feature_warning(f, &message));
        }
        v
    }

    fn build_events(&mut self, attrs: Vec<(Attr, Vec<u64>)>) {
        let e = self.endian();
        let desc = self
            .feature_data(feat::EVENT_DESC)
            .and_then(|b| features::parse_event_desc(b, e));
        if self.feature_data(feat::EVENT_DESC).is_some() && desc.is_none() {
            self.warnings.push(self.feature_warning(
                feat::EVENT_DESC,
                "EVENT_DESC feature is malformed; event names come from type and config",
            ));
        }
        let mut list: Vec<Event> = attrs
            .into_iter()
            .map(|(attr, ids)| Event {
                name: String::new(),
                attr,
                ids,
                group_leader: None,
                group_name: None,
            })
            .collect();
        // A file without an attr section (some old or simpleperf files) has
        // its events only in EVENT_DESC.
        if list.is_empty() {
            if let Some(d) = &desc {
                list = d
                    .iter()
                    .map(|d| Event {
                        name: String::new(),
                        attr: d.attr.clone(),
                        ids: d.ids.clone(),
                        group_leader: None,
                        group_name: None,
                    })
                    .collect();
            }
        }
        if let Some(d) = &desc {
            if d.len() == list.len() {
                for (ev, d) in list.iter_mut().zip(d) {
                    ev.name = d.name.clone();
                    if !d.ids.is_empty() {
                        ev.ids = d.ids.clone();
                    }
                }
            } else {
                // Match by first id, as perf does.
                let owner = id_owners(&list);
                for d in d {
                    if let Some(&i) = d.ids.first().and_then(|id| owner.get(id)) {
                        list[i].name = d.name.clone();
                    }
                }
            }
        }
        let owner = id_owners(&list);
        for (id, name) in std::mem::take(&mut self.pipe_names) {
            if let Some(&i) = owner.get(&id) {
                list[i].name = name;
            }
        }
        // simpleperf: "event_type_info" lists "name,type,config" per attr.
        if let Some((_, info)) = self
            .meta
            .simpleperf_meta
            .iter()
            .find(|(k, _)| k == "event_type_info")
        {
            for (ev, line) in list.iter_mut().zip(info.lines()) {
                if ev.name.is_empty() {
                    if let Some(name) = line.split(',').next() {
                        ev.name = name.to_string();
                    }
                }
            }
        }
        for ev in &mut list {
            if ev.name.is_empty() {
                ev.name = default_event_name(&ev.attr);
            }
        }
        for g in &self.meta.groups {
            let (l, n) = (g.leader as usize, g.nr_members as usize);
            if n > 1 && l.checked_add(n).is_some_and(|end| end <= list.len()) {
                for ev in &mut list[l..l + n] {
                    ev.group_leader = Some(EventIndex(l));
                    ev.group_name = Some(g.name.clone());
                }
            }
        }
        let (events, dups) = Events::new(list);
        if let Some(first) = dups.first() {
            self.warnings.push(Warning::general(
                format!(
                    "{} event ids belong to more than one event (first: {first}); the first event keeps each",
                    dups.len()
                ),
            ));
        }
        self.events = events;
    }
}

/// How many records [`Capture::infer_groups`] reads at most looking for
/// each group's first sample.
const GROUP_SCAN_RECORDS: usize = 100_000;

impl Capture {
    /// A capture cut before its feature sections has no `GROUP_DESC`, but
    /// its samples' group reads still name every member's id, the
    /// leader's first (the kernel's order): the groups are read off the
    /// first sample of each event whose samples carry one.
    fn infer_groups(&mut self) {
        if !self.meta.groups.is_empty() {
            return;
        }
        let group_read = |e: &Event| {
            e.group_leader.is_none()
                && e.attr.sample_type.contains(SampleType::READ)
                && e.attr
                    .read_format
                    .contains(ReadFormat::GROUP | ReadFormat::ID)
        };
        let mut pending: std::collections::BTreeSet<usize> = self
            .events
            .list()
            .iter()
            .enumerate()
            .filter(|(_, e)| group_read(e))
            .map(|(i, _)| i)
            .collect();
        if pending.is_empty() {
            return;
        }
        let mut found: Vec<(EventIndex, EventIndex)> = Vec::new();
        let mut records = self.records();
        let (mut error, mut seen) = (None, 0);
        while let Some(r) = records.next_ok(&mut error) {
            seen += 1;
            if pending.is_empty() || seen > GROUP_SCAN_RECORDS {
                break;
            }
            let Some(i) = r.event.index() else { continue };
            if r.kind != RecordType::SAMPLE || !pending.contains(&i.0) {
                continue;
            }
            let Some(read) = self.sample(&r).ok().and_then(|s| s.read) else {
                continue;
            };
            let members: Vec<EventIndex> = read
                .values()
                .filter_map(|v| v.id.and_then(|id| self.events.by_id(id)))
                .collect();
            pending.remove(&i.0);
            // A read of one value is no group.
            if let [leader, _, ..] = members[..] {
                for m in members {
                    pending.remove(&m.0);
                    found.push((m, leader));
                }
            }
        }
        if found.is_empty() {
            return;
        }
        for &(m, leader) in &found {
            self.events.set_group_leader(m, leader);
        }
        self.warnings.push(Warning::general(
            "the capture does not describe its event groups (no GROUP_DESC feature; a cut capture loses it): they are read off the samples' group reads",
        ));
    }
}

/// Which event (by position) first claims each id.
fn id_owners(list: &[Event]) -> std::collections::HashMap<u64, usize> {
    let mut owner = std::collections::HashMap::new();
    for (i, e) in list.iter().enumerate() {
        for &id in &e.ids {
            owner.entry(id).or_insert(i);
        }
    }
    owner
}

/// Hands back a capture's mapped pages behind a reading position that
/// only moves forward (records read once, front to back), a block of
/// [`ReleaseBehind::EVERY`] bytes at a time: [`Capture::release_before`]
/// paced for a read loop.
#[derive(Debug, Default)]
pub struct ReleaseBehind {
    released: u64,
}

impl ReleaseBehind {
    /// Bytes read between two releases: at 64 MB the pages kept were up
    /// to a fifth of convert's peak RSS on a system-wide capture; a call
    /// costs microseconds.
    pub const EVERY: u64 = 8 << 20;

    /// The read has reached `offset` of `capture`.
    #[inline]
    pub fn reached(&mut self, capture: &Capture, offset: u64) {
        if offset >= self.released + Self::EVERY {
            capture.release_before(offset);
            self.released = offset;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr::SampleType;

    /// A file header with the given sections and feature bits.
    fn header(attrs: (u64, u64), attr_size: u64, data: (u64, u64), features: u64) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(b"PERFILE2");
        for v in [
            104, attr_size, attrs.0, attrs.1, data.0, data.1, 0, 0, features, 0, 0, 0,
        ] {
            b.extend_from_slice(&u64::to_le_bytes(v));
        }
        b
    }

    #[test]
    fn huge_section_offsets_are_warnings_not_overflows() {
        // Found by fuzzing: data offset + size near u64::MAX with features.
        let b = header((0, 0), 0, (u64::MAX - 4, 8), 0b1111);
        let c = Capture::from_bytes(b).expect("opens");
        assert!(!c.warnings().is_empty());
        let mut r = c.records();
        assert!(r.next_record().expect("no error").is_none());
    }

    #[test]
    fn pmu_features_are_read_and_a_malformed_one_is_a_warning() {
        // No attrs; 8 bytes of data; then the feature table for bits 16
        // (PMU_MAPPINGS) and 30 (HYBRID_TOPOLOGY).
        let mut b = header((0, 0), 0, (104, 8), (1 << 16) | (1 << 30));
        b.extend_from_slice(&[0; 8]); // data
        let table_at = b.len() as u64;
        #[rustfmt::skip]
        let mappings: Vec<u8> = [
            &1u32.to_le_bytes()[..],          // nr
            &4u32.to_le_bytes(),              // type
            &4u32.to_le_bytes(), b"cpu\0",    // name
        ]
        .concat();
        #[rustfmt::skip]
        let hybrid: Vec<u8> = [
            &1u32.to_le_bytes()[..],          // nr
            &64u32.to_le_bytes(), b"cpu_core", // name: 64 bytes claimed, 8 there
        ]
        .concat();
        let mut at = table_at + 32;
        for section in [&mappings, &hybrid] {
            b.extend_from_slice(&at.to_le_bytes());
            b.extend_from_slice(&(section.len() as u64).to_le_bytes());
            at += section.len() as u64;
        }
        b.extend_from_slice(&mappings);
        b.extend_from_slice(&hybrid);
        let c = Capture::from_bytes(b).expect("opens");
        let m = c.meta();
        assert_eq!(
            m.pmu_mappings,
            [crate::features::PmuMapping {
                type_: 4,
                name: "cpu".into()
            }]
        );
        assert!(m.hybrid_topology.is_empty());
        let w: Vec<String> = c.warnings().iter().map(|w| w.to_string()).collect();
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].contains("HYBRID_TOPOLOGY"), "{w:?}");
    }

    #[test]
    fn attr_section_ids_map_events_without_event_desc() {
        // Two attrs (64 bytes each, VER0) with ids sections, no features.
        let mut b = header((104, 160), 80, (0, 0), 0);
        let ids_at = 104 + 160;
        for (i, ty) in [(0u64, 1u32), (1, 1)] {
            let mut a = vec![0u8; 64];
            a[0..4].copy_from_slice(&ty.to_le_bytes());
            a[4..8].copy_from_slice(&64u32.to_le_bytes());
            a[8..16].copy_from_slice(&(i * 2).to_le_bytes()); // cpu-clock, page-faults
            a[24..32].copy_from_slice(&(SampleType::IP | SampleType::ID).bits().to_le_bytes());
            b.extend_from_slice(&a);
            b.extend_from_slice(&(ids_at + 8 * i).to_le_bytes());
            b.extend_from_slice(&8u64.to_le_bytes());
        }
        b.extend_from_slice(&100u64.to_le_bytes());
        b.extend_from_slice(&200u64.to_le_bytes());
        let data_at = b.len() as u64;
        // One sample of each event id, then one with an id nobody has.
        for id in [200u64, 100, 300] {
            b.extend_from_slice(&9u32.to_le_bytes());
            b.extend_from_slice(&0u16.to_le_bytes());
            b.extend_from_slice(&24u16.to_le_bytes());
            b.extend_from_slice(&0x1234u64.to_le_bytes());
            b.extend_from_slice(&id.to_le_bytes());
        }
        b[40..48].copy_from_slice(&data_at.to_le_bytes());
        b[48..56].copy_from_slice(&72u64.to_le_bytes());
        let c = Capture::from_bytes(b).expect("opens");
        let names: Vec<_> = c.events().list().iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["cpu-clock", "page-faults"]);
        let mut r = c.records();
        while r.next_record().expect("valid").is_some() {}
        assert_eq!(r.stats().samples_per_event, [1, 1]);
        assert_eq!(r.stats().samples_unknown_id, 1);
    }
}
