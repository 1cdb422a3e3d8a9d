//! Regular expressions: `regexp`, `regexpMember`, `regexps`, `replace`,
//! `replaceAll`, `stringList_regexpMember`.
//!
//! HTCondor uses PCRE without UTF mode: patterns and targets are bytes, and
//! `\w`, `\d`, case folding and friends are ASCII. We use the `regex` crate
//! on bytes with Unicode off, which matches that in linear time; PCRE
//! features it lacks (backreferences, look-around, possessive quantifiers)
//! make the pattern invalid, so the function yields `error`.

use std::cell::RefCell;
use std::sync::Arc;

use regex::bytes::{Captures, Regex, RegexBuilder};

use super::super::ast::Expr;
use super::super::eval::{Ctx, Evaluator};
use super::super::limits::MAX_STRING_LEN;
use super::super::value::Value;
use super::{bytes_result, charge_bytes, eval_all, strings};

/// Compilation budget of one pattern, in bytes of compiled program.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Compiled patterns kept per thread.
const CACHE_ENTRIES: usize = 64;
/// Longer patterns are compiled every time rather than cached.
const CACHE_MAX_PATTERN: usize = 4096;

/// Pattern options, from HTCondor's option letters.
#[derive(Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Flags {
    caseless: bool,
    multiline: bool,
    dotall: bool,
    extended: bool,
    /// `f`: substitution returns the whole target with the match replaced.
    full: bool,
    /// `g`: substitution replaces every match.
    global: bool,
}

impl Flags {
    pub(super) fn caseless() -> Flags {
        Flags {
            caseless: true,
            ..Flags::default()
        }
    }

    /// Reads option letters; unknown ones are ignored, as in HTCondor.
    /// `either_case` accepts upper-case letters too (only
    /// `stringList_regexpMember` does).
    fn parse(opts: &str, either_case: bool) -> Flags {
        let mut f = Flags::default();
        for c in opts.chars() {
            let c = if either_case {
                c.to_ascii_lowercase()
            } else {
                c
            };
            match c {
                'i' => f.caseless = true,
                'm' => f.multiline = true,
                's' => f.dotall = true,
                'x' => f.extended = true,
                'f' => f.full = true,
                'g' => f.global = true,
                _ => {}
            }
        }
        f
    }

    fn key(self) -> u8 {
        self.caseless as u8
            | (self.multiline as u8) << 1
            | (self.dotall as u8) << 2
            | (self.extended as u8) << 3
    }
}

type CacheEntry = (Box<str>, u8, Option<Arc<Regex>>);

thread_local! {
    /// Recently compiled patterns, most recent last.
    static CACHE: RefCell<Vec<CacheEntry>> = const { RefCell::new(Vec::new()) };
}

/// Writes the pattern's non-ASCII characters as byte escapes, so that (as in
/// PCRE without UTF mode) `é` is two bytes and `[é]` a class of two bytes.
fn ascii_pattern(pattern: &str) -> std::borrow::Cow<'_, str> {
    if pattern.is_ascii() {
        return pattern.into();
    }
    let mut out = String::with_capacity(pattern.len() * 2);
    let mut chars = pattern.chars().peekable();
    let byte_escapes = |out: &mut String, c: char| {
        let mut buf = [0; 4];
        for b in c.encode_utf8(&mut buf).bytes() {
            out.push_str(&format!("\\x{b:02X}"));
        }
    };
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                // An escaped non-ASCII character is itself.
                Some(n) if !n.is_ascii() => byte_escapes(&mut out, n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else if !c.is_ascii() {
            byte_escapes(&mut out, c);
        } else {
            out.push(c);
        }
    }
    out.into()
}

fn build(pattern: &str, flags: Flags) -> Option<Arc<Regex>> {
    RegexBuilder::new(&ascii_pattern(pattern))
        .unicode(false)
        .case_insensitive(flags.caseless)
        .multi_line(flags.multiline)
        .dot_matches_new_line(flags.dotall)
        .ignore_whitespace(flags.extended)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .build()
        .ok()
        .map(Arc::new)
}

/// Compiles a pattern (through a small per-thread cache); `None` if it is
/// invalid, unsupported or too big.
pub(super) fn compile(pattern: &str, flags: Flags) -> Option<Arc<Regex>> {
    if pattern.len() > CACHE_MAX_PATTERN {
        return build(pattern, flags);
    }
    let key = flags.key();
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if let Some(i) = cache
            .iter()
            .position(|(p, k, _)| *k == key && **p == *pattern)
        {
            let entry = cache.remove(i);
            let re = entry.2.clone();
            cache.push(entry);
            return re;
        }
        let re = build(pattern, flags);
        if cache.len() >= CACHE_ENTRIES {
            cache.remove(0);
        }
        cache.push((pattern.into(), key, re.clone()));
        re
    })
}

/// Charges for compiling (a cache miss costs about this much) and matching.
fn charge_match(ev: &mut Evaluator<'_>, pattern: &str, target_len: usize) -> bool {
    charge_bytes(ev, pattern.len() + target_len)
}

/// The common argument checks of `regexp` and `regexpMember`: error first,
/// then undefined, then the options' type. `Ok` gives the options text.
fn prelude(vals: &[Value]) -> Result<String, Value> {
    if vals.iter().any(Value::is_error) {
        return Err(Value::Error);
    }
    if vals.iter().any(Value::is_undefined) {
        return Err(Value::Undefined);
    }
    match vals.last() {
        Some(Value::String(o)) if vals.len() > 2 => Ok(o.to_string()),
        Some(_) if vals.len() > 2 => Err(Value::Error),
        _ => Ok(String::new()),
    }
}

