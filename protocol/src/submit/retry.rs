//! HTCondor 25's retry of a job that went over its memory:
//! `retry_request_memory`, `retry_request_memory_increase`,
//! `retry_request_memory_max`, and `request_memory` given as a list of
//! sizes (`1GB, 4GB`), written into the job as `condor_submit` writes them
//! (`SubmitHash::SetBuiltInOnEvictCheck`): an eviction transform that the
//! submit agent applies when the job is held for going over its memory
//! (`HoldReasonCode` 34, `HoldReasonSubCode` 102):
//!
//! ```text
//! TransformOnEvict = "RequestMemory"
//! TransformBody_RequestMemory = "REQUIREMENTS (VacateReasonCode==21 || VacateReasonCode == 34)
//!     && VacateReasonSubCode == 102\x1eSET RequestMemory 2048"
//! ```
//!
//! with, for a list of several sizes, `RetryRequestMemory = {2048, 8192}`
//! walked by `RetryRequestMemoryIndex`, and for an increase with a
//! maximum, `NextRequestMemory` (`RequestMemory + 512` or the user's
//! expression) capped by `MaxRequestMemory`. A transform that changes
//! `RequestMemory` puts the job back to idle with the larger request
//! instead of holding it; one that does not (the request is at its last
//! size) leaves it held. The transform language is HTCondor's; the submit
//! agent reads it in `policies::job_policy::on_evict`.

use super::values;
use crate::classad::{parse_expr, references, unparse, ClassAd, Evaluator, Expr, Name, Value};

/// The separator of a transform body's lines, as HTCondor writes it.
pub const LINE_SEPARATOR: char = '\u{1e}';

/// When the memory transform applies: the job was vacated or held for
/// going over its memory (HTCondor's hold code 34, subcode 102).
const MEMORY_REQUIREMENTS: &str =
    "(VacateReasonCode==21 || VacateReasonCode == 34) && VacateReasonSubCode == 102";

/// What the file asked for: `list` is the sizes after the first of a
/// `request_memory` list, else `retry_request_memory`, else
/// `retry_request_memory_max`; `increase` is `retry_request_memory_increase`
/// (unused beside a `retry_request_memory`, as in HTCondor, with a
/// warning). `request_mib` is the job's `RequestMemory`.
pub(super) struct Memory<'a> {
    pub request_mib: i64,
    /// The command `list` came from, for messages.
    pub key: &'static str,
    pub list: Option<&'a str>,
    pub increase: Option<&'a str>,
}

/// A size in MiB as `condor_submit` reads one (`parse_int64_bytes`): a
/// number, maybe with a fraction, then an optional unit `K`, `M`, `G`,
/// `T` (with an optional `B`), rounded up to a MiB; without a unit, MiB.
/// The size and the rest of `text` after it (at a `,` or the end), or
/// `None` when `text` does not open with one.
fn size_mib(text: &str) -> Option<(f64, &str)> {
    let t = text.trim_start();
    let number_end = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || c == '.' || (i == 0 && (c == '-' || c == '+'))))
        .map_or(t.len(), |(i, _)| i);
    let n: f64 = t[..number_end].parse().ok()?;
    let rest = t[number_end..].trim_start();
    let (kib, rest) = match rest.chars().next().map(|c| c.to_ascii_uppercase()) {
        None | Some(',') => (n * 1024.0, rest),
        Some(u @ ('K' | 'M' | 'G' | 'T')) => {
            let scale = match u {
                'K' => 1.0,
                'M' => 1024.0,
                'G' => 1024.0 * 1024.0,
                _ => 1024.0 * 1024.0 * 1024.0,
            };
            let rest = &rest[1..];
            let rest = rest.strip_prefix(['b', 'B']).unwrap_or(rest).trim_start();
            (n * scale, rest)
        }
        Some(_) => return None,
    };
    (rest.is_empty() || rest.starts_with(',')).then_some(((kib / 1024.0).ceil(), rest))
}

/// The sizes of `text` (`2GB, 8GB`), then what follows them, an
/// expression (`MAX({RequestMemory, MemoryUsage}) * 2`), if anything does.
fn sequence(key: &str, text: &str) -> Result<(Vec<i64>, Option<Expr>), String> {
    let mut sizes = Vec::new();
    let mut rest = text.trim();
    while let Some((mib, after)) = size_mib(rest) {
        values::amount(
            values::MEMORY,
            rest.split(',').next().unwrap_or(rest).trim(),
            mib,
        )?;
        sizes.push(mib as i64);
        rest = after.strip_prefix(',').unwrap_or(after).trim();
        if after.is_empty() {
            break;
        }
    }
    if rest.is_empty() {
        return Ok((sizes, None));
    }
    let expr = parse_expr(rest)
        .map_err(|e| format!("{key}={rest} is invalid. must be an expression or number ({e})"))?;
    Ok((sizes, Some(expr)))
}

