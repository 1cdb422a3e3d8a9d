//! The Starling agent and the `starling` command line (the binary that runs
//! it is in `cli/`, so that commands from crates built on this one, such as
//! `testnet`, can join it).
//!
//! - [`agent`]: one Starling peer. A supervisor with the view, the
//!   advertiser and the control API as children, and the one task that owns
//!   the libp2p swarm. Gossiped ads flow swarm → view (judged, then
//!   accepted, ignored or rejected back to gossipsub); this machine's ad
//!   flows advertiser → view and swarm.
//! - [`control`]: the local control API (JSON lines on a unix socket in the
//!   data directory) and the `agent.pid` file.
//! - [`cli`]: the command line. `agent` runs an agent; `status` asks one for
//!   its view; `eval` and `match` are the ClassAd tools; `id` and `domain`
//!   administer identities and domains.
//! - [`config`]: the agent's TOML configuration, its defaults and the
//!   command-line overrides.
//! - [`machine`]: probing the real machine and building its machine ad.
//! - [`web`]: the optional local web page and Prometheus metrics
//!   (`[http] listen`), answered from the control API's read requests.
//! - [`users`]: local users' names, and the submit side's file access with
//!   a job owner's rights.

pub mod agent;
pub mod cli;
pub mod config;
pub mod control;
pub mod execute;
pub mod machine;
pub mod metrics;
pub mod queue;
pub mod users;
pub mod web;
