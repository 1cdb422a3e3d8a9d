//! Signed envelopes: the one container for everything an agent or a domain
//! signs (ads, certificates, policies, jobs, manifests).
//!
//! On the wire an envelope is the CBOR array `[signed, signature]`, where
//! `signed` is a byte string holding the CBOR array
//! `[version, signer, seq, issued_at, expires_at, kind, body]` and `signature`
//! is the signer's ed25519 signature over exactly the `signed` bytes. The
//! signature therefore covers the bytes as received, not a re-encoding, and
//! the body stays an opaque byte string until [`Envelope::open`] has checked
//! the window and the signature.
//!
//! What ed25519 signs is `"starling/envelope/1\0"` followed by the blake3
//! hash of the `signed` bytes. The prefix keeps an agent's signatures apart
//! from those its key makes for libp2p (noise, gossipsub); the hash keeps
//! verification cost flat in the body size (ed25519's own SHA-512 over a
//! 4 KiB ad would cost a third of the verification).

use std::borrow::Borrow;
use std::fmt;

use serde::{Deserialize, Serialize};

use super::{Error, Keypair, PublicKey};
use crate::cbor;

/// The largest envelope accepted by default. Gossiped ads are a few KiB; jobs
/// and checkpoint manifests stay well below this.
pub const MAX_ENVELOPE_LEN: usize = 1 << 20;

/// The envelope layout this code writes and reads.
const VERSION: u8 = 1;

/// Separates envelope signatures from every other use of the same key.
const SIGNING_CONTEXT: &[u8; 20] = b"starling/envelope/1\0";

/// The message ed25519 signs for `signed`: the context, then blake3(signed).
fn signing_message(signed: &[u8]) -> [u8; 52] {
    let mut message = [0u8; 52];
    message[..20].copy_from_slice(SIGNING_CONTEXT);
    message[20..].copy_from_slice(blake3::hash(signed).as_bytes());
    message
}

/// Milliseconds since the Unix epoch, UTC.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(u64);

impl Timestamp {
    pub const fn from_unix_millis(ms: u64) -> Self {
        Self(ms)
    }
    pub const fn as_unix_millis(self) -> u64 {
        self.0
    }
    pub const fn from_unix_secs(secs: u64) -> Self {
        Self(secs.saturating_mul(1000))
    }
    /// The system clock. Protocol code takes `now` as an argument; this is for
    /// the edges (CLI, agent) that read the clock and pass it in.
    pub fn now() -> Self {
        let since = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Self(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
    }
    pub const fn saturating_add_millis(self, ms: u64) -> Self {
        Self(self.0.saturating_add(ms))
    }
    pub const fn saturating_sub_millis(self, ms: u64) -> Self {
        Self(self.0.saturating_sub(ms))
    }
}

impl fmt::Display for Timestamp {
    /// ISO 8601 in UTC, to the second: `2026-11-22T10:00:00Z`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let secs = i64::try_from(self.0 / 1000).unwrap_or(i64::MAX);
        let (y, mo, d) = crate::classad::time::civil_from_days(secs.div_euclid(86_400));
        let rem = secs.rem_euclid(86_400);
        write!(
            f,
            "{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}Z",
            rem / 3600,
            rem / 60 % 60,
            rem % 60
        )
    }
}
impl fmt::Debug for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

/// What an envelope's body is. A number on the wire, so a newer peer's kinds
/// decode here (and are refused by whoever expected something else).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Kind(u16);

impl Kind {
    /// A machine's ClassAd, signed by its agent.
    pub const MACHINE_AD: Kind = Kind(1);
    /// A submitter's ClassAd (idle jobs per user), signed by its agent.
    pub const SUBMITTER_AD: Kind = Kind(2);
    /// A domain certificate admitting an agent, signed by the domain key.
    pub const CERTIFICATE: Kind = Kind(3);
    /// A domain's trust policy, signed by the domain key.
    pub const POLICY: Kind = Kind(4);
    /// A job, signed by the agent it was submitted to.
    pub const JOB: Kind = Kind(5);
    /// A checkpoint manifest, signed by the agent that took it.
    pub const MANIFEST: Kind = Kind(6);
    /// A suspicion that an agent is dead, signed by an agent of its
    /// domain that lost it ([`crate::gossip::AdKind::Suspicion`]).
    pub const SUSPICION: Kind = Kind(7);

