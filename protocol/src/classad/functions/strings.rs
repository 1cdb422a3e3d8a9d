//! String functions: `strcat`, `join`, `toUpper`, `toLower`, `substr`,
//! `strcmp`, `stricmp`, the version comparisons, `split`, `splitUserName`,
//! `splitSlotName`, the `stringList*` family, and HTCondor's environment and
//! argument-string conversions.
//!
//! Like HTCondor, these work on bytes: offsets and lengths count bytes, and
//! case changes are ASCII-only.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::super::ast::Expr;
use super::super::eval::{Ctx, Evaluator};
use super::super::limits::MAX_STRING_LEN;
use super::super::operators::cmp_ignore_case;
use super::super::value::Value;
use super::{
    bytes_result, charge_bytes, eval_all, f64_to_i64, is_c_space, list_result, string_of,
    string_result, strtod,
};

/// `strcat(a, ...)` and `join(sep, a, ...)` / `join(sep, list)` /
/// `join(list)`.
pub(super) fn strcat(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], join: bool) -> Value {
    // join's one- and two-argument forms take the items from a list.
    let mut items: Option<Vec<Value>> = None;
    let mut last: Option<Value> = None;
    if join && (1..=2).contains(&args.len()) {
        let v = ev.eval_in(ctx, &args[args.len() - 1]);
        if let Value::List(list) = &v {
            let mut all = Vec::with_capacity(list.len() + 1);
            all.push(if args.len() == 2 {
                ev.eval_in(ctx, &args[0])
            } else {
                Value::string("")
            });
            all.extend(list.iter().cloned());
            items = Some(all);
        } else {
            last = Some(v);
        }
    }
    let count = items.as_ref().map_or(args.len(), Vec::len);
    let mut buf = String::new();
    let mut sep = String::new();
    let (mut undef, mut def) = (false, false);
    for i in 0..count {
        let val = match &items {
            Some(all) => all[i].clone(),
            None if i + 1 == count && last.is_some() => last.take().unwrap_or_default(),
            None => ev.eval_in(ctx, &args[i]),
        };
        let s = match string_of(&val) {
            Some(s) => s,
            None if val.is_undefined() => {
                undef = true;
                if join {
                    continue;
                }
                def = false;
                break;
            }
            None => return Value::Error,
        };
        if join {
            if i == 0 {
                sep = s.into_owned();
                continue;
            }
            if !buf.is_empty() {
                buf.push_str(&sep);
            }
        }
        def = true;
        buf.push_str(&s);
        if buf.len() > MAX_STRING_LEN || !charge_bytes(ev, s.len() + sep.len()) {
            return Value::Error;
        }
    }
    if undef && !def {
        return Value::Undefined;
    }
    string_result(buf)
}

/// `toUpper(s)` and `toLower(s)`: ASCII case mapping of `string(s)`.
pub(super) fn change_case(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    upper: bool,
) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let v = ev.eval_in(ctx, a);
    let Some(s) = string_of(&v) else {
        return v;
    };
    if !charge_bytes(ev, s.len()) {
        return Value::Error;
    }
    string_result(if upper {
        s.to_ascii_uppercase()
    } else {
        s.to_ascii_lowercase()
    })
}

/// `substr(s, offset [, length])`, Perl-like: negative offsets count from
/// the end, a negative length leaves that many bytes off the end.
pub(super) fn substr(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.len() < 2 || args.len() > 3 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    if vals.iter().any(Value::is_undefined) {
        return Value::Undefined;
    }
    let (Value::String(s), Value::Int(off)) = (&vals[0], &vals[1]) else {
        return Value::Error;
    };
    let len_arg = match vals.get(2) {
        Some(Value::Int(l)) => Some(*l as i32 as i64),
        Some(_) => return Value::Error,
        None => None,
    };
    // HTCondor takes the offset and length as C ints.
    let alen = s.len() as i64;
    let mut off = *off as i32 as i64;
    if off < 0 {
        off = (alen + off).max(0);
    } else if off >= alen {
        off = alen;
    }
    let mut len = len_arg.unwrap_or(0);
    if len <= 0 {
        len = (alen - off + len).max(0);
    } else if len > alen - off {
        len = alen - off;
    }
    if len_arg == Some(0) {
        len = 0;
    }
    let bytes = &s.as_bytes()[off as usize..(off + len) as usize];
    if !charge_bytes(ev, bytes.len()) {
        return Value::Error;
    }
    bytes_result(bytes.to_vec())
}

