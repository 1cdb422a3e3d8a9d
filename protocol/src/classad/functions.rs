//! Built-in functions, by name (case-insensitive), as in HTCondor's ClassAd
//! function reference.
//!
//! Each function receives its arguments unevaluated and evaluates them with
//! [`Evaluator::eval_in`], so the lazy ones (`ifThenElse`, `unparse`,
//! `eval`…) decide what to evaluate.
//!
//! The semantics follow HTCondor's library (`fnCall.cpp` and the functions
//! HTCondor's daemons register on top of it), including its corner cases:
//! which functions are strict in `undefined`, how values convert to strings
//! and numbers (C's `strtod`, x86 float-to-integer conversion), and so on.
//! "Local time" is UTC: Starling evaluates the same way on every node.
//!
//! Work is bounded: strings and lists built here respect
//! [`MAX_STRING_LEN`](super::limits::MAX_STRING_LEN) and
//! [`MAX_LIST_LEN`](super::limits::MAX_LIST_LEN) (past them the result is
//! `error`), and functions doing work proportional to their input charge the
//! evaluator's step budget.

mod lists;
mod math;
mod meta;
mod regex;
mod strings;
mod time;

use super::ast::Expr;
use super::eval::{Builtin, Ctx, Evaluator};
use super::limits::{MAX_LIST_LEN, MAX_STRING_LEN};
use super::time::{format_abs_time, format_rel_time};
use super::unparse::unparse_value;
use super::value::Value;

