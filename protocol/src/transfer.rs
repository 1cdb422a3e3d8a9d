//! Handing a job to its execute agent and moving files between agents, on
//! `/starling/transfer/1`.
//!
//! ```text
//! submit agent                              execute agent
//!   Request::Job {claim, job, transfer, files} ─▶  checks claim and job
//!        ◀─── Response::Accepted {transfer} or Error {code, reason}
//!        ◀─── Request::Chunk {transfer, file, offset, len}   (pulls input)
//!   Response::Chunk {.., data} or Error ───▶
//!        ◀─── Request::Offer {claim, transfer, files, report} (job ended)
//!   Response::Accepted ───▶
//!   Request::Chunk ───▶                                      (pulls output)
//!        ◀─── Response::Chunk
//!   Request::Close {transfer} ───▶  the offerer may forget the files
//! ```
//!
//! The side that has the files offers them ([`Request::Job`] for input,
//! [`Request::Offer`] for output) under a [`TransferId`] it chooses, and the
//! other side pulls them chunk by chunk at its own pace, at most
//! [`MAX_CHUNK_LEN`] per chunk. An offerer serves chunks of a transfer only
//! to the peer it offered them to. Each [`File`] names its blake3 hash, so
//! the puller verifies what it assembled before using it.
//!
//! File names are checked when decoded and when built ([`FileName::new`],
//! with the rules and limits of the files vocabulary this module
//! re-exports), so a peer can never name a file outside the sandbox it is
//! written into.

use std::collections::HashSet;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::claim::ClaimId;
use crate::files::shown;
pub use crate::files::{
    FileName, Hash, MAX_CHUNK_LEN, MAX_COMPONENT_LEN, MAX_FILES, MAX_FILE_NAME_LEN, MODE_MASK,
};
use crate::gossip::MAX_SIGNED_AD_LEN;
use crate::identity::Envelope;
use crate::wire::{self, code_enum, envelope_bytes, Error, Message, Protocol};

/// Largest transfer request (4 MiB: a signed job and a long file list).
pub const MAX_REQUEST_LEN: usize = 4 << 20;

/// Largest transfer response: a full chunk and a little around it.
pub const MAX_RESPONSE_LEN: usize = MAX_CHUNK_LEN as usize + 4096;

/// The offerer's id for one set of files, unique among its own transfers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct TransferId(pub u64);

impl TransferId {
    /// A new id for a transfer this agent offers. Random, so that ids drawn at
    /// the same moment by concurrent tasks, or before and after a restart,
    /// do not repeat: one agent's offers share one table.
    pub fn fresh() -> Self {
        let mut bytes = [0u8; 8];
        if getrandom::fill(&mut bytes).is_ok() {
            return Self(u64::from_le_bytes(bytes));
        }
        // No randomness from the system: a clock and a counter are unique
        // within this process, which is what the offer table needs.
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let count = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        Self(nanos.rotate_left(20) ^ count)
    }
}

impl fmt::Display for TransferId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One file offered in a transfer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct File {
    /// Where the file goes, relative to the receiver's sandbox.
    pub name: FileName,
    /// Its length in bytes.
    pub size: u64,
    /// The blake3 hash of its whole content.
    pub hash: Hash,
    /// Unix permission bits, within [`MODE_MASK`].
    pub mode: u32,
}

impl File {
    /// A file entry; `mode` must be within [`MODE_MASK`].
    pub fn new(name: FileName, size: u64, hash: Hash, mode: u32) -> Result<Self, Error> {
        let file = Self {
            name,
            size,
            hash,
            mode,
        };
        file.check()?;
        Ok(file)
    }

    fn check(&self) -> Result<(), Error> {
        if self.mode & !MODE_MASK != 0 {
            return Err(Error::Invalid {
                field: "file mode",
                reason: format!(
                    "{:?} has mode {:o}; only permission bits {MODE_MASK:o} are allowed",
                    self.name.as_str(),
                    self.mode
                ),
            });
        }
        Ok(())
    }

    /// How many chunks of `chunk_len` bytes the file takes (at least one, so
    /// an empty file is still fetched and created).
    pub fn chunk_count(&self, chunk_len: u32) -> u64 {
        self.size.div_ceil(u64::from(chunk_len.max(1))).max(1)
    }
}

/// Checks a file list: its length, each entry, and that no name repeats.
fn check_files(files: &[File]) -> Result<(), Error> {
    wire::check_count("file list", files, MAX_FILES)?;
    let mut seen = HashSet::with_capacity(files.len());
    for file in files {
        file.check()?;
        if !seen.insert(file.name.as_str()) {
            return Err(Error::Invalid {
                field: "file list",
                reason: format!("{:?} is listed twice", shown(file.name.as_str())),
            });
        }
    }
    Ok(())
}

