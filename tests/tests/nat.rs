//! Agents behind NAT join and run jobs through a relay (issue 21), with
//! real agents in network namespaces (`starling testnet up --netns --nat`,
//! as root, with nftables):
//!
//! ```text
//!   agent-02 (d0) 10.0.1.12 ─ NAT A ─┐                ┌─ NAT B ─ 10.1.1.11 agent-01 (d1)
//!                    (masquerade)    ├─ core ─ relay ─┤    (masquerade)
//!                                    │  agent-00 (d0), 10.255.1.1, `[relay] serve`
//! ```
//!
//! - neither organisation can dial into the other: a connection from
//!   agent-02's namespace to agent-01's address fails;
//! - AutoNAT finds the relay public and both agents behind NAT private;
//! - each agent behind NAT listens through the relay (a `/p2p-circuit`
//!   address);
//! - a job from d0 runs on d1's machine behind NAT B and one from d1 on
//!   d0's machine behind NAT A, input and output crossing the relay or a
//!   hole punched through both NATs;
//! - the two agents behind NAT first connect through the relay, and DCUtR
//!   then punches a hole for a direct connection;
//! - a stranger behind NAT A (an agent with no certificate of a trusted
//!   domain) configured with the same relay connects to it, is refused
//!   (its certificates are asked for twice) and gets no reservation: the
//!   relay serves only trusted domains;
//! - at the end every namespace, nftables table and process is gone (the
//!   pool's drop guard runs `testnet down`'s cleanup, also on panic).

use std::process::Command;
use std::time::Duration;

mod support;

use starling_control::{Client, Request, Response};
use starling_testnet::AgentState;
use support::*;

/// How long the agents have to reach a state (they reach it in seconds).
const SETTLE: Duration = Duration::from_secs(45);

fn skip_reason() -> Option<&'static str> {
    if !rustix::process::geteuid().is_root() {
        return Some("--netns --nat needs root");
    }
    let nft = Command::new("nft").arg("--version").output();
    if !nft.is_ok_and(|o| o.status.success()) {
        return Some("--nat needs nft (apt-get install nftables)");
    }
    None
}

/// Each agent's listen addresses and reachability, once every agent
/// answers.
fn infos(pool: &Pool) -> Option<Vec<(Vec<String>, String)>> {
    let (_, statuses) = starling_testnet::status(&pool.dir).ok()?;
    statuses
        .into_iter()
        .map(|s| match s.state {
            AgentState::Running { info, .. } => Some((info.listen, info.reachability)),
            _ => None,
        })
        .collect()
}

/// Whether a TCP connection from namespace `ns` to `address` succeeds
/// within two seconds.
fn connects(ns: &str, address: std::net::SocketAddr) -> bool {
    in_namespace(ns, move || {
        std::net::TcpStream::connect_timeout(&address, Duration::from_secs(2)).is_ok()
    })
    .join()
    .unwrap()
}

/// The addresses agent `i` is connected to peer `id` on (none when not
/// connected).
fn connected_on(pool: &Pool, i: usize, id: &str) -> Option<Vec<String>> {
    let mut client = Client::connect(&pool.agent(i)).ok()?;
    client.set_read_timeout(Duration::from_secs(5));
    match client.request(&Request::Peers).ok()? {
        Response::Peers { peers } => peers
            .into_iter()
            .find(|p| p.agent_id == id)
            .map(|p| p.addresses),
        _ => None,
    }
}

/// `/ip4/A/tcp/P/...` as a socket address.
fn socket_of(multiaddr: &str) -> std::net::SocketAddr {
    let parts: Vec<&str> = multiaddr.split('/').collect();
    format!("{}:{}", parts[2], parts[4]).parse().unwrap()
}

/// Submits on agent `from` a job that must run on `host`, and returns
/// what it printed, and where it ran.
fn run_on(pool: &Pool, from: usize, host: &str, text: &str) -> (String, String) {
    let work = shared_dir();
    std::fs::write(work.path().join("in.txt"), text).unwrap();
    std::fs::write(
        work.path().join("job.sub"),
        format!(
            "executable = /bin/cat\narguments = in.txt\ntransfer_input_files = in.txt\n\
             output = out.txt\nrequirements = StarlingHost == \"{host}\"\nqueue\n"
        ),
    )
    .unwrap();
    pool.ok(from, work.path(), &["submit", "job.sub"]);
    pool.wait_queue_empty(from, SETTLE);
    let out = std::fs::read_to_string(work.path().join("out.txt")).unwrap_or_default();
    let ran = pool.af(from, true, &["LastRemoteHost"]);
    (out, ran.concat().join(" "))
}

