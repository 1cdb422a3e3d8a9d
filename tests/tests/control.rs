//! The control API over real unix sockets: a stand-in agent (a [`Handler`]
//! with fixed ads) served by `control::serve`, asked by the [`Client`] and
//! by `starling status --agent DIR`; hostile clients; the socket file's
//! life (mode, stale files, a second agent); and the pid file.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use starling_control::{
    self as control, server, Caller, Client, Handler, Info, PidFile, Request, Response,
    MAX_REQUEST_LEN, MAX_RESPONSE_LEN,
};
use starling_protocol::classad::{formats, unparse_ad};

/// The longest any wait in these tests may take.
const WAIT: Duration = Duration::from_secs(10);

const ADS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/data/status_machines.ads"
);

/// A stand-in agent: answers with fixed ads and remembers what it was
/// asked. An ads request whose constraint is `Refuse` is refused, and
/// `peers` panics (a handler bug the server must survive).
struct FixedAgent {
    data_dir: PathBuf,
    ads: Vec<String>,
    asked: Mutex<Vec<Request>>,
    callers: Mutex<Vec<Caller>>,
}

impl FixedAgent {
    /// The machines of `tests/data/status_machines.ads`, in new syntax.
    fn with_test_machines(data_dir: &Path) -> Arc<FixedAgent> {
        let text = std::fs::read_to_string(ADS).expect("test data");
        let ads = formats::parse_ads_any(&text).expect("test data parses");
        Arc::new(FixedAgent {
            data_dir: data_dir.to_owned(),
            ads: ads.iter().map(unparse_ad).collect(),
            asked: Mutex::new(Vec::new()),
            callers: Mutex::new(Vec::new()),
        })
    }

    fn asked(&self) -> Vec<Request> {
        self.asked.lock().expect("not poisoned").clone()
    }
}

#[async_trait::async_trait]
impl Handler for FixedAgent {
    async fn handle(&self, caller: &Caller, request: Request) -> Response {
        self.callers
            .lock()
            .expect("not poisoned")
            .push(caller.clone());
        self.asked
            .lock()
            .expect("not poisoned")
            .push(request.clone());
        match request {
            Request::Info => Response::Info(Info {
                agent_id: "12D3KooWTest".into(),
                domain: "test".into(),
                version: "0.0.0".into(),
                pid: std::process::id(),
                data_dir: self.data_dir.clone(),
                listen: vec![],
                peers: 0,
                ads: [("Machine".to_owned(), self.ads.len())].into(),
                started_ms: 0,
                bytes_received: 0,
                bytes_sent: 0,
                reachability: String::new(),
            }),
            Request::Ads { constraint, .. } if constraint.as_deref() == Some("Refuse") => {
                Response::Error {
                    message: "refused by the test agent".into(),
                }
            }
            Request::Ads { kind, .. } if kind == "machine" => Response::Ads {
                ads: self.ads.clone(),
            },
            Request::Ads { .. } => Response::Ads { ads: vec![] },
            Request::Peers => panic!("the test agent panics on peers"),
            _ => Response::Done,
        }
    }
}

/// Polls `condition` until it holds, failing the test after [`WAIT`].
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + WAIT;
    while !condition() {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `control::serve` running on its own thread and runtime (the client is
/// blocking); dropping it drops the serve future.
struct Served {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<JoinHandle<std::io::Result<()>>>,
}

impl Served {
    /// Serves `handler` in `dir` and waits until the socket accepts
    /// connections, or returns what `serve` failed with.
    fn start(dir: &Path, handler: Arc<dyn Handler>) -> std::io::Result<Served> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let data_dir = dir.to_owned();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            runtime.block_on(async move {
                tokio::select! {
                    served = control::serve(&data_dir, handler) => served,
                    _ = stopped => Ok(()),
                }
            })
        });
        let mut served = Served {
            stop: Some(stop),
            thread: Some(thread),
        };
        let socket = control::socket_path(dir);
        let deadline = Instant::now() + WAIT;
        loop {
            if served.thread.as_ref().is_some_and(JoinHandle::is_finished) {
                let thread = served.thread.take().expect("a thread");
                thread.join().expect("serve does not panic")?;
                panic!("serve returned Ok before being stopped");
            }
            if UnixStream::connect(&socket).is_ok() {
                return Ok(served);
            }
            assert!(Instant::now() < deadline, "the socket never accepted");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Drops the serve future and waits for its thread.
    fn stop(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            wait_until("serve has stopped", || thread.is_finished());
            thread
                .join()
                .expect("serve does not panic")
                .expect("serve ends cleanly");
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            self.shut();
        }
    }
}

