//! The formula language: arithmetic over event sums, node values and
//! constants, parsed from the formula tables, evaluated for tests,
//! differentiated for standard errors and written out as portable SQL.
//!
//! ```text
//! expr  := or
//! or    := and ('|' and)*          conditions (thresholds) only
//! and   := cmp ('&' cmp)*
//! cmp   := sum (('>' | '<' | '>=' | '<=') sum)?
//! sum   := prod (('+' | '-') prod)*
//! prod  := unary (('*' | '/') unary)*
//! unary := '-' unary | atom
//! atom  := number | name | name '(' expr (',' expr)* ')' | '(' expr ')'
//!        | 'if' '(' or ',' expr ',' expr ')'
//! ```
//!
//! `and` and `or` may be written for `&` and `|`. Functions: `max(a, b)`,
//! `min(a, b)`, `d_ratio(a, b)` (perf's safe division: 0 when `b` is 0),
//! `if(condition, a, b)`. A plain `a / b` with `b` = 0 has no value
//! (SQL NULL): the number cannot be computed, which is not the same as 0.

use std::collections::BTreeSet;
use std::fmt;

/// A numeric expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A constant.
    Num(f64),
    /// An event sum, a node or a named intermediate.
    Var(String),
    /// `-a`.
    Neg(Box<Expr>),
    /// `a op b`.
    Bin(Op, Box<Expr>, Box<Expr>),
    /// `max(a, b)`, `min(a, b)`, `d_ratio(a, b)`.
    Call(Func, Box<Expr>, Box<Expr>),
    /// `if c then a else b` (made by differentiation of max/min).
    If(Box<Cond>, Box<Expr>, Box<Expr>),
}

/// An arithmetic operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/` (no value when the divisor is 0)
    Div,
}

/// A function of two arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// The larger.
    Max,
    /// The smaller.
    Min,
    /// `a / b`, or 0 when `b` is 0 (perf's `d_ratio`).
    DRatio,
}

/// A condition: a threshold.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// `a op b`.
    Cmp(CmpOp, Expr, Expr),
    /// Both.
    And(Box<Cond>, Box<Cond>),
    /// Either.
    Or(Box<Cond>, Box<Cond>),
}

/// A comparison.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<`
    Lt,
    /// `<=`
    Le,
}

/// A formula that could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message} at column {column} of `{text}`")]
pub struct ParseError {
    /// What was wrong.
    pub message: String,
    /// 1-based character column.
    pub column: usize,
    /// The formula.
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Sym(&'static str),
}

fn lex(text: &str) -> Result<Vec<(Tok, usize)>, ParseError> {
    let err = |message: &str, column: usize| ParseError {
        message: message.into(),
        column: column + 1,
        text: text.into(),
    };
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == b'.' {
            let start = i;
            if c == b'0' && b.get(i + 1).is_some_and(|&x| x == b'x' || x == b'X') {
                i += 2;
                while i < b.len() && b[i].is_ascii_hexdigit() {
                    i += 1;
                }
                let v = u64::from_str_radix(&text[start + 2..i], 16)
                    .map_err(|_| err("bad hex number", start))?;
                out.push((Tok::Num(v as f64), start));
                continue;
            }
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b[i] == b'_') {
                i += 1;
            }
            let digits: String = text[start..i].chars().filter(|&c| c != '_').collect();
            let v = digits
                .parse::<f64>()
                .map_err(|_| err("bad number", start))?;
            out.push((Tok::Num(v), start));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Name(text[start..i].to_string()), start));
        } else {
            let two = text.get(i..i + 2);
            let sym = match (two, c) {
                (Some(">="), _) => ">=",
                (Some("<="), _) => "<=",
                (_, b'>') => ">",
                (_, b'<') => "<",
                (_, b'+') => "+",
                (_, b'-') => "-",
                (_, b'*') => "*",
                (_, b'/') => "/",
                (_, b'(') => "(",
                (_, b')') => ")",
                (_, b',') => ",",
                (_, b'&') => "&",
                (_, b'|') => "|",
                _ => return Err(err("unexpected character", i)),
            };
            out.push((Tok::Sym(sym), i));
            i += sym.len();
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<(Tok, usize)>,
    pos: usize,
    text: &'a str,
}

