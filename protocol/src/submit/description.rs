//! A parsed submit file: its statements ([`Statement`], with a `queue`
//! statement's [`Items`] and [`Slice`]), the warnings found in it, the
//! files it included; the [`SubmitError`] that names a file, a line and a
//! problem; and the limits every step of reading and expanding a file
//! keeps.
//!
//! Plain data and its limits: reading the text is `syntax`'s, expanding
//! it [`Description::expand`]'s and `macros`'s, building ads `job_ad`'s;
//! nothing here looks at the outside world or uses another part of the
//! submit module.

use std::fmt;

/// Largest submit file, in bytes.
pub const MAX_FILE_LEN: usize = 1 << 20;
/// Longest logical line (after joining continuations), in bytes.
pub const MAX_LINE_LEN: usize = 64 << 10;
/// Most procs one file may queue.
pub const MAX_PROCS: usize = 100_000;
/// Deepest macro expansion.
pub const MAX_MACRO_DEPTH: usize = 32;
/// Largest file `queue ... from FILE` reads, in bytes.
pub const MAX_ITEMS_FILE_LEN: usize = 16 << 20;
/// Deepest nesting of `include : FILE`.
pub const MAX_INCLUDE_DEPTH: usize = 8;
/// Statements read from the nth included file carry line numbers offset
/// by `n` times this, so that errors name that file and its own line.
pub(super) const INCLUDE_LINE_BASE: usize = 1 << 32;
/// Longest expanded value, in bytes.
pub const MAX_VALUE_LEN: usize = 256 << 10;

/// A problem in a submit file, with where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubmitError {
    pub file: String,
    /// 1-based; 0 for the file as a whole.
    pub line: usize,
    pub problem: String,
}

impl fmt::Display for SubmitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.problem)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.problem)
        }
    }
}

impl std::error::Error for SubmitError {}

/// Where a `queue` statement's items come from.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Items {
    /// `queue` or `queue N`.
    None,
    /// `in (a, b, c)` or `from ( lines )`: one item per entry.
    List(Vec<String>),
    /// `from FILE`: one item per line of the file.
    File(String),
    /// `from PROGRAM |`: one item per line of its output.
    Command(String),
    /// `matching [files|dirs] PATTERN...`.
    Matching { patterns: Vec<String>, dirs: bool },
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Statement {
    Set {
        key: String,
        value: String,
        line: usize,
    },
    Queue {
        count: Option<String>,
        vars: Vec<String>,
        items: Items,
        /// `[start:end:step]` before the items, Python's slice.
        slice: Option<Slice>,
        line: usize,
    },
}

/// A `queue` statement's `[start:end:step]`: which items are queued.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Slice {
    start: Option<i64>,
    end: Option<i64>,
    step: Option<i64>,
}

impl Slice {
    /// Reads `[a:b:c]` (each part optional) at the start of `text`; the
    /// slice and the text after it.
    pub(super) fn parse(text: &str) -> Result<Option<(Slice, &str)>, String> {
        let Some(rest) = text.strip_prefix('[') else {
            return Ok(None);
        };
        let end = rest
            .find(']')
            .ok_or_else(|| format!("the slice {text:?} has no ']'"))?;
        let parts: Vec<&str> = rest[..end].split(':').collect();
        if parts.len() > 3 {
            return Err(format!(
                "[{}] is not a slice [start:end:step]",
                &rest[..end]
            ));
        }
        let num = |i: usize| -> Result<Option<i64>, String> {
            match parts.get(i).map(|p| p.trim()) {
                None | Some("") => Ok(None),
                Some(p) => p
                    .parse()
                    .map(Some)
                    .map_err(|_| format!("{p:?} in a slice is not a whole number")),
            }
        };
        let slice = Slice {
            start: num(0)?,
            end: num(1)?,
            step: num(2)?,
        };
        if slice.step == Some(0) {
            return Err("a slice's step cannot be 0".to_owned());
        }
        if parts.len() == 1 && slice.start.is_some() {
            // `[n]`: the one item n.
            return Ok(Some((
                Slice {
                    end: slice.start.map(|s| {
                        if s == -1 {
                            i64::MAX
                        } else {
                            s.saturating_add(1)
                        }
                    }),
                    ..slice
                },
                rest[end + 1..].trim_start(),
            )));
        }
        Ok(Some((slice, rest[end + 1..].trim_start())))
    }

    /// Whether item `index` of `len` is selected (Python's rules).
    pub(super) fn selects(&self, index: usize, len: usize) -> bool {
        // In i128, so that no bound a user writes overflows.
        let len = len as i128;
        let at = |v: i64| {
            let v = i128::from(v);
            if v < 0 {
                (len + v).max(0)
            } else {
                v.min(len)
            }
        };
        let step = i128::from(self.step.unwrap_or(1));
        let i = index as i128;
        if step > 0 {
            let start = self.start.map_or(0, at);
            let end = self.end.map_or(len, at);
            i >= start && i < end && (i - start) % step == 0
        } else {
            let start = self.start.map_or(len - 1, |v| at(v).min(len - 1));
            let end = self.end.map_or(-1, at);
            i <= start && i > end && (start - i) % (-step) == 0
        }
    }
}

/// A parsed submit file.
#[derive(Debug, Clone)]
pub struct Description {
    pub(super) file: String,
    pub(super) statements: Vec<Statement>,
    pub(super) warnings: Vec<SubmitError>,
    /// The files `include` read, in order: the statements of the nth
    /// have lines offset by `n * INCLUDE_LINE_BASE`.
    pub(super) includes: Vec<String>,
    /// Macros named by `if` conditions (so not unused).
    pub(super) in_conditions: std::collections::BTreeSet<String>,
}

impl Description {
    pub(super) fn error(&self, line: usize, problem: impl Into<String>) -> SubmitError {
        let (file, line) = match (line / INCLUDE_LINE_BASE).checked_sub(1) {
            Some(n) => (
                self.includes.get(n).cloned().unwrap_or_default(),
                line % INCLUDE_LINE_BASE,
            ),
            None => (self.file.clone(), line),
        };
        SubmitError {
            file,
            line,
            problem: problem.into(),
        }
    }

    /// What the file says that Starling ignores, as warnings naming the
    /// line: keys that are neither a command, a `+Attr` nor a macro used
    /// anywhere (with a "did you mean"), and HTCondor commands Starling
    /// does not carry out.
    pub fn warnings(&self) -> &[SubmitError] {
        &self.warnings
    }
}
