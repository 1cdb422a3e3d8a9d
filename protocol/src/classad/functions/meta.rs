//! Control, introspection and context functions: `ifThenElse`, the type
//! predicates, `eval`, `unparse`, `unresolved`, `debug`,
//! `evalInEachContext`, `countMatches`, `userHome`, `userMap`.

use std::sync::Arc;

use super::super::ast::{AttrRef, Expr};
use super::super::eval::{Ctx, Evaluator};
use super::super::operators::{cmp_ignore_case, truth};
use super::super::parser::parse_expr;
use super::super::unparse::unparse as unparse_expr;
use super::super::value::Value;
use super::{list_result, regex, string_of, string_result};

pub(super) fn if_then_else(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [c, a, b] = args else {
        return Value::Error;
    };
    let cv = ev.eval_in(ctx, c);
    match truth(&cv) {
        Ok(Some(true)) => ev.eval_in(ctx, a),
        Ok(Some(false)) => ev.eval_in(ctx, b),
        Ok(None) => Value::Undefined,
        Err(()) => Value::Error,
    }
}

pub(super) fn type_test(
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

/// `eval(s)`: parses `string(s)` and evaluates it where the call is.
pub(super) fn eval(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let v = ev.eval_in(ctx, a);
    let Some(text) = string_of(&v) else {
        return Value::Error;
    };
    if !super::charge_bytes(ev, text.len()) {
        return Value::Error;
    }
    let Ok(expr) = parse_expr(&text) else {
        return Value::Error;
    };
    ev.deeper(|ev| ev.eval_in(ctx, &expr))
}

/// `unparse(attr)`: the text of an attribute's expression, unevaluated; the
/// empty string if no ad in scope defines it.
pub(super) fn unparse(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    match args {
        [Expr::Attr(r)] => {
            // HTCondor looks the name up in the current ad by its text, so
            // `.name` finds nothing.
            if r.absolute {
                return Value::string("");
            }
            match ev.find_attr_expr(ctx, r) {
                Some(e) => string_result(unparse_expr(&e)),
                None => Value::string(""),
            }
        }
        // `a.b` is an attribute reference to HTCondor too, but looking up
        // the text "a.b" finds nothing.
        [Expr::Select(..)] => Value::string(""),
        _ => Value::Error,
    }
}

/// `unresolved(attr [, pattern])`: the references of an attribute's
/// expression that no ad in scope defines, as a sorted comma-separated
/// string; with a pattern, whether any of them matches it (ignoring case).
pub(super) fn unresolved(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let (r, pattern) = match args {
        [r] => (r, None),
        [r, p] => (r, Some(p)),
        _ => return Value::Error,
    };
    // The attribute: `name`, `.name` or `MY.name`.
    let found = match r {
        Expr::Attr(r) => ev.find_attr_expr(ctx, r).map(|e| (e, r.key)),
        Expr::Select(base, r) => match &**base {
            Expr::Attr(b) if !b.absolute && matches!(b.key.as_str(), "my" | "self") => {
                let top = AttrRef {
                    absolute: true,
                    ..*r
                };
                ev.find_attr_expr(ctx, &top).map(|e| (e, r.key))
            }
            Expr::Attr(_) | Expr::Select(..) => None,
            _ => return Value::Error,
        },
        _ => return Value::Error,
    };
    let Some((expr, key)) = found else {
        return Value::Undefined;
    };
    let re = match pattern {
        Some(p) => {
            let pv = ev.eval_in(ctx, p);
            let Value::String(p) = pv else {
                return Value::Error;
            };
            match regex::compile(&p, regex::Flags::caseless()) {
                Some(re) => Some(re),
                None => return Value::Error,
            }
        }
        None => None,
    };
    let mut refs = References {
        names: Vec::new(),
        visited: vec![key],
        budget: 100_000,
    };
    refs.walk(ev, ctx, &expr);
    // Sorted as HTCondor's set of references orders them: ignoring case,
    // with TARGET references under "target.".
    let mut names = refs.names;
    names.sort_by(|a, b| cmp_ignore_case(a, b));
    names.dedup_by(|a, b| a.eq_ignore_ascii_case(b));
    let names: Vec<&str> = names
        .iter()
        .map(|n| n.strip_prefix("target.").unwrap_or(n))
        .collect();
    match re {
        Some(re) => Value::Bool(names.iter().any(|n| re.is_match(n.as_bytes()))),
        None => string_result(names.join(",")),
    }
}

/// Collects the external references of an expression, following references
/// to attributes defined in scope.
struct References {
    names: Vec<String>,
    visited: Vec<super::super::name::Folded>,
    budget: u32,
}

impl References {
    fn walk(&mut self, ev: &mut Evaluator<'_>, ctx: Ctx<'_>, e: &Expr) {
        if self.budget == 0 || !ev.charge(1) {
            return;
        }
        self.budget -= 1;
        match e {
            Expr::Literal(_) => {}
            Expr::Attr(r) => self.reference(ev, ctx, r),
            Expr::Select(base, r) => match &**base {
                Expr::Attr(b) if !b.absolute => match b.key.as_str() {
                    "target" => self.names.push(format!("target.{}", r.name.as_str())),
                    "my" | "self" => self.reference(ev, ctx, &AttrRef::new(r.name, false)),
                    _ => {
                        if !self.visited.contains(&b.key) && ev.find_attr_expr(ctx, b).is_some() {
                            self.reference(ev, ctx, b);
                        } else {
                            self.names.push(unparse_expr(e));
                        }
                    }
                },
                _ => self.walk(ev, ctx, base),
            },
            Expr::Index(pair) | Expr::Binary(_, pair) | Expr::Elvis(pair) => {
                self.walk(ev, ctx, &pair[0]);
                self.walk(ev, ctx, &pair[1]);
            }
            Expr::Unary(_, inner) | Expr::Paren(inner) => self.walk(ev, ctx, inner),
            Expr::Cond(parts) => {
                for p in parts.iter() {
                    self.walk(ev, ctx, p);
                }
            }
            Expr::Call(call) => {
                for a in call.args.iter() {
                    self.walk(ev, ctx, a);
                }
            }
            Expr::List(items) => {
                for i in items.iter() {
                    self.walk(ev, ctx, i);
                }
            }
            // HTCondor walks a nested ad's expressions in the enclosing
            // scope.
            Expr::Ad(ad) => {
                for entry in ad.iter() {
                    self.walk(ev, ctx, entry.expr());
                }
            }
        }
    }

    fn reference(&mut self, ev: &mut Evaluator<'_>, ctx: Ctx<'_>, r: &AttrRef) {
        if self.visited.contains(&r.key) {
            return;
        }
        match ev.find_attr_expr(ctx, r) {
            Some(e) => {
                self.visited.push(r.key);
                self.walk(ev, ctx, &e);
            }
            None => self.names.push(r.name.as_str().to_owned()),
        }
    }
}

/// `debug(expr)`: evaluates its argument (HTCondor also logs the
/// evaluation; Starling does not).
pub(super) fn debug(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    ev.eval_in(ctx, a)
}

/// What `evalInEachContext` and `countMatches` evaluate: a bare attribute
/// reference that resolves here stands for its expression.
fn context_expr(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, e: &Expr) -> Expr {
    match e {
        Expr::Attr(r) if !r.absolute => {
            if let Some(found) = ev.find_attr_expr(ctx, r) {
                return found;
            }
        }
        // `MY.RequireGPUs`, as HTCondor's job Requirements write it: the
        // expression of the attribute in the ad the scope names.
        Expr::Select(base, r) if matches!(**base, Expr::Attr(_)) => {
            if let Value::Ad(av) = ev.eval_in(ctx, base) {
                if let Some(found) = av.ad.get_folded(r.key) {
                    return found.clone();
                }
            }
        }
        _ => {}
    }
    e.clone()
}

/// The list of contexts: `Ok(list)`, or `Err(v)` with `v` undefined or error.
fn contexts(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, e: &Expr) -> Result<Arc<[Value]>, Value> {
    match ev.eval_in(ctx, e) {
        Value::List(l) => Ok(l),
        Value::Undefined => Err(Value::Undefined),
        _ => Err(Value::Error),
    }
}

fn eval_in_context(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, expr: &Expr, c: &Value) -> Value {
    match c {
        Value::Ad(av) => {
            let av = av.clone();
            ev.eval_in_ad(ctx, &av, expr)
        }
        Value::Undefined => Value::Undefined,
        _ => Value::Error,
    }
}

/// `evalInEachContext(expr, ads)`: `expr` evaluated in each ad of a list.
pub(super) fn eval_in_each_context(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [e, l] = args else {
        return Value::Error;
    };
    let expr = context_expr(ev, ctx, e);
    let list = match contexts(ev, ctx, l) {
        Ok(list) => list,
        Err(v) => return v,
    };
    let mut out = Vec::with_capacity(list.len());
    for c in list.iter() {
        out.push(eval_in_context(ev, ctx, &expr, c));
    }
    list_result(out)
}

/// `countMatches(expr, ads)`: how many ads of a list `expr` is true in.
pub(super) fn count_matches(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [e, l] = args else {
        return Value::Error;
    };
    let expr = context_expr(ev, ctx, e);
    let list = match contexts(ev, ctx, l) {
        Ok(list) => list,
        Err(Value::Undefined) => return Value::Int(0),
        Err(v) => return v,
    };
    let mut n = 0;
    for c in list.iter() {
        if let Ok(Some(true)) = truth(&eval_in_context(ev, ctx, &expr, c)) {
            n += 1;
        }
    }
    Value::Int(n)
}

/// `userHome(name [, default])`. Starling does not consult the password
/// database (HTCondor does not either unless `CLASSAD_ENABLE_USER_HOME` is
/// set): the result is the default if one is given, else undefined (error
/// for a name that is not a string).
pub(super) fn user_home(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.is_empty() || args.len() > 2 {
        return Value::Error;
    }
    let default = match args.get(1) {
        Some(d) => match ev.eval_in(ctx, d) {
            Value::String(s) if !s.is_empty() => Some(s),
            _ => None,
        },
        None => None,
    };
    let owner = ev.eval_in(ctx, &args[0]);
    if let Some(d) = default {
        return Value::String(d);
    }
    match owner {
        Value::String(_) | Value::Undefined => Value::Undefined,
        _ => Value::Error,
    }
}

/// `userMap(map, name [, preferred [, default]])`. Starling has no map
/// files: every name is unmapped, so the result is the default group if one
/// is given, else undefined.
pub(super) fn user_map(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.len() < 2 || args.len() > 4 {
        return Value::Error;
    }
    let vals = super::eval_all(ev, ctx, args);
    // (HTCondor ignores an error as the preferred group.)
    if [0, 1, 3]
        .iter()
        .any(|&i| vals.get(i).is_some_and(Value::is_error))
    {
        return Value::Error;
    }
    vals.get(3).cloned().unwrap_or(Value::Undefined)
}
