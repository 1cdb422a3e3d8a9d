//! Serving the control API on the agent's unix socket.
//!
//! This file owns the socket's life: [`bind`] claims `agent.sock` in the
//! data directory (replacing a stale one, refusing when a live agent
//! answers on it), makes it 0666 for an agent running as root and 0600 for
//! any other, and removes it again when the [`Listener`] is dropped.
//! [`Listener::serve`] accepts connections, at most [`MAX_CONNECTIONS`] at a
//! time, and runs one task per connection that takes the peer's
//! credentials from the kernel (a [`Caller`]), reads bounded JSON lines,
//! hands each [`Request`] with its caller to the [`Handler`] and writes its
//! [`Response`] back. Whether the caller may do what it asks is the
//! handler's decision. No input from a client can panic it or make it hold
//! more than [`MAX_REQUEST_LEN`] bytes per connection.

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::{socket_path, Caller, Error, Request, Response, MAX_REQUEST_LEN, MAX_RESPONSE_LEN};

/// How many control connections are served at once. One more is told so
/// and closed: the CLI opens one connection per command, so 64 at once
/// means something is looping, and each connection costs a task and up to
/// [`MAX_REQUEST_LEN`] of buffer.
pub const MAX_CONNECTIONS: usize = 64;

/// How long a connection may sit without sending a whole request line
/// before it is closed, so that forgotten or stalled clients give their
/// slot back.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long writing one response may take before the connection is
/// closed: a client that stops reading must not hold a task forever.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// How long [`bind`] waits for whatever is on an existing socket to accept
/// a connection. A live agent accepts at once; one that accepts nothing
/// within this time is taken as alive but swamped, not as stale.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// Pause after a failed `accept` (out of file descriptors, usually) so the
/// loop does not spin while the condition lasts.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// What answers control requests: the agent.
///
/// The server does not time out [`Handler::handle`] (dropping it midway
/// could cut a `shutdown` in half); the handler bounds its own waits, and
/// the client gives up after its read timeout. A connection's slot stays
/// taken while its request is being handled.
#[async_trait::async_trait]
pub trait Handler: Send + Sync + 'static {
    /// Answers one request from `caller`. Failures (refusals included) are
    /// [`Response::Error`], not panics.
    async fn handle(&self, caller: &Caller, request: Request) -> Response;
}

/// Binds the control socket in `data_dir` and serves `handler` on it until
/// the returned future is dropped. Dropping it midway is safe: open
/// connections are closed and the socket file is removed.
///
/// The errors are `io::Error`s wrapping a [`control::Error`](Error) (get it
/// with `get_ref()`): [`Error::AgentRunning`] when a live agent answers on
/// the socket already.
pub async fn serve(data_dir: &Path, handler: Arc<dyn Handler>) -> std::io::Result<()> {
    bind(data_dir).await?.serve(handler).await
}

/// Claims the control socket of `data_dir`, for an agent that wants to know
/// it owns the socket before it starts anything else.
///
/// If `agent.sock` exists and something accepts a connection on it (or
/// does not refuse one within [`PROBE_TIMEOUT`]), another agent is running
/// and this fails with [`Error::AgentRunning`]; if connecting is refused,
/// the file is left over from an agent that died, and is replaced. Two
/// agents starting in the same directory at the same instant could both
/// see a stale socket; the pid file ([`PidFile`](super::PidFile)), taken
/// first, is what keeps them apart.
///
/// Right after binding, the socket is made mode 0666 when this process
/// runs as root (every local user may connect; the handler decides what
/// each may do) and 0600 otherwise. Until then the umask applies, which
/// leaves a socket at most as open as the mode it gets.
pub async fn bind(data_dir: &Path) -> std::io::Result<Listener> {
    let path = socket_path(data_dir);
    let io = |what: &'static str| {
        let path = path.clone();
        move |source| Error::Io { what, path, source }
    };
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if !meta.file_type().is_socket() => {
            return Err(Error::NotASocket { path }.into());
        }
        Ok(_) => {
            match tokio::time::timeout(PROBE_TIMEOUT, UnixStream::connect(&path)).await {
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                    tracing::info!(path = %path.display(), "replacing a stale control socket");
                    match std::fs::remove_file(&path) {
                        Ok(()) => {}
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io("removing the stale control socket")(e).into()),
                    }
                }
                // Gone between the two looks: nothing to replace.
                Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
                Ok(Err(e)) => return Err(io("probing the control socket")(e).into()),
                Ok(Ok(_)) | Err(_) => return Err(running(data_dir).into()),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io("looking at the control socket")(e).into()),
    }
    let listener = match UnixListener::bind(&path) {
        Ok(l) => l,
        // Another agent bound it since we looked.
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => {
            return Err(running(data_dir).into());
        }
        Err(e) => return Err(io("binding the control socket")(e).into()),
    };
    // From here on the guard removes the file whatever happens.
    let file = SocketFile::new(path.clone()).map_err(io("looking at the control socket"))?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(socket_mode()))
        .map_err(io("setting the control socket's mode"))?;
    tracing::debug!(path = %path.display(), "control socket bound");
    Ok(Listener {
        listener,
        _file: file,
    })
}

