//! One agent's view of a large pool: the memory it takes to hold 10,000
//! machine ads, and the time to take them in (issue 46's "one agent's
//! memory for a view of 10,000 ads", goal ≤ 50 MiB).
//!
//!     cargo bench -p starling-agent --bench view
//!     cargo bench -p starling-agent --bench view -- --ads 2000 --runs 5
//!
//! Each ad is the machine ad a Starling agent publishes (the sample
//! `policies/benches/data/machine.ad`, from `starling status -l`) with its
//! own name, agent id, addresses and sizes, signed by its own key and
//! sealed with its own certificate from one of 100 domains, as gossip
//! carries it. [`View::offer`] takes each in as it takes a gossip message:
//! size check, signature, certificate, decode, index.
//!
//! Memory is measured by counting what the global allocator holds: the
//! view's bytes are what it holds after the ads are offered less what it
//! held before (the sealed ads themselves are made beforehand and not
//! counted). The baseline, in the same run, is one copy of each sealed ad
//! as it travels (the floor for a view that hands ads on unchanged); the
//! time's baseline is opening the same ads alone (decoding the envelope and
//! checking its signature, as any receiver must). Taking in is timed at
//! the first sight of every agent (its key decompressed, its certificate
//! checked) and at the next refresh of every ad (both known).

use std::alloc::System;

use cap::Cap;
use std::time::Instant;

use starling_agent::view::View;
use starling_protocol::classad::formats::parse_ads_any;
use starling_protocol::classad::{ClassAd, Expr, Name, Value};
use starling_protocol::gossip::{self, AdKind, Topic};
use starling_protocol::identity::{
    Certificate, Freshness, Keypair, Roles, Timestamp, TrustAnchors, Verifier,
};

/// The system allocator, counting the bytes it holds.
#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

fn held() -> isize {
    ALLOCATOR.allocated() as isize
}

const MACHINE: &str = include_str!("../../../policies/benches/data/machine.ad");
const DOMAINS: usize = 100;
const OWN_DOMAIN: &str = "d000.pool.example.org";
const MIB: f64 = 1024.0 * 1024.0;
const TTL_MS: u64 = 180_000;

struct Options {
    ads: usize,
    runs: usize,
}

fn options() -> Options {
    let mut o = Options {
        ads: 10_000,
        runs: 3,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = |name: &str| -> usize {
            let text = args
                .next()
                .unwrap_or_else(|| panic!("{name} needs a number"));
            text.parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {text}"))
        };
        match arg.as_str() {
            "--ads" => o.ads = value("--ads").max(1),
            "--runs" => o.runs = value("--runs").max(1),
            "--bench" => {}
            other => panic!("unknown option {other} (--ads, --runs)"),
        }
    }
    o
}

fn domain(d: usize) -> String {
    format!("d{d:03}.pool.example.org")
}

fn text(ad: &mut ClassAd, name: &str, s: &str) {
    ad.insert(Name::known(name), Expr::from(Value::string(s)));
}

fn int(ad: &mut ClassAd, name: &str, n: i64) {
    ad.insert(Name::known(name), Expr::from(Value::Int(n)));
}

/// The pool's sealed machine ads, as gossip carries them: agent `i` of
/// domain `i % DOMAINS`, all of them valid for this view (a pool whose
/// domains all export to this agent's); each agent's first ad, and its next
/// refresh (a newer sequence number, the same certificate).
type Pool = (Vec<Vec<u8>>, Vec<Vec<u8>>, TrustAnchors);

fn sealed_ads(n: usize, now: Timestamp) -> Pool {
    let sample = parse_ads_any(MACHINE)
        .expect("the sample machine ad parses")
        .remove(0);
    let domain_keys: Vec<Keypair> = (0..DOMAINS)
        .map(|d| Keypair::from_seed(&[d as u8 + 1; 32]))
        .collect();
    let mut anchors = TrustAnchors::default();
    for (d, key) in domain_keys.iter().enumerate() {
        anchors.insert(&domain(d), key.public());
    }
    let (first, refreshed) = (0..n)
        .map(|i| {
            let mut seed = [0u8; 32];
            seed[..8].copy_from_slice(&(i as u64 + 1).to_le_bytes());
            seed[31] = 0xA5;
            let key = Keypair::from_seed(&seed);
            let d = i % DOMAINS;
            let certificate = Certificate {
                domain: domain(d),
                domain_key: domain_keys[d].public(),
                agent: key.agent_id(),
                roles: "execute,submit".parse::<Roles>().expect("roles"),
                valid_from: now.saturating_sub_millis(3_600_000),
                valid_until: now.saturating_add_millis(24 * 3_600_000),
            }
            .issue(&domain_keys[d], 1)
            .expect("a certificate");
            let mut ad = sample.clone();
            let host = format!("agent-{i:05}.{}", domain(d));
            let id = key.agent_id().to_string();
            text(&mut ad, "Name", &format!("slot1@{host}"));
            text(&mut ad, "StarlingHost", &host);
            text(&mut ad, "Machine", &host);
            text(&mut ad, "StarlingAgentId", &id);
            text(&mut ad, "StarlingDomain", &domain(d));
            text(
                &mut ad,
                "StarlingAddresses",
                &format!(
                    "/ip4/10.{}.{}.{}/tcp/4001/p2p/{id}",
                    d,
                    i / 256 % 256,
                    i % 256
                ),
            );
            let mix = (i as i64).wrapping_mul(2_654_435_761) >> 7;
            let total = [4, 8, 16, 32, 64][(mix % 5) as usize];
            int(&mut ad, "TotalCpus", total);
            int(&mut ad, "Cpus", mix % (total + 1));
            int(&mut ad, "TotalMemory", total * 4096);
            int(&mut ad, "Memory", (mix % (total + 1)) * 4096);
            int(&mut ad, "KeyboardIdle", mix % 1_000_000);
            let ad = if d == 0 {
                ad
            } else {
                // Another domain's ad, exported to this agent's.
                let mut exported = ad;
                text(&mut exported, gossip::AUDIENCE_ATTR, OWN_DOMAIN);
                exported
            };
            let seal = |seq: u64, at: Timestamp| {
                gossip::seal(
                    &key,
                    seq,
                    at,
                    TTL_MS,
                    AdKind::Machine,
                    &ad,
                    std::slice::from_ref(&certificate),
                )
                .expect("the ad seals")
                .to_bytes()
            };
            (seal(1, now), seal(2, now.saturating_add_millis(1)))
        })
        .unzip();
    (first, refreshed, anchors)
}

