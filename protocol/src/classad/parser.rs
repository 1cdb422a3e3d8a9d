//! The parser: text in HTCondor's ClassAd syntax to expression trees.
//!
//! Operator precedence (lowest first), as in HTCondor's parser:
//! `? :`, `||`, `&&`, `|`, `^`, `&`, `== != =?= =!= is isnt`,
//! `< <= > >=`, `<< >> >>>`, `+ -`, `* / %`, unary `- + ! ~`, the elvis
//! `?:`, then subscripts, `.` selection and calls. (HTCondor's elvis binds
//! tighter than any other operator: `-a ?: b` is `-(a ?: b)`.)

use std::fmt;
use std::sync::Arc;

use super::ad::ClassAd;
use super::ast::{AttrRef, BinaryOp, Call, Expr, UnaryOp};
use super::lexer::{LexError, Lexer, Pos, Tok};
use super::limits::{MAX_AD_ATTRS, MAX_ARGS, MAX_DEPTH, MAX_INPUT_LEN, MAX_LIST_LEN};
use super::name::{Folded, Name};
use super::value::Value;
use super::{functions, time};

/// A syntax error, with the 1-based line and column where it was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct ParseError {
    pub line: u32,
    pub column: u32,
    pub message: String,
}

impl ParseError {
    pub(crate) fn at(pos: Pos, message: impl Into<String>) -> ParseError {
        ParseError {
            line: pos.line,
            column: pos.column,
            message: message.into(),
        }
    }

    /// The same error, reported as if the parsed text began on `line`.
    pub fn shifted(mut self, lines: u32) -> ParseError {
        self.line += lines;
        self
    }
}

impl From<LexError> for ParseError {
    fn from(e: LexError) -> ParseError {
        ParseError::at(e.pos, e.message)
    }
}

/// Parses one expression; the whole text must be that expression.
pub fn parse_expr(text: &str) -> Result<Expr, ParseError> {
    let mut p = Parser::new(text)?;
    let (e, _) = p.expr(0)?;
    p.expect_eof()?;
    Ok(e)
}

/// Parses one ad in the new syntax, `[ name = expr; ... ]`.
pub fn parse_ad(text: &str) -> Result<ClassAd, ParseError> {
    let mut p = Parser::new(text)?;
    let ad = p.ad_literal()?;
    p.expect_eof()?;
    Ok(ad)
}

/// Parses a sequence of new-syntax ads, optionally separated by white space
/// or commas (as a JSON-like array of ads would be).
pub fn parse_ads(text: &str) -> Result<Vec<ClassAd>, ParseError> {
    let mut p = Parser::new(text)?;
    let mut ads = Vec::new();
    loop {
        if p.tok == Tok::Eof {
            return Ok(ads);
        }
        ads.push(p.ad_literal()?);
        if p.tok == Tok::Punct(",") {
            p.advance()?;
        }
    }
}

/// HTCondor reads an integer literal that does not fit in 64 bits as 0.
fn int_literal(magnitude: Option<u64>) -> i64 {
    magnitude.and_then(|m| i64::try_from(m).ok()).unwrap_or(0)
}

/// `-N` written directly: `-9223372036854775808` is the minimum integer.
fn negative_int_literal(magnitude: Option<u64>) -> i64 {
    match magnitude {
        Some(m) if m <= 1 << 63 => (m as i128).wrapping_neg() as i64,
        _ => 0,
    }
}

pub(crate) struct Parser<'a> {
    lexer: Lexer<'a>,
    tok: Tok<'a>,
    pos: Pos,
    /// Byte offset where the current token starts.
    start: usize,
}

impl fmt::Debug for Parser<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parser")
            .field("tok", &self.tok)
            .field("pos", &self.pos)
            .finish()
    }
}

type Parsed = Result<(Expr, u32), ParseError>;

impl<'a> Parser<'a> {
    pub(crate) fn new(text: &'a str) -> Result<Parser<'a>, ParseError> {
        if text.len() > MAX_INPUT_LEN {
            return Err(ParseError::at(
                Pos { line: 1, column: 1 },
                format!(
                    "input is {} bytes, more than the limit of {MAX_INPUT_LEN}",
                    text.len()
                ),
            ));
        }
        let mut lexer = Lexer::new(text);
        let (tok, pos) = lexer.next_token()?;
        let start = lexer.offset();
        Ok(Parser {
            lexer,
            tok,
            pos,
            start,
        })
    }

    fn advance(&mut self) -> Result<Tok<'a>, ParseError> {
        let (tok, pos) = self.lexer.next_token()?;
        self.start = self.lexer.offset();
        self.pos = pos;
        Ok(std::mem::replace(&mut self.tok, tok))
    }