/// The two arguments of a comparison as text (`string()` of each): undefined
/// if either is, error for a wrong count or a value with no text.
fn two_strings(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
) -> Result<(String, String), Value> {
    let [a, b] = args else {
        return Err(Value::Error);
    };
    let (a, b) = (ev.eval_in(ctx, a), ev.eval_in(ctx, b));
    if a.is_undefined() || b.is_undefined() {
        return Err(Value::Undefined);
    }
    let (Some(x), Some(y)) = (string_of(&a), string_of(&b)) else {
        return Err(Value::Error);
    };
    if !charge_bytes(ev, x.len().min(y.len())) {
        return Err(Value::Error);
    }
    Ok((x.into_owned(), y.into_owned()))
}

/// `strcmp(a, b)` and `stricmp(a, b)` on `string()` of the arguments:
/// -1, 0 or 1.
pub(super) fn compare(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], fold: bool) -> Value {
    let (x, y) = match two_strings(ev, ctx, args) {
        Ok(pair) => pair,
        Err(v) => return v,
    };
    let ord = if fold {
        cmp_ignore_case(&x, &y)
    } else {
        x.as_bytes().cmp(y.as_bytes())
    };
    Value::Int(match ord {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

/// A byte of a C string (0 past the end), as x86's signed `char`.
fn c_char(s: &[u8], i: usize) -> i32 {
    s.get(i).map_or(0, |&b| b as i8 as i32)
}

fn is_digit_at(s: &[u8], i: usize) -> bool {
    s.get(i).is_some_and(u8::is_ascii_digit)
}

/// HTCondor's `natural_cmp` (after `strverscmp(3)`): lexicographic, except
/// that runs of digits compare by value (more leading zeros first). Returns
/// the same (unnormalized) differences HTCondor does.
pub(crate) fn natural_cmp(a: &[u8], b: &[u8]) -> i32 {
    // Strings end at a NUL, as in C.
    let a = &a[..a.iter().position(|&c| c == 0).unwrap_or(a.len())];
    let b = &b[..b.iter().position(|&c| c == 0).unwrap_or(b.len())];
    let mut i = 0;
    while i < a.len() && a.get(i) == b.get(i) {
        i += 1;
    }
    if a.get(i) == b.get(i) {
        return 0;
    }
    let (c1, c2) = (c_char(a, i), c_char(b, i));
    let mut n = i;
    while n > 0 && a[n - 1].is_ascii_digit() {
        n -= 1;
    }
    if n == i && (!is_digit_at(a, i) || !is_digit_at(b, i)) {
        return c1 - c2;
    }
    let (mut z1, mut z2) = (n, n);
    while a.get(z1) == Some(&b'0') {
        z1 += 1;
    }
    while b.get(z2) == Some(&b'0') {
        z2 += 1;
    }
    if z1 > n && !is_digit_at(a, z1) {
        z1 -= 1;
    }
    if z2 > n && !is_digit_at(b, z2) {
        z2 -= 1;
    }
    if z1 - n != z2 - n {
        return (z2 - n) as i32 - (z1 - n) as i32;
    }
    if z1 > n {
        return c1 - c2;
    }
    let (mut e1, mut e2) = (z1, z2);
    while is_digit_at(a, e1) {
        e1 += 1;
    }
    while is_digit_at(b, e2) {
        e2 += 1;
    }
    if e1 - n != e2 - n {
        (e1 - n) as i32 - (e2 - n) as i32
    } else {
        c1 - c2
    }
}

/// `versioncmp` and `versionLT` & co.: undefined if either side is.
pub(super) fn version(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    result: fn(i32) -> Value,
) -> Value {
    let (x, y) = match two_strings(ev, ctx, args) {
        Ok(pair) => pair,
        Err(v) => return v,
    };
    result(natural_cmp(x.as_bytes(), y.as_bytes()))
}

/// `version_in_range(v, min, max)`: `min <= v <= max` by `versioncmp`.
pub(super) fn version_in_range(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [t, lo, hi] = args else {
        return Value::Error;
    };
    let (t, lo, hi) = (ev.eval_in(ctx, t), ev.eval_in(ctx, lo), ev.eval_in(ctx, hi));
    if lo.is_undefined() || hi.is_undefined() {
        return Value::Undefined;
    }
    let (Some(t), Some(lo), Some(hi)) = (string_of(&t), string_of(&lo), string_of(&hi)) else {
        return Value::Error;
    };
    if !charge_bytes(ev, t.len()) {
        return Value::Error;
    }
    Value::Bool(
        natural_cmp(lo.as_bytes(), t.as_bytes()) <= 0
            && natural_cmp(t.as_bytes(), hi.as_bytes()) <= 0,
    )
}

/// `split(s [, separators])`: splits at any separator byte (default comma,
/// space and tab). Runs of white space, and a separator with white space
/// around it, count as one separator; a repeated non-space separator
/// yields an empty item.
pub(super) fn split(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.is_empty() || args.len() > 2 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    let Value::String(s) = &vals[0] else {
        return Value::Error;
    };
    let seps: &[u8] = match vals.get(1) {
        Some(Value::String(seps)) => seps.as_bytes(),
        Some(_) => return Value::Error,
        None => b", \t",
    };
    if !charge_bytes(ev, s.len()) {
        return Value::Error;
    }
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut last = 0;
    let mut prev_sep: Option<u8> = None;
    if !seps.is_empty() {
        for (ix, &c) in b.iter().enumerate() {
            if !seps.contains(&c) {
                continue;
            }
            if ix > last {
                out.push(bytes_result(b[last..ix].to_vec()));
            } else if prev_sep.is_some_and(|p| !is_c_space(p) && p == c) {
                out.push(Value::string(""));
            }
            if !is_c_space(c) {
                prev_sep = Some(c);
            }
            last = ix + 1;
        }
    }
    if b.len() > last {
        out.push(bytes_result(b[last..].to_vec()));
    }
    list_result(out)
}

/// `splitUserName("user@domain")` and `splitSlotName("slot@machine")`: a
/// two-string list split at the first `@`.
pub(super) fn split_at(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr], slot: bool) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let Value::String(s) = ev.eval_in(ctx, a) else {
        return Value::Error;
    };
    let (first, second) = match s.split_once('@') {
        Some((a, b)) => (a, b),
        None if slot => ("", &*s),
        None => (&*s, ""),
    };
    Value::list(vec![Value::string(first), Value::string(second)])
}

/// The items of a string list: split at any delimiter byte, trimmed of white
/// space, empty items dropped.
pub(super) fn string_list_items<'s>(s: &'s str, delims: &[u8]) -> Vec<&'s [u8]> {
    s.as_bytes()
        .split(|c| delims.contains(c))
        .map(|item| {
            let start = item
                .iter()
                .position(|&c| !is_c_space(c))
                .unwrap_or(item.len());
            let end = item
                .iter()
                .rposition(|&c| !is_c_space(c))
                .map_or(start, |e| e + 1);
            &item[start..end.max(start)]
        })
        .filter(|item| !item.is_empty())
        .collect()
}

