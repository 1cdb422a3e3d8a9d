//! Durable state for one agent.
//!
//! - [`datadir`]: the agent's data directory, its secret key (a private file,
//!   made on first use) and the domain certificates installed for it.
//! - The store (sled) holds the job queue, history, the ad cache, accounting,
//!   claims and leases.

pub mod datadir;

pub use datadir::DataDir;
