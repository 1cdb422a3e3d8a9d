//! Asking the agent's actors and its network loop, each question within
//! [`QUERY_TIMEOUT`]: a stopped or slow actor is an answer (`None`, empty),
//! never a hang. A leaf below every actor: it knows only the network
//! loop's commands.

use std::time::Duration;

use tokio::sync::{mpsc, oneshot};

use crate::network::Command;

/// How long a query to an actor may take before it is answered with an
/// error.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(5);

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
