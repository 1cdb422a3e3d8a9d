//! Decisions as pure functions over plain data: which candidate a job
//! prefers today; fair share, admission control and placement as the agent
//! grows. Nothing here does I/O or reads a clock: callers pass what a rule
//! needs and carry out its answer.

pub mod matchmaking;
pub mod negotiation;