/// `regexp(pattern, target [, options])`.
pub(super) fn regexp(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.len() < 2 || args.len() > 3 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    let opts = match prelude(&vals) {
        Ok(o) => o,
        Err(v) => return v,
    };
    let (Value::String(p), Value::String(t)) = (&vals[0], &vals[1]) else {
        return Value::Error;
    };
    if !charge_match(ev, p, t.len()) {
        return Value::Error;
    }
    match compile(p, Flags::parse(&opts, false)) {
        Some(re) => Value::Bool(re.is_match(t.as_bytes())),
        None => Value::Error,
    }
}

/// `regexpMember(pattern, list [, options])`: whether some string of the
/// list matches; undefined if none does and some element is undefined.
pub(super) fn regexp_member(ev: &mut Evaluator<'_>, ctx: Ctx<'_>, args: &[Expr]) -> Value {
    if args.len() < 2 || args.len() > 3 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    let opts = match prelude(&vals) {
        Ok(o) => o,
        Err(v) => return v,
    };
    let (Value::String(p), Value::List(items)) = (&vals[0], &vals[1]) else {
        return Value::Error;
    };
    // HTCondor treats an invalid pattern as matching nothing here.
    let re = compile(p, Flags::parse(&opts, false));
    let mut maybe_undefined = false;
    for item in items.iter() {
        match item {
            Value::String(t) => {
                if !charge_match(ev, p, t.len()) {
                    return Value::Error;
                }
                if re.as_ref().is_some_and(|re| re.is_match(t.as_bytes())) {
                    return Value::Bool(true);
                }
            }
            Value::Undefined => maybe_undefined = true,
            _ => return Value::Error,
        }
    }
    if maybe_undefined {
        Value::Undefined
    } else {
        Value::Bool(false)
    }
}

/// Appends the substitution text for one match: `\0`..`\9` name groups (a
/// group past the last one that took part is an error, one that did not
/// take part is empty); any other backslash is literal.
fn expand(out: &mut Vec<u8>, caps: &Captures<'_>, replace: &[u8]) -> bool {
    let ngroups = (0..caps.len())
        .rev()
        .find(|&i| caps.get(i).is_some())
        .map_or(0, |i| i + 1);
    let mut i = 0;
    while i < replace.len() {
        let c = replace[i];
        if c == b'\\' && replace.get(i + 1).is_some_and(u8::is_ascii_digit) {
            let g = (replace[i + 1] - b'0') as usize;
            if g >= ngroups {
                return false;
            }
            if let Some(m) = caps.get(g) {
                out.extend_from_slice(m.as_bytes());
            }
            i += 2;
        } else {
            out.push(c);
            i += 1;
        }
    }
    true
}

/// `regexps(pattern, target, substitute [, options])`, and `replace` and
/// `replaceAll`, which are `regexps` with the `f` and `fg` options.
pub(super) fn substitute(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
    extra: &str,
) -> Value {
    if args.len() < 3 || args.len() > 4 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    if vals.iter().any(Value::is_error) {
        return Value::Error;
    }
    if vals.iter().any(Value::is_undefined) {
        return Value::Undefined;
    }
    let mut opts = match vals.get(3) {
        Some(Value::String(o)) => o.to_string(),
        Some(_) => return Value::Error,
        None => String::new(),
    };
    opts.push_str(extra);
    let (Value::String(p), Value::String(t), Value::String(r)) = (&vals[0], &vals[1], &vals[2])
    else {
        return Value::Error;
    };
    if !charge_match(ev, p, t.len()) {
        return Value::Error;
    }
    let flags = Flags::parse(&opts, false);
    let Some(re) = compile(p, flags) else {
        return Value::Error;
    };
    let target = t.as_bytes();
    let mut out = Vec::new();
    let mut idx = 0;
    while idx <= target.len() {
        let Some(caps) = re.captures_at(target, idx) else {
            break;
        };
        let m = caps.get(0).expect("group 0 always matches");
        // HTCondor fails a global substitution that matches the empty
        // string.
        if flags.global && m.is_empty() {
            return Value::Error;
        }
        if flags.full {
            out.extend_from_slice(&target[idx..m.start()]);
        }
        if !expand(&mut out, &caps, r.as_bytes()) {
            return Value::Error;
        }
        idx = m.end();
        if out.len() > MAX_STRING_LEN || !charge_bytes(ev, r.len()) {
            return Value::Error;
        }
        if !flags.global {
            break;
        }
    }
    if flags.full {
        out.extend_from_slice(&target[idx.min(target.len())..]);
    }
    bytes_result(out)
}

/// `stringList_regexpMember(pattern, list [, delimiters [, options]])`.
pub(super) fn string_list_regexp_member(
    ev: &mut Evaluator<'_>,
    ctx: Ctx<'_>,
    args: &[Expr],
) -> Value {
    if args.len() < 2 || args.len() > 4 {
        return Value::Error;
    }
    let vals = eval_all(ev, ctx, args);
    let mut strs = Vec::with_capacity(vals.len());
    for v in &vals {
        match v {
            Value::String(s) => strs.push(s.clone()),
            _ => return Value::Error,
        }
    }
    let delims = strs.get(2).map_or(&b", "[..], |d| d.as_bytes());
    let items = strings::string_list_items(&strs[1], delims);
    if items.is_empty() {
        return Value::Undefined;
    }
    if !charge_match(ev, &strs[0], strs[1].len()) {
        return Value::Error;
    }
    let opts = strs.get(3).map_or("", |o| o);
    let Some(re) = compile(&strs[0], Flags::parse(opts, true)) else {
        return Value::Error;
    };
    Value::Bool(items.iter().any(|i| re.is_match(i)))
}
