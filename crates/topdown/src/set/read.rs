//! Reading a formula table: one keyword line at a time, each error
//! naming the table and the line.

use super::{Const, EventRole, FormulaSet, Matcher, Node, PmuClass, SetError};
use crate::expr::{Cond, Expr, ParseError};

/// Splits a table line at `|` separators that stand between blanks (a
/// regular expression's `(a|b)` has none around its bar).
pub(crate) fn fields(line: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut start = 0;
    for i in 0..b.len() {
        if b[i] == b'|'
            && i > 0
            && b[i - 1].is_ascii_whitespace()
            && b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace())
        {
            out.push(line[start..i].trim());
            start = i + 1;
        }
    }
    out.push(line[start..].trim());
    out
}

/// Strips a `#` comment (a `#` at the start of the line or after a blank).
pub(crate) fn strip_comment(line: &str) -> &str {
    let b = line.as_bytes();
    for i in 0..b.len() {
        if b[i] == b'#' && (i == 0 || b[i - 1].is_ascii_whitespace()) {
            return &line[..i];
        }
    }
    line
}

pub(crate) fn parse_u64(s: &str) -> Option<u64> {
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A line of a table, split into its fields (the keyword first).
struct Line<'a> {
    file: &'a str,
    /// 0-based.
    n: usize,
    f: Vec<&'a str>,
}

impl Line<'_> {
    /// An error at this line.
    fn err(&self, message: String) -> SetError {
        SetError {
            file: self.file.into(),
            line: self.n + 1,
            message,
        }
    }

    /// A formula of this line that did not parse.
    fn expr_err(&self, e: ParseError) -> SetError {
        self.err(e.to_string())
    }

    /// Whether the line has `k` fields, keyword included.
    fn want(&self, k: usize) -> Result<(), SetError> {
        let f = &self.f;
        if f.len() == k {
            Ok(())
        } else {
            Err(self.err(format!(
                "`{}` takes {} fields, not {}",
                f[0],
                k - 1,
                f.len() - 1
            )))
        }
    }
}

impl FormulaSet {
    /// Reads a table (`file` names it in errors).
    pub fn parse(file: &str, text: &str) -> Result<FormulaSet, SetError> {
        let mut set = FormulaSet {
            name: String::new(),
            title: String::new(),
            pmu: PmuClass::Core,
            mask: u64::MAX,
            source: String::new(),
            record: String::new(),
            consts: Vec::new(),
            events: Vec::new(),
            lets: Vec::new(),
            nodes: Vec::new(),
        };
        for (n, raw) in text.lines().enumerate() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            set.read_line(&Line {
                file,
                n,
                f: fields(line),
            })?;
        }
        set.check().map_err(|message| SetError {
            file: file.into(),
            line: 0,
            message,
        })?;
        Ok(set)
    }

    /// Takes in one line, by its keyword.
    fn read_line(&mut self, l: &Line<'_>) -> Result<(), SetError> {
        let f = &l.f;
        match f[0] {
            "set" => {
                l.want(2)?;
                self.name = f[1].into();
            }
            "title" => {
                l.want(2)?;
                self.title = f[1].into();
            }
            "source" => {
                l.want(2)?;
                self.source = f[1].into();
            }
            "record" => {
                l.want(2)?;
                self.record = f[1].into();
            }
            "pmu" => {
                l.want(2)?;
                self.pmu = match f[1] {
                    "core" => PmuClass::Core,
                    "atom" => PmuClass::Atom,
                    "arm" => PmuClass::Arm,
                    p => return Err(l.err(format!("unknown pmu `{p}`"))),
                };
            }
            "mask" => {
                l.want(2)?;
                self.mask = parse_u64(f[1]).ok_or_else(|| l.err("bad mask".into()))?;
            }
            "const" => {
                l.want(4)?;
                self.consts.push(read_const(l)?);
            }
            "event" => {
                l.want(5)?;
                self.events.push(read_event(l)?);
            }
            "let" => {
                l.want(3)?;
                let e = Expr::parse(f[2]).map_err(|e| l.expr_err(e))?;
                self.lets.push((f[1].into(), e));
            }
            "node" => {
                l.want(6)?;
                let node = self.read_node(l)?;
                self.nodes.push(node);
            }
            k => return Err(l.err(format!("unknown keyword `{k}`"))),
        }
        Ok(())
    }

    /// `node | name | parent | label | threshold | formula`: its level is
    /// one below its parent's, which a line above defines.
    fn read_node(&self, l: &Line<'_>) -> Result<Node, SetError> {
        let f = &l.f;
        let parent = (f[2] != "-").then(|| f[2].to_string());
        let level = match &parent {
            None => 1,
            Some(p) => match self.nodes.iter().find(|x| x.name == *p) {
                Some(x) => x.level + 1,
                None => return Err(l.err(format!("parent `{p}` is not defined above"))),
            },
        };
        let threshold = match f[4] {
            "-" => None,
            t => Some(Cond::parse(t).map_err(|e| l.expr_err(e))?),
        };
        Ok(Node {
            name: f[1].into(),
            parent,
            level,
            label: f[3].into(),
            threshold,
            expr: Expr::parse(f[5]).map_err(|e| l.expr_err(e))?,
        })
    }
}

/// `const | name | value | text`.
fn read_const(l: &Line<'_>) -> Result<Const, SetError> {
    let f = &l.f;
    let value = f[2]
        .parse()
        .map_err(|_| l.err(format!("bad value `{}`", f[2])))?;
    Ok(Const {
        name: f[1].into(),
        value,
        text: f[3].into(),
    })
}

/// `event | role | raw N, hw N, ... | required or optional | text`.
fn read_event(l: &Line<'_>) -> Result<EventRole, SetError> {
    let f = &l.f;
    let mut matchers = Vec::new();
    for m in f[2].split(',') {
        let mut w = m.split_whitespace();
        let (kind, v) = (w.next(), w.next().and_then(parse_u64));
        matchers.push(match (kind, v, w.next()) {
            (Some("raw"), Some(v), None) => Matcher::Raw(v),
            (Some("hw"), Some(v), None) => Matcher::Hw(v),
            _ => return Err(l.err(format!("bad match `{}`", m.trim()))),
        });
    }
    let optional = match f[3] {
        "required" => false,
        "optional" => true,
        o => return Err(l.err(format!("`{o}`: want required or optional"))),
    };
    Ok(EventRole {
        role: f[1].into(),
        matchers,
        optional,
        text: f[4].into(),
    })
}
