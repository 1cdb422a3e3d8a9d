//! HTCondor's eviction transforms (`TransformOnEvict`): what a job that is
//! about to be held asks to change in itself so that it can run again
//! instead. `condor_submit` writes one for `retry_request_memory` and its
//! kin (see `starling_protocol::submit::retry`):
//!
//! ```text
//! TransformOnEvict = "RequestMemory"
//! TransformBody_RequestMemory = "REQUIREMENTS <expr>\x1eSET RequestMemory 2048"
//! ```
//!
//! When a run ends in a hold (code, subcode), the job ad is given
//! `VacateReasonCode` and `VacateReasonSubCode` (HTCondor's names for why
//! its run ended) and each transform named, in order, is tried: its
//! `REQUIREMENTS` must be true; then its `SET attr expr` lines set `attr`
//! to `expr`, and its `EVALSET attr expr` lines to the value of `expr`
//! in the job as changed so far. As in the schedd (`TransformOnEvict`), a
//! transform that changes an attribute whose name begins with `Request`
//! cures the hold: the job goes back to idle with the changes, and later
//! transforms are not tried. One that changes no request (the request is
//! at its last size already) leaves the job held.
//!
//! Only the statements `condor_submit` writes are read: a transform with
//! any other statement (HTCondor's `DEFAULT`, `RENAME`, `DELETE`…), a
//! `SET` that does not parse, an `EVALSET` whose value is undefined or an
//! error, or a body past [`MAX_BODY_LEN`] or [`MAX_LINES`] lines is not
//! applied, and the job is held as it would have been.

use starling_protocol::classad::matching::requirement_holds;
use starling_protocol::classad::{parse_expr, unparse, ClassAd, Evaluator, Expr, Name, Value};

/// The separator of a transform body's lines, as HTCondor writes it
/// (a newline is taken too).
pub const LINE_SEPARATOR: char = '\u{1e}';
/// Longest transform body read, in bytes.
pub const MAX_BODY_LEN: usize = 8 << 10;
/// Most lines of one transform body.
pub const MAX_LINES: usize = 16;
/// Most transforms one job names.
pub const MAX_TRANSFORMS: usize = 8;

/// What a hold with `code` and `subcode` makes of `job`: the attributes
/// to set (name, new value) when one of its eviction transforms cures the
/// hold, or `None` when the job is held.
pub fn on_hold(job: &ClassAd, code: u32, subcode: i32) -> Option<Vec<(String, Expr)>> {
    let names = match job.get("TransformOnEvict")? {
        Expr::Literal(Value::String(s)) => s.to_string(),
        _ => return None,
    };
    let mut vacated = job.clone();
    vacated.insert(
        Name::known("VacateReasonCode"),
        Expr::Literal(Value::Int(i64::from(code))),
    );
    vacated.insert(
        Name::known("VacateReasonSubCode"),
        Expr::Literal(Value::Int(i64::from(subcode))),
    );
    names
        .split([' ', ',', '\t'])
        .filter(|n| !n.is_empty())
        .take(MAX_TRANSFORMS)
        .find_map(|name| {
            let body = match job.get(&format!("TransformBody_{name}")) {
                Some(Expr::Literal(Value::String(s))) if s.len() <= MAX_BODY_LEN => s.to_string(),
                _ => return None,
            };
            let changes = apply(&vacated, &body)?;
            let cures = changes.iter().any(|(attr, value)| {
                attr.get(..7)
                    .is_some_and(|p| p.eq_ignore_ascii_case("Request"))
                    && job.get(attr).map(unparse) != Some(unparse(value))
            });
            cures.then_some(changes)
        })
}

