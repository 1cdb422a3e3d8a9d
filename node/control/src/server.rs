//! Serving the control API on the agent's unix socket.
//!
//! This file owns the socket's life: [`bind`] claims `agent.sock` in the
//! data directory (replacing a stale one, refusing when a live agent
//! answers on it), makes it 0666 for an agent running as root and 0600 for
//! any other, and removes it again when the [`Listener`] is dropped.
//! [`Listener::serve`] accepts connections and runs one task per
//! connection that takes the peer's credentials from the kernel (a
//! [`Caller`]), reads bounded JSON lines, hands each [`Request`] with its
//! caller to the [`Handler`] and writes its [`Response`] back. Whether the
//! caller may do what it asks is the handler's decision. No input from a
//! client can panic it or make it hold more than [`MAX_REQUEST_LEN`] bytes
//! per connection.
//!
//! No client can lock the others out ([`admit`]): a request must arrive
//! whole within [`REQUEST_TIMEOUT`] of its first byte (a client dripping a
//! byte at a time is cut off); ordinary users share [`MAX_CONNECTIONS`]
//! connections, at most [`MAX_PER_USER`] each, and root and the agent's
//! own user have [`PRIVILEGED_CONNECTIONS`] more of their own; when a pool
//! is full, the oldest idle connection (waiting between requests) of the
//! user holding the most is closed to make room.

use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt as _, AsyncReadExt as _, AsyncWriteExt as _, BufReader};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::Notify;
use tokio::task::JoinSet;

use super::{socket_path, Caller, Error, Request, Response, MAX_REQUEST_LEN, MAX_RESPONSE_LEN};

/// How many control connections of ordinary users are served at once:
/// the CLI opens one connection per command, so 64 at once means
/// something is looping, and each connection costs a task and up to
/// [`MAX_REQUEST_LEN`] of buffer.
pub const MAX_CONNECTIONS: usize = 64;

/// How many of those one user may hold.
pub const MAX_PER_USER: usize = 16;

/// Connections kept for root and the agent's own user, beyond the
/// ordinary users' [`MAX_CONNECTIONS`]: whatever others do, they can
/// always run `q`.
pub const PRIVILEGED_CONNECTIONS: usize = 16;