fn agent_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o700))
        .expect("chmod 0700");
    dir
}

fn serve_test_agent(dir: &Path) -> (Arc<FixedAgent>, Served) {
    let agent = FixedAgent::with_test_machines(dir);
    let served = Served::start(dir, agent.clone()).expect("serving");
    (agent, served)
}

/// A raw connection to the socket, for saying what a client never would.
struct Raw {
    stream: BufReader<UnixStream>,
}

impl Raw {
    fn connect(dir: &Path) -> Raw {
        let stream = UnixStream::connect(control::socket_path(dir)).expect("connecting");
        stream.set_read_timeout(Some(WAIT)).expect("read timeout");
        stream.set_write_timeout(Some(WAIT)).expect("write timeout");
        Raw {
            stream: BufReader::new(stream),
        }
    }

    /// Writes `bytes`; a server that closed early is not a failure here.
    fn send(&mut self, bytes: &[u8]) {
        match self.stream.get_mut().write_all(bytes) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
            Err(e) => panic!("writing to the socket: {e}"),
        }
    }

    /// The next response line, or `None` at end of input.
    fn response(&mut self) -> Option<Response> {
        let mut line = String::new();
        let n = self
            .stream
            .read_line(&mut line)
            .expect("a line before the timeout");
        (n > 0).then(|| serde_json::from_str(&line).expect("a response"))
    }

    fn ask(&mut self, line: &[u8]) -> Response {
        self.send(line);
        self.response().expect("an answer")
    }

    /// The server closed the connection: end of input, or a reset (a
    /// connection still in the accept queue when the listener went away).
    fn assert_closed(&mut self) {
        let mut rest = Vec::new();
        match self.stream.read_to_end(&mut rest) {
            Ok(n) => assert_eq!(
                n,
                0,
                "unexpected bytes: {:?}",
                String::from_utf8_lossy(&rest)
            ),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("expected the end of input: {e}"),
        }
    }
}

fn error_message(response: Response) -> String {
    match response {
        Response::Error { message } => message,
        other => panic!("expected an error, got {other:?}"),
    }
}

/// The server still answers an ordinary client.
fn assert_serving(dir: &Path) {
    match Client::call(dir, &Request::Info).expect("the agent answers") {
        Response::Info(info) => assert_eq!(info.agent_id, "12D3KooWTest"),
        other => panic!("expected info, got {other:?}"),
    }
}

fn starling(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
        .args(args)
        // Never the real default data directory.
        .env("STARLING_DATA_DIR", "/nonexistent/starling-control-test")
        .output()
        .expect("starling runs")
}

fn ok(args: &[&str]) -> String {
    let o = starling(args);
    assert!(
        o.status.success(),
        "starling {args:?} failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8 output")
}

