//! Agents in one process over the memory transport: they find each other,
//! spread ad changes, and keep a misbehaving peer's ads out of every view.

use std::time::Duration;

use starling_agent::Agent;
use starling_protocol::classad::parse_ad;
use starling_protocol::gossip::{self, AdKind};
use starling_protocol::identity::{Certificate, Keypair, Roles, Timestamp};
use starling_testnet::memory::{Options, Testnet};

const CONVERGE: Duration = Duration::from_secs(90);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_agents_in_two_domains_each_see_all_twenty() {
    let testnet = Testnet::start(Options::new(20, 2, 7)).await.unwrap();
    let complete = testnet.wait_converged(CONVERGE).await;
    assert_eq!(complete, 20, "agents whose view holds all 20 machines");
    let ads = testnet.agents[19].ads(Some("Machine"), None).await.unwrap();
    let mut names: Vec<String> = ads
        .iter()
        .map(|text| {
            let ad = parse_ad(text).unwrap();
            starling_protocol::classad::unparse(ad.get("Name").unwrap())
        })
        .collect();
    names.sort();
    assert_eq!(
        names.first().map(String::as_str),
        Some("\"slot1@agent-000\"")
    );
    assert_eq!(names.len(), 20);
    change_reaches_everyone(&testnet, 3, 42).await;
    let changed = testnet.agents[10]
        .ads(Some("Machine"), Some("TestnetProbe == 42"))
        .await
        .unwrap();
    assert_eq!(changed.len(), 1);
    testnet.shutdown().await;
}

/// The plaintext transport of large measurements is the same pool: agents
/// find each other and a change spreads, with every ad still signed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_without_noise_form_the_same_pool() {
    let mut options = Options::new(10, 2, 13);
    options.plaintext = true;
    let testnet = Testnet::start(options).await.unwrap();
    assert_eq!(testnet.wait_converged(CONVERGE).await, 10);
    change_reaches_everyone(&testnet, 4, 7).await;
    testnet.shutdown().await;
}

/// Joining a pool does not churn connections. Each connection costs a
/// handshake and a round of identify and gossip subscriptions on both sides.
/// When closing idle connections fought with Kademlia's lookups and bucket
/// checks, a 100-agent pool opened each connection five or six times while
/// it formed; when Kademlia's own bootstraps ran a lookup per bucket, this
/// pool of 120 opened 2.7 per pair (0.98 now). Plaintext, so that the pool
/// forms within a minute in a debug build.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_forming_a_pool_connect_to_each_other_about_once() {
    // Enough agents that a connection per pair is far more than the mesh
    // needs (60 × 59), few enough to converge in seconds on two cores.
    const AGENTS: usize = 60;
    let mut options = Options::new(AGENTS, 2, 17);
    options.plaintext = true;
    let testnet = Testnet::start(options).await.unwrap();
    let complete = testnet.wait_converged(Duration::from_secs(240)).await;
    assert_eq!(complete, AGENTS, "agents whose view holds every machine");
    let mut opened = 0;
    for agent in &testnet.agents {
        opened += agent.traffic().await.connections;
    }
    // A connection is counted at both ends: every pair connected once
    // makes AGENTS × (AGENTS - 1).
    let per_pair = opened as f64 / (AGENTS * (AGENTS - 1)) as f64;
    assert!(
        per_pair < 1.5,
        "{opened} connections opened among {AGENTS} agents: {per_pair:.2} per pair"
    );
    testnet.shutdown().await;
}

/// Sets `TestnetProbe = value` in agent `who`'s ad and asserts that every
/// other agent holds the change within 30 s.
async fn change_reaches_everyone(testnet: &Testnet, who: usize, value: i64) {
    let spread = testnet
        .measure_spread(who, value, Duration::from_secs(30))
        .await
        .unwrap();
    assert!(
        spread.quantile(1.0).is_some(),
        "the changed ad did not reach every agent: {:?}",
        spread.delays
    );
}

