//! [`Batch`]: changes to many jobs that the store makes as one write, as
//! HTCondor's job-queue log commits a transaction: `rm`, `hold`, `release`
//! and `qedit` of a whole cluster or constraint change every selected job
//! or none of them.
//!
//! # What [`crate::Store::apply`] guarantees
//!
//! - **All or none.** Every write is checked before anything is written
//!   (names, syntax, sizes, the job being in the queue, the result within
//!   the limits); a batch that fails anywhere changes nothing and its
//!   error names the job. After a crash a batch is there entirely or not
//!   at all, the same guarantee each single-job call gives.
//! - **One durable write.** The sled store makes the whole batch in one
//!   transaction together with its tally (the store's version goes up by
//!   one, its record counts follow the jobs that moved), then flushes once
//!   and records the tally as acknowledged once: a batch of 100,000 jobs
//!   costs one disk flush, not 100,000. The checks that detect a store cut
//!   short ([`crate::SledStore`]'s module docs) hold unchanged.
//! - **In order.** Writes apply in the order they were added, each seeing
//!   the ones before it; moves to the history take consecutive history
//!   numbers in that order, so `history` lists them newest (last added)
//!   first.
//! - **Each write is its single-job call.** [`Batch::update`] does what
//!   [`crate::Store::update`] does and [`Batch::move_to_history`] what
//!   [`crate::Store::move_to_history`] does; the single-job calls are
//!   batches of one inside the sled store.
//!
//! The sled store holds every other write off while a batch is made (sled
//! runs one transaction at a time): about a second for 100,000 updates,
//! two for 100,000 moves to the history, on the 2-core development VM.

use std::sync::Arc;

use starling_protocol::identity::Timestamp;

use crate::job::{check_changes, Checked};
use crate::{Change, Error, JobId, MAX_PROCS};

/// Most writes one batch may hold: ten of the largest clusters.
pub const MAX_BATCH: usize = 10 * MAX_PROCS;

/// Writes to many jobs, made all at once by [`crate::Store::apply`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    writes: Vec<Write>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Write {
    id: JobId,
    /// Shared by writes that make the same changes (a cluster held with
    /// one reason): checked once, allocated once.
    changes: Arc<[Change]>,
    /// `Some`: the job leaves for the history, stamped with this time.
    finished_at: Option<Timestamp>,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    /// With room for `n` writes.
    pub fn with_capacity(n: usize) -> Batch {
        Batch {
            writes: Vec::with_capacity(n),
        }
    }

    /// Applies `changes` in order to the job, as [`crate::Store::update`].
    /// Writes may share their changes (`Arc<[Change]>`).
    pub fn update(&mut self, id: JobId, changes: impl Into<Arc<[Change]>>) {
        self.writes.push(Write {
            id,
            changes: changes.into(),
            finished_at: None,
        });
    }

    /// Applies the final `changes` and moves the job to the history,
    /// stamped `finished_at`, as [`crate::Store::move_to_history`].
    pub fn move_to_history(
        &mut self,
        id: JobId,
        changes: impl Into<Arc<[Change]>>,
        finished_at: Timestamp,
    ) {
        self.writes.push(Write {
            id,
            changes: changes.into(),
            finished_at: Some(finished_at),
        });
    }

    /// How many writes it holds.
    pub fn len(&self) -> usize {
        self.writes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.writes.is_empty()
    }

    /// Checks every write's changes, before a store writes anything. A list
    /// of changes the same as the write's before it (shared, or equal) is
    /// checked once: the writes of one action share theirs.
    pub(crate) fn check(&self) -> Result<Vec<CheckedWrite>, Error> {
        if self.writes.len() > MAX_BATCH {
            return Err(Error::invalid(format!(
                "{} job writes in one batch, more than the limit of {MAX_BATCH}",
                self.writes.len()
            )));
        }
        let mut checked: Vec<CheckedWrite> = Vec::with_capacity(self.writes.len());
        for (i, write) in self.writes.iter().enumerate() {
            let same = i
                .checked_sub(1)
                .map(|before| (&self.writes[before].changes, &checked[before].changes))
                .filter(|(before, _)| {
                    Arc::ptr_eq(before, &write.changes) || before[..] == write.changes[..]
                });
            let changes = match same {
                Some((_, done)) => done.clone(),
                None => check_changes(&write.changes)
                    .map_err(|e| in_job(write.id, e))?
                    .into(),
            };
            checked.push(CheckedWrite {
                id: write.id,
                changes,
                finished_at: write.finished_at,
            });
        }
        Ok(checked)
    }
}

/// A write whose changes passed [`check_changes`].
#[derive(Clone, Debug)]
pub(crate) struct CheckedWrite {
    pub(crate) id: JobId,
    pub(crate) changes: Arc<[Checked]>,
    pub(crate) finished_at: Option<Timestamp>,
}

impl CheckedWrite {
    /// One write, for the single-job calls.
    pub(crate) fn one(
        id: JobId,
        changes: &[Change],
        finished_at: Option<Timestamp>,
    ) -> Result<CheckedWrite, Error> {
        Ok(CheckedWrite {
            id,
            changes: check_changes(changes)?.into(),
            finished_at,
        })
    }
}

/// A batch's error, saying which job it is about where the error does not
/// already (a job that is not there names itself).
pub(crate) fn in_job(id: JobId, e: Error) -> Error {
    match e {
        Error::InvalidAttribute { name, reason } => Error::InvalidAttribute {
            name,
            reason: format!("{reason} (job {id})"),
        },
        Error::Invalid { what } => Error::Invalid {
            what: format!("job {id}: {what}"),
        },
        e => e,
    }
}
