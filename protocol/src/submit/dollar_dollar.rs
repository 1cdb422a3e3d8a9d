//! HTCondor's match-time substitution: `$$(Attr)`, `$$(Attr:default)` and
//! `$$([expression])` in a job's attributes, filled in from the machine the
//! job was matched to, when it is handed to that machine (the schedd's
//! `dollarDollarExpand`). `arguments = $$(Machine)` runs the job with the
//! name of the machine it landed on.
//!
//! Every attribute whose text holds `$$(` is expanded, but `MATCH_*` ones
//! (earlier results): `$$(Attr)` becomes the machine's `Attr` as written
//! in its ad, a string without its quotes; `$$(Attr:default)` the default
//! when the machine has no `Attr`; `$$([expr])` the value of
//! `string(expr)` with the job as MY and the machine as TARGET;
//! `$$(DOLLARDOLLAR)` a literal `$$`. The expanded text is read again as
//! the attribute's expression. What was used is recorded in the job as
//! HTCondor records it ([`Expanded::record`]): `MATCH_<Attr>`, the
//! machine's value, and `MATCH_EXP_<attribute>`, the expanded text.
//!
//! A `$$(Attr)` the machine lacks, with no default, an `Attr` with a `.`
//! in it, or an expression that is not a string is [`Unexpandable`]: the
//! job is held, with HTCondor's reason `Cannot expand $$ expression
//! (Attr).`, and not run.

use crate::classad::{parse_expr, unparse, ClassAd, Evaluator, Expr, Name, Side, Value};

/// Most `$$(...)` expanded in one attribute.
pub const MAX_EXPANSIONS: usize = 64;
/// Longest text an attribute may expand to, in bytes.
pub const MAX_EXPANDED_LEN: usize = 64 << 10;

/// A job with its `$$(...)` filled in for one machine.
#[derive(Debug, Clone)]
pub struct Expanded {
    /// The job as the machine gets it.
    pub ad: ClassAd,
    /// What to record in the job: `MATCH_<Attr>` and
    /// `MATCH_EXP_<attribute>`, each with its expression.
    pub record: Vec<(String, Expr)>,
}

/// Why a job could not be expanded for a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unexpandable {
    /// The job attribute that holds it.
    pub attribute: String,
    /// The `$$(...)` body that could not be filled in.
    pub name: String,
}

impl Unexpandable {
    /// The hold reason HTCondor gives.
    pub fn reason(&self) -> String {
        format!("Cannot expand $$ expression ({}).", self.name)
    }
}

impl std::fmt::Display for Unexpandable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (in the job's {})", self.reason(), self.attribute)
    }
}

/// Whether any attribute of `job` asks for a match-time substitution.
pub fn wanted(job: &ClassAd) -> bool {
    job.iter().any(|e| may_expand(e.name.as_str(), e.expr()))
}

fn may_expand(name: &str, expr: &Expr) -> bool {
    let is_match = name
        .get(..6)
        .is_some_and(|p| p.eq_ignore_ascii_case("MATCH_"));
    !is_match
        && !matches!(
            expr,
            Expr::Literal(Value::Int(_) | Value::Real(_) | Value::Bool(_))
        )
        && unparse(expr).contains("$$(")
}

