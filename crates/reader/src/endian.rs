//! Byte order of a capture and a bounds-checked cursor over its bytes.
//!
//! perf writes every field in the byte order of the machine that recorded
//! it; the magic tells which. All reads here are checked: a short buffer
//! gives `None`, never a panic, so decoders can turn it into an error that
//! names the record.

/// The byte order a capture was written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    /// `PERFILE2` magic: written by a little-endian machine.
    Little,
    /// `2ELIFREP` magic: written by a big-endian machine (e.g. ppc64, s390x).
    Big,
}

impl Endian {
    /// Reads a `u16` from the first two bytes of `b`.
    #[inline]
    pub fn u16(self, b: [u8; 2]) -> u16 {
        match self {
            Endian::Little => u16::from_le_bytes(b),
            Endian::Big => u16::from_be_bytes(b),
        }
    }

    /// Reads a `u32` from four bytes.
    #[inline]
    pub fn u32(self, b: [u8; 4]) -> u32 {
        match self {
            Endian::Little => u32::from_le_bytes(b),
            Endian::Big => u32::from_be_bytes(b),
        }
    }

    /// Reads a `u64` from eight bytes.
    #[inline]
    pub fn u64(self, b: [u8; 8]) -> u64 {
        match self {
            Endian::Little => u64::from_le_bytes(b),
            Endian::Big => u64::from_be_bytes(b),
        }
    }

    /// Reads the `u16` at `at`, if `data` is long enough.
    #[inline]
    pub fn u16_at(self, data: &[u8], at: usize) -> Option<u16> {
        let b = data.get(at..at.checked_add(2)?)?;
        Some(self.u16(b.try_into().ok()?))
    }

    /// Reads the `u32` at `at`, if `data` is long enough.
    #[inline]
    pub fn u32_at(self, data: &[u8], at: usize) -> Option<u32> {
        let b = data.get(at..at.checked_add(4)?)?;
        Some(self.u32(b.try_into().ok()?))
    }

    /// Reads the `u64` at `at`, if `data` is long enough.
    #[inline]
    pub fn u64_at(self, data: &[u8], at: usize) -> Option<u64> {
        let b = data.get(at..at.checked_add(8)?)?;
        Some(self.u64(b.try_into().ok()?))
    }
}

/// A forward cursor over a byte slice in a given byte order.
///
/// Every read is checked; `None` means the slice ended first.
#[derive(Clone, Copy, Debug)]
pub struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
    endian: Endian,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8], endian: Endian) -> Self {
        Cursor {
            data,
            pos: 0,
            endian,
        }
    }

    /// The byte order it reads in.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Bytes not yet consumed.
    pub fn remaining(&self) -> usize {
        self.data.len() - self.pos
    }

    /// The unconsumed rest of the slice.
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }

    /// Takes the next `n` bytes.
    #[inline]
    pub fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let b = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(b)
    }

    /// Skips `n` bytes.
    #[inline]
    pub fn skip(&mut self, n: usize) -> Option<()> {
        self.bytes(n).map(|_| ())
    }

    /// Reads a `u16`.
    #[inline]
    pub fn u16(&mut self) -> Option<u16> {
        let b = self.bytes(2)?;
        Some(self.endian.u16(b.try_into().ok()?))
    }

    /// Reads a `u32`.
    #[inline]
    pub fn u32(&mut self) -> Option<u32> {
        let b = self.bytes(4)?;
        Some(self.endian.u32(b.try_into().ok()?))
    }

    /// Reads a `u64`.
    #[inline]
    pub fn u64(&mut self) -> Option<u64> {
        let b = self.bytes(8)?;
        Some(self.endian.u64(b.try_into().ok()?))
    }

    /// Takes `n` u64 values as a zero-copy array view.
    #[inline]
    pub fn u64s(&mut self, n: u64) -> Option<U64s<'a>> {
        let len = usize::try_from(n).ok()?.checked_mul(8)?;
        let bytes = self.bytes(len)?;
        Some(U64s {
            bytes,
            endian: self.endian,
        })
    }
}

/// A zero-copy view of `u64` values stored in the capture's byte order
/// (callchains, registers, branch counters).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct U64s<'a> {
    bytes: &'a [u8],
    endian: Endian,
}

impl<'a> U64s<'a> {
    /// An empty view.
    pub const EMPTY: U64s<'static> = U64s {
        bytes: &[],
        endian: Endian::Little,
    };

    /// Number of values.
    pub fn len(&self) -> usize {
        self.bytes.len() / 8
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// The value at `i`.
    pub fn get(&self, i: usize) -> Option<u64> {
        self.endian.u64_at(self.bytes, i.checked_mul(8)?)
    }

    /// Iterates over the values.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u64> + DoubleEndedIterator + 'a {
        let endian = self.endian;
        self.bytes.chunks_exact(8).map(move |c| {
            // chunks_exact yields exactly 8 bytes, so the conversion holds.
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            endian.u64(b)
        })
    }
}

impl std::fmt::Debug for U64s<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|v| format!("{v:#x}")))
            .finish()
    }
}

/// Reads a NUL-terminated string from `b`, lossily as UTF-8; without a
/// NUL the whole slice is the string.
pub fn c_str(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}
