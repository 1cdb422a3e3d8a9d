//! Serving the control API on the agent's unix socket.

use std::path::Path;
use std::sync::Arc;

use super::{Request, Response};

/// What answers control requests: the agent.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Answers one request. Failures are [`Response::Error`], not panics.
    async fn handle(&self, request: Request) -> Response;
}

/// Binds the control socket in `data_dir` and serves `handler` on it until
/// the returned future is dropped. Dropping it midway is safe: open
/// connections are closed and the socket file is removed.
pub async fn serve(data_dir: &Path, handler: Arc<dyn Handler>) -> std::io::Result<()> {
    let _ = (data_dir, handler);
    Err(std::io::Error::other("the control API is not served yet"))
}
