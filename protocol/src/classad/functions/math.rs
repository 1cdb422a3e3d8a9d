//! Conversions and arithmetic: `int`, `real`, `string`, `bool`, `floor`,
//! `ceiling`, `round`, `pow`, `quantize`, `random`.

use super::super::ast::Expr;
use super::super::eval::{Ctx, Evaluator};
use super::super::value::Value;
use super::{f64_to_i64, real_of, to_int_value, to_real_value, to_string_value};

fn one_arg(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Option<Value> {
    match args {
        [a] => Some(ev.eval_in(ctx, a)),
        _ => None,
    }
}

pub(super) fn int(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    one_arg(ev, ctx, args).map_or(Value::Error, |v| to_int_value(&v))
}

pub(super) fn real(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    one_arg(ev, ctx, args).map_or(Value::Error, |v| to_real_value(&v))
}

pub(super) fn string(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    one_arg(ev, ctx, args).map_or(Value::Error, |v| to_string_value(&v))
}

pub(super) fn bool(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let Some(v) = one_arg(ev, ctx, args) else {
        return Value::Error;
    };
    match v {
        Value::Undefined => Value::Undefined,
        Value::Bool(_) => v,
        Value::Int(i) => Value::Bool(i != 0),
        Value::Real(r) => Value::Bool(r != 0.0),
        // HTCondor looks at the whole seconds.
        Value::RelTime(r) => Value::Bool(f64_to_i64(r) != 0),
        Value::String(s) => {
            if s.eq_ignore_ascii_case("true") {
                Value::Bool(true)
            } else if s.eq_ignore_ascii_case("false") {
                Value::Bool(false)
            } else {
                Value::Undefined
            }
        }
        Value::Error | Value::List(_) | Value::Ad(_) | Value::AbsTime(_) => Value::Error,
    }
}

/// `floor`, `ceiling`, `round`: integers stay as they are; anything else is
/// converted to a real (failing that: error), rounded and converted back.
pub(super) fn round_with(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    f: fn(f64) -> f64,
) -> Value {
    let Some(v) = one_arg(ev, ctx, args) else {
        return Value::Error;
    };
    if let Value::Int(_) = v {
        return v;
    }
    match real_of(&v) {
        Some(r) => Value::Int(f64_to_i64(f(r))),
        None => Value::Error,
    }
}

/// `pow(base, exp)`: an integer for integer arguments with a non-negative
/// exponent (computed in floating point, as HTCondor does), else a real.
pub(super) fn pow(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a, b] = args else {
        return Value::Error;
    };
    let (a, b) = (ev.eval_in(ctx, a), ev.eval_in(ctx, b));
    if let (Value::Int(x), Value::Int(y)) = (&a, &b) {
        if *y >= 0 {
            return Value::Int(f64_to_i64((*x as f64).powf(*y as f64) + 0.5));
        }
    }
    match (real_of(&a), real_of(&b)) {
        (Some(x), Some(y)) => Value::Real(x.powf(y)),
        _ => Value::Error,
    }
}

/// `quantize(a, b)`: the smallest multiple of `b` at least `a`; for a list
/// `b`, the first element at least `a`, else a multiple of the last.
pub(super) fn quantize(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a, b] = args else {
        return Value::Error;
    };
    let (arg, mut arg2) = (ev.eval_in(ctx, a), ev.eval_in(ctx, b));
    let Some(rval) = real_of(&arg) else {
        return Value::Error;
    };
    let rbase;
    if let Value::List(items) = &arg2 {
        // An empty list means "don't quantize".
        let mut base = Value::Real(0.0);
        let mut rb = 0.0;
        for item in items.iter() {
            match real_of(item) {
                Some(r) => {
                    base = item.clone();
                    rb = r;
                    if r >= rval {
                        return item.clone();
                    }
                }
                None => return Value::Error,
            }
        }
        arg2 = base;
        rbase = rb;
    } else {
        match real_of(&arg2) {
            Some(r) => rbase = r,
            None => return Value::Error,
        }
    }
    if let Value::Int(ibase) = arg2 {
        if ibase == 0 {
            return arg;
        }
        if let Value::Int(ival) = arg {
            let q = ival.wrapping_add(ibase.wrapping_sub(1));
            // i64::MIN / -1 overflows in Rust; x86 would trap.
            let q = if ibase == -1 {
                q.wrapping_neg()
            } else {
                q / ibase
            };
            return Value::Int(q.wrapping_mul(ibase));
        }
        return Value::Real((rval / ibase as f64).ceil() * ibase as f64);
    }
    const EPSILON: f64 = 1e-8;
    if (-EPSILON..=EPSILON).contains(&rbase) {
        arg
    } else {
        Value::Real((rval / rbase).ceil() * rbase)
    }
}

/// `random([max])`: an integer in `[0, max)` for an integer, a real in
/// `[0, max)` for a real; `random()` is `random(1.0)`.
pub(super) fn random(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let v = match args {
        [] => Value::Real(1.0),
        [a] => ev.eval_in(ctx, a),
        _ => return Value::Error,
    };
    match v {
        // HTCondor fails the evaluation (a division by zero) for a
        // non-positive bound.
        Value::Int(n) if n <= 0 => Value::Error,
        Value::Int(n) => {
            let r = ev.next_random();
            Value::Int(((r * n as f64) as i64).clamp(0, n - 1))
        }
        Value::Real(m) => Value::Real(m * ev.next_random()),
        _ => Value::Error,
    }
}