/// Default delimiters of `stringListSize` and its siblings.
const LIST_DELIMS: &[u8] = b", ";
/// Default delimiters of `stringListMember` and the subset matches.
const MEMBER_DELIMS: &[u8] = b", \t\r\n";

/// Evaluates `(list [, delimiters])` where both must be strings.
fn list_and_delims(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
) -> Result<(std::sync::Arc<str>, Option<std::sync::Arc<str>>), Value> {
    if args.is_empty() || args.len() > 2 {
        return Err(Value::Error);
    }
    let vals = eval_all(ev, ctx, args);
    let Value::String(list) = &vals[0] else {
        return Err(Value::Error);
    };
    let delims = match vals.get(1) {
        Some(Value::String(d)) => Some(d.clone()),
        Some(_) => return Err(Value::Error),
        None => None,
    };
    if !charge_bytes(ev, list.len()) {
        return Err(Value::Error);
    }
    Ok((list.clone(), delims))
}

/// `stringListSize(list [, delimiters])`.
pub(super) fn string_list_size(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    match list_and_delims(ev, ctx, args) {
        Ok((list, delims)) => {
            let d = delims.as_deref().map_or(LIST_DELIMS, str::as_bytes);
            Value::Int(string_list_items(&list, d).len() as i64)
        }
        Err(v) => v,
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Summary {
    Sum,
    Avg,
    Min,
    Max,
}

/// `stringListSum`, `stringListAvg`, `stringListMin`, `stringListMax`: an
/// integer unless some item is not written as one. As in HTCondor, min and
/// max start from C's `FLT_MAX` and `FLT_MIN`.
pub(super) fn string_list_summary(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    kind: Summary,
) -> Value {
    let (list, delims) = match list_and_delims(ev, ctx, args) {
        Ok(x) => x,
        Err(v) => return v,
    };
    let items = string_list_items(&list, delims.as_deref().map_or(LIST_DELIMS, str::as_bytes));
    if items.is_empty() {
        return match kind {
            Summary::Sum | Summary::Avg => Value::Real(0.0),
            Summary::Min | Summary::Max => Value::Undefined,
        };
    }
    let mut acc = match kind {
        Summary::Sum | Summary::Avg => 0.0,
        Summary::Min => f32::MAX as f64,
        Summary::Max => f32::MIN_POSITIVE as f64,
    };
    let mut is_real = false;
    for item in &items {
        // sscanf("%lf"): the items are valid UTF-8 (split at ASCII bytes).
        let text = String::from_utf8_lossy(item);
        let Some((x, _)) = strtod(&text) else {
            return Value::Error;
        };
        if !item.iter().all(|c| b"+-0123456789".contains(c)) {
            is_real = true;
        }
        acc = match kind {
            Summary::Sum | Summary::Avg => x + acc,
            Summary::Min => {
                if x < acc {
                    x
                } else {
                    acc
                }
            }
            Summary::Max => {
                if x > acc {
                    x
                } else {
                    acc
                }
            }
        };
    }
    if kind == Summary::Avg {
        acc /= items.len() as f64;
    }
    if is_real {
        Value::Real(acc)
    } else {
        Value::Int(f64_to_i64(acc))
    }
}

/// The optional delimiter argument of the member and subset functions:
/// undefined means the default.
fn optional_delims(v: Option<&Value>) -> Result<Vec<u8>, Value> {
    match v {
        None | Some(Value::Undefined) => Ok(MEMBER_DELIMS.to_vec()),
        Some(Value::String(d)) => Ok(d.as_bytes().to_vec()),
        Some(_) => Err(Value::Error),
    }
}

/// The arguments of `f(a, b [, delimiters])`, evaluated: error for a wrong
/// count, an error argument or delimiters that are not a string.
fn pair_with_delims(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
) -> Result<(Vec<Value>, Vec<u8>), Value> {
    if args.len() < 2 || args.len() > 3 {
        return Err(Value::Error);
    }
    let vals = eval_all(ev, ctx, args);
    if vals.iter().any(Value::is_error) {
        return Err(Value::Error);
    }
    let delims = optional_delims(vals.get(2))?;
    Ok((vals, delims))
}

fn item_eq(a: &[u8], b: &[u8], fold: bool) -> bool {
    if fold {
        a.eq_ignore_ascii_case(b)
    } else {
        a == b
    }
}

/// `stringListMember(x, list [, delimiters])` and `stringListIMember`.
pub(super) fn string_list_member(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    fold: bool,
) -> Value {
    let (vals, delims) = match pair_with_delims(ev, ctx, args) {
        Ok(parts) => parts,
        Err(v) => return v,
    };
    match (&vals[0], &vals[1]) {
        (Value::Undefined, Value::Undefined) => Value::Undefined,
        (Value::Undefined, Value::String(_)) | (Value::String(_), Value::Undefined) => {
            Value::Bool(false)
        }
        (Value::String(x), Value::String(list)) => {
            if !charge_bytes(ev, list.len()) {
                return Value::Error;
            }
            let found = string_list_items(list, &delims)
                .iter()
                .any(|item| item_eq(item, x.as_bytes(), fold));
            Value::Bool(found)
        }
        _ => Value::Error,
    }
}

/// `stringListSubsetMatch(a, b [, delimiters])` and the case-insensitive
/// `stringListISubsetMatch`: whether every item of `a` is in `b`.
pub(super) fn string_list_subset(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    fold: bool,
) -> Value {
    let (vals, delims) = match pair_with_delims(ev, ctx, args) {
        Ok(parts) => parts,
        Err(v) => return v,
    };
    match (&vals[0], &vals[1]) {
        (Value::Undefined, Value::Undefined) => Value::Undefined,
        (Value::Undefined, Value::String(_)) => Value::Bool(true),
        (Value::String(_), Value::Undefined) => Value::Bool(false),
        (Value::String(a), Value::String(b)) => {
            if a.is_empty() {
                return Value::Bool(true);
            }
            if !charge_bytes(ev, a.len() + b.len()) {
                return Value::Error;
            }
            let have = string_list_items(b, &delims);
            let want = string_list_items(a, &delims);
            if !ev.charge((want.len() as u64).saturating_mul(have.len() as u64) / 64) {
                return Value::Error;
            }
            Value::Bool(
                !want.is_empty()
                    && want
                        .iter()
                        .all(|w| have.iter().any(|h| item_eq(h, w, fold))),
            )
        }
        _ => Value::Error,
    }
}

/// `stringListsIntersect(a, b [, delimiters])`: whether the lists share an
/// item.
pub(super) fn string_lists_intersect(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.len() < 2 || args.len() > 3 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    if vals.iter().any(Value::is_error) {
        return Value::Error;
    }
    if vals.iter().any(Value::is_undefined) {
        return Value::Undefined;
    }
    let delims: &[u8] = match vals.get(2) {
        Some(Value::String(d)) if !d.is_empty() => d.as_bytes(),
        Some(Value::String(_)) | None => b" ,",
        Some(_) => return Value::Error,
    };
    let (Value::String(a), Value::String(b)) = (&vals[0], &vals[1]) else {
        return Value::Error;
    };
    if !charge_bytes(ev, a.len() + b.len()) {
        return Value::Error;
    }
    let set: std::collections::HashSet<&[u8]> = string_list_items(b, delims).into_iter().collect();
    Value::Bool(string_list_items(a, delims).iter().any(|i| set.contains(i)))
}

/// Splits HTCondor's "V2" argument syntax: white space separates
/// arguments; single quotes quote, with `''` for a quote inside them.
fn split_args_v2(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut in_token = false;
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_token = true;
                loop {
                    match chars.next() {
                        None => return None,
                        Some('\'') => {
                            if chars.peek() == Some(&'\'') {
                                chars.next();
                                cur.push('\'');
                            } else {
                                break;
                            }
                        }
                        Some(c) => cur.push(c),
                    }
                }
            }
            ' ' | '\t' | '\n' | '\r' => {
                if in_token {
                    out.push(std::mem::take(&mut cur));
                    in_token = false;
                }
            }
            c => {
                in_token = true;
                cur.push(c);
            }
        }
    }
    if in_token {
        out.push(cur);
    }
    Some(out)
}

