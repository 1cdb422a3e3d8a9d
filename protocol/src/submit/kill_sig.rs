//! `kill_sig`: the signal a job is sent when it is asked to leave (a vacate
//! by the machine's owner policy, a drain, a preemption or `starling
//! vacate`), HTCondor's `kill_sig` and the job ad's `KillSig`.
//!
//! As `condor_submit` does, a name is taken with or without `SIG` in any
//! case, and a number is turned into its name: `usr1`, `SIGUSR1` and `10`
//! all become `KillSig = "SIGUSR1"`. The ad carries the name, not the
//! number, so that the execute machine sends its own number for it.
//!
//! Only signals a job can catch are accepted: `SIGKILL` and `SIGSTOP` would
//! give the job no chance to act on the request, which is the point of
//! choosing a signal. Without `kill_sig` a job gets [`DEFAULT`].

/// The signal a job that names none is sent: SIGTERM.
pub const DEFAULT: &str = "SIGTERM";

/// The signals a job may name, with their Linux numbers (the numbers
/// `kill_sig = N` means).
pub const CATCHABLE: &[(&str, i32)] = &[
    ("SIGHUP", 1),
    ("SIGINT", 2),
    ("SIGQUIT", 3),
    ("SIGILL", 4),
    ("SIGTRAP", 5),
    ("SIGABRT", 6),
    ("SIGBUS", 7),
    ("SIGFPE", 8),
    ("SIGUSR1", 10),
    ("SIGSEGV", 11),
    ("SIGUSR2", 12),
    ("SIGPIPE", 13),
    ("SIGALRM", 14),
    ("SIGTERM", 15),
    ("SIGSTKFLT", 16),
    ("SIGCHLD", 17),
    ("SIGCONT", 18),
    ("SIGTSTP", 20),
    ("SIGTTIN", 21),
    ("SIGTTOU", 22),
    ("SIGURG", 23),
    ("SIGXCPU", 24),
    ("SIGXFSZ", 25),
    ("SIGVTALRM", 26),
    ("SIGPROF", 27),
    ("SIGWINCH", 28),
    ("SIGIO", 29),
    ("SIGPWR", 30),
    ("SIGSYS", 31),
];

/// Signals a job cannot catch, by name and number.
const UNCATCHABLE: &[(&str, i32)] = &[("SIGKILL", 9), ("SIGSTOP", 19)];

/// Other names for signals in [`CATCHABLE`].
const ALIASES: &[(&str, &str)] = &[
    ("SIGIOT", "SIGABRT"),
    ("SIGCLD", "SIGCHLD"),
    ("SIGPOLL", "SIGIO"),
];

/// Longest value shown back in a message, in characters.
const SHOWN: usize = 40;

/// The canonical name (`SIGUSR1`) of the signal `text` names: a name with
/// or without `SIG`, any case, or a number. Else the problem in words, for
/// a message that also names the command.
pub fn parse(text: &str) -> Result<&'static str, String> {
    let t = text.trim();
    let shown = super::values::shorten(t, SHOWN);
    let by_number = |n: i32| CATCHABLE.iter().chain(UNCATCHABLE).find(|(_, k)| *k == n);
    let found = if let Ok(n) = t.parse::<i64>() {
        i32::try_from(n).ok().and_then(by_number).ok_or_else(|| {
            format!(
                "{shown:?} is not the number of a signal a job can catch (1 to 31, not 9 or 19)"
            )
        })?
    } else {
        let upper = t.to_ascii_uppercase();
        let name = if upper.starts_with("SIG") {
            upper
        } else {
            format!("SIG{upper}")
        };
        let name = ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name.as_str(), |(_, canonical)| canonical);
        CATCHABLE
            .iter()
            .chain(UNCATCHABLE)
            .find(|(n, _)| *n == name)
            .ok_or_else(|| {
                format!("{shown:?} is not a signal name (such as SIGTERM or SIGUSR1) or number")
            })?
    };
    if UNCATCHABLE.contains(found) {
        let named_so =
            t.eq_ignore_ascii_case(found.0) || format!("SIG{}", t.to_ascii_uppercase()) == found.0;
        let what = if named_so {
            String::new()
        } else {
            format!("{}, ", found.0)
        };
        return Err(format!(
            "{shown:?} is {what}a signal a job cannot catch: name one it can (such as SIGTERM or SIGUSR1)"
        ));
    }
    Ok(found.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_numbers_become_the_canonical_name() {
        for text in ["SIGUSR1", "usr1", "SigUsr1", " 10 ", "USR1"] {
            assert_eq!(parse(text), Ok("SIGUSR1"), "{text:?}");
        }
        assert_eq!(parse("term"), Ok("SIGTERM"));
        assert_eq!(parse("15"), Ok("SIGTERM"));
        assert_eq!(parse("SIGIOT"), Ok("SIGABRT"));
        assert_eq!(parse("poll"), Ok("SIGIO"));
        // Every listed signal reads back by its name and its number.
        for (name, number) in CATCHABLE {
            assert_eq!(parse(name), Ok(*name));
            assert_eq!(parse(&number.to_string()), Ok(*name));
        }
    }

    #[test]
    fn signals_a_job_cannot_catch_are_refused_by_name() {
        for text in ["SIGKILL", "kill", "9", "SIGSTOP", "stop", "19"] {
            let e = parse(text).unwrap_err();
            assert!(e.contains("a signal a job cannot catch"), "{text:?}: {e}");
        }
        assert_eq!(
            parse("SIGKILL").unwrap_err(),
            "\"SIGKILL\" is a signal a job cannot catch: name one it can (such as SIGTERM or SIGUSR1)"
        );
        assert!(parse("kill")
            .unwrap_err()
            .starts_with("\"kill\" is a signal"));
        assert!(parse("9")
            .unwrap_err()
            .starts_with("\"9\" is SIGKILL, a signal"));
    }

    #[test]
    fn other_values_are_refused_showing_them() {
        for text in [
            "BOGUS",
            "",
            "SIG",
            "0",
            "-15",
            "32",
            "64",
            "99999999999999999999",
            "15.0",
        ] {
            let e = parse(text).unwrap_err();
            assert!(
                e.starts_with(&format!("{:?}", text.trim())),
                "{text:?}: {e}"
            );
        }
        let long = "X".repeat(1000);
        assert!(parse(&long).unwrap_err().len() < 200);
    }
}
