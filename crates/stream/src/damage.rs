//! What a damaged capture lost, said the same way by every command.
//!
//! A capture can be damaged three ways: a record whose framing is broken
//! ends the read (what came before it is kept); a sample record can fail
//! to decode; a sideband record can fail to parse (a damaged MMAP leaves
//! later frames of its process unresolved). The read goes on past the last
//! two, counting them. [`Damage::summary`] is the one line every command
//! prints for them, and a dataset keeps it in `capture.warnings`.

use std::fmt::Write as _;

use perfq_reader::{Error, FileOffset};

/// What a read of a capture could not use.
#[derive(Debug, Default)]
pub struct Damage {
    /// The error that ended the read before the end of the file.
    pub read_error: Option<Error>,
    /// Bytes of the data section from that error on, not read.
    pub unread_bytes: u64,
    /// Sample records that could not be decoded (skipped).
    pub undecoded_samples: Count,
    /// Records other than samples that could not be parsed (skipped).
    pub unparsed_records: Count,
}

/// Records of one kind that could not be used: how many, and the first.
#[derive(Debug, Default)]
pub struct Count {
    /// How many.
    pub count: u64,
    /// The first one's offset and why it could not be used.
    pub first: Option<(FileOffset, String)>,
}

impl Count {
    pub(crate) fn add(&mut self, e: &Error) {
        self.count += 1;
        if self.first.is_none() {
            self.first = Some((e.offset, e.kind.to_string()));
        }
    }

    fn describe(&self, what: &str, out: &mut Vec<String>) {
        if self.count == 0 {
            return;
        }
        let mut s = format!("{} {what} could not be read", self.count);
        if let Some((offset, why)) = &self.first {
            let _ = write!(s, " (the first at file offset {offset}: {why})");
        }
        out.push(s);
    }
}

impl Damage {
    /// Whether everything was read.
    pub fn is_empty(&self) -> bool {
        self.read_error.is_none()
            && self.undecoded_samples.count == 0
            && self.unparsed_records.count == 0
    }

    /// One line saying what was lost and where, without the file's name;
    /// `None` when nothing was.
    pub fn summary(&self) -> Option<String> {
        let mut parts = Vec::new();
        if let Some(e) = &self.read_error {
            parts.push(format!(
                "{} at file offset {}: reading stopped there, what came before it is used",
                e.kind, e.offset
            ));
        }
        self.undecoded_samples
            .describe("sample records", &mut parts);
        self.unparsed_records
            .describe("records other than samples", &mut parts);
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfq_reader::ErrorKind;

    #[test]
    fn a_summary_names_each_loss_and_its_first_place() {
        let mut d = Damage::default();
        assert_eq!(d.summary(), None);
        assert!(d.is_empty());
        let short = |at| {
            Error::at(
                at,
                ErrorKind::ShortRecord {
                    what: "MMAP2",
                    why: "8 bytes".into(),
                },
            )
        };
        d.unparsed_records.add(&short(0x40));
        d.unparsed_records.add(&short(0x80));
        d.read_error = Some(Error::at(
            0x100,
            ErrorKind::BadRecordSize {
                record_type: 9,
                size: 4,
            },
        ));
        assert_eq!(
            d.summary().as_deref(),
            Some(
                "bad record size 4 for record type 9 at file offset 0x100: reading stopped there, \
                 what came before it is used; 2 records other than samples could not be read \
                 (the first at file offset 0x40: MMAP2 record too short: 8 bytes)"
            )
        );
    }
}
