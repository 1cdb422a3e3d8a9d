//! Starling's protocol crate: the vocabulary every agent shares.
//!
//! It owns the ClassAd language ([`classad`]): how machines, jobs and policies
//! are described, matched and governed. Identities, signed envelopes and wire
//! messages join it as the agent grows. Nothing here does I/O: every type is
//! plain data, so the policies, storage and node crates can build on it and
//! test it without a network.

pub mod classad;
