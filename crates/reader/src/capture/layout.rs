//! Where a capture's parts are: in file mode, the sections the header
//! points to (data, feature table, attrs with their ids); in pipe mode,
//! the records that carry attrs, features and event names.

use std::ops::Range;

use super::Capture;
use crate::attr::Attr;
use crate::endian::Endian;
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::events::Events;
use crate::features;
use crate::framing::{FileRecords, RawRecord};
use crate::header::FileHeader;
use crate::record_type::RecordType;
use crate::records::{parse_record, RecordData};
use crate::user_records::EventUpdate;

impl Capture {
    /// File mode: data range, feature table, attr section. Returns the attrs
    /// with their ids.
    pub(super) fn read_file_layout(&mut self) -> Result<Vec<(Attr, Vec<u64>)>> {
        let h = self.header.clone();
        self.data = self.file_data_range(&h);
        // The feature sections' table follows the data section, so a
        // header that gives no data size gives no table either.
        if h.data.size != 0 {
            self.read_feature_table(&h);
        }
        self.read_attr_section(&h)
    }

    /// The data section as far as the file holds it (to the end of the
    /// file when the header gives no size), with a warning where the
    /// header and the file disagree.
    fn file_data_range(&mut self, h: &FileHeader) -> Range<usize> {
        let len = self.bytes.len() as u64;
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
        (start.min(len) as usize)..(end as usize)
    }

    /// Feature sections: one {offset, size} per set bit, after the data.
    /// A section outside the file is skipped, a cut table ends the list;
    /// both with a warning.
    fn read_feature_table(&mut self, h: &FileHeader) {
        let len = self.bytes.len() as u64;
        let e = h.endian;
        let mut at = h.data.offset.saturating_add(h.data.size);
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

    /// Attr section: perf reads each attr by its own size, then its ids
    /// section, sequentially (perf_session__read_header / read_attr).
    fn read_attr_section(&mut self, h: &FileHeader) -> Result<Vec<(Attr, Vec<u64>)>> {
        let mut attrs = Vec::new();
        if h.attrs.size == 0 {
            return Ok(attrs);
        }
        if h.attr_size == 0 {
            return Err(Error::at(16, ErrorKind::BadHeader("attr_size is 0".into())));
        }
        let nr = h.attrs.size / h.attr_size;
        let mut pos = h.attrs.offset;
        for index in 0..nr as usize {
            let (attr, ids, sz) = self.read_attr_entry(h, index, pos)?;
            attrs.push((attr, ids));
            pos = pos.saturating_add(sz as u64 + 16);
        }
        Ok(attrs)
    }

    /// Attr `index` of the attr section, at `pos`, with the ids its ids
    /// section points to (none, with a warning, when they lie outside the
    /// file) and its own size.
    fn read_attr_entry(
        &mut self,
        h: &FileHeader,
        index: usize,
        pos: u64,
    ) -> Result<(Attr, Vec<u64>, usize)> {
        let e = h.endian;
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
        let attr = Attr::parse(b, e).ok_or_else(|| bad(format!("attr size {sz} is below 64")))?;
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
        Ok((attr, ids, sz))
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
    pub(super) fn read_pipe_layout(&mut self) -> Result<Vec<(Attr, Vec<u64>)>> {
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
                if r.kind == RecordType::HEADER_TRACING_DATA {
                    feats.push(tracing_data_range(&r, e, base));
                    continue;
                }
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
}

/// Where a pipe's tracing data lies in the file, as the feature of a file
/// would: after the record (perf), or inside it after its size
/// (simpleperf).
fn tracing_data_range(r: &RawRecord<'_>, e: Endian, base: usize) -> (u32, Range<usize>) {
    let data = match r.payload.is_empty() {
        true => {
            let size = e.u32_at(r.body, 0).unwrap_or(0) as usize;
            r.body.get(4..4 + size).unwrap_or_default()
        }
        false => r.payload,
    };
    let start = data.as_ptr() as usize - base;
    (crate::features::id::TRACING_DATA, start..start + data.len())
}
