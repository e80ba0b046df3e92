//! An object read as a file is: `Read` and `Seek` over range requests,
//! a part at a time, so that an archive in a bucket is streamed (a tar
//! from front to back, a zip by seeking to its directory and members)
//! and never held whole in memory or on disk.

use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;

use object_store::{ObjectStore, ObjectStoreExt};

use super::{block_on, one_line, ObjectPath, ObjectUrl};
use crate::Error;

/// The bytes one range request asks for: few requests for a large
/// archive, little memory.
const PART: u64 = 8 << 20;

/// An object being read.
pub struct ObjectReader {
    url: ObjectUrl,
    store: Arc<dyn ObjectStore>,
    key: ObjectPath,
    size: u64,
    /// Where the next read starts.
    pos: u64,
    /// The part last fetched, and where in the object it starts.
    part: bytes::Bytes,
    part_start: u64,
}

impl ObjectReader {
    /// Opens the object at `url` (its size is asked for once).
    pub fn open(url: &ObjectUrl) -> Result<ObjectReader, Error> {
        let store = url.store()?;
        let meta = block_on(store.head(url.key())).map_err(|e| Error::Store {
            url: url.to_string(),
            why: one_line(&e),
        })?;
        Ok(ObjectReader {
            url: url.clone(),
            key: url.key().clone(),
            store,
            size: meta.size,
            pos: 0,
            part: bytes::Bytes::new(),
            part_start: 0,
        })
    }

    /// The object's size.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Fetches the part that starts at `pos`.
    fn fetch(&mut self) -> std::io::Result<()> {
        let end = self.size.min(self.pos.saturating_add(PART));
        let got = block_on(self.store.get_range(&self.key, self.pos..end));
        self.part = got.map_err(|e| {
            std::io::Error::other(format!(
                "{} (byte {}): {}",
                self.url,
                self.pos,
                one_line(&e)
            ))
        })?;
        self.part_start = self.pos;
        Ok(())
    }
}

impl Read for ObjectReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.pos >= self.size || buf.is_empty() {
            return Ok(0);
        }
        let inside =
            self.pos >= self.part_start && self.pos < self.part_start + self.part.len() as u64;
        if !inside {
            self.fetch()?;
        }
        let from = (self.pos - self.part_start) as usize;
        let n = buf.len().min(self.part.len() - from);
        if n == 0 {
            // The store gave fewer bytes than the object has.
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("{}: ended at byte {} of {}", self.url, self.pos, self.size),
            ));
        }
        buf[..n].copy_from_slice(&self.part[from..from + n]);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ObjectReader {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let pos = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = pos.ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("{}: a seek before its start", self.url),
            )
        })?;
        Ok(self.pos)
    }
}