    fn unexpected(&self, wanted: &str) -> ParseError {
        ParseError::at(
            self.pos,
            format!("expected {wanted} but found {}", self.tok.describe()),
        )
    }

    fn expect(&mut self, punct: &'static str) -> Result<(), ParseError> {
        if self.tok == Tok::Punct(punct) {
            self.advance()?;
            Ok(())
        } else {
            Err(self.unexpected(&format!("'{punct}'")))
        }
    }

    pub(crate) fn expect_eof(&self) -> Result<(), ParseError> {
        if self.tok == Tok::Eof {
            Ok(())
        } else {
            Err(self.unexpected("end of input"))
        }
    }

    fn check_depth(&self, depth: u32) -> Result<(), ParseError> {
        if depth > MAX_DEPTH {
            Err(ParseError::at(
                self.pos,
                format!("expression nested more than {MAX_DEPTH} levels deep"),
            ))
        } else {
            Ok(())
        }
    }

    fn interned(&self, text: &str) -> Result<(Name, Folded), ParseError> {
        Name::intern(text).map_err(|e| ParseError::at(self.pos, e.to_string()))
    }

    fn attr_ref(&self, text: &str, absolute: bool) -> Result<AttrRef, ParseError> {
        let (name, key) = self.interned(text)?;
        Ok(AttrRef::with_key(name, key, absolute))
    }

    /// expr := or-expr [ '?' expr ':' expr | '?:' expr ]
    pub(crate) fn expr(&mut self, depth: u32) -> Parsed {
        self.check_depth(depth)?;
        // Nesting is bounded by MAX_DEPTH; check the stack every 16 levels
        // (not at the top: a few levels fit anywhere, and the check reads a
        // thread-local, which shows when parsing millions of attributes).
        if depth % 16 == 15 {
            stacker::maybe_grow(256 * 1024, 4 << 20, || self.conditional(depth))
        } else {
            self.conditional(depth)
        }
    }

    fn conditional(&mut self, depth: u32) -> Parsed {
        let (cond, d0) = self.binary(1, depth)?;
        match self.tok {
            Tok::Punct("?") => {
                self.advance()?;
                let (then, d1) = self.expr(depth + 1)?;
                self.expect(":")?;
                let (els, d2) = self.expr(depth + 1)?;
                let d = 1 + d0.max(d1).max(d2);
                self.check_depth(d)?;
                Ok((Expr::Cond(Box::new([cond, then, els])), d))
            }
            _ => Ok((cond, d0)),
        }
    }

    fn binary_op(&self) -> Option<BinaryOp> {
        use BinaryOp::*;
        Some(match &self.tok {
            Tok::Punct(p) => match *p {
                "||" => Or,
                "&&" => And,
                "|" => BitOr,
                "^" => BitXor,
                "&" => BitAnd,
                "==" => Eq,
                "!=" => Ne,
                "=?=" => Is,
                "=!=" => Isnt,
                "<" => Lt,
                "<=" => Le,
                ">" => Gt,
                ">=" => Ge,
                "<<" => Shl,
                ">>" => Shr,
                ">>>" => Ushr,
                "+" => Add,
                "-" => Sub,
                "*" => Mul,
                "/" => Div,
                "%" => Mod,
                _ => return None,
            },
            Tok::Is => Is,
            Tok::Isnt => Isnt,
            _ => return None,
        })
    }

    /// Precedence climbing over the left-associative binary operators.
    fn binary(&mut self, min_prec: u8, depth: u32) -> Parsed {
        let (mut left, mut left_depth) = self.unary(depth)?;
        while let Some(op) = self.binary_op() {
            let prec = op.precedence();
            if prec < min_prec {
                break;
            }
            self.advance()?;
            let (right, right_depth) = self.binary(prec + 1, depth + 1)?;
            left_depth = 1 + left_depth.max(right_depth);
            self.check_depth(left_depth)?;
            left = Expr::binary(op, left, right);
        }
        Ok((left, left_depth))
    }

