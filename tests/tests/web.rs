//! The agent's web page and Prometheus metrics (`[http] listen`) on a real
//! pool: scraped over HTTP as Prometheus would, and loaded in a real
//! headless Chromium, whose screenshot is kept in the test's output
//! directory (`target/tmp/web/`).
//!
//! Chromium is Debian's `chromium` package (`scripts/test` installs it when
//! run as root); without it the browser half is skipped with a message.

use std::collections::BTreeMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod support;

use support::*;

/// `GET path` on `port` of loopback: the body of a 200 answer, or `None`.
fn get(port: u16, path: &str) -> Option<String> {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(15))).ok()?;
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut answer = String::new();
    s.read_to_string(&mut answer).ok()?;
    let (head, body) = answer.split_once("\r\n\r\n")?;
    head.starts_with("HTTP/1.1 200 ").then(|| body.to_owned())
}

/// The value of the sample `name{labels}` (exactly as written) in `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
}

/// `starling_slots` summed by state.
fn slots_by_state(text: &str) -> BTreeMap<String, u64> {
    let mut by = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("starling_slots{")) {
        let state = line
            .split("state=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or_default();
        let n: f64 = line.rsplit(' ').next().unwrap().parse().unwrap();
        *by.entry(state.to_owned()).or_default() += n as u64;
    }
    by
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// The test's output directory, kept after the test.
fn output_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        std::env::var_os("PATH").and_then(|path| {
            std::env::split_paths(&path)
                .map(|d| d.join(name))
                .find(|p| p.is_file())
        })
    })
}

/// Runs headless Chromium on `url` with `args` in a fresh profile; its
/// standard output, once it exits (killed after a minute).
fn run_chromium(chromium: &Path, args: &[&str], url: &str) -> String {
    let profile = tempfile::tempdir().unwrap();
    let out = tempfile::NamedTempFile::new().unwrap();
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-dev-shm-usage",
            // Waits for the page's fetches and timers, in virtual time.
            "--virtual-time-budget=5000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(args)
        .arg(url)
        .stdin(Stdio::null())
        .stdout(out.reopen().unwrap())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium starts");
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium {args:?} failed: {status}");
            break;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chromium {args:?} took longer than a minute");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    std::fs::read_to_string(out.path()).unwrap()
}