/// Polls `check` until it holds or `timeout` passes.
async fn eventually<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if check().await {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn machine_names(agent: &Agent) -> Vec<String> {
    let mut names: Vec<String> = agent
        .ads(Some("Machine"), None)
        .await
        .unwrap()
        .iter()
        .map(|t| starling_protocol::classad::unparse(parse_ad(t).unwrap().get("Name").unwrap()))
        .collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rogue_agents_bad_ads_enter_no_view_and_it_is_penalised() {
    // Four honest agents in one domain; agent 4 is the rogue. It is a real
    // agent, certified in the domain like the others (so it is connected
    // and in the mesh), but it also publishes raw bytes that no honest
    // agent would.
    let testnet = Testnet::start(Options::new(5, 1, 11)).await.unwrap();
    assert_eq!(testnet.wait_converged(CONVERGE).await, 5);
    let domain = testnet.domains[0].name.clone();
    let honest: Vec<&Agent> = testnet.agents[..4].iter().collect();
    let rogue = &testnet.agents[4];
    let rogue_key = Keypair::from_seed(&testnet.keys[4].seed());
    let victim_key = Keypair::from_seed(&testnet.keys[0].seed());
    // The victim publishes a newer ad, so that its first one is old news.
    let newer = testnet.agents[0]
        .set_attribute("Updated", Some("true"))
        .await
        .unwrap();
    let victim = testnet.id(0);
    let everyone_has_it = eventually(Duration::from_secs(20), || async {
        for agent in &honest {
            if agent
                .holding(&victim)
                .await
                .is_none_or(|(seq, _)| seq < newer)
            {
                return false;
            }
        }
        true
    })
    .await;
    assert!(everyone_has_it, "the victim's newer ad did not spread");
    let now = Timestamp::now();
    let ad = |name: &str, dom: &str| {
        parse_ad(&format!(
            "[ MyType = \"Machine\"; Name = \"{name}\"; StarlingDomain = \"{dom}\" ]"
        ))
        .unwrap()
    };
    let rogue_cert = testnet.trust_for(4).unwrap().certificates;
    let seal = |key: &Keypair, seq, at, ttl, name: &str, dom: &str, certs: &[_]| {
        gossip::seal(key, seq, at, ttl, AdKind::Machine, &ad(name, dom), certs)
            .unwrap()
            .to_bytes()
    };
    // 1. Unsigned: an ad's text, no envelope at all.
    let unsigned = b"[ MyType = \"Machine\"; Name = \"rogue-unsigned\" ]".to_vec();
    // 2. Forged: a well-formed envelope whose signature does not match.
    let mut forged = seal(
        &rogue_key,
        1_000,
        now,
        180_000,
        "rogue-forged",
        &domain,
        &rogue_cert,
    );
    let last = forged.len() - 1;
    forged[last] ^= 0x40;
    // 3. Replayed: the victim's ad from ten minutes ago (as a captured old
    // copy would be), now that the victim has published newer ones.
    let victim_cert = testnet.trust_for(0).unwrap().certificates;
    let replayed = seal(
        &victim_key,
        1,
        now.saturating_sub_millis(600_000),
        900_000,
        "rogue-replayed",
        &domain,
        &victim_cert,
    );
    // 4. Expired: properly signed, but its window closed an hour ago.
    let expired = seal(
        &rogue_key,
        1_001,
        now.saturating_sub_millis(7_200_000),
        3_600_000,
        "rogue-expired",
        &domain,
        &rogue_cert,
    );
    // 5. Oversized: more than the largest signed ad, under gossipsub's frame.
    let oversized = vec![0xA5; gossip::MAX_SIGNED_AD_LEN + 4096];
    // 6. Not admitted: a certificate for the domain signed by a key the
    // domain never had.
    let impostor_domain = Keypair::from_seed(&[0xEE; 32]);
    let fake_cert = Certificate {
        domain: domain.clone(),
        domain_key: impostor_domain.public(),
        agent: rogue_key.agent_id(),
        roles: "execute".parse::<Roles>().unwrap(),
        valid_from: now.saturating_sub_millis(60_000),
        valid_until: now.saturating_add_millis(3_600_000),
    }
    .issue(&impostor_domain, 1)
    .unwrap();
    let unadmitted = seal(
        &rogue_key,
        1_002,
        now,
        180_000,
        "rogue-unadmitted",
        &domain,
        &[fake_cert],
    );
    for bytes in [unsigned, forged, replayed, expired, oversized, unadmitted] {
        rogue.publish_raw(&domain, bytes).await;
    }
    // 7. No bundle at all on the domain's topic, where every message is one.
    rogue
        .publish_raw_on(
            gossip::Topic::ads(&domain).unwrap(),
            b"not a bundle of ads".to_vec(),
        )
        .await;
    let rogue_id = testnet.id(4).to_string();
    // Every honest agent that is connected to the rogue rejects what it
    // sent (nothing is forwarded, so others never see it) and scores it
    // below zero.
    let penalised = eventually(Duration::from_secs(20), || async {
        let mut penalising = 0;
        for agent in &honest {
            let peers = agent.peers().await;
            if let Some(p) = peers.iter().find(|p| p.agent_id == rogue_id) {
                if p.rejected >= 7 && p.score.is_some_and(|s| s < 0.0) {
                    penalising += 1;
                }
            }
        }
        penalising >= 1
    })
    .await;
    if !penalised {
        for agent in &honest {
            eprintln!("{:?}", agent.peers().await);
        }
    }
    assert!(penalised, "no honest agent penalised the rogue");
    for agent in &honest {
        let names = machine_names(agent).await;
        assert!(
            names.iter().all(|n| !n.contains("rogue-")),
            "a rogue ad entered a view: {names:?}"
        );
        assert_eq!(
            names.len(),
            5,
            "the honest ads are all still there: {names:?}"
        );
        for peer in agent.peers().await {
            if peer.agent_id != rogue_id {
                assert_eq!(peer.rejected, 0, "an honest peer was blamed: {peer:?}");
            }
        }
    }
    testnet.shutdown().await;
}