/// `job` with its `$$(...)` filled in from `machine`; `None` when it has
/// none.
pub fn expand(job: &ClassAd, machine: &ClassAd) -> Result<Option<Expanded>, Unexpandable> {
    if !wanted(job) {
        return Ok(None);
    }
    let mut ad = job.clone();
    let mut record: Vec<(String, Expr)> = Vec::new();
    let names: Vec<String> = job
        .iter()
        .filter(|e| may_expand(e.name.as_str(), e.expr()))
        .map(|e| e.name.as_str().to_owned())
        .collect();
    for attribute in names {
        let Some(expr) = job.get(&attribute) else {
            continue;
        };
        let mut text = unparse(expr);
        let mut from = 0;
        let mut count = 0;
        let fail = |name: &str| Unexpandable {
            attribute: attribute.clone(),
            name: name.to_owned(),
        };
        while let Some((start, body, end)) = next(&text, from) {
            count += 1;
            if count > MAX_EXPANSIONS {
                return Err(fail(body));
            }
            let value = if let Some(inner) =
                body.strip_prefix('[').and_then(|b| b.strip_suffix(']'))
            {
                let inner = inner.replace("\\\"", "\"").replace("\\\\", "\\");
                let e = parse_expr(&format!("string({inner})")).map_err(|_| fail(body))?;
                match Evaluator::with_ads(Some(job), Some(machine)).eval_on(Side::My, &e) {
                    Value::String(s) => s.to_string(),
                    _ => return Err(fail(body)),
                }
            } else {
                let (name, default) = match body.split_once(':') {
                    Some((n, d)) => (n, Some(d)),
                    None => (body, None),
                };
                if name.eq_ignore_ascii_case("DOLLARDOLLAR") {
                    "$$".to_owned()
                } else {
                    if name.contains('.') || Name::new(name).is_err() {
                        return Err(fail(name));
                    }
                    let found = machine.get(name).map(unparse);
                    let used = match (found, default) {
                        (Some(v), _) => v,
                        (None, Some(d)) => format!("\"{d}\""),
                        (None, None) => return Err(fail(name)),
                    };
                    if let Ok(e) = parse_expr(&used) {
                        record.retain(|(n, _)| !n.eq_ignore_ascii_case(&format!("MATCH_{name}")));
                        record.push((format!("MATCH_{name}"), e));
                    }
                    // A string goes in without its quotes.
                    match used.strip_prefix('"').and_then(|u| u.strip_suffix('"')) {
                        Some(inner) => inner.to_owned(),
                        None => used,
                    }
                }
            };
            let mut expanded = String::with_capacity(text.len() + value.len());
            expanded.push_str(&text[..start]);
            expanded.push_str(&value);
            from = expanded.len();
            expanded.push_str(&text[end..]);
            if expanded.len() > MAX_EXPANDED_LEN {
                return Err(fail(body));
            }
            text = expanded;
        }
        let Ok(new) = parse_expr(&text) else {
            return Err(Unexpandable {
                attribute: attribute.clone(),
                name: attribute.clone(),
            });
        };
        record.push((format!("MATCH_EXP_{attribute}"), new.clone()));
        if let Ok(name) = Name::new(&attribute) {
            ad.insert(name, new);
        }
    }
    Ok(Some(Expanded { ad, record }))
}

/// `job` as it was expanded for the machine it runs on, from what
/// [`Expanded::record`] recorded (`MATCH_EXP_<attribute>` in place of
/// each attribute), for when that machine's ad is not at hand (a submit
/// agent that restarted and reconnects to the run), as HTCondor's schedd
/// does.
pub fn recorded(job: &ClassAd) -> ClassAd {
    let mut ad = job.clone();
    for entry in job.iter() {
        let name = entry.name.as_str();
        let Some(attribute) = name
            .get(..10)
            .filter(|p| p.eq_ignore_ascii_case("MATCH_EXP_"))
            .map(|_| &name[10..])
        else {
            continue;
        };
        if let Ok(attribute) = Name::new(attribute) {
            ad.insert(attribute, entry.expr().clone());
        }
    }
    ad
}