#[test]
fn agents_behind_two_nats_join_through_a_relay_and_run_each_others_jobs() {
    if let Some(why) = skip_reason() {
        eprintln!("skipped: {why}");
        return;
    }
    let pool = Pool::up_as(
        None,
        3,
        &[
            "--domains",
            "2",
            "--netns",
            "--nat",
            "--jobs",
            "account=nobody",
            "--jobs",
            "private_tmp=false",
        ],
    );
    let layout = starling_testnet::Layout::load(&pool.dir).unwrap().unwrap();
    let prefix = layout.network.as_ref().unwrap().prefix.clone();
    assert!(layout.network.as_ref().unwrap().nat);

    // The relay is public, the others private; each of them listens
    // through the relay.
    let relay_id = &layout.agents[0].id;
    let infos = wait_for(SETTLE, "AutoNAT's verdicts and the reservations", || {
        let infos = infos(&pool)?;
        let relayed = |i: usize| {
            infos[i]
                .0
                .iter()
                .any(|a| a.contains(&format!("/p2p/{relay_id}/p2p-circuit/p2p/")))
        };
        let ready = infos[0].1.starts_with("public")
            && infos[1].1 == "private"
            && infos[2].1 == "private"
            && relayed(1)
            && relayed(2);
        ready.then_some(infos)
    });
    assert!(
        infos[0].0[0].starts_with(&format!("/ip4/{}/", starling_testnet::netns::RELAY_ADDRESS)),
        "{infos:?}"
    );

    // Where each agent listens, not through the relay.
    let direct = |i: usize| -> std::net::SocketAddr {
        socket_of(
            infos[i]
                .0
                .iter()
                .find(|a| !a.contains("p2p-circuit"))
                .unwrap(),
        )
    };
    // A stranger behind NAT A with the same relay, checked at the end
    // (when it has had time to be refused).
    let stranger = tempfile::tempdir().unwrap();
    let config = stranger.path().join("agent.toml");
    let relay_address = infos[0].0[0].clone();
    let listen = format!("/ip4/{}/tcp/0", direct(2).ip());
    std::fs::write(
        &config,
        format!("[network]\nlisten = [{listen:?}]\nrelays = [{relay_address:?}]\nmdns = false\n"),
    )
    .unwrap();
    let log = std::fs::File::create(stranger.path().join("agent.log")).unwrap();
    let data = stranger.path().join("data");
    let stranger_agent = Reap(
        Command::new("nsenter")
            .arg(format!("--net=/run/netns/{prefix}-a002"))
            .arg("--")
            .arg(env!("CARGO_BIN_EXE_starling-e2e"))
            .arg("--data-dir")
            .arg(&data)
            .args(["agent", "--config", config.to_str().unwrap()])
            // The network loop's debug lines say what the relay refused.
            .env("RUST_LOG", "info,starling_agent::network=debug")
            .stdin(std::process::Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap(),
    );

    // The NATs hold: neither side can dial into the other's network, while
    // both reach the relay.
    assert!(!connects(&format!("{prefix}-a002"), direct(1)));
    assert!(!connects(&format!("{prefix}-a001"), direct(2)));
    assert!(connects(&format!("{prefix}-a001"), direct(0)));
    assert!(connects(&format!("{prefix}-a002"), direct(0)));

    // A job from d0 (agent-02, behind NAT A) runs on d1's machine behind
    // NAT B, and one from d1 on d0's machine behind NAT A.
    let (out, ran) = run_on(&pool, 2, "agent-01.d1.testnet", "from d0, behind NAT A\n");
    assert_eq!(out, "from d0, behind NAT A\n", "{}", pool.log_tail(2));
    assert!(ran.contains("agent-01.d1.testnet"), "{ran}");
    let (out, ran) = run_on(&pool, 1, "agent-02.d0.testnet", "from d1, behind NAT B\n");
    assert_eq!(out, "from d1, behind NAT B\n", "{}", pool.log_tail(1));
    assert!(ran.contains("agent-02.d0.testnet"), "{ran}");

    // The two agents met through the relay, and DCUtR replaced that with
    // a direct connection through both NATs (hole punching: each NAT lets
    // in the other's dial because it answers one of its own).
    let (one, two) = (&layout.agents[1].id, &layout.agents[2].id);
    let via = wait_for(SETTLE, "a hole punched between the NATs", || {
        let on = connected_on(&pool, 1, two)?;
        on.iter().any(|a| !a.contains("p2p-circuit")).then_some(on)
    });
    // The relayed connection: the dialer sees the relay's circuit address,
    // the listener only its peer's id.
    let other = connected_on(&pool, 2, one).unwrap_or_default();
    let relayed = |a: &String| a.contains("/p2p-circuit/") || a.starts_with("/p2p/");
    assert!(via.iter().chain(&other).any(relayed), "{via:?} {other:?}");

    // The relay refused the stranger's certificates twice (as it
    // connected, and when it asked again), and the stranger listens
    // through no relay: the relay serves only trusted domains.
    let stranger_log =
        || std::fs::read_to_string(stranger.path().join("agent.log")).unwrap_or_default();
    wait_for(SETTLE, "the relay refusing the stranger twice", || {
        let refused = stranger_log()
            .lines()
            .filter(|l| {
                l.contains("peer refused a view pull")
                    && l.contains("no certificate from a domain trusted here")
            })
            .count();
        (refused >= 2).then_some(())
    });
    let info = starling_testnet::processes::agent_info(&data, Duration::from_secs(5)).unwrap();
    assert!(connected_on(&pool, 0, &info.agent_id).is_some());
    assert!(
        info.listen.iter().all(|a| !a.contains("p2p-circuit")),
        "{:?}\n{}",
        info.listen,
        stranger_log()
    );

    drop(stranger_agent);

    // Everything made goes with the pool (its drop guard does the same on
    // panic).
    let dir = pool.dir.clone();
    ok_in(
        &std::env::temp_dir(),
        &["testnet", "down", "--dir", dir.to_str().unwrap()],
    );
    assert_eq!(namespaces(&prefix), Vec::<String>::new());
    drop(pool);
}
