//! The execute side of an agent, as HTCondor's startd and starters: the
//! startd grants claims on this machine and keeps their leases and the
//! owner policy, and a starter per job pulls its input, runs it (through
//! [`starling_process`]) and offers its output back, or takes on a job an
//! earlier run of the agent left running; a job that checkpoints has its
//! checkpoint taken and replicated, and restored where it starts again
//! ([`checkpoint`]); a job that would do better elsewhere is proposed
//! to its submit agent for a move ([`migrate`]).

pub mod barrier;
pub mod checkpoint;
pub mod migrate;
pub mod startd;
pub mod starter;
