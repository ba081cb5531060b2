//! A small arithmetic expression language for case files: fields such as the depth H or the
//! initial layer thicknesses are given as functions of the cell barycentre, e.g.
//! `H = "1 - 1.5*exp(-x^2 - y^2)"`, `h1 = "if(sqrt(x^2 + y^2) > 1.5, 4.0, 0.5)"`,
//! `h2 = "H - h1"`.
//!
//! Grammar (usual precedence, `^` right-associative and above unary minus):
//! `expr := or; or := and ('||' and)*; and := cmp ('&&' cmp)*;
//! cmp := sum (('<'|'<='|'>'|'>='|'=='|'!=') sum)?; sum := prod (('+'|'-') prod)*;
//! prod := unary (('*'|'/') unary)*; unary := '-' unary | pow; pow := atom ('^' unary)?;
//! atom := number | name | name '(' args ')' | '(' expr ')'`.
//! Comparisons give 1 or 0; `if(c, a, b)` is a when c ≠ 0. Functions: exp, ln, log10, sqrt,
//! abs, sin, cos, tan, tanh, atan2, min, max, floor, ceil, if. Constants: pi.
//! Size and nesting are bounded ([`MAX_TOKENS`], [`MAX_NESTING`]) so that parsing, evaluating
//! and dropping the recursive tree cannot overflow the stack.

use crate::error::{Error, Result};

#[derive(Clone, Debug, PartialEq)]
enum Node {
    Num(f64),
    Var(usize),
    Neg(Box<Node>),
    Bin(char, Box<Node>, Box<Node>),
    Cmp(&'static str, Box<Node>, Box<Node>),
    Call(&'static str, Vec<Node>),
}

/// A parsed expression over a fixed list of variable names.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    root: Node,
    text: String,
}

const FUNCTIONS: &[(&str, usize)] = &[
    ("exp", 1),
    ("ln", 1),
    ("log10", 1),
    ("sqrt", 1),
    ("abs", 1),
    ("sin", 1),
    ("cos", 1),
    ("tan", 1),
    ("tanh", 1),
    ("floor", 1),
    ("ceil", 1),
    ("atan2", 2),
    ("min", 2),
    ("max", 2),
    ("if", 3),
];

/// Most tokens in one expression (a chain of n terms is a tree n deep).
pub const MAX_TOKENS: usize = 2000;
/// Most nested parentheses, unary signs, powers and calls.
pub const MAX_NESTING: usize = 64;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Num(f64),
    Name(String),
    Op(&'static str),
}

fn tokenize(s: &str) -> std::result::Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    const OPS: &[&str] = &[
        "<=", ">=", "==", "!=", "&&", "||", "<", ">", "+", "-", "*", "/", "^", "(", ")", ",",
    ];
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || c == '.' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_digit() || b[i] == b'.') {
                i += 1;
            }
            if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && (b[j] as char).is_ascii_digit() {
                    i = j;
                    while i < b.len() && (b[i] as char).is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            let t = &s[start..i];
            let v: f64 = t.parse().map_err(|_| format!("bad number '{t}'"))?;
            out.push(Tok::Num(v));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let start = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Name(s[start..i].to_string()));
        } else {
            let op = OPS
                .iter()
                .find(|op| s[i..].starts_with(**op))
                .ok_or_else(|| {
                    let ch = s[i..].chars().next().unwrap_or(c);
                    let hint = if ch == '\u{2212}' {
                        " (a Unicode minus: use '-')"
                    } else {
                        ""
                    };
                    format!(
                        "unexpected character '{ch}' (U+{:04X}) at position {}{hint}",
                        ch as u32,
                        s[..i].chars().count() + 1
                    )
                })?;
            out.push(Tok::Op(op));
            i += op.len();
        }
        if out.len() > MAX_TOKENS {
            return Err(format!("more than {MAX_TOKENS} tokens"));
        }
    }
    Ok(out)
}

struct Parser<'a> {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
    vars: &'a [&'a str],
}