    pub const fn from_u16(tag: u16) -> Self {
        Self(tag)
    }
    pub const fn as_u16(self) -> u16 {
        self.0
    }
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::MACHINE_AD => "machine ad",
            Self::SUBMITTER_AD => "submitter ad",
            Self::CERTIFICATE => "certificate",
            Self::POLICY => "domain policy",
            Self::JOB => "job",
            Self::MANIFEST => "checkpoint manifest",
            Self::SUSPICION => "suspicion",
            _ => return None,
        })
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name() {
            Some(name) => f.write_str(name),
            None => write!(f, "kind {}", self.0),
        }
    }
}
impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Kind({self})")
    }
}

/// Everything signed alongside the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The key that signed: an agent's or a domain's.
    pub signer: PublicKey,
    /// Increases with every envelope of this kind the signer issues.
    pub seq: u64,
    pub issued_at: Timestamp,
    pub expires_at: Timestamp,
    pub kind: Kind,
}

/// How much clock disagreement to forgive when checking a validity window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Freshness {
    pub max_skew_ms: u64,
}

impl Default for Freshness {
    /// Five minutes, as Kerberos allows.
    fn default() -> Self {
        Self {
            max_skew_ms: 5 * 60 * 1000,
        }
    }
}

impl Freshness {
    /// Checks `header`'s window against `now`.
    pub fn check(&self, header: &Header, now: Timestamp) -> Result<(), Error> {
        if header.expires_at < header.issued_at {
            return Err(Error::EmptyWindow {
                issued_at: header.issued_at,
                expires_at: header.expires_at,
            });
        }
        if header.issued_at > now.saturating_add_millis(self.max_skew_ms) {
            return Err(Error::NotYetValid {
                issued_at: header.issued_at,
                now,
            });
        }
        if header.expires_at.saturating_add_millis(self.max_skew_ms) <= now {
            return Err(Error::Expired {
                expires_at: header.expires_at,
                now,
            });
        }
        Ok(())
    }
}

/// A signed envelope as received: the signed bytes, the signature, and the
/// header and body read from the signed bytes but not yet trusted.
#[derive(Clone, PartialEq, Eq)]
pub struct Envelope {
    signed: Vec<u8>,
    signature: [u8; 64],
    header: Header,
    /// Where the body starts in `signed`: it is the signed part's last
    /// field, so its bytes end the signed bytes and are not kept twice (a
    /// view of thousands of ads holds one envelope each).
    body_at: usize,
    /// The signer's key, decompressed once when the envelope was read.
    verifying_key: ed25519_dalek::VerifyingKey,
}

/// An envelope whose signature and window have been checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opened {
    pub header: Header,
    pub body: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
struct Outer(
    #[serde(with = "serde_bytes")] Vec<u8>,
    #[serde(with = "serde_bytes")] Vec<u8>,
);

#[derive(Serialize, Deserialize)]
struct Signed(
    u8,
    serde_bytes::ByteArray<32>,
    u64,
    Timestamp,
    Timestamp,
    Kind,
    #[serde(with = "serde_bytes")] Vec<u8>,
);

/// Decodes only the version of the signed part, so a newer layout gets a
/// clear error instead of a confusing one.
#[derive(Deserialize)]
struct VersionOnly(u8, serde::de::IgnoredAny);

impl Envelope {
    /// Signs `body` as `kind` with `key`.
    pub fn seal(
        key: &Keypair,
        seq: u64,
        issued_at: Timestamp,
        expires_at: Timestamp,
        kind: Kind,
        body: Vec<u8>,
    ) -> Self {
        let header = Header {
            signer: key.public(),
            seq,
            issued_at,
            expires_at,
            kind,
        };
        let signed = cbor::encode(&Signed(
            VERSION,
            serde_bytes::ByteArray::new(*header.signer.as_bytes()),
            seq,
            issued_at,
            expires_at,
            kind,
            body.clone(),
        ));
        let body_at = signed.len() - body.len();
        debug_assert!(signed.ends_with(&body));
        let signature = key.sign(&signing_message(&signed));
        Self {
            signed,
            signature,
            header,
            body_at,
            verifying_key: key.verifying_key(),
        }
    }