/// Runs a failing command; its standard error. Failures exit 2.
fn failing(args: &[&str]) -> String {
    let o = starling(args);
    assert_eq!(o.status.code(), Some(2), "starling {args:?}");
    assert!(o.stdout.is_empty(), "no output on failure");
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn path_str(path: &Path) -> &str {
    path.to_str().expect("utf-8 temp path")
}

// --- Client and status through the agent ---------------------------------

#[test]
fn client_gets_info_and_ads_from_a_served_handler() {
    let dir = agent_dir();
    let (agent, _served) = serve_test_agent(dir.path());
    let mut client = Client::connect(dir.path()).expect("connecting");
    match client.request(&Request::Info).expect("info") {
        Response::Info(info) => {
            assert_eq!(info.pid, std::process::id());
            assert_eq!(info.data_dir, dir.path());
            assert_eq!(info.ads.get("Machine"), Some(&5));
        }
        other => panic!("expected info, got {other:?}"),
    }
    // The same connection carries further requests.
    let ads = Request::Ads {
        kind: "machine".into(),
        constraint: Some("Cpus > 1".into()),
    };
    match client.request(&ads).expect("ads") {
        Response::Ads { ads } => {
            assert_eq!(ads, agent.ads);
            let parsed = starling_protocol::classad::parse_ad(&ads[0]).expect("new syntax");
            assert!(parsed.get("Name").is_some());
        }
        other => panic!("expected ads, got {other:?}"),
    }
    assert_eq!(agent.asked(), [Request::Info, ads]);
    // The one-shot form.
    assert_eq!(
        Client::call(dir.path(), &Request::Shutdown).expect("shutdown"),
        Response::Done
    );
}

#[test]
fn status_through_the_agent_prints_what_status_over_the_file_prints() {
    let dir = agent_dir();
    let (agent, _served) = serve_test_agent(dir.path());
    let d = path_str(dir.path());
    let table = ok(&["status", "--agent", d]);
    assert!(
        table.starts_with("Name                    OpSys      Arch   State"),
        "{table}"
    );
    assert!(table.contains("\nslot1@alpha.example.org LINUX      X86_64 Claimed   Busy"));
    for args in [
        &[][..],
        &["-total"],
        &["-af", "Name", "Cpus", "Memory * 2"],
        &["-json"],
        &["-l"],
        &["-constraint", "State == \"Unclaimed\"", "-af", "Name"],
        &["-constraint", "Cpus >= 2", "-json"],
        &["-constraint", "Arch == \"INTEL\"", "-total"],
    ] {
        let from_file = ok(&[&["status", "-ads", ADS], args].concat());
        let from_agent = ok(&[&["status", "--agent", d], args].concat());
        assert_eq!(from_agent, from_file, "status {args:?}");
        assert!(!from_agent.is_empty(), "status {args:?} printed nothing");
    }
    assert_eq!(
        ok(&[
            "status",
            "--agent",
            d,
            "-constraint",
            "State == \"Unclaimed\"",
            "-af",
            "Name"
        ]),
        "slot1@beta.example.org\nslot2@beta.example.org\n"
    );
    // The constraint went to the agent as well.
    assert!(
        agent.asked().contains(&Request::Ads {
            kind: "machine".into(),
            constraint: Some("State == \"Unclaimed\"".into()),
        }),
        "{:?}",
        agent.asked()
    );
}

#[test]
fn agent_flag_goes_before_or_after_the_subcommand() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let d = path_str(dir.path());
    let names = "slot1@alpha.example.org\nslot1@beta.example.org\nslot1@gamma.example.org\n\
                 slot2@beta.example.org\nslot2@gamma.example.org\n";
    let agent_eq = format!("--agent={d}");
    for args in [
        &["--agent", d, "status", "-af", "Name"][..],
        &["status", "--agent", d, "-af", "Name"],
        &["status", "-af", "Name", "--agent", d],
        &[&agent_eq, "status", "-af", "Name"],
        &["--data-dir", d, "status", "-af", "Name"],
        &["status", "-af", "Name", "--data-dir", d],
    ] {
        assert_eq!(ok(args), names, "starling {args:?}");
    }
    assert!(ok(&["--help"]).contains("--agent"), "--agent is shown");
}

#[test]
fn an_agent_error_is_the_command_error() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let err = failing(&[
        "status",
        "--agent",
        path_str(dir.path()),
        "-constraint",
        "Refuse",
    ]);
    assert!(err.contains("refused by the test agent"), "{err}");
    assert!(err.contains(path_str(dir.path())), "{err}");
}

#[test]
fn without_an_agent_status_names_the_directory_and_how_to_start_one() {
    let dir = agent_dir();
    let d = path_str(dir.path());
    let expected =
        format!("no running agent at {d} (start one with: starling agent --data-dir {d})");
    // No socket at all.
    let err = failing(&["status", "--agent", d]);
    assert!(err.contains(&expected), "{err}");
    assert!(err.contains("-ads FILE"), "{err}");
    // A socket file nobody listens on (an agent that died).
    drop(UnixListener::bind(control::socket_path(dir.path())).expect("binding"));
    assert!(control::socket_path(dir.path()).exists());
    let err = failing(&["status", "--agent", d]);
    assert!(err.contains(&expected), "{err}");
    // The client API says the same.
    let e = Client::call(dir.path(), &Request::Info).expect_err("no agent");
    assert!(matches!(e, control::Error::NoAgent { .. }), "{e:?}");
    assert_eq!(e.to_string(), expected);
    let e = Client::connect(dir.path()).expect_err("no agent");
    assert_eq!(e.kind(), std::io::ErrorKind::ConnectionRefused);
    assert_eq!(e.to_string(), expected);
}

