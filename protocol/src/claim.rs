//! The claim protocol, on `/starling/claim/1`: a submit agent asks an execute
//! agent for a slot to run a job, and both keep the claim alive with a lease.
//!
//! ```text
//! submit agent                         execute agent
//!   Request::Claim {request, job} ───▶  re-evaluates START/Requirements,
//!                                       fair share, trust
//!        ◀─── Response::Granted {request, claim, lease_ms, slot}
//!          or Response::Rejected {request, code, reason}
//!   Request::Keepalive {claim}    ───▶  (every lease/3 or so)
//!        ◀─── Response::KeptAlive {claim, lease_ms, running} or UnknownClaim {claim}
//!   Request::Release {claim, reason} ─▶
//!        ◀─── Response::Released {claim} or UnknownClaim {claim}
//!   Request::Vacate {claim, reason} ──▶  the job under the claim is sent its
//!                                       KillSig and, after the machine's
//!                                       MachineMaxVacateTime, killed; it is
//!                                       reported evicted and the claim ends
//!        ◀─── Response::Vacating {claim, running} or UnknownClaim {claim}
//! ```
//!
//! `Vacate` is newer than the rest of version 1: an execute agent that
//! predates it refuses it as a request it cannot decode, and the submit
//! agent tells its user that the machine cannot vacate jobs (`starling
//! vacate`); the job runs on. `Peek` (`starling tail`: part of the running
//! job's standard output or error, [`MAX_PEEK_LEN`] bytes at a time,
//! answered with `Peeked`) is newer still, and an older agent refuses it
//! the same way.
//!
//! `Barrier` serves co-allocated (parallel-universe) jobs, whose nodes
//! start together or not at all: the job handed over under such a claim
//! stages its input and then waits. The submit agent asks each node's
//! machine `Barrier {claim, release: None}` until every one answers
//! `AtBarrier {ready: true, host}`, then sends each `Barrier {claim,
//! release: Some(contacts)}`: every node's number and host, which the job
//! finds in its sandbox's contact file. A barrier answer renews the lease
//! as a keepalive does.
//!
//! The job travels as its signed JOB envelope (a [`crate::gossip`] signed ad
//! of kind [`crate::gossip::AdKind::Job`]), not as bare ad text: the execute
//! agent must know that an agent of a domain it trusts vouches for this job
//! and its owner before it runs anything, and the envelope carries that
//! agent's signature and domain certificates. The same envelope goes again in
//! [`crate::transfer::Request::Job`], so the execute agent can check it runs
//! what it granted.
//!
//! Requests carry a `request` id chosen by the submit agent and echoed in the
//! answer, so a claim retried after a lost answer gets the same grant back
//! rather than a second slot. Leases are durations, not instants: the two
//! clocks need not agree.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::gossip::MAX_SIGNED_AD_LEN;
use crate::identity::Envelope;
use crate::wire::{self, code_enum, envelope_bytes, Error, Message, Protocol};

/// Largest claim request: the signed job and a little around it.
pub const MAX_REQUEST_LEN: usize = MAX_SIGNED_AD_LEN + 4096;

/// Largest claim response.
pub const MAX_RESPONSE_LEN: usize = 8192;

/// Longest slot name, in bytes.
pub const MAX_SLOT_NAME_LEN: usize = 256;

/// Longest reason a [`Request::Vacate`] may give, in bytes: it is the
/// evicted job's `LastVacateReason` and a line of its user log.
pub const MAX_VACATE_REASON_LEN: usize = 256;

/// Most bytes of a job's output one [`Request::Peek`] returns: a response
/// stays within [`MAX_RESPONSE_LEN`]; `starling tail` asks again for more.
pub const MAX_PEEK_LEN: u32 = 4096;

/// Most nodes a co-allocated job's [`Request::Barrier`] may name: the
/// longest contact list stays within a claim request.
pub const MAX_NODES: usize = 128;

/// Longest host a node's [`Contact`] may give, in bytes (a DNS name).
pub const MAX_HOST_LEN: usize = 253;

/// One node of a co-allocated job, as the others find it in their contact
/// file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Contact {
    /// The node's number (HTCondor's `$(Node)`, `_CONDOR_PROCNO`).
    pub node: u32,
    /// Where its job can be reached: its machine's address or host name.
    pub host: String,
    /// Its machine's name, for people.
    pub machine: String,
}

