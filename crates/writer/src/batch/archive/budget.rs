//! The bound on what an archive may expand to: a zip or bzip2 bomb (a
//! few kilobytes that decompress to gigabytes) must not fill the disk.
//!
//! Every byte an archive's members write (spooled captures, build-id
//! cache files) is counted against two limits: [`MAX_EXPANDED`] in all,
//! and [`MAX_RATIO`] times the archive's compressed bytes read so far
//! (plus [`RATIO_SLACK`], so that small archives of well-compressing
//! captures pass). Real archives stay far below both: `perf archive`'s
//! binaries compress 3–8×, captures rarely past 30×.

use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Bytes an archive may expand to in all.
pub(crate) const MAX_EXPANDED: u64 = 32 << 30;
/// Expanded bytes per compressed byte read.
pub(crate) const MAX_RATIO: u64 = 200;
/// Expanded bytes allowed beyond the ratio.
pub(crate) const RATIO_SLACK: u64 = 64 << 20;

/// Counts the bytes read from the archive file (under the decompressor).
pub(crate) struct Counted<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// What one archive has expanded to so far.
pub(crate) struct Budget {
    compressed: Arc<AtomicU64>,
    written: u64,
    max_expanded: u64,
    max_ratio: u64,
}

impl Budget {
    /// A budget with perfq's limits, nothing read yet.
    pub(crate) fn new() -> Budget {
        Budget::with_limits(MAX_EXPANDED, MAX_RATIO)
    }

    pub(crate) fn with_limits(max_expanded: u64, max_ratio: u64) -> Budget {
        Budget {
            compressed: Arc::new(AtomicU64::new(0)),
            written: 0,
            max_expanded,
            max_ratio,
        }
    }

    /// `file`, its bytes read counted as the archive's compressed bytes.
    pub(crate) fn counted<R: Read>(&self, file: R) -> Counted<R> {
        Counted {
            inner: file,
            read: self.compressed.clone(),
        }
    }

    /// Counts `bytes` more of the archive's compressed bytes read.
    pub(crate) fn compressed(&self, bytes: u64) {
        self.compressed.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Why `more` bytes may not be written, if they may not.
    fn refuse(&self, more: u64) -> Option<String> {
        let total = self.written.saturating_add(more);
        let compressed = self.compressed.load(Ordering::Relaxed);
        let by_ratio = compressed
            .saturating_mul(self.max_ratio)
            .saturating_add(RATIO_SLACK);
        if total > self.max_expanded {
            Some(format!(
                "the archive expands past {} bytes, perfq's limit",
                self.max_expanded
            ))
        } else if total > by_ratio {
            Some(format!(
                "the archive expands past {} bytes from {compressed} compressed bytes \
                 (more than {}× and {} bytes more): a decompression bomb?",
                by_ratio, self.max_ratio, RATIO_SLACK
            ))
        } else {
            None
        }
    }

    /// Copies `from` into `to` a block at a time, as long as the budget
    /// allows: on refusal, at most one block past the limit was written.
    pub(crate) fn copy(&mut self, from: &mut dyn Read, to: &mut dyn Write) -> Result<u64, String> {
        let mut buf = vec![0u8; 1 << 16];
        let mut copied = 0u64;
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) => return Ok(copied),
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e.to_string()),
            };
            if let Some(why) = self.refuse(n as u64) {
                return Err(why);
            }
            to.write_all(&buf[..n]).map_err(|e| e.to_string())?;
            self.written += n as u64;
            copied += n as u64;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_past_the_ratio_is_refused() {
        let mut budget = Budget::with_limits(u64::MAX, 2);
        let mut counted = budget.counted(&[0u8; 10][..]);
        std::io::copy(&mut counted, &mut std::io::sink()).expect("read");
        let zeros = vec![0u8; (RATIO_SLACK + 21) as usize];
        let mut out = std::io::sink();
        let err = budget.copy(&mut &zeros[..], &mut out).expect_err("refused");
        assert!(err.contains("decompression bomb"), "{err}");
        assert!(budget.written <= RATIO_SLACK + 20);
    }

    #[test]
    fn a_copy_past_the_total_is_refused() {
        let mut budget = Budget::with_limits(100, u64::MAX);
        let err = budget
            .copy(&mut &[1u8; 101][..], &mut std::io::sink())
            .expect_err("refused");
        assert!(err.contains("past 100 bytes"), "{err}");
        let mut budget = Budget::with_limits(100, u64::MAX);
        assert_eq!(
            budget.copy(&mut &[1u8; 100][..], &mut std::io::sink()),
            Ok(100)
        );
    }
}
