//! The operators' semantics, as HTCondor's ClassAd library defines them.
//!
//! Strict operators yield `error` if either side is `error`, else
//! `undefined` if either side is `undefined`. Booleans count as the integers 0
//! and 1 in arithmetic and comparison; numbers count as booleans (non-zero is
//! true) in the logical operators. Integer arithmetic wraps; a real result
//! that overflows to infinity is `error`.

use std::cmp::Ordering;

use super::ast::{BinaryOp, UnaryOp};
use super::value::{AbsTime, Value};

/// The truth of a value for `&&`, `||`, `!` and `?:`: `Ok(None)` for
/// undefined, `Err` for error and for values that are not booleans or
/// numbers.
pub(crate) fn truth(v: &Value) -> Result<Option<bool>, ()> {
    match v {
        Value::Bool(b) => Ok(Some(*b)),
        Value::Int(i) => Ok(Some(*i != 0)),
        Value::Real(r) => Ok(Some(*r != 0.0)),
        Value::Undefined => Ok(None),
        _ => Err(()),
    }
}

pub(crate) fn unary(op: UnaryOp, v: Value) -> Value {
    match (op, v) {
        (_, Value::Error) => Value::Error,
        (_, Value::Undefined) => Value::Undefined,
        (UnaryOp::Not, v) => match truth(&v) {
            Ok(Some(b)) => Value::Bool(!b),
            Ok(None) => Value::Undefined,
            Err(()) => Value::Error,
        },
        (UnaryOp::Minus, Value::Int(i)) => Value::Int(i.wrapping_neg()),
        (UnaryOp::Minus, Value::Real(r)) => Value::Real(-r),
        (UnaryOp::Minus, Value::RelTime(r)) => Value::RelTime(-r),
        (UnaryOp::Plus, v @ (Value::Int(_) | Value::Real(_) | Value::RelTime(_))) => v,
        (UnaryOp::BitNot, Value::Int(i)) => Value::Int(!i),
        _ => Value::Error,
    }
}

/// A number for arithmetic: booleans are 0 and 1.
#[derive(Clone, Copy)]
enum Num {
    Int(i64),
    Real(f64),
}

/// A number for time arithmetic: booleans do not count.
fn strict_num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(*i)),
        Value::Real(r) => Some(Num::Real(*r)),
        _ => None,
    }
}

fn num(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::Int(*i)),
        Value::Real(r) => Some(Num::Real(*r)),
        Value::Bool(b) => Some(Num::Int(*b as i64)),
        _ => None,
    }
}

/// HTCondor turns a result of positive infinity (overflow, division by
/// zero) into error; negative infinity and NaN pass through.
fn real_result(r: f64) -> Value {
    if r == f64::INFINITY {
        Value::Error
    } else {
        Value::Real(r)
    }
}

pub(crate) fn binary(op: BinaryOp, a: &Value, b: &Value) -> Value {
    use BinaryOp::*;
    match op {
        Is => {
            return match is_identical(a, b) {
                Some(same) => Value::Bool(same),
                None => Value::Error,
            }
        }
        Isnt => {
            return match is_identical(a, b) {
                Some(same) => Value::Bool(!same),
                None => Value::Error,
            }
        }
        _ => {}
    }
    if a.is_error() || b.is_error() {
        return Value::Error;
    }
    if a.is_undefined() || b.is_undefined() {
        return Value::Undefined;
    }
    match op {
        Add | Sub | Mul | Div | Mod => arithmetic(op, a, b),
        Eq | Ne | Lt | Le | Gt | Ge => comparison(op, a, b),
        BitAnd | BitOr | BitXor | Shl | Shr | Ushr => bitwise(op, a, b),
        And | Or | Is | Isnt => unreachable!("handled by the evaluator or above"),
    }
}

/// `=?=`: same type and value. Lists and ads cannot be compared this way
/// (HTCondor yields error).
fn is_identical(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::List(_), Value::List(_)) | (Value::Ad(_), Value::Ad(_)) => None,
        _ => Some(a.identical(b)),
    }
}

