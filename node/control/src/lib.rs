//! The local control API: how the `starling` command talks to a running
//! agent.
//!
//! The agent listens on a unix socket, `agent.sock` in its data directory.
//! The kernel tells the agent who is on the other end of each connection
//! (the peer's uid, gid and pid: a [`Caller`]); nothing in a request names
//! its sender. An agent running as root makes the socket usable by every
//! local user (mode 0666, its data directory 0711) and decides per request
//! what each may do (`starling_policies::control_access`); any other agent
//! keeps it to its own user (0600). Next to it the agent keeps `agent.pid`
//! while it runs.
//!
//! The protocol is JSON lines: the client writes one [`Request`] as a JSON
//! object on one line, the agent answers with one [`Response`] line, and
//! the connection may carry further requests. A request line is at most
//! [`MAX_REQUEST_LEN`] bytes; a longer one is answered with an error and the
//! connection closed.
//!
//! This module holds the messages and the [`Error`] both sides report;
//! [`server`] serves them for a [`Handler`] (the agent), [`client`] is what
//! the CLI uses, and [`pidfile`] keeps `agent.pid`.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

pub mod client;
pub mod flights;
pub mod pidfile;
pub mod server;

pub use client::Client;
pub use pidfile::{read_pid, PidFile};
pub use server::{bind, serve, Handler, Listener};

/// The socket's file name in the agent's data directory.
pub const SOCKET_FILE: &str = "agent.sock";

/// The pid file's name in the agent's data directory.
pub const PID_FILE: &str = "agent.pid";

/// Longest request line accepted (2 MiB: a submit file of up to 1 MiB
/// travels in one).
pub const MAX_REQUEST_LEN: usize = 2 << 20;

/// Longest response line a client reads (64 MiB: a view of many thousand
/// ads).
pub const MAX_RESPONSE_LEN: usize = 64 << 20;

/// What went wrong finding, serving or talking to an agent's control
/// socket. Each message names the data directory (or file) concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No socket, or nothing listening on it.
    #[error(
        "no running agent at {dir} (start one with: starling agent --data-dir {dir})",
        dir = data_dir.display()
    )]
    NoAgent { data_dir: PathBuf },
    /// The socket exists and answers, or the pid file names a live agent.
    #[error("another agent is running in {}{}", data_dir.display(), pid.map(|p| format!(" (pid {p})")).unwrap_or_default())]
    AgentRunning { data_dir: PathBuf, pid: Option<u32> },
    /// Something other than a socket is where the socket belongs; it is
    /// not ours to remove.
    #[error("{} exists and is not a socket; remove it if no agent uses it", path.display())]
    NotASocket { path: PathBuf },
    /// The agent accepted no connection in time (it is wedged or swamped).
    #[error("the agent at {} did not accept a connection within {} s", data_dir.display(), after.as_secs_f64())]
    ConnectTimeout { data_dir: PathBuf, after: Duration },
    /// The agent did not answer in time.
    #[error("the agent at {} did not answer within {} s", data_dir.display(), after.as_secs_f64())]
    Timeout { data_dir: PathBuf, after: Duration },
    /// The agent closed the connection before a whole answer arrived.
    #[error("the agent at {} closed the connection without answering", data_dir.display())]
    Closed { data_dir: PathBuf },
    /// The answer line is longer than [`MAX_RESPONSE_LEN`].
    #[error("the agent at {} answered with more than {limit} bytes", data_dir.display())]
    ResponseTooLong { data_dir: PathBuf, limit: usize },
    /// The answer is not a [`Response`] (a different version of starling?).
    #[error("the agent at {} sent an answer this starling cannot read", data_dir.display())]
    BadResponse {
        data_dir: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// An operating-system error; `what` says what we were doing.
    #[error("{what} {}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The closest `io::ErrorKind`, for callers of the `io::Result` API.
    fn kind(&self) -> std::io::ErrorKind {
        use std::io::ErrorKind;
        match self {
            Error::NoAgent { .. } => ErrorKind::ConnectionRefused,
            Error::AgentRunning { .. } => ErrorKind::AddrInUse,
            Error::NotASocket { .. } => ErrorKind::AlreadyExists,
            Error::ConnectTimeout { .. } | Error::Timeout { .. } => ErrorKind::TimedOut,
            Error::Closed { .. } => ErrorKind::UnexpectedEof,
            Error::ResponseTooLong { .. } | Error::BadResponse { .. } => ErrorKind::InvalidData,
            Error::Io { source, .. } => source.kind(),
        }
    }
}

