//! HTCondor's concurrency limits as a job names them
//! (`concurrency_limits = XSW, DATABASE, FILESERVER:3`, the job attribute
//! `ConcurrencyLimits = "database,fileserver:3,xsw"`): names of letters,
//! digits and `_`, not starting with a digit, with at most one `.`
//! (`LARGE.SWLICENSE`, a member of the set `LARGE`), case-insensitive;
//! each uses one unit, or the units after a `:`.
//!
//! The domain's share keeper holds the limits for the whole domain (see
//! `starling_policies::shares`).
//!
//! Vocabulary shared by the submit language (which re-exports this module
//! as `submit::limits`, its old path) and the claim protocol's share
//! requests; it must use neither of them.

/// Most limits one job names.
pub const MAX_LIMITS: usize = 16;
/// Longest limit name, in bytes.
pub const MAX_NAME_LEN: usize = 64;
/// Most units of one limit a job may use.
pub const MAX_UNITS: f64 = 1e9;

/// The limits of `text` (`a, B:2`): each name in lower case with its units,
/// sorted by name, as HTCondor keeps them; or what is wrong.
pub fn parse(text: &str) -> Result<Vec<(String, f64)>, String> {
    let mut limits: Vec<(String, f64)> = Vec::new();
    for token in text.split([',', ' ', '\t']).filter(|t| !t.is_empty()) {
        let (name, units) = match token.split_once(':') {
            Some((n, u)) => {
                let units: f64 = u
                    .parse()
                    .ok()
                    .filter(|u: &f64| u.is_finite() && *u > 0.0 && *u <= MAX_UNITS)
                    .ok_or_else(|| {
                        format!(
                            "{token:?}: the units after the colon must be a number above 0 \
                             and at most {MAX_UNITS}"
                        )
                    })?;
                (n, units)
            }
            None => (token, 1.0),
        };
        check_name(name).map_err(|why| format!("{token:?}: {why}"))?;
        let name = name.to_ascii_lowercase();
        if limits.iter().any(|(n, _)| *n == name) {
            return Err(format!("{name:?} is named twice"));
        }
        limits.push((name, units));
    }
    if limits.len() > MAX_LIMITS {
        return Err(format!("more than {MAX_LIMITS} limits"));
    }
    limits.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(limits)
}

/// The text HTCondor writes for `limits` (`db:2,xsw`).
pub fn show(limits: &[(String, f64)]) -> String {
    limits
        .iter()
        .map(|(n, u)| {
            if *u == 1.0 {
                n.clone()
            } else {
                format!("{n}:{u}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// A limit's name: letters, digits, `_`, at most one `.`, not starting
/// with a digit, at most [`MAX_NAME_LEN`] bytes.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a limit needs a name".to_owned());
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!("a limit's name is at most {MAX_NAME_LEN} bytes"));
    }
    let good = name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !good || name.starts_with(|c: char| c.is_ascii_digit()) || name.matches('.').count() > 1 {
        return Err(
            "a limit's name is letters, digits and _, not starting with a digit, with at most \
             one ."
                .to_owned(),
        );
    }
    if name.starts_with('.') || name.ends_with('.') {
        return Err("a limit's name has a name on each side of its .".to_owned());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_units_as_htcondor_keeps_them() {
        let limits = parse("XSW, DATABASE FILESERVER:3,large.swlicense:0.5").unwrap();
        assert_eq!(
            show(&limits),
            "database,fileserver:3,large.swlicense:0.5,xsw"
        );
        assert_eq!(parse("").unwrap(), vec![]);
    }

    #[test]
    fn bad_limits_say_what_is_wrong() {
        for (text, says) in [
            ("a:0", "above 0"),
            ("a:-1", "above 0"),
            ("a:lots", "above 0"),
            ("a:inf", "above 0"),
            ("a:1e12", "at most"),
            ("9lives", "not starting with a digit"),
            ("a.b.c", "at most one"),
            ("a-b", "letters, digits"),
            (".a", "each side"),
            (":2", "needs a name"),
            ("a, A", "named twice"),
        ] {
            let e = parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let many: Vec<String> = (0..=MAX_LIMITS).map(|i| format!("l{i}")).collect();
        assert!(parse(&many.join(",")).unwrap_err().contains("more than"));
        assert!(parse(&"x".repeat(MAX_NAME_LEN + 1)).is_err());
    }
}
