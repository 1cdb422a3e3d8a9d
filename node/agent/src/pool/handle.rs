//! How the other sides reach the pool's actors, the view and the
//! advertiser: through the supervisor, which restarts them when they fail,
//! so a question always goes to the current ones.
//!
//! A [`Pool`] hides the supervisor's own message type behind
//! [`PoolRequest`] (a ractor `DerivedActorRef`), so the sides that use it
//! (submit, execute, links, store, the control actor) depend on the pool,
//! not on the supervisor that starts them all. It may not start, stop or
//! reconfigure anything: only ask and tell.

use ractor::{ActorRef, DerivedActorRef, RpcReplyPort};
use starling_protocol::classad::ClassAd;

use super::advertiser::Occupancy;
use super::view_actor::{MachineAd, ViewMsg};
use crate::ask::QUERY_TIMEOUT;

/// What a [`Pool`] asks of the supervisor.
#[derive(Debug)]
pub enum PoolRequest {
    /// The current view actor.
    View(RpcReplyPort<ActorRef<ViewMsg>>),
    /// The machine ad as the advertiser would publish it now.
    MachineAd(RpcReplyPort<Option<ClassAd>>),
    /// What the machine's claims hold (from the startd, for the advertiser).
    Occupancy(Occupancy),
    /// Publish the machine ad now (accounting changed).
    Republish,
}

/// The pool's actors as the other sides reach them. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Pool {
    supervisor: DerivedActorRef<PoolRequest>,
}

impl Pool {
    /// A pool reached through `supervisor`, which answers [`PoolRequest`]s.
    pub fn new(supervisor: DerivedActorRef<PoolRequest>) -> Pool {
        Pool { supervisor }
    }

    /// Sends a request with a reply port and waits at most
    /// [`QUERY_TIMEOUT`]; `None` when the supervisor is gone or slow.
    async fn ask<T>(&self, request: impl FnOnce(RpcReplyPort<T>) -> PoolRequest) -> Option<T> {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.supervisor
            .send_message(request(RpcReplyPort::from(reply)))
            .ok()?;
        tokio::time::timeout(QUERY_TIMEOUT, answer).await.ok()?.ok()
    }

    /// The current view actor; an error when the agent is stopping.
    pub async fn view(&self) -> Result<ActorRef<ViewMsg>, String> {
        self.ask(PoolRequest::View)
            .await
            .ok_or_else(|| "the agent is stopping".to_owned())
    }

    /// The machine ads of the view (empty when the agent is stopping).
    pub async fn machine_ads(&self) -> Vec<MachineAd> {
        let Ok(view) = self.view().await else {
            return Vec::new();
        };
        match view.call(ViewMsg::Machines, Some(QUERY_TIMEOUT)).await {
            Ok(ractor::rpc::CallResult::Success(list)) => list,
            _ => Vec::new(),
        }
    }

    /// This machine's ad as the advertiser would publish it now.
    pub async fn machine_ad(&self) -> Option<ClassAd> {
        self.ask(PoolRequest::MachineAd).await.flatten()
    }

    /// Tells the advertiser what the machine's claims hold.
    pub fn occupancy(&self, occupancy: Occupancy) {
        let _ = self
            .supervisor
            .send_message(PoolRequest::Occupancy(occupancy));
    }

    /// Has the machine ad published now.
    pub fn republish(&self) {
        let _ = self.supervisor.send_message(PoolRequest::Republish);
    }
}