impl From<Error> for std::io::Error {
    /// Wraps the error whole: its message is the `io::Error`'s message, and
    /// `get_ref()` / `into_inner()` give it back.
    fn from(e: Error) -> std::io::Error {
        std::io::Error::new(e.kind(), e)
    }
}

/// The control socket of the agent whose data directory is `data_dir`.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_FILE)
}

/// The pid file of the agent whose data directory is `data_dir`.
pub fn pid_path(data_dir: &Path) -> PathBuf {
    data_dir.join(PID_FILE)
}

/// Who is on the other end of a control connection, as the kernel says
/// (`SO_PEERCRED`), with the uid's name from the user database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    pub uid: u32,
    pub gid: u32,
    /// The connecting process, where the kernel knows it.
    pub pid: Option<i32>,
    /// The uid's name in `/etc/passwd`; `None` when it has none.
    pub name: Option<String>,
}

/// What the CLI asks of the agent.
///
/// Decoded through a private mirror enum, so that a field a request does not
/// have is an error for every op, not only for those with fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    tag = "op",
    rename_all = "snake_case",
    deny_unknown_fields,
    from = "WireRequest"
)]
#[non_exhaustive]
pub enum Request {
    /// Who the agent is and how it is connected.
    Info,
    /// The ads in the agent's view of the pool.
    Ads {
        /// Which ads: `"machine"` (the default), `"submitter"`, or `"any"`.
        #[serde(default = "machine")]
        kind: String,
        /// Only the ads for which this ClassAd expression is true.
        #[serde(default)]
        constraint: Option<String>,
    },
    /// The peers the agent is connected to.
    Peers,
    /// The network links the agent owns and their reservations
    /// (`starling net`).
    Links,
    /// Stop the agent cleanly (withdraw its ad, flush its store, exit).
    Shutdown,
    /// Queue the jobs of a submit file (`starling submit`), owned by the
    /// user who asks (the socket says who; a request naming an `owner` is
    /// refused as an unknown field).
    Submit {
        /// The file's name, for messages.
        file: String,
        text: String,
        /// The submitter's working directory.
        cwd: PathBuf,
        /// The submitter's environment (`getenv`, `$ENV(...)`).
        #[serde(default)]
        env: std::collections::BTreeMap<String, String>,
        /// What each program the file names printed (`include command :`,
        /// `queue ... from PROGRAM |`), run by `starling submit
        /// -allow-commands` as the submitter: the agent runs none itself
        /// and refuses a program not given here.
        #[serde(default)]
        commands: std::collections::BTreeMap<String, String>,
    },
    /// Jobs in the queue, or in the history (`starling q`, `history`).
    Jobs {
        /// Job ids, cluster ids or owners (none: all).
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        constraint: Option<String>,
        #[serde(default)]
        history: bool,
        #[serde(default)]
        limit: Option<usize>,
        /// The attributes to send of each ad, as condor_q asks its schedd
        /// for only those it prints; the agent adds the ad's own
        /// attributes they refer to. `None` (what older clients send):
        /// whole ads.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        projection: Option<Vec<String>>,
    },
    /// Hold, release, remove, vacate or move jobs.
    Act {
        /// `hold`, `release`, `remove`, `vacate` or `migrate`.
        action: String,
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        constraint: Option<String>,
        #[serde(default)]
        reason: Option<String>,
        /// `migrate`: the machine to move to (its slot or machine name);
        /// `None`: the best one free.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        to: Option<String>,
    },
    /// Set an attribute of jobs (`starling qedit`).
    Edit {
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        constraint: Option<String>,
        attribute: String,
        value: String,
    },
    /// Why a job is idle (`starling why`).
    Why { job: String },
    /// Users' priorities (`starling userprio`); with `set_factor`, first
    /// sets a user's priority factor for the domain (`-setfactor`).
    UserPrio {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        set_factor: Option<SetFactor>,
    },
    /// Drain this machine (`starling drain`): accept no new claims and make
    /// the running jobs leave as `how` says; with `cancel`, stop draining.
    Drain {
        #[serde(default)]
        how: DrainHow,
        /// Why, for `status -l` and the jobs' eviction reason (at most
        /// [`MAX_DRAIN_REASON_LEN`] bytes).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
        /// Accept claims again once the last job has gone.
        #[serde(default)]
        resume_on_completion: bool,
        #[serde(default)]
        cancel: bool,
    },
    /// Jobs' latest checkpoints (`starling ckpt ls`): job ids or cluster
    /// ids (none: every job with one), at most [`MAX_CHECKPOINT_JOBS`].
    Checkpoints {
        #[serde(default)]
        jobs: Vec<String>,
        /// List each checkpoint's files too (`-l`, `-json`).
        #[serde(default)]
        files: bool,
    },
    /// Fetch a job's latest checkpoint from its store peers, verify it,
    /// and put its files in `dir` with the asker's rights (`starling
    /// ckpt get`): for the job's owner or an administrator.
    CheckpointGet {
        job: String,
        /// Absolute; made if missing.
        dir: PathBuf,
        /// Replace files of the same names already in `dir`.
        #[serde(default)]
        force: bool,
    },
    /// Part of a running job's standard output (or error) as it is now,
    /// read from its machine (`starling tail`): for the job's owner or an
    /// administrator.
    Tail {
        job: String,
        #[serde(default)]
        stderr: bool,
        /// Where to read from; `None`: the last `max` bytes.
        #[serde(default)]
        offset: Option<u64>,
        /// At most this many bytes, at most
        /// [`starling_protocol::claim::MAX_PEEK_LEN`].
        max: u32,
    },
}

