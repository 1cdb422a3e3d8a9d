//! HTCondor's GPU submit commands, turned into the job ad as HTCondor 25's
//! submit does: `request_gpus` (a number or any expression) becomes
//! `RequestGPUs`; `require_gpus` becomes `RequireGPUs`, a constraint over
//! each device's properties; `gpus_minimum_capability`,
//! `gpus_maximum_capability`, `gpus_minimum_memory` (MiB, a unit allowed)
//! and `gpus_minimum_runtime` (a CUDA version, `12.1` kept as `12010`)
//! become `GPUsMinCapability`, `GPUsMaxCapability`, `GPUsMinMemory` and
//! `GPUsMinRuntime`, and the clauses comparing each device with them join
//! `RequireGPUs`, unless the user's own `require_gpus` already speaks of
//! that property. As in HTCondor, the other commands mean nothing without
//! `request_gpus`.
//!
//! The job's `Requirements` then gains HTCondor's clause:
//! `(TARGET.GPUs >= RequestGPUs)`, or with a `RequireGPUs`
//! `(countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs)`,
//! which counts the machine's free devices that satisfy it.

use crate::classad::{parse_expr, references, BinaryOp, ClassAd, Expr, Name, Value};

/// The GPU commands, in the order [`job_attributes`] takes their values.
pub const COMMANDS: &[&str] = &[
    "request_gpus",
    "require_gpus",
    "gpus_minimum_capability",
    "gpus_maximum_capability",
    "gpus_minimum_memory",
    "gpus_minimum_runtime",
];

/// The most GPUs a job may ask for as a number (more than any machine
/// holds, [`MAX_REQUEST_GPUS`]).
pub const MAX_REQUEST_GPUS: i64 = 1024;

/// Sets the GPU attributes of `ad` from the values of [`COMMANDS`], in
/// that order.
/// `requirements` is the user's own `requirements`, whose mention of
/// `TARGET.GPUs` means the user wrote the clause already. Returns the
/// clause for `Requirements`, if one is due; an error names the value
/// (its index) that is wrong.
pub fn job_attributes(
    ad: &mut ClassAd,
    values: &[Option<String>],
    requirements: Option<&str>,
) -> Result<Option<String>, (usize, String)> {
    let value = |i: usize| values.get(i).and_then(|v| v.as_deref()).map(str::trim);
    let Some(request) = value(0).filter(|r| !r.eq_ignore_ascii_case("undefined")) else {
        return Ok(None);
    };
    let expr = |i: usize, text: &str| {
        parse_expr(text).map_err(|e| (i, format!("{text:?} is not a ClassAd expression: {e}")))
    };
    let request_expr = expr(0, request)?;
    let literal = match &request_expr {
        Expr::Literal(Value::Int(n)) => Some(*n as f64),
        Expr::Literal(Value::Real(r)) => Some(*r),
        Expr::Literal(Value::String(_)) => {
            return Err((0, format!("{request:?} is not a number of GPUs")))
        }
        _ => None,
    };
    if let Some(n) = literal {
        if !n.is_finite() || n < 0.0 {
            return Err((0, format!("{request:?} is not a number of GPUs")));
        }
        if n > MAX_REQUEST_GPUS as f64 {
            return Err((0, format!("{request} is more GPUs than any machine has")));
        }
    }
    insert(ad, "RequestGPUs", request_expr);

    let mut require = match value(1) {
        Some(text) => Some((text.to_owned(), expr(1, text)?)),
        None => None,
    };
    let mut clauses = Vec::new();
    let mentioned = |property: &str| {
        require.as_ref().is_some_and(|(_, e)| {
            let refs = references(e);
            [&refs.my, &refs.target, &refs.unscoped]
                .iter()
                .any(|set| set.contains(&property.to_ascii_lowercase()))
        })
    };
    for Bound {
        index: i,
        attribute,
        property,
        clause,
        plain,
    } in BOUNDS
    {
        let Some(text) = value(i) else { continue };
        let kept = match plain(text) {
            Some(n) => Expr::Literal(Value::Int(n)),
            None => expr(i, text)?,
        };
        insert(ad, attribute, kept);
        if !mentioned(property) {
            clauses.push(clause);
        }
    }
    if !clauses.is_empty() {
        let added = clauses.join(" && ");
        let text = match &require {
            None => added,
            Some((text, e)) if needs_parens_for_and(e) => format!("({text}) && {added}"),
            Some((text, _)) => format!("{text} && {added}"),
        };
        let e = expr(1, &text)?;
        require = Some((text, e));
    }
    if let Some((_, e)) = &require {
        insert(ad, "RequireGPUs", e.clone());
    }

    // The user's requirements speak of the machine's GPUs already.
    let written = requirements
        .and_then(|r| parse_expr(r).ok())
        .is_some_and(|r| references(&r).target.contains("gpus"));
    if written || literal.is_some_and(|n| n <= 0.0) {
        return Ok(None);
    }
    Ok(Some(if require.is_some() {
        "(countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs)".to_owned()
    } else {
        "(TARGET.GPUs >= RequestGPUs)".to_owned()
    }))
}

