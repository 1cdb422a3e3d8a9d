//! The owners of links facing real peers (real agents on loopback; each
//! manages its host link, `testnet up --links host_mbps=...`).
//!
//! - Transfers without a reservation keep to what the host link has,
//!   paced by its owner: every agent manages an 8 Mbit/s host link and
//!   reserves nothing (`min_reserved_kib` past any input), and two jobs
//!   with 3 MB of input each go to two machines at once. The submit agent
//!   serves both inputs across its one link, sharing it between them
//!   (max-min, by what each moves; `links::Owner::gate`): 6 MB take at
//!   least about 6 s, where unpaced both would start within a second. (How
//!   evenly they share is in the unit tests of `links`, with a clock they
//!   control.)
//! - A peer asking what it should not, played by an agent in this process
//!   that sends link requests by hand (`Agent::transfer_request`) over
//!   real TCP: an agent of no trusted domain is refused any reservation; an
//!   agent of the domain is refused a replayed id, a commit of a hold it
//!   does not have, and never gets more than the link's capacity however
//!   its many holds interleave.
//!
//! Every wait polls a condition until a deadline.

use std::time::Duration;

mod support;

use support::*;

/// Prints when the job started (Unix seconds with a fraction).
const STARTED: &str = "#!/bin/sh\ndate +%s.%N\n";

#[test]
fn unreserved_inputs_keep_to_the_host_link_of_their_submit_agent() {
    let pool = Pool::up_as(
        None,
        3,
        &[
            "--links",
            "host_mbps=8",
            "--links",
            "min_reserved_kib=1073741824",
        ],
    );
    let work = tempfile::tempdir().unwrap();
    let script = work.path().join("started.sh");
    std::fs::write(&script, STARTED).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut description = String::from("executable = started.sh\n");
    for (i, machine) in ["agent-01.d0.testnet", "agent-02.d0.testnet"]
        .iter()
        .enumerate()
    {
        let input = format!("in{i}.dat");
        let bytes: Vec<u8> = (0..3_000_000u32)
            .map(|k| (k.wrapping_mul(2_654_435_761).wrapping_add(i as u32) >> 13) as u8)
            .collect();
        std::fs::write(work.path().join(&input), bytes).unwrap();
        description.push_str(&format!(
            "transfer_input_files = {input}\noutput = started{i}.txt\n\
             requirements = StarlingHost == \"{machine}\"\nqueue\n"
        ));
    }
    std::fs::write(work.path().join("two.sub"), description).unwrap();
    // Both machines are known before the jobs go, so they are placed at once.
    wait_for(Duration::from_secs(30), "every machine in the view", || {
        let hosts = pool.ok(0, work.path(), &["status", "-af", "StarlingHost"]);
        (hosts.lines().count() >= 3).then_some(())
    });
    let submitted = unix_now();
    pool.ok(0, work.path(), &["submit", "two.sub"]);
    pool.wait_queue_empty(0, Duration::from_secs(90));
    let started: Vec<f64> = (0..2)
        .map(|i| {
            let out = std::fs::read_to_string(work.path().join(format!("started{i}.txt")))
                .unwrap_or_default();
            out.trim()
                .parse::<f64>()
                .unwrap_or_else(|_| panic!("job {i} printed {out:?}"))
                - submitted
        })
        .collect();
    // 6 MB over a 1 MB/s link: the first 3 MB cannot have crossed before
    // about 3 s, nor all 6 MB before about 6 s (a quarter second's burst
    // and the jobs' own start aside).
    let (first, last) = (started[0].min(started[1]), started[0].max(started[1]));
    assert!(
        first >= 2.5,
        "a job started {first:.1} s after submit: {started:?}"
    );
    assert!(
        last >= 5.5,
        "the last job started {last:.1} s after submit: {started:?}"
    );
}

fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

/// An agent in this process, on real TCP, joined to `pool`'s agent-00:
/// admitted to the pool's domain when `admitted`, else in a domain of its
/// own that nobody trusts.
async fn rogue(pool: &Pool, root: &std::path::Path, admitted: bool) -> starling_agent::Agent {
    use starling_agent::{network::Transport, trust, Setup};
    let data = root.join("rogue");
    if admitted {
        admit_into(
            root,
            &data,
            &pool.dir.join("domains/d0.testnet.key"),
            "execute,submit",
        );
    } else {
        ok_in(root, &["id", "--data-dir", data.to_str().unwrap()]);
    }
    let dir = starling_storage::DataDir::open(&data).unwrap();
    let key = dir.agent_key().unwrap();
    let trust = trust::load(&dir, &key, starling_protocol::identity::Timestamp::now()).unwrap();
    let whoami = pool.ok(0, root, &["whoami", "--json"]);
    let whoami: serde_json::Value = serde_json::from_str(&whoami).unwrap();
    let bootstrap: Vec<String> = whoami["bootstrap"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a.as_str())
        .filter(|a| a.starts_with("/ip4/127.0.0.1/"))
        .map(str::to_owned)
        .collect();
    assert!(!bootstrap.is_empty(), "{whoami}");
    let mut config = starling_agent::config::Config::default();
    config.network.listen = vec!["/ip4/127.0.0.1/tcp/0".to_owned()];
    config.network.bootstrap = bootstrap;
    config.network.mdns = false;
    config.machine.name = Some("slot1@rogue".to_owned());
    starling_agent::Agent::start(Setup {
        key,
        trust,
        config,
        data_dir: None,
        store: std::sync::Arc::new(starling_storage::MemoryStore::new()),
        disk: None,
        transport: Transport::Tcp,
        control: false,
        probe: None,
    })
    .await
    .unwrap()
}