/// The longest a claim request may ask to wait at a busy machine, in
/// milliseconds (below the claim protocol's request timeout).
pub const MAX_WAIT_MS: u64 = 10_000;

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The id of a granted claim: 16 random bytes chosen by the execute agent.
/// Shown as 32 hex digits.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct ClaimId(serde_bytes::ByteArray<16>);

impl ClaimId {
    pub const LEN: usize = 16;

    /// A fresh id from the operating system's random source.
    pub fn random() -> Result<Self, getrandom::Error> {
        let mut bytes = [0u8; 16];
        getrandom::fill(&mut bytes)?;
        Ok(Self::from_bytes(bytes))
    }

    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(serde_bytes::ByteArray::new(bytes))
    }

    pub fn as_bytes(&self) -> &[u8; 16] {
        &self.0
    }
}

impl fmt::Display for ClaimId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        wire::write_hex(f, self.as_bytes())
    }
}
impl fmt::Debug for ClaimId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ClaimId({self})")
    }
}

impl FromStr for ClaimId {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        wire::parse_hex::<16>(s)
            .map(Self::from_bytes)
            .ok_or_else(|| Error::Invalid {
                field: "claim id",
                reason: format!("{s:?} is not 32 hex digits"),
            })
    }
}

/// A submit agent's id for one claim attempt, unique among its own requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RequestId(pub u64);

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

code_enum! {
    /// Why an execute agent refused a claim. Shown to the user by
    /// `starling why`; a code from a newer peer decodes as `Other`.
    pub enum RejectCode {
        /// The job does not meet the machine's Requirements, or the machine
        /// not the job's.
        RequirementsNotMet = 1 => "requirements not met",
        /// The machine's START expression is false for this job now.
        StartFalse = 2 => "start is false",
        /// Every slot is claimed and the job cannot preempt.
        Busy = 3 => "machine is busy",
        /// The job's or the submitter's domain is not trusted here.
        UntrustedDomain = 4 => "domain not trusted",
        /// The job's domain or user is over its quota here.
        QuotaExceeded = 5 => "quota exceeded",
        /// Other users have better priority for the slot.
        LowerPriority = 6 => "lower priority",
        /// The agent is shutting down or draining.
        ShuttingDown = 7 => "shutting down",
        /// The request was malformed, its job unsigned, expired or unreadable.
        BadRequest = 8 => "bad request",
    }
}

code_enum! {
    /// Which of a running job's output streams [`Request::Peek`] reads.
    pub enum OutputStream {
        /// Its standard output.
        Stdout = 1 => "stdout",
        /// Its standard error.
        Stderr = 2 => "stderr",
    }
}

code_enum! {
    /// Why a submit agent releases a claim.
    pub enum ReleaseReason {
        /// The job finished.
        JobCompleted = 1 => "job completed",
        /// The user removed or held the job.
        JobRemoved = 2 => "job removed",
        /// The submit agent has no more work for the slot.
        NoMoreWork = 3 => "no more work",
        /// The submit agent is shutting down.
        ShuttingDown = 4 => "shutting down",
        /// The job is moving to another machine.
        Migrating = 5 => "migrating",
    }
}

