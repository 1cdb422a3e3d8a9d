//! A job's checkpoints and moves as the queue records them: the
//! checkpoint record kept in the store ([`Queue::checkpointed`],
//! [`Queue::checkpoint`]), its replicas and its loss (`StarlingCkpt*`),
//! and the moves of a running job to another machine
//! ([`Queue::migrated`]). Its changes go through the queue's `update`;
//! the run's own record (its start, eviction and badput) is `runs`'.

use starling_storage::{Change, JobId};

use super::{blocking, Queue};
use crate::attributes::{
    int, quote, real, recent_moves, CKPT_BYTES, CKPT_HOSTS, CKPT_LOCAL_ONLY, CKPT_LOST,
    CKPT_REPLICAS, CKPT_SEQUENCE, LAST_MIGRATION, MIGRATION_TIME, NUM_MIGRATIONS,
    RECENT_MIGRATIONS,
};
use crate::error::QueueError;
use crate::userlog;

/// A checkpoint the execute agent took, as the queue records it.
#[derive(Debug, Clone)]
pub struct Checkpointed {
    pub sequence: u64,
    pub taken_secs: i64,
    /// Wall time of work it saves beyond the previous one.
    pub run_ms: u64,
    pub bytes: u64,
    /// The hosts of the store peers keeping it.
    pub replicas: Vec<String>,
}

fn replica_changes(sequence: u64, hosts: &[String]) -> Vec<Change> {
    vec![
        Change::set(CKPT_SEQUENCE, sequence.to_string()),
        Change::set(CKPT_REPLICAS, hosts.len().to_string()),
        Change::set(CKPT_HOSTS, quote(&hosts.join(","))),
        Change::set(CKPT_LOCAL_ONLY, hosts.is_empty().to_string()),
    ]
}

impl Queue {
    /// The job moved: it started on `to` after `secs` seconds of moving,
    /// `asked_at` (unix seconds) being when the move was decided.
    pub async fn migrated(
        &self,
        id: JobId,
        to: &str,
        reason: &str,
        secs: f64,
        asked_at: i64,
    ) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        let now = self.now();
        let mut moves = recent_moves(&ad);
        moves.push(asked_at.min(now));
        let moves = starling_policies::migration::recent_moves(&moves, now);
        let list: Vec<String> = moves.iter().map(i64::to_string).collect();
        let total = real(&ad, MIGRATION_TIME).unwrap_or(0.0) + secs.max(0.0);
        self.update(
            id,
            vec![
                Change::set(
                    NUM_MIGRATIONS,
                    (int(&ad, NUM_MIGRATIONS).unwrap_or(0) + 1).to_string(),
                ),
                Change::set(MIGRATION_TIME, format!("{total:.3}")),
                Change::set(RECENT_MIGRATIONS, format!("{{{}}}", list.join(", "))),
                Change::set(LAST_MIGRATION, quote(&format!("to {to}: {reason}"))),
            ],
        )
        .await
    }

    /// The job's latest checkpoint record, as [`Queue::checkpointed`] kept
    /// it.
    pub async fn checkpoint(&self, id: JobId) -> Option<Vec<u8>> {
        let store = self.inner.store.clone();
        blocking(move || store.checkpoint(id)).await.ok()?.ok()?
    }

    /// Every checkpoint record, by job (jobs that left the queue too,
    /// until [`Queue::forget_checkpoint`]).
    pub async fn checkpoints(&self) -> Vec<(JobId, Vec<u8>)> {
        let store = self.inner.store.clone();
        blocking(move || store.checkpoints())
            .await
            .ok()
            .and_then(Result::ok)
            .unwrap_or_default()
    }

    /// Drops the job's checkpoint record.
    pub async fn forget_checkpoint(&self, id: JobId) {
        let store = self.inner.store.clone();
        let _ = blocking(move || store.remove_checkpoint(id)).await;
    }

    /// Records a checkpoint the job took: `record` (durable before this
    /// returns, when `restorable`: the job restarts from it) and HTCondor's
    /// attributes (`NumCkpts`, `LastCkptTime`, `CommittedTime`,
    /// `CommittedSlotTime`) with ours (`StarlingCkpt*`). A checkpoint kept
    /// by no store peer is counted but does not replace a restorable one.
    pub async fn checkpointed(
        &self,
        id: JobId,
        checkpoint: &Checkpointed,
        record: Option<Vec<u8>>,
    ) -> Result<(), QueueError> {
        let Some(ad) = self.job(id) else {
            return Err(QueueError::NoSuchJob(id));
        };
        if let Some(record) = record {
            let store = self.inner.store.clone();
            blocking(move || store.put_checkpoint(id, &record)).await??;
        }
        let count = |name: &str| int(&ad, name).unwrap_or(0);
        let saved = i64::try_from(checkpoint.run_ms / 1000).unwrap_or(i64::MAX);
        let cpus = int(&ad, "RequestCpus").unwrap_or(1).max(1);
        let mut c = vec![
            Change::set("NumCkpts", (count("NumCkpts") + 1).to_string()),
            Change::set("LastCkptTime", checkpoint.taken_secs.to_string()),
            Change::set(
                "CommittedTime",
                (count("CommittedTime") + saved).to_string(),
            ),
            Change::set(
                "CommittedSlotTime",
                (count("CommittedSlotTime") + saved * cpus).to_string(),
            ),
            Change::set(CKPT_BYTES, checkpoint.bytes.to_string()),
            Change::set(CKPT_LOCAL_ONLY, checkpoint.replicas.is_empty().to_string()),
        ];
        if !checkpoint.replicas.is_empty() {
            c.extend(replica_changes(checkpoint.sequence, &checkpoint.replicas));
        }
        self.update(id, c).await?;
        let event = userlog::Event::Checkpointed {
            cpu: userlog::CpuTime::default(),
            sent_bytes: checkpoint.bytes,
        };
        self.log(id, &ad, &event).await;
        Ok(())
    }

    /// The job's checkpoint moved to other store peers (repair).
    pub async fn replicas_moved(
        &self,
        id: JobId,
        sequence: u64,
        replicas: &[String],
        record: Vec<u8>,
    ) -> Result<(), QueueError> {
        let store = self.inner.store.clone();
        blocking(move || store.put_checkpoint(id, &record)).await??;
        if self.job(id).is_none() {
            return Ok(());
        }
        self.update(id, replica_changes(sequence, replicas)).await
    }

    /// The job's checkpoint is gone (every store peer keeping it left the
    /// pool for longer than its lease): it starts over at its next run.
    pub async fn checkpoint_lost(&self, id: JobId) -> Result<(), QueueError> {
        let mut c = replica_changes(0, &[]);
        c.push(Change::set(
            CKPT_LOST,
            quote("every store peer keeping it left the pool"),
        ));
        self.update(id, c).await
    }
}
