//! The agent's disk state: whether its data directory is full, watched so
//! that a full disk is a state the agent lives through, not a failure.
//!
//! The store ([`starling_storage::space::Guarded`]) notices a full disk
//! first, when a write fails for space or free space falls below its
//! reserve. A task owned by the supervisor asks it every [`CHECK_INTERVAL`]
//! ([`Guarded::check`], which also leaves the state once space is back)
//! and publishes the answer on a [`watch`] channel that the advertiser and
//! the control server read. On each change it logs once and tells the
//! supervisor, which has the advertiser rebuild the ad (`StarlingDiskFull`,
//! `START` false) and the startd evaluate its owner policy at once (the
//! machine shows Owner, claims are refused). While full, the control server
//! refuses submissions with the reason; jobs already running go on.
//!
//! An agent without a store on disk (the in-process testnet) never fills:
//! its channel says [`Space::Ok`] for ever.

use std::sync::Arc;
use std::time::Duration;

use ractor::DerivedActorRef;
use starling_storage::space::{Guarded, Space};
use tokio::sync::watch;
use tracing::Instrument as _;

/// The message the supervisor gets when the disk state changed.
#[derive(Debug)]
pub struct Changed;

/// How often the disk state is checked: a `statvfs` each time, and while
/// full a trial write once there seems to be room again.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(1);

/// The receiving end, for the advertiser and the control server.
pub type Receiver = watch::Receiver<Space>;

/// Starts watching `store`'s disk; `None` (no store on disk) gives a
/// channel that stays [`Space::Ok`]. The task ends when the supervisor
/// is gone; abort it on the way out (it holds the store open).
pub fn watch(
    store: Option<Arc<Guarded>>,
    supervisor: DerivedActorRef<Changed>,
) -> (Receiver, Option<tokio::task::JoinHandle<()>>) {
    let Some(store) = store else {
        let (_, receiver) = watch::channel(Space::Ok);
        return (receiver, None);
    };
    let first = store.space();
    if let Space::Full { reason, .. } = &first {
        tracing::warn!(%reason, "the data directory is full: taking no new work until space returns");
    }
    let (sender, receiver) = watch::channel(first);
    let task = tokio::spawn(
        async move {
            loop {
                tokio::time::sleep(CHECK_INTERVAL).await;
                let checking = store.clone();
                let Ok(now) = tokio::task::spawn_blocking(move || checking.check()).await else {
                    return;
                };
                let was_full = sender.borrow().is_full();
                if now.is_full() == was_full {
                    continue;
                }
                match &now {
                    Space::Full { reason, .. } => tracing::warn!(
                        %reason,
                        "the data directory is full: taking no new work until space returns"
                    ),
                    Space::Ok => {
                        tracing::info!("space is back in the data directory: taking work again")
                    }
                }
                sender.send_replace(now);
                if supervisor.send_message(Changed).is_err() {
                    return;
                }
            }
        }
        .instrument(tracing::Span::current()),
    );
    (receiver, Some(task))
}

/// The reason to give a user while the disk is full, `None` when it is not.
pub fn full_reason(disk: &Receiver) -> Option<String> {
    match &*disk.borrow() {
        Space::Full { reason, .. } => Some(reason.clone()),
        Space::Ok => None,
    }
}