    fn unary(&mut self, depth: u32) -> Parsed {
        self.check_depth(depth)?;
        let op = match self.tok {
            Tok::Punct("-") => UnaryOp::Minus,
            Tok::Punct("+") => UnaryOp::Plus,
            Tok::Punct("!") => UnaryOp::Not,
            Tok::Punct("~") => UnaryOp::BitNot,
            _ => return self.elvis(depth),
        };
        let op_pos = self.pos;
        self.advance()?;
        // HTCondor folds a minus written directly before a number (no space)
        // into a negative literal: `-1` unparses as `-1`, `- 1` as ` -1`.
        let adjacent = self.pos.line == op_pos.line && self.pos.column == op_pos.column + 1;
        if op == UnaryOp::Minus && adjacent {
            match self.tok {
                Tok::Int(magnitude) => {
                    self.advance()?;
                    let v = negative_int_literal(magnitude);
                    let (e, d) = self.postfix_ops(Expr::Literal(Value::Int(v)), 1, depth)?;
                    return self.elvis_after(e, d, depth);
                }
                Tok::Real(r) => {
                    self.advance()?;
                    let (e, d) = self.postfix_ops(Expr::Literal(Value::Real(-r)), 1, depth)?;
                    return self.elvis_after(e, d, depth);
                }
                _ => {}
            }
        }
        let (operand, d) = self.unary(depth + 1)?;
        Ok((Expr::Unary(op, Box::new(operand)), d + 1))
    }

    /// `postfix [ '?:' elvis ]`. HTCondor's grammar puts the elvis operator
    /// above every unary and binary operator: `-a ?: b` is `-(a ?: b)` and
    /// `a ?: b + 1` is `(a ?: b) + 1`; its right side cannot start with a
    /// unary operator (except a negative number).
    fn elvis(&mut self, depth: u32) -> Parsed {
        let (left, dl) = self.postfix(depth)?;
        self.elvis_after(left, dl, depth)
    }

    /// The optional `?: elvis` after an already parsed left side.
    fn elvis_after(&mut self, left: Expr, dl: u32, depth: u32) -> Parsed {
        if self.tok != Tok::Punct("?:") {
            return Ok((left, dl));
        }
        self.advance()?;
        let (right, dr) = if self.tok == Tok::Punct("-") && self.lexer.next_byte_is_digit() {
            self.unary(depth + 1)?
        } else if matches!(self.tok, Tok::Punct("-" | "+" | "!" | "~")) {
            return Err(ParseError::at(
                self.pos,
                "HTCondor does not accept a unary operator right after '?:'; put it in parentheses",
            ));
        } else {
            self.elvis(depth + 1)?
        };
        let d = 1 + dl.max(dr);
        self.check_depth(d)?;
        Ok((Expr::Elvis(Box::new([left, right])), d))
    }

    fn postfix(&mut self, depth: u32) -> Parsed {
        let (e, d) = self.primary(depth)?;
        self.postfix_ops(e, d, depth)
    }

    fn postfix_ops(&mut self, mut e: Expr, mut d: u32, depth: u32) -> Parsed {
        loop {
            match self.tok {
                Tok::Punct("[") => {
                    self.advance()?;
                    let (index, di) = self.expr(depth + 1)?;
                    self.expect("]")?;
                    d = 1 + d.max(di);
                    e = Expr::Index(Box::new([e, index]));
                }
                Tok::Punct(".") => {
                    self.advance()?;
                    // HTCondor reads `a..b` as `a.b`.
                    if self.tok == Tok::Punct(".") {
                        self.advance()?;
                    }
                    let r = match self.advance()? {
                        Tok::Ident { text, .. } => self.attr_ref(&text, false)?,
                        other => {
                            return Err(ParseError::at(
                                self.pos,
                                format!(
                                    "expected an attribute name after '.' but found {}",
                                    other.describe()
                                ),
                            ))
                        }
                    };
                    d += 1;
                    e = Expr::Select(Box::new(e), r);
                }
                _ => return Ok((e, d)),
            }
            self.check_depth(d)?;
        }
    }

    fn primary(&mut self, depth: u32) -> Parsed {
        let pos = self.pos;
        let tok = self.advance()?;
        let e = match tok {
            Tok::Int(magnitude) => Expr::Literal(Value::Int(int_literal(magnitude))),
            Tok::Real(r) => Expr::Literal(Value::Real(r)),
            Tok::Str(s) => Expr::Literal(Value::String(Arc::from(&*s))),
            Tok::True => Expr::Literal(Value::Bool(true)),
            Tok::False => Expr::Literal(Value::Bool(false)),
            Tok::Undefined => Expr::Literal(Value::Undefined),
            Tok::Error => Expr::Literal(Value::Error),
            Tok::Ident { text, quoted } => {
                if !quoted && self.tok == Tok::Punct("(") {
                    return self.call(&text, depth);
                }
                Expr::Attr(self.attr_ref(&text, false)?)
            }
            Tok::Punct(".") => match self.advance()? {
                Tok::Ident { text, .. } => Expr::Attr(self.attr_ref(&text, true)?),
                other => {
                    return Err(ParseError::at(
                        self.pos,
                        format!(
                            "expected an attribute name after '.' but found {}",
                            other.describe()
                        ),
                    ))
                }
            },
            Tok::Punct("(") => {
                let (inner, d) = self.expr(depth + 1)?;
                self.expect(")")?;
                return Ok((Expr::Paren(Box::new(inner)), d + 1));
            }
            Tok::Punct("{") => return self.list(depth),
            Tok::Punct("[") => {
                let ad = self.ad_body(depth + 1)?;
                return Ok((Expr::Ad(Arc::new(ad)), 1));
            }
            other => {
                return Err(ParseError::at(
                    pos,
                    format!("expected an expression but found {}", other.describe()),
                ))
            }
        };
        Ok((e, 1))
    }

