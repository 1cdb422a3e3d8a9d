//! What a submit file may give as a value, checked at the door: names that
//! stay on one line, paths the system can open, and amounts a machine can
//! have.
//!
//! - **Names and paths are one line of printable text.** `starling q`
//!   prints owners, batch names, commands and hold reasons in columns, one
//!   job or cluster a line, and the user log writes reasons one event a
//!   line: a newline, a tab, an escape or any other control character (C0,
//!   DEL, C1) in one of them would break the output or forge a line. The
//!   attributes checked are [`NAMES`], [`PATHS`], [`PATH_LISTS`] and
//!   [`ARGUMENTS`] (which may hold tabs), as literal strings, whether a
//!   submit command or a `+Attr` set them.
//! - **Paths fit the system's limits**: at most [`MAX_PATH_LEN`] bytes
//!   (Linux's `PATH_MAX`, 4096, counts the terminating NUL) and each name
//!   between slashes at most [`MAX_FILE_NAME_LEN`] bytes (`NAME_MAX`).
//! - **`KillSig` names a signal a job can catch** ([`super::kill_sig`]),
//!   whether `kill_sig`, a `+KillSig` or `qedit` set it.
//! - **Requests are finite amounts**: `request_cpus`, `request_memory` and
//!   `request_disk` given as a number (or an expression of constants) must
//!   be a finite number, zero or more, and at most [`MAX_REQUEST_CPUS`],
//!   [`MAX_REQUEST_MEMORY_MIB`] or [`MAX_REQUEST_DISK_KIB`]; `nan` and
//!   `inf` are refused by name. A request that refers to attributes
//!   (`TARGET.Memory / 2`) can only be known on the machine: the execute
//!   side refuses it there with the reason, which `starling why` shows.

use crate::classad::{references, ClassAd, Expr, Value};

/// Longest path, in bytes: Linux's `PATH_MAX` (4096) less the terminating
/// NUL it counts.
pub const MAX_PATH_LEN: usize = 4095;

/// Longest name between two slashes of a path, in bytes: `NAME_MAX`.
pub const MAX_FILE_NAME_LEN: usize = 255;

/// Most cpus one job may request (`request_cpus`).
pub const MAX_REQUEST_CPUS: f64 = (1u64 << 20) as f64;

/// Most memory one job may request, in MiB (`request_memory`): 1 EiB.
pub const MAX_REQUEST_MEMORY_MIB: f64 = (1u64 << 40) as f64;

/// Most disk one job may request, in KiB (`request_disk`): 1 EiB.
pub const MAX_REQUEST_DISK_KIB: f64 = (1u64 << 50) as f64;

/// Job attributes holding a name or a one-line text.
pub const NAMES: &[&str] = &[
    "Owner",
    "User",
    "JobBatchName",
    "AcctGroup",
    "AcctGroupUser",
    "AccountingGroup",
    "NotifyUser",
    "JobDescription",
    "HoldReason",
];

/// Job attributes holding one path. `Iwd` first: the other paths are
/// resolved against it, so a fault in it is named as its own.
pub const PATHS: &[&str] = &["Iwd", "Cmd", "In", "Out", "Err", "UserLog"];

/// Job attributes holding comma-separated paths.
pub const PATH_LISTS: &[&str] = &["TransferInput", "TransferOutput"];

/// Job attributes holding the arguments: one line, tabs allowed.
pub const ARGUMENTS: &[&str] = &["Arguments", "Args"];

/// The job attribute naming the signal the job is asked to leave with
/// ([`super::kill_sig`]).
pub const KILL_SIG: &str = "KillSig";

/// How a character is named in a message.
fn describe(c: char) -> String {
    match c {
        '\n' => "a newline".to_owned(),
        '\r' => "a carriage return".to_owned(),
        '\t' => "a tab".to_owned(),
        '\0' => "a NUL".to_owned(),
        '\u{1b}' => "an escape (U+001B)".to_owned(),
        c => format!("the control character U+{:04X}", u32::from(c)),
    }
}