fn arithmetic(op: BinaryOp, a: &Value, b: &Value) -> Value {
    use BinaryOp::*;
    // Times first.
    match (op, a, b) {
        (Add, Value::AbsTime(t), Value::RelTime(r))
        | (Add, Value::RelTime(r), Value::AbsTime(t)) => return abs_time_add(*t, *r),
        (Sub, Value::AbsTime(t), Value::RelTime(r)) => return abs_time_add(*t, -*r),
        (Sub, Value::AbsTime(x), Value::AbsTime(y)) => {
            return Value::RelTime((x.secs - y.secs) as f64)
        }
        (Add, Value::RelTime(x), Value::RelTime(y)) => return rel(x + y),
        (Sub, Value::RelTime(x), Value::RelTime(y)) => return rel(x - y),
        (Mul, Value::RelTime(x), n) | (Mul, n, Value::RelTime(x)) => {
            return match strict_num(n) {
                Some(n) => rel(x * as_f64(n)),
                None => Value::Error,
            }
        }
        (Div, Value::RelTime(x), n) => {
            return match strict_num(n) {
                Some(n) => rel(x / as_f64(n)),
                None => Value::Error,
            }
        }
        (_, Value::AbsTime(_) | Value::RelTime(_), _)
        | (_, _, Value::AbsTime(_) | Value::RelTime(_)) => return Value::Error,
        _ => {}
    }
    let (Some(x), Some(y)) = (num(a), num(b)) else {
        return Value::Error;
    };
    match (x, y) {
        (Num::Int(x), Num::Int(y)) => match op {
            Add => Value::Int(x.wrapping_add(y)),
            Sub => Value::Int(x.wrapping_sub(y)),
            Mul => Value::Int(x.wrapping_mul(y)),
            Div => match y {
                0 => Value::Error,
                -1 if x == i64::MIN => Value::Int(i64::MAX),
                _ => Value::Int(x / y),
            },
            Mod => match y {
                0 => Value::Error,
                -1 => Value::Int(0),
                _ => Value::Int(x % y),
            },
            _ => unreachable!(),
        },
        (x, y) => {
            let (x, y) = (as_f64(x), as_f64(y));
            match op {
                Add => real_result(x + y),
                Sub => real_result(x - y),
                Mul => real_result(x * y),
                Div => real_result(x / y),
                // HTCondor does not define % on reals.
                Mod => Value::Error,
                _ => unreachable!(),
            }
        }
    }
}

/// Relative-time arithmetic is plain floating point in HTCondor: dividing
/// by zero gives an infinite relative time, not error.
fn rel(r: f64) -> Value {
    Value::RelTime(r)
}

fn abs_time_add(t: AbsTime, r: f64) -> Value {
    let secs = t.secs as f64 + r;
    if !secs.is_finite() {
        return Value::Error;
    }
    Value::AbsTime(AbsTime {
        secs: secs as i64,
        offset: t.offset,
    })
}

fn as_f64(n: Num) -> f64 {
    match n {
        Num::Int(i) => i as f64,
        Num::Real(r) => r,
    }
}

fn comparison(op: BinaryOp, a: &Value, b: &Value) -> Value {
    use BinaryOp::*;
    let ord = match (a, b) {
        (Value::String(x), Value::String(y)) => Some(cmp_ignore_case(x, y)),
        (Value::AbsTime(x), Value::AbsTime(y)) => Some(x.secs.cmp(&y.secs)),
        (Value::RelTime(x), Value::RelTime(y)) => x.partial_cmp(y),
        _ => match (num(a), num(b)) {
            (Some(Num::Int(x)), Some(Num::Int(y))) => Some(x.cmp(&y)),
            (Some(x), Some(y)) => as_f64(x).partial_cmp(&as_f64(y)),
            _ => return Value::Error,
        },
    };
    let Some(ord) = ord else {
        // A NaN on either side: only != holds.
        return Value::Bool(op == Ne);
    };
    Value::Bool(match op {
        Eq => ord == Ordering::Equal,
        Ne => ord != Ordering::Equal,
        Lt => ord == Ordering::Less,
        Le => ord != Ordering::Greater,
        Gt => ord == Ordering::Greater,
        Ge => ord != Ordering::Less,
        _ => unreachable!(),
    })
}

/// ASCII case-insensitive ordering, as C's `strcasecmp`.
pub(crate) fn cmp_ignore_case(a: &str, b: &str) -> Ordering {
    let x = a.bytes().map(|c| c.to_ascii_lowercase());
    let y = b.bytes().map(|c| c.to_ascii_lowercase());
    x.cmp(y)
}

fn bitwise(op: BinaryOp, a: &Value, b: &Value) -> Value {
    use BinaryOp::*;
    let (Value::Int(x), Value::Int(y)) = (a, b) else {
        return Value::Error;
    };
    let (x, y) = (*x, *y);
    // Shift counts wrap modulo 64, as the x86 instructions HTCondor compiles to.
    let s = (y & 63) as u32;
    Value::Int(match op {
        BitAnd => x & y,
        BitOr => x | y,
        BitXor => x ^ y,
        Shl => x.wrapping_shl(s),
        Shr => x.wrapping_shr(s),
        // HTCondor's logical shift of a negative number masks with
        // `~(-1 << (64 - n))`, computed with x86's 6-bit shift counts (so a
        // shift by 0 gives 0); a non-negative number shifts arithmetically.
        Ushr if x < 0 => {
            x.wrapping_shr(s) & !(-1i64).wrapping_shl(64u32.wrapping_sub(y as u32) & 63)
        }
        Ushr => x.wrapping_shr(s),
        _ => unreachable!(),
    })
}