#[test]
fn drain_options_are_checked_before_the_agent_is_asked() {
    let dir = agent_dir();
    let d = path_str(dir.path());
    let long = "x".repeat(control::MAX_DRAIN_REASON_LEN + 1);
    let err = failing(&["drain", "--agent", d, "-reason", &long]);
    assert!(err.contains("-reason is 257 bytes; at most 256"), "{err}");
    let err = failing(&["drain", "--agent", d, "-quick", "-fast"]);
    assert!(err.contains("cannot be used with"), "{err}");
    let err = failing(&["drain", "--agent", d, "-cancel", "-quick"]);
    assert!(err.contains("cannot be used with"), "{err}");
    // With no agent, it says so, as every command does.
    let err = failing(&["drain", "--agent", d]);
    assert!(err.contains("no running agent at"), "{err}");
}

// --- Hostile clients -------------------------------------------------------

#[test]
fn an_oversized_request_line_is_refused_naming_the_limit_and_closed() {
    let dir = agent_dir();
    let (agent, _served) = serve_test_agent(dir.path());
    let mut raw = Raw::connect(dir.path());
    let mut line = vec![b' '; MAX_REQUEST_LEN + 100];
    line.push(b'\n');
    raw.send(&line);
    let message = error_message(raw.response().expect("an answer"));
    assert!(message.contains(&MAX_REQUEST_LEN.to_string()), "{message}");
    raw.assert_closed();
    assert!(agent.asked().is_empty(), "nothing reached the handler");
    assert_serving(dir.path());
}

#[test]
fn a_request_line_of_exactly_the_limit_is_served() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let mut raw = Raw::connect(dir.path());
    let mut line = br#"{"op":"info"}"#.to_vec();
    line.resize(MAX_REQUEST_LEN, b' ');
    line.push(b'\n');
    assert!(matches!(raw.ask(&line), Response::Info(_)));
}

#[test]
fn garbage_unknown_ops_and_fields_get_errors_and_the_connection_stays_usable() {
    let dir = agent_dir();
    let (agent, _served) = serve_test_agent(dir.path());
    let mut raw = Raw::connect(dir.path());
    let cases: [(&[u8], &str); 9] = [
        (b"hello agent\n", "bad request"),
        (b"{\"op\":\"drain\",\"how\":\"slowly\"}\n", "slowly"),
        (b"{\"op\":\"drain\",\"when\":\"now\"}\n", "when"),
        (b"{\"op\":\"frobnicate\"}\n", "frobnicate"),
        (b"{\"op\":\"ads\",\"colour\":\"red\"}\n", "colour"),
        (b"{\"op\":\"info\",\"colour\":\"red\"}\n", "colour"),
        (b"{\"kind\":\"machine\"}\n", "op"),
        (b"[1,2,3]\n", "bad request"),
        (b"\xff\xfe\x00{\n", "bad request"),
    ];
    for (line, named) in cases {
        let message = error_message(raw.ask(line));
        assert!(
            message.contains(named),
            "{:?}: {message}",
            String::from_utf8_lossy(line)
        );
    }
    assert!(agent.asked().is_empty(), "nothing reached the handler");
    // Blank lines are skipped; the connection still serves.
    assert!(matches!(
        raw.ask(b"\n  \n{\"op\":\"info\"}\n"),
        Response::Info(_)
    ));
    // An ads request with no fields is for machine ads.
    assert!(matches!(
        raw.ask(b"{\"op\":\"ads\"}\n"),
        Response::Ads { .. }
    ));
    assert_eq!(
        agent.asked()[1],
        Request::Ads {
            kind: "machine".into(),
            constraint: None
        }
    );
}

