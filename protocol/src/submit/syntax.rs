//! Reading a submit file into [`Statement`]s, as `condor_submit` reads one:
//! logical lines (continuations joined, comments dropped), `if`/`elif`/
//! `else`/`endif` with HTCondor's conditions, `include : FILE` and
//! `include command : PROGRAM`, `command = value` and `+Attr = value`
//! lines, and `queue` statements with their items and slices.
//!
//! It owns the syntax and checks its limits (line length, include depth,
//! file size; the numbers are `description`'s); what the statements mean
//! (macros, job ads, warnings) is the other modules'. It touches the
//! outside world only through the [`Environment`] an [`Includer`] carries.

use std::collections::BTreeMap;
use std::path::Path;

use super::commands::ATTRIBUTE_ALIASES;
use super::description::{
    Items, Slice, Statement, SubmitError, INCLUDE_LINE_BASE, MAX_FILE_LEN, MAX_INCLUDE_DEPTH,
    MAX_LINE_LEN, MAX_MACRO_DEPTH,
};
use super::environment::{commands_refused, resolve, Environment};
use crate::classad::{parse_expr, Name};

/// Where included files come from.
pub(super) struct Includer<'a> {
    pub(super) dir: &'a Path,
    pub(super) env: &'a dyn Environment,
}

/// What parsing has gathered so far, over the file and its includes.
#[derive(Default)]
pub(super) struct Parsed {
    pub(super) statements: Vec<Statement>,
    /// The macros set so far, for `if` conditions.
    pub(super) defined: BTreeMap<String, String>,
    /// The included files, in order (see [`INCLUDE_LINE_BASE`]).
    pub(super) sources: Vec<String>,
    /// Macros `if` conditions name: used, for [`super::Description::warnings`].
    pub(super) in_conditions: std::collections::BTreeSet<String>,
    pub(super) bytes: usize,
}