/// Appends one argument in V2 syntax, quoting white space and quotes.
fn append_arg_v2(out: &mut String, arg: &str) {
    if !out.is_empty() {
        out.push(' ');
    }
    if arg.is_empty() {
        out.push_str("''");
    }
    for c in arg.chars() {
        match c {
            ' ' | '\t' | '\n' | '\r' | '\'' => {
                if out.ends_with('\'') {
                    // Extend the quoted section just closed.
                    out.pop();
                } else {
                    out.push('\'');
                }
                if c == '\'' {
                    out.push('\'');
                }
                out.push(c);
                out.push('\'');
            }
            c => out.push(c),
        }
    }
}

type Env = BTreeMap<String, String>;

fn env_to_v2(env: &Env) -> Value {
    let mut out = String::new();
    for (k, v) in env {
        append_arg_v2(&mut out, &format!("{k}={v}"));
        if out.len() > MAX_STRING_LEN {
            return Value::Error;
        }
    }
    string_result(out)
}

fn env_set(env: &mut Env, item: &str) -> bool {
    match item.split_once('=') {
        Some((k, v)) if !k.is_empty() => {
            env.insert(k.to_owned(), v.to_owned());
            true
        }
        _ => false,
    }
}

/// `envV1ToV2(env)`: a `;`-separated V1 environment in V2 syntax.
pub(super) fn env_v1_to_v2(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let [a] = args else {
        return Value::Error;
    };
    let s = match ev.eval_in(ctx, a) {
        Value::Undefined => return Value::Undefined,
        Value::String(s) => s,
        _ => return Value::Error,
    };
    if !charge_bytes(ev, s.len()) {
        return Value::Error;
    }
    let mut env = Env::new();
    for item in s.split(';').filter(|i| !i.is_empty()) {
        if !env_set(&mut env, item) {
            return Value::Error;
        }
    }
    env_to_v2(&env)
}