/// The first `max` characters of `text`, with an ellipsis when cut.
pub fn shorten(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// `text` if it has no control character other than those `allowed`.
fn printable(text: &str, allowed: &[char]) -> Result<(), String> {
    match text
        .chars()
        .find(|c| c.is_control() && !allowed.contains(c))
    {
        None => Ok(()),
        Some(c) => Err(format!(
            "{:?} contains {}; names and paths must be one line of printable text",
            shorten(text, 60),
            describe(c)
        )),
    }
}

/// A name or one-line text: no control characters at all.
pub fn one_line(text: &str) -> Result<(), String> {
    printable(text, &[])
}

/// A path the system can take: one line, at most [`MAX_PATH_LEN`] bytes,
/// no name in it longer than [`MAX_FILE_NAME_LEN`].
pub fn path(text: &str) -> Result<(), String> {
    if text.len() > MAX_PATH_LEN {
        return Err(format!(
            "the path {:?} is {} bytes, longer than the system allows ({MAX_PATH_LEN} bytes, \
             PATH_MAX)",
            shorten(text, 40),
            text.len()
        ));
    }
    one_line(text)?;
    if let Some(name) = text.split('/').find(|n| n.len() > MAX_FILE_NAME_LEN) {
        return Err(format!(
            "the file name {:?} in the path is {} bytes, longer than the system allows \
             ({MAX_FILE_NAME_LEN} bytes, NAME_MAX)",
            shorten(name, 40),
            name.len()
        ));
    }
    Ok(())
}

/// Checks the literal string value of job attribute `name` (any case) by
/// its kind: [`NAMES`], [`PATHS`], [`PATH_LISTS`], [`ARGUMENTS`], and
/// [`KILL_SIG`] (a signal a job can catch); other attributes are not
/// checked.
pub fn check_attribute(name: &str, value: &str) -> Result<(), String> {
    let is = |list: &[&str]| list.iter().any(|a| a.eq_ignore_ascii_case(name));
    if is(NAMES) {
        one_line(value)
    } else if is(PATHS) {
        path(value)
    } else if is(PATH_LISTS) {
        one_line(value)?;
        value
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .try_for_each(path)
    } else if is(ARGUMENTS) {
        printable(value, &['\t'])
    } else if name.eq_ignore_ascii_case(KILL_SIG) {
        super::kill_sig::parse(value).map(|_| ())
    } else {
        Ok(())
    }
}

/// What a machine ad has that a bare name in a request may mean (an
/// unscoped name not in the job is looked up in the machine's ad).
const MACHINE_AMOUNTS: &[&str] = &[
    "Cpus",
    "Memory",
    "Disk",
    "GPUs",
    "TotalCpus",
    "TotalMemory",
    "TotalDisk",
    "TotalGPUs",
    "TotalSlotCpus",
    "TotalSlotMemory",
    "TotalSlotDisk",
    "DetectedCpus",
    "DetectedMemory",
];

/// The first attribute of `job` that fails [`check_attribute`], or a
/// request that is a bare name nothing defines, with the problem. Only
/// literal strings are checked; an expression is whatever it evaluates to
/// where it is used.
pub fn check_job(job: &ClassAd) -> Result<(), (&'static str, String)> {
    // A request that is only the name of an attribute the job lacks is a
    // word where an amount was meant (`request_memory = lots`): it would
    // be undefined on every machine and the job would never run.
    for name in ["RequestCpus", "RequestMemory", "RequestDisk"] {
        if let Some(Expr::Attr(r)) = job.get(name) {
            let machine_side = MACHINE_AMOUNTS
                .iter()
                .any(|m| m.eq_ignore_ascii_case(r.name.as_str()));
            if job.get(r.name.as_str()).is_none() && !machine_side {
                return Err((
                    name,
                    format!(
                        "\"{}\" is neither an amount (a number, with K, M, G or T for sizes) \
                         nor an attribute of the job, so no machine could satisfy it",
                        r.name
                    ),
                ));
            }
        }
    }
    for name in PATHS
        .iter()
        .chain(PATH_LISTS)
        .chain(NAMES)
        .chain(ARGUMENTS)
        .chain(&[KILL_SIG])
    {
        if let Some(Expr::Literal(Value::String(s))) = job.get(name) {
            check_attribute(name, s).map_err(|problem| (*name, problem))?;
        }
    }
    Ok(())
}

/// One resource a job requests, with its largest sensible amount.
#[derive(Debug, Clone, Copy)]
pub struct Resource {
    /// The amount's unit, for messages ("cpus", "MiB").
    pub unit: &'static str,
    pub max: f64,
}

pub const CPUS: Resource = Resource {
    unit: "cpus",
    max: MAX_REQUEST_CPUS,
};

pub const MEMORY: Resource = Resource {
    unit: "MiB",
    max: MAX_REQUEST_MEMORY_MIB,
};

pub const DISK: Resource = Resource {
    unit: "KiB",
    max: MAX_REQUEST_DISK_KIB,
};

/// Whether `text` names a non-number the way people write one: `nan`,
/// `inf`, `infinity`, signed or not, any case.
pub fn names_non_finite(text: &str) -> bool {
    let t = text.trim().trim_start_matches(['+', '-']);
    ["nan", "inf", "infinity"]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// An amount of `resource` (already in its unit): finite, zero or more,
/// at most its maximum. `text` is what the user wrote.
pub fn amount(resource: Resource, text: &str, n: f64) -> Result<(), String> {
    if !n.is_finite() {
        return Err(format!("{text:?} is not a finite number"));
    }
    if n < 0.0 {
        return Err(format!("{text:?} is negative"));
    }
    if n > resource.max {
        return Err(format!(
            "{text:?} is more than any machine has (at most {} {})",
            resource.max, resource.unit
        ));
    }
    Ok(())
}

/// A request given as an expression: refused if it refers to no attribute
/// and does not evaluate to an [`amount`]. One that refers to attributes
/// is left to the machine.
pub fn constant_request(resource: Resource, text: &str, expr: &Expr) -> Result<(), String> {
    if !references(expr).is_empty() {
        return Ok(());
    }
    match crate::classad::eval_expr(expr) {
        Value::Int(i) => amount(resource, text, i as f64),
        Value::Real(r) => amount(resource, text, r),
        other => Err(format!(
            "{text:?} is {}, not an amount",
            crate::classad::unparse_value(&other)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::parse_expr;

    #[test]
    fn control_characters_are_named() {
        for (text, named) in [
            ("a\nb", "a newline"),
            ("a\tb", "a tab"),
            ("a\rb", "a carriage return"),
            ("\u{1b}[31mred", "an escape"),
            ("del\u{7f}", "U+007F"),
            ("c1\u{85}", "U+0085"),
        ] {
            let e = one_line(text).unwrap_err();
            assert!(e.contains(named), "{text:?}: {e}");
            assert!(e.contains("one line"), "{e}");
        }
        assert!(one_line("physics.alice@d0 ünïcode").is_ok());
    }

    #[test]
    fn arguments_may_hold_tabs_but_not_newlines() {
        assert!(check_attribute("Arguments", "a\tb").is_ok());
        assert!(check_attribute("arguments", "a\nb").is_err());
        assert!(check_attribute("JobBatchName", "a\tb").is_err());
        assert!(
            check_attribute("Environment", "A=1\nB=2").is_ok(),
            "not checked"
        );
    }

    #[test]
    fn paths_longer_than_the_system_allows_are_refused() {
        let long = "x".repeat(10_000);
        let e = path(&long).unwrap_err();
        assert!(e.contains("10000 bytes") && e.contains("PATH_MAX"), "{e}");
        assert!(e.len() < 300, "the message does not repeat the path: {e}");
        let e = path(&format!("/tmp/{}/out", "n".repeat(256))).unwrap_err();
        assert!(e.contains("256 bytes") && e.contains("NAME_MAX"), "{e}");
        assert!(path(&format!("/tmp/{}", "n".repeat(255))).is_ok());
        assert!(path(&format!("/{}", "a/".repeat(2046))).is_ok());
        let e = check_attribute("TransferInput", &format!("a.txt, {}", long)).unwrap_err();
        assert!(e.contains("PATH_MAX"), "{e}");
    }

    #[test]
    fn a_job_names_its_first_bad_attribute() {
        let ad = crate::classad::parse_ad(
            r#"[ Iwd = "/w"; Cmd = "/bin/x"; JobBatchName = "a\nb"; Foo = "free\ntext" ]"#,
        )
        .unwrap();
        let (attr, e) = check_job(&ad).unwrap_err();
        assert_eq!(attr, "JobBatchName");
        assert!(e.contains("a newline"), "{e}");
        let ad = crate::classad::parse_ad(r#"[ Iwd = "/w"; Foo = "free\ntext" ]"#).unwrap();
        assert!(
            check_job(&ad).is_ok(),
            "attributes with no meaning are free"
        );
    }

    #[test]
    fn requests_are_finite_amounts() {
        for text in ["nan", "NaN", "inf", "-inf", "+Infinity"] {
            assert!(names_non_finite(text), "{text}");
        }
        assert!(!names_non_finite("info"));
        let check = |text: &str| constant_request(MEMORY, text, &parse_expr(text).unwrap());
        assert!(check("2048").is_ok());
        assert!(check("2 * 1024").is_ok());
        assert!(check("TARGET.Memory / 2").is_ok(), "left to the machine");
        assert!(check("-4").unwrap_err().contains("negative"));
        assert!(check("-4.5").unwrap_err().contains("negative"));
        assert!(check("1e308")
            .unwrap_err()
            .contains("more than any machine"));
        assert!(check("1e400").unwrap_err().contains("finite"));
        assert!(check("\"lots\"").unwrap_err().contains("not an amount"));
        assert!(check("1/0").unwrap_err().contains("not an amount"));
    }
}
