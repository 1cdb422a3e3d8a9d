//! Macro expansion at a queue statement, as `condor_submit` expands:
//! `$(NAME)` and `$(NAME:default)` from the proc's own values (queue
//! variables, `Process`, …) and then the file's, the macro functions
//! (`$INT`, `$EVAL`, `$CHOICE`, … computed by `functions`), and `$$(…)`
//! left for match time.
//!
//! It owns the expansion rules and their limits (depth, expanded length);
//! it reads statements but never changes them, and it does not know what
//! a command means in a job ad (`job_ad`'s).

use std::collections::BTreeMap;
use std::path::Path;

use super::description::{Description, Statement, SubmitError, MAX_MACRO_DEPTH, MAX_VALUE_LEN};
use super::environment::Environment;
use super::functions;

/// The macros at one queue statement.
pub(super) struct Macros<'a> {
    pub(super) map: &'a BTreeMap<String, String>,
    pub(super) cwd: &'a Path,
    pub(super) env: &'a dyn Environment,
    pub(super) file: &'a Description,
    pub(super) line: usize,
}

impl Macros<'_> {
    pub(super) fn line_of(&self, key: &str) -> Option<usize> {
        // The latest setting before this queue statement, in file order
        // (lines of included files are offset, so order is what counts).
        let statements = &self.file.statements;
        let end = statements
            .iter()
            .position(|s| matches!(s, Statement::Queue { line, .. } if *line == self.line))
            .unwrap_or(statements.len());
        statements[..end].iter().rev().find_map(|s| match s {
            Statement::Set { key: k, line, .. } if k == key => Some(*line),
            _ => None,
        })
    }

    /// A macro's raw value: the proc's own (queue variables, Process, …)
    /// first, then the file's.
    fn lookup(&self, lower: &str, per: &BTreeMap<String, String>) -> Option<String> {
        per.get(lower).or_else(|| self.map.get(lower)).cloned()
    }

    /// The value of `name` for a function argument: the macro of that
    /// name, expanded, else the text itself.
    fn argument(
        &self,
        name: &str,
        per: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<String, SubmitError> {
        let name = name.trim();
        match self.lookup(&name.to_ascii_lowercase(), per) {
            Some(v) => self.expand(&v, per, depth + 1),
            None => self.expand(name, per, depth + 1),
        }
    }

    /// One macro function, `$NAME(body)`.
    fn call(
        &self,
        function: functions::Function,
        name: &str,
        body: &str,
        per: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<String, SubmitError> {
        use functions::Function as F;
        let err = |p: String| self.file.error(self.line, format!("${name}({body}): {p}"));
        Ok(match function {
            F::Env => {
                let (var, default) = match body.split_once(':') {
                    Some((v, d)) => (v.trim(), Some(d)),
                    None => (body.trim(), None),
                };
                match (self.env.var(var), default) {
                    (Some(v), _) => v,
                    (None, Some(d)) => self.expand(d, per, depth + 1)?,
                    // HTCondor's word for a variable that is not set.
                    (None, None) => "UNDEFINED".to_owned(),
                }
            }
            F::Int | F::Real => {
                let (arg, format) = match body.split_once(',') {
                    Some((a, f)) => (a, Some(f)),
                    None => (body, None),
                };
                let text = self.argument(arg, per, depth)?;
                if function == F::Int {
                    let n = functions::integer(&text)
                        .ok_or_else(|| err(format!("{text:?} does not evaluate to an integer")))?;
                    match format {
                        None => n.to_string(),
                        Some(f) => functions::format_int(f, n)
                            .ok_or_else(|| err(format!("{f:?} is not a valid format")))?,
                    }
                } else {
                    let r = functions::real(&text)
                        .ok_or_else(|| err(format!("{text:?} does not evaluate to a real")))?;
                    match format {
                        None => functions::general(r, 16),
                        Some(f) => functions::format_real(f, r)
                            .ok_or_else(|| err(format!("{f:?} is not a valid format")))?,
                    }
                }
            }
            F::Substr => {
                let mut args = body.splitn(3, ',');
                let target = args.next().unwrap_or("").trim();
                let start = args
                    .next()
                    .ok_or_else(|| err("no length specified".to_owned()))?;
                let start = functions::integer(&self.argument(start, per, depth)?)
                    .ok_or_else(|| err(format!("{start:?} is not a start index")))?;
                let length = match args.next() {
                    Some(l) => Some(
                        functions::integer(&self.argument(l, per, depth)?)
                            .ok_or_else(|| err(format!("{l:?} is not a length")))?,
                    ),
                    None => None,
                };
                let text: Vec<char> = match self.lookup(&target.to_ascii_lowercase(), per) {
                    Some(v) => self.expand(&v, per, depth + 1)?.chars().collect(),
                    None => Vec::new(),
                };
                let n = text.len() as i64;
                let from = if start < 0 { n + start } else { start }.clamp(0, n);
                let left = n - from;
                let take = match length {
                    None => left,
                    Some(l) if l < 0 => (left + l).max(0),
                    Some(l) => l.min(left),
                };
                text[from as usize..(from + take) as usize].iter().collect()
            }
            F::Choice => {
                let (index, list) = body
                    .split_once(',')
                    .ok_or_else(|| err("no list".to_owned()))?;
                let index_text = self.argument(index, per, depth)?;
                let index = functions::integer(&index_text)
                    .filter(|i| *i >= 0)
                    .ok_or_else(|| err(format!("{index_text:?} is not an index")))?;
                let list = if list.contains(',') {
                    list.to_owned()
                } else {
                    let name = list.trim();
                    let v = self
                        .lookup(&name.to_ascii_lowercase(), per)
                        .ok_or_else(|| err(format!("no list named {name:?}")))?;
                    self.expand(&v, per, depth + 1)?
                };
                let item = functions::nth_item(&list, index as usize)
                    .ok_or_else(|| err(format!("index {index} is out of range")))?;
                self.expand(&item, per, depth + 1)?
            }
            F::RandomChoice => {
                let items: Vec<&str> = body.split(',').collect();
                let pick = functions::random_below(items.len() as u64) as usize;
                self.expand(items[pick].trim(), per, depth + 1)?
            }
            F::RandomInteger => {
                let args: Vec<String> = body
                    .split(',')
                    .map(|a| self.expand(a.trim(), per, depth + 1))
                    .collect::<Result<_, _>>()?;
                let num = |i: usize| args.get(i).and_then(|a| functions::integer(a));
                let (Some(min), Some(max)) = (num(0), num(1)) else {
                    return Err(err("needs a minimum and a maximum".to_owned()));
                };
                let step = num(2).unwrap_or(1).max(1);
                if max < min {
                    return Err(err(format!("the maximum {max} is below the minimum {min}")));
                }
                // In i128: any two i64 bounds fit.
                let (min, max, step) = (i128::from(min), i128::from(max), i128::from(step));
                let choices = u64::try_from((max - min) / step + 1).unwrap_or(u64::MAX);
                (min + step * i128::from(functions::random_below(choices))).to_string()
            }
            F::File => {
                let path = self.argument(body, per, depth)?;
                functions::file_parts(&name[1..], &path, self.cwd)
            }
            F::Dirname => {
                let path = self.argument(body, per, depth)?;
                functions::file_parts("p", &path, self.cwd)
            }
            F::Basename => {
                let (arg, suffix) = match body.rsplit_once(',') {
                    Some((a, s)) if !s.contains(')') => (a, Some(s)),
                    _ => (body, None),
                };
                let path = self.argument(arg, per, depth)?;
                functions::basename(&path, suffix)
            }
            F::String => {
                let (arg, format) = match body.split_once(',') {
                    Some((a, f)) => (a, Some(f)),
                    None => (body, None),
                };
                let value = functions::string(&self.argument(arg, per, depth)?);
                match format {
                    None => value,
                    Some(f) => functions::format_string(f, &value)
                        .ok_or_else(|| err(format!("{f:?} is not a valid format")))?,
                }
            }
            F::Eval => {
                // What does not parse is the expanded text when there was
                // a macro in it, else nothing (HTCondor's rule).
                let raw = self
                    .lookup(&body.trim().to_ascii_lowercase(), per)
                    .unwrap_or_else(|| body.to_owned());
                let text = self.expand(&raw, per, depth + 1)?;
                functions::evaluate(&text).unwrap_or(if raw.contains('$') {
                    text
                } else {
                    String::new()
                })
            }
        })
    }

    /// The expanded value of command `key`, if set.
    pub(super) fn expand_opt(
        &self,
        key: &str,
        per: &BTreeMap<String, String>,
    ) -> Result<Option<String>, SubmitError> {
        // A queue variable named like a command is that command for its
        // item (`queue arguments from args.txt`).
        match per.get(key).or_else(|| self.map.get(key)) {
            None => Ok(None),
            Some(v) => self.expand(v, per, 0).map(|s| Some(s.trim().to_owned())),
        }
    }

    pub(super) fn expand(
        &self,
        value: &str,
        per: &BTreeMap<String, String>,
        depth: usize,
    ) -> Result<String, SubmitError> {
        let err = |p: String| self.file.error(self.line, p);
        if depth > MAX_MACRO_DEPTH {
            return Err(err(format!(
                "macros nest deeper than {MAX_MACRO_DEPTH} (a macro that refers to itself?) in {value:?}"
            )));
        }
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(at) = rest.find('$') {
            out.push_str(&rest[..at]);
            let after = &rest[at..];
            if after.starts_with("$$(") {
                let end = after
                    .find(')')
                    .ok_or_else(|| err(format!("unclosed $$( in {value:?}")))?;
                out.push_str(&after[..=end]);
                rest = &after[end + 1..];
            } else if let Some(body) = after.strip_prefix("$(") {
                let end = body
                    .find(')')
                    .ok_or_else(|| err(format!("unclosed $( in {value:?}")))?;
                let inner = &body[..end];
                let (name, default) = match inner.split_once(':') {
                    Some((n, d)) => (n.trim(), Some(d)),
                    None => (inner.trim(), None),
                };
                let lower = name.to_ascii_lowercase();
                let found = self.lookup(&lower, per);
                let text = match (found, default) {
                    (Some(v), _) => self.expand(&v, per, depth + 1)?,
                    (None, Some(d)) => self.expand(d, per, depth + 1)?,
                    (None, None) if lower == "dollar" => "$".to_owned(),
                    // An undefined macro is empty, as in condor_submit.
                    (None, None) => String::new(),
                };
                out.push_str(&text);
                rest = &body[end + 1..];
            } else if let Some((function, name, body, tail)) = function_call(after) {
                let text = self.call(function, name, body, per, depth)?;
                out.push_str(&text);
                rest = tail;
            } else {
                out.push('$');
                rest = &after[1..];
            }
            if out.len() > MAX_VALUE_LEN {
                return Err(err(format!("a value expands past {MAX_VALUE_LEN} bytes")));
            }
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// `$NAME(body)` at the start of `text`, when NAME is a macro function:
/// the function, its name, its body and the text after it. The body ends
/// at the first `)`, as in HTCondor (so `$EVAL(f(x))` is `$EVAL(f(x)`
/// then `)`).
fn function_call(text: &str) -> Option<(functions::Function, &str, &str, &str)> {
    let rest = text.strip_prefix('$')?;
    let name_len = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|&n| n > 0 && rest[n..].starts_with('('))?;
    let name = &rest[..name_len];
    let function = functions::Function::named(name)?;
    let open = name_len + 1;
    let close = open + rest[open..].find(')')?;
    Some((function, name, &rest[open..close], &rest[close + 1..]))
}
