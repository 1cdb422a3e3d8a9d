//! The agent: the actors and the network loop that make one Starling peer.
//!
//! # Supervision tree
//!
//! ```text
//! Supervisor (ractor)
//! ├── View        owns the view of the pool; judges every gossiped ad
//! ├── Advertiser  builds, signs and publishes this machine's ad
//! ├── Negotiator  matches this agent's idle jobs; a shadow task per claim
//! ├── Startd      grants claims on this machine; a starter task per job
//! └── Control     serves the local control API (unix socket), when asked
//!
//! network loop (tokio task, not an actor: one task owns the Swarm)
//! job router   (tokio task: the job protocols' requests and file offers)
//! disk watch   (tokio task of the supervisor: is the data directory full?)
//! policy watch (tokio task of the supervisor: did the domain policy change?)
//! ```
//!
//! The supervisor starts the view, then the network loop (which sends the
//! view what arrives), then the advertiser, the negotiator, the startd and
//! the control API. A child that fails is restarted alone, at most
//! [`MAX_RESTARTS`] times in [`RESTART_WINDOW`]; beyond that the supervisor
//! stops and the agent exits with an error, for systemd (or the testnet) to
//! restart it whole. A restarted view starts empty: the network loop is
//! pointed at it and pulls the view from its peers again, and the advertiser
//! is restarted so that its own ad is back in it. The network loop is not
//! restarted: if it ends, the agent stops.
//!
//! # Layout
//!
//! By side, as the agent plays each:
//! - [`submit`]: the submit side (HTCondor's schedd): the negotiator, its
//!   shadows, the job's files and checkpoints, local and parallel jobs;
//! - [`execute`]: the execute side (HTCondor's startd): the startd and its
//!   starters, checkpoints taken and restored, migration proposals; the job's
//!   processes themselves are `starling_process`'s;
//! - [`store`]: other agents' checkpoint chunks, and putting checkpoints on
//!   store peers;
//! - [`pool`]: the view, the advertiser, trust, usage and domain shares.
//!
//! Beside them what every side uses: the [`network`] loop (the one owner of
//! the libp2p swarm), [`links`] (bandwidth as a negotiated resource),
//! [`transfers`] (the job router, file offers and pulls), the [`control`]
//! actor and its answers to job and checkpoint requests, the [`supervisor`]
//! and the [`agent`] handle, the [`config`]uration, the [`machine`] probe
//! and the [`ticker`] that wakes an actor only when it has work.
//! No module of the agent decides policy: each gathers inputs, calls a
//! `starling_policies` function and carries out its answer.
//!
//!
//! # Stopping
//!
//! [`Agent::shutdown`] withdraws the ad (publishes an already-expired copy
//! that every view takes as a removal), lets the network loop send it for
//! a moment, stops the actors and flushes the store. `starling agent` calls
//! it on SIGINT, SIGTERM or a control `shutdown` request.

pub mod ad;
pub mod agent;
pub mod ask;
pub mod config;
pub mod control;
pub mod execute;
pub mod links;
pub mod machine;
pub mod network;
pub mod pool;
pub mod store;
pub mod submit;
pub mod supervisor;
pub mod ticker;
pub mod transfers;

pub use agent::{Agent, Error, Setup, StaticInfo, Stopped, WITHDRAW_GRACE};
pub use ask::QUERY_TIMEOUT;
pub use execute::{startd, starter};
pub use pool::{advertiser, trust, usage, view, view_actor};
pub use submit::{job_files, negotiator, shadow};
pub use supervisor::{AccountingSetup, SupervisorMsg, MAX_RESTARTS, RESTART_WINDOW};

pub(crate) use ask::ask_network;
pub(crate) use supervisor::{current_view, machine_ads};
