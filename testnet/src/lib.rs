//! Starting many agents on one machine, with domains, keys and trust
//! policies.
//!
//! - [`memory`]: full agents inside one process over libp2p's memory
//!   transport, seeded, for tests and large-N measurements.
//!
//! Emulated links and faults, and scripted experiments, come later.

pub mod memory;
