//! Many Starling agents on one machine: a testnet.
//!
//! `starling testnet up --dir DIR --agents N --domains D` makes D domains and
//! N agents in DIR and starts each agent as a process of the `starling`
//! binary, listening on loopback; `status` shows them; `down` stops them.
//!
//! - [`layout`] makes the files, as administrators would: a key per domain,
//!   a data directory per agent with its key, a certificate from its domain
//!   and its domain's policy trusting every other domain, and its
//!   `agent.toml`. `DIR/testnet.toml` records the layout.
//! - [`processes`] runs the agents: it starts the first one, learns its
//!   address through the control API, starts the others in waves with the
//!   first few as bootstrap peers, and waits until every agent sees every
//!   machine ad. It reads their state back for `status` and stops them for
//!   `down`.
//!
//! This crate is built on `starling-node` (the control API, the agent's
//! configuration) and so sits above it; the `starling` binary, in the
//! `starling-cli` crate, sits above both and offers these as `starling
//! testnet`. Agents run as separate processes of that binary, so the
//! library needs its path ([`processes::UpOptions::starling`]).
//!
//! Linux only: whether a pid is still the agent it was is read from
//! `/proc`.

pub mod layout;
pub mod processes;

pub use layout::{Agent, AgentSettings, Layout};
pub use processes::{
    down, status, up, AgentState, AgentStatus, DownReport, Progress, Stopped, UpOptions, UpReport,
};
