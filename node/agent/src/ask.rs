//! Asking the agent's actors and its network loop, each question within
//! [`QUERY_TIMEOUT`]: a stopped or slow actor is an answer (`None`, empty),
//! never a hang.

use std::time::Duration;

use ractor::ActorRef;
use tokio::sync::{mpsc, oneshot};

use crate::network::Command;
use crate::supervisor::SupervisorMsg;
use crate::view_actor;
use crate::view_actor::ViewMsg;
use starling_control as control;

/// How long a query to an actor may take before it is answered with an
/// error.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

pub(crate) async fn current_view(
    supervisor: &ActorRef<SupervisorMsg>,
) -> Result<ActorRef<ViewMsg>, String> {
    match supervisor
        .call(SupervisorMsg::View, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(view)) => Ok(view),
        _ => Err("the agent is stopping".to_owned()),
    }
}

/// The machine ads of the view (empty when the agent is stopping).
pub(crate) async fn machine_ads(
    supervisor: &ActorRef<SupervisorMsg>,
) -> Vec<view_actor::MachineAd> {
    let Ok(view) = current_view(supervisor).await else {
        return Vec::new();
    };
    match view.call(ViewMsg::Machines, Some(QUERY_TIMEOUT)).await {
        Ok(ractor::rpc::CallResult::Success(list)) => list,
        _ => Vec::new(),
    }
}

/// Asks the network loop something, waiting at most [`QUERY_TIMEOUT`];
/// `None` when the loop has stopped or did not answer in time.
pub(crate) async fn ask_network<T>(
    network: &mpsc::Sender<Command>,
    command: impl FnOnce(oneshot::Sender<T>) -> Command,
) -> Option<T> {
    let (reply, answer) = oneshot::channel();
    network.send(command(reply)).await.ok()?;
    tokio::time::timeout(QUERY_TIMEOUT, answer).await.ok()?.ok()
}

pub(crate) async fn peers(
    network: &mpsc::Sender<Command>,
    supervisor: &ActorRef<SupervisorMsg>,
) -> Vec<control::Peer> {
    let Some(list) = ask_network(network, Command::Peers).await else {
        return Vec::new();
    };
    let rejects = match current_view(supervisor).await {
        Ok(view) => {
            let ids = list.iter().map(|p| p.peer).collect();
            match view
                .call(
                    |reply| ViewMsg::Rejects { peers: ids, reply },
                    Some(QUERY_TIMEOUT),
                )
                .await
            {
                Ok(ractor::rpc::CallResult::Success(counts)) => counts,
                _ => Vec::new(),
            }
        }
        Err(_) => Vec::new(),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, p)| control::Peer {
            agent_id: p.peer.to_string(),
            addresses: p.addresses.iter().map(ToString::to_string).collect(),
            rtt_ms: p.rtt.map(|d| d.as_secs_f64() * 1000.0),
            score: p.score,
            rejected: rejects.get(i).copied().unwrap_or(0),
        })
        .collect()
}
