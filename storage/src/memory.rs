//! [`MemoryStore`]: the store in memory, for tests of the code that uses it.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};

use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{Envelope, Kind, PublicKey, Timestamp, MAX_ENVELOPE_LEN};

use crate::accounting::check_label;
use crate::batch::{in_job, CheckedWrite};
use crate::claim::check_claim_id;
use crate::job::{check_checkpoint, Attrs, MAX_PROCS};
use crate::{Batch, Change, Claim, Error, Factor, Favours, HistoryEntry, JobId, Store, Usage};

/// The store in memory: the same behaviour as [`crate::SledStore`], with
/// nothing written anywhere. Everything is lost when it is dropped.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    next_cluster: u64,
    jobs: BTreeMap<JobId, Attrs>,
    history_seq: u64,
    history: BTreeMap<u64, (JobId, Timestamp, Attrs)>,
    ads: BTreeMap<(u16, [u8; 32]), Envelope>,
    usage: BTreeMap<String, Usage>,
    favours: BTreeMap<String, Favours>,
    factors: BTreeMap<String, Factor>,
    claims: BTreeMap<Vec<u8>, Claim>,
    checkpoints: BTreeMap<JobId, Vec<u8>>,
    sequences: BTreeMap<u16, u64>,
}

impl MemoryStore {
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        // Every call checks before it changes anything, so a panic while the
        // lock was held left no half-made change behind.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl MemoryStore {
    /// Makes checked job writes all or none, as the sled store does: each
    /// is worked out on the side, in order, and the queue changes only once
    /// every one has succeeded.
    fn write_jobs(&self, writes: &[CheckedWrite]) -> Result<(), Error> {
        let mut state = self.state();
        // The touched jobs as the writes leave them (`None`: gone to the
        // history), and the history records they add.
        let mut touched: BTreeMap<JobId, Option<Attrs>> = BTreeMap::new();
        let mut retired = Vec::new();
        for write in writes {
            let id = write.id;
            let current = match touched.get(&id) {
                Some(attrs) => attrs.clone(),
                None => state.jobs.get(&id).cloned(),
            };
            let mut attrs = current.ok_or(Error::NoSuchJob { id })?;
            attrs.apply(&write.changes).map_err(|e| in_job(id, e))?;
            attrs.encode().map_err(|e| in_job(id, e))?;
            match write.finished_at {
                None => {
                    touched.insert(id, Some(attrs));
                }
                Some(at) => {
                    touched.insert(id, None);
                    retired.push((id, at, attrs));
                }
            }
        }
        for (id, attrs) in touched {
            match attrs {
                Some(attrs) => state.jobs.insert(id, attrs),
                None => state.jobs.remove(&id),
            };
        }
        for record in retired {
            state.history_seq += 1;
            let seq = state.history_seq;
            state.history.insert(seq, record);
        }
        Ok(())
    }
}

/// Reads stored attributes back; they were checked on the way in.
fn ad(id: JobId, attrs: &Attrs) -> Result<ClassAd, Error> {
    attrs
        .to_ad(&format!("jobs/{id}"))
        .map_err(|what| Error::Corrupt {
            path: "<memory>".into(),
            what,
            source: None,
        })
}

impl Store for MemoryStore {
    fn submit(&self, procs: &[ClassAd]) -> Result<u64, Error> {
        if procs.is_empty() || procs.len() > MAX_PROCS {
            return Err(Error::invalid(format!(
                "a cluster has 1 to {MAX_PROCS} procs, not {}",
                procs.len()
            )));
        }
        let mut state = self.state();
        let cluster = state.next_cluster.max(1);
        let mut jobs = Vec::with_capacity(procs.len());
        for (proc, ad) in procs.iter().enumerate() {
            let id = JobId::new(cluster, proc as u32);
            let mut attrs = Attrs::from_ad(ad)?;
            attrs.stamp(id);
            attrs.encode()?;
            jobs.push((id, attrs));
        }
        state.jobs.extend(jobs);
        state.next_cluster = cluster + 1;
        Ok(cluster)
    }

    fn next_cluster(&self) -> Result<u64, Error> {
        Ok(self.state().next_cluster.max(1))
    }

    fn job(&self, id: JobId) -> Result<Option<ClassAd>, Error> {
        self.state()
            .jobs
            .get(&id)
            .map(|attrs| ad(id, attrs))
            .transpose()
    }

    fn jobs(&self) -> Result<Vec<(JobId, ClassAd)>, Error> {
        self.state()
            .jobs
            .iter()
            .map(|(&id, attrs)| Ok((id, ad(id, attrs)?)))
            .collect()
    }

    fn update(&self, id: JobId, changes: &[Change]) -> Result<(), Error> {
        self.write_jobs(&[CheckedWrite::one(id, changes, None)?])
    }

    fn move_to_history(
        &self,
        id: JobId,
        changes: &[Change],
        finished_at: Timestamp,
    ) -> Result<(), Error> {
        self.write_jobs(&[CheckedWrite::one(id, changes, Some(finished_at))?])
    }