/// Most jobs one [`Request::Checkpoints`] names or answers.
pub const MAX_CHECKPOINT_JOBS: usize = 1000;

/// The longest directory path a [`Request::CheckpointGet`] takes, in bytes.
pub const MAX_DIR_LEN: usize = 4096;

/// The longest drain reason accepted, in bytes.
pub const MAX_DRAIN_REASON_LEN: usize = 256;

/// How a drain treats the running jobs, as `condor_drain`'s options say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DrainHow {
    /// Jobs run out their `MaxJobRetirementTime`, then are vacated.
    #[default]
    Graceful,
    /// Jobs are vacated now.
    Quick,
    /// Jobs are killed now.
    Fast,
}

impl From<DrainHow> for starling_policies::owner_policy::DrainHow {
    fn from(how: DrainHow) -> Self {
        match how {
            DrainHow::Graceful => Self::Graceful,
            DrainHow::Quick => Self::Quick,
            DrainHow::Fast => Self::Fast,
        }
    }
}

/// Whether a machine drains, after a [`Request::Drain`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DrainStatus {
    /// A drain is in force.
    pub draining: bool,
    /// `graceful`, `quick` or `fast`, while draining.
    #[serde(default)]
    pub how: Option<String>,
    #[serde(default)]
    pub reason: Option<String>,
    /// Jobs still running on the machine.
    pub jobs: usize,
}

/// A user's new priority factor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetFactor {
    pub user: String,
    pub factor: f64,
    /// Set it for a short name no user has yet (`-force`): our own
    /// domain's user of that name, ahead of their first job. Sent only
    /// when set, so that older agents still read the request.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub force: bool,
}

fn machine() -> String {
    "machine".to_owned()
}

