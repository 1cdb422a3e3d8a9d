//! Starling's durable state: what an agent must still know after a crash or
//! a restart.
//!
//! - The job queue: clusters of jobs under `cluster.proc` ids, each job an
//!   ad whose attributes change several at a time, atomically; and the
//!   history of jobs that left the queue. Changes to many jobs at once (a
//!   cluster held or removed) are one [`Batch`]: all or none, one flush.
//! - The agent's cached view of the pool: signed ads, by kind and signer,
//!   until they expire.
//! - Accounting: usage per user, favours given and received per domain.
//! - Claims and their leases, on either side.
//! - Each job's latest checkpoint record (the manifest the node signs,
//!   opaque here), kept until its chunks are released.
//! - A sequence counter per kind of envelope the agent signs, so a number is
//!   never reused after a restart.
//! - The checkpoint chunks this agent keeps for others as a store peer, in
//!   a sled database of their own ([`chunks`]), apart from the store.
//! - Outside the store, in plain files of the data directory ([`datadir`]):
//!   the agent's secret key (mode 0600, made on first use), the domain
//!   certificates installed for it and its domain's trust policy, so
//!   `starling id` and `starling domain install` work while an agent holds
//!   the store open.
//!
//! Everything goes through the [`Store`] trait. [`SledStore`] keeps it in a
//! sled database; [`MemoryStore`] keeps it in memory for tests. Data flows
//! caller → checks ([`Change`]s parsed, names and sizes bounded) → one
//! atomic write (the records and the store's tally of them) → flush → the
//! tally recorded in the `acknowledged` file → `Ok`; reads decode with size
//! bounds and report a damaged record as [`Error::Corrupt`] naming it, never
//! a panic.
//!
//! # Damage is caught, never papered over
//!
//! Every value on disk is sealed with a checksum over its tree, key and
//! bytes, and the store keeps its own record of what it acknowledged
//! outside sled ([`SledStore`] documents the format). Opening a store checks
//! every record and compares what is there with what was acknowledged: a
//! flipped bit, a record gone, or a store that sled recovered to an older
//! state (its files cut short) is [`Error::Damaged`], naming what is
//! damaged and what is missing, and the store is not opened. [`damage`]
//! has the check and the salvage behind `starling store check` and
//! `starling store salvage`. The schema version is checked when a store is
//! opened ([`SCHEMA_VERSION`]); a store of version 1 (before seals) is
//! upgraded in place.
//!
//! A full filesystem is a state, not damage: [`space::Guarded`] wraps the
//! sled store, keeps a reserve beside it, reports [`Error::DiskFull`] and
//! [`space::Space::Full`], reopens sled after a write failed for space and
//! leaves the state by itself once space returns.

mod accounting;
mod acknowledged;
pub mod batch;
pub mod chunks;
mod claim;
mod codec;
pub mod damage;
pub mod datadir;
mod error;
mod job;
mod memory;
mod seal;
mod sled_store;
pub mod space;
mod store;

pub use accounting::{Factor, Favours, Usage, MAX_LABEL_LEN};
pub use batch::{Batch, MAX_BATCH};
pub use claim::{Claim, Side, MAX_CLAIM_ID_LEN};
pub use damage::{Damage, Problem};
pub use datadir::DataDir;
pub use error::{Error, Source};
pub use job::{
    Change, HistoryEntry, JobId, MAX_ATTRS, MAX_CHECKPOINT_LEN, MAX_EXPR_LEN, MAX_JOB_LEN,
    MAX_NAME_LEN, MAX_PROCS,
};
pub use memory::MemoryStore;
pub use sled_store::SledStore;
pub use store::Store;

/// The layout version this Starling writes and the newest it reads. A store
/// with a newer version is refused at open with [`Error::NewerSchema`]; one
/// with version 1 (values not sealed) is upgraded when opened.
pub const SCHEMA_VERSION: u32 = 2;