/// How long a connection may wait between requests, sending nothing,
/// before it is closed, so that forgotten clients give their slot back.
/// Such a connection is also the first to go when its pool is full.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// How long a request line may take to arrive once its first byte has:
/// the CLI sends one at once, so a slower client is stalling.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);

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
        let open = Arc::new(Mutex::new(Open::default()));
        let me = rustix::process::geteuid().as_raw();
        // Owned here, so dropping this future aborts every connection task.
        let mut connections = JoinSet::new();
        loop {
            tokio::select! {
                accepted = self.listener.accept() => match accepted {
                    Ok((stream, _)) => {
                        let Ok(uid) = stream.peer_cred().map(|c| c.uid()) else {
                            tracing::warn!("no peer credentials on a control connection; closing it");
                            continue;
                        };
                        let privileged = uid == 0 || uid == me;
                        let admitted = match open.lock() {
                            Ok(mut o) => o.admit(uid, privileged),
                            Err(_) => Err("the agent's control server is broken; restart it".to_owned()),
                        };
                        let (id, evicted) = match admitted {
                            Ok(admitted) => admitted,
                            Err(reason) => {
                                refuse(&stream, &reason);
                                continue;
                            }
                        };
                        let handler = handler.clone();
                        let open = open.clone();
                        connections.spawn(async move {
                            connection(stream, handler, &evicted, Idle { open: &open, id }).await;
                            if let Ok(mut o) = open.lock() {
                                o.close(id);
                            }
                        });
                    }
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

/// One open connection, as admission sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Conn {
    pub id: u64,
    pub uid: u32,
    pub privileged: bool,
    /// Since when it has been waiting between requests; `None` while a
    /// request is read or answered.
    pub idle_since: Option<Instant>,
}

/// What to do with a new connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Admit,
    /// Admit it after closing this idle connection.
    Evict(u64),
    Refuse(String),
}

/// Whether a new connection of `uid` (`privileged`: root or the agent's
/// own user) is served, given those `open`: within the per-user limit and
/// its pool's size, or by closing an idle connection (this user's own
/// oldest when it is at its limit; else the oldest of the user holding the
/// most idle ones in the pool), or refused with the reason.
pub fn admit(open: &[Conn], uid: u32, privileged: bool) -> Verdict {
    let oldest_idle = |of: &dyn Fn(&Conn) -> bool| {
        open.iter()
            .filter(|c| of(c))
            .filter_map(|c| c.idle_since.map(|t| (t, c.id)))
            .min()
            .map(|(_, id)| id)
    };
    if !privileged {
        let mine = open
            .iter()
            .filter(|c| !c.privileged && c.uid == uid)
            .count();
        if mine >= MAX_PER_USER {
            return match oldest_idle(&|c| !c.privileged && c.uid == uid) {
                Some(id) => Verdict::Evict(id),
                None => Verdict::Refuse(format!(
                    "uid {uid} has {mine} control connections busy already; try again"
                )),
            };
        }
    }
    let pool: Vec<&Conn> = open.iter().filter(|c| c.privileged == privileged).collect();
    let size = if privileged {
        PRIVILEGED_CONNECTIONS
    } else {
        MAX_CONNECTIONS
    };
    if pool.len() < size {
        return Verdict::Admit;
    }
    // The user with the most idle connections gives one back.
    let mut idle_by_user: Vec<(usize, u32)> = Vec::new();
    for c in pool.iter().filter(|c| c.idle_since.is_some()) {
        match idle_by_user.iter_mut().find(|(_, u)| *u == c.uid) {
            Some((n, _)) => *n += 1,
            None => idle_by_user.push((1, c.uid)),
        }
    }
    let heaviest = idle_by_user
        .iter()
        .max_by_key(|(n, u)| (*n, std::cmp::Reverse(*u)))
        .map(|(_, u)| *u);
    match heaviest.and_then(|u| oldest_idle(&|c| c.privileged == privileged && c.uid == u)) {
        Some(id) => Verdict::Evict(id),
        None => Verdict::Refuse(format!(
            "the agent is serving {size} busy control connections already; try again"
        )),
    }
}

/// The open connections and how to close an idle one.
#[derive(Debug, Default)]
struct Open {
    next: u64,
    conns: Vec<(Conn, Arc<Notify>)>,
}

impl Open {
    /// Admits a connection (closing an idle one if needed): its id and
    /// what tells it to close; or why not.
    fn admit(&mut self, uid: u32, privileged: bool) -> Result<(u64, Arc<Notify>), String> {
        let view: Vec<Conn> = self.conns.iter().map(|(c, _)| *c).collect();
        match admit(&view, uid, privileged) {
            Verdict::Refuse(reason) => return Err(reason),
            Verdict::Evict(id) => {
                if let Some(i) = self.conns.iter().position(|(c, _)| c.id == id) {
                    let (victim, evict) = self.conns.swap_remove(i);
                    tracing::info!(
                        uid = victim.uid,
                        "closing an idle control connection to make room"
                    );
                    evict.notify_one();
                }
            }
            Verdict::Admit => {}
        }
        self.next += 1;
        let evict = Arc::new(Notify::new());
        self.conns.push((
            Conn {
                id: self.next,
                uid,
                privileged,
                idle_since: None,
            },
            evict.clone(),
        ));
        Ok((self.next, evict))
    }

    fn set_idle(&mut self, id: u64, idle: bool) {
        if let Some((c, _)) = self.conns.iter_mut().find(|(c, _)| c.id == id) {
            c.idle_since = idle.then(Instant::now);
        }
    }

    fn close(&mut self, id: u64) {
        self.conns.retain(|(c, _)| c.id != id);
    }
}

/// A connection's handle on its entry, to say when it waits idle.
struct Idle<'a> {
    open: &'a Mutex<Open>,
    id: u64,
}

impl Idle<'_> {
    fn set(&self, idle: bool) {
        if let Ok(mut o) = self.open.lock() {
            o.set_idle(self.id, idle);
        }
    }
}