/// A submit agent's request to an execute agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Request {
    /// Claim a slot for a job.
    Claim {
        /// Echoed in the answer; a retry with the same id gets the same answer.
        request: RequestId,
        /// The job: a signed JOB envelope, at most [`MAX_SIGNED_AD_LEN`]
        /// bytes, opened by the execute agent with
        /// [`crate::gossip::open_kind`].
        #[serde(with = "envelope_bytes")]
        job: Box<Envelope>,
        /// The lease asked for, in milliseconds; the grant may be shorter.
        lease_ms: u64,
        /// The slot the submit agent matched, if the machine ad names several.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        slot: Option<String>,
        /// How long the submit agent will wait for an answer when the
        /// machine is busy, in milliseconds, at most [`MAX_WAIT_MS`]. Zero
        /// (the default): answer at once. A waiting request is granted when
        /// resources free, in the machine's order of users (its `Rank`,
        /// favours owed between domains, user priority), or refused as
        /// `Busy` when the wait is over.
        #[serde(default, skip_serializing_if = "is_zero")]
        wait_ms: u64,
    },
    /// Keep a granted claim alive for another lease.
    Keepalive {
        /// The claim.
        claim: ClaimId,
    },
    /// Give a claim back.
    Release {
        /// The claim.
        claim: ClaimId,
        /// Why, for the execute agent's accounting.
        reason: ReleaseReason,
    },
    /// Make the job running under a claim leave now, as the machine's owner
    /// policy would vacate it (`starling vacate`, HTCondor's
    /// `condor_vacate_job`): it is sent its `KillSig` and given the
    /// machine's `MachineMaxVacateTime`, then reported evicted, and the
    /// claim ends with it. Only the claim's holder may ask.
    Vacate {
        /// The claim.
        claim: ClaimId,
        /// Why, in words for the job's user log: one line of at most
        /// [`MAX_VACATE_REASON_LEN`] bytes.
        reason: String,
    },
    /// Read part of an output stream of the job running under a claim, as
    /// it is now (`starling tail`, HTCondor's `condor_tail`). Only the
    /// claim's holder may ask.
    Peek {
        /// The claim.
        claim: ClaimId,
        stream: OutputStream,
        /// Where to start reading; `None`: the last `max` bytes.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        offset: Option<u64>,
        /// At most this many bytes, at most [`MAX_PEEK_LEN`].
        max: u32,
    },
    /// The start barrier of a co-allocated job's node: `release: None`
    /// asks whether the job handed over under the claim is ready to start
    /// (its input staged); `Some(contacts)` starts it, with every node's
    /// contact (at most [`MAX_NODES`]). Only the claim's holder may ask.
    /// Answered [`Response::AtBarrier`]; renews the lease.
    Barrier {
        /// The claim.
        claim: ClaimId,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        release: Option<Vec<Contact>>,
    },
    /// Ask the domain's netmgr, the keeper of what the domain's signed
    /// terms let each trusted domain hold at once (`max_slots`,
    /// `max_fraction`, `max_gpus`), for a share of it: one slot of `cpus`
    /// CPUs and `gpus` GPUs for `domain`'s job under `claim`, for
    /// `lease_ms`. Asked again before the
    /// lease ends to keep it; a share not kept lapses. Only agents of the
    /// keeper's own domain may ask.
    Share {
        /// The trusted (foreign) domain whose job the slot is for.
        domain: String,
        /// The claim granted under the share (the asker's own id for it).
        claim: ClaimId,
        /// The CPUs the claim holds, at most [`MAX_SHARE_CPUS`].
        cpus: u32,
        /// The GPUs the claim holds, at most [`MAX_SHARE_GPUS`]. Absent
        /// (from older agents): none.
        #[serde(default, skip_serializing_if = "no_gpus")]
        gpus: u32,
        /// The lease asked for, at most [`MAX_SHARE_LEASE_MS`].
        lease_ms: u64,
        /// The asker holds this share already (a renewal): a keeper that
        /// restarted counts it again rather than refusing it as new.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        renewing: bool,
        /// The concurrency limits the claim's job uses, as HTCondor's
        /// `ConcurrencyLimits` writes them (`db:2,xsw`, read by
        /// [`crate::concurrency_limits::parse`], at most
        /// [`MAX_SHARE_LIMITS_LEN`] bytes), which the keeper holds for
        /// the whole domain. Absent (from older agents, or a job without
        /// limits): none.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        limits: String,
    },
    /// Give a share back: the claim under it has ended.
    Unshare {
        /// The trusted domain it was for.
        domain: String,
        /// The claim.
        claim: ClaimId,
    },
    /// Ask the domain's share keeper how many of this machine's free CPUs
    /// (slots) it may advertise to `domain` under the domain's
    /// `export_slots` term, for `lease_ms` (at least as long as the ad it
    /// sends there lives). Asked again at every publication; the answer
    /// may be fewer than asked, or none.
    Advertise {
        /// The trusted domain the ad goes to.
        domain: String,
        /// The free CPUs the machine would advertise, at most
        /// [`MAX_SHARE_CPUS`].
        cpus: u32,
        /// What the keeper granted it last time (0 the first time): a
        /// keeper that restarted grants at most this while it recovers.
        had: u32,
        /// The lease asked for, at most [`MAX_SHARE_LEASE_MS`].
        lease_ms: u64,
    },
}

/// The longest text of a share's concurrency limits, in bytes.
pub const MAX_SHARE_LIMITS_LEN: usize = 2048;

/// The longest share lease one may ask for.
pub const MAX_SHARE_LEASE_MS: u64 = 300_000;