/// Writes the retry of `m` into `ad`. An error names the command and what
/// is wrong.
pub(super) fn memory(ad: &mut ClassAd, m: &Memory<'_>) -> Result<(), (&'static str, String)> {
    const ATTR: &str = "RequestMemory";
    let (mut sizes, last_expr) = match m.list {
        Some(list) => sequence(m.key, list).map_err(|e| (m.key, e))?,
        None => (Vec::new(), None),
    };
    if sizes.len() > 1 {
        let mut before = 0;
        for &size in &sizes {
            if size <= before {
                return Err((
                    m.key,
                    format!(
                        "{} must have an increasing sequence of values, but {size} is not \
                         greater than {before}",
                        m.key
                    ),
                ));
            }
            before = size;
        }
    }
    // The last (or only) size, or the expression after the sizes.
    let last: Option<String> = match (&last_expr, sizes.pop()) {
        (Some(e), popped) => {
            sizes.extend(popped);
            Some(unparse(e))
        }
        (None, Some(size)) => Some(size.to_string()),
        (None, None) => None,
    };
    let increase = if m.list.is_some() && m.key != "retry_request_memory_max" {
        None
    } else {
        m.increase
    };
    let body = if !sizes.is_empty() {
        let last = last.unwrap_or_default();
        let list: Vec<String> = sizes.iter().map(i64::to_string).collect();
        let ladder = format!("{{{},{last}}}", list.join(","));
        insert(ad, "RetryRequestMemory", &ladder)?;
        format!(
            "EVALSET {ATTR} RetryRequestMemory[RetryRequestMemoryIndex?:0]{LINE_SEPARATOR}\
             EVALSET RetryRequestMemoryIndex MIN({{size(RetryRequestMemory)-1, \
             (RetryRequestMemoryIndex?:0)+1}})"
        )
    } else if let Some(increase) = increase {
        const KEY: &str = "retry_request_memory_increase";
        let not_positive = || {
            (
                KEY,
                format!(
                    "{ATTR} retry increment must be a positive number or an expression that \
                     references {ATTR} (got {:?})",
                    increase.trim()
                ),
            )
        };
        let next = match size_mib(increase) {
            Some((mib, "")) => {
                if mib <= 0.0 {
                    return Err(not_positive());
                }
                values::amount(values::MEMORY, increase.trim(), mib).map_err(|e| (KEY, e))?;
                format!("{ATTR} + {}", mib as i64)
            }
            _ => {
                let expr = parse_expr(increase.trim()).map_err(|_| not_positive())?;
                let refs = references(&expr);
                let lower = ATTR.to_ascii_lowercase();
                if !(refs.my.contains(&lower) || refs.unscoped.contains(&lower)) {
                    return Err(not_positive());
                }
                unparse(&expr)
            }
        };
        match last {
            Some(max) => {
                insert(ad, "MaxRequestMemory", &max)?;
                insert(ad, "NextRequestMemory", &next)?;
                format!("EVALSET {ATTR} MIN({{Next{ATTR}, Max{ATTR}}})")
            }
            None => {
                // Once, to what the increase makes of the first request.
                let mut with = ClassAd::new();
                with.insert(Name::known(ATTR), Expr::Literal(Value::Int(m.request_mib)));
                let value = parse_expr(&next)
                    .ok()
                    .map(|e| Evaluator::with_ads(Some(&with), None).eval(&e))
                    .and_then(|v| match v {
                        Value::Int(i) => Some(i),
                        Value::Real(r) if r.is_finite() && r.fract() == 0.0 => Some(r as i64),
                        _ => None,
                    })
                    .ok_or_else(|| {
                        (
                            KEY,
                            format!(
                                "{ATTR} retry increment ({}) must evaluate to an integer at \
                                 submit time",
                                increase.trim()
                            ),
                        )
                    })?;
                values::amount(values::MEMORY, increase.trim(), value as f64)
                    .map_err(|e| (KEY, e))?;
                format!("SET {ATTR} {value}")
            }
        }
    } else {
        match (last, last_expr.is_some()) {
            (Some(last), true) => format!("EVALSET {ATTR} {last}"),
            (Some(last), false) => format!("SET {ATTR} {last}"),
            (None, _) => return Ok(()),
        }
    };
    ad.insert(
        Name::known(&format!("TransformBody_{ATTR}")),
        Expr::Literal(Value::String(
            format!("REQUIREMENTS {MEMORY_REQUIREMENTS}{LINE_SEPARATOR}{body}").into(),
        )),
    );
    ad.insert(
        Name::known("TransformOnEvict"),
        Expr::Literal(Value::String(ATTR.into())),
    );
    Ok(())
}

fn insert(ad: &mut ClassAd, name: &str, text: &str) -> Result<(), (&'static str, String)> {
    let expr = parse_expr(text).map_err(|e| ("retry_request_memory", format!("{text:?}: {e}")))?;
    ad.insert(Name::known(name), expr);
    Ok(())
}

/// The first size of a list of sizes (`1024, 2048, 4096`, HTCondor's
/// retry ladder for `request_memory` and `request_disk`), if `text` is one.
pub(super) fn retry_list(text: &str) -> Option<&str> {
    let is_size = |s: &str| {
        let s = s.trim();
        let digits = s.trim_end_matches(|c: char| c.is_ascii_alphabetic()).trim();
        !digits.is_empty() && digits.parse::<f64>().is_ok()
    };
    (text.contains(',') && text.split(',').all(is_size))
        .then(|| text.split(',').next().unwrap_or("").trim())
}