#[test]
fn half_a_line_then_close_leaves_the_server_serving() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    // Closed outright mid-line.
    let mut raw = Raw::connect(dir.path());
    raw.send(b"{\"op\":\"in");
    drop(raw);
    // Half-closed mid-line: what there is gets an error, then the end.
    let mut raw = Raw::connect(dir.path());
    raw.send(b"{\"op\":\"in");
    raw.stream
        .get_ref()
        .shutdown(std::net::Shutdown::Write)
        .expect("half close");
    let message = error_message(raw.response().expect("an answer"));
    assert!(message.contains("bad request"), "{message}");
    raw.assert_closed();
    // A whole last request without its newline is answered.
    let mut raw = Raw::connect(dir.path());
    raw.send(b"{\"op\":\"info\"}");
    raw.stream
        .get_ref()
        .shutdown(std::net::Shutdown::Write)
        .expect("half close");
    assert!(matches!(raw.response(), Some(Response::Info(_))));
    raw.assert_closed();
    assert_serving(dir.path());
}

#[test]
fn a_hundred_idle_connections_lock_nobody_out() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let mut conns: Vec<Raw> = Vec::new();
    for _ in 0..100 {
        // Each asks once and then sits idle, holding its connection.
        let mut raw = Raw::connect(dir.path());
        assert!(matches!(raw.ask(b"{\"op\":\"info\"}\n"), Response::Info(_)));
        conns.push(raw);
    }
    // The oldest idle ones were closed to make room, saying why.
    match conns[0].response() {
        Some(Response::Error { message }) => assert!(message.contains("make room"), "{message}"),
        other => panic!("unexpected {other:?}"),
    }
    conns[0].assert_closed();
    // The newest are still open and usable, and a new command is served.
    assert!(matches!(
        conns[99].ask(b"{\"op\":\"info\"}\n"),
        Response::Info(_)
    ));
    assert!(matches!(
        Client::call(dir.path(), &Request::Info),
        Ok(Response::Info(_))
    ));
}

/// A served stand-in agent and one connection to it, for tests in paused
/// time: its directory, the serving task, and the connection's halves.
async fn serve_and_connect() -> (
    tempfile::TempDir,
    tokio::task::JoinHandle<std::io::Result<()>>,
    tokio::io::BufReader<tokio::net::unix::OwnedReadHalf>,
    tokio::net::unix::OwnedWriteHalf,
) {
    let dir = agent_dir();
    let listener = control::bind(dir.path()).await.expect("binding");
    let serving = tokio::spawn(listener.serve(FixedAgent::with_test_machines(dir.path())));
    let stream = tokio::net::UnixStream::connect(control::socket_path(dir.path()))
        .await
        .expect("connecting");
    let (read, write) = stream.into_split();
    (dir, serving, tokio::io::BufReader::new(read), write)
}

/// A client dripping a request a byte at a time is cut off once the
/// request has taken [`server::REQUEST_TIMEOUT`] (paused time).
#[tokio::test(start_paused = true)]
async fn a_request_dripped_a_byte_at_a_time_is_cut_off() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let (_dir, serving, mut read, mut write) = serve_and_connect().await;
    let start = tokio::time::Instant::now();
    let dripping = async {
        for byte in b"{\"op\":\"info\"}".iter().cycle() {
            if write.write_all(&[*byte]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    };
    let mut line = String::new();
    tokio::select! {
        () = dripping => {}
        _ = read.read_line(&mut line) => {}
    }
    assert!(line.contains("no whole request within"), "{line}");
    assert!(start.elapsed() >= server::REQUEST_TIMEOUT);
    assert!(start.elapsed() < server::REQUEST_TIMEOUT * 2);
    serving.abort();
}

#[test]
fn a_panicking_handler_closes_only_its_connection() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let mut raw = Raw::connect(dir.path());
    raw.send(b"{\"op\":\"peers\"}\n");
    assert_eq!(raw.response(), None, "closed without an answer");
    let e = Client::call(dir.path(), &Request::Peers).expect_err("no answer");
    assert!(matches!(e, control::Error::Closed { .. }), "{e:?}");
    assert!(e.to_string().contains("closed the connection"), "{e}");
    assert_serving(dir.path());
}