/// The socket's mode: 0666 for an agent running as root, which serves every
/// local user, and 0600 for any other, which serves only its own user.
pub fn socket_mode() -> u32 {
    if rustix::process::geteuid().is_root() {
        0o666
    } else {
        0o600
    }
}

fn running(data_dir: &Path) -> Error {
    Error::AgentRunning {
        data_dir: data_dir.to_owned(),
        pid: super::read_pid(data_dir),
    }
}

/// A bound control socket. Dropping it removes the socket file.
#[derive(Debug)]
pub struct Listener {
    listener: UnixListener,
    _file: SocketFile,
}

impl Listener {
    /// Serves `handler` until the future is dropped (it returns only if
    /// the listener itself breaks, which does not happen on Linux). Dropping
    /// it midway is safe: open connections are closed, and the socket file
    /// is removed with the [`Listener`].
    pub async fn serve(self, handler: Arc<dyn Handler>) -> std::io::Result<()> {
        let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
        // Owned here, so dropping this future aborts every connection task.
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => match slots.clone().try_acquire_owned() {
                        Ok(slot) => {
                            let handler = handler.clone();
                            connections.spawn(async move {
                                connection(stream, handler).await;
                                drop(slot);
                            });
                        }
                        Err(_) => refuse(&stream),
                    },
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a control connection failed");
                        tokio::time::sleep(ACCEPT_BACKOFF).await;
                    }
                },
                // Reap finished connections so the set does not grow.
                Some(joined) = connections.join_next() => {
                    if let Err(e) = joined {
                        if e.is_panic() {
                            tracing::error!("a control connection's handler panicked; connection closed");
                        }
                    }
                }
            }
        }
    }
}

/// Tells a connection over the limit why it is closed. Best effort and
/// without waiting: a new socket's send buffer is empty, so the short line
/// fits, and a client that is already gone does not matter.
fn refuse(stream: &UnixStream) {
    tracing::warn!(
        limit = MAX_CONNECTIONS,
        "too many control connections; refusing one"
    );
    let line = response_line(&Response::Error {
        message: format!(
            "the agent is serving {MAX_CONNECTIONS} control connections already; try again"
        ),
    });
    let _ = stream.try_write(&line);
}

/// What reading one request line gave.
enum Line {
    /// A whole line (its newline removed).
    Complete,
    /// Bytes, then end of input before a newline.
    Unterminated,
    /// End of input before anything.
    Eof,
    /// More than [`MAX_REQUEST_LEN`] bytes without a newline.
    TooLong,
}

/// Who is on the other end of `stream`, as the kernel says.
async fn caller(stream: &UnixStream) -> std::io::Result<Caller> {
    let cred = stream.peer_cred()?;
    let uid = cred.uid();
    // The user database is a file: read it off the async threads.
    let name = tokio::task::spawn_blocking(move || crate::users::name_of(uid))
        .await
        .unwrap_or(None);
    Ok(Caller {
        uid,
        gid: cred.gid(),
        pid: cred.pid(),
        name,
    })
}

/// Serves one connection until the client closes it, idles, sends a line
/// that is too long, or stops reading.
async fn connection(stream: UnixStream, handler: Arc<dyn Handler>) {
    let caller = match caller(&stream).await {
        Ok(caller) => caller,
        Err(e) => {
            tracing::warn!(error = %e, "no peer credentials on a control connection; closing it");
            return;
        }
    };
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut line = Vec::new();
    loop {
        line.clear();
        let outcome =
            match tokio::time::timeout(IDLE_TIMEOUT, read_line(&mut read, &mut line)).await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "control connection broke");
                    return;
                }
                Err(_) => {
                    tracing::debug!("closing an idle control connection");
                    return;
                }
            };
        let response = match outcome {
            Line::Eof => return,
            Line::TooLong => {
                let message = format!(
                    "request line longer than {MAX_REQUEST_LEN} bytes; closing the connection"
                );
                let _ = send(&mut write, &Response::Error { message }).await;
                return;
            }
            // Blank lines are not requests (a person typing into the
            // socket hits return twice); they get no answer.
            Line::Complete if line.trim_ascii().is_empty() => continue,
            Line::Unterminated if line.trim_ascii().is_empty() => return,
            Line::Complete | Line::Unterminated => match serde_json::from_slice::<Request>(&line) {
                Ok(request) => handler.handle(&caller, request).await,
                Err(e) => Response::Error {
                    message: format!("bad request: {e}"),
                },
            },
        };
        // A last request without its newline is still answered (`printf
        // '{"op":"info"}' | nc -U` works), then the connection ends.
        if send(&mut write, &response).await.is_err() || matches!(outcome, Line::Unterminated) {
            return;
        }
    }
}