/// The changes one transform `body` makes to `job`, or `None` when it does
/// not apply (its requirements are not true) or cannot be read.
fn apply(job: &ClassAd, body: &str) -> Option<Vec<(String, Expr)>> {
    let mut work = job.clone();
    let mut changes: Vec<(String, Expr)> = Vec::new();
    let lines: Vec<&str> = body
        .split([LINE_SEPARATOR, '\n'])
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    if lines.len() > MAX_LINES {
        return None;
    }
    for line in lines {
        let (verb, rest) = line.split_once(char::is_whitespace)?;
        let rest = rest.trim();
        match verb.to_ascii_uppercase().as_str() {
            "REQUIREMENTS" => {
                let expr = parse_expr(rest).ok()?;
                let holds = requirement_holds(&Evaluator::with_ads(Some(&work), None).eval(&expr));
                if !holds {
                    return None;
                }
            }
            verb @ ("SET" | "EVALSET") => {
                let (attr, text) = rest.split_once(char::is_whitespace)?;
                let name = Name::new(attr).ok()?;
                let expr = parse_expr(text.trim()).ok()?;
                let value = if verb == "SET" {
                    expr
                } else {
                    match Evaluator::with_ads(Some(&work), None).eval(&expr) {
                        Value::Undefined | Value::Error => return None,
                        v => Expr::Literal(v),
                    }
                };
                work.insert(name, value.clone());
                changes.retain(|(a, _)| !a.eq_ignore_ascii_case(attr));
                changes.push((attr.to_owned(), value));
            }
            _ => return None,
        }
    }
    Some(changes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::classad::parse_ad;

    const REQUIREMENTS: &str =
        "REQUIREMENTS (VacateReasonCode==21 || VacateReasonCode == 34) && VacateReasonSubCode == 102";

    fn job(extra: &str, body: &str) -> ClassAd {
        let mut ad = parse_ad(&format!(
            "[RequestMemory = 1024; TransformOnEvict = \"RequestMemory\"; {extra}]"
        ))
        .unwrap();
        ad.insert(
            Name::known("TransformBody_RequestMemory"),
            Expr::Literal(Value::String(
                format!("{REQUIREMENTS}{LINE_SEPARATOR}{body}").into(),
            )),
        );
        ad
    }

    fn shown(changes: Option<Vec<(String, Expr)>>) -> Vec<String> {
        changes
            .unwrap_or_default()
            .iter()
            .map(|(a, e)| format!("{a} = {}", unparse(e)))
            .collect()
    }

    #[test]
    fn a_memory_hold_raises_the_request_once_then_holds() {
        let ad = job("", "SET RequestMemory 2048");
        assert_eq!(shown(on_hold(&ad, 34, 102)), ["RequestMemory = 2048"]);
        // Another hold, or a disk hold, is not its business.
        assert!(on_hold(&ad, 34, 104).is_none());
        assert!(on_hold(&ad, 3, 0).is_none());
        // At 2048 already: nothing changes, so the job is held.
        let mut at_last = ad.clone();
        at_last.insert(
            Name::known("RequestMemory"),
            Expr::Literal(Value::Int(2048)),
        );
        assert!(on_hold(&at_last, 34, 102).is_none());
    }

    #[test]
    fn a_ladder_is_walked_to_its_last_size() {
        let mut ad = job(
            "RetryRequestMemory = {2048, 8192}",
            &format!(
                "EVALSET RequestMemory RetryRequestMemory[RetryRequestMemoryIndex?:0]\
                 {LINE_SEPARATOR}EVALSET RetryRequestMemoryIndex MIN({{size(RetryRequestMemory)-1, \
                 (RetryRequestMemoryIndex?:0)+1}})"
            ),
        );
        let mut requests = Vec::new();
        while let Some(changes) = on_hold(&ad, 34, 102) {
            for (attr, value) in changes {
                ad.insert(Name::new(&attr).unwrap(), value);
            }
            requests.push(unparse(ad.get("RequestMemory").unwrap()));
            assert!(requests.len() < 5, "{requests:?}");
        }
        assert_eq!(requests, ["2048", "8192"]);
    }

    #[test]
    fn an_increase_stops_at_its_maximum() {
        let mut ad = job(
            "MaxRequestMemory = 2048; NextRequestMemory = RequestMemory + 512",
            "EVALSET RequestMemory MIN({NextRequestMemory, MaxRequestMemory})",
        );
        let mut requests = Vec::new();
        while let Some(changes) = on_hold(&ad, 34, 102) {
            for (attr, value) in changes {
                ad.insert(Name::new(&attr).unwrap(), value);
            }
            requests.push(unparse(ad.get("RequestMemory").unwrap()));
            assert!(requests.len() < 5, "{requests:?}");
        }
        assert_eq!(requests, ["1536", "2048"]);
    }

    #[test]
    fn what_cannot_be_read_holds_the_job() {
        for body in [
            "RENAME RequestMemory Other",
            "SET RequestMemory (",
            "EVALSET RequestMemory NoSuchAttribute",
            "SET",
        ] {
            assert!(on_hold(&job("", body), 34, 102).is_none(), "{body}");
        }
        let long = "SET RequestMemory 2048\n".repeat(MAX_LINES + 1);
        assert!(on_hold(&job("", &long), 34, 102).is_none());
        // A transform that sets no request cures nothing.
        assert!(on_hold(&job("", "SET Foo 1"), 34, 102).is_none());
        // No transform at all.
        let plain = parse_ad("[RequestMemory = 1024]").unwrap();
        assert!(on_hold(&plain, 34, 102).is_none());
    }
}
