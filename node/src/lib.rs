//! The Starling agent and the `starling` command line.
//!
//! Today this crate holds the command line ([`cli`]): the ClassAd tools
//! (`eval`, `match`), identity and domain administration (`id`, `domain`),
//! and `status` over a file of ads. The `starling` binary that runs it is
//! in `cli/`, so that commands from crates built on this one (`testnet`)
//! can join it. The agent itself (actors, the libp2p
//! swarm, job execution, the control API) joins it with the agent issue.
//! Its groundwork is here already:
//!
//! - [`config`]: the agent's TOML configuration, its defaults and the
//!   command-line overrides.
//! - [`machine`]: probing the real machine and building its machine ad.

pub mod agent;
pub mod cli;
pub mod config;
pub mod control;
pub mod machine;