impl Parser<'_> {
    fn err<T>(&self, message: &str) -> Result<T, ParseError> {
        let column = self.toks.get(self.pos).map_or(self.text.len(), |t| t.1) + 1;
        Err(ParseError {
            message: message.into(),
            column,
            text: self.text.into(),
        })
    }

    fn peek_sym(&self, s: &str) -> bool {
        matches!(self.toks.get(self.pos), Some((Tok::Sym(x), _)) if *x == s)
    }

    fn eat(&mut self, s: &str) -> bool {
        let hit = self.peek_sym(s);
        if hit {
            self.pos += 1;
        }
        hit
    }

    /// `&` or `and`, `|` or `or` (the formula tables use the words: `|`
    /// separates their fields).
    fn eat_logic(&mut self, sym: &str, word: &str) -> bool {
        if self.eat(sym) {
            return true;
        }
        let hit = matches!(self.toks.get(self.pos), Some((Tok::Name(n), _)) if n == word);
        if hit {
            self.pos += 1;
        }
        hit
    }

    fn cond(&mut self) -> Result<Cond, ParseError> {
        let mut a = self.conj()?;
        while self.eat_logic("|", "or") {
            a = Cond::Or(Box::new(a), Box::new(self.conj()?));
        }
        Ok(a)
    }

    fn conj(&mut self) -> Result<Cond, ParseError> {
        let mut a = self.cmp()?;
        while self.eat_logic("&", "and") {
            a = Cond::And(Box::new(a), Box::new(self.cmp()?));
        }
        Ok(a)
    }

    fn cmp(&mut self) -> Result<Cond, ParseError> {
        if self.peek_sym("(") {
            // A parenthesized condition or the start of an expression:
            // try the condition first.
            let save = self.pos;
            self.pos += 1;
            if let Ok(c) = self.cond() {
                if self.eat(")") {
                    return Ok(c);
                }
            }
            self.pos = save;
        }
        let a = self.sum()?;
        let op = if self.eat(">=") {
            CmpOp::Ge
        } else if self.eat("<=") {
            CmpOp::Le
        } else if self.eat(">") {
            CmpOp::Gt
        } else if self.eat("<") {
            CmpOp::Lt
        } else {
            return self.err("expected a comparison");
        };
        Ok(Cond::Cmp(op, a, self.sum()?))
    }

    fn sum(&mut self) -> Result<Expr, ParseError> {
        let mut a = self.prod()?;
        loop {
            let op = if self.eat("+") {
                Op::Add
            } else if self.eat("-") {
                Op::Sub
            } else {
                return Ok(a);
            };
            a = Expr::Bin(op, Box::new(a), Box::new(self.prod()?));
        }
    }

    fn prod(&mut self) -> Result<Expr, ParseError> {
        let mut a = self.unary()?;
        loop {
            let op = if self.eat("*") {
                Op::Mul
            } else if self.eat("/") {
                Op::Div
            } else {
                return Ok(a);
            };
            a = Expr::Bin(op, Box::new(a), Box::new(self.unary()?));
        }
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.atom()
    }

    fn atom(&mut self) -> Result<Expr, ParseError> {
        match self.toks.get(self.pos).cloned() {
            Some((Tok::Num(v), _)) => {
                self.pos += 1;
                Ok(Expr::Num(v))
            }
            Some((Tok::Name(n), _)) => {
                self.pos += 1;
                if !self.eat("(") {
                    return Ok(Expr::Var(n));
                }
                if n == "if" {
                    let c = self.cond()?;
                    if !self.eat(",") {
                        return self.err("expected `,`");
                    }
                    let a = self.sum()?;
                    if !self.eat(",") {
                        return self.err("expected `,`");
                    }
                    let b = self.sum()?;
                    if !self.eat(")") {
                        return self.err("expected `)`");
                    }
                    return Ok(Expr::If(Box::new(c), Box::new(a), Box::new(b)));
                }
                let f = match n.as_str() {
                    "max" => Func::Max,
                    "min" => Func::Min,
                    "d_ratio" => Func::DRatio,
                    _ => {
                        self.pos -= 1;
                        return self.err("unknown function");
                    }
                };
                let a = self.sum()?;
                if !self.eat(",") {
                    return self.err("expected `,`");
                }
                let b = self.sum()?;
                if !self.eat(")") {
                    return self.err("expected `)`");
                }
                Ok(Expr::Call(f, Box::new(a), Box::new(b)))
            }
            Some((Tok::Sym("("), _)) => {
                self.pos += 1;
                let e = self.sum()?;
                if !self.eat(")") {
                    return self.err("expected `)`");
                }
                Ok(e)
            }
            _ => self.err("expected a number, a name or `(`"),
        }
    }

    fn done(&self) -> Result<(), ParseError> {
        if self.pos == self.toks.len() {
            Ok(())
        } else {
            self.err("unexpected text")
        }
    }
}