/// The function a name refers to, if HTCondor defines one.
pub(crate) fn lookup(folded_name: &str) -> Option<Builtin> {
    let f: Builtin = match folded_name {
        // Control and introspection.
        "ifthenelse" => meta::if_then_else,
        "eval" => meta::eval,
        "unparse" => meta::unparse,
        "unresolved" => meta::unresolved,
        "debug" => meta::debug,
        "evalineachcontext" => meta::eval_in_each_context,
        "countmatches" => meta::count_matches,
        "userhome" => meta::user_home,
        "usermap" => meta::user_map,
        // Type predicates.
        "isundefined" => |ev, ctx, args| meta::type_test(ev, ctx, args, |v| v.is_undefined()),
        "iserror" => |ev, ctx, args| meta::type_test(ev, ctx, args, |v| v.is_error()),
        "isstring" => {
            |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::String(_)))
        }
        "isinteger" => {
            |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::Int(_)))
        }
        "isreal" => |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::Real(_))),
        "isboolean" => {
            |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::Bool(_)))
        }
        "islist" => |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::List(_))),
        "isclassad" => {
            |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::Ad(_)))
        }
        "isabstime" => {
            |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::AbsTime(_)))
        }
        "isreltime" => {
            |ev, ctx, args| meta::type_test(ev, ctx, args, |v| matches!(v, Value::RelTime(_)))
        }
        // Conversions and arithmetic.
        "int" => math::int,
        "real" => math::real,
        "string" => math::string,
        "bool" => math::bool,
        "floor" => |ev, ctx, args| math::round_with(ev, ctx, args, f64::floor),
        "ceil" | "ceiling" => |ev, ctx, args| math::round_with(ev, ctx, args, f64::ceil),
        "round" => |ev, ctx, args| math::round_with(ev, ctx, args, f64::round_ties_even),
        "pow" => math::pow,
        "quantize" => math::quantize,
        "random" => math::random,
        // Lists.
        "member" => |ev, ctx, args| lists::member(ev, ctx, args, false),
        "identicalmember" => |ev, ctx, args| lists::member(ev, ctx, args, true),
        "anycompare" => |ev, ctx, args| lists::compare(ev, ctx, args, false),
        "allcompare" => |ev, ctx, args| lists::compare(ev, ctx, args, true),
        "sum" => |ev, ctx, args| lists::sum_avg(ev, ctx, args, false),
        "avg" => |ev, ctx, args| lists::sum_avg(ev, ctx, args, true),
        "min" => |ev, ctx, args| lists::min_max(ev, ctx, args, true),
        "max" => |ev, ctx, args| lists::min_max(ev, ctx, args, false),
        "size" => lists::size,
        // Strings.
        "strcat" => |ev, ctx, args| strings::strcat(ev, ctx, args, false),
        "join" => |ev, ctx, args| strings::strcat(ev, ctx, args, true),
        "toupper" => |ev, ctx, args| strings::change_case(ev, ctx, args, true),
        "tolower" => |ev, ctx, args| strings::change_case(ev, ctx, args, false),
        "substr" => strings::substr,
        "strcmp" => |ev, ctx, args| strings::compare(ev, ctx, args, false),
        "stricmp" => |ev, ctx, args| strings::compare(ev, ctx, args, true),
        "versioncmp" => |ev, ctx, args| strings::version(ev, ctx, args, |o| Value::Int(o as i64)),
        "versionlt" => |ev, ctx, args| strings::version(ev, ctx, args, |o| Value::Bool(o < 0)),
        "versionle" => |ev, ctx, args| strings::version(ev, ctx, args, |o| Value::Bool(o <= 0)),
        "versiongt" => |ev, ctx, args| strings::version(ev, ctx, args, |o| Value::Bool(o > 0)),
        "versionge" => |ev, ctx, args| strings::version(ev, ctx, args, |o| Value::Bool(o >= 0)),
        "versioneq" => |ev, ctx, args| strings::version(ev, ctx, args, |o| Value::Bool(o == 0)),
        "version_in_range" => strings::version_in_range,
        "split" => strings::split,
        "splitusername" => |ev, ctx, args| strings::split_at(ev, ctx, args, false),
        "splitslotname" => |ev, ctx, args| strings::split_at(ev, ctx, args, true),
        "stringlistsize" => strings::string_list_size,
        "stringlistsum" => {
            |ev, ctx, args| strings::string_list_summary(ev, ctx, args, strings::Summary::Sum)
        }
        "stringlistavg" => {
            |ev, ctx, args| strings::string_list_summary(ev, ctx, args, strings::Summary::Avg)
        }
        "stringlistmin" => {
            |ev, ctx, args| strings::string_list_summary(ev, ctx, args, strings::Summary::Min)
        }
        "stringlistmax" => {
            |ev, ctx, args| strings::string_list_summary(ev, ctx, args, strings::Summary::Max)
        }
        "stringlistmember" => |ev, ctx, args| strings::string_list_member(ev, ctx, args, false),
        "stringlistimember" => |ev, ctx, args| strings::string_list_member(ev, ctx, args, true),
        "stringlistsubsetmatch" => {
            |ev, ctx, args| strings::string_list_subset(ev, ctx, args, false)
        }
        "stringlistisubsetmatch" => {
            |ev, ctx, args| strings::string_list_subset(ev, ctx, args, true)
        }
        "stringlistsintersect" => strings::string_lists_intersect,
        "envv1tov2" => strings::env_v1_to_v2,
        "mergeenvironment" => strings::merge_environment,
        "argstolist" => strings::args_to_list,
        "listtoargs" => strings::list_to_args,
        // Regular expressions.
        "regexp" => regex::regexp,
        "regexpmember" => regex::regexp_member,
        "regexps" => |ev, ctx, args| regex::substitute(ev, ctx, args, ""),
        "replace" => |ev, ctx, args| regex::substitute(ev, ctx, args, "f"),
        "replaceall" => |ev, ctx, args| regex::substitute(ev, ctx, args, "fg"),
        "stringlist_regexpmember" => regex::string_list_regexp_member,
        // Time.
        "time" => time::epoch_time,
        "currenttime" => time::current_time,
        "timezoneoffset" => time::time_zone_offset,
        "daytime" => time::day_time,
        "abstime" => time::abs_time,
        "reltime" => time::rel_time,
        "getyear" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::Year),
        "getmonth" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::Month),
        "getdayofyear" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::DayOfYear),
        "getdayofmonth" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::DayOfMonth),
        "getdayofweek" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::DayOfWeek),
        "getdays" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::Days),
        "gethours" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::Hours),
        "getminutes" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::Minutes),
        "getseconds" => |ev, ctx, args| time::get_field(ev, ctx, args, time::Field::Seconds),
        "splittime" => time::split_time,
        "formattime" => time::format_time,
        "interval" => time::interval,
        _ => return None,
    };
    Some(f)
}