/// [`Request`] as decoded. serde ignores unknown fields beside the tag of a
/// unit variant, even with `deny_unknown_fields` (`{"op":"info","x":1}`
/// would pass), but not in a struct variant; so here every op is one, and
/// the wire format is the same.
#[derive(Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
enum WireRequest {
    Info {},
    Ads {
        #[serde(default = "machine")]
        kind: String,
        #[serde(default)]
        constraint: Option<String>,
    },
    Peers {},
    Links {},
    Shutdown {},
    Submit {
        file: String,
        text: String,
        cwd: PathBuf,
        #[serde(default)]
        env: std::collections::BTreeMap<String, String>,
        #[serde(default)]
        commands: std::collections::BTreeMap<String, String>,
    },
    Jobs {
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        constraint: Option<String>,
        #[serde(default)]
        history: bool,
        #[serde(default)]
        limit: Option<usize>,
        #[serde(default)]
        projection: Option<Vec<String>>,
    },
    Act {
        action: String,
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        constraint: Option<String>,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        to: Option<String>,
    },
    Edit {
        #[serde(default)]
        targets: Vec<String>,
        #[serde(default)]
        constraint: Option<String>,
        attribute: String,
        value: String,
    },
    Why {
        job: String,
    },
    UserPrio {
        #[serde(default)]
        set_factor: Option<SetFactor>,
    },
    Drain {
        #[serde(default)]
        how: DrainHow,
        #[serde(default)]
        reason: Option<String>,
        #[serde(default)]
        resume_on_completion: bool,
        #[serde(default)]
        cancel: bool,
    },
    Checkpoints {
        #[serde(default)]
        jobs: Vec<String>,
        #[serde(default)]
        files: bool,
    },
    CheckpointGet {
        job: String,
        dir: PathBuf,
        #[serde(default)]
        force: bool,
    },
    Tail {
        job: String,
        #[serde(default)]
        stderr: bool,
        #[serde(default)]
        offset: Option<u64>,
        max: u32,
    },
}

impl From<WireRequest> for Request {
    fn from(wire: WireRequest) -> Request {
        match wire {
            WireRequest::Info {} => Request::Info,
            WireRequest::Ads { kind, constraint } => Request::Ads { kind, constraint },
            WireRequest::Peers {} => Request::Peers,
            WireRequest::Links {} => Request::Links,
            WireRequest::Shutdown {} => Request::Shutdown,
            WireRequest::Submit {
                file,
                text,
                cwd,
                env,
                commands,
            } => Request::Submit {
                file,
                text,
                cwd,
                env,
                commands,
            },
            WireRequest::Jobs {
                targets,
                constraint,
                history,
                limit,
                projection,
            } => Request::Jobs {
                targets,
                constraint,
                history,
                limit,
                projection,
            },
            WireRequest::Act {
                action,
                targets,
                constraint,
                reason,
                to,
            } => Request::Act {
                action,
                targets,
                constraint,
                reason,
                to,
            },
            WireRequest::Edit {
                targets,
                constraint,
                attribute,
                value,
            } => Request::Edit {
                targets,
                constraint,
                attribute,
                value,
            },
            WireRequest::Why { job } => Request::Why { job },
            WireRequest::UserPrio { set_factor } => Request::UserPrio { set_factor },
            WireRequest::Drain {
                how,
                reason,
                resume_on_completion,
                cancel,
            } => Request::Drain {
                how,
                reason,
                resume_on_completion,
                cancel,
            },
            WireRequest::Checkpoints { jobs, files } => Request::Checkpoints { jobs, files },
            WireRequest::CheckpointGet { job, dir, force } => {
                Request::CheckpointGet { job, dir, force }
            }
            WireRequest::Tail {
                job,
                stderr,
                offset,
                max,
            } => Request::Tail {
                job,
                stderr,
                offset,
                max,
            },
        }
    }
}

/// The agent's answer to one [`Request`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Response {
    Info(Info),
    /// Each ad in new ClassAd syntax (`[ Name = "m1"; ... ]`), as signed by
    /// the agent it describes.
    Ads {
        ads: Vec<String>,
    },
    Peers {
        peers: Vec<Peer>,
    },
    /// The request was carried out.
    Done,
    /// A submit was queued as `cluster`, with `procs` jobs.
    Submitted {
        cluster: u64,
        procs: usize,
    },
    /// Job ads, in new ClassAd syntax.
    Jobs {
        jobs: Vec<String>,
    },
    /// Which jobs an action or edit changed (ids), and which it skipped and
    /// why.
    Acted {
        changed: Vec<String>,
        skipped: Vec<(String, String)>,
    },
    /// `why`'s report, for a person.
    Why {
        report: String,
    },
    /// The domain's users by effective priority, best first.
    UserPrio {
        users: Vec<UserPrio>,
        /// HTCondor's `PRIORITY_HALFLIFE` the agent uses, in seconds.
        halflife_secs: f64,
    },
    /// The machine's drain after a [`Request::Drain`].
    Drain(DrainStatus),
    /// Each job asked for, with its latest checkpoint; `missing` names the
    /// jobs the agent does not know, with why.
    Checkpoints {
        jobs: Vec<JobCheckpoints>,
        #[serde(default)]
        missing: Vec<(String, String)>,
    },
    /// What a [`Request::CheckpointGet`] wrote.
    CheckpointGot(CheckpointGot),
    /// Part of a job's output ([`Request::Tail`]): where `bytes` start, the
    /// stream's length, and whether the job still runs.
    Tail {
        offset: u64,
        bytes: Vec<u8>,
        size: u64,
        running: bool,
    },
    /// The links the agent owns, for `starling net`.
    Links {
        links: Vec<LinkSummary>,
        /// The bulk transfers in flight on this agent.
        #[serde(default)]
        transfers: Vec<crate::flights::FlightSummary>,
    },
    /// The request was refused or failed; `message` says why, for a person.
    Error {
        message: String,
    },
}

