//! List functions: `member`, `identicalMember`, `anyCompare`, `allCompare`,
//! `sum`, `avg`, `min`, `max`, `size`.

use super::super::ast::{BinaryOp, Expr};
use super::super::eval::{Ctx, Evaluator};
use super::super::operators::binary;
use super::super::value::Value;

/// `member(x, list)` (`==`) and `identicalMember(x, list)` (`=?=`).
pub(super) fn member(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    identical: bool,
) -> Value {
    let [a, l] = args else {
        return Value::Error;
    };
    let (x, list) = (ev.eval_in(ctx, a), ev.eval_in(ctx, l));
    if list.is_undefined() || (!identical && x.is_undefined()) {
        return Value::Undefined;
    }
    let Value::List(items) = &list else {
        return Value::Error;
    };
    if matches!(x, Value::List(_) | Value::Ad(_)) || (!identical && x.is_error()) {
        return Value::Error;
    }
    if !ev.charge(items.len() as u64) {
        return Value::Error;
    }
    let op = if identical {
        BinaryOp::Is
    } else {
        BinaryOp::Eq
    };
    let found = items.iter().any(|item| binary(op, item, &x).is_true());
    Value::Bool(found)
}

/// `anyCompare(op, list, x)` and `allCompare(op, list, x)`.
pub(super) fn compare(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], all: bool) -> Value {
    let [o, l, x] = args else {
        return Value::Error;
    };
    let op = match ev.eval_in(ctx, o) {
        Value::Undefined => return Value::Undefined,
        Value::String(s) => match &*s {
            "<" => BinaryOp::Lt,
            "<=" => BinaryOp::Le,
            "!=" => BinaryOp::Ne,
            "==" => BinaryOp::Eq,
            ">" => BinaryOp::Gt,
            ">=" => BinaryOp::Ge,
            "is" => BinaryOp::Is,
            "isnt" => BinaryOp::Isnt,
            _ => return Value::Error,
        },
        _ => return Value::Error,
    };
    let items = match ev.eval_in(ctx, l) {
        Value::Undefined => return Value::Undefined,
        Value::List(items) => items,
        _ => return Value::Error,
    };
    let x = ev.eval_in(ctx, x);
    if !ev.charge(items.len() as u64) {
        return Value::Error;
    }
    for item in items.iter() {
        match binary(op, item, &x) {
            Value::Bool(true) if !all => return Value::Bool(true),
            Value::Bool(false) if all => return Value::Bool(false),
            Value::Bool(_) => {}
            // HTCondor stops at the first undefined comparison.
            Value::Undefined => return Value::Bool(false),
            _ => return Value::Error,
        }
    }
    Value::Bool(all)
}

fn is_numeric(v: &Value) -> bool {
    matches!(v, Value::Int(_) | Value::Real(_) | Value::Bool(_))
}

/// The one list argument of `sum`, `avg`, `min` and `max`: undefined passes
/// through, anything else that is not a list is error.
fn one_list(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
) -> Result<std::sync::Arc<[Value]>, Value> {
    let [l] = args else {
        return Err(Value::Error);
    };
    let items = match ev.eval_in(ctx, l) {
        Value::Undefined => return Err(Value::Undefined),
        Value::List(items) => items,
        _ => return Err(Value::Error),
    };
    if !ev.charge(items.len() as u64) {
        return Err(Value::Error);
    }
    Ok(items)
}

/// `sum(list)` and `avg(list)`: undefined elements are skipped.
pub(super) fn sum_avg(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], avg: bool) -> Value {
    let items = match one_list(ev, ctx, args) {
        Ok(items) => items,
        Err(v) => return v,
    };
    let mut result: Option<Value> = None;
    let mut n = 0usize;
    for item in items.iter() {
        if item.is_undefined() {
            continue;
        }
        if !is_numeric(item) {
            return Value::Error;
        }
        n += 1;
        result = Some(match result {
            None => item.clone(),
            Some(acc) => binary(BinaryOp::Add, &acc, item),
        });
    }
    match result {
        None => Value::Int(0),
        Some(total) if avg => binary(BinaryOp::Div, &total, &Value::Real(n as f64)),
        Some(total) => total,
    }
}

/// `min(list)` and `max(list)`: undefined elements are skipped; undefined
/// for a list with no numbers; a real if any element is real.
pub(super) fn min_max(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], min: bool) -> Value {
    let items = match one_list(ev, ctx, args) {
        Ok(items) => items,
        Err(v) => return v,
    };
    let op = if min { BinaryOp::Lt } else { BinaryOp::Gt };
    let mut result = Value::Undefined;
    let mut any_real = false;
    for item in items.iter() {
        if item.is_undefined() {
            continue;
        }
        if !is_numeric(item) {
            return Value::Error;
        }
        any_real |= matches!(item, Value::Real(_));
        if result.is_undefined() || binary(op, item, &result).is_true() {
            result = item.clone();
        }
    }
    // A real if any element is.
    match result {
        Value::Int(i) if any_real => Value::Real(i as f64),
        r => r,
    }
}

/// `size(x)`: bytes of a string, elements of a list, attributes of an ad.
pub(super) fn size(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    match ev.eval_in(ctx, a) {
        Value::Undefined => Value::Undefined,
        Value::List(items) => Value::Int(items.len() as i64),
        Value::Ad(av) => Value::Int(av.ad.len() as i64),
        Value::String(s) => Value::Int(s.len() as i64),
        _ => Value::Error,
    }
}