/// Reads one line into `line`, never more than [`MAX_REQUEST_LEN`] bytes
/// plus its newline.
async fn read_line(
    read: &mut BufReader<tokio::net::unix::OwnedReadHalf>,
    line: &mut Vec<u8>,
) -> std::io::Result<Line> {
    let limit = u64::try_from(MAX_REQUEST_LEN).unwrap_or(u64::MAX) + 1;
    let n = read.take(limit).read_until(b'\n', line).await?;
    Ok(if n == 0 {
        Line::Eof
    } else if line.last() == Some(&b'\n') {
        line.pop();
        Line::Complete
    } else if line.len() > MAX_REQUEST_LEN {
        Line::TooLong
    } else {
        Line::Unterminated
    })
}

/// Writes `response` as one line, within [`WRITE_TIMEOUT`].
async fn send(
    write: &mut tokio::net::unix::OwnedWriteHalf,
    response: &Response,
) -> std::io::Result<()> {
    let line = response_line(response);
    match tokio::time::timeout(WRITE_TIMEOUT, write.write_all(&line)).await {
        Ok(result) => result,
        Err(_) => Err(std::io::ErrorKind::TimedOut.into()),
    }
}

/// `response` as a JSON line. An answer longer than a client accepts
/// becomes an error saying so, which is more use to the person than a
/// client-side "answer too long".
fn response_line(response: &Response) -> Vec<u8> {
    let encoded = serde_json::to_vec(response).map_err(|e| e.to_string());
    let mut line = match encoded {
        Ok(line) if line.len() <= MAX_RESPONSE_LEN => line,
        Ok(line) => error_line(&format!(
            "the answer is {} bytes, more than the {MAX_RESPONSE_LEN} a client reads; \
             ask for less (a -constraint)",
            line.len()
        )),
        Err(e) => error_line(&format!("the agent could not encode its answer: {e}")),
    };
    line.push(b'\n');
    line
}

fn error_line(message: &str) -> Vec<u8> {
    let response = Response::Error {
        message: message.to_owned(),
    };
    // A struct of one string always encodes; the fallback keeps this total.
    serde_json::to_vec(&response)
        .unwrap_or_else(|_| br#"{"result":"error","message":"internal error"}"#.to_vec())
}

/// The socket file this listener bound, removed when it is dropped, but
/// only while it is still the same file: if another agent has replaced it
/// since (after this one was taken for dead), its socket stays.
#[derive(Debug)]
struct SocketFile {
    path: PathBuf,
    id: (u64, u64),
}

impl SocketFile {
    fn new(path: PathBuf) -> std::io::Result<SocketFile> {
        let meta = std::fs::symlink_metadata(&path)?;
        Ok(SocketFile {
            path,
            id: (meta.dev(), meta.ino()),
        })
    }
}

impl Drop for SocketFile {
    fn drop(&mut self) {
        let ours = std::fs::symlink_metadata(&self.path)
            .is_ok_and(|meta| (meta.dev(), meta.ino()) == self.id);
        if ours {
            if let Err(e) = std::fs::remove_file(&self.path) {
                tracing::warn!(path = %self.path.display(), error = %e, "removing the control socket failed");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_too_long_for_a_client_becomes_an_error() {
        let huge = Response::Ads {
            ads: vec!["x".repeat(MAX_RESPONSE_LEN)],
        };
        let line = response_line(&huge);
        assert!(line.len() < 1000);
        let back: Response = serde_json::from_slice(&line).expect("a response");
        assert!(
            matches!(&back, Response::Error { message } if message.contains(&MAX_RESPONSE_LEN.to_string())),
            "{back:?}"
        );
    }

    #[test]
    fn responses_are_single_lines() {
        let line = response_line(&Response::Ads {
            ads: vec!["[ A = \"x\ny\" ]".into()],
        });
        assert_eq!(line.iter().filter(|&&b| b == b'\n').count(), 1);
        assert_eq!(line.last(), Some(&b'\n'));
    }
}
