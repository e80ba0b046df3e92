//! Records perf writes itself (types 64 and up): attrs and features in pipe
//! mode, event updates, thread and cpu maps, `perf stat` records, time
//! conversion, AUX trace info and errors.

use crate::attr::Attr;
use crate::endian::{c_str, Cursor, Endian, U64s};
use crate::error::ErrorKind;

fn short(what: &'static str, why: &str) -> ErrorKind {
    ErrorKind::ShortRecord {
        what,
        why: why.to_string(),
    }
}

/// What an `EVENT_UPDATE` changes.
#[derive(Clone, Debug, PartialEq)]
pub enum EventUpdate<'a> {
    /// The unit (`msec`).
    Unit(String),
    /// The scale factor.
    Scale(f64),
    /// The event's name.
    Name(String),
    /// The cpus it was opened on (raw `cpu_map` data).
    Cpus(&'a [u8]),
    /// A kind perfq does not know.
    Other {
        /// The update type.
        type_: u64,
        /// Its payload.
        data: &'a [u8],
    },
}

/// One `STAT` record: a counter value of `perf stat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stat {
    /// Event instance id.
    pub id: u64,
    /// cpu index.
    pub cpu: u32,
    /// thread index.
    pub thread: u32,
    /// Value.
    pub val: u64,
    /// Time enabled.
    pub ena: u64,
    /// Time running.
    pub run: u64,
}

/// `TIME_CONV`: how to turn TSC values into perf time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TimeConv {
    /// Shift.
    pub time_shift: u64,
    /// Multiplier.
    pub time_mult: u64,
    /// Zero point.
    pub time_zero: u64,
    /// Cycles at zero (newer perf).
    pub time_cycles: Option<u64>,
    /// Mask (newer perf).
    pub time_mask: Option<u64>,
    /// `cap_user_time_zero` (newer perf).
    pub cap_user_time_zero: Option<bool>,
    /// `cap_user_time_short` (newer perf).
    pub cap_user_time_short: Option<bool>,
}

/// `AUXTRACE_ERROR`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuxtraceError {
    /// Error type.
    pub type_: u32,
    /// Error code.
    pub code: u32,
    /// cpu.
    pub cpu: u32,
    /// Process.
    pub pid: u32,
    /// Thread.
    pub tid: u32,
    /// Format version.
    pub fmt: u32,
    /// ip.
    pub ip: u64,
    /// Message.
    pub msg: String,
    /// Time (format 1 and later).
    pub time: Option<u64>,
}

/// `HEADER_ATTR`: `attr` (its own size) then the ids.
pub(crate) fn header_attr<'a>(b: &'a [u8], e: Endian) -> Result<(Attr, U64s<'a>), ErrorKind> {
    let size = e
        .u32_at(b, 4)
        .ok_or_else(|| short("HEADER_ATTR", "attr size"))?;
    let sz = Attr::on_disk_size(size);
    let attr_bytes = b
        .get(..sz)
        .ok_or_else(|| short("HEADER_ATTR", &format!("{sz}-byte attr")))?;
    let attr =
        Attr::parse(attr_bytes, e).ok_or_else(|| short("HEADER_ATTR", "attr below 64 bytes"))?;
    let mut c = Cursor::new(&b[sz..], e);
    let n = (c.remaining() / 8) as u64;
    let ids = c.u64s(n).unwrap_or(U64s::EMPTY);
    Ok((attr, ids))
}

/// `EVENT_UPDATE`: `{u64 type; u64 id; payload}`.
pub(crate) fn event_update<'a>(
    b: &'a [u8],
    e: Endian,
) -> Result<(u64, EventUpdate<'a>), ErrorKind> {
    let mut c = Cursor::new(b, e);
    let type_ = c.u64().ok_or_else(|| short("EVENT_UPDATE", "type"))?;
    let id = c.u64().ok_or_else(|| short("EVENT_UPDATE", "id"))?;
    let rest = c.rest();
    let u = match type_ {
        1 => EventUpdate::Unit(c_str(rest)),
        2 => EventUpdate::Scale(f64::from_bits(
            c.u64().ok_or_else(|| short("EVENT_UPDATE", "scale"))?,
        )),
        3 => EventUpdate::Name(c_str(rest)),
        4 => EventUpdate::Cpus(rest),
        _ => EventUpdate::Other { type_, data: rest },
    };
    Ok((id, u))
}

/// `THREAD_MAP`: `{u64 nr; {u64 pid; char comm[16]}[nr]}`.
pub(crate) fn thread_map(b: &[u8], e: Endian) -> Result<Vec<(u64, String)>, ErrorKind> {
    let mut c = Cursor::new(b, e);
    let nr = c.u64().ok_or_else(|| short("THREAD_MAP", "nr"))?;
    if nr > (c.remaining() / 24) as u64 {
        return Err(short("THREAD_MAP", &format!("{nr} entries")));
    }
    (0..nr)
        .map(|_| {
            let pid = c.u64().ok_or_else(|| short("THREAD_MAP", "pid"))?;
            let comm = c.bytes(16).ok_or_else(|| short("THREAD_MAP", "comm"))?;
            Ok((pid, c_str(comm)))
        })
        .collect()
}