impl Expr {
    /// Parses an arithmetic expression.
    pub fn parse(text: &str) -> Result<Expr, ParseError> {
        let mut p = Parser {
            toks: lex(text)?,
            pos: 0,
            text,
        };
        let e = p.sum()?;
        p.done()?;
        Ok(e)
    }

    /// The names the expression refers to.
    pub fn vars(&self, out: &mut BTreeSet<String>) {
        match self {
            Expr::Num(_) => {}
            Expr::Var(v) => {
                out.insert(v.clone());
            }
            Expr::Neg(a) => a.vars(out),
            Expr::Bin(_, a, b) | Expr::Call(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Expr::If(c, a, b) => {
                c.vars(out);
                a.vars(out);
                b.vars(out);
            }
        }
    }

    /// Replaces each name for which `f` gives an expression.
    pub fn substitute(&self, f: &dyn Fn(&str) -> Option<Expr>) -> Expr {
        match self {
            Expr::Num(_) => self.clone(),
            Expr::Var(v) => f(v).unwrap_or_else(|| self.clone()),
            Expr::Neg(a) => Expr::Neg(Box::new(a.substitute(f))),
            Expr::Bin(op, a, b) => {
                Expr::Bin(*op, Box::new(a.substitute(f)), Box::new(b.substitute(f)))
            }
            Expr::Call(g, a, b) => {
                Expr::Call(*g, Box::new(a.substitute(f)), Box::new(b.substitute(f)))
            }
            Expr::If(c, a, b) => Expr::If(
                Box::new(c.substitute(f)),
                Box::new(a.substitute(f)),
                Box::new(b.substitute(f)),
            ),
        }
    }

    /// The value, given the value of every name; `None` when a divisor is
    /// 0 (or a name has no value).
    pub fn eval(&self, var: &dyn Fn(&str) -> Option<f64>) -> Option<f64> {
        Some(match self {
            Expr::Num(v) => *v,
            Expr::Var(v) => var(v)?,
            Expr::Neg(a) => -a.eval(var)?,
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.eval(var)?, b.eval(var)?);
                match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                    Op::Div if b == 0.0 => return None,
                    Op::Div => a / b,
                }
            }
            Expr::Call(f, a, b) => {
                let (a, b) = (a.eval(var)?, b.eval(var)?);
                match f {
                    Func::Max => a.max(b),
                    Func::Min => a.min(b),
                    Func::DRatio if b == 0.0 => 0.0,
                    Func::DRatio => a / b,
                }
            }
            Expr::If(c, a, b) => {
                if c.eval(var)? {
                    a.eval(var)?
                } else {
                    b.eval(var)?
                }
            }
        })
    }

    /// The derivative with respect to `x`, simplified. Names other than
    /// `x` are constants (inline nodes and intermediates first).
    pub fn derivative(&self, x: &str) -> Expr {
        use Expr::*;
        let d = match self {
            Num(_) => Num(0.0),
            Var(v) => Num(if v == x { 1.0 } else { 0.0 }),
            Neg(a) => neg(a.derivative(x)),
            Bin(Op::Add, a, b) => add(a.derivative(x), b.derivative(x)),
            Bin(Op::Sub, a, b) => sub(a.derivative(x), b.derivative(x)),
            Bin(Op::Mul, a, b) => add(
                mul(a.derivative(x), (**b).clone()),
                mul((**a).clone(), b.derivative(x)),
            ),
            // (a/b)' = a'/b - a b' / b²
            Bin(Op::Div, a, b) => quotient_rule(a, b, x, Op::Div),
            Call(Func::DRatio, a, b) => quotient_rule(a, b, x, Op::Div),
            Call(f @ (Func::Max | Func::Min), a, b) => {
                let op = if *f == Func::Max {
                    CmpOp::Ge
                } else {
                    CmpOp::Le
                };
                if_(
                    Cond::Cmp(op, (**a).clone(), (**b).clone()),
                    a.derivative(x),
                    b.derivative(x),
                )
            }
            If(c, a, b) => if_((**c).clone(), a.derivative(x), b.derivative(x)),
        };
        d.simplify()
    }

    /// Folds constants and drops additions of 0 and products with 0 or 1.
    pub fn simplify(&self) -> Expr {
        use Expr::*;
        match self {
            Num(_) | Var(_) => self.clone(),
            Neg(a) => neg(a.simplify()),
            Bin(Op::Add, a, b) => add(a.simplify(), b.simplify()),
            Bin(Op::Sub, a, b) => sub(a.simplify(), b.simplify()),
            Bin(Op::Mul, a, b) => mul(a.simplify(), b.simplify()),
            Bin(Op::Div, a, b) => {
                let (a, b) = (a.simplify(), b.simplify());
                match (&a, &b) {
                    (Num(x), Num(y)) if *y != 0.0 => Num(x / y),
                    (_, Num(y)) if *y == 1.0 => a,
                    // A correction term whose event was not recorded:
                    // 0 whatever the divisor (perf counts it 0).
                    (Num(x), _) if *x == 0.0 => Num(0.0),
                    _ => Bin(Op::Div, Box::new(a), Box::new(b)),
                }
            }
            Call(f, a, b) => Call(*f, Box::new(a.simplify()), Box::new(b.simplify())),
            If(c, a, b) => if_((**c).clone(), a.simplify(), b.simplify()),
        }
    }

    /// Portable SQL (DataFusion, DuckDB, Spark): every value a DOUBLE,
    /// names written by `var`. `a / b` is `a / NULLIF(b, 0)` (no value for
    /// a 0 divisor), `d_ratio` is `COALESCE(a / NULLIF(b, 0), 0)`, and
    /// max/min are CASE expressions (GREATEST's handling of NULL differs
    /// between engines).
    pub fn to_sql(&self, var: &dyn Fn(&str) -> String) -> String {
        match self {
            Expr::Num(v) => sql_number(*v),
            Expr::Var(v) => var(v),
            Expr::Neg(a) => format!("(-{})", a.to_sql(var)),
            Expr::Bin(op, a, b) => {
                let (a, b) = (a.to_sql(var), b.to_sql(var));
                match op {
                    Op::Add => format!("({a} + {b})"),
                    Op::Sub => format!("({a} - {b})"),
                    Op::Mul => format!("({a} * {b})"),
                    Op::Div => format!("({a} / NULLIF({b}, 0))"),
                }
            }
            Expr::Call(f, a, b) => {
                let (a, b) = (a.to_sql(var), b.to_sql(var));
                match f {
                    Func::Max => format!("(CASE WHEN {a} >= {b} THEN {a} ELSE {b} END)"),
                    Func::Min => format!("(CASE WHEN {a} <= {b} THEN {a} ELSE {b} END)"),
                    Func::DRatio => format!("COALESCE({a} / NULLIF({b}, 0), 0)"),
                }
            }
            Expr::If(c, a, b) => format!(
                "(CASE WHEN {} THEN {} ELSE {} END)",
                c.to_sql(var),
                a.to_sql(var),
                b.to_sql(var)
            ),
        }
    }
}