/// One link an agent owns, for `starling net`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkSummary {
    /// `host link`, or `uplink of DOMAIN`.
    pub link: String,
    /// Its capacity and what reservations may use of it, in Mbit/s.
    pub capacity_mbps: f64,
    pub reservable_mbps: f64,
    /// Reserved now, in Mbit/s.
    pub reserved_now_mbps: f64,
    pub reservations: Vec<LinkReservation>,
    /// The users of the link's fair share, most used first.
    #[serde(default)]
    pub users: Vec<LinkUser>,
}

/// A user of a link's fair share, for `starling net`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkUser {
    pub user: String,
    /// Recent use (decaying over the usage horizon), in MiB.
    pub used_mib: f64,
    /// It waits for the link now.
    pub waiting: bool,
}

/// One reservation of a link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkReservation {
    pub id: String,
    /// The agent that holds it.
    pub holder: String,
    /// Unix seconds.
    pub start: f64,
    pub end: f64,
    pub rate_mbps: f64,
    /// Committed (else only held).
    pub committed: bool,
}

/// A job and its latest checkpoint, for `starling ckpt ls`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobCheckpoints {
    /// `cluster.proc`.
    pub job: String,
    /// Its `Owner`, when the agent still has its ad.
    #[serde(default)]
    pub owner: Option<String>,
    /// `Idle`, `Running`, `Completed`…; `None` when its ad is gone from
    /// both queue and history.
    #[serde(default)]
    pub status: Option<String>,
    /// Whether it is still in the queue (else in the history).
    pub in_queue: bool,
    /// Checkpoints it took (`NumCkpts`).
    pub num_ckpts: u64,
    /// Its latest checkpoint was kept by no store peer, only on the machine
    /// that ran it (`StarlingCkptLocalOnly`).
    pub local_only: bool,
    /// The latest checkpoint store peers keep; `None`: none.
    #[serde(default)]
    pub latest: Option<Checkpoint>,
    /// Why the record of its checkpoint cannot be read, if it cannot.
    #[serde(default)]
    pub problem: Option<String>,
}

/// One checkpoint, as its signed manifest and the submit agent's record
/// say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// The job's key on store peers (`<submit agent>/<cluster>.<proc>`).
    pub key: String,
    pub sequence: u64,
    /// When it was taken, in unix seconds.
    pub taken_secs: i64,
    /// The execute agent that took and signed it.
    pub taken_by: String,
    /// Wall time of work it saved beyond the one before, in seconds.
    pub run_secs: f64,
    /// Bytes of all its files.
    pub bytes: u64,
    pub file_count: usize,
    /// Chunks of its files, and how many distinct ones the store peers keep.
    pub chunks: usize,
    pub distinct_chunks: usize,
    /// Its files, when asked for (`files`).
    #[serde(default)]
    pub files: Vec<CheckpointFile>,
    pub replicas: Vec<CheckpointReplica>,
}

/// A file of a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointFile {
    /// Relative to the job's sandbox.
    pub name: String,
    pub size: u64,
    /// Permission bits.
    pub mode: u32,
}

/// A store peer keeping a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckpointReplica {
    /// Its agent id.
    pub peer: String,
    /// Its host (`StarlingHost`).
    pub host: String,
    /// Whether its machine ad is in the view now.
    pub live: bool,
    /// Chunks it gave, for a [`CheckpointGot`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chunks: Option<u64>,
}