    fn apply(&self, batch: &Batch) -> Result<(), Error> {
        self.write_jobs(&batch.check()?)
    }

    fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, Error> {
        self.state()
            .history
            .values()
            .rev()
            .take(limit)
            .map(|(id, finished_at, attrs)| {
                Ok(HistoryEntry {
                    id: *id,
                    finished_at: *finished_at,
                    ad: ad(*id, attrs)?,
                })
            })
            .collect()
    }

    fn put_ad(&self, envelope: &Envelope) -> Result<bool, Error> {
        let len = envelope.to_bytes().len();
        if len > MAX_ENVELOPE_LEN {
            return Err(Error::invalid(format!(
                "the envelope is {len} bytes, more than the limit of {MAX_ENVELOPE_LEN}"
            )));
        }
        let header = envelope.header();
        let key = (header.kind.as_u16(), *header.signer.as_bytes());
        let mut state = self.state();
        if let Some(old) = state.ads.get(&key) {
            if old.header().seq >= header.seq {
                return Ok(false);
            }
        }
        state.ads.insert(key, envelope.clone());
        Ok(true)
    }

    fn ads(&self, kind: Kind) -> Result<Vec<Envelope>, Error> {
        let kind = kind.as_u16();
        Ok(self
            .state()
            .ads
            .range((kind, [0; 32])..=(kind, [0xff; 32]))
            .map(|(_, e)| e.clone())
            .collect())
    }

    fn remove_ad(&self, kind: Kind, signer: &PublicKey) -> Result<bool, Error> {
        let key = (kind.as_u16(), *signer.as_bytes());
        Ok(self.state().ads.remove(&key).is_some())
    }

    fn expire(&self, now: Timestamp) -> Result<usize, Error> {
        let mut state = self.state();
        let before = state.ads.len();
        state.ads.retain(|_, e| e.header().expires_at > now);
        Ok(before - state.ads.len())
    }

    fn update_usage(&self, user: &str, f: &dyn Fn(Option<Usage>) -> Usage) -> Result<Usage, Error> {
        check_label("user", user)?;
        let mut state = self.state();
        let new = f(state.usage.get(user).copied());
        new.check(user)?;
        state.usage.insert(user.to_owned(), new);
        Ok(new)
    }

    fn usage(&self) -> Result<Vec<(String, Usage)>, Error> {
        Ok(self
            .state()
            .usage
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect())
    }

    fn update_favours(
        &self,
        domain: &str,
        f: &dyn Fn(Option<Favours>) -> Favours,
    ) -> Result<Favours, Error> {
        check_label("domain", domain)?;
        let mut state = self.state();
        let new = f(state.favours.get(domain).copied());
        new.check(domain)?;
        state.favours.insert(domain.to_owned(), new);
        Ok(new)
    }

    fn favours(&self) -> Result<Vec<(String, Favours)>, Error> {
        Ok(self
            .state()
            .favours
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect())
    }

    fn set_factor(&self, user: &str, factor: Factor) -> Result<(), Error> {
        check_label("user", user)?;
        factor.check(user)?;
        self.state().factors.insert(user.to_owned(), factor);
        Ok(())
    }

    fn factors(&self) -> Result<Vec<(String, Factor)>, Error> {
        Ok(self
            .state()
            .factors
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .collect())
    }

    fn put_claim(&self, claim: &Claim) -> Result<(), Error> {
        check_claim_id(&claim.id)?;
        self.state().claims.insert(claim.id.clone(), claim.clone());
        Ok(())
    }

    fn remove_claim(&self, id: &[u8]) -> Result<bool, Error> {
        Ok(self.state().claims.remove(id).is_some())
    }

    fn claims(&self) -> Result<Vec<Claim>, Error> {
        Ok(self.state().claims.values().cloned().collect())
    }

    fn put_checkpoint(&self, id: JobId, record: &[u8]) -> Result<(), Error> {
        check_checkpoint(id, record)?;
        let mut state = self.state();
        if !state.jobs.contains_key(&id) {
            return Err(Error::NoSuchJob { id });
        }
        state.checkpoints.insert(id, record.to_vec());
        Ok(())
    }

    fn checkpoint(&self, id: JobId) -> Result<Option<Vec<u8>>, Error> {
        Ok(self.state().checkpoints.get(&id).cloned())
    }

    fn remove_checkpoint(&self, id: JobId) -> Result<bool, Error> {
        Ok(self.state().checkpoints.remove(&id).is_some())
    }

    fn checkpoints(&self) -> Result<Vec<(JobId, Vec<u8>)>, Error> {
        Ok(self
            .state()
            .checkpoints
            .iter()
            .map(|(id, record)| (*id, record.clone()))
            .collect())
    }

    fn next_sequence(&self, kind: Kind) -> Result<u64, Error> {
        let mut state = self.state();
        let seq = state.sequences.entry(kind.as_u16()).or_insert(0);
        *seq += 1;
        Ok(*seq)
    }
}