/// Most CPUs one share may count.
pub const MAX_SHARE_CPUS: u32 = 1 << 16;

/// Most GPUs one share may count.
pub const MAX_SHARE_GPUS: u32 = MAX_SHARE_CPUS;

fn no_gpus(n: &u32) -> bool {
    *n == 0
}

/// An execute agent's answer to a [`Request`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Response {
    /// The claim is granted.
    Granted {
        /// The request answered.
        request: RequestId,
        /// The new claim's id.
        claim: ClaimId,
        /// How long the claim lives without a keepalive, in milliseconds from
        /// when the grant was sent.
        lease_ms: u64,
        /// The slot carved or chosen for the job, e.g. `slot1_3`.
        slot: String,
    },
    /// The claim is refused.
    Rejected {
        /// The request answered.
        request: RequestId,
        /// Why, as a code the submit agent can act on.
        code: RejectCode,
        /// Why, in words for the user (e.g. which clause was false).
        reason: String,
    },
    /// The claim's lease was renewed.
    KeptAlive {
        /// The claim.
        claim: ClaimId,
        /// The renewed lease, in milliseconds from when this was sent.
        lease_ms: u64,
        /// A job handed over under the claim runs, or has ended and its
        /// report waits to be taken. A submit agent that reconnects after
        /// a restart learns from it whether its job is still there.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        running: bool,
    },
    /// The claim was released.
    Released {
        /// The claim.
        claim: ClaimId,
    },
    /// The answer to [`Request::Vacate`]: the job under the claim is made
    /// to leave (or already was).
    Vacating {
        /// The claim.
        claim: ClaimId,
        /// A job ran under the claim and is leaving; false when none did
        /// (it had ended, or none was handed over): nothing was vacated.
        running: bool,
    },
    /// The answer to [`Request::Peek`].
    Peeked {
        /// The claim.
        claim: ClaimId,
        /// Where `bytes` start in the stream.
        offset: u64,
        /// What the stream holds from `offset` on, at most what was asked.
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
        /// The stream's whole length now.
        size: u64,
        /// The job still runs (more may come).
        running: bool,
    },
    /// The answer to [`Request::Share`]: the share is held (or kept) for
    /// `lease_ms` from when this was sent.
    Shared {
        /// The claim.
        claim: ClaimId,
        lease_ms: u64,
    },
    /// The answer to [`Request::Share`] when the terms leave no room (or
    /// the asker may not ask): why, naming the domain and the term.
    NotShared {
        /// The claim.
        claim: ClaimId,
        reason: String,
    },
    /// The answer to [`Request::Advertise`]: how many CPUs the machine may
    /// advertise (0: none; do not advertise to that domain), for
    /// `lease_ms` from when this was sent.
    Advertising { cpus: u32, lease_ms: u64 },
    /// The answer to [`Request::Barrier`].
    AtBarrier {
        /// The claim.
        claim: ClaimId,
        /// The job under the claim has its input and waits for the
        /// release (or was released).
        ready: bool,
        /// Where the job will be reached from the other nodes: this
        /// machine's address (at most [`MAX_HOST_LEN`] bytes).
        host: String,
        /// Why the job cannot start, when it cannot (its input failed):
        /// the co-allocation is given up.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failed: Option<String>,
    },
    /// No such claim here (never granted, expired, or already released).
    UnknownClaim {
        /// The claim asked about.
        claim: ClaimId,
    },
}

fn check_slot(slot: &str) -> Result<(), Error> {
    if slot.is_empty() || slot.len() > MAX_SLOT_NAME_LEN || slot.chars().any(char::is_control) {
        return Err(Error::Invalid {
            field: "slot name",
            reason: format!(
                "{:?} must be 1-{MAX_SLOT_NAME_LEN} bytes without control characters",
                truncated(slot)
            ),
        });
    }
    Ok(())
}

/// A vacate's reason: one line (it goes into the user log as one), at most
/// [`MAX_VACATE_REASON_LEN`] bytes.
fn check_vacate_reason(reason: &str) -> Result<(), Error> {
    wire::check_text("vacate reason", reason, MAX_VACATE_REASON_LEN)?;
    if reason.chars().any(char::is_control) {
        return Err(Error::Invalid {
            field: "vacate reason",
            reason: format!(
                "{:?} holds a control character (a newline, a tab)",
                truncated(reason)
            ),
        });
    }
    Ok(())
}

