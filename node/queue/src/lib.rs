//! The submit agent's job queue: HTCondor's schedd queue, kept in the
//! agent's store and cached in memory.
//!
//! Every change is written to the store (flushed) before it is applied to
//! the cache and announced, so a change a caller saw acknowledged survives
//! `kill -9`. One change at a time: each write holds the queue's write
//! lock from reading the job it decides on, through the store, to the
//! cache, so the cache always says what the store says and nothing
//! decides on a job that another write is changing (a claim recorded for a
//! job the user has just held or removed is refused, not written over the
//! hold).
//!
//! `rm`, `hold`, `release` and `qedit` of many jobs ([`Queue::act_as`],
//! [`Queue::edit_as`]) are one transaction, as HTCondor's job-queue log
//! makes them: every selected job changes or none does, in one store
//! write ([`starling_storage::Batch`], one flush for 100,000 jobs), and
//! only once it is on disk are the cache changed, the negotiator told
//! (which stops the runs of held and removed jobs) and the user logs
//! written (one append and one sync per log). A failure changes nothing
//! and tells no one, so no job is ever left shown as running that is not.
//! Jobs keep HTCondor's status codes and attribute names:
//!
//! ```text
//! submit ─▶ 1 Idle ─started─▶ 2 Running ─completed─▶ 4 Completed (history)
//!             ▲   ◀─evicted──────┘  │ ─held──▶ 5 Held ─release─▶ 1 Idle
//!             └──────────── rm: 3 Removed (history; a running job once
//!                                          its run is stopped)
//! ```
//!
//! [`Event`]s tell the negotiator what changed; the runner calls
//! ([`Queue::started`], [`Queue::completed`]...) are how it reports back.
//!
//! The crate, file by file:
//!
//! - [`status`] and [`hold_codes`]: HTCondor's job status and hold reason
//!   codes, and a status's letter and words ([`name_of`]).
//! - `attributes`: the job attributes the queue names (Starling's own:
//!   [`EXECUTE_AGENT`], [`CKPT_BYTES`], [`RECENT_MIGRATIONS`]...) and
//!   reads ([`status_of`], [`recent_moves`]), and [`quote`].
//! - `selection`: which jobs a request is about ([`Selection`], [`Target`]).
//! - `error`: what the queue refuses or fails at ([`QueueError`]).
//! - `queue`: the [`Queue`] itself, its store and cache, the write lock
//!   and the one transaction every change goes through, with its
//!   [`Event`]s; and in `queue/`, what the changes are:
//!   - `queue/actions.rs`: `rm`, `hold`, `release` and `qedit` of many
//!     jobs ([`Action`], [`Acted`], [`PROTECTED`]);
//!   - `queue/runs.rs`: the runner's reports on a job's runs
//!     ([`Completion`]);
//!   - `queue/checkpoints.rs`: checkpoint and migration records
//!     ([`Checkpointed`]).
//! - [`userlog`]: the job's user log, written as HTCondor writes it.
//!
//! Data flows one way: `queue` and its children use the plain modules
//! above it (codes, attributes, selection, error, user log), which use
//! nothing of the queue.

pub mod hold_codes;
pub mod status;
pub mod userlog;

mod attributes;
mod error;
mod queue;
mod selection;

pub use attributes::{
    quote, recent_moves, status_of, BADPUT, CKPT_BYTES, CKPT_HOSTS, CKPT_LOCAL_ONLY, CKPT_LOST,
    CKPT_REPLICAS, CKPT_SEQUENCE, EXECUTE_AGENT, EXECUTE_DOMAIN, LAST_MIGRATION, LOCAL_PID,
    LOCAL_PID_START, MIGRATION_TIME, NUM_MIGRATIONS, RECENT_MIGRATIONS,
};
pub use error::QueueError;
pub use queue::actions::{Acted, Action, MAX_REASON_LEN, PROTECTED};
pub use queue::checkpoints::Checkpointed;
pub use queue::runs::Completion;
pub use queue::{Event, Queue, EVENT_CAPACITY};
pub use selection::{Selection, Target, MAX_TARGETS};
pub use status::name_of;