/// Evaluates every argument, left to right.
fn eval_all(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Vec<Value> {
    args.iter().map(|a| ev.eval_in(ctx, a)).collect()
}

/// A string result, or error past the length limit.
fn string_result(s: String) -> Value {
    if s.len() > MAX_STRING_LEN {
        Value::Error
    } else {
        Value::String(s.into())
    }
}

/// A byte-string result (from byte-oriented string functions), made valid
/// UTF-8 if an operation split a multi-byte character.
fn bytes_result(b: Vec<u8>) -> Value {
    if b.len() > MAX_STRING_LEN {
        return Value::Error;
    }
    match String::from_utf8(b) {
        Ok(s) => Value::String(s.into()),
        Err(e) => Value::String(String::from_utf8_lossy(e.as_bytes()).into_owned().into()),
    }
}

/// A list result, or error past the length limit.
fn list_result(items: Vec<Value>) -> Value {
    if items.len() > MAX_LIST_LEN {
        Value::Error
    } else {
        Value::List(items.into())
    }
}

/// Charges steps for `bytes` bytes of string work; false when the budget is
/// spent.
fn charge_bytes(ev: &mut Evaluator<'_>, bytes: usize) -> bool {
    ev.charge(bytes as u64 / 64 + 1)
}

/// The text of a value as HTCondor's `string()` converts it
/// (`convertValueToStringValue`): `None` for undefined and error.
fn string_of(v: &Value) -> Option<std::borrow::Cow<'_, str>> {
    use std::borrow::Cow;
    Some(match v {
        Value::Undefined | Value::Error => return None,
        Value::String(s) => Cow::Borrowed(&**s),
        Value::Int(i) => Cow::Owned(i.to_string()),
        Value::AbsTime(t) => Cow::Owned(format_abs_time(*t)),
        // Converting a relative time to text keeps whole seconds only.
        Value::RelTime(r) => Cow::Owned(format_rel_time(r.trunc())),
        Value::Real(_) | Value::Bool(_) | Value::List(_) | Value::Ad(_) => {
            Cow::Owned(unparse_value(v))
        }
    })
}

/// `string(v)` as a value: undefined and error pass through.
fn to_string_value(v: &Value) -> Value {
    match v {
        Value::String(_) => v.clone(),
        Value::Undefined => Value::Undefined,
        _ => match string_of(v) {
            Some(s) => string_result(s.into_owned()),
            None => Value::Error,
        },
    }
}

/// C's `(long long)` conversion of a double on x86: out of range and NaN
/// give the "integer indefinite" value, `i64::MIN`.
fn f64_to_i64(r: f64) -> i64 {
    // 2^63: the first double past i64::MAX.
    const LIMIT: f64 = 9_223_372_036_854_775_808.0;
    if r.is_nan() || !(-LIMIT..LIMIT).contains(&r) {
        i64::MIN
    } else {
        r as i64
    }
}

/// C's `(int)` conversion of a double on x86.
fn f64_to_i32(r: f64) -> i32 {
    if r.is_nan() || !(-2_147_483_648.0..2_147_483_648.0).contains(&r) {
        i32::MIN
    } else {
        r as i32
    }
}

/// `int(v)` (`convertValueToIntegerValue`).
fn to_int_value(v: &Value) -> Value {
    match v {
        Value::Int(_) => v.clone(),
        Value::Bool(b) => Value::Int(*b as i64),
        Value::Real(r) | Value::RelTime(r) => Value::Int(f64_to_i64(*r)),
        Value::AbsTime(t) => Value::Int(t.secs),
        Value::String(s) => match strtod(s) {
            Some((r, _)) => Value::Int(f64_to_i64(r)),
            None => Value::Error,
        },
        Value::Undefined => Value::Undefined,
        Value::Error | Value::List(_) | Value::Ad(_) => Value::Error,
    }
}