/// A peek asks for, or answers with, at most [`MAX_PEEK_LEN`] bytes.
fn check_peek_len(len: u32) -> Result<(), Error> {
    if len > MAX_PEEK_LEN {
        return Err(Error::TooLarge {
            what: "peek",
            size: len as usize,
            limit: MAX_PEEK_LEN as usize,
        });
    }
    Ok(())
}

/// A share's domain: a domain name.
fn check_share_domain(domain: &str) -> Result<(), Error> {
    crate::identity::check_domain_name(domain).map_err(|e| Error::Invalid {
        field: "share domain",
        reason: e.to_string(),
    })
}

/// A share's count of CPUs: from `min` to [`MAX_SHARE_CPUS`].
fn check_share_count(field: &'static str, n: u32, min: u32) -> Result<(), Error> {
    if n < min || n > MAX_SHARE_CPUS {
        return Err(Error::Invalid {
            field,
            reason: format!("{n}, not within {min}-{MAX_SHARE_CPUS}"),
        });
    }
    Ok(())
}

/// A share's concurrency limits: at most [`MAX_SHARE_LIMITS_LEN`] bytes
/// that [`crate::concurrency_limits::parse`] reads.
fn check_share_limits(limits: &str) -> Result<(), Error> {
    let invalid = |reason: String| Error::Invalid {
        field: "share limits",
        reason,
    };
    if limits.len() > MAX_SHARE_LIMITS_LEN {
        return Err(invalid(format!(
            "{} bytes, more than {MAX_SHARE_LIMITS_LEN}",
            limits.len()
        )));
    }
    crate::concurrency_limits::parse(limits)
        .map(drop)
        .map_err(|why| invalid(format!("{:?}: {why}", truncated(limits))))
}

/// A share's lease: from 1 ms to [`MAX_SHARE_LEASE_MS`].
fn check_share_lease(lease_ms: u64) -> Result<(), Error> {
    if lease_ms == 0 || lease_ms > MAX_SHARE_LEASE_MS {
        return Err(Error::Invalid {
            field: "share lease_ms",
            reason: format!("{lease_ms}, not within 1-{MAX_SHARE_LEASE_MS}"),
        });
    }
    Ok(())
}

/// A node's host: printable, without spaces, at most [`MAX_HOST_LEN`]
/// bytes (empty when the machine does not know its own).
fn check_host(host: &str) -> Result<(), Error> {
    if host.len() > MAX_HOST_LEN || host.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(Error::Invalid {
            field: "host",
            reason: format!(
                "{:?} must be at most {MAX_HOST_LEN} bytes without spaces or control characters",
                truncated(host)
            ),
        });
    }
    Ok(())
}

/// A barrier's contacts: at most [`MAX_NODES`], numbered uniquely, each
/// host and machine name bounded.
fn check_contacts(contacts: &[Contact]) -> Result<(), Error> {
    if contacts.len() > MAX_NODES {
        return Err(Error::TooLarge {
            what: "contact list",
            size: contacts.len(),
            limit: MAX_NODES,
        });
    }
    let mut seen = std::collections::HashSet::new();
    for c in contacts {
        if !seen.insert(c.node) {
            return Err(Error::Invalid {
                field: "contact node",
                reason: format!("node {} is named twice", c.node),
            });
        }
        check_host(&c.host)?;
        check_slot(&c.machine)?;
    }
    Ok(())
}

/// At most 64 characters of `s`, for error messages.
fn truncated(s: &str) -> &str {
    s.char_indices().nth(64).map_or(s, |(i, _)| &s[..i])
}