    /// Reads an envelope of at most [`MAX_ENVELOPE_LEN`] bytes. Nothing is
    /// trusted yet: call [`Envelope::open`].
    pub fn decode(bytes: &[u8]) -> Result<Self, Error> {
        Self::decode_with_limit(bytes, MAX_ENVELOPE_LEN)
    }

    /// [`Envelope::decode`] with another size limit.
    pub fn decode_with_limit(bytes: &[u8], limit: usize) -> Result<Self, Error> {
        Self::decode_with(bytes, limit, |key| {
            ed25519_dalek::VerifyingKey::from_bytes(key).ok()
        })
    }

    /// Decodes, getting the signer's decompressed key from `key_for` (a
    /// cache, see [`Verifier`]), which returns `None` for a non-key.
    fn decode_with(
        bytes: &[u8],
        limit: usize,
        key_for: impl FnOnce(&[u8; 32]) -> Option<ed25519_dalek::VerifyingKey>,
    ) -> Result<Self, Error> {
        let outer: Outer = cbor::decode(bytes, limit, "envelope")?;
        // The wrapper is not signed, so accept only its one canonical
        // encoding: no second spelling of the same envelope can circulate.
        if cbor::encode(&outer) != bytes {
            return Err(cbor::DecodeError::Malformed {
                what: "envelope",
                reason: "the wrapper is not canonical CBOR".to_owned(),
            }
            .into());
        }
        let Outer(signed, signature) = outer;
        let signature: [u8; 64] =
            signature
                .try_into()
                .map_err(|s: Vec<u8>| cbor::DecodeError::Malformed {
                    what: "envelope",
                    reason: format!("signature is {} bytes, not 64", s.len()),
                })?;
        let Signed(version, signer, seq, issued_at, expires_at, kind, body) =
            match cbor::decode::<Signed>(&signed, limit, "envelope header") {
                Ok(parts) => parts,
                Err(e) => {
                    if let Ok(VersionOnly(found, _)) =
                        cbor::decode(&signed, limit, "envelope header")
                    {
                        if found > VERSION {
                            return Err(Error::UnsupportedVersion {
                                found,
                                supported: VERSION,
                            });
                        }
                    }
                    return Err(e.into());
                }
            };
        if version != VERSION {
            return Err(Error::UnsupportedVersion {
                found: version,
                supported: VERSION,
            });
        }
        // The body is the last field, one definite-length byte string: its
        // bytes end the signed part (anything else is not the one encoding
        // a signer makes).
        if !signed.ends_with(&body) {
            return Err(cbor::DecodeError::Malformed {
                what: "envelope",
                reason: "the signed part does not end with its body".to_owned(),
            }
            .into());
        }
        let body_at = signed.len() - body.len();
        let verifying_key = key_for(&signer).ok_or_else(|| cbor::DecodeError::Malformed {
            what: "envelope",
            reason: "the signer is not an ed25519 public key".to_owned(),
        })?;
        Ok(Self {
            signed,
            signature,
            verifying_key,
            header: Header {
                signer: PublicKey::from_verifying_key(&verifying_key),
                seq,
                issued_at,
                expires_at,
                kind,
            },
            body_at,
        })
    }

    /// The envelope as bytes for the wire or a file.
    pub fn to_bytes(&self) -> Vec<u8> {
        cbor::encode(&Outer(self.signed.clone(), self.signature.to_vec()))
    }

    /// The header as claimed: not trusted until [`Envelope::open`] succeeds.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The exact bytes the signature covers.
    pub fn signed_bytes(&self) -> &[u8] {
        &self.signed
    }

    /// The signature over [`Envelope::signed_bytes`].
    pub fn signature(&self) -> &[u8; 64] {
        &self.signature
    }