/// A DOUBLE literal that every engine reads as such.
fn sql_number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v:e}").replace("e", "E")
    }
}

fn quotient_rule(a: &Expr, b: &Expr, x: &str, op: Op) -> Expr {
    let (da, db) = (a.derivative(x), b.derivative(x));
    let first = match &da {
        Expr::Num(v) if *v == 0.0 => Expr::Num(0.0),
        _ => Expr::Bin(op, Box::new(da), Box::new(b.clone())),
    };
    let second = match &db {
        Expr::Num(v) if *v == 0.0 => Expr::Num(0.0),
        _ => Expr::Bin(
            op,
            Box::new(mul(a.clone(), db)),
            Box::new(mul(b.clone(), b.clone())),
        ),
    };
    sub(first, second)
}

fn is(e: &Expr, v: f64) -> bool {
    matches!(e, Expr::Num(x) if *x == v)
}

fn neg(a: Expr) -> Expr {
    match a {
        Expr::Num(v) => Expr::Num(-v),
        Expr::Neg(inner) => *inner,
        a => Expr::Neg(Box::new(a)),
    }
}

fn add(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Num(x), Expr::Num(y)) => Expr::Num(x + y),
        _ if is(&a, 0.0) => b,
        _ if is(&b, 0.0) => a,
        _ => Expr::Bin(Op::Add, Box::new(a), Box::new(b)),
    }
}

