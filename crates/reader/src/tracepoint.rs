//! Tracepoints' raw data: where each field lies, read from the format
//! texts in the capture's tracing data (the `HEADER_TRACING_DATA` feature
//! in a file, the record of that name in a pipe). A kernel lays out
//! `sched:sched_switch` as it was built, so a field's offset and size come
//! from the capture, never from a table of known layouts.
//!
//! The tracing data, as perf writes it (`tools/perf/util/trace-event-info.c`):
//! a magic `\x17\x08\x44tracing`, a version text, a big-endian flag, the
//! size of a long and of a page, the ring buffer's `header_page` and
//! `header_event` texts, the ftrace formats, then per system its event
//! formats, then kallsyms, printk formats and (from version 0.6) saved
//! command names, which are not read here.

use crate::endian::Endian;

/// The magic the tracing data starts with.
const MAGIC: &[u8] = b"\x17\x08\x44tracing";

/// One field of a tracepoint's raw data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TraceField {
    /// Its name (`prev_state`).
    pub name: String,
    /// Its C declaration without the name's array suffix (`long`, `char`).
    pub decl: String,
    /// Where it starts in the raw data.
    pub offset: usize,
    /// Its size in bytes.
    pub size: usize,
    /// Whether it is a signed number.
    pub signed: bool,
}

impl TraceField {
    /// Its value as a number: a field of 1, 2, 4 or 8 bytes, sign-extended
    /// if it is signed; `None` if `raw` is too short or it is another size.
    pub fn int(&self, raw: &[u8], endian: Endian) -> Option<i64> {
        let b = raw.get(self.offset..self.offset.checked_add(self.size)?)?;
        let v = match (self.size, self.signed) {
            (1, true) => i64::from(b[0] as i8),
            (1, false) => i64::from(b[0]),
            (2, true) => i64::from(endian.u16_at(b, 0)? as i16),
            (2, false) => i64::from(endian.u16_at(b, 0)?),
            (4, true) => i64::from(endian.u32_at(b, 0)? as i32),
            (4, false) => i64::from(endian.u32_at(b, 0)?),
            (8, _) => endian.u64_at(b, 0)? as i64,
            _ => return None,
        };
        Some(v)
    }

    /// Its value as text: a `char` array up to its first NUL.
    pub fn text<'r>(&self, raw: &'r [u8]) -> Option<&'r str> {
        let b = raw.get(self.offset..self.offset.checked_add(self.size)?)?;
        let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
        std::str::from_utf8(&b[..end]).ok()
    }
}

/// A tracepoint's format: its name, id, fields and print format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracepointFormat {
    /// The subsystem (`sched`).
    pub system: String,
    /// The event's name within it (`sched_switch`).
    pub name: String,
    /// Its id: the `config` of the events that record it.
    pub id: u64,
    /// Its fields, common ones first.
    pub fields: Vec<TraceField>,
    /// The `print fmt` line, as the kernel gives it.
    pub print_fmt: String,
}

impl TracepointFormat {
    /// The field named `name`.
    pub fn field(&self, name: &str) -> Option<&TraceField> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// The flags `__print_flags` names in the print format, in its order:
    /// `(value, name)` for each `{ 0x00000001, "S" }`. For
    /// `sched_switch` these are the task states `prev_state` reports.
    pub fn print_flags(&self) -> Vec<(u64, String)> {
        let mut flags = Vec::new();
        let mut rest = self.print_fmt.as_str();
        while let Some(open) = rest.find('{') {
            rest = &rest[open + 1..];
            let Some(close) = rest.find('}') else { break };
            let inside = &rest[..close];
            rest = &rest[close + 1..];
            let Some((value, name)) = inside.split_once(',') else {
                continue;
            };
            let value = value.trim();
            let parsed = match value.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok(),
                None => value.parse().ok(),
            };
            let name = name.trim().trim_matches('"');
            if let Some(v) = parsed {
                flags.push((v, name.to_string()));
            }
        }
        flags
    }
}

/// Every event format of a capture's tracing data.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TracingData {
    formats: Vec<TracepointFormat>,
}

impl TracingData {
    /// The format of the tracepoint with id `id`.
    pub fn by_id(&self, id: u64) -> Option<&TracepointFormat> {
        self.formats.iter().find(|f| f.id == id)
    }

