//! How records are laid out on disk: big-endian keys (so sled's byte order
//! is numeric order) and CBOR values, decoded with a size bound.

use serde::{de::DeserializeOwned, Deserialize, Serialize};
use starling_protocol::cbor;
use starling_protocol::identity::{AgentId, Kind, PublicKey, Timestamp, MAX_ENVELOPE_LEN};

use crate::claim::{Claim, Side};
use crate::job::{Attrs, JobId, MAX_JOB_LEN};
use crate::{Factor, Favours, Usage};

/// Largest value of any small record (counters, usage, claims).
pub(crate) const MAX_SMALL_LEN: usize = 4096;
/// Largest ad record: the envelope and a few numbers.
pub(crate) const MAX_AD_LEN: usize = MAX_ENVELOPE_LEN + 64;
/// Largest history record: a job and its id and time.
pub(crate) const MAX_HISTORY_LEN: usize = MAX_JOB_LEN + 64;

/// `cluster` then `proc`, big-endian: 12 bytes.
pub(crate) fn job_key(id: JobId) -> [u8; 12] {
    let mut key = [0; 12];
    key[..8].copy_from_slice(&id.cluster.to_be_bytes());
    key[8..].copy_from_slice(&id.proc.to_be_bytes());
    key
}

pub(crate) fn parse_job_key(key: &[u8]) -> Option<JobId> {
    let cluster = u64::from_be_bytes(key.get(..8)?.try_into().ok()?);
    let proc = u32::from_be_bytes(key.get(8..)?.try_into().ok()?);
    Some(JobId { cluster, proc })
}

/// `kind` then the signer's key: 34 bytes.
pub(crate) fn ad_key(kind: Kind, signer: &PublicKey) -> [u8; 34] {
    let mut key = [0; 34];
    key[..2].copy_from_slice(&kind.as_u16().to_be_bytes());
    key[2..].copy_from_slice(signer.as_bytes());
    key
}

/// Expiry (unix ms) then the ad's key: 42 bytes, so expired ads are a prefix
/// range.
pub(crate) fn expiry_key(expires_at: Timestamp, ad_key: &[u8; 34]) -> [u8; 42] {
    let mut key = [0; 42];
    key[..8].copy_from_slice(&expires_at.as_unix_millis().to_be_bytes());
    key[8..].copy_from_slice(ad_key);
    key
}

/// Names a key in error messages: `jobs/12.0`, `ads/machine ad/<signer>`.
pub(crate) fn describe_ad_key(key: &[u8]) -> String {
    let kind = key
        .get(..2)
        .and_then(|k| k.try_into().ok())
        .map(|k| Kind::from_u16(u16::from_be_bytes(k)).to_string())
        .unwrap_or_else(|| "?".to_owned());
    let signer = key
        .get(2..)
        .and_then(|k| <[u8; 32]>::try_from(k).ok())
        .and_then(|k| PublicKey::from_bytes(&k))
        .map(|k| k.to_string())
        .unwrap_or_else(|| "?".to_owned());
    format!("ads/{kind}/{signer}")
}

pub(crate) fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    cbor::encode(value)
}

pub(crate) fn decode<T: DeserializeOwned>(
    bytes: &[u8],
    limit: usize,
    what: &'static str,
) -> Result<T, cbor::DecodeError> {
    cbor::decode(bytes, limit, what)
}

/// A job that left the queue.
#[derive(Serialize, Deserialize)]
pub(crate) struct HistoryRecord {
    pub(crate) cluster: u64,
    pub(crate) proc: u32,
    pub(crate) finished_at: u64,
    pub(crate) attrs: Attrs,
}

/// An ad in the view: its sequence number and expiry (also in the envelope,
/// kept here so replacing and expiring need not decode it) and the envelope
/// as received.
#[derive(Serialize, Deserialize)]
pub(crate) struct AdRecord {
    pub(crate) seq: u64,
    pub(crate) expires_at: u64,
    #[serde(with = "serde_bytes")]
    pub(crate) envelope: Vec<u8>,
}

#[derive(Serialize, Deserialize)]
pub(crate) struct UsageRecord {
    accumulated: f64,
    /// Absent in records written before priorities were kept.
    #[serde(default)]
    priority: f64,
    updated_at: u64,
}

impl From<Usage> for UsageRecord {
    fn from(u: Usage) -> Self {
        UsageRecord {
            accumulated: u.accumulated,
            priority: u.priority,
            updated_at: u.updated_at.as_unix_millis(),
        }
    }
}

impl From<UsageRecord> for Usage {
    fn from(r: UsageRecord) -> Self {
        Usage {
            accumulated: r.accumulated,
            priority: r.priority,
            updated_at: Timestamp::from_unix_millis(r.updated_at),
        }
    }
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FactorRecord {
    factor: f64,
    set_at: u64,
}

impl From<Factor> for FactorRecord {
    fn from(f: Factor) -> Self {
        FactorRecord {
            factor: f.factor,
            set_at: f.set_at.as_unix_millis(),
        }
    }
}

impl From<FactorRecord> for Factor {
    fn from(r: FactorRecord) -> Self {
        Factor {
            factor: r.factor,
            set_at: Timestamp::from_unix_millis(r.set_at),
        }
    }
}

#[derive(Serialize, Deserialize)]
pub(crate) struct FavoursRecord {
    given: f64,
    received: f64,
    updated_at: u64,
}

impl From<Favours> for FavoursRecord {
    fn from(f: Favours) -> Self {
        FavoursRecord {
            given: f.given,
            received: f.received,
            updated_at: f.updated_at.as_unix_millis(),
        }
    }
}

impl From<FavoursRecord> for Favours {
    fn from(r: FavoursRecord) -> Self {
        Favours {
            given: r.given,
            received: r.received,
            updated_at: Timestamp::from_unix_millis(r.updated_at),
        }
    }
}

/// A claim; the key is its id.
#[derive(Serialize, Deserialize)]
pub(crate) struct ClaimRecord {
    #[serde(with = "serde_bytes")]
    peer: Vec<u8>,
    cluster: u64,
    proc: u32,
    /// 0: we submit, 1: we execute.
    side: u8,
    lease_expires: u64,
}

impl From<&Claim> for ClaimRecord {
    fn from(c: &Claim) -> Self {
        ClaimRecord {
            peer: c.peer.to_peer_id_bytes().to_vec(),
            cluster: c.job.cluster,
            proc: c.job.proc,
            side: match c.side {
                Side::Submit => 0,
                Side::Execute => 1,
            },
            lease_expires: c.lease_expires.as_unix_millis(),
        }
    }
}

impl ClaimRecord {
    pub(crate) fn into_claim(self, id: Vec<u8>) -> Result<Claim, String> {
        let peer = AgentId::from_peer_id_bytes(&self.peer)
            .ok_or_else(|| "the peer is not an agent id".to_owned())?;
        let side = match self.side {
            0 => Side::Submit,
            1 => Side::Execute,
            n => return Err(format!("side {n} is neither submit (0) nor execute (1)")),
        };
        Ok(Claim {
            id,
            peer,
            job: JobId {
                cluster: self.cluster,
                proc: self.proc,
            },
            side,
            lease_expires: Timestamp::from_unix_millis(self.lease_expires),
        })
    }
}

/// Hex, for claim ids in messages.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_keys_sort_numerically_and_parse_back() {
        let a = job_key(JobId::new(2, 10));
        let b = job_key(JobId::new(10, 2));
        assert!(a < b);
        assert_eq!(parse_job_key(&b), Some(JobId::new(10, 2)));
        assert_eq!(parse_job_key(&b[..11]), None);
    }
}