/// How a job ended on its execute agent, sent with its outputs.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Report {
    /// The exit code, when the process exited by itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The signal that ended the process, when one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signal: Option<i32>,
    /// User CPU time, in milliseconds.
    pub user_cpu_ms: u64,
    /// System CPU time, in milliseconds.
    pub sys_cpu_ms: u64,
    /// Wall-clock time from start to exit, in milliseconds.
    pub wall_ms: u64,
    /// The most memory the job's processes held at once, in KiB.
    pub peak_memory_kib: u64,
    /// The largest size of the job's sandbox, in KiB (HTCondor's
    /// `DiskUsage`); absent from older agents.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_usage_kib: Option<u64>,
    /// Set when the job did not run to its end and must be held (executable
    /// missing, input transfer failed, memory exceeded...): HTCondor's hold
    /// reason code and subcode, and a readable reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<Hold>,
    /// Set when the execute agent made the job leave before its end (its
    /// owner came back, a job it ranks higher or a user with a better
    /// priority displaced it): why, readable. The job goes back to idle to
    /// run elsewhere; it is neither completed nor held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evicted: Option<String>,
    /// Set with `evicted` when the job's process never started (its input
    /// could not be fetched from its submit agent, which went away): the
    /// run is not counted as one of the job's starts.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub never_started: bool,
}

/// Why a job must be held, HTCondor style.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Hold {
    /// HTCondor's `HoldReasonCode`.
    pub code: u32,
    /// HTCondor's `HoldReasonSubCode` (often an errno).
    pub subcode: i32,
    /// HTCondor's `HoldReason`: readable, at most [`wire::MAX_REASON_LEN`]
    /// bytes.
    pub reason: String,
}

impl Hold {
    pub fn new(code: u32, subcode: i32, reason: impl Into<String>) -> Hold {
        Hold {
            code,
            subcode,
            reason: reason.into(),
        }
    }
}

impl Report {
    fn check(&self) -> Result<(), Error> {
        if let Some(hold) = &self.hold {
            wire::check_text("hold reason", &hold.reason, wire::MAX_REASON_LEN)?;
        }
        if let Some(reason) = &self.evicted {
            wire::check_text("eviction reason", reason, wire::MAX_REASON_LEN)?;
        }
        Ok(())
    }
}

code_enum! {
    /// Why a transfer request failed.
    pub enum ErrorCode {
        /// No transfer with this id is offered to you.
        UnknownTransfer = 1 => "unknown transfer",
        /// No such claim, or not yours.
        UnknownClaim = 2 => "unknown claim",
        /// The file index is past the end of the file list.
        NoSuchFile = 3 => "no such file",
        /// The offset is past the end of the file.
        OutOfRange = 4 => "offset out of range",
        /// The job does not match the claim, or is not signed by a trusted agent.
        BadJob = 5 => "bad job",
        /// Not enough disk for the files.
        NoSpace = 6 => "no space",
        /// Reading the file failed on the offerer's side.
        ReadFailed = 7 => "read failed",
        /// Too many transfers at once; retry later.
        Busy = 8 => "busy",
        /// The request was malformed.
        BadRequest = 9 => "bad request",
        /// Understood, and declined (a move the submit agent does not make).
        Declined = 10 => "declined",
    }
}