/// `mergeEnvironment(env, ...)`: V2 environments merged, later ones winning;
/// undefined arguments are skipped.
pub(super) fn merge_environment(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    let mut env = Env::new();
    for a in args {
        let s = match ev.eval_in(ctx, a) {
            Value::Undefined => continue,
            Value::String(s) => s,
            _ => return Value::Error,
        };
        if !charge_bytes(ev, s.len()) {
            return Value::Error;
        }
        let Some(items) = split_args_v2(&s) else {
            return Value::Error;
        };
        for item in &items {
            if !env_set(&mut env, item) {
                return Value::Error;
            }
        }
    }
    env_to_v2(&env)
}

/// The optional syntax-version argument of `argsToList` and `listToArgs`.
fn args_version(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Option<i64> {
    match args.get(1) {
        None => Some(2),
        Some(e) => match ev.eval_in(ctx, e) {
            Value::Int(v @ (1 | 2)) => Some(v),
            _ => None,
        },
    }
}

/// `argsToList(args [, version])`: an argument string as a list.
pub(super) fn args_to_list(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.is_empty() || args.len() > 2 {
        return Value::Error;
    }
    let Some(version) = args_version(ev, ctx, args) else {
        return Value::Error;
    };
    let Value::String(s) = ev.eval_in(ctx, &args[0]) else {
        return Value::Error;
    };
    if !charge_bytes(ev, s.len()) {
        return Value::Error;
    }
    let items: Vec<String> = if version == 1 {
        s.split(|c: char| c.is_ascii_whitespace())
            .filter(|a| !a.is_empty())
            .map(str::to_owned)
            .collect()
    } else {
        match split_args_v2(&s) {
            Some(items) => items,
            None => return Value::Error,
        }
    };
    list_result(items.into_iter().map(Value::from).collect())
}

/// `listToArgs(list [, version])`: a list of strings as an argument string.
pub(super) fn list_to_args(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.is_empty() || args.len() > 2 {
        return Value::Error;
    }
    let Some(version) = args_version(ev, ctx, args) else {
        return Value::Error;
    };
    let Value::List(items) = ev.eval_in(ctx, &args[0]) else {
        return Value::Error;
    };
    let mut out = String::new();
    for item in items.iter() {
        let Value::String(s) = item else {
            return Value::Error;
        };
        if version == 1 {
            if s.bytes().any(|c| c.is_ascii_whitespace()) {
                return Value::Error;
            }
            if !out.is_empty() {
                out.push(' ');
            }
            out.push_str(s);
        } else {
            append_arg_v2(&mut out, s);
        }
        if out.len() > MAX_STRING_LEN || !charge_bytes(ev, s.len()) {
            return Value::Error;
        }
    }
    string_result(out)
}
