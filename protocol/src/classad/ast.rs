//! Expression trees, as the parser builds them and the evaluator walks them.
//!
//! Trees keep what was written (parentheses, the spelling of names) so that
//! unparsing gives back an equivalent text in HTCondor's canonical form.

use std::sync::Arc;

use super::ad::ClassAd;
use super::eval::Builtin;
use super::name::{Folded, Name};
use super::value::Value;

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `-x`
    Minus,
    /// `+x`
    Plus,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
}

/// Binary operators, in HTCondor's precedence groups (lowest first).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    Or,
    And,
    BitOr,
    BitXor,
    BitAnd,
    Eq,
    Ne,
    /// `=?=`, also spelled `is`.
    Is,
    /// `=!=`, also spelled `isnt`.
    Isnt,
    Lt,
    Le,
    Gt,
    Ge,
    Shl,
    /// `>>`: arithmetic shift right.
    Shr,
    /// `>>>`: logical shift right.
    Ushr,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

impl BinaryOp {
    /// Binding strength: larger binds tighter. All binary operators are
    /// left-associative.
    pub fn precedence(self) -> u8 {
        use BinaryOp::*;
        match self {
            Or => 1,
            And => 2,
            BitOr => 3,
            BitXor => 4,
            BitAnd => 5,
            Eq | Ne | Is | Isnt => 6,
            Lt | Le | Gt | Ge => 7,
            Shl | Shr | Ushr => 8,
            Add | Sub => 9,
            Mul | Div | Mod => 10,
        }
    }

    /// The spelling HTCondor unparses the operator with (`=?=` is `is`).
    pub fn symbol_canonical(self) -> &'static str {
        match self {
            BinaryOp::Is => "is",
            BinaryOp::Isnt => "isnt",
            other => other.symbol(),
        }
    }

    /// The operator's symbol.
    pub fn symbol(self) -> &'static str {
        use BinaryOp::*;
        match self {
            Or => "||",
            And => "&&",
            BitOr => "|",
            BitXor => "^",
            BitAnd => "&",
            Eq => "==",
            Ne => "!=",
            Is => "=?=",
            Isnt => "=!=",
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Shl => "<<",
            Shr => ">>",
            Ushr => ">>>",
            Add => "+",
            Sub => "-",
            Mul => "*",
            Div => "/",
            Mod => "%",
        }
    }
}

impl UnaryOp {
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Minus => "-",
            UnaryOp::Plus => "+",
            UnaryOp::Not => "!",
            UnaryOp::BitNot => "~",
        }
    }
}

/// A reference to an attribute by name: `name`, or `.name` (absolute: looked
/// up from the root ad of the evaluation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AttrRef {
    pub name: Name,
    pub key: Folded,
    pub absolute: bool,
}

impl AttrRef {
    /// A reference whose folded name is already known.
    pub fn with_key(name: Name, key: Folded, absolute: bool) -> AttrRef {
        AttrRef {
            name,
            key,
            absolute,
        }
    }

    pub fn new(name: Name, absolute: bool) -> AttrRef {
        AttrRef {
            name,
            key: name.folded(),
            absolute,
        }
    }
}

/// A call of a built-in function.
#[derive(Clone, Debug)]
pub struct Call {
    /// The name as written.
    pub name: Name,
    /// The function, or `None` for a name HTCondor does not define (such a
    /// call evaluates to `error`).
    pub func: Option<Builtin>,
    pub args: Box<[Expr]>,
}

/// An expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal value (never a list or ad: those keep their expressions).
    Literal(Value),
    /// `name` or `.name`.
    Attr(AttrRef),
    /// `base.name`, including `MY.name`, `TARGET.name` and `PARENT.name`.
    Select(Box<Expr>, AttrRef),
    /// `base[index]`.
    Index(Box<[Expr; 2]>),
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<[Expr; 2]>),
    /// `cond ? then : else`.
    Cond(Box<[Expr; 3]>),
    /// `a ?: b`: `a` unless it is undefined or error, else `b`.
    Elvis(Box<[Expr; 2]>),
    /// Parentheses, kept so unparsing shows what was written.
    Paren(Box<Expr>),
    Call(Box<Call>),
    /// `{ a, b, ... }`
    List(Box<[Expr]>),
    /// `[ a = 1; ... ]`
    Ad(Arc<ClassAd>),
}

impl Expr {
    pub fn binary(op: BinaryOp, left: Expr, right: Expr) -> Expr {
        Expr::Binary(op, Box::new([left, right]))
    }

    /// A list literal. A list of literals is a constant and becomes one
    /// literal value: evaluating it would build the same list every time
    /// (`quantize(TARGET.RequestCpus, {1})` is in every machine's
    /// Requirements). A relative-time literal evaluates to a real, so a list
    /// holding one is left to the evaluator.
    pub fn list(items: Vec<Expr>) -> Expr {
        let constant = items
            .iter()
            .all(|e| matches!(e, Expr::Literal(v) if !matches!(v, Value::RelTime(_))));
        if !constant {
            return Expr::List(items.into_boxed_slice());
        }
        let values: Vec<Value> = items
            .into_iter()
            .map(|e| match e {
                Expr::Literal(v) => v,
                _ => unreachable!("checked above"),
            })
            .collect();
        Expr::Literal(Value::List(values.into()))
    }

    pub fn attr(name: Name) -> Expr {
        Expr::Attr(AttrRef::new(name, false))
    }

    pub fn is_literal(&self) -> bool {
        matches!(self, Expr::Literal(_))
    }

    /// Structural equality of trees (names compared case-insensitively).
    pub fn same_as(&self, other: &Expr) -> bool {
        use Expr::*;
        match (self, other) {
            (Literal(a), Literal(b)) => a.identical(b),
            (Attr(a), Attr(b)) => a.key == b.key && a.absolute == b.absolute,
            (Select(a, x), Select(b, y)) => x.key == y.key && a.same_as(b),
            (Index(a), Index(b)) => a[0].same_as(&b[0]) && a[1].same_as(&b[1]),
            (Unary(o, a), Unary(p, b)) => o == p && a.same_as(b),
            (Binary(o, a), Binary(p, b)) => o == p && a[0].same_as(&b[0]) && a[1].same_as(&b[1]),
            (Cond(a), Cond(b)) => a.iter().zip(b.iter()).all(|(x, y)| x.same_as(y)),
            (Elvis(a), Elvis(b)) => a[0].same_as(&b[0]) && a[1].same_as(&b[1]),
            (Paren(a), Paren(b)) => a.same_as(b),
            (Call(a), Call(b)) => {
                a.name.same_as(b.name)
                    && a.args.len() == b.args.len()
                    && a.args.iter().zip(b.args.iter()).all(|(x, y)| x.same_as(y))
            }
            (List(a), List(b)) => {
                a.len() == b.len() && a.iter().zip(b.iter()).all(|(x, y)| x.same_as(y))
            }
            (Ad(a), Ad(b)) => a.same_as(b),
            _ => false,
        }
    }
}

impl From<Value> for Expr {
    fn from(v: Value) -> Expr {
        Expr::Literal(v)
    }
}