impl Message for Request {
    const PROTOCOL: Protocol = Protocol::Claim;
    const NAME: &'static str = "claim request";
    const MAX_LEN: usize = MAX_REQUEST_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Request::Claim {
                job, slot, wait_ms, ..
            } => {
                if *wait_ms > MAX_WAIT_MS {
                    return Err(Error::Invalid {
                        field: "wait_ms",
                        reason: format!("{wait_ms} ms, more than the limit of {MAX_WAIT_MS}"),
                    });
                }
                let len = job.to_bytes().len();
                if len > MAX_SIGNED_AD_LEN {
                    return Err(Error::TooLarge {
                        what: "signed job",
                        size: len,
                        limit: MAX_SIGNED_AD_LEN,
                    });
                }
                slot.as_deref().map_or(Ok(()), check_slot)
            }
            Request::Keepalive { .. } | Request::Release { .. } => Ok(()),
            Request::Vacate { reason, .. } => check_vacate_reason(reason),
            Request::Barrier { release, .. } => release.as_deref().map_or(Ok(()), check_contacts),
            Request::Peek { max, .. } => check_peek_len(*max),
            Request::Share {
                domain,
                cpus,
                gpus,
                lease_ms,
                limits,
                ..
            } => {
                check_share_domain(domain)?;
                check_share_count("share cpus", *cpus, 1)?;
                check_share_count("share gpus", *gpus, 0)?;
                check_share_limits(limits)?;
                check_share_lease(*lease_ms)
            }
            Request::Unshare { domain, .. } => check_share_domain(domain),
            Request::Advertise {
                domain,
                cpus,
                had,
                lease_ms,
            } => {
                check_share_domain(domain)?;
                check_share_count("share cpus", *cpus, 0)?;
                check_share_count("share had", *had, 0)?;
                check_share_lease(*lease_ms)
            }
        }
    }
}

impl Message for Response {
    const PROTOCOL: Protocol = Protocol::Claim;
    const NAME: &'static str = "claim response";
    const MAX_LEN: usize = MAX_RESPONSE_LEN;

