//! The local control API: how the `starling` command talks to a running
//! agent.
//!
//! The agent listens on a unix socket, `agent.sock` in its data directory,
//! created readable and writable by its owner only (the data directory is
//! 0700 as well): whoever can open the socket may drive the agent, so the
//! file permissions are the access control. Next to it the agent keeps
//! `agent.pid` while it runs.
//!
//! The protocol is JSON lines: the client writes one [`Request`] as a JSON
//! object on one line, the agent answers with one [`Response`] line, and
//! the connection may carry further requests. A request line is at most
//! [`MAX_REQUEST_LEN`] bytes; a longer one is answered with an error and the
//! connection closed.
//!
//! This module holds the messages; [`server`] serves them for a
//! [`Handler`] (the agent) and [`client`] is what the CLI uses.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

pub mod client;
pub mod server;

pub use client::Client;
pub use server::{serve, Handler};

/// The socket's file name in the agent's data directory.
pub const SOCKET_FILE: &str = "agent.sock";

/// The pid file's name in the agent's data directory.
pub const PID_FILE: &str = "agent.pid";

/// Longest request line accepted (64 KiB).
pub const MAX_REQUEST_LEN: usize = 64 << 10;

/// Longest response line a client reads (64 MiB: a view of many thousand
/// ads).
pub const MAX_RESPONSE_LEN: usize = 64 << 20;

/// The control socket of the agent whose data directory is `data_dir`.
pub fn socket_path(data_dir: &Path) -> PathBuf {
    data_dir.join(SOCKET_FILE)
}

/// The pid file of the agent whose data directory is `data_dir`.
pub fn pid_path(data_dir: &Path) -> PathBuf {
    data_dir.join(PID_FILE)
}

/// What the CLI asks of the agent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case", deny_unknown_fields)]
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
    /// Stop the agent cleanly (withdraw its ad, flush its store, exit).
    Shutdown,
}

fn machine() -> String {
    "machine".to_owned()
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
    /// The request was refused or failed; `message` says why, for a person.
    Error {
        message: String,
    },
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
