//! Gossip measurements on in-process testnets (memory transport, real
//! agents, default timers):
//!
//! - **convergence**: the time from an ad change until 99% of the other
//!   agents hold it, by the arrival time each view records; the baseline is
//!   the same change between two agents (one hop) in the same run, and the
//!   ratio says what the overlay costs over a direct link;
//! - **steady-state traffic**: bytes per second per agent over a window
//!   with no changes (only refreshes, heartbeats, pings), against the
//!   baseline of one refreshed ad per agent per refresh interval sent to
//!   each of its mesh peers;
//! - **steady-state CPU**: the process's CPU time over the same window, per
//!   agent, as a share of one core (all agents share this process);
//! - start-up: how long N agents take to start and to see each other, and
//!   how many connections they opened meanwhile.
//!
//! `cargo bench -p starling-testnet --bench gossip`. Environment:
//! `STARLING_BENCH_AGENTS` (default 500), `STARLING_BENCH_DOMAINS` (how
//! many domains they are dealt to, each trusting all the others; default
//! 2), `STARLING_BENCH_ROUNDS` (ad
//! changes, default 7), `STARLING_BENCH_WINDOW_SECS` (traffic window,
//! default one refresh interval), `STARLING_BENCH_REFRESH_SECS` (the
//! agents' ad refresh interval, default the agents' own default; the
//! lifetime is three refreshes), `STARLING_BENCH_PLAINTEXT=1` (connections
//! without noise, see `Options::plaintext`; the baseline pair too).

use std::time::{Duration, Instant};

use starling_testnet::memory::{Options, Rng, Testnet};

fn env(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// CPU time (user + system) this process has used, in seconds.
fn process_cpu_secs() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold
    // spaces: utime and stime are the 12th and 13th.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|f| f.parse::<u64>().ok())
        .sum();
    ticks as f64 / rustix::param::clock_ticks_per_second() as f64
}