/// What `starling ckpt get` wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckpointGot {
    pub job: String,
    pub sequence: u64,
    /// Where the files went.
    pub dir: PathBuf,
    pub files: Vec<CheckpointFile>,
    pub bytes: u64,
    /// The replicas asked, nearest first, with the chunks each gave.
    pub replicas: Vec<CheckpointReplica>,
    /// How long fetching and placing took, in milliseconds.
    pub elapsed_ms: u64,
}

/// Who an agent is and how it is connected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Info {
    /// Its agent id (`12D3KooW…`).
    pub agent_id: String,
    /// The domain it advertises in.
    pub domain: String,
    /// `starling --version` of the running agent.
    pub version: String,
    /// The agent's process id.
    pub pid: u32,
    /// Its data directory.
    pub data_dir: PathBuf,
    /// The addresses it listens on, each ending in `/p2p/<agent id>`.
    pub listen: Vec<String>,
    /// How many peers it is connected to.
    pub peers: usize,
    /// How many ads its view holds, by `MyType`.
    pub ads: std::collections::BTreeMap<String, usize>,
    /// When it started, in unix milliseconds.
    pub started_ms: u64,
    /// Bytes received on all its connections since it started.
    #[serde(default)]
    pub bytes_received: u64,
    /// Bytes sent on all its connections since it started.
    #[serde(default)]
    pub bytes_sent: u64,
    /// Whether peers can dial it, as AutoNAT last found: `unknown`,
    /// `private` (reachable only through relays) or `public at <address>`.
    #[serde(default)]
    pub reachability: String,
}

/// One user's priority, as `condor_userprio` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UserPrio {
    /// `name@domain`.
    pub user: String,
    /// Real priority × factor; smaller is better.
    pub effective: f64,
    pub real: f64,
    pub factor: f64,
    /// Slot weight (cpus) its jobs hold now, across the domain.
    pub in_use: f64,
    /// Slot-weight seconds used, across the domain.
    pub accumulated: f64,
    /// Unix seconds of its first and last recorded usage.
    pub first_usage: i64,
    pub last_usage: i64,
}

