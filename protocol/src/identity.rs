//! Who is speaking and who vouches for them.
//!
//! - An agent has an ed25519 [`Keypair`]; its [`AgentId`] is the libp2p
//!   `PeerId` of that key, so the id a peer proves in the noise handshake and
//!   the id in Starling's signed messages are the same thing.
//! - A domain has its own ed25519 key, held by an administrator. It signs
//!   [`Certificate`]s that admit agents with [`Roles`], and a
//!   [`DomainPolicy`] that says which foreign domains it trusts and how far.
//! - Everything signed travels in an [`Envelope`]: signer, sequence number,
//!   validity window, kind and body bytes, with a signature over exactly the
//!   bytes received. [`Envelope::open`] checks all of it before the body is
//!   decoded; a [`ReplayGuard`] drops sequence numbers already seen.
//! - [`armor`] turns signed files and keys into text an administrator can mail
//!   or paste.
//!
//! Nothing here reads a clock: `now` is always an argument.

pub mod armor;
mod certificate;
mod envelope;
mod keys;
mod policy;

pub use certificate::{
    check_domain_name, Certificate, CertificateCache, Role, Roles, MAX_CERTIFICATE_LEN,
};
pub use envelope::{
    Envelope, Freshness, Header, Kind, Opened, ReplayGuard, Timestamp, Verifier, MAX_ENVELOPE_LEN,
};
pub use keys::{AgentId, Keypair, ParseKeyError, PublicKey};
pub use policy::{
    DomainPolicy, Export, TrustAnchors, TrustedDomain, MAX_BOOTSTRAP, MAX_BOOTSTRAP_LEN,
    MAX_GPUS_CAP, MAX_POLICY_EXPR_LEN, MAX_POLICY_LEN, MAX_STORE_MIB, MAX_TRUSTED_DOMAINS,
};

/// Why a signed object was refused. Each variant names what a user or an
/// operator needs to fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes are not a well-formed envelope or body.
    #[error(transparent)]
    Decode(#[from] crate::cbor::DecodeError),
    /// The envelope was written by a newer Starling.
    #[error(
        "envelope format version {found} is newer than this starling understands ({supported})"
    )]
    UnsupportedVersion { found: u8, supported: u8 },
    /// The signature does not match the bytes: they were altered, or signed by
    /// another key than the one named.
    #[error("bad signature: the content was altered or was not signed by {signer}")]
    BadSignature { signer: PublicKey },
    /// The signer's key is a weak (small-order) ed25519 key.
    #[error("signer key {signer} is not a usable ed25519 key")]
    WeakKey { signer: PublicKey },
    /// The validity window is empty or inverted.
    #[error("validity window is empty: expires {expires_at} before it is issued {issued_at}")]
    EmptyWindow {
        issued_at: Timestamp,
        expires_at: Timestamp,
    },
    /// Issued in the future, beyond the allowed clock skew.
    #[error("not valid yet: issued {issued_at}, now is {now}")]
    NotYetValid {
        issued_at: Timestamp,
        now: Timestamp,
    },
    /// Past its expiry, beyond the allowed clock skew.
    #[error("expired at {expires_at}, now is {now}")]
    Expired {
        expires_at: Timestamp,
        now: Timestamp,
    },
    /// A sequence number at or below the last one accepted from this signer.
    #[error("replayed or stale: sequence {seq} from {signer}, already accepted {last}")]
    Replayed {
        signer: PublicKey,
        seq: u64,
        last: u64,
    },
    /// The envelope carries another kind of content than the caller expected.
    #[error("expected a {expected} but this is a {found}")]
    WrongKind { expected: Kind, found: Kind },
    /// Signed by a domain key nobody here trusts.
    #[error("domain key {key} is not trusted here (domain named {name:?})")]
    UntrustedDomain { name: String, key: PublicKey },
    /// The domain name is trusted, but under another key.
    #[error("domain {name:?} is trusted with key {expected}, but this was signed by {found}")]
    WrongDomainKey {
        name: String,
        expected: PublicKey,
        found: PublicKey,
    },
    /// A certificate whose body names a different domain key from its signer.
    #[error("certificate names domain key {claimed} but is signed by {signer}")]
    CertificateKeyMismatch {
        claimed: PublicKey,
        signer: PublicKey,
    },
    /// A certificate presented by an agent other than the one it admits.
    #[error("certificate admits agent {admitted}, but was presented by {presenter}")]
    NotThisAgent {
        admitted: AgentId,
        presenter: AgentId,
    },
    /// A field that is present but invalid (a ClassAd that does not parse, a
    /// fraction above one, an empty name).
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
}