/// The next `$$(body)` in `text` at or after byte `from`: where it starts,
/// its body, and where it ends (after the `)`). A body is a name, a name
/// with `:default`, or `[expression]` (up to `])`).
fn next(text: &str, from: usize) -> Option<(usize, &str, usize)> {
    let mut at = from;
    loop {
        let start = at + text.get(at..)?.find("$$(")?;
        let open = start + 3;
        let rest = &text[open..];
        let close = if rest.starts_with('[') {
            rest.find("])").map(|i| i + 1)
        } else {
            rest.find(')')
        };
        match close {
            Some(close) => {
                let body = &rest[..close];
                let name = body.split(':').next().unwrap_or(body);
                let is_name = !name.is_empty()
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
                if body.starts_with('[') || is_name {
                    return Some((start, body, open + close + 1));
                }
                at = open;
            }
            None => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_ad;

    fn machine() -> ClassAd {
        parse_ad(
            "[Machine = \"node7.example.org\"; Memory = 2048; OpSys = \"LINUX\"; \
             Disk = 100; Name = \"slot1@node7\"]",
        )
        .unwrap()
    }

    fn show(ad: &ClassAd, name: &str) -> String {
        ad.get(name).map(unparse).unwrap_or_default()
    }

    #[test]
    fn attributes_names_defaults_and_expressions_are_filled_in() {
        let job = parse_ad(
            "[Arguments = \"$$(Machine) $$(Memory) $$(Site:nowhere)\"; \
             Environment = \"HOST=$$([toUpper(TARGET.OpSys)])\"; \
             Scratch = \"$$(Disk)\"; RequestCpus = 1; \
             Cmd = \"/bin/echo\"; Out = \"cost$$(DOLLARDOLLAR)\"]",
        )
        .unwrap();
        let done = expand(&job, &machine()).unwrap().unwrap();
        assert_eq!(
            show(&done.ad, "Arguments"),
            "\"node7.example.org 2048 nowhere\""
        );
        assert_eq!(show(&done.ad, "Environment"), "\"HOST=LINUX\"");
        assert_eq!(show(&done.ad, "Scratch"), "\"100\"");
        assert_eq!(show(&done.ad, "Out"), "\"cost$$\"");
        assert_eq!(show(&done.ad, "Cmd"), "\"/bin/echo\"");
        let recorded: Vec<String> = done
            .record
            .iter()
            .map(|(n, e)| format!("{n} = {}", unparse(e)))
            .collect();
        for line in [
            "MATCH_Machine = \"node7.example.org\"",
            "MATCH_Memory = 2048",
            "MATCH_Site = \"nowhere\"",
            "MATCH_Disk = 100",
            "MATCH_EXP_Arguments = \"node7.example.org 2048 nowhere\"",
            "MATCH_EXP_Scratch = \"100\"",
        ] {
            assert!(recorded.contains(&line.to_owned()), "{line}: {recorded:?}");
        }
        // A job without any is left alone.
        let plain = parse_ad("[Arguments = \"a $(b) $c\"]").unwrap();
        assert!(expand(&plain, &machine()).unwrap().is_none());
    }

    #[test]
    fn what_the_machine_cannot_fill_in_is_named_as_htcondor_names_it() {
        for (text, name) in [
            ("[Arguments = \"$$(NoSuchAttr)\"]", "NoSuchAttr"),
            ("[Arguments = \"$$(TARGET.Machine)\"]", "TARGET.Machine"),
            ("[Arguments = \"$$([1 + ])\"]", "[1 + ]"),
            (
                "[Arguments = \"$$([TARGET.NoSuchAttr])\"]",
                "[TARGET.NoSuchAttr]",
            ),
        ] {
            let job = parse_ad(text).unwrap();
            let e = expand(&job, &machine()).unwrap_err();
            assert_eq!(e.name, name, "{text}");
            assert_eq!(e.attribute, "Arguments");
            assert_eq!(e.reason(), format!("Cannot expand $$ expression ({name})."));
        }
        // Without the machine, what was recorded stands in.
        let job = parse_ad("[Arguments = \"$$(Machine)\"; Out = \"o\"]").unwrap();
        let mut queued = job.clone();
        for (name, e) in expand(&job, &machine()).unwrap().unwrap().record {
            queued.insert(Name::new(&name).unwrap(), e);
        }
        assert_eq!(show(&queued, "Arguments"), "\"$$(Machine)\"");
        assert_eq!(
            show(&recorded(&queued), "Arguments"),
            "\"node7.example.org\""
        );
        assert_eq!(show(&recorded(&queued), "Out"), "\"o\"");
        // The result is not expanded again, and there is a bound.
        let echo = parse_ad("[Machine = \"$$(Machine)\"]").unwrap();
        let job = parse_ad("[Arguments = \"$$(Machine)\"]").unwrap();
        let done = expand(&job, &echo).unwrap().unwrap();
        assert_eq!(show(&done.ad, "Arguments"), "\"$$(Machine)\"");
        let many = format!(
            "[Arguments = \"{}\"]",
            "$$(Memory)".repeat(MAX_EXPANSIONS + 1)
        );
        let job = parse_ad(&many).unwrap();
        assert!(expand(&job, &machine()).is_err());
    }
}