/// A transfer request, sent by either agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Request {
    /// Submit agent to execute agent: run this job under this claim; its
    /// input files are offered as `transfer`.
    Job {
        /// The claim granted for the job.
        claim: ClaimId,
        /// The signed JOB envelope, the same that was sent in the claim.
        #[serde(with = "envelope_bytes")]
        job: Box<Envelope>,
        /// The id the input files are offered under.
        transfer: TransferId,
        /// The input files, to pull with [`Request::Chunk`].
        files: Vec<File>,
        /// The job's latest checkpoint, to restore before it starts.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        checkpoint: Option<Box<Restore>>,
    },
    /// Files ready for the receiver to pull: output or a checkpoint of the
    /// job running under `claim`.
    Offer {
        /// The claim the files belong to.
        claim: ClaimId,
        /// The id the files are offered under.
        transfer: TransferId,
        /// The files.
        files: Vec<File>,
        /// How the job ended, when these are its final outputs; `None` for
        /// files offered while it runs (a checkpoint).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        report: Option<Report>,
    },
    /// Send part of an offered file.
    Chunk {
        /// The transfer the file was offered under.
        transfer: TransferId,
        /// The file's index in the offered list.
        file: u32,
        /// Where to start, in bytes.
        offset: u64,
        /// How many bytes, 1 to [`MAX_CHUNK_LEN`]; fewer come back at the end
        /// of the file.
        len: u32,
    },
    /// Execute agent to submit agent: the job running under `claim` took a
    /// checkpoint, replicated as the signed manifest says. Answered
    /// [`Response::Recorded`] once the submit agent recorded it durably.
    Checkpoint {
        claim: ClaimId,
        #[serde(with = "envelope_bytes")]
        manifest: Box<Envelope>,
    },
    /// Execute agent to submit agent: the job running under `claim` would
    /// do better on another machine (`starling_policies::migration`). The
    /// submit agent, which owns the job, decides: it claims one of `to`
    /// (slot names, best first) and only then has the job vacated, so that
    /// a move never leaves the job without a machine. Answered
    /// [`Response::Migrating`] or an error saying why not.
    Migrate {
        claim: ClaimId,
        /// At most [`MAX_MIGRATION_TARGETS`], each at most
        /// [`MAX_SLOT_NAME_LEN`] bytes.
        to: Vec<String>,
        /// Why, in words (at most [`wire::MAX_REASON_LEN`] bytes).
        reason: String,
        /// The machine's owner policy makes the job leave anyway: the
        /// submit agent's limits on moves do not apply.
        reclaim: bool,
    },
    /// The state of one of the asked agent's links ([`crate::links`]).
    /// `user` (`owner@domain`, at most [`MAX_LINK_USER_LEN`] bytes) is the
    /// user the transfer is for: it waits for the link, for the owner's
    /// network fair share.
    LinkState {
        link: crate::links::LinkId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// Holds `slot` on a link as `id` for `lease_ms` (at most
    /// [`crate::links::MAX_LEASE_MS`]) for `user`'s transfer; answered
    /// `Held` or why not.
    Hold {
        id: u64,
        link: crate::links::LinkId,
        slot: crate::links::Slot,
        lease_ms: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        user: Option<String>,
    },
    /// Commits the asker's hold `id`: the transfer will run in its slot.
    Commit { id: u64, link: crate::links::LinkId },
    /// Releases the asker's hold or commitment `id` (the transfer is done,
    /// or will not run).
    Release { id: u64, link: crate::links::LinkId },
    /// The puller has everything it wanted; the offerer may forget the files.
    Close {
        /// The transfer.
        transfer: TransferId,
    },
}

/// The answer to a transfer [`Request`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Response {
    /// The job or offer was accepted; chunks will be pulled.
    Accepted {
        /// The transfer.
        transfer: TransferId,
    },
    /// Part of a file.
    Chunk {
        /// The transfer.
        transfer: TransferId,
        /// The file's index in the offered list.
        file: u32,
        /// Where `data` starts in the file.
        offset: u64,
        /// The bytes, at most [`MAX_CHUNK_LEN`]; shorter than asked only at
        /// the end of the file.
        #[serde(with = "serde_bytes")]
        data: Vec<u8>,
    },
    /// The request failed.
    Error {
        /// The transfer it concerned.
        transfer: TransferId,
        /// What went wrong, as a code.
        code: ErrorCode,
        /// What went wrong, in words.
        reason: String,
    },
    /// The transfer is closed.
    Closed {
        /// The transfer.
        transfer: TransferId,
    },
    /// The checkpoint is recorded: it is the one the job restarts from.
    Recorded { sequence: u64 },
    /// The job moves to `to`: claimed there, it is vacated here next.
    Migrating { to: String },
    /// A link owner's answer.
    Link(crate::links::LinkAnswer),
}

/// Machines a [`Request::Migrate`] proposes, at most.
pub const MAX_MIGRATION_TARGETS: usize = 8;

/// The longest slot name a [`Request::Migrate`] carries, in bytes.
pub const MAX_SLOT_NAME_LEN: usize = 256;

/// A checkpoint to restore: its signed manifest and the store peers that
/// hold it now (repair may have moved it since it was taken).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Restore {
    #[serde(with = "envelope_bytes")]
    pub manifest: Box<Envelope>,
    pub replicas: Vec<crate::checkpoint::Replica>,
}

