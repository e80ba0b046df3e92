//! A small JSON object writer for the per-sample hot path of `perfq dump`:
//! building `serde_json::Value` maps per sample cost more than perf script's
//! whole run. Strings are escaped by serde_json; numbers are written as is.

use std::io::Write;

/// Writes one JSON object into a reusable buffer.
pub struct Obj<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl<'b> Obj<'b> {
    /// Starts an object.
    pub fn new(buf: &'b mut Vec<u8>) -> Self {
        buf.push(b'{');
        Obj { buf, first: true }
    }

    fn key(&mut self, k: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    /// `"k": "v"` with escaping.
    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        // Writing into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut *self.buf, v);
        self
    }

    /// `"k": n`.
    pub fn num(&mut self, k: &str, v: impl std::fmt::Display) -> &mut Self {
        self.key(k);
        let _ = write!(self.buf, "{v}");
        self
    }

    /// `"k": "0x..."`.
    pub fn hex(&mut self, k: &str, v: u64) -> &mut Self {
        self.key(k);
        let _ = write!(self.buf, "\"{v:#x}\"");
        self
    }

    /// `"k": n` or nothing.
    pub fn opt_num(&mut self, k: &str, v: Option<impl std::fmt::Display>) -> &mut Self {
        if let Some(v) = v {
            self.num(k, v);
        }
        self
    }

    /// `"k": "0x..."` or nothing.
    pub fn opt_hex(&mut self, k: &str, v: Option<u64>) -> &mut Self {
        if let Some(v) = v {
            self.hex(k, v);
        }
        self
    }

    /// `"k": n` or `"k": null`.
    pub fn num_or_null(&mut self, k: &str, v: Option<impl std::fmt::Display>) -> &mut Self {
        match v {
            Some(v) => self.num(k, v),
            None => self.raw(k, "null"),
        }
    }

    /// `"k": <raw JSON>`.
    pub fn raw(&mut self, k: &str, json: &str) -> &mut Self {
        self.key(k);
        self.buf.extend_from_slice(json.as_bytes());
        self
    }

    /// `"k": [` ... items written by `f` ... `]`.
    pub fn array(&mut self, k: &str, f: impl FnOnce(&mut Arr<'_>)) -> &mut Self {
        self.key(k);
        self.buf.push(b'[');
        f(&mut Arr {
            buf: self.buf,
            first: true,
        });
        self.buf.push(b']');
        self
    }

    /// `"k": {` ... fields written by `f` ... `}`.
    pub fn object(&mut self, k: &str, f: impl FnOnce(&mut Obj<'_>)) -> &mut Self {
        self.key(k);
        let mut o = Obj::new(self.buf);
        f(&mut o);
        o.end();
        self
    }

    /// Closes the object.
    pub fn end(self) {
        self.buf.push(b'}');
    }
}

/// Writes the items of a JSON array.
pub struct Arr<'b> {
    buf: &'b mut Vec<u8>,
    first: bool,
}

impl Arr<'_> {
    fn sep(&mut self) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
    }

    /// An object item.
    pub fn object(&mut self, f: impl FnOnce(&mut Obj<'_>)) {
        self.sep();
        let mut o = Obj::new(self.buf);
        f(&mut o);
        o.end();
    }

    /// A `"0x..."` item.
    pub fn hex(&mut self, v: u64) {
        self.sep();
        let _ = write!(self.buf, "\"{v:#x}\"");
    }
}