/// Reads one file's lines into `parsed`; its statements' lines are offset
/// by `base` (0 for the submit file itself).
pub(super) fn read_text(
    parsed: &mut Parsed,
    file: &str,
    text: &str,
    base: usize,
    includes: Option<&Includer<'_>>,
    depth: usize,
) -> Result<(), SubmitError> {
    let err = |line: usize, problem: String| SubmitError {
        file: file.to_owned(),
        line,
        problem,
    };
    if text.len() > MAX_FILE_LEN {
        return Err(err(
            0,
            format!("the file is {} bytes, more than {MAX_FILE_LEN}", text.len()),
        ));
    }
    let lines = logical_lines(text).map_err(|(l, p)| err(l, p))?;
    // The open `if`s of this file.
    let mut conditions: Vec<Branch> = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let (line, body) = (lines[i].0, lines[i].1.as_str());
        i += 1;
        if body.len() > MAX_LINE_LEN {
            return Err(err(
                line,
                format!("the line is longer than {MAX_LINE_LEN} bytes"),
            ));
        }
        let lower = body.to_ascii_lowercase();
        let word = lower.split_whitespace().next().unwrap_or("");
        if matches!(word, "if" | "elif" | "else" | "endif") {
            let rest = body[word.len()..].trim();
            referenced(rest, &mut parsed.in_conditions);
            if let Some(name) = rest
                .trim_start_matches(['!', ' ', '\t'])
                .strip_prefix("defined")
            {
                parsed
                    .in_conditions
                    .insert(name.trim().to_ascii_lowercase());
            }
            let active = conditions.iter().all(|c: &Branch| c.active);
            match word {
                "if" => {
                    let value = if active {
                        condition(rest, &parsed.defined).map_err(|p| err(line, p))?
                    } else {
                        false
                    };
                    conditions.push(Branch {
                        active: value,
                        taken: value,
                        line,
                        seen_else: false,
                    });
                }
                "elif" | "else" => {
                    let parent = conditions.len() > 1
                        && conditions[..conditions.len() - 1].iter().all(|c| c.active);
                    let parent = parent || conditions.len() == 1;
                    let Some(top) = conditions.last_mut() else {
                        return Err(err(line, format!("{word} without an if")));
                    };
                    if top.seen_else {
                        return Err(err(line, format!("{word} after else")));
                    }
                    let value = if top.taken || !parent {
                        false
                    } else if word == "else" {
                        true
                    } else {
                        condition(rest, &parsed.defined).map_err(|p| err(line, p))?
                    };
                    top.seen_else = word == "else";
                    top.active = value;
                    top.taken |= value;
                }
                _ => {
                    if conditions.pop().is_none() {
                        return Err(err(line, "endif without an if".to_owned()));
                    }
                }
            }
            continue;
        }
        if !conditions.iter().all(|c| c.active) {
            continue;
        }
        if word == "include" || lower.starts_with("include:") {
            let rest = body["include".len()..].trim_start();
            let command = rest
                .get(.."command".len())
                .is_some_and(|w| w.eq_ignore_ascii_case("command"))
                .then(|| rest["command".len()..].trim_start())
                .and_then(|r| r.strip_prefix(':'));
            if let Some(command) = command {
                let command = expand_simple(command.trim(), &parsed.defined, 0);
                let Some(includer) = includes else {
                    return Err(err(line, commands_refused(&command)));
                };
                if depth >= MAX_INCLUDE_DEPTH {
                    return Err(err(
                        line,
                        format!("include command : {command}: includes nest deeper than {MAX_INCLUDE_DEPTH}"),
                    ));
                }
                let included = includer
                    .env
                    .run(&command, includer.dir)
                    .map_err(|e| err(line, format!("include command : {e}")))?;
                parsed.bytes += included.len();
                if parsed.bytes > MAX_FILE_LEN {
                    return Err(err(
                        line,
                        format!("include command : {command}: the file and its includes come to more than {MAX_FILE_LEN} bytes"),
                    ));
                }
                let name = format!("command {command}");
                parsed.sources.push(name.clone());
                let included_base = parsed.sources.len() * INCLUDE_LINE_BASE;
                read_text(parsed, &name, &included, included_base, includes, depth + 1)?;
                continue;
            }
            let Some(target) = rest.strip_prefix(':') else {
                return Err(err(
                    line,
                    "expected `include : FILE` or `include command : PROGRAM`".to_owned(),
                ));
            };
            let target = expand_simple(target.trim(), &parsed.defined, 0);
            let Some(includer) = includes else {
                return Err(err(
                    line,
                    format!("include : {target}: included files are read only where the submitter's files are"),
                ));
            };
            if depth >= MAX_INCLUDE_DEPTH {
                return Err(err(
                    line,
                    format!("include : {target}: includes nest deeper than {MAX_INCLUDE_DEPTH}"),
                ));
            }
            let path = resolve(includer.dir, &target);
            let included = includer.env.read_file(&path).map_err(|e| {
                err(
                    line,
                    format!("include : cannot read {}: {e}", path.display()),
                )
            })?;
            parsed.bytes += included.len();
            if parsed.bytes > MAX_FILE_LEN {
                return Err(err(
                    line,
                    format!("include : {target}: the file and its includes come to more than {MAX_FILE_LEN} bytes"),
                ));
            }
            let name = path.display().to_string();
            parsed.sources.push(name.clone());
            let included_base = parsed.sources.len() * INCLUDE_LINE_BASE;
            read_text(parsed, &name, &included, included_base, includes, depth + 1)?;
            continue;
        }
        if lower == "queue" || lower.starts_with("queue ") || lower.starts_with("queue\t") {
            let mut rest = body[5..].trim().to_owned();
            // A parenthesised list may go on over several lines.
            if rest.contains('(') && !rest.contains(')') {
                loop {
                    let Some((_, more)) = lines.get(i) else {
                        return Err(err(line, "the item list's '(' is never closed".to_owned()));
                    };
                    i += 1;
                    rest.push('\n');
                    rest.push_str(more);
                    if more.contains(')') {
                        break;
                    }
                }
            }
            parsed
                .statements
                .push(parse_queue(&rest, base + line).map_err(|p| err(line, p))?);
            continue;
        }
        let Some((key, value)) = body.split_once('=') else {
            return Err(err(
                line,
                format!("{body:?} is neither `command = value` nor a queue statement"),
            ));
        };
        let key = key.trim();
        let value = value.trim().to_owned();
        let key = if let Some(attr) = key.strip_prefix('+') {
            format!("my.{attr}")
        } else {
            key.to_owned()
        };
        let lower_key = key.to_ascii_lowercase();
        if lower_key.starts_with("my.") {
            let attr = &key[3..];
            if !attr.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                return Err(err(
                    line,
                    format!("+{attr}: an attribute name starts with a letter"),
                ));
            }
            Name::new(attr).map_err(|e| err(line, format!("+{attr}: {e}")))?;
            if !value.contains("$(") {
                parse_expr(&value).map_err(|e| err(line, format!("+{attr} = {value}: {e}")))?;
            }
            parsed.statements.push(Statement::Set {
                key: format!("my.{attr}"),
                value,
                line: base + line,
            });
            continue;
        }
        if lower_key.is_empty()
            || !lower_key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(err(line, format!("{key:?} is not a command name")));
        }
        // HTCondor also takes a command by the name of the attribute it
        // sets (`JobBatchName = x` for `batch_name = x`).
        let lower_key = ATTRIBUTE_ALIASES
            .iter()
            .find(|(alias, _)| *alias == lower_key)
            .map_or(lower_key, |(_, command)| (*command).to_owned());
        let value = self_reference(
            &lower_key,
            &value,
            parsed.defined.get(&lower_key).map(String::as_str),
        );
        parsed.defined.insert(lower_key.clone(), value.clone());
        parsed.statements.push(Statement::Set {
            key: lower_key,
            value,
            line: base + line,
        });
    }
    if let Some(open) = conditions.last() {
        return Err(err(open.line, "this if has no endif".to_owned()));
    }
    Ok(())
}