/// One connected peer, as the agent sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Peer {
    /// Its agent id.
    pub agent_id: String,
    /// The addresses it is connected on.
    pub addresses: Vec<String>,
    /// Last ping round-trip time, in milliseconds.
    pub rtt_ms: Option<f64>,
    /// Its gossipsub peer score (negative: it misbehaved).
    pub score: Option<f64>,
    /// How many of its gossip messages this agent rejected.
    pub rejected: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(json: &str) -> Result<Request, String> {
        serde_json::from_str(json).map_err(|e| e.to_string())
    }

    #[test]
    fn requests_on_the_wire() {
        // Golden: a change of encoding is a visible diff here.
        let cases = [
            (Request::Info, r#"{"op":"info"}"#),
            (Request::Peers, r#"{"op":"peers"}"#),
            (Request::Shutdown, r#"{"op":"shutdown"}"#),
            (
                Request::Ads {
                    kind: "machine".into(),
                    constraint: Some("Cpus > 1".into()),
                },
                r#"{"op":"ads","kind":"machine","constraint":"Cpus > 1"}"#,
            ),
        ];
        for (request, json) in cases {
            assert_eq!(serde_json::to_string(&request).unwrap(), json);
            assert_eq!(serde_json::from_str::<Request>(json).unwrap(), request);
        }
    }

    #[test]
    fn job_requests_on_the_wire() {
        let cases = [
            (
                Request::Why { job: "1.0".into() },
                r#"{"op":"why","job":"1.0"}"#,
            ),
            (
                Request::Act {
                    action: "hold".into(),
                    targets: vec!["12".into()],
                    constraint: None,
                    reason: Some("wait".into()),
                    to: None,
                },
                r#"{"op":"act","action":"hold","targets":["12"],"constraint":null,"reason":"wait"}"#,
            ),
        ];
        for (request, json) in cases {
            assert_eq!(serde_json::to_string(&request).unwrap(), json);
            assert_eq!(serde_json::from_str::<Request>(json).unwrap(), request);
        }
        // Defaults, and unknown fields refused by name.
        assert_eq!(
            request(r#"{"op":"jobs"}"#),
            Ok(Request::Jobs {
                targets: vec![],
                constraint: None,
                history: false,
                limit: None,
                projection: None,
            })
        );
        assert_eq!(
            request(r#"{"op":"jobs","projection":["JobStatus"]}"#),
            Ok(Request::Jobs {
                targets: vec![],
                constraint: None,
                history: false,
                limit: None,
                projection: Some(vec!["JobStatus".into()]),
            })
        );
        let e = request(r#"{"op":"submit","file":"f","text":"","cwd":"/","x":1}"#).unwrap_err();
        assert!(e.contains("`x`"), "{e}");
        // Nobody says who they are: the socket does.
        let e = request(r#"{"op":"submit","file":"f","text":"","cwd":"/","owner":"root"}"#)
            .unwrap_err();
        assert!(e.contains("`owner`"), "{e}");
        let e = request(r#"{"op":"why"}"#).unwrap_err();
        assert!(e.contains("job"), "{e}");
    }

    #[test]
    fn checkpoint_requests_on_the_wire() {
        let cases = [
            (
                Request::Checkpoints {
                    jobs: vec!["1.0".into()],
                    files: true,
                },
                r#"{"op":"checkpoints","jobs":["1.0"],"files":true}"#,
            ),
            (
                Request::CheckpointGet {
                    job: "1.0".into(),
                    dir: "/tmp/out".into(),
                    force: false,
                },
                r#"{"op":"checkpoint_get","job":"1.0","dir":"/tmp/out","force":false}"#,
            ),
        ];
        for (request, json) in cases {
            assert_eq!(serde_json::to_string(&request).unwrap(), json);
            assert_eq!(serde_json::from_str::<Request>(json).unwrap(), request);
        }
        assert_eq!(
            request(r#"{"op":"checkpoints"}"#),
            Ok(Request::Checkpoints {
                jobs: vec![],
                files: false
            })
        );
        let e = request(r#"{"op":"checkpoint_get","job":"1.0"}"#).unwrap_err();
        assert!(e.contains("dir"), "{e}");
        let e = request(r#"{"op":"checkpoint_get","job":"1.0","dir":"/d","uid":0}"#).unwrap_err();
        assert!(e.contains("`uid`"), "{e}");
    }

    #[test]
    fn an_ads_request_defaults_to_machine_ads_unconstrained() {
        assert_eq!(
            request(r#"{"op":"ads"}"#),
            Ok(Request::Ads {
                kind: "machine".into(),
                constraint: None
            })
        );
    }

    #[test]
    fn unknown_ops_and_fields_are_errors_naming_them() {
        let e = request(r#"{"op":"frobnicate"}"#).unwrap_err();
        assert!(e.contains("frobnicate"), "{e}");
        let e = request(r#"{"op":"ads","colour":"red"}"#).unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e = request(r#"{"op":"info","colour":"red"}"#).unwrap_err();
        assert!(e.contains("colour"), "{e}");
        let e = request(r#"{"kind":"machine"}"#).unwrap_err();
        assert!(e.contains("op"), "{e}");
    }

    #[test]
    fn responses_on_the_wire() {
        let cases = [
            (Response::Done, r#"{"result":"done"}"#),
            (
                Response::Error {
                    message: "no".into(),
                },
                r#"{"result":"error","message":"no"}"#,
            ),
            (
                Response::Ads {
                    ads: vec!["[ Name = \"m1\" ]".into()],
                },
                r#"{"result":"ads","ads":["[ Name = \"m1\" ]"]}"#,
            ),
        ];
        for (response, json) in cases {
            assert_eq!(serde_json::to_string(&response).unwrap(), json);
            assert_eq!(serde_json::from_str::<Response>(json).unwrap(), response);
        }
    }

    #[test]
    fn no_agent_says_where_and_how_to_start_one() {
        let e = Error::NoAgent {
            data_dir: "/d".into(),
        };
        assert_eq!(
            e.to_string(),
            "no running agent at /d (start one with: starling agent --data-dir /d)"
        );
        let io: std::io::Error = e.into();
        assert_eq!(io.kind(), std::io::ErrorKind::ConnectionRefused);
        assert!(matches!(
            io.get_ref().and_then(|e| e.downcast_ref::<Error>()),
            Some(Error::NoAgent { .. })
        ));
    }
}