fn sub(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Num(x), Expr::Num(y)) => Expr::Num(x - y),
        _ if is(&b, 0.0) => a,
        _ if is(&a, 0.0) => neg(b),
        _ => Expr::Bin(Op::Sub, Box::new(a), Box::new(b)),
    }
}

fn mul(a: Expr, b: Expr) -> Expr {
    match (&a, &b) {
        (Expr::Num(x), Expr::Num(y)) => Expr::Num(x * y),
        _ if is(&a, 0.0) || is(&b, 0.0) => Expr::Num(0.0),
        _ if is(&a, 1.0) => b,
        _ if is(&b, 1.0) => a,
        _ => Expr::Bin(Op::Mul, Box::new(a), Box::new(b)),
    }
}

fn if_(c: Cond, a: Expr, b: Expr) -> Expr {
    if a == b {
        a
    } else {
        Expr::If(Box::new(c), Box::new(a), Box::new(b))
    }
}

impl Cond {
    /// Parses a condition (a threshold).
    pub fn parse(text: &str) -> Result<Cond, ParseError> {
        let mut p = Parser {
            toks: lex(text)?,
            pos: 0,
            text,
        };
        let c = p.cond()?;
        p.done()?;
        Ok(c)
    }

    /// The names the condition refers to.
    pub fn vars(&self, out: &mut BTreeSet<String>) {
        match self {
            Cond::Cmp(_, a, b) => {
                a.vars(out);
                b.vars(out);
            }
            Cond::And(a, b) | Cond::Or(a, b) => {
                a.vars(out);
                b.vars(out);
            }
        }
    }

    /// Replaces names, as [`Expr::substitute`].
    pub fn substitute(&self, f: &dyn Fn(&str) -> Option<Expr>) -> Cond {
        match self {
            Cond::Cmp(op, a, b) => Cond::Cmp(*op, a.substitute(f), b.substitute(f)),
            Cond::And(a, b) => Cond::And(Box::new(a.substitute(f)), Box::new(b.substitute(f))),
            Cond::Or(a, b) => Cond::Or(Box::new(a.substitute(f)), Box::new(b.substitute(f))),
        }
    }

    /// Whether the condition holds; `None` when a value is missing.
    pub fn eval(&self, var: &dyn Fn(&str) -> Option<f64>) -> Option<bool> {
        Some(match self {
            Cond::Cmp(op, a, b) => {
                let (a, b) = (a.eval(var)?, b.eval(var)?);
                match op {
                    CmpOp::Gt => a > b,
                    CmpOp::Ge => a >= b,
                    CmpOp::Lt => a < b,
                    CmpOp::Le => a <= b,
                }
            }
            Cond::And(a, b) => a.eval(var)? && b.eval(var)?,
            Cond::Or(a, b) => a.eval(var)? || b.eval(var)?,
        })
    }