/// One open `if`: whether its lines count now, whether a branch was
/// taken, where it opened.
struct Branch {
    active: bool,
    taken: bool,
    line: usize,
    seen_else: bool,
}

/// The HTCondor version whose submit language this is, for `if version`.
const HTCONDOR_VERSION: [i64; 3] = [25, 14, 1];

/// The value of an `if`/`elif` condition as HTCondor reads one: a number,
/// a boolean word, `defined NAME`, `version OP X.Y[.Z]`, any of them after
/// macro expansion and a leading `!`. Anything else ("complex
/// conditionals") HTCondor refuses, and so does Starling.
fn condition(text: &str, macros: &BTreeMap<String, String>) -> Result<bool, String> {
    let expanded = expand_simple(text, macros, 0);
    let t = expanded.trim();
    if let Some(rest) = t.strip_prefix('!') {
        return condition(rest, macros).map(|v| !v);
    }
    if let Ok(n) = t.parse::<f64>() {
        return Ok(n != 0.0);
    }
    if let Some(b) = parse_bool(t).filter(|_| !t.chars().all(|c| c.is_ascii_digit())) {
        return Ok(b);
    }
    let lower = t.to_ascii_lowercase();
    if let Some(name) = lower.strip_prefix("defined") {
        let name = name.trim();
        if name.is_empty() {
            return Ok(false);
        }
        if name.parse::<f64>().is_ok() || parse_bool(name).is_some() {
            return Ok(true);
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
        {
            return Err(format!(
                "{t:?} is not a valid if condition: defined takes a macro name, a boolean or a number"
            ));
        }
        return Ok(macros.get(name).is_some_and(|v| !v.is_empty()));
    }
    if let Some(rest) = lower.strip_prefix("version") {
        let rest = rest.trim();
        let (negated, rest) = match rest.strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let op_len = rest
            .find(|c: char| !"<=>".contains(c))
            .unwrap_or(rest.len());
        let (op, version) = rest.split_at(op_len);
        let parts: Vec<i64> = version
            .trim()
            .trim_start_matches(['v', 'V'])
            .split('.')
            .map(|p| p.trim().parse::<i64>())
            .collect::<Result<_, _>>()
            .map_err(|_| format!("{t:?}: the version literal is invalid"))?;
        if parts.len() < 2 || parts.len() > 3 || parts[0] < 6 {
            return Err(format!("{t:?}: the version literal is invalid"));
        }
        let given = [
            parts[0],
            parts[1],
            parts.get(2).copied().unwrap_or(HTCONDOR_VERSION[2]),
        ];
        let ordering = HTCONDOR_VERSION.cmp(&given);
        use std::cmp::Ordering::*;
        let value = match op {
            ">" => ordering == Greater,
            ">=" => ordering != Less,
            "<" => ordering == Less,
            "<=" => ordering != Greater,
            "==" | "=" => ordering == Equal,
            _ => return Err(format!("{t:?}: {op:?} is not a comparison")),
        };
        return Ok(value != negated);
    }
    Err(format!(
        "{t:?} is not a valid if condition: complex conditionals are not supported (as in \
         HTCondor: use a number, true/false, `defined NAME` or `version >= X.Y`)"
    ))
}

/// `$(NAME)` and `$(NAME:default)` replaced by the macros set so far, for
/// `if` conditions.
fn expand_simple(text: &str, macros: &BTreeMap<String, String>, depth: usize) -> String {
    if depth > MAX_MACRO_DEPTH {
        return String::new();
    }
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("$(") {
        out.push_str(&rest[..at]);
        let body = &rest[at + 2..];
        let Some(end) = body.find(')') else {
            out.push_str(&rest[at..]);
            return out;
        };
        let inner = &body[..end];
        let (name, default) = match inner.split_once(':') {
            Some((n, d)) => (n.trim(), Some(d)),
            None => (inner.trim(), None),
        };
        match macros.get(&name.to_ascii_lowercase()) {
            Some(v) => out.push_str(&expand_simple(v, macros, depth + 1)),
            None => out.push_str(default.unwrap_or("")),
        }
        rest = &body[end + 1..];
    }
    out.push_str(rest);
    out
}

/// Joins continuation lines, drops comments and blank lines; each line
/// keeps the number it started on.
fn logical_lines(text: &str) -> Result<Vec<(usize, String)>, (usize, String)> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (n, raw) in text.lines().enumerate() {
        let n = n + 1;
        let trimmed = raw.trim();
        if pending.is_none() && (trimmed.is_empty() || trimmed.starts_with('#')) {
            continue;
        }
        let (start, mut acc) = pending.take().unwrap_or((n, String::new()));
        // As HTCondor joins a continued line: the next line's leading
        // blanks dropped, the blanks before the backslash kept, nothing
        // put between (`a\` then `  b` is `ab`).
        if let Some(head) = raw.trim_start().trim_end().strip_suffix('\\') {
            acc.push_str(head);
            if acc.len() > MAX_LINE_LEN {
                return Err((
                    start,
                    format!("the line is longer than {MAX_LINE_LEN} bytes"),
                ));
            }
            pending = Some((start, acc));
        } else {
            acc.push_str(trimmed);
            out.push((start, acc.trim().to_owned()));
        }
    }
    if let Some((start, acc)) = pending {
        out.push((start, acc.trim().to_owned()));
    }
    Ok(out)
}

