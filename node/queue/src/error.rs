//! What the queue refuses or fails at ([`QueueError`]), for every module
//! of the crate. It uses nothing else of the crate.

use starling_storage::{Error as StoreError, JobId};

/// What the queue refused or failed at.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("{0}")]
    Invalid(String),
    #[error("job {0} is not in the queue")]
    NoSuchJob(JobId),
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("the store task failed: {0}")]
    Task(String),
}