/// `real(v)` (`convertValueToRealValue`).
fn to_real_value(v: &Value) -> Value {
    match v {
        Value::Real(_) => v.clone(),
        Value::Int(i) => Value::Real(*i as f64),
        Value::Bool(b) => Value::Real(if *b { 1.0 } else { 0.0 }),
        // HTCondor reads a relative time as whole seconds here.
        Value::RelTime(r) => Value::Real(f64_to_i64(*r) as f64),
        Value::AbsTime(t) => Value::Real(t.secs as f64),
        Value::String(s) => match strtod(s) {
            Some((r, _)) => Value::Real(r),
            None => Value::Error,
        },
        Value::Undefined => Value::Undefined,
        Value::Error | Value::List(_) | Value::Ad(_) => Value::Error,
    }
}

/// The value as a real, when HTCondor's conversion succeeds (undefined does
/// not convert).
fn real_of(v: &Value) -> Option<f64> {
    match to_real_value(v) {
        Value::Real(r) => Some(r),
        _ => None,
    }
}

fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// C's `strtod` on a prefix of `s`: the number and how many bytes it used,
/// or `None` when no number starts the string (after white space).
/// Accepts decimal and hexadecimal forms, `inf`, `infinity` and `nan`.
fn strtod(s: &str) -> Option<(f64, usize)> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() && is_c_space(b[i]) {
        i += 1;
    }
    let start = i;
    let neg = match b.get(i) {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let sign = if neg { -1.0 } else { 1.0 };
    let rest = &b[i..];
    let lower_starts =
        |w: &str| rest.len() >= w.len() && rest[..w.len()].eq_ignore_ascii_case(w.as_bytes());
    if lower_starts("infinity") {
        return Some((sign * f64::INFINITY, i + 8));
    }
    if lower_starts("inf") {
        return Some((sign * f64::INFINITY, i + 3));
    }
    if lower_starts("nan") {
        let mut end = i + 3;
        // nan(n-char-sequence)
        if b.get(end) == Some(&b'(') {
            let mut j = end + 1;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if b.get(j) == Some(&b')') {
                end = j + 1;
            }
        }
        return Some((f64::NAN, end));
    }
    if rest.len() >= 3
        && rest[0] == b'0'
        && (rest[1] | 0x20) == b'x'
        && (rest[2].is_ascii_hexdigit()
            || (rest[2] == b'.' && rest.get(3).is_some_and(u8::is_ascii_hexdigit)))
    {
        let mut j = i + 2;
        let mut mant = 0f64;
        let mut exp: i64 = 0;
        while j < b.len() && b[j].is_ascii_hexdigit() {
            mant = mant * 16.0 + (b[j] as char).to_digit(16).unwrap_or(0) as f64;
            j += 1;
        }
        if b.get(j) == Some(&b'.') {
            j += 1;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                mant = mant * 16.0 + (b[j] as char).to_digit(16).unwrap_or(0) as f64;
                exp -= 4;
                j += 1;
            }
        }
        if matches!(b.get(j), Some(b'p' | b'P')) {
            let mut k = j + 1;
            let eneg = match b.get(k) {
                Some(b'-') => {
                    k += 1;
                    true
                }
                Some(b'+') => {
                    k += 1;
                    false
                }
                _ => false,
            };
            if k < b.len() && b[k].is_ascii_digit() {
                let mut e: i64 = 0;
                while k < b.len() && b[k].is_ascii_digit() {
                    e = (e * 10 + (b[k] - b'0') as i64).min(100_000);
                    k += 1;
                }
                exp += if eneg { -e } else { e };
                j = k;
            }
        }
        let v = mant * 2f64.powi(exp.clamp(-10_000, 10_000) as i32);
        return Some((sign * v, j));
    }
    // Decimal.
    let mut j = i;
    let mut digits = 0;
    while j < b.len() && b[j].is_ascii_digit() {
        j += 1;
        digits += 1;
    }
    if b.get(j) == Some(&b'.') {
        j += 1;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
            digits += 1;
        }
    }
    if digits == 0 {
        return None;
    }
    if matches!(b.get(j), Some(b'e' | b'E')) {
        let mut k = j + 1;
        if matches!(b.get(k), Some(b'+' | b'-')) {
            k += 1;
        }
        if k < b.len() && b[k].is_ascii_digit() {
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            j = k;
        }
    }
    let text = &s[start..j];
    let v: f64 = text.parse().ok()?;
    Some((v, j))
}

#[cfg(test)]
mod tests;