    /// Every format, in the order of the tracing data.
    pub fn formats(&self) -> &[TracepointFormat] {
        &self.formats
    }

    /// Reads the event formats of tracing data `bytes`; the error says
    /// what is wrong and at which byte of it.
    pub fn parse(bytes: &[u8]) -> Result<TracingData, String> {
        let mut r = Bytes {
            bytes,
            at: 0,
            endian: Endian::Little,
        };
        r.expect(MAGIC)?;
        r.text()?; // version
        let big = r.take(1)?[0] != 0;
        r.endian = if big { Endian::Big } else { Endian::Little };
        r.take(1)?; // the size of a long
        r.u32()?; // the page size
        r.section("header_page")?;
        r.section("header_event")?;
        for _ in 0..r.u32()? {
            let size = r.u64()?;
            r.take(size)?; // an ftrace format: not a tracepoint
        }
        let mut formats = Vec::new();
        for _ in 0..r.u32()? {
            let system = r.text()?.to_string();
            for _ in 0..r.u32()? {
                let size = r.u64()?;
                let text = String::from_utf8_lossy(r.take(size)?);
                if let Some(f) = parse_format(&system, &text) {
                    formats.push(f);
                }
            }
        }
        Ok(TracingData { formats })
    }
}

/// The tracing data's bytes, read in order; its numbers in its own byte
/// order (its big-endian flag), once that is read.
struct Bytes<'b> {
    bytes: &'b [u8],
    at: usize,
    endian: Endian,
}

impl<'b> Bytes<'b> {
    fn take(&mut self, n: u64) -> Result<&'b [u8], String> {
        let end = usize::try_from(n)
            .ok()
            .and_then(|n| self.at.checked_add(n))
            .filter(|&end| end <= self.bytes.len())
            .ok_or_else(|| format!("tracing data cut at byte {}: {n} more wanted", self.at))?;
        let b = &self.bytes[self.at..end];
        self.at = end;
        Ok(b)
    }

    fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(self.endian.u32([b[0], b[1], b[2], b[3]]))
    }

    fn u64(&mut self) -> Result<u64, String> {
        let b = self.take(8)?;
        Ok(self.endian.u64_at(b, 0).unwrap_or_default())
    }

    fn expect(&mut self, what: &[u8]) -> Result<(), String> {
        match self.take(what.len() as u64)? == what {
            true => Ok(()),
            false => Err(format!("no tracing data at byte {}", self.at - what.len())),
        }
    }

    /// A NUL-terminated text.
    fn text(&mut self) -> Result<&'b str, String> {
        let rest = &self.bytes[self.at..];
        let len = rest
            .iter()
            .position(|&c| c == 0)
            .ok_or_else(|| format!("tracing data cut in a text at byte {}", self.at))?;
        let text = std::str::from_utf8(&rest[..len])
            .map_err(|_| format!("tracing data has no text at byte {}", self.at))?;
        self.at += len + 1;
        Ok(text)
    }

    /// A named section (`header_page`), stepped over.
    fn section(&mut self, name: &str) -> Result<(), String> {
        let at = self.at;
        if self.text()? != name {
            return Err(format!("tracing data has no {name} at byte {at}"));
        }
        let size = self.u64()?;
        self.take(size)?;
        Ok(())
    }
}

/// One event format text (`name: …`, `ID: …`, `format:` and a field per
/// line, `print fmt: …`); `None` if it has no name or id.
fn parse_format(system: &str, text: &str) -> Option<TracepointFormat> {
    let mut name = None;
    let mut id = None;
    let mut fields = Vec::new();
    let mut print_fmt = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("name:") {
            name = Some(v.trim().to_string());
        } else if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("print fmt:") {
            print_fmt = v.trim().to_string();
        } else if line.starts_with("field:") {
            fields.extend(parse_field(line));
        }
    }
    Some(TracepointFormat {
        system: system.to_string(),
        name: name?,
        id: id?,
        fields,
        print_fmt,
    })
}

