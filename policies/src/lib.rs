//! Decisions as pure functions over plain data: matchmaking, fair share, admission control and placement. Filled in as the agent grows; today it re-exports the ClassAd match.

pub use starling_protocol::classad;
