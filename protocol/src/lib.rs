//! Starling's protocol crate: the vocabulary every agent shares.
//!
//! - [`classad`]: the ClassAd language, how machines, jobs and policies are
//!   described, matched and governed.
//! - [`identity`]: agent and domain keys, agent ids (libp2p peer ids),
//!   domain certificates, trust policies and the signed envelope everything
//!   signed travels in.
//! - [`cbor`]: bounded CBOR decoding shared by envelopes and messages.
//!
//! Nothing here does I/O: every type is plain data, so the policies, storage
//! and node crates can build on it and test it without a network.

pub mod cbor;
pub mod classad;
pub mod identity;