fn parse_queue(rest: &str, _line: usize) -> Result<Statement, String> {
    let line = _line;
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(Statement::Queue {
            count: None,
            vars: Vec::new(),
            items: Items::None,
            slice: None,
            line,
        });
    }
    let lower = rest.to_ascii_lowercase();
    // Find the keyword that separates "[count] [vars]" from the items.
    let keyword = [" in ", " from ", " matching "]
        .iter()
        .filter_map(|k| {
            let padded = format!(" {lower} ");
            padded.find(k).map(|at| (at, *k))
        })
        .min_by_key(|(at, _)| *at);
    let Some((at, keyword)) = keyword else {
        // `queue N` (N may be a macro or an expression).
        if rest.split_whitespace().count() != 1 {
            return Err(format!(
                "`queue {rest}`: expected `queue [N] [VAR] in|from|matching ...`"
            ));
        }
        return Ok(Statement::Queue {
            count: Some(rest.to_owned()),
            vars: Vec::new(),
            items: Items::None,
            slice: None,
            line,
        });
    };
    let head = rest[..at.saturating_sub(0).min(rest.len())].trim();
    let tail = rest[(at + keyword.len() - 1).min(rest.len())..].trim();
    let (slice, tail) = match Slice::parse(tail)? {
        Some((slice, tail)) => (Some(slice), tail),
        None => (None, tail),
    };
    let mut words: Vec<&str> = head
        .split(|c: char| c.is_whitespace() || c == ',')
        .filter(|w| !w.is_empty())
        .collect();
    let count = match words.first() {
        Some(w) if w.starts_with(|c: char| c.is_ascii_digit() || c == '$') => {
            let c = w.to_string();
            words.remove(0);
            Some(c)
        }
        _ => None,
    };
    let mut vars = Vec::new();
    for w in words {
        if !w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
            || w.starts_with(|c: char| c.is_ascii_digit())
        {
            return Err(format!("{w:?} is not a variable name"));
        }
        vars.push(w.to_ascii_lowercase());
    }
    let items = match keyword.trim() {
        "in" => Items::List(list_items(tail, true)?),
        "from" => {
            if tail.starts_with('(') {
                Items::List(list_items(tail, false)?)
            } else if tail.is_empty() {
                return Err("`queue ... from` needs a file name or a ( list )".to_owned());
            } else if let Some(command) = tail.strip_suffix('|') {
                if command.trim().is_empty() {
                    return Err("`queue ... from |` names no program".to_owned());
                }
                Items::Command(command.trim().to_owned())
            } else {
                Items::File(tail.to_owned())
            }
        }
        _ => {
            let mut words: Vec<&str> = tail.split_whitespace().collect();
            let mut dirs = false;
            match words.first().map(|w| w.to_ascii_lowercase()) {
                Some(w) if w == "files" => {
                    words.remove(0);
                }
                Some(w) if w == "dirs" => {
                    dirs = true;
                    words.remove(0);
                }
                _ => {}
            }
            let patterns: Vec<String> = words
                .iter()
                .map(|w| w.trim_matches(|c| c == '(' || c == ')' || c == ','))
                .filter(|w| !w.is_empty())
                .map(str::to_owned)
                .collect();
            if patterns.is_empty() {
                return Err("`queue ... matching` needs a pattern".to_owned());
            }
            Items::Matching { patterns, dirs }
        }
    };
    Ok(Statement::Queue {
        count,
        vars,
        items,
        slice,
        line,
    })
}