/// A bound on the devices a job may be given: its command's index in
/// [`COMMANDS`], the attribute it sets, the clause comparing a device with
/// it and the property that clause reads, and how a plain value is kept
/// (otherwise it is an expression).
struct Bound {
    index: usize,
    attribute: &'static str,
    property: &'static str,
    clause: &'static str,
    plain: fn(&str) -> Option<i64>,
}

/// The bounds, in the order HTCondor adds their clauses to `RequireGPUs`.
const BOUNDS: [Bound; 4] = [
    Bound {
        index: 2,
        attribute: "GPUsMinCapability",
        property: "Capability",
        clause: "Capability >= GPUsMinCapability",
        plain: |_| None,
    },
    Bound {
        index: 3,
        attribute: "GPUsMaxCapability",
        property: "Capability",
        clause: "Capability <= GPUsMaxCapability",
        plain: |_| None,
    },
    Bound {
        index: 4,
        attribute: "GPUsMinMemory",
        property: "GlobalMemoryMb",
        clause: "GlobalMemoryMb >= GPUsMinMemory",
        plain: megabytes,
    },
    Bound {
        index: 5,
        attribute: "GPUsMinRuntime",
        property: "MaxSupportedVersion",
        clause: "MaxSupportedVersion >= GPUsMinRuntime",
        plain: cuda_runtime,
    },
];

fn insert(ad: &mut ClassAd, name: &str, value: Expr) {
    ad.insert(Name::known(name), value);
}

/// Whether `e && x` would bind differently from `(e) && x`.
fn needs_parens_for_and(e: &Expr) -> bool {
    match e {
        Expr::Binary(op, _) => op.precedence() < BinaryOp::And.precedence(),
        Expr::Cond(_) | Expr::Elvis(_) => true,
        _ => false,
    }
}

/// A size in MiB as HTCondor reads `gpus_minimum_memory`: a whole number
/// of MB, or a number with a unit (`K`, `M`, `G`, `T`, with or without a
/// `B`, or `B` alone for bytes), rounded up to whole MiB. `None` when the
/// text is not such a size (it is then an expression).
pub fn megabytes(text: &str) -> Option<i64> {
    let t = text.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(end);
    let n: f64 = number.parse().ok()?;
    let bytes_per = match unit.trim().to_ascii_uppercase().as_str() {
        "" | "M" | "MB" => 1024.0 * 1024.0,
        "B" => 1.0,
        "K" | "KB" => 1024.0,
        "G" | "GB" => 1024.0 * 1024.0 * 1024.0,
        "T" | "TB" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    };
    let mib = (n * bytes_per / (1024.0 * 1024.0)).ceil();
    (mib.is_finite() && mib <= (1u64 << 40) as f64).then_some(mib as i64)
}