/// A connection that sends nothing is closed after the idle timeout, and
/// one that keeps asking is not (paused time: no real minute passes).
#[tokio::test(start_paused = true)]
async fn idle_connections_are_closed() {
    use tokio::io::{AsyncBufReadExt as _, AsyncWriteExt as _};
    let (_dir, serving, mut read, mut write) = serve_and_connect().await;
    let start = tokio::time::Instant::now();
    for _ in 0..3 {
        tokio::time::sleep(server::IDLE_TIMEOUT - Duration::from_secs(1)).await;
        write
            .write_all(b"{\"op\":\"info\"}\n")
            .await
            .expect("sending");
        let mut line = String::new();
        read.read_line(&mut line).await.expect("an answer");
        assert!(line.contains("\"result\":\"info\""), "{line}");
    }
    let asked_at = tokio::time::Instant::now();
    let mut line = String::new();
    let n = tokio::time::timeout(server::IDLE_TIMEOUT * 2, read.read_line(&mut line))
        .await
        .expect("closed before twice the timeout")
        .expect("reading");
    assert_eq!(n, 0, "closed: {line}");
    assert!(asked_at.elapsed() >= server::IDLE_TIMEOUT);
    assert!(start.elapsed() >= server::IDLE_TIMEOUT * 3);
    serving.abort();
}

// --- The socket file ------------------------------------------------------

/// A root agent's socket is every local user's (the agent decides per
/// request); any other agent's is its own user's only.
#[test]
fn the_socket_is_open_to_local_users_only_when_root() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let meta = std::fs::metadata(control::socket_path(dir.path())).expect("socket");
    let root = rustix::process::geteuid().is_root();
    assert_eq!(
        meta.permissions().mode() & 0o777,
        if root { 0o666 } else { 0o600 }
    );
}

/// The handler learns who asks from the socket: this process's uid, gid,
/// pid and user name.
#[test]
fn the_handler_is_told_who_asks_by_the_kernel() {
    let dir = agent_dir();
    let (agent, _served) = serve_test_agent(dir.path());
    Client::call(dir.path(), &Request::Info).expect("an answer");
    let callers = agent.callers.lock().expect("not poisoned").clone();
    let uid = rustix::process::getuid().as_raw();
    assert_eq!(
        callers,
        [Caller {
            uid,
            gid: rustix::process::getgid().as_raw(),
            pid: i32::try_from(std::process::id()).ok(),
            name: starling_process::users::name_of(uid),
        }]
    );
    if uid == 0 {
        assert_eq!(callers[0].name.as_deref(), Some("root"));
    }
}

#[test]
fn a_stale_socket_file_is_replaced() {
    let dir = agent_dir();
    drop(UnixListener::bind(control::socket_path(dir.path())).expect("binding"));
    let (_agent, _served) = serve_test_agent(dir.path());
    assert_serving(dir.path());
}

/// What `serve` in `dir` fails with at once (it must not start serving).
fn serve_refused(dir: &Path) -> std::io::Error {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let served = runtime.block_on(async {
        tokio::time::timeout(
            WAIT,
            control::serve(dir, FixedAgent::with_test_machines(dir)),
        )
        .await
    });
    served
        .expect("serve returns at once")
        .expect_err("serve is refused")
}

#[test]
fn a_second_agent_on_a_live_socket_is_refused_and_the_first_keeps_its_socket() {
    let dir = agent_dir();
    let (_agent, _served) = serve_test_agent(dir.path());
    let e = serve_refused(dir.path());
    assert_eq!(e.kind(), std::io::ErrorKind::AddrInUse);
    assert!(
        e.to_string().contains(&format!(
            "another agent is running in {}",
            dir.path().display()
        )),
        "{e}"
    );
    assert!(matches!(
        e.get_ref().and_then(|e| e.downcast_ref::<control::Error>()),
        Some(control::Error::AgentRunning { .. })
    ));
    assert!(control::socket_path(dir.path()).exists());
    assert_serving(dir.path());
}

#[test]
fn something_else_where_the_socket_goes_is_left_alone() {
    let dir = agent_dir();
    let path = control::socket_path(dir.path());
    std::fs::write(&path, "not a socket").expect("writing");
    let e = serve_refused(dir.path());
    assert!(e.to_string().contains("is not a socket"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&path).expect("kept"),
        "not a socket"
    );
}

#[test]
fn dropping_serve_removes_the_socket_file() {
    let dir = agent_dir();
    let (_agent, served) = serve_test_agent(dir.path());
    let mut raw = Raw::connect(dir.path());
    served.stop();
    assert!(!control::socket_path(dir.path()).exists());
    // Open connections were closed with it.
    raw.assert_closed();
    let e = Client::call(dir.path(), &Request::Info).expect_err("no agent");
    assert!(matches!(e, control::Error::NoAgent { .. }), "{e:?}");
}