    fn check(&self) -> Result<(), Error> {
        match self {
            Response::Granted { slot, .. } => check_slot(slot),
            Response::Rejected { reason, .. } => {
                wire::check_text("reason", reason, wire::MAX_REASON_LEN)
            }
            Response::Peeked { bytes, .. } => {
                check_peek_len(u32::try_from(bytes.len()).unwrap_or(u32::MAX))
            }
            Response::NotShared { reason, .. } => {
                wire::check_text("reason", reason, wire::MAX_REASON_LEN)
            }
            Response::AtBarrier { host, failed, .. } => {
                check_host(host)?;
                failed.as_deref().map_or(Ok(()), |reason| {
                    wire::check_text("reason", reason, wire::MAX_REASON_LEN)
                })
            }
            Response::KeptAlive { .. }
            | Response::Shared { .. }
            | Response::Advertising { .. }
            | Response::Released { .. }
            | Response::Vacating { .. }
            | Response::UnknownClaim { .. } => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claim_ids_print_as_hex_and_parse_back() {
        let id = ClaimId::from_bytes([0xab; 16]);
        assert_eq!(id.to_string(), "ab".repeat(16));
        assert_eq!(id.to_string().parse::<ClaimId>().unwrap(), id);
        let err = "abc".parse::<ClaimId>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid claim id: \"abc\" is not 32 hex digits"
        );
        assert_ne!(ClaimId::random().unwrap(), ClaimId::random().unwrap());
    }

    #[test]
    fn reject_codes_keep_unknown_codes() {
        for code in RejectCode::ALL {
            assert_eq!(RejectCode::from_code(code.code()), *code);
        }
        assert_eq!(RejectCode::from_code(999), RejectCode::Other(999));
        assert_eq!(RejectCode::Other(999).to_string(), "unknown reason 999");
        assert_eq!(RejectCode::StartFalse.to_string(), "start is false");
        // A known code spelled as Other reads back as its name.
        assert_eq!(
            RejectCode::from_code(RejectCode::Other(3).code()),
            RejectCode::Busy
        );
    }

    #[test]
    fn slot_names_are_bounded_and_printable() {
        assert!(check_slot("slot1_3").is_ok());
        assert!(check_slot("").is_err());
        assert!(check_slot(&"s".repeat(MAX_SLOT_NAME_LEN + 1)).is_err());
        let err = check_slot("slot\n1").unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid slot name: \"slot\\n1\""),
            "{err}"
        );
    }

    #[test]
    fn a_long_rejection_reason_is_refused_before_sending() {
        let response = Response::Rejected {
            request: RequestId(1),
            code: RejectCode::Busy,
            reason: "x".repeat(wire::MAX_REASON_LEN + 1),
        };
        let err = response.encode().unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid reason: 1025 bytes, more than the limit of 1024"
        );
    }

    #[test]
    fn a_vacate_reason_is_one_bounded_line() {
        let vacate = |reason: &str| Request::Vacate {
            claim: ClaimId::from_bytes([7; 16]),
            reason: reason.to_owned(),
        };
        let ok = vacate("vacated by user ann@lab via starling vacate");
        assert_eq!(Request::decode(&ok.encode().unwrap()).unwrap(), ok);
        let longest = vacate(&"x".repeat(MAX_VACATE_REASON_LEN));
        assert!(longest.encode().is_ok());

        let err = vacate(&"x".repeat(MAX_VACATE_REASON_LEN + 1))
            .encode()
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid vacate reason: 257 bytes, more than the limit of 256"
        );
        let err = vacate("bye\nJob was held.").encode().unwrap_err();
        assert!(
            err.to_string()
                .starts_with("invalid vacate reason: \"bye\\nJob was held.\" holds"),
            "{err}"
        );
        // Refused on the way in too, not only on the way out.
        let bytes = crate::cbor::encode(&vacate("a\tb"));
        assert!(Request::decode(&bytes).is_err());
        let bytes = crate::cbor::encode(&vacate(&"y".repeat(MAX_VACATE_REASON_LEN + 1)));
        assert!(Request::decode(&bytes).is_err());
    }

    #[test]
    fn vacating_answers_round_trip() {
        for running in [true, false] {
            let answer = Response::Vacating {
                claim: ClaimId::from_bytes([3; 16]),
                running,
            };
            assert_eq!(Response::decode(&answer.encode().unwrap()).unwrap(), answer);
        }
    }

    #[test]
    fn a_peek_is_bounded_and_its_answer_fits_a_response() {
        let claim = ClaimId::from_bytes([7; 16]);
        let peek = |max| Request::Peek {
            claim,
            stream: OutputStream::Stderr,
            offset: None,
            max,
        };
        let ok = peek(MAX_PEEK_LEN);
        assert_eq!(Request::decode(&ok.encode().unwrap()).unwrap(), ok);
        assert!(peek(MAX_PEEK_LEN + 1).encode().is_err());
        let bytes = crate::cbor::encode(&peek(u32::MAX));
        assert!(
            Request::decode(&bytes).is_err(),
            "a peer's oversized peek is refused"
        );
        let full = Response::Peeked {
            claim,
            offset: u64::MAX,
            bytes: vec![0xff; MAX_PEEK_LEN as usize],
            size: u64::MAX,
            running: true,
        };
        assert_eq!(Response::decode(&full.encode().unwrap()).unwrap(), full);
        let over = Response::Peeked {
            claim,
            offset: 0,
            bytes: vec![b'x'; MAX_PEEK_LEN as usize + 1],
            size: 0,
            running: false,
        };
        assert!(over.encode().is_err());
    }

    #[test]
    fn a_barrier_names_each_node_once_within_bounds() {
        let claim = ClaimId::from_bytes([3; 16]);
        let contact = |node: u32| Contact {
            node,
            host: "h".repeat(MAX_HOST_LEN),
            machine: "m".repeat(MAX_SLOT_NAME_LEN),
        };
        let full = Request::Barrier {
            claim,
            release: Some((0..MAX_NODES as u32).map(contact).collect()),
        };
        assert_eq!(Request::decode(&full.encode().unwrap()).unwrap(), full);
        let ask = Request::Barrier {
            claim,
            release: None,
        };
        assert_eq!(Request::decode(&ask.encode().unwrap()).unwrap(), ask);
        let too_many = Request::Barrier {
            claim,
            release: Some((0..=MAX_NODES as u32).map(contact).collect()),
        };
        assert!(Request::decode(&crate::cbor::encode(&too_many)).is_err());
        let twice = Request::Barrier {
            claim,
            release: Some(vec![contact(1), contact(1)]),
        };
        let e = twice.encode().unwrap_err().to_string();
        assert!(e.contains("node 1 is named twice"), "{e}");
        let spaced = Request::Barrier {
            claim,
            release: Some(vec![Contact {
                node: 0,
                host: "a b".into(),
                machine: "m".into(),
            }]),
        };
        assert!(Request::decode(&crate::cbor::encode(&spaced)).is_err());
        let answer = Response::AtBarrier {
            claim,
            ready: true,
            host: "10.0.0.2".into(),
            failed: None,
        };
        assert_eq!(Response::decode(&answer.encode().unwrap()).unwrap(), answer);
        let long = Response::AtBarrier {
            claim,
            ready: false,
            host: "h".repeat(MAX_HOST_LEN + 1),
            failed: None,
        };
        assert!(Response::decode(&crate::cbor::encode(&long)).is_err());
    }
}