/// "lo–hi" of `xs`, with `decimals` places.
fn range(xs: &[f64], decimals: usize) -> String {
    let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = xs.iter().copied().fold(0.0, f64::max);
    format!("{lo:.decimals$}–{hi:.decimals$}")
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn spread_ms(testnet: &Testnet, rounds: usize, rng: &mut Rng) -> Vec<f64> {
    let runtime = tokio::runtime::Handle::current();
    let mut out = Vec::new();
    for round in 0..rounds {
        let who = rng.below(testnet.agents.len());
        let spread = runtime
            .block_on(testnet.measure_spread(who, round as i64 + 1, Duration::from_secs(30)))
            .expect("an ad change");
        match spread.quantile(0.99) {
            Some(d) => out.push(d.as_secs_f64() * 1000.0),
            None => eprintln!("round {round}: the change did not reach 99% in 30 s"),
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    out
}

/// The size of agent 0's signed machine ad, as it travels.
fn signed_ad_len(testnet: &Testnet) -> usize {
    use starling_protocol::classad::parse_ad;
    use starling_protocol::gossip::{seal, AdKind};
    use starling_protocol::identity::Timestamp;
    let runtime = tokio::runtime::Handle::current();
    let text = runtime
        .block_on(testnet.agents[0].ads(Some("Machine"), None))
        .ok()
        .and_then(|ads| ads.into_iter().next())
        .unwrap_or_default();
    let (Ok(ad), Ok(trust)) = (parse_ad(&text), testnet.trust_for(0)) else {
        return 0;
    };
    seal(
        &testnet.keys[0],
        1,
        Timestamp::now(),
        180_000,
        AdKind::Machine,
        &ad,
        &trust.certificates,
    )
    .map(|e| e.to_bytes().len())
    .unwrap_or(0)
}

fn main() {
    // `RUST_LOG=starling_agent=info` shows what the agents do, with times.
    if std::env::var_os("RUST_LOG").is_some() {
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .init();
    }
    let agents = env("STARLING_BENCH_AGENTS", 500);
    let rounds = env("STARLING_BENCH_ROUNDS", 7);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let _guard = runtime.enter();
    let mut rng = Rng::new(2026);
    let plaintext = env("STARLING_BENCH_PLAINTEXT", 0) == 1;
    let transport = if plaintext { "plaintext" } else { "noise" };

    // Baseline: two agents, one hop.
    let mut pair_options = Options::new(2, 1, 1);
    pair_options.plaintext = plaintext;
    let pair = runtime
        .block_on(Testnet::start(pair_options))
        .expect("two agents");
    runtime.block_on(pair.wait_converged(Duration::from_secs(60)));
    let hop = spread_ms(&pair, rounds, &mut rng);
    runtime.block_on(pair.shutdown());

    let started = Instant::now();
    let domains = env("STARLING_BENCH_DOMAINS", 2).max(1);
    let mut options = Options::new(agents, domains, 2);
    options.plaintext = plaintext;
    let refresh = env(
        "STARLING_BENCH_REFRESH_SECS",
        options.config.advertise.refresh_secs as usize,
    )
    .max(1) as u64;
    options.config.advertise.refresh_secs = refresh;
    options.config.advertise.lifetime_secs = 3 * refresh;
    // A whole refresh interval, so that the window holds every agent's
    // refresh once whatever their phase.
    let window = env("STARLING_BENCH_WINDOW_SECS", refresh as usize);
    let testnet = runtime
        .block_on(Testnet::start(options))
        .expect("the testnet");
    let start_secs = started.elapsed().as_secs_f64();
    let mut last_said = Instant::now();
    let formation = runtime.block_on(testnet.watch_formation(
        Duration::from_secs(env("STARLING_BENCH_FORM_SECS", 600) as u64),
        |c| {
            if last_said.elapsed() >= Duration::from_secs(10) {
                last_said = Instant::now();
                eprintln!(
                    "{:.0} s: {} of {agents} agents hold every ad, {} hold 99%; the fewest held: {}",
                    started.elapsed().as_secs_f64(),
                    c.complete(),
                    c.holding(0.99),
                    c.least()
                );
            }
        },
    ));
    let since_start = |d: Option<Duration>| match d {
        Some(d) => format!("{:.1} s", start_secs + d.as_secs_f64()),
        None => "not reached".to_owned(),
    };
    println!(
        "start-up ({transport}): {agents} agents in {domains} domains started in {start_secs:.1} s; 99% of agents held 99% of the ads after {}, all held all after {} ({}/{agents} complete, the fewest held {})",
        since_start(formation.mostly),
        since_start(formation.all),
        formation.complete(),
        formation.last.least()
    );
    if formation.all.is_none() {
        // Who lacks whose ad says which path failed: an agent's own
        // domain (its mesh, its pulls) or another's (the bridges).
        for (i, &held) in formation.last.held.iter().enumerate() {
            if held >= agents {
                continue;
            }
            let missing = runtime.block_on(testnet.missing(i));
            let own = testnet.domain_of(i);
            let same = missing
                .iter()
                .filter(|&&j| testnet.domain_of(j) == own)
                .count();
            let mut from: Vec<usize> = missing.iter().map(|&j| testnet.domain_of(j)).collect();
            from.sort_unstable();
            from.dedup();
            eprintln!(
                "agent {i} (domain {own}) lacks {} ads, {same} of its own domain; from domains {from:?}; first few: {:?}",
                missing.len(),
                &missing[..missing.len().min(8)]
            );
        }
    }
    let opened: u64 = testnet
        .agents
        .iter()
        .map(|a| runtime.block_on(a.traffic()).connections)
        .sum();
    println!(
        "start-up: {:.1} connections opened per agent until then",
        opened as f64 / agents as f64
    );
    let spread = spread_ms(&testnet, rounds, &mut rng);
    let (hop_median, spread_median) = (median(hop.clone()), median(spread.clone()));

    println!(
        "convergence (99% of agents hold a change), {rounds} changes: baseline one hop (2 agents) median {hop_median:.0} ms ({}), {agents} agents median {spread_median:.0} ms ({}); ratio {:.1}x; target < 1000 ms",
        range(&hop, 0),
        range(&spread, 0),
        spread_median / hop_median.max(1.0)
    );

    let sample = |t: &Testnet| -> Vec<(u64, u64, u64)> {
        t.agents
            .iter()
            .map(|a| {
                let tr = runtime.block_on(a.traffic());
                (tr.received, tr.sent, tr.connections)
            })
            .collect()
    };
    let before = sample(&testnet);
    let cpu_before = process_cpu_secs();
    std::thread::sleep(Duration::from_secs(window as u64));
    let cpu_after = process_cpu_secs();
    let after = sample(&testnet);
    let per_agent: Vec<f64> = before
        .iter()
        .zip(&after)
        .map(|((r0, s0, _), (r1, s1, _))| ((r1 - r0) + (s1 - s0)) as f64 / window as f64)
        .collect();
    // Connections opened per agent per minute: each is a noise handshake
    // (two X25519 and an identity signature each way), so churn is CPU.
    let churn: Vec<f64> = before
        .iter()
        .zip(&after)
        .map(|((_, _, c0), (_, _, c1))| (c1 - c0) as f64 * 60.0 / window as f64)
        .collect();
    let ad_len = signed_ad_len(&testnet);
    // Every agent's refreshed ad received once per refresh interval: the
    // least any dissemination can move.
    let floor = (agents as f64) * (ad_len as f64) / refresh as f64;
    let med = median(per_agent.clone());
    println!(
        "steady traffic over {window} s: median {:.0} B/s per agent (in + out), range {}; baseline (every {ad_len}-byte signed ad received once per refresh) {:.0} B/s; ratio {:.1}x",
        med,
        range(&per_agent, 0),
        floor,
        med / floor.max(1.0)
    );
    println!(
        "connection churn over {window} s: median {:.1} connections opened per agent per minute, range {}",
        median(churn.clone()),
        range(&churn, 1)
    );
    let cpu = (cpu_after - cpu_before) / window as f64;
    println!(
        "steady CPU over {window} s: {:.0}% of one core for {agents} agents, {:.3}% per agent; target for an idle agent < 0.5%",
        cpu * 100.0,
        cpu * 100.0 / agents as f64
    );
    runtime.block_on(testnet.shutdown());
}
