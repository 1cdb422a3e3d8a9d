//! Why a store refused to open or to do what it was asked.

use std::fmt;
use std::path::PathBuf;

use starling_protocol::classad::ParseError;

use crate::job::JobId;

/// A boxed cause, kept so that callers can print the whole chain.
pub type Source = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a store call failed. Messages name the store's path (or the job,
/// attribute or record) and say what to do; the underlying cause is kept as
/// the error's `source`, not repeated in the message, so print the chain
/// (`{:#}` with anyhow) to show it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Another process (most likely another agent) has the store open.
    #[error(
        "store at {path} is in use by another process: stop the other starling agent, \
         or give this one its own data directory"
    )]
    Locked {
        path: PathBuf,
        #[source]
        source: Source,
    },
    /// The store was written by a newer Starling with a layout this one
    /// cannot read.
    #[error(
        "store at {path} has schema version {found}; this starling understands up to \
         {supported}: upgrade starling"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    /// A record does not decode although the store verified when it was
    /// opened (it was damaged since), or a record is refused on its way in.
    #[error(
        "store at {path} is corrupt ({what}): stop the agent, then `starling store check` \
         lists the damage and `starling store salvage` recovers what still reads"
    )]
    Corrupt {
        path: PathBuf,
        /// What was found wrong, naming the record (`jobs/12.0`) when there is
        /// one.
        what: String,
        #[source]
        source: Option<Source>,
    },
    /// Records of the store are damaged or missing: found when it was
    /// opened, before anything was read from it or written to it.
    #[error(
        "store at {path} is damaged: {damage}. `starling store check` lists the damage, `starling store salvage` keeps the damaged store aside and \
         recovers every record that still verifies"
    )]
    Damaged { path: PathBuf, damage: Damage },
    /// The store could not be read or written.
    #[error(
        "store at {path} could not be read or written: check that the disk is \
         writable and not full"
    )]
    Io {
        path: PathBuf,
        #[source]
        source: Source,
    },
    /// The filesystem holding the store is full (or its owner's quota is
    /// spent): a state the agent lives through, not damage. Nothing
    /// acknowledged is lost; new work is refused until space returns
    /// ([`crate::space`]).
    #[error(
        "disk full: the store at {path} cannot take more writes ({reason}); \
         free some space, the agent goes on by itself"
    )]
    DiskFull {
        path: PathBuf,
        /// What ran out: the failed write, or how little is free.
        reason: String,
        #[source]
        source: Option<Source>,
    },
    /// The job is not in the queue (it never was, or it went to history).
    #[error("no job {id} in the queue")]
    NoSuchJob { id: JobId },
    /// An attribute name, or an attribute's size, is not acceptable.
    #[error("attribute {name:?}: {reason}")]
    InvalidAttribute { name: String, reason: String },
    /// An attribute's expression is not valid ClassAd syntax.
    #[error("attribute {name:?}: the expression does not parse")]
    BadExpression {
        name: String,
        #[source]
        source: ParseError,
    },
    /// Any other argument out of bounds: an empty cluster, an over-long user
    /// name, a negative usage.
    #[error("{what}")]
    Invalid { what: String },
}

impl Error {
    /// Whether the store failed for want of space: [`Error::DiskFull`], or
    /// an I/O error whose cause is a full filesystem or a spent quota
    /// (`ENOSPC`, `EDQUOT`), however sled wrapped it.
    pub fn is_disk_full(&self) -> bool {
        match self {
            Error::DiskFull { .. } => true,
            Error::Io { source, .. } => is_out_of_space(source.as_ref()),
            _ => false,
        }
    }

    pub(crate) fn invalid(what: impl Into<String>) -> Error {
        Error::Invalid { what: what.into() }
    }

    pub(crate) fn invalid_attribute(name: &str, reason: impl Into<String>) -> Error {
        Error::InvalidAttribute {
            name: name.to_owned(),
            reason: reason.into(),
        }
    }
}

/// Whether an error, or any error in its chain of causes, says that the
/// filesystem is full or the quota spent (`ENOSPC`, `EDQUOT`). sled hands
/// the first such error back as it was, and later calls a copy that keeps
/// only the error's kind and its text; both are recognised.
pub fn is_out_of_space(error: &(dyn std::error::Error + 'static)) -> bool {
    let mut next = Some(error);
    while let Some(e) = next {
        let io =
            e.downcast_ref::<std::io::Error>()
                .or_else(|| match e.downcast_ref::<sled::Error>() {
                    Some(sled::Error::Io(io)) => Some(io),
                    _ => None,
                });
        if let Some(io) = io {
            if io_out_of_space(io) {
                return true;
            }
        }
        next = e.source();
    }
    false
}

fn io_out_of_space(io: &std::io::Error) -> bool {
    use std::io::ErrorKind;
    if matches!(io.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded) {
        return true;
    }
    // Linux's numbers, for errors made before the kinds were stable.
    if matches!(io.raw_os_error(), Some(28 | 122)) {
        return true;
    }
    let text = format!("{io:?}");
    text.contains("No space left on device") || text.contains("Disk quota exceeded")
}

/// One thing found wrong, in the store an administrator knows it by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// `queue`, `history`, `claims`, `view`..., or `store` for the whole.
    pub store: String,
    /// What is wrong: `job 7.0: checksum mismatch`, `212 of 300
    /// acknowledged jobs missing (the store was cut short?)`.
    pub what: String,
}

impl Problem {
    pub(crate) fn new(store: impl Into<String>, what: impl Into<String>) -> Problem {
        Problem {
            store: store.into(),
            what: what.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.store, self.what)
    }
}

/// What is wrong with a damaged store: at least one [`Problem`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Damage {
    pub(crate) problems: Vec<Problem>,
}

impl Damage {
    pub(crate) fn new(problems: Vec<Problem>) -> Damage {
        Damage { problems }
    }

    pub fn problems(&self) -> &[Problem] {
        &self.problems
    }
}

/// The first few problems, then how many more.
impl fmt::Display for Damage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 3;
        for (i, problem) in self.problems.iter().take(SHOWN).enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{problem}")?;
        }
        if self.problems.len() > SHOWN {
            write!(f, "; and {} more", self.problems.len() - SHOWN)?;
        }
        Ok(())
    }
}