impl Parser<'_> {
    fn peek_op(&self) -> Option<&'static str> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(o)) => Some(o),
            _ => None,
        }
    }
    fn eat(&mut self, op: &str) -> bool {
        if self.peek_op() == Some(op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    fn expect(&mut self, op: &str) -> std::result::Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected '{op}'"))
        }
    }
    fn or(&mut self) -> std::result::Result<Node, String> {
        let mut l = self.and()?;
        while self.eat("||") {
            l = Node::Cmp("||", Box::new(l), Box::new(self.and()?));
        }
        Ok(l)
    }
    fn and(&mut self) -> std::result::Result<Node, String> {
        let mut l = self.cmp()?;
        while self.eat("&&") {
            l = Node::Cmp("&&", Box::new(l), Box::new(self.cmp()?));
        }
        Ok(l)
    }
    fn cmp(&mut self) -> std::result::Result<Node, String> {
        let l = self.sum()?;
        for op in ["<=", ">=", "==", "!=", "<", ">"] {
            if self.eat(op) {
                return Ok(Node::Cmp(op, Box::new(l), Box::new(self.sum()?)));
            }
        }
        Ok(l)
    }
    fn sum(&mut self) -> std::result::Result<Node, String> {
        let mut l = self.prod()?;
        loop {
            if self.eat("+") {
                l = Node::Bin('+', Box::new(l), Box::new(self.prod()?));
            } else if self.eat("-") {
                l = Node::Bin('-', Box::new(l), Box::new(self.prod()?));
            } else {
                return Ok(l);
            }
        }
    }
    fn prod(&mut self) -> std::result::Result<Node, String> {
        let mut l = self.unary()?;
        loop {
            if self.eat("*") {
                l = Node::Bin('*', Box::new(l), Box::new(self.unary()?));
            } else if self.eat("/") {
                l = Node::Bin('/', Box::new(l), Box::new(self.unary()?));
            } else {
                return Ok(l);
            }
        }
    }
    fn unary(&mut self) -> std::result::Result<Node, String> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(format!("nested more than {MAX_NESTING} levels deep"));
        }
        let node = self.unary_inner();
        self.depth -= 1;
        node
    }
    fn unary_inner(&mut self) -> std::result::Result<Node, String> {
        if self.eat("-") {
            return Ok(Node::Neg(Box::new(self.unary()?)));
        }
        if self.eat("+") {
            return self.unary();
        }
        let base = self.atom()?;
        if self.eat("^") {
            return Ok(Node::Bin('^', Box::new(base), Box::new(self.unary()?)));
        }
        Ok(base)
    }
    fn atom(&mut self) -> std::result::Result<Node, String> {
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Num(v)) => {
                self.pos += 1;
                Ok(Node::Num(v))
            }
            Some(Tok::Name(n)) => {
                self.pos += 1;
                if self.eat("(") {
                    let (fname, arity) = FUNCTIONS
                        .iter()
                        .find(|(f, _)| *f == n)
                        .copied()
                        .ok_or_else(|| {
                            format!(
                                "unknown function '{n}' (known: {})",
                                FUNCTIONS.iter().map(|f| f.0).collect::<Vec<_>>().join(", ")
                            )
                        })?;
                    let mut args = vec![self.or()?];
                    while self.eat(",") {
                        args.push(self.or()?);
                    }
                    self.expect(")")?;
                    if args.len() != arity {
                        return Err(format!(
                            "{fname}() takes {arity} argument(s), got {}",
                            args.len()
                        ));
                    }
                    return Ok(Node::Call(fname, args));
                }
                if n == "pi" {
                    return Ok(Node::Num(std::f64::consts::PI));
                }
                self.vars
                    .iter()
                    .position(|v| *v == n)
                    .map(Node::Var)
                    .ok_or_else(|| {
                        format!(
                            "unknown variable '{n}' (available here: {})",
                            self.vars.join(", ")
                        )
                    })
            }
            Some(Tok::Op("(")) => {
                self.pos += 1;
                let e = self.or()?;
                self.expect(")")?;
                Ok(e)
            }
            Some(Tok::Op(o)) => Err(format!("unexpected '{o}'")),
            None => Err("unexpected end of expression".into()),
        }
    }
}

fn eval(n: &Node, vals: &[f64]) -> f64 {
    match n {
        Node::Num(v) => *v,
        Node::Var(i) => vals[*i],
        Node::Neg(a) => -eval(a, vals),
        Node::Bin(op, a, b) => {
            let (a, b) = (eval(a, vals), eval(b, vals));
            match op {
                '+' => a + b,
                '-' => a - b,
                '*' => a * b,
                '/' => a / b,
                _ => a.powf(b),
            }
        }
        Node::Cmp(op, a, b) => {
            let (a, b) = (eval(a, vals), eval(b, vals));
            let t = match *op {
                "<" => a < b,
                "<=" => a <= b,
                ">" => a > b,
                ">=" => a >= b,
                "==" => a == b,
                "!=" => a != b,
                "&&" => a != 0.0 && b != 0.0,
                _ => a != 0.0 || b != 0.0,
            };
            if t {
                1.0
            } else {
                0.0
            }
        }
        Node::Call(f, args) => {
            let a = |i: usize| eval(&args[i], vals);
            match *f {
                "exp" => a(0).exp(),
                "ln" => a(0).ln(),
                "log10" => a(0).log10(),
                "sqrt" => a(0).sqrt(),
                "abs" => a(0).abs(),
                "sin" => a(0).sin(),
                "cos" => a(0).cos(),
                "tan" => a(0).tan(),
                "tanh" => a(0).tanh(),
                "floor" => a(0).floor(),
                "ceil" => a(0).ceil(),
                "atan2" => a(0).atan2(a(1)),
                "min" => a(0).min(a(1)),
                "max" => a(0).max(a(1)),
                _ => {
                    if a(0) != 0.0 {
                        a(1)
                    } else {
                        a(2)
                    }
                }
            }
        }
    }
}