/// The peer id of `pool`'s agent `i`.
fn peer_of(pool: &Pool, i: usize) -> libp2p_identity::PeerId {
    let whoami = pool.ok(i, &std::env::temp_dir(), &["whoami", "--json"]);
    let whoami: serde_json::Value = serde_json::from_str(&whoami).unwrap();
    whoami["agent_id"].as_str().unwrap().parse().unwrap()
}

fn hold(id: u64, start_ms: u64, len_ms: u64, rate: u64) -> starling_protocol::transfer::Request {
    starling_protocol::transfer::Request::Hold {
        id,
        link: starling_protocol::links::LinkId::Host,
        slot: starling_protocol::links::Slot {
            start_ms,
            end_ms: start_ms + len_ms,
            rate,
        },
        lease_ms: 10_000,
        user: Some("mallory@d0.testnet".to_owned()),
    }
}

/// The refusal's reason, or the answer if it was not one.
fn refusal(answer: Result<starling_protocol::transfer::Response, String>) -> String {
    match answer {
        Ok(starling_protocol::transfer::Response::Error { reason, .. }) => reason,
        other => panic!("not refused: {other:?}"),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

#[test]
fn link_owners_refuse_strangers_replays_and_others_holds_and_never_pass_their_capacity() {
    let pool = Pool::up_as(None, 1, &["--links", "host_mbps=100"]);
    let root = tempfile::tempdir().unwrap();
    let owner = peer_of(&pool, 0);
    let runtime = tokio::runtime::Runtime::new().unwrap();

    // An agent nobody trusts is refused any reservation.
    let stranger = runtime.block_on(rogue(&pool, root.path(), false));
    let said = runtime.block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let answer = stranger
                .transfer_request(owner, hold(1, now_ms() + 1000, 1000, 1000))
                .await;
            match answer {
                Err(e) if tokio::time::Instant::now() < deadline => {
                    // Not connected yet.
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                other => return refusal(other),
            }
        }
    });
    assert!(
        said.contains("only for agents of trusted domains"),
        "{said}"
    );
    runtime.block_on(stranger.shutdown());
    std::fs::remove_dir_all(root.path().join("rogue")).unwrap();

    // An agent of the domain, once agent-00 has its ad.
    let mallory = runtime.block_on(rogue(&pool, root.path(), true));
    let start = now_ms() + 2000;
    let first = runtime.block_on(async {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        loop {
            let answer = mallory
                .transfer_request(owner, hold(7, start, 5000, 1_000_000))
                .await;
            match answer {
                Ok(starling_protocol::transfer::Response::Link(a)) => return a,
                _ if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                other => panic!("the admitted agent's hold was not held: {other:?}"),
            }
        }
    });
    assert_eq!(first, starling_protocol::links::LinkAnswer::Held { id: 7 });
    // Replayed: the id is taken.
    let again = runtime.block_on(mallory.transfer_request(owner, hold(7, start, 5000, 1)));
    assert!(refusal(again).contains("taken"));
    // A commit of a hold it does not have (another's, or none).
    let stolen = runtime.block_on(mallory.transfer_request(
        owner,
        starling_protocol::transfer::Request::Commit {
            id: 8,
            link: starling_protocol::links::LinkId::Host,
        },
    ));
    assert!(refusal(stolen).contains("no such hold"));

    // Forty holds at once, overlapping, 2 to 40 Mbit/s each, on a link
    // whose owner may reserve 95 Mbit/s: some are refused, and what is
    // held never passes 95 at any moment.
    let answers: Vec<bool> = runtime.block_on(async {
        let asks = (0..40u64).map(|k| {
            let rate = (2 + (k * 7) % 39) * 125_000;
            let begin = start + (k % 5) * 700;
            mallory.transfer_request(owner, hold(100 + k, begin, 3000 + (k % 3) * 1000, rate))
        });
        futures::future::join_all(asks)
            .await
            .into_iter()
            .map(|a| matches!(a, Ok(starling_protocol::transfer::Response::Link(_))))
            .collect()
    });
    let held = answers.iter().filter(|h| **h).count();
    assert!(held > 0 && held < 40, "{held} of 40 held");
    let out = pool.ok(0, root.path(), &["net", "-json"]);
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let host = &json["links"][0];
    let reservable = host["reservable_mbps"].as_f64().unwrap();
    let spans: Vec<(f64, f64, f64)> = host["reservations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["start"].as_f64().unwrap(),
                r["end"].as_f64().unwrap(),
                r["rate_mbps"].as_f64().unwrap(),
            )
        })
        .collect();
    assert!(spans.len() > held / 2, "{out}");
    for (at, _, _) in &spans {
        let in_use: f64 = spans
            .iter()
            .filter(|(s, e, _)| s <= at && at < e)
            .map(|(_, _, r)| r)
            .sum();
        assert!(
            in_use <= reservable + 1e-6,
            "{in_use} Mbit/s held at {at}, of {reservable}: {out}"
        );
    }
    runtime.block_on(mallory.shutdown());
}