/// Offers every ad to `view` as gossip would (on its domain's topic to
/// this agent's domain); how many ads it then holds.
fn take_in(view: &mut View, ads: &[Vec<u8>], now: Timestamp) -> usize {
    let topics: Vec<Topic> = (0..DOMAINS)
        .map(|d| {
            if d == 0 {
                Topic::ads(OWN_DOMAIN).expect("a topic")
            } else {
                Topic::export(&domain(d), OWN_DOMAIN).expect("a topic")
            }
        })
        .collect();
    for (i, bytes) in ads.iter().enumerate() {
        view.offer(bytes, Some(&topics[i % DOMAINS]), None, now);
    }
    view.len()
}

fn median(mut xs: Vec<f64>) -> (f64, f64, f64) {
    xs.sort_by(f64::total_cmp);
    (xs[xs.len() / 2], xs[0], xs[xs.len() - 1])
}

fn main() {
    let o = options();
    let now = Timestamp::now();
    let (ads, refreshed, anchors) = sealed_ads(o.ads, now);
    let one_copy: usize = ads.iter().map(Vec::len).sum();
    println!(
        "view of {} machine ads from {DOMAINS} domains, {} runs (median, min–max)",
        o.ads, o.runs
    );
    println!(
        "baseline: one copy of each sealed ad, {:.1} MiB ({} bytes each on average)",
        one_copy as f64 / MIB,
        one_copy / o.ads
    );

    let (mut memory, mut first, mut again, mut checking) = (vec![], vec![], vec![], vec![]);
    for _ in 0..o.runs {
        let before = held();
        let mut view = View::new(OWN_DOMAIN, anchors.clone(), Freshness::default());
        let start = Instant::now();
        let count = take_in(&mut view, &ads, now);
        first.push(start.elapsed().as_secs_f64());
        assert_eq!(count, o.ads, "every ad enters the view");
        let start = Instant::now();
        take_in(&mut view, &refreshed, now.saturating_add_millis(1));
        again.push(start.elapsed().as_secs_f64());
        memory.push((held() - before) as f64);
        drop(view);

        let mut verifier = Verifier::new(Freshness::default());
        let start = Instant::now();
        for bytes in &ads {
            verifier.open(bytes, now).expect("a well-signed envelope");
        }
        checking.push(start.elapsed().as_secs_f64());
    }
    let (m, lo, hi) = median(memory);
    let goal = 50.0 * MIB;
    println!(
        "view memory: {:.1} MiB ({:.1}–{:.1}), {:.0} bytes per ad, {:.2}× one copy; {} (goal ≤ 50 MiB)",
        m / MIB,
        lo / MIB,
        hi / MIB,
        m / o.ads as f64,
        m / one_copy as f64,
        if m <= goal { "PASS" } else { "FAIL" }
    );
    let (c, c_lo, c_hi) = median(checking);
    let per = |s: f64| s * 1e6 / o.ads as f64;
    println!(
        "baseline: opening each sealed ad alone (decode, signature) {:.1} µs per ad ({:.1}–{:.1})",
        per(c),
        per(c_lo),
        per(c_hi)
    );
    for (what, times) in [
        ("first sight of every agent (keys, certificates)", first),
        ("every agent's next refresh", again),
    ] {
        let (t, lo, hi) = median(times);
        println!(
            "taking in, {what}: {:.1} µs per ad ({:.1}–{:.1}), {:.2}× opening alone",
            per(t),
            per(lo),
            per(hi),
            t / c
        );
    }
}