impl Message for Request {
    const PROTOCOL: Protocol = Protocol::Transfer;
    const NAME: &'static str = "transfer request";
    const MAX_LEN: usize = MAX_REQUEST_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Request::Job {
                job,
                files,
                checkpoint,
                ..
            } => {
                let len = job.to_bytes().len();
                if len > MAX_SIGNED_AD_LEN {
                    return Err(Error::TooLarge {
                        what: "signed job",
                        size: len,
                        limit: MAX_SIGNED_AD_LEN,
                    });
                }
                if let Some(restore) = checkpoint {
                    wire::check_count(
                        "replica list",
                        &restore.replicas,
                        crate::checkpoint::MAX_REPLICAS,
                    )?;
                    for replica in &restore.replicas {
                        replica.check()?;
                    }
                }
                check_files(files)
            }
            Request::Checkpoint { manifest, .. } => {
                let len = manifest.to_bytes().len();
                if len > crate::identity::MAX_ENVELOPE_LEN {
                    return Err(Error::TooLarge {
                        what: "checkpoint manifest",
                        size: len,
                        limit: crate::identity::MAX_ENVELOPE_LEN,
                    });
                }
                Ok(())
            }
            Request::Offer { files, report, .. } => {
                if let Some(report) = report {
                    report.check()?;
                }
                check_files(files)
            }
            Request::Chunk { offset, len, .. } => {
                if *len == 0 || *len > MAX_CHUNK_LEN {
                    return Err(Error::Invalid {
                        field: "chunk length",
                        reason: format!("{len} is not between 1 and {MAX_CHUNK_LEN}"),
                    });
                }
                if offset.checked_add(u64::from(*len)).is_none() {
                    return Err(Error::Invalid {
                        field: "chunk offset",
                        reason: format!("{offset} + {len} overflows"),
                    });
                }
                Ok(())
            }
            Request::Migrate { to, reason, .. } => {
                wire::check_count("migration targets", to, MAX_MIGRATION_TARGETS)?;
                for name in to {
                    wire::check_text("migration target", name, MAX_SLOT_NAME_LEN)?;
                }
                wire::check_text("reason", reason, wire::MAX_REASON_LEN)
            }
            Request::LinkState { link, user } => {
                link.check()?;
                check_link_user(user.as_deref())
            }
            Request::Commit { link, .. } | Request::Release { link, .. } => link.check(),
            Request::Hold {
                link,
                slot,
                lease_ms,
                user,
                ..
            } => {
                link.check()?;
                check_link_user(user.as_deref())?;
                slot.check()?;
                if *lease_ms == 0 || *lease_ms > crate::links::MAX_LEASE_MS {
                    return Err(Error::Invalid {
                        field: "lease_ms",
                        reason: format!(
                            "{lease_ms} is not between 1 and {}",
                            crate::links::MAX_LEASE_MS
                        ),
                    });
                }
                Ok(())
            }
            Request::Close { .. } => Ok(()),
        }
    }
}

/// Longest user a link request names, in bytes.
pub const MAX_LINK_USER_LEN: usize = 256;

fn check_link_user(user: Option<&str>) -> Result<(), Error> {
    match user {
        Some(user) => wire::check_text("user", user, MAX_LINK_USER_LEN),
        None => Ok(()),
    }
}

impl Message for Response {
    const PROTOCOL: Protocol = Protocol::Transfer;
    const NAME: &'static str = "transfer response";
    const MAX_LEN: usize = MAX_RESPONSE_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Response::Chunk { data, .. } if data.len() > MAX_CHUNK_LEN as usize => {
                Err(Error::TooLarge {
                    what: "chunk",
                    size: data.len(),
                    limit: MAX_CHUNK_LEN as usize,
                })
            }
            Response::Error { reason, .. } => {
                wire::check_text("reason", reason, wire::MAX_REASON_LEN)
            }
            Response::Migrating { to } => {
                wire::check_text("migration target", to, MAX_SLOT_NAME_LEN)
            }
            Response::Link(crate::links::LinkAnswer::State(state)) => state.check(),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setuid_and_duplicate_files_are_refused() {
        let name = FileName::new("run.sh").unwrap();
        let hash = Hash::from_bytes([0; 32]);
        let err = File::new(name.clone(), 1, hash, 0o4755).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid file mode: \"run.sh\" has mode 4755; only permission bits 777 are allowed"
        );
        let file = File::new(name, 1, hash, 0o755).unwrap();
        let err = check_files(&[file.clone(), file]).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid file list: \"run.sh\" is listed twice"
        );
    }

    #[test]
    fn chunk_requests_are_bounded() {
        let chunk = |offset, len| Request::Chunk {
            transfer: TransferId(1),
            file: 0,
            offset,
            len,
        };
        assert!(chunk(0, MAX_CHUNK_LEN).check().is_ok());
        assert!(chunk(0, MAX_CHUNK_LEN + 1).check().is_err());
        assert!(chunk(0, 0).check().is_err());
        assert!(chunk(u64::MAX, 1).check().is_err());
    }

    #[test]
    fn chunk_count_covers_the_file_and_empty_files() {
        let file = |size| {
            File::new(
                FileName::new("f").unwrap(),
                size,
                Hash::from_bytes([0; 32]),
                0o644,
            )
            .unwrap()
        };
        assert_eq!(file(0).chunk_count(MAX_CHUNK_LEN), 1);
        assert_eq!(file(1).chunk_count(MAX_CHUNK_LEN), 1);
        assert_eq!(file(u64::from(MAX_CHUNK_LEN)).chunk_count(MAX_CHUNK_LEN), 1);
        assert_eq!(
            file(u64::from(MAX_CHUNK_LEN) + 1).chunk_count(MAX_CHUNK_LEN),
            2
        );
    }
}