    fn call(&mut self, name: &str, depth: u32) -> Parsed {
        self.expect("(")?;
        let (args, d) = self.comma_separated(")", MAX_ARGS, "arguments", depth)?;
        self.expect(")")?;
        let (name, key) = self.interned(name)?;
        let folded = key.as_str();
        // Like HTCondor, fold absTime("...") and relTime("...") of a literal
        // string into a time literal.
        // A string that is not a time is a syntax error, as in HTCondor.
        if let [Expr::Literal(Value::String(s))] = args.as_slice() {
            match folded {
                "abstime" => {
                    return match time::parse_abs_time(s) {
                        Some(t) => Ok((Expr::Literal(Value::AbsTime(t)), 1)),
                        None => Err(ParseError::at(
                            self.pos,
                            format!("absTime: \"{s}\" is not an ISO 8601 time"),
                        )),
                    };
                }
                "reltime" => {
                    return match time::parse_rel_time(s) {
                        Some(t) => Ok((Expr::Literal(Value::RelTime(t)), 1)),
                        None => Err(ParseError::at(
                            self.pos,
                            format!("relTime: \"{s}\" is not a relative time"),
                        )),
                    };
                }
                _ => {}
            }
        }
        let func = functions::lookup(folded);
        Ok((
            Expr::Call(Box::new(Call {
                name,
                func,
                args: args.into_boxed_slice(),
            })),
            d + 1,
        ))
    }

    fn list(&mut self, depth: u32) -> Parsed {
        let (items, d) = self.comma_separated("}", MAX_LIST_LEN, "list elements", depth)?;
        self.expect("}")?;
        Ok((Expr::list(items), d + 1))
    }

    /// Expressions separated by commas, up to (not including) `close`; at
    /// most `limit` of them. Returns them with their greatest depth.
    fn comma_separated(
        &mut self,
        close: &'static str,
        limit: usize,
        what: &str,
        depth: u32,
    ) -> Result<(Vec<Expr>, u32), ParseError> {
        let mut items = Vec::new();
        let mut d = 0;
        if self.tok == Tok::Punct(close) {
            return Ok((items, d));
        }
        loop {
            let (e, de) = self.expr(depth + 1)?;
            d = d.max(de);
            items.push(e);
            if items.len() > limit {
                return Err(ParseError::at(
                    self.pos,
                    format!("more than {limit} {what}"),
                ));
            }
            if self.tok == Tok::Punct(",") {
                self.advance()?;
            } else {
                return Ok((items, d));
            }
        }
    }

    /// `[ ... ]`, at the current token.
    pub(crate) fn ad_literal(&mut self) -> Result<ClassAd, ParseError> {
        self.expect("[")?;
        self.ad_body(1)
    }

    /// The attributes of an ad after its `[`, through the closing `]`.
    fn ad_body(&mut self, depth: u32) -> Result<ClassAd, ParseError> {
        self.check_depth(depth)?;
        let mut ad = ClassAd::new();
        loop {
            let (name, key) = match &self.tok {
                Tok::Punct("]") => {
                    self.advance()?;
                    // Parsed ads are mostly held, not grown: a view of
                    // thousands keeps each one as long as it lives.
                    ad.shrink_to_fit();
                    return Ok(ad);
                }
                Tok::Ident { text, .. } => self.interned(text)?,
                _ => return Err(self.unexpected("an attribute name or ']'")),
            };
            self.advance()?;
            self.expect("=")?;
            let (e, _) = self.expr(depth + 1)?;
            ad.insert_keyed(name, key, e);
            if ad.len() > MAX_AD_ATTRS {
                return Err(ParseError::at(
                    self.pos,
                    format!("ad has more than {MAX_AD_ATTRS} attributes"),
                ));
            }
            match self.tok {
                Tok::Punct(";") => {
                    while self.tok == Tok::Punct(";") {
                        self.advance()?;
                    }
                }
                Tok::Punct("]") => {}
                _ => return Err(self.unexpected("';' or ']'")),
            }
        }
    }
}