impl Expr {
    /// Parse `text`; `vars` are the variable names it may use (values passed to [`Expr::eval`]
    /// in the same order).
    pub fn parse(text: &str, vars: &[&str]) -> Result<Expr> {
        let shown: String = text.chars().take(60).collect();
        let more = if shown.len() < text.len() { "..." } else { "" };
        let fail = |m: String| Error::Invalid(format!("expression '{shown}{more}': {m}"));
        let toks = tokenize(text).map_err(fail)?;
        let mut p = Parser {
            toks,
            pos: 0,
            depth: 0,
            vars,
        };
        let root = p.or().map_err(fail)?;
        if p.pos != p.toks.len() {
            return Err(fail(format!(
                "unexpected trailing input after token {}",
                p.pos
            )));
        }
        Ok(Expr {
            root,
            text: text.to_string(),
        })
    }

    /// A constant expression.
    pub fn constant(v: f64) -> Expr {
        Expr {
            root: Node::Num(v),
            text: format!("{v}"),
        }
    }

    /// Value for variable values `vals` (ordered as the `vars` given to [`Expr::parse`]).
    pub fn eval(&self, vals: &[f64]) -> f64 {
        eval(&self.root, vals)
    }

    /// The source text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn precedence_functions_and_comparisons() -> Result<()> {
        let v = ["x", "y"];
        let e = |s: &str, x: f64, y: f64| Expr::parse(s, &v).map(|e| e.eval(&[x, y]));
        assert_eq!(e("1 + 2 * 3", 0.0, 0.0)?, 7.0);
        assert_eq!(e("-x^2", 3.0, 0.0)?, -9.0);
        assert_eq!(e("2^3^2", 0.0, 0.0)?, 512.0);
        assert_eq!(e("if(sqrt(x^2 + y^2) > 1.5, 4.0, 0.5)", 1.0, 1.0)?, 0.5);
        assert_eq!(e("if(x >= 0, 4, 0.5)", 0.0, 0.0)?, 4.0);
        assert!((e("1 - 1.5*exp(-x^2 - y^2)", 0.0, 0.0)? + 0.5).abs() < 1e-15);
        assert_eq!(e("max(x, y) * 1e-1", 2.0, 5.0)?, 0.5);
        assert_eq!(e("x < 1 && y < 1", 0.0, 2.0)?, 0.0);
        Ok(())
    }

    #[test]
    fn errors_name_the_problem() {
        let v = ["x"];
        let msg = |s: &str| {
            Expr::parse(s, &v)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default()
        };
        assert!(msg("z + 1").contains("unknown variable 'z'"));
        assert!(msg("foo(x)").contains("unknown function 'foo'"));
        assert!(msg("min(x)").contains("takes 2"));
        assert!(msg("(x + 1").contains("expected ')'"));
        assert!(msg("x $ 2").contains("unexpected character"));
        assert!(
            msg("1 \u{2212} x").contains("Unicode minus"),
            "{}",
            msg("1 \u{2212} x")
        );
    }

    /// Deep nesting and long chains once overflowed the stack (abort); now they are errors.
    #[test]
    fn size_and_nesting_are_bounded() {
        let v = ["x"];
        let nest =
            |open: &str, n: usize, close: &str| format!("{}x{}", open.repeat(n), close.repeat(n));
        for (s, want) in [
            (nest("(", 10_000, ")"), "tokens"),
            (nest("-", 30_000, ""), "tokens"),
            (vec!["1"; 200_000].join("+"), "tokens"),
            (nest("(", 100, ")"), "nested"),
            (nest("-", 100, ""), "nested"),
            (nest("sqrt(", 100, ")"), "nested"),
        ] {
            let msg = Expr::parse(&s, &v)
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert!(msg.contains(want) && msg.len() < 200, "{msg}");
        }
        let ok = format!(
            "{}x{}",
            "(".repeat(MAX_NESTING - 1),
            ")".repeat(MAX_NESTING - 1)
        );
        assert_eq!(Expr::parse(&ok, &v).map(|e| e.eval(&[2.0])).ok(), Some(2.0));
    }
}
