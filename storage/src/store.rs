//! The [`Store`] trait: everything an agent keeps across restarts.

use starling_protocol::classad::ClassAd;
use starling_protocol::identity::{Envelope, Kind, PublicKey, Timestamp};

use crate::{Batch, Change, Claim, Error, Factor, Favours, HistoryEntry, JobId, Usage};

/// An agent's durable state.
///
/// # Durability
///
/// A mutating call returns `Ok` only once its change is on disk: it survives
/// the process being killed (`kill -9`) the moment the call returns. Each call
/// is atomic: after a crash its change is there entirely or not at all, never
/// in part (a cluster's procs, an update's attributes, a job's move to
/// history). A call that returns `Err` has changed nothing. [`crate::SledStore`]
/// flushes (fsync) before returning, so each mutating call costs a disk
/// flush; batch work into one call where the API allows (a cluster of procs,
/// several attributes in one update, many jobs in one [`Store::apply`]).
/// [`crate::MemoryStore`] keeps the same
/// rules except that it forgets everything when dropped.
///
/// # Calling
///
/// Calls block on disk I/O: call them from `spawn_blocking` (or a thread of
/// their own), never on an async worker. The store is `Send + Sync`; calls
/// from several threads are serialised per record and each stays atomic.
///
/// Reads return what the last completed writes left; lists are in key order
/// unless said otherwise.
pub trait Store: Send + Sync {
    /// Queues a new cluster: one job per ad, procs numbered from 0 in order,
    /// under the next cluster id (ids start at 1 and are never reused, even
    /// after their jobs left the queue). Sets each job's `ClusterId` and
    /// `ProcId`. Every ad is checked before anything is written. Returns the
    /// cluster id.
    fn submit(&self, procs: &[ClassAd]) -> Result<u64, Error>;

    /// The cluster id the next [`Store::submit`] will use (a submit file
    /// may mention it as `$(Cluster)`). Only a caller that serialises its
    /// submits can rely on it.
    fn next_cluster(&self) -> Result<u64, Error>;

    /// The job's ad, if it is in the queue.
    fn job(&self, id: JobId) -> Result<Option<ClassAd>, Error>;

    /// Every job in the queue, by id.
    fn jobs(&self) -> Result<Vec<(JobId, ClassAd)>, Error>;

    /// Applies `changes` in order to one job, all or none. Every change is
    /// checked first (names, syntax, sizes; `ClusterId` and `ProcId` belong
    /// to the queue); the error names the attribute. Fails with
    /// [`Error::NoSuchJob`] if the job is not in the queue.
    fn update(&self, id: JobId, changes: &[Change]) -> Result<(), Error>;

    /// Applies the final `changes` (its `JobStatus`, `CompletionDate`...) and
    /// moves the job from the queue to the history, stamped `finished_at`:
    /// after a crash it is in one place or the other, never both or neither.
    fn move_to_history(
        &self,
        id: JobId,
        changes: &[Change],
        finished_at: Timestamp,
    ) -> Result<(), Error>;

    /// Makes every write of `batch` (updates and moves to the history, in
    /// order) as one change: all of them or, if any fails its checks or
    /// names a job not in the queue, none, with an error naming the job.
    /// One durable write for the whole batch (see [`crate::batch`]): how
    /// `rm`, `hold`, `release` and `qedit` of a cluster stay atomic and
    /// fast. An empty batch writes nothing.
    fn apply(&self, batch: &Batch) -> Result<(), Error>;

    /// The last `limit` jobs to leave the queue, newest first (the order they
    /// were moved, whatever their `finished_at`).
    fn history(&self, limit: usize) -> Result<Vec<HistoryEntry>, Error>;

    /// Keeps a verified ad in the view of the pool, under its kind and
    /// signer, replacing the one before it. An envelope whose sequence number
    /// is not above the kept one's is ignored and `false` returned, so the
    /// view never goes back in time, even across a restart. The store does
    /// not verify signatures: verify before calling.
    fn put_ad(&self, envelope: &Envelope) -> Result<bool, Error>;

    /// The kept ads of one kind, by signer. They were verified when they
    /// arrived; open them again to check their window against the clock.
    fn ads(&self, kind: Kind) -> Result<Vec<Envelope>, Error>;

    /// Forgets one signer's ad of one kind; `false` if there was none.
    fn remove_ad(&self, kind: Kind, signer: &PublicKey) -> Result<bool, Error>;

    /// Forgets every ad whose expiry is at or before `now` (pass `now` less
    /// any allowed clock skew). Returns how many went.
    fn expire(&self, now: Timestamp) -> Result<usize, Error>;

    /// Replaces a user's usage with `f(old)`, atomically. `f` is the policy
    /// (decay the old figure to now, add the new charge); it may be called
    /// more than once, so it must have no side effects. The result must be
    /// finite and not negative. Returns the new figure.
    fn update_usage(&self, user: &str, f: &dyn Fn(Option<Usage>) -> Usage) -> Result<Usage, Error>;

    /// Every user's usage, by user.
    fn usage(&self) -> Result<Vec<(String, Usage)>, Error>;

    /// Replaces the favours exchanged with a domain with `f(old)`,
    /// atomically, as [`Store::update_usage`] does.
    fn update_favours(
        &self,
        domain: &str,
        f: &dyn Fn(Option<Favours>) -> Favours,
    ) -> Result<Favours, Error>;

    /// Every domain's favours, by domain.
    fn favours(&self) -> Result<Vec<(String, Favours)>, Error>;

    /// Records a user's priority factor (the factor must be finite and at
    /// least 1).
    fn set_factor(&self, user: &str, factor: Factor) -> Result<(), Error>;

    /// Every factor set here, by user.
    fn factors(&self) -> Result<Vec<(String, Factor)>, Error>;

    /// Records a claim, or replaces the one with its id (a renewed lease).
    fn put_claim(&self, claim: &Claim) -> Result<(), Error>;

    /// Forgets a claim; `false` if there was none.
    fn remove_claim(&self, id: &[u8]) -> Result<bool, Error>;

    /// Every claim, by id. Lapsed leases stay until removed: what to do with
    /// a lapsed claim is the caller's decision.
    fn claims(&self) -> Result<Vec<Claim>, Error>;

    /// Records the job's latest checkpoint (opaque bytes: the node's signed
    /// manifest, at most [`crate::MAX_CHECKPOINT_LEN`]), replacing the one
    /// before it. The job must be in the queue ([`Error::NoSuchJob`]
    /// otherwise). On disk before `Ok`, as every change.
    fn put_checkpoint(&self, id: JobId, record: &[u8]) -> Result<(), Error>;

    /// The job's latest checkpoint record, if one was put and not removed.
    /// It outlives the job's move to the history, so that its chunks can
    /// still be released: remove it when they are.
    fn checkpoint(&self, id: JobId) -> Result<Option<Vec<u8>>, Error>;

    /// Forgets the job's checkpoint record; `false` if there was none.
    fn remove_checkpoint(&self, id: JobId) -> Result<bool, Error>;

    /// Every checkpoint record, by job id.
    fn checkpoints(&self) -> Result<Vec<(JobId, Vec<u8>)>, Error>;

    /// The next sequence number for envelopes of `kind` this agent signs:
    /// 1, 2, 3... and never one handed out before, even after a crash.
    fn next_sequence(&self, kind: Kind) -> Result<u64, Error>;
}