    /// Checks the validity window against `now` and then the signature over
    /// the bytes as received. Only then is the body handed out.
    pub fn open(&self, now: Timestamp, freshness: &Freshness) -> Result<Opened, Error> {
        self.check_before_signature(now, freshness)?;
        let signature = ed25519_dalek::Signature::from_bytes(&self.signature);
        // Cofactorless verification with canonical s (dalek always checks),
        // R compared by its encoding, and weak signer keys refused above:
        // strongly unforgeable, and a fifth faster than `verify_strict`,
        // which also decompresses R.
        use ed25519_dalek::Verifier as _;
        self.verifying_key
            .verify(&signing_message(&self.signed), &signature)
            .map_err(|_| Error::BadSignature {
                signer: self.header.signer,
            })?;
        Ok(self.opened())
    }

    /// [`Envelope::open`], also requiring the body to be of `kind`.
    pub fn open_kind(
        &self,
        kind: Kind,
        now: Timestamp,
        freshness: &Freshness,
    ) -> Result<Opened, Error> {
        if self.header.kind != kind {
            return Err(Error::WrongKind {
                expected: kind,
                found: self.header.kind,
            });
        }
        self.open(now, freshness)
    }

    /// Opens many envelopes at once. Valid batches are checked with one
    /// ed25519 batch verification (about twice the speed of one by one); if
    /// the batch fails, each envelope is checked alone to say which failed.
    /// Results are in input order.
    pub fn open_batch<E: std::borrow::Borrow<Envelope>>(
        envelopes: &[E],
        now: Timestamp,
        freshness: &Freshness,
    ) -> Vec<Result<Opened, Error>> {
        let envelopes: Vec<&Envelope> = envelopes.iter().map(Borrow::borrow).collect();
        let mut results: Vec<Option<Result<Opened, Error>>> = Vec::with_capacity(envelopes.len());
        let mut pending = Vec::with_capacity(envelopes.len());
        for (i, envelope) in envelopes.iter().enumerate() {
            match envelope.check_before_signature(now, freshness) {
                Ok(()) => {
                    pending.push(i);
                    results.push(None);
                }
                Err(e) => results.push(Some(Err(e))),
            }
        }
        if pending.len() > 1 {
            let digests: Vec<[u8; 52]> = pending
                .iter()
                .map(|&i| signing_message(&envelopes[i].signed))
                .collect();
            let messages: Vec<&[u8]> = digests.iter().map(|d| d.as_slice()).collect();
            let signatures: Vec<ed25519_dalek::Signature> = pending
                .iter()
                .map(|&i| ed25519_dalek::Signature::from_bytes(&envelopes[i].signature))
                .collect();
            let keys: Vec<ed25519_dalek::VerifyingKey> = pending
                .iter()
                .map(|&i| envelopes[i].verifying_key)
                .collect();
            if ed25519_dalek::verify_batch(&messages, &signatures, &keys).is_ok() {
                for &i in &pending {
                    results[i] = Some(Ok(envelopes[i].opened()));
                }
            }
        }
        results
            .into_iter()
            .zip(envelopes)
            .map(|(result, envelope)| result.unwrap_or_else(|| envelope.open(now, freshness)))
            .collect()
    }

    pub(crate) fn check_before_signature(
        &self,
        now: Timestamp,
        freshness: &Freshness,
    ) -> Result<(), Error> {
        if self.verifying_key.is_weak() {
            return Err(Error::WeakKey {
                signer: self.header.signer,
            });
        }
        freshness.check(&self.header, now)
    }

    fn opened(&self) -> Opened {
        Opened {
            header: self.header.clone(),
            body: self.body().to_vec(),
        }
    }

    /// The body as claimed, not trusted until opened.
    fn body(&self) -> &[u8] {
        &self.signed[self.body_at..]
    }
}

impl fmt::Debug for Envelope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Envelope")
            .field("header", &self.header)
            .field("body_len", &self.body().len())
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// Decodes the body as `T`, which may be at most `limit` bytes.
    pub fn decode_body<T: serde::de::DeserializeOwned>(
        &self,
        limit: usize,
        what: &'static str,
    ) -> Result<T, Error> {
        Ok(cbor::decode(&self.body, limit, what)?)
    }
}

