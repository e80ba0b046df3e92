//! A sample as one CSV line of `perfq dump --format csv`.

use std::io::Write;

use perfq_reader::{Capture, MemberDelta, Sample};

use super::{cpumode, hex, member_name};

pub(super) const CSV_HEADER: &str = "offset,event,time,pid,tid,cpu,cpumode,ip,addr,id,stream_id,period,weight,data_src,phys_addr,cgroup,callchain,read";

pub(super) fn write_csv(
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
