//! The CLI's side of the control API: a blocking client, since the
//! `starling` command is synchronous.
//!
//! This file owns finding the agent (its socket in the data directory),
//! telling a person clearly when none runs, and never waiting forever:
//! connecting gives up after [`CONNECT_TIMEOUT`], each answer after
//! [`READ_TIMEOUT`], and an answer longer than [`MAX_RESPONSE_LEN`] is
//! refused rather than read.

use std::io::{BufRead as _, BufReader, ErrorKind, Write as _};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::{socket_path, Error, Request, Response, MAX_RESPONSE_LEN};

/// How long connecting may take. A live agent accepts at once; this only
/// matters when it is wedged and its accept queue is full.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the agent has to answer one request (change it with
/// [`Client::set_read_timeout`]).
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long writing one request may take.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

/// Pause between connection attempts while the agent's accept queue is
/// full.
const CONNECT_RETRY: Duration = Duration::from_millis(10);

/// A connection to a running agent's control socket.
#[derive(Debug)]
pub struct Client {
    data_dir: PathBuf,
    stream: BufReader<UnixStream>,
    read_timeout: Duration,
}

impl Client {
    /// Connects to the agent whose data directory is `data_dir`.
    ///
    /// The error wraps a [`control::Error`](Error) (`get_ref()` gives it):
    /// [`Error::NoAgent`] when no agent runs there.
    pub fn connect(data_dir: &Path) -> std::io::Result<Client> {
        Ok(Client::open(data_dir)?)
    }

    /// Sends one request and waits (with a timeout) for its answer.
    pub fn request(&mut self, request: &Request) -> std::io::Result<Response> {
        Ok(self.ask(request)?)
    }

    /// Connects to the agent of `data_dir`, sends `request` and returns
    /// its answer: what a command that asks one thing needs.
    pub fn call(data_dir: &Path, request: &Request) -> Result<Response, Error> {
        Client::open(data_dir)?.ask(request)
    }

    /// How long to wait for each answer from now on (default
    /// [`READ_TIMEOUT`]); for requests known to take longer.
    pub fn set_read_timeout(&mut self, timeout: Duration) {
        self.read_timeout = timeout;
    }

    fn open(data_dir: &Path) -> Result<Client, Error> {
        let stream = connect_within(data_dir, CONNECT_TIMEOUT)?;
        let io = |source| Error::Io {
            what: "setting up the connection to the agent at",
            path: data_dir.to_owned(),
            source,
        };
        stream.set_write_timeout(Some(WRITE_TIMEOUT)).map_err(io)?;
        Ok(Client {
            data_dir: data_dir.to_owned(),
            stream: BufReader::new(stream),
            read_timeout: READ_TIMEOUT,
        })
    }

    fn ask(&mut self, request: &Request) -> Result<Response, Error> {
        let mut line = serde_json::to_vec(request).map_err(|e| Error::Io {
            what: "encoding a request for the agent at",
            path: self.data_dir.clone(),
            source: std::io::Error::other(e),
        })?;
        line.push(b'\n');
        let written = self.stream.get_mut().write_all(&line);
        match written {
            Ok(()) => {}
            // The agent may have answered and closed before reading (it
            // refuses connections over its limit that way): read what it
            // said instead of reporting a broken pipe.
            Err(e) if e.kind() == ErrorKind::BrokenPipe => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(Error::Timeout {
                    data_dir: self.data_dir.clone(),
                    after: WRITE_TIMEOUT,
                });
            }
            Err(source) => return Err(self.io("sending a request to the agent at", source)),
        }
        let line = self.read_line()?;
        serde_json::from_slice(&line).map_err(|source| Error::BadResponse {
            data_dir: self.data_dir.clone(),
            source,
        })
    }

    /// Reads one answer line, all of it within the read timeout (not per
    /// read: an agent trickling bytes does not get to extend it).
    fn read_line(&mut self) -> Result<Vec<u8>, Error> {
        let deadline = Instant::now() + self.read_timeout;
        let mut line = Vec::new();
        loop {
            let timeout = Error::Timeout {
                data_dir: self.data_dir.clone(),
                after: self.read_timeout,
            };
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timeout);
            }
            self.stream
                .get_ref()
                .set_read_timeout(Some(left))
                .map_err(|e| self.io("waiting for the agent at", e))?;
            let buf = match self.stream.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    return Err(timeout);
                }
                Err(e) => return Err(self.io("reading the answer of the agent at", e)),
            };
            if buf.is_empty() {
                return Err(Error::Closed {
                    data_dir: self.data_dir.clone(),
                });
            }
            let (taken, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i, true),
                None => (buf.len(), false),
            };
            line.extend_from_slice(&buf[..taken]);
            self.stream.consume(taken + usize::from(done));
            if line.len() > MAX_RESPONSE_LEN {
                return Err(Error::ResponseTooLong {
                    data_dir: self.data_dir.clone(),
                    limit: MAX_RESPONSE_LEN,
                });
            }
            if done {
                return Ok(line);
            }
        }
    }

    fn io(&self, what: &'static str, source: std::io::Error) -> Error {
        Error::Io {
            what,
            path: self.data_dir.clone(),
            source,
        }
    }
}

/// Connects to the socket of `data_dir`, giving up after `timeout`.
///
/// `std` has no connect timeout for unix sockets, and a blocking connect
/// waits as long as the agent's accept queue is full; so this connects a
/// non-blocking socket, retrying while the queue is full, and hands back a
/// blocking stream.
fn connect_within(data_dir: &Path, timeout: Duration) -> Result<UnixStream, Error> {
    use rustix::net::{AddressFamily, SocketAddrUnix, SocketFlags, SocketType};
    let path = socket_path(data_dir);
    let io = |source: std::io::Error| Error::Io {
        what: "connecting to the agent at",
        path: data_dir.to_owned(),
        source,
    };
    let address = SocketAddrUnix::new(&path).map_err(|e| io(e.into()))?;
    let socket = rustix::net::socket_with(
        AddressFamily::UNIX,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )
    .map_err(|e| io(e.into()))?;
    let deadline = Instant::now() + timeout;
    loop {
        let e = match rustix::net::connect(&socket, &address) {
            Ok(()) => break,
            Err(e) => std::io::Error::from(e),
        };
        match e.kind() {
            ErrorKind::Interrupted => {}
            ErrorKind::WouldBlock if Instant::now() < deadline => {
                std::thread::sleep(CONNECT_RETRY);
            }
            ErrorKind::WouldBlock => {
                return Err(Error::ConnectTimeout {
                    data_dir: data_dir.to_owned(),
                    after: timeout,
                })
            }
            // No socket file (or no data directory), or a socket nobody
            // listens on: the agent is not running.
            ErrorKind::NotFound | ErrorKind::ConnectionRefused => {
                return Err(Error::NoAgent {
                    data_dir: data_dir.to_owned(),
                })
            }
            _ => return Err(io(e)),
        }
    }
    let stream = UnixStream::from(socket);
    stream.set_nonblocking(false).map_err(io)?;
    Ok(stream)
}