/// The items of `( a, b, c )` (commas or new lines separate them when
/// `commas`, else each line is an item).
fn list_items(tail: &str, commas: bool) -> Result<Vec<String>, String> {
    let inner = match tail
        .strip_prefix('(')
        .and_then(|t| t.trim_end().strip_suffix(')'))
    {
        Some(inner) => inner,
        // `queue name in A, B, C`: the rest of the line is the list.
        None if commas && !tail.starts_with('(') => tail,
        None => return Err(format!("expected a ( list ), not {tail:?}")),
    };
    let items: Vec<String> = if commas {
        // `in`: items are separated by commas and white space.
        inner
            .lines()
            .filter(|l| !l.trim_start().starts_with('#'))
            .flat_map(|l| l.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect()
    } else {
        inner
            .lines()
            .map(|s| s.trim().to_owned())
            .filter(|s| !s.is_empty() && !s.starts_with('#'))
            .collect()
    };
    Ok(items)
}

/// The macros a value refers to (`$(NAME)` and `$(NAME:default)`), lower case.
pub(super) fn referenced(value: &str, into: &mut std::collections::BTreeSet<String>) {
    let mut rest = value;
    while let Some(at) = rest.find("$(") {
        let after = &rest[at + 2..];
        if let Some(end) = after.find(')') {
            let name = after[..end].split(':').next().unwrap_or("");
            into.insert(name.trim().to_ascii_lowercase());
            rest = &after[end..];
        } else {
            break;
        }
    }
}

/// `value` with its references to `key` itself (`$(key)`, any case)
/// replaced by `previous` (empty when there is none).
pub(super) fn self_reference(key: &str, value: &str, previous: Option<&str>) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("$(") {
        let body = &rest[at + 2..];
        let name_end = body.find([')', ':']).unwrap_or(body.len());
        if body[..name_end].trim().eq_ignore_ascii_case(key) && body[name_end..].starts_with(')') {
            out.push_str(&rest[..at]);
            out.push_str(previous.unwrap_or(""));
            rest = &body[name_end + 1..];
        } else {
            out.push_str(&rest[..at + 2]);
            rest = body;
        }
    }
    out.push_str(rest);
    out
}

/// A boolean word as an `if` condition or `should_transfer_files` takes
/// one (`yes`, `t`, `1`, …), any case.
pub(super) fn parse_bool(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" | "t" | "y" | "1" => Some(true),
        "false" | "no" | "f" | "n" | "0" => Some(false),
        _ => None,
    }
}
