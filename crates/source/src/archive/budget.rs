//! The bound on what an archive may expand to: a zip or bzip2 bomb (a
//! few kilobytes that decompress to gigabytes) must not fill the disk.
//!
//! Every byte an archive expands to is counted, whether a member's bytes
//! are written (spooled captures, build-id cache files) or passed over
//! (a tar stream is decompressed to be read past), against two limits:
//! [`MAX_EXPANDED`] in all, and [`MAX_RATIO`] times the archive's
//! compressed bytes read so far (plus [`RATIO_SLACK`], so that small
//! archives of well-compressing captures pass). Real archives stay far
//! below both: neither `perf archive`'s binaries nor captures compress
//! anywhere near [`MAX_RATIO`] times.

use std::io::Read;
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

/// What one archive has expanded to so far. Clones share the counts.
#[derive(Clone)]
pub(crate) struct Budget {
    compressed: Arc<AtomicU64>,
    expanded: Arc<AtomicU64>,
    max_expanded: u64,
    max_ratio: u64,
}

/// An archive's expansion went past its bound.
#[derive(Debug)]
pub(crate) struct Spent(pub(crate) String);

impl std::fmt::Display for Spent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Spent {}

/// Whether `e` is a [`Metered`] reader's refusal: the budget spent.
pub(crate) fn spent(e: &std::io::Error) -> bool {
    e.get_ref().is_some_and(|inner| inner.is::<Spent>())
}

impl Budget {
    /// A budget with perfq's limits, nothing read yet.
    pub(crate) fn new() -> Budget {
        Budget::with_limits(MAX_EXPANDED, MAX_RATIO)
    }

    pub(crate) fn with_limits(max_expanded: u64, max_ratio: u64) -> Budget {
        Budget {
            compressed: Arc::new(AtomicU64::new(0)),
            expanded: Arc::new(AtomicU64::new(0)),
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

    /// `expanded`, its bytes counted as the archive's expanded bytes: a
    /// read past the bound fails with [`Spent`], so no more than the
    /// bound's worth is ever decompressed, whether the bytes are written
    /// or passed over.
    pub(crate) fn metered<R: Read>(&self, expanded: R) -> Metered<R> {
        Metered {
            inner: expanded,
            budget: self.clone(),
        }
    }

    /// Counts `bytes` more of the archive's compressed bytes read.
    pub(crate) fn compressed(&self, bytes: u64) {
        self.compressed.fetch_add(bytes, Ordering::Relaxed);
    }

    /// Why the archive may not expand to `total` bytes, if it may not.
    fn refuse(&self, total: u64) -> Option<String> {
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
}

/// The expanded bytes of an archive, counted against its [`Budget`].
pub(crate) struct Metered<R> {
    inner: R,
    budget: Budget,
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        let total = self.budget.expanded.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        match self.budget.refuse(total) {
            Some(why) => Err(std::io::Error::other(Spent(why))),
            None => Ok(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(r: &mut dyn Read) -> std::io::Result<u64> {
        std::io::copy(r, &mut std::io::sink())
    }

    #[test]
    fn a_read_past_the_ratio_is_refused() {
        let budget = Budget::with_limits(u64::MAX, 2);
        drain(&mut budget.counted(&[0u8; 10][..])).expect("read");
        let zeros = vec![0u8; (RATIO_SLACK + 21) as usize];
        let err = drain(&mut budget.metered(&zeros[..])).expect_err("refused");
        assert!(spent(&err), "{err}");
        assert!(err.to_string().contains("decompression bomb"), "{err}");
    }

    #[test]
    fn a_read_past_the_total_is_refused() {
        let budget = Budget::with_limits(100, u64::MAX);
        let err = drain(&mut budget.metered(&[1u8; 101][..])).expect_err("refused");
        assert!(err.to_string().contains("past 100 bytes"), "{err}");
        let budget = Budget::with_limits(100, u64::MAX);
        assert_eq!(drain(&mut budget.metered(&[1u8; 100][..])).ok(), Some(100));
    }

    #[test]
    fn bytes_passed_over_count_as_those_written() {
        let budget = Budget::with_limits(100, u64::MAX);
        drain(&mut budget.metered(&[1u8; 60][..])).expect("within");
        let err = drain(&mut budget.metered(&[1u8; 60][..])).expect_err("refused");
        assert!(spent(&err), "{err}");
    }
}
