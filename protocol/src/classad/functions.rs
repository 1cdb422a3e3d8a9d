//! Built-in functions, by name (case-insensitive), as in HTCondor's ClassAd
//! function reference.
//!
//! Each function receives its arguments unevaluated and evaluates them with
//! [`Evaluator::eval_in`], so the lazy ones (`ifThenElse`, `unparse`,
//! `eval`…) decide what to evaluate.

use super::ast::Expr;
use super::eval::{Builtin, Ctx, Evaluator};
use super::value::Value;

/// The function a name refers to, if HTCondor defines one.
pub(crate) fn lookup(folded_name: &str) -> Option<Builtin> {
    let f: Builtin = match folded_name {
        "ifthenelse" => if_then_else,
        "isundefined" => |ev, ctx, args| type_test(ev, ctx, args, |v| v.is_undefined()),
        "iserror" => |ev, ctx, args| type_test(ev, ctx, args, |v| v.is_error()),
        _ => return None,
    };
    Some(f)
}

fn if_then_else(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [c, a, b] = args else {
        return Value::Error;
    };
    let cv = ev.eval_in(ctx, c);
    match super::operators::truth(&cv) {
        Ok(Some(true)) => ev.eval_in(ctx, a),
        Ok(Some(false)) => ev.eval_in(ctx, b),
        Ok(None) => Value::Undefined,
        Err(()) => Value::Error,
    }
}

fn type_test(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    test: fn(&Value) -> bool,
) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let v = ev.eval_in(ctx, a);
    Value::Bool(test(&v))
}
