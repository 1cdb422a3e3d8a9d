//! The CLI's side of the control API.

use std::path::Path;

use super::{Request, Response};

/// A connection to a running agent's control socket.
#[derive(Debug)]
pub struct Client {
    _private: (),
}

impl Client {
    /// Connects to the agent whose data directory is `data_dir`.
    pub fn connect(data_dir: &Path) -> std::io::Result<Client> {
        let _ = data_dir;
        Err(std::io::Error::other("the control API is not served yet"))
    }

    /// Sends one request and waits (with a timeout) for its answer.
    pub fn request(&mut self, request: &Request) -> std::io::Result<Response> {
        let _ = request;
        Err(std::io::Error::other("the control API is not served yet"))
    }
}