    /// Portable SQL, as [`Expr::to_sql`].
    pub fn to_sql(&self, var: &dyn Fn(&str) -> String) -> String {
        match self {
            Cond::Cmp(op, a, b) => {
                let op = match op {
                    CmpOp::Gt => ">",
                    CmpOp::Ge => ">=",
                    CmpOp::Lt => "<",
                    CmpOp::Le => "<=",
                };
                format!("({} {op} {})", a.to_sql(var), b.to_sql(var))
            }
            Cond::And(a, b) => format!("({} AND {})", a.to_sql(var), b.to_sql(var)),
            Cond::Or(a, b) => format!("({} OR {})", a.to_sql(var), b.to_sql(var)),
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Num(v) => write!(f, "{v}"),
            Expr::Var(v) => f.write_str(v),
            Expr::Neg(a) => write!(f, "-({a})"),
            Expr::Bin(op, a, b) => {
                let op = match op {
                    Op::Add => "+",
                    Op::Sub => "-",
                    Op::Mul => "*",
                    Op::Div => "/",
                };
                write!(f, "({a} {op} {b})")
            }
            Expr::Call(g, a, b) => {
                let g = match g {
                    Func::Max => "max",
                    Func::Min => "min",
                    Func::DRatio => "d_ratio",
                };
                write!(f, "{g}({a}, {b})")
            }
            Expr::If(_, a, b) => write!(f, "if(.., {a}, {b})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars<'a>(pairs: &'a [(&'a str, f64)]) -> impl Fn(&str) -> Option<f64> + 'a {
        move |n| pairs.iter().find(|p| p.0 == n).map(|p| p.1)
    }

    #[test]
    fn precedence_and_functions() {
        let e = Expr::parse("1 - a / b * 2 + max(c, 0) - d_ratio(a, 0)").unwrap();
        let v = e
            .eval(&vars(&[("a", 1.0), ("b", 4.0), ("c", -3.0)]))
            .unwrap();
        assert_eq!(v, 0.5);
        assert_eq!(
            Expr::parse("a / 0").unwrap().eval(&vars(&[("a", 1.0)])),
            None
        );
        assert_eq!(
            Expr::parse("0x10 + 1_000").unwrap().eval(&vars(&[])),
            Some(1016.0)
        );
        assert_eq!(Expr::parse("-(-2)").unwrap().eval(&vars(&[])), Some(2.0));
        let e = Expr::parse("if(r > 0, c / 2, c)").unwrap();
        assert_eq!(e.eval(&vars(&[("r", 1.0), ("c", 4.0)])), Some(2.0));
        assert_eq!(e.eval(&vars(&[("r", 0.0), ("c", 4.0)])), Some(4.0));
    }

    #[test]
    fn conditions() {
        let c = Cond::parse("r > 0.7 | h > 0.1 & p >= 1").unwrap();
        assert_eq!(
            c.eval(&vars(&[("r", 0.5), ("h", 0.2), ("p", 1.0)])),
            Some(true)
        );
        assert_eq!(
            c.eval(&vars(&[("r", 0.5), ("h", 0.2), ("p", 0.0)])),
            Some(false)
        );
        let c = Cond::parse("(a > 1 or b > 1) and c > 1").unwrap();
        assert_eq!(
            c.eval(&vars(&[("a", 2.0), ("b", 0.0), ("c", 0.0)])),
            Some(false)
        );
    }

    #[test]
    fn errors_name_the_column() {
        let e = Expr::parse("a + * b").unwrap_err();
        assert_eq!(e.column, 5);
        assert!(Expr::parse("foo(a, b)").is_err());
        assert!(Expr::parse("a $ b").is_err());
        assert!(Expr::parse("(a").is_err());
        assert!(Cond::parse("a").is_err());
    }

    #[test]
    fn derivatives_match_finite_differences() {
        let e = Expr::parse("max(1 - (f / (f + b + r) - d / s), 0) + d_ratio(b * r, f)").unwrap();
        let at = [("f", 3.0), ("b", 2.0), ("r", 5.0), ("d", 0.5), ("s", 10.0)];
        for (x, _) in at {
            let d = e.derivative(x).eval(&vars(&at)).unwrap();
            let h = 1e-6;
            let moved: Vec<(&str, f64)> = at
                .iter()
                .map(|&(n, v)| (n, if n == x { v + h } else { v }))
                .collect();
            let num = (e.eval(&vars(&moved)).unwrap() - e.eval(&vars(&at)).unwrap()) / h;
            assert!((d - num).abs() < 1e-4, "d/d{x}: {d} vs {num}");
        }
    }

    #[test]
    fn sql_is_portable_text() {
        let e = Expr::parse("max(a / b, 0) + d_ratio(a, b) * 0.5").unwrap();
        let s = e.to_sql(&|v| format!("t.{v}"));
        assert_eq!(
            s,
            "((CASE WHEN (t.a / NULLIF(t.b, 0)) >= 0.0 THEN (t.a / NULLIF(t.b, 0)) ELSE 0.0 END) \
             + (COALESCE(t.a / NULLIF(t.b, 0), 0) * 5E-1))"
        );
    }
}