/// Opens envelopes in bulk, as the gossip layer does: keeps the decompressed
/// keys of recent signers (decompressing a key costs about a ninth of a
/// verification, and the same peers sign again every refresh) and batches
/// signature checks.
///
/// The cache holds at most `capacity` keys and is emptied when full, so a
/// flood of made-up signers costs memory no more than once.
///
/// A batch and a one-by-one check agree on every signature an honest signer
/// makes; a signer crafting signatures with small-order components could make
/// one that a batch accepts and a single check refuses, which gains it
/// nothing but inconsistency about its own envelopes.
#[derive(Debug)]
pub struct Verifier {
    freshness: Freshness,
    capacity: usize,
    keys: std::collections::HashMap<[u8; 32], ed25519_dalek::VerifyingKey>,
}

impl Verifier {
    /// Signers remembered by default: a pool of ten thousand agents.
    pub const DEFAULT_CAPACITY: usize = 10_000;

    pub fn new(freshness: Freshness) -> Self {
        Self::with_capacity(freshness, Self::DEFAULT_CAPACITY)
    }

    pub fn with_capacity(freshness: Freshness, capacity: usize) -> Self {
        Self {
            freshness,
            capacity: capacity.max(1),
            keys: std::collections::HashMap::new(),
        }
    }

    /// [`Envelope::decode`] with the key cache.
    pub fn decode(&mut self, bytes: &[u8]) -> Result<Envelope, Error> {
        let (keys, capacity) = (&mut self.keys, self.capacity);
        Envelope::decode_with(bytes, MAX_ENVELOPE_LEN, |signer| {
            if let Some(key) = keys.get(signer) {
                return Some(*key);
            }
            let key = ed25519_dalek::VerifyingKey::from_bytes(signer).ok()?;
            if keys.len() >= capacity {
                keys.clear();
            }
            keys.insert(*signer, key);
            Some(key)
        })
    }

    /// Decodes and opens one envelope.
    pub fn open(&mut self, bytes: &[u8], now: Timestamp) -> Result<Opened, Error> {
        self.decode(bytes)?.open(now, &self.freshness)
    }

    /// Decodes and opens many envelopes with one batch verification; results
    /// are in input order.
    pub fn open_batch(&mut self, messages: &[&[u8]], now: Timestamp) -> Vec<Result<Opened, Error>> {
        let mut envelopes = Vec::with_capacity(messages.len());
        let slots: Vec<Result<usize, Error>> = messages
            .iter()
            .map(|m| {
                let envelope = self.decode(m)?;
                envelopes.push(envelope);
                Ok(envelopes.len() - 1)
            })
            .collect();
        let mut opened: Vec<Option<Result<Opened, Error>>> =
            Envelope::open_batch(&envelopes, now, &self.freshness)
                .into_iter()
                .map(Some)
                .collect();
        slots
            .into_iter()
            .map(|slot| {
                let i = slot?;
                opened[i]
                    .take()
                    .unwrap_or_else(|| envelopes[i].open(now, &self.freshness))
            })
            .collect()
    }

    /// Number of signer keys cached.
    pub fn cached_keys(&self) -> usize {
        self.keys.len()
    }
}

/// Remembers the highest sequence number accepted per signer and kind, and
/// refuses anything at or below it: replays and stale copies that arrive late
/// by another gossip path.
#[derive(Debug, Default, Clone)]
pub struct ReplayGuard {
    last: std::collections::HashMap<(PublicKey, Kind), u64>,
}