/// `CPU_MAP`: the cpus, from a list, a mask or a range.
pub(crate) fn cpu_map(b: &[u8], e: Endian) -> Result<Vec<u32>, ErrorKind> {
    let mut c = Cursor::new(b, e);
    let ty = c.u16().ok_or_else(|| short("CPU_MAP", "type"))?;
    let bad = |why: &str| short("CPU_MAP", why);
    match ty {
        // PERF_CPU_MAP__CPUS: u16 nr; u16 cpu[nr]
        0 => {
            let nr = c.u16().ok_or_else(|| bad("nr"))?;
            (0..nr)
                .map(|_| c.u16().map(u32::from).ok_or_else(|| bad("cpu")))
                .collect()
        }
        // PERF_CPU_MAP__MASK: u16 nr; u16 long_size; [u32 pad if 8]; mask words
        1 => {
            let nr = c.u16().ok_or_else(|| bad("nr"))? as usize;
            let long_size = c.u16().ok_or_else(|| bad("long_size"))?;
            let mut cpus = Vec::new();
            match long_size {
                4 => {
                    for w in 0..nr {
                        let m = c.u32().ok_or_else(|| bad("mask"))?;
                        cpus.extend(
                            (0..32)
                                .filter(|b| m & (1 << b) != 0)
                                .map(|b| (w * 32 + b) as u32),
                        );
                    }
                }
                8 => {
                    c.skip(4).ok_or_else(|| bad("pad"))?;
                    for w in 0..nr {
                        let m = c.u64().ok_or_else(|| bad("mask"))?;
                        cpus.extend(
                            (0..64)
                                .filter(|b| m & (1 << b) != 0)
                                .map(|b| (w * 64 + b) as u32),
                        );
                    }
                }
                n => return Err(bad(&format!("long_size {n}"))),
            }
            Ok(cpus)
        }
        // PERF_CPU_MAP__RANGE_CPUS: u8 any_cpu; u8 pad; u16 start; u16 end
        2 => {
            let _any = c.bytes(2).ok_or_else(|| bad("any_cpu"))?;
            let start = c.u16().ok_or_else(|| bad("start"))?;
            let end = c.u16().ok_or_else(|| bad("end"))?;
            Ok((u32::from(start)..=u32::from(end)).collect())
        }
        t => Err(bad(&format!("map type {t}"))),
    }
}

/// `STAT`.
pub(crate) fn stat(b: &[u8], e: Endian) -> Result<Stat, ErrorKind> {
    let mut c = Cursor::new(b, e);
    let s = (|| {
        Some(Stat {
            id: c.u64()?,
            cpu: c.u32()?,
            thread: c.u32()?,
            val: c.u64()?,
            ena: c.u64()?,
            run: c.u64()?,
        })
    })();
    s.ok_or_else(|| short("STAT", "40 bytes"))
}

/// `TIME_CONV`.
pub(crate) fn time_conv(b: &[u8], e: Endian) -> Result<TimeConv, ErrorKind> {
    let mut c = Cursor::new(b, e);
    let mut t = TimeConv {
        time_shift: c.u64().ok_or_else(|| short("TIME_CONV", "time_shift"))?,
        time_mult: c.u64().ok_or_else(|| short("TIME_CONV", "time_mult"))?,
        time_zero: c.u64().ok_or_else(|| short("TIME_CONV", "time_zero"))?,
        ..TimeConv::default()
    };
    if let (Some(cycles), Some(mask)) = (c.u64(), c.u64()) {
        t.time_cycles = Some(cycles);
        t.time_mask = Some(mask);
        if let Some(caps) = c.bytes(2) {
            t.cap_user_time_zero = Some(caps[0] != 0);
            t.cap_user_time_short = Some(caps[1] != 0);
        }
    }
    Ok(t)
}

/// `AUXTRACE_ERROR`.
pub(crate) fn auxtrace_error(b: &[u8], e: Endian) -> Result<AuxtraceError, ErrorKind> {
    let mut c = Cursor::new(b, e);
    let f = (|| {
        let (type_, code, cpu, pid, tid, fmt) =
            (c.u32()?, c.u32()?, c.u32()?, c.u32()?, c.u32()?, c.u32()?);
        let ip = c.u64()?;
        let msg = c_str(c.bytes(64)?);
        let time = if fmt >= 1 { c.u64() } else { None };
        Some(AuxtraceError {
            type_,
            code,
            cpu,
            pid,
            tid,
            fmt,
            ip,
            msg,
            time,
        })
    })();
    f.ok_or_else(|| short("AUXTRACE_ERROR", "fields"))
}