#[test]
fn metrics_and_page_show_the_pool_and_a_completed_job() {
    let pool = Pool::up(2);
    let port = free_port();
    let listen = toml::Value::String(format!("127.0.0.1:{port}"));
    // Agent 1 (which dials agent 0 at start) serves the page.
    let _agent = pool.reconfigure(1, "http", &[("listen", listen)], 0);
    let work = tempfile::tempdir().unwrap();

    // The machines by state are what `starling status` shows (both from
    // the same view; polled until the view has settled on both machines).
    let (metrics, states) = wait_for(
        Duration::from_secs(60),
        "metrics and status agreeing on both machines",
        || {
            let metrics = get(port, "/metrics")?;
            let status = pool.ok(1, work.path(), &["status", "-af", "State"]);
            let mut states = BTreeMap::<String, u64>::new();
            for state in status.lines() {
                *states.entry(state.to_owned()).or_default() += 1;
            }
            let by_state = slots_by_state(&metrics);
            (states.values().sum::<u64>() >= 2 && by_state == states).then_some((metrics, states))
        },
    );
    assert_eq!(states.get("Unclaimed"), Some(&2), "{states:?}");
    assert_eq!(sample(&metrics, "starling_peers"), Some(1.0), "{metrics}");
    assert!(
        sample(
            &metrics,
            r#"starling_network_bytes_total{direction="received"}"#
        )
        .is_some_and(|b| b > 0.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, r#"starling_jobs{status="completed"}"#),
        Some(0.0),
        "{metrics}"
    );

    // After a job completes, the jobs by status say so.
    std::fs::write(
        work.path().join("job.sub"),
        "executable = /bin/echo\narguments = hello\noutput = out.txt\n\
         requirements = TARGET.Name == \"slot1@agent-00.d0.testnet\"\nqueue 1\n",
    )
    .unwrap();
    pool.ok(1, work.path(), &["submit", "job.sub"]);
    pool.wait_queue_empty(1, Duration::from_secs(60));
    let metrics = wait_for(Duration::from_secs(10), "a completed job counted", || {
        get(port, "/metrics")
            .filter(|m| sample(m, r#"starling_jobs{status="completed"}"#) == Some(1.0))
    });
    assert_eq!(
        sample(&metrics, r#"starling_jobs{status="idle"}"#),
        Some(0.0),
        "{metrics}"
    );
    assert_eq!(
        sample(&metrics, r#"starling_jobs{status="running"}"#),
        Some(0.0),
        "{metrics}"
    );
    // Its claim on agent 0, the time the claim took, and its output
    // ("hello\n") pulled back from there.
    assert_eq!(
        sample(&metrics, r#"starling_claims_total{outcome="granted"}"#),
        Some(1.0),
        "{metrics}"
    );
    assert_eq!(
        sample(
            &metrics,
            r#"starling_negotiation_latency_seconds_count{outcome="granted"}"#
        ),
        Some(1.0),
        "{metrics}"
    );
    assert!(
        sample(
            &metrics,
            r#"starling_transfer_bytes_total{direction="received"}"#
        )
        .is_some_and(|b| b >= 6.0),
        "{metrics}"
    );
    // Agent 0's ad changed as it ran the job and came here by gossip.
    wait_for(Duration::from_secs(10), "a gossiped ad accepted", || {
        get(port, "/metrics").filter(|m| {
            sample(m, r#"starling_gossip_ads_total{verdict="accepted"}"#).is_some_and(|n| n >= 1.0)
        })
    });
    assert_eq!(
        std::fs::read_to_string(work.path().join("out.txt")).unwrap(),
        "hello\n"
    );
    // A job of agent 0's for this machine: the claim it decided.
    assert_eq!(
        sample(
            &metrics,
            r#"starling_claims_decided_total{outcome="granted"}"#
        ),
        Some(0.0),
        "{metrics}"
    );
    let other = tempfile::tempdir().unwrap();
    std::fs::write(
        other.path().join("job.sub"),
        "executable = /bin/true
         requirements = TARGET.Name == \"slot1@agent-01.d0.testnet\"\nqueue 1\n",
    )
    .unwrap();
    pool.ok(0, other.path(), &["submit", "job.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(60));
    let metrics = get(port, "/metrics").expect("metrics");
    assert_eq!(
        sample(
            &metrics,
            r#"starling_claims_decided_total{outcome="granted"}"#
        ),
        Some(1.0),
        "{metrics}"
    );

    // The page, rendered by a real browser after its script ran.
    let Some(chromium) = chromium() else {
        eprintln!(
            "SKIPPED the browser half: no chromium in PATH (apt-get install chromium; \
             scripts/test does it when run as root)"
        );
        return;
    };
    let url = format!("http://127.0.0.1:{port}/");
    let dom = run_chromium(&chromium, &["--dump-dom"], &url);
    let names = pool.ok(1, work.path(), &["status", "-af", "Name"]);
    for name in names.lines() {
        assert!(dom.contains(name), "the page lacks machine {name}:\n{dom}");
    }
    assert!(dom.contains("1.0"), "the page lacks job 1.0:\n{dom}");
    assert!(
        dom.contains("completed"),
        "the page lacks the job's status:\n{dom}"
    );
    assert!(
        dom.contains(r#"<div id="errors" class="errors"></div>"#),
        "the page shows errors:\n{dom}"
    );
    let shot = output_dir().join("page.png");
    let _ = std::fs::remove_file(&shot);
    run_chromium(
        &chromium,
        &[
            &format!("--screenshot={}", shot.display()),
            "--window-size=1200,800",
        ],
        &url,
    );
    let png = std::fs::read(&shot).unwrap_or_default();
    assert!(
        png.starts_with(b"\x89PNG"),
        "no screenshot at {}",
        shot.display()
    );
    eprintln!("screenshot of the page: {}", shot.display());
}

#[test]
fn a_port_in_use_stops_the_agent_with_a_message() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(
        &config,
        format!(
            "[http]\nlisten = \"{}\"\n[network]\nlisten = [\"/ip4/127.0.0.1/tcp/0\"]\nmdns = false\n",
            taken.local_addr().unwrap()
        ),
    )
    .unwrap();
    let out = starling_in(
        dir.path(),
        &[
            "agent",
            "--data-dir",
            dir.path().join("data").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("[http] listen") && err.contains("in use"),
        "{err}"
    );
}

#[test]
fn a_public_address_must_be_meant() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("agent.toml");
    std::fs::write(&config, "[http]\nlisten = \"0.0.0.0:9618\"\n").unwrap();
    let out = starling_in(
        dir.path(),
        &[
            "agent",
            "--data-dir",
            dir.path().join("data").to_str().unwrap(),
            "--config",
            config.to_str().unwrap(),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(
        err.contains("http.listen") && err.contains("public"),
        "{err}"
    );
}