/// Tells a connection that is not served why it is closed. Best effort
/// and without waiting: a new socket's send buffer is empty, so the short
/// line fits, and a client that is already gone does not matter.
fn refuse(stream: &UnixStream, reason: &str) {
    tracing::warn!(%reason, "refusing a control connection");
    let line = response_line(&Response::Error {
        message: reason.to_owned(),
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
    let name = tokio::task::spawn_blocking(move || starling_process::users::name_of(uid))
        .await
        .unwrap_or(None);
    Ok(Caller {
        uid,
        gid: cred.gid(),
        pid: cred.pid(),
        name,
    })
}

/// Serves one connection until the client closes it, idles, dawdles
/// over a request, sends a line that is too long, stops reading, or is
/// closed to make room (`evicted`).
async fn connection(
    stream: UnixStream,
    handler: Arc<dyn Handler>,
    evicted: &Notify,
    idle: Idle<'_>,
) {
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
        // Between requests: idle, and the first to go when room is needed.
        idle.set(true);
        let first = tokio::select! {
            first = tokio::time::timeout(IDLE_TIMEOUT, read.fill_buf()) => first,
            () = evicted.notified() => {
                let message = "closed to make room for another connection (this one was idle)";
                let _ = send(&mut write, &Response::Error { message: message.to_owned() }).await;
                return;
            }
        };
        idle.set(false);
        match first {
            Ok(Ok([])) => return,
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "control connection broke");
                return;
            }
            Err(_) => {
                tracing::debug!("closing an idle control connection");
                return;
            }
        }
        let outcome =
            match tokio::time::timeout(REQUEST_TIMEOUT, read_line(&mut read, &mut line)).await {
                Ok(Ok(outcome)) => outcome,
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "control connection broke");
                    return;
                }
                Err(_) => {
                    let message = format!(
                        "no whole request within {} s of its first byte; closing the connection",
                        REQUEST_TIMEOUT.as_secs()
                    );
                    let _ = send(&mut write, &Response::Error { message }).await;
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
             ask for less: a -constraint, or -af with only the attributes you need",
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

    fn conns(spec: &[(u32, bool, Option<u64>)]) -> Vec<Conn> {
        let t0 = Instant::now();
        spec.iter()
            .enumerate()
            .map(|(i, &(uid, privileged, idle))| Conn {
                id: i as u64,
                uid,
                privileged,
                idle_since: idle.map(|s| t0 + Duration::from_secs(s)),
            })
            .collect()
    }

    #[test]
    fn a_user_at_the_limit_gives_back_its_own_oldest_idle_connection_or_waits() {
        let mut open: Vec<(u32, bool, Option<u64>)> = vec![(7, false, None); MAX_PER_USER];
        assert!(
            matches!(admit(&conns(&open), 7, false), Verdict::Refuse(r) if r.contains("uid 7"))
        );
        // Another user is not held back by user 7.
        assert_eq!(admit(&conns(&open), 8, false), Verdict::Admit);
        open[3].2 = Some(5);
        open[9].2 = Some(2);
        assert_eq!(admit(&conns(&open), 7, false), Verdict::Evict(9));
    }

    #[test]
    fn a_full_pool_closes_an_idle_connection_of_the_heaviest_user() {
        let mut open = Vec::new();
        for u in 0..(MAX_CONNECTIONS as u32) {
            // Users 1000..: four each, idle; one busy user.
            open.push((1000 + u / 4, false, Some(u64::from(u))));
        }
        open[0] = (999, false, None);
        open.push((2000, false, Some(100)));
        open.push((2000, false, Some(101)));
        // The pool is full; users 1001.. each hold 4 idle (1000 holds 3,
        // 2000 two): ties go to the lowest uid, its oldest first.
        assert_eq!(admit(&conns(&open), 5, false), Verdict::Evict(4));
        // With nothing idle, a new connection is refused.
        let busy = vec![(1, false, None); MAX_CONNECTIONS];
        assert!(matches!(admit(&conns(&busy), 5, false), Verdict::Refuse(_)));
    }

    #[test]
    fn root_and_the_agents_user_have_room_of_their_own() {
        let full = vec![(1, false, Some(1)); MAX_CONNECTIONS];
        assert_eq!(admit(&conns(&full), 0, true), Verdict::Admit);
        let mut both = full.clone();
        both.extend(vec![(0, true, None); PRIVILEGED_CONNECTIONS]);
        // Root's pool is full and busy: an ordinary user's idle connection
        // does not count.
        assert!(matches!(admit(&conns(&both), 0, true), Verdict::Refuse(_)));
        both.last_mut().unwrap().2 = Some(9);
        assert_eq!(
            admit(&conns(&both), 0, true),
            Verdict::Evict((MAX_CONNECTIONS + PRIVILEGED_CONNECTIONS - 1) as u64)
        );
    }

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