/// `field:long prev_state;\toffset:32;\tsize:8;\tsigned:1;`
fn parse_field(line: &str) -> Option<TraceField> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.split(';') {
        let Some((key, value)) = part.trim().split_once(':') else {
            continue;
        };
        match key {
            "field" => decl = Some(value.trim()),
            "offset" => offset = value.trim().parse().ok(),
            "size" => size = value.trim().parse().ok(),
            "signed" => signed = value.trim() == "1",
            _ => {}
        }
    }
    // `char prev_comm[16]`, `__data_loc char[] name`: the name is the last
    // word, without its array suffix.
    let decl = decl?;
    let last = decl.rsplit(' ').next()?;
    let name = last.split('[').next()?;
    let ty = decl[..decl.len() - last.len()].trim();
    Some(TraceField {
        name: name.to_string(),
        decl: ty.to_string(),
        offset: offset?,
        size: size?,
        signed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\nprint fmt: \"prev_state=%s\", (REC->prev_state & 0xff) ? __print_flags(REC->prev_state & 0xff, \"|\", { 0x00000001, \"S\" }, { 0x00000002, \"D\" }, { 0x00000080, \"I\" }) : \"R\"\n";

    fn tracing_data(big: bool) -> Vec<u8> {
        let e = |v: u64, n: usize| -> Vec<u8> {
            let b = if big {
                v.to_be_bytes()
            } else {
                v.to_le_bytes()
            };
            if big {
                b[8 - n..].to_vec()
            } else {
                b[..n].to_vec()
            }
        };
        let mut d = MAGIC.to_vec();
        d.extend(b"0.6\0");
        d.push(u8::from(big));
        d.push(8);
        d.extend(e(4096, 4));
        for name in ["header_page", "header_event"] {
            d.extend(name.as_bytes());
            d.push(0);
            d.extend(e(3, 8));
            d.extend(b"abc");
        }
        d.extend(e(1, 4)); // one ftrace format
        d.extend(e(4, 8));
        d.extend(b"skip");
        d.extend(e(1, 4)); // one system
        d.extend(b"sched\0");
        d.extend(e(1, 4));
        d.extend(e(SWITCH.len() as u64, 8));
        d.extend(SWITCH.as_bytes());
        d
    }

    #[test]
    fn reads_fields_and_flags_in_either_byte_order() {
        for big in [false, true] {
            let data = TracingData::parse(&tracing_data(big)).expect("parses");
            let f = data.by_id(372).expect("sched_switch");
            assert_eq!(
                (f.system.as_str(), f.name.as_str()),
                ("sched", "sched_switch")
            );
            let state = f.field("prev_state").expect("prev_state");
            assert_eq!(
                (state.decl.as_str(), state.offset, state.size, state.signed),
                ("long", 32, 8, true)
            );
            let comm = f.field("prev_comm").expect("prev_comm");
            assert_eq!((comm.offset, comm.size), (8, 16));
            assert_eq!(
                f.print_flags(),
                vec![
                    (1, "S".to_string()),
                    (2, "D".to_string()),
                    (0x80, "I".to_string())
                ]
            );
        }
    }

    #[test]
    fn reads_values() {
        let data = TracingData::parse(&tracing_data(false)).expect("parses");
        let f = data.by_id(372).expect("sched_switch");
        let mut raw = vec![0u8; 40];
        raw[8..13].copy_from_slice(b"sleep");
        raw[24..28].copy_from_slice(&(-7i32).to_le_bytes());
        raw[32..40].copy_from_slice(&2u64.to_le_bytes());
        let e = Endian::Little;
        assert_eq!(
            f.field("prev_comm").and_then(|c| c.text(&raw)),
            Some("sleep")
        );
        assert_eq!(f.field("prev_pid").and_then(|c| c.int(&raw, e)), Some(-7));
        assert_eq!(f.field("prev_state").and_then(|c| c.int(&raw, e)), Some(2));
        assert_eq!(
            f.field("prev_state").and_then(|c| c.int(&raw[..36], e)),
            None
        );
    }

    #[test]
    fn cut_data_is_an_error_not_a_panic() {
        let full = tracing_data(false);
        for len in 0..full.len() {
            let _ = TracingData::parse(&full[..len]);
        }
        assert!(TracingData::parse(&full[..full.len() - 1]).is_err());
        assert!(TracingData::parse(b"not tracing data").is_err());
    }
}