// --- The client against misbehaving agents ----------------------------------

/// A fake agent that accepts one connection and does `then` with it.
fn fake_agent(dir: &Path, then: impl FnOnce(UnixStream) + Send + 'static) -> JoinHandle<()> {
    let listener = UnixListener::bind(control::socket_path(dir)).expect("binding");
    std::thread::spawn(move || {
        if let Ok((stream, _)) = listener.accept() {
            then(stream);
        }
    })
}

#[test]
fn the_client_gives_up_on_an_agent_that_does_not_answer() {
    let dir = agent_dir();
    let (hold, held) = std::sync::mpsc::channel::<()>();
    let fake = fake_agent(dir.path(), move |_stream| {
        let _ = held.recv_timeout(WAIT);
    });
    let mut client = Client::connect(dir.path()).expect("connecting");
    client.set_read_timeout(Duration::from_millis(200));
    let started = Instant::now();
    let e = client.request(&Request::Info).expect_err("a timeout");
    assert!(started.elapsed() < WAIT);
    assert_eq!(e.kind(), std::io::ErrorKind::TimedOut);
    assert!(e.to_string().contains("did not answer within 0.2 s"), "{e}");
    drop(hold);
    fake.join().expect("fake agent");
}

#[test]
fn the_client_reports_an_answer_it_cannot_read() {
    let dir = agent_dir();
    let fake = fake_agent(dir.path(), |mut stream| {
        let _ = stream.write_all(b"{\"result\":\"teapot\"}\n");
    });
    let e = Client::call(dir.path(), &Request::Info).expect_err("unreadable");
    assert!(matches!(e, control::Error::BadResponse { .. }), "{e:?}");
    fake.join().expect("fake agent");
}

#[test]
fn the_client_reads_no_more_than_the_response_limit() {
    let dir = agent_dir();
    let fake = fake_agent(dir.path(), |mut stream| {
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..=(MAX_RESPONSE_LEN >> 20) {
            if stream.write_all(&chunk).is_err() {
                return;
            }
        }
        let _ = stream.write_all(b"\n");
    });
    let e = Client::call(dir.path(), &Request::Info).expect_err("too long");
    assert!(
        matches!(e, control::Error::ResponseTooLong { limit, .. } if limit == MAX_RESPONSE_LEN),
        "{e:?}"
    );
    fake.join().expect("fake agent");
}

// --- The pid file ---------------------------------------------------------

#[test]
fn the_pid_file_holds_our_pid_until_dropped() {
    let dir = agent_dir();
    assert_eq!(control::read_pid(dir.path()), None);
    let pid_file = PidFile::acquire(dir.path()).expect("acquiring");
    let path = control::pid_path(dir.path());
    assert_eq!(
        std::fs::read_to_string(&path).expect("pid file"),
        format!("{}\n", std::process::id())
    );
    assert_eq!(control::read_pid(dir.path()), Some(std::process::id()));
    drop(pid_file);
    assert!(!path.exists());
    // No temporary left beside it.
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("listing").collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_second_holder_is_refused_while_the_first_lives() {
    let dir = agent_dir();
    let first = PidFile::acquire(dir.path()).expect("acquiring");
    let e = PidFile::acquire(dir.path()).expect_err("refused");
    assert!(
        matches!(e, control::Error::AgentRunning { pid: Some(p), .. } if p == std::process::id()),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "another agent is running in {} (pid {})",
            dir.path().display(),
            std::process::id()
        )
    );
    // The refusal left the holder's file alone.
    assert_eq!(control::read_pid(dir.path()), Some(first.pid()));
    drop(first);
    let _again = PidFile::acquire(dir.path()).expect("free again");
}

