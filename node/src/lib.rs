//! The Starling agent and the `starling` command.
//!
//! Today this crate holds the command line: the ClassAd tools (`eval`,
//! `match`) that work without an agent. The agent itself (actors, the libp2p
//! swarm, job execution, the control API) joins it with the agent issue.

pub mod cli;