impl ReplayGuard {
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `header` if its sequence number is new, and records it.
    pub fn accept(&mut self, header: &Header) -> Result<(), Error> {
        let slot = self.last.entry((header.signer, header.kind));
        match slot {
            std::collections::hash_map::Entry::Occupied(mut last) => {
                if header.seq <= *last.get() {
                    return Err(Error::Replayed {
                        signer: header.signer,
                        seq: header.seq,
                        last: *last.get(),
                    });
                }
                last.insert(header.seq);
            }
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(header.seq);
            }
        }
        Ok(())
    }

    /// The last sequence accepted from `signer` for `kind`.
    pub fn last(&self, signer: &PublicKey, kind: Kind) -> Option<u64> {
        self.last.get(&(*signer, kind)).copied()
    }

    /// Forgets a signer, e.g. when its last ad expires and it leaves the view.
    pub fn forget(&mut self, signer: &PublicKey) {
        self.last.retain(|(key, _), _| key != signer);
    }

    /// Number of (signer, kind) pairs remembered.
    pub fn len(&self) -> usize {
        self.last.len()
    }

    pub fn is_empty(&self) -> bool {
        self.last.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T0: Timestamp = Timestamp::from_unix_secs(1_795_000_000);
    const HOUR: u64 = 3_600_000;

    fn key(n: u8) -> Keypair {
        Keypair::from_seed(&[n; 32])
    }

    fn sealed(n: u8, seq: u64) -> Envelope {
        Envelope::seal(
            &key(n),
            seq,
            T0,
            T0.saturating_add_millis(HOUR),
            Kind::MACHINE_AD,
            format!("ad {n} {seq}").into_bytes(),
        )
    }

    #[test]
    fn sealed_envelope_opens_after_a_round_trip() {
        let env = sealed(1, 7);
        let back = Envelope::decode(&env.to_bytes()).unwrap();
        assert_eq!(back, env);
        let opened = back.open(T0, &Freshness::default()).unwrap();
        assert_eq!(opened.body, b"ad 1 7");
        assert_eq!(opened.header.seq, 7);
        assert_eq!(opened.header.signer, key(1).public());
    }

    #[test]
    fn any_flipped_bit_is_refused() {
        let bytes = sealed(2, 1).to_bytes();
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut tampered = bytes.clone();
                tampered[i] ^= 1 << bit;
                let opened =
                    Envelope::decode(&tampered).and_then(|e| e.open(T0, &Freshness::default()));
                assert!(
                    opened.is_err(),
                    "flipping bit {bit} of byte {i} went unnoticed"
                );
            }
        }
    }

    #[test]
    fn a_signed_part_that_does_not_end_with_its_body_is_refused() {
        let env = sealed(3, 1);
        assert_eq!(env.body(), b"ad 3 1");
        // Bytes after the body, and the body as an indefinite-length byte
        // string (its bytes not contiguous in the signed part): neither is
        // what a signer makes.
        let mut trailing = env.signed.clone();
        trailing.push(0);
        let mut chunked = env.signed[..env.body_at - 1].to_vec();
        chunked.extend([0x5f, 0x43]);
        chunked.extend(b"ad ");
        chunked.push(0x43);
        chunked.extend(b"3 1");
        chunked.push(0xff);
        for signed in [trailing, chunked] {
            let bytes = cbor::encode(&Outer(signed, env.signature.to_vec()));
            assert!(Envelope::decode(&bytes).is_err());
        }
    }

    #[test]
    fn tampered_body_is_a_bad_signature() {
        let env = sealed(3, 1);
        let mut signed = env.signed.clone();
        let last = signed.len() - 1;
        signed[last] ^= 1;
        let tampered = cbor::encode(&Outer(signed, env.signature.to_vec()));
        let err = Envelope::decode(&tampered)
            .unwrap()
            .open(T0, &Freshness::default())
            .unwrap_err();
        assert!(matches!(err, Error::BadSignature { .. }), "{err}");
    }

    #[test]
    fn another_keys_signature_is_refused() {
        let env = sealed(4, 1);
        let forged = Envelope {
            signature: key(5).sign(&signing_message(&env.signed)),
            ..env
        };
        let err = Envelope::decode(&forged.to_bytes())
            .unwrap()
            .open(T0, &Freshness::default())
            .unwrap_err();
        assert!(matches!(err, Error::BadSignature { .. }), "{err}");
    }

    #[test]
    fn window_is_checked_with_skew() {
        let fresh = Freshness {
            max_skew_ms: 60_000,
        };
        let env = sealed(6, 1);
        // Just inside the skew on both sides.
        assert!(env.open(T0.saturating_sub_millis(59_000), &fresh).is_ok());
        assert!(env
            .open(T0.saturating_add_millis(HOUR + 59_000), &fresh)
            .is_ok());
        assert!(matches!(
            env.open(T0.saturating_sub_millis(61_000), &fresh),
            Err(Error::NotYetValid { .. })
        ));
        assert!(matches!(
            env.open(T0.saturating_add_millis(HOUR + 60_000), &fresh),
            Err(Error::Expired { .. })
        ));
        let inverted = Envelope::seal(
            &key(6),
            1,
            T0,
            T0.saturating_sub_millis(1),
            Kind::POLICY,
            vec![],
        );
        assert!(matches!(
            inverted.open(T0, &fresh),
            Err(Error::EmptyWindow { .. })
        ));
    }

    #[test]
    fn replay_guard_refuses_old_and_equal_sequences_per_signer_and_kind() {
        let mut guard = ReplayGuard::new();
        guard.accept(sealed(1, 5).header()).unwrap();
        let err = guard.accept(sealed(1, 5).header()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "replayed or stale: sequence 5 from {}, already accepted 5",
                key(1).public()
            )
        );
        assert!(guard.accept(sealed(1, 4).header()).is_err());
        guard.accept(sealed(1, 6).header()).unwrap();
        // Other signers and other kinds have their own sequences.
        guard.accept(sealed(2, 1).header()).unwrap();
        let policy = Envelope::seal(&key(1), 1, T0, T0, Kind::POLICY, vec![]);
        guard.accept(policy.header()).unwrap();
        guard.forget(&key(1).public());
        guard.accept(sealed(1, 1).header()).unwrap();
    }

    #[test]
    fn batch_open_matches_one_by_one_and_finds_the_bad_one() {
        let mut envelopes: Vec<Envelope> = (0..20).map(|i| sealed(i, u64::from(i))).collect();
        let all = Envelope::open_batch(&envelopes, T0, &Freshness::default());
        assert!(all.iter().all(Result::is_ok));
        envelopes[7].signature = key(99).sign(&signing_message(&envelopes[7].signed));
        envelopes[11] = Envelope::seal(&key(11), 1, T0, T0, Kind::MACHINE_AD, vec![]);
        let results = Envelope::open_batch(
            &envelopes,
            T0.saturating_add_millis(HOUR),
            &Freshness::default(),
        );
        for (i, result) in results.iter().enumerate() {
            match i {
                7 => assert!(matches!(result, Err(Error::BadSignature { .. }))),
                11 => assert!(matches!(result, Err(Error::Expired { .. }))),
                _ => assert_eq!(result.as_ref().unwrap().body, envelopes[i].body()),
            }
        }
    }

    #[test]
    fn verifier_matches_envelope_open_and_keeps_input_order() {
        let mut verifier = Verifier::with_capacity(Freshness::default(), 4);
        let mut wire: Vec<Vec<u8>> = (0..10).map(|i| sealed(i, 1).to_bytes()).collect();
        wire[3] = b"not an envelope".to_vec();
        let mut forged = sealed(5, 1);
        forged.signature = key(6).sign(&signing_message(&forged.signed));
        wire[5] = forged.to_bytes();
        let refs: Vec<&[u8]> = wire.iter().map(Vec::as_slice).collect();
        let results = verifier.open_batch(&refs, T0);
        for (i, result) in results.iter().enumerate() {
            let alone = Envelope::decode(&wire[i]).and_then(|e| e.open(T0, &Freshness::default()));
            assert_eq!(result, &alone, "envelope {i}");
            match i {
                3 => assert!(matches!(result, Err(Error::Decode(_)))),
                5 => assert!(matches!(result, Err(Error::BadSignature { .. }))),
                _ => assert_eq!(
                    result.as_ref().unwrap().body,
                    format!("ad {i} 1").into_bytes()
                ),
            }
        }
        // The key cache never grows past its capacity.
        assert!(verifier.cached_keys() <= 4);
        assert!(verifier.open(&wire[0], T0).is_ok());
    }

    #[test]
    fn newer_format_version_is_named() {
        let env = sealed(1, 1);
        let mut signed = env.signed.clone();
        signed[1] = 2; // The version is the first element of the array.
        let bytes = cbor::encode(&Outer(signed, env.signature.to_vec()));
        let err = Envelope::decode(&bytes).unwrap_err();
        assert!(
            matches!(
                err,
                Error::UnsupportedVersion {
                    found: 2,
                    supported: 1
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn timestamps_print_as_utc() {
        assert_eq!(
            Timestamp::from_unix_secs(0).to_string(),
            "1970-01-01T00:00:00Z"
        );
        assert_eq!(
            Timestamp::from_unix_millis(1_795_000_000_999).to_string(),
            "2026-11-18T11:06:40Z"
        );
    }
}
