//! Starling's protocol crate: the vocabulary every agent shares.
//!
//! - [`classad`]: the ClassAd language, how machines, jobs and policies are
//!   described, matched and governed.
//! - [`identity`]: agent and domain keys, agent ids (libp2p peer ids),
//!   domain certificates, trust policies and the signed envelope everything
//!   signed travels in.
//! - [`cbor`]: bounded CBOR decoding shared by envelopes and messages.
//! - [`wire`]: protocol names and versions (`/starling/claim/1`), the
//!   [`wire::Message`] trait giving every message a bounded encode and
//!   decode, and [`wire::Error`].
//! - [`gossip`]: signed machine and submitter ads (and jobs, which share
//!   their layout), and the gossipsub topics ads travel on.
//! - [`view`]: pulling a peer's current view of the pool, page by page.
//! - [`claim`]: claiming a slot for a job, keeping the claim's lease alive,
//!   releasing it.
//! - [`concurrency_limits`]: HTCondor's concurrency limits as a job names
//!   them, for the submit language and the claim protocol's shares.
//! - `files` (private, re-exported by [`transfer`]): file names, hashes,
//!   permission bits and the limits transfers and checkpoints share.
//! - [`transfer`]: handing a job to its execute agent and moving files
//!   between agents in chunks.
//! - [`checkpoint`]: a checkpoint's signed manifest and the store protocol
//!   that keeps its chunks on store peers.
//! - [`links`]: reserving network links for bulk transfers (held, then
//!   committed, on every owner of a path).
//!
//! Data flows: an agent describes itself as a [`classad::ClassAd`], seals it
//! with [`gossip::seal`] into an [`identity::Envelope`] and gossips the
//! bytes; receivers [`gossip::open`] them into their view, and newcomers pull
//! that view with [`view::Request`]. A submit agent matches a job against the
//! view, claims the machine with [`claim::Request`], then hands the job over
//! and lets its input be pulled with [`transfer::Request`].
//!
//! Nothing here does I/O: every type is plain data, so the policies, storage
//! and node crates can build on it and test it without a network.

pub mod cbor;
pub mod checkpoint;
pub mod claim;
pub mod classad;
pub mod concurrency_limits;
mod files;
pub mod gossip;
pub mod identity;
pub mod links;
pub mod submit;
pub mod transfer;
pub mod view;
pub mod wire;