/// A CUDA version as HTCondor keeps `gpus_minimum_runtime`: `12.1` is
/// 12010, `12` is 12000, and a number above 1000 is already in that form.
/// `None` when the text is not a version.
pub fn cuda_runtime(text: &str) -> Option<i64> {
    let t = text.trim();
    let (major, minor) = match t.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (t, None),
    };
    let digits = |s: &str| !s.is_empty() && s.len() <= 9 && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(major) || minor.is_some_and(|m| !digits(m)) {
        return None;
    }
    let major: i64 = major.parse().ok()?;
    match minor {
        None if major > 1000 => Some(major),
        None => Some(major * 1000),
        Some(m) => {
            let m: i64 = m.parse().ok()?;
            (m < 100).then_some(major * 1000 + m * 10)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::unparse;

    fn run(values: [Option<&str>; 6], req: Option<&str>) -> (ClassAd, Option<String>) {
        let mut ad = ClassAd::new();
        let values: Vec<Option<String>> = values.iter().map(|v| v.map(str::to_owned)).collect();
        let clause = job_attributes(&mut ad, &values, req).unwrap();
        (ad, clause)
    }

    fn text(ad: &ClassAd, name: &str) -> Option<String> {
        ad.get(name).map(unparse)
    }

    #[test]
    fn request_gpus_alone_asks_for_free_devices() {
        let (ad, clause) = run([Some("2"), None, None, None, None, None], None);
        assert_eq!(text(&ad, "RequestGPUs").as_deref(), Some("2"));
        assert_eq!(clause.as_deref(), Some("(TARGET.GPUs >= RequestGPUs)"));
        assert_eq!(text(&ad, "RequireGPUs"), None);
    }

    #[test]
    fn bounds_join_require_gpus_as_htcondor_writes_them() {
        let (ad, clause) = run(
            [Some("1"), None, Some("8.0"), None, Some("4G"), Some("12.1")],
            None,
        );
        assert_eq!(
            text(&ad, "RequireGPUs").as_deref(),
            Some("Capability >= GPUsMinCapability && GlobalMemoryMb >= GPUsMinMemory && MaxSupportedVersion >= GPUsMinRuntime")
        );
        assert_eq!(text(&ad, "GPUsMinMemory").as_deref(), Some("4096"));
        assert_eq!(text(&ad, "GPUsMinRuntime").as_deref(), Some("12010"));
        assert_eq!(
            clause.as_deref(),
            Some("(countMatches(MY.RequireGPUs,TARGET.AvailableGPUs) >= RequestGPUs)")
        );
        // The user's own constraint comes first, in parentheses where an
        // `||` would otherwise bind the added clause to its last term; a
        // property it speaks of gets no second clause.
        let (ad, _) = run(
            [
                Some("1"),
                Some("Capability > 7 || DeviceName == \"x\""),
                Some("8"),
                Some("9.0"),
                None,
                None,
            ],
            None,
        );
        assert_eq!(
            text(&ad, "RequireGPUs").as_deref(),
            Some("Capability > 7 || DeviceName == \"x\"")
        );
        let (ad, _) = run(
            [
                Some("1"),
                Some("DeviceName == \"x\" || DeviceName == \"y\""),
                None,
                Some("9.0"),
                None,
                None,
            ],
            None,
        );
        assert_eq!(
            text(&ad, "RequireGPUs").as_deref(),
            Some("(DeviceName == \"x\" || DeviceName == \"y\") && Capability <= GPUsMaxCapability")
        );
    }

    #[test]
    fn without_request_gpus_the_other_commands_mean_nothing() {
        let (ad, clause) = run(
            [None, Some("Capability > 7"), Some("8"), None, None, None],
            None,
        );
        assert!(ad.is_empty());
        assert_eq!(clause, None);
        let (ad, clause) = run([Some("undefined"), None, None, None, None, None], None);
        assert!(ad.is_empty());
        assert_eq!(clause, None);
    }

    #[test]
    fn no_clause_for_zero_or_where_the_user_wrote_one() {
        assert_eq!(run([Some("0"), None, None, None, None, None], None).1, None);
        assert_eq!(
            run(
                [Some("1"), None, None, None, None, None],
                Some("TARGET.GPUs >= 2")
            )
            .1,
            None
        );
        // An expression is kept as written and gets the clause.
        let (ad, clause) = run(
            [Some("MY.RequestCpus / 4"), None, None, None, None, None],
            None,
        );
        assert_eq!(
            text(&ad, "RequestGPUs").as_deref(),
            Some("MY.RequestCpus / 4")
        );
        assert!(clause.is_some());
    }

    #[test]
    fn bad_values_name_the_command() {
        for (values, at) in [
            ([Some("-1"), None, None, None, None, None], 0),
            ([Some("\"two\""), None, None, None, None, None], 0),
            ([Some("1 +"), None, None, None, None, None], 0),
            ([Some("100000"), None, None, None, None, None], 0),
            ([Some("1"), Some("Capability >"), None, None, None, None], 1),
            ([Some("1"), None, Some("8 8"), None, None, None], 2),
            ([Some("1"), None, None, None, Some("lots of"), None], 4),
        ] {
            let mut ad = ClassAd::new();
            let values: Vec<Option<String>> = values.iter().map(|v| v.map(str::to_owned)).collect();
            let (i, problem) = job_attributes(&mut ad, &values, None).unwrap_err();
            assert_eq!(i, at, "{values:?}: {problem}");
        }
    }

    #[test]
    fn sizes_and_versions_read_as_htcondor_reads_them() {
        assert_eq!(megabytes("4000"), Some(4000));
        assert_eq!(megabytes("4G"), Some(4096));
        assert_eq!(megabytes("1.5 GB"), Some(1536));
        assert_eq!(megabytes("1000K"), Some(1));
        assert_eq!(megabytes("RequestMemory"), None);
        assert_eq!(cuda_runtime("12.1"), Some(12010));
        assert_eq!(cuda_runtime("12"), Some(12000));
        assert_eq!(cuda_runtime("12010"), Some(12010));
        assert_eq!(cuda_runtime("12.100"), None);
        assert_eq!(cuda_runtime("v12"), None);
    }
}
