//! zstd `COMPRESSED`/`COMPRESSED2` records expanded into the records
//! they hold, which are handed out before the next top-level record.

use super::{record_header, FileRecords, Loc, HEADER_LEN};
use crate::error::{Error, ErrorKind, Result, Warning};
use crate::record_type::RecordType;

/// Decompressed bytes that may pile up without forming one complete record
/// (records are at most 64 KiB, so this only trips on corrupt input).
const MAX_PENDING_DECOMPRESSED: usize = 64 << 20;

/// The zstd stream of a capture and what it produced.
pub(super) struct Decompressor {
    pub(super) dec: zstd::stream::raw::Decoder<'static>,
    /// Decompressed bytes not yet split into records.
    pub(super) buf: Vec<u8>,
    /// How much of `buf` has been handed out.
    pub(super) pos: usize,
    /// The compressed record the bytes at `pos` came from.
    pub(super) container: u64,
}

impl FileRecords<'_> {
    /// Expands a `COMPRESSED` or `COMPRESSED2` record, `off` in the file,
    /// after the decompressed bytes not yet handed out.
    pub(super) fn decompress(&mut self, kind: RecordType, body: &[u8], off: u64) -> Result<()> {
        if self.z_failed || self.no_decompression {
            return Ok(());
        }
        let data = if kind == RecordType::COMPRESSED2 {
            let n = self.endian.u64_at(body, 0).unwrap_or(0);
            match usize::try_from(n)
                .ok()
                .and_then(|n| body.get(8..8usize.checked_add(n)?))
            {
                Some(d) => d,
                None => {
                    return Err(Error::at(
                        off,
                        ErrorKind::ShortRecord {
                            what: "COMPRESSED2",
                            why: format!("data size {n} exceeds the record"),
                        },
                    ))
                }
            }
        } else {
            body
        };
        if self.z.is_none() {
            let dec = zstd::stream::raw::Decoder::new()
                .map_err(|e| Error::at(off, ErrorKind::Decompress(e.to_string())))?;
            self.z = Some(Decompressor {
                dec,
                buf: Vec::new(),
                pos: 0,
                container: off,
            });
        }
        let Some(z) = self.z.as_mut() else {
            return Ok(());
        };
        // Keep only the unconsumed tail (a record split across chunks).
        z.buf.drain(..z.pos);
        z.pos = 0;
        z.container = off;
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let mut input = InBuffer::around(data);
        let mut chunk = vec![0u8; 256 << 10];
        loop {
            let before = input.pos();
            let mut out = OutBuffer::around(&mut chunk[..]);
            let r = z.dec.run(&mut input, &mut out);
            let produced = out.pos();
            if let Err(e) = r {
                self.z_failed = true;
                self.warnings.push(Warning::at(
                    off,
                    format!("zstd decompression failed ({e}); the records in this and later compressed records are skipped"),
                ));
                return Ok(());
            }
            z.buf.extend_from_slice(&chunk[..produced]);
            self.stats.decompressed_bytes += produced as u64;
            if z.buf.len() > MAX_PENDING_DECOMPRESSED {
                return Err(Error::at(
                    off,
                    ErrorKind::DecompressBomb(MAX_PENDING_DECOMPRESSED),
                ));
            }
            let stalled = produced == 0 && input.pos() == before;
            if stalled || (input.pos() >= data.len() && produced < chunk.len()) {
                break;
            }
        }
        Ok(())
    }

    /// The next complete record among the decompressed bytes, if any.
    pub(super) fn next_decompressed(&mut self) -> Result<Option<Loc>> {
        let Some(z) = self.z.as_mut() else {
            return Ok(None);
        };
        let rest = &z.buf[z.pos..];
        if rest.len() < HEADER_LEN {
            return Ok(None);
        }
        let (kind, misc, size) = record_header(self.endian, rest, z.container)?;
        if size > rest.len() {
            // The rest comes with the next compressed record.
            return Ok(None);
        }
        let start = z.pos;
        z.pos += size;
        let container = z.container;
        self.stats.entry(kind).compressed += 1;
        Ok(Some(Loc::Decompressed {
            container,
            start,
            end: start + size,
            kind,
            misc,
        }))
    }
}