#[test]
fn a_live_starling_in_the_pid_file_is_refused() {
    let dir = agent_dir();
    // `starling eval --stdin` runs until its input ends: a live starling.
    let mut child = Command::new(env!("CARGO_BIN_EXE_starling-e2e"))
        .args(["eval", "--stdin"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("starling runs");
    let comm = format!("/proc/{}/comm", child.id());
    wait_until("the child runs starling", || {
        // The binary under test is `starling-e2e`: its process name.
        std::fs::read_to_string(&comm).is_ok_and(|c| c.trim_end() == "starling-e2e")
    });
    std::fs::write(control::pid_path(dir.path()), format!("{}\n", child.id())).expect("writing");
    let refused = PidFile::acquire(dir.path());
    drop(child.stdin.take());
    child.wait().expect("the child ends");
    let e = refused.expect_err("refused");
    assert!(
        matches!(e, control::Error::AgentRunning { pid: Some(p), .. } if p == child.id()),
        "{e:?}"
    );
}

#[test]
fn a_pid_file_of_a_dead_process_is_taken_over() {
    let dir = agent_dir();
    let path = control::pid_path(dir.path());
    // A zombie: exited, not yet waited for.
    let mut child = Command::new("true").spawn().expect("true runs");
    let stat = format!("/proc/{}/stat", child.id());
    wait_until("the child has exited", || {
        std::fs::read_to_string(&stat).is_ok_and(|s| s.contains(") Z"))
    });
    std::fs::write(&path, format!("{}\n", child.id())).expect("writing");
    let taken = PidFile::acquire(dir.path()).expect("a zombie is dead");
    assert_eq!(control::read_pid(dir.path()), Some(std::process::id()));
    drop(taken);
    // Gone entirely.
    child.wait().expect("reaped");
    std::fs::write(&path, format!("{}\n", child.id())).expect("writing");
    let _taken = PidFile::acquire(dir.path()).expect("a dead pid is stale");
    assert_eq!(control::read_pid(dir.path()), Some(std::process::id()));
}

#[test]
fn a_pid_file_naming_another_program_or_nothing_is_taken_over() {
    let dir = agent_dir();
    let path = control::pid_path(dir.path());
    // The pid was reused by a program that is not starling.
    let mut sleeper = Command::new("sleep").arg("30").spawn().expect("sleep runs");
    std::fs::write(&path, format!("{}\n", sleeper.id())).expect("writing");
    let taken = PidFile::acquire(dir.path());
    sleeper.kill().expect("killing sleep");
    sleeper.wait().expect("reaped");
    drop(taken.expect("not an agent"));
    for junk in ["", "garbage\n", "0\n", "-5\n"] {
        std::fs::write(&path, junk).expect("writing");
        let taken = PidFile::acquire(dir.path()).expect("damaged file is stale");
        assert_eq!(control::read_pid(dir.path()), Some(std::process::id()));
        drop(taken);
    }
}

#[test]
fn dropping_a_pid_file_leaves_a_successors_file() {
    let dir = agent_dir();
    let path = control::pid_path(dir.path());
    let ours = PidFile::acquire(dir.path()).expect("acquiring");
    std::fs::write(&path, "4194304\n").expect("a successor took over");
    drop(ours);
    assert_eq!(control::read_pid(dir.path()), Some(4_194_304));
}

/// A stand-in agent slower than a query's answer timeout at acting on
/// jobs, as an agent removing a 100,000-job cluster is in a debug build.
struct SlowAgent;

/// How long [`SlowAgent`] takes: past the 10 s a query waits.
const SLOW: Duration = Duration::from_secs(12);

#[async_trait::async_trait]
impl Handler for SlowAgent {
    async fn handle(&self, _caller: &Caller, request: Request) -> Response {
        match request {
            Request::Act { .. } => {
                tokio::time::sleep(SLOW).await;
                Response::Acted {
                    changed: (0..100_000).map(|p| format!("10.{p}")).collect(),
                    skipped: Vec::new(),
                }
            }
            _ => Response::Done,
        }
    }
}

#[test]
fn removing_a_large_cluster_waits_for_the_agent_and_says_it_in_one_line() {
    let dir = agent_dir();
    let _served = Served::start(dir.path(), Arc::new(SlowAgent)).expect("serving");
    let started = Instant::now();
    let o = starling(&["rm", "10", "--agent", path_str(dir.path())]);
    let (out, err) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(o.status.success(), "{out}\n{err}");
    assert!(started.elapsed() >= SLOW);
    assert_eq!(out, "All jobs in cluster 10 have been marked for removal\n");
    assert!(err.contains("still working"), "{err}");
}

#[test]
fn status_agent_with_no_directory_names_what_was_typed() {
    let err = failing(&["status", "-agent"]);
    assert!(err.contains("'-agent'"), "{err}");
    assert!(err.contains("starling whoami"), "{err}");
    assert!(!err.contains("--data-dir"), "{err}");
}
