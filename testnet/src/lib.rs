//! Many Starling agents on one machine, in several domains with their keys,
//! certificates and trust policies: a testnet.
//!
//! Two ways to run one:
//!
//! - As processes on loopback: `starling testnet up --dir DIR --agents N
//!   --domains D` makes D domains and N agents in DIR and starts each agent
//!   as a process of the `starling` binary; `status` shows them; `down`
//!   stops them; `kill` kills one agent as a crash would and `start` runs
//!   it again on its data directory.
//!   - [`layout`] makes the files, as administrators would: a key per
//!     domain, a data directory per agent with its key, a certificate from
//!     its domain and its domain's policy trusting every other domain, and
//!     its `agent.toml`. `DIR/testnet.toml` records the layout.
//!   - [`processes`] runs the agents: it starts the first one, learns its
//!     address through the control API, starts the others in waves with the
//!     first few as bootstrap peers, and waits until every agent sees every
//!     machine ad. It reads their state back for `status` and stops them
//!     for `down`.
//!   - [`netns`] (`up --netns`, as root) gives each agent a network
//!     namespace of its own, routed through a router namespace per domain
//!     and a core between domains, with shaped links.
//! - [`memory`]: full agents inside one process over libp2p's memory
//!   transport, seeded, for tests and large-N measurements.
//!
//! This crate is built on the node crates (the agent, the control API, the
//! agent's configuration) and so sits above them; the `starling` binary, in
//! the `starling-cli` crate, sits above both and offers [`processes`] as
//! `starling testnet`. Agents run as separate processes of that binary, so
//! the library needs its path ([`processes::UpOptions::starling`]).
//!
//! Processes are Linux only: whether a pid is still the agent it was is
//! read from `/proc`.

pub mod layout;
pub mod memory;
pub mod netns;
pub mod processes;
mod procfs;

pub use layout::{Agent, AgentSettings, Layout};
pub use processes::{
    down, kill, start, status, up, AgentState, AgentStatus, DownReport, Progress, Signal,
    StartReport, Stopped, UpOptions, UpReport,
};
