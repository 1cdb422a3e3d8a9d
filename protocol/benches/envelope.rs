//! Signed-envelope throughput: how many gossiped machine ads one core can
//! decode and verify, against bare ed25519 verification of the same bytes.
//!
//! `cargo bench -p starling-protocol --bench envelope` runs every variant in
//! interleaved rounds (so machine noise hits all of them alike) and prints,
//! per variant, the median envelopes per second on one core with the spread
//! over rounds, and the ratio to the baseline: plain ed25519 `verify_strict`
//! over the same signed bytes with the key already decompressed. The
//! target is 30,000 verified ads a second on one core.
//!
//! Set `STARLING_BENCH_ROUNDS` (default 15) and `STARLING_BENCH_OPS`
//! (envelopes per variant per round, default 2048).

use std::hint::black_box;
use std::time::Instant;

use starling_protocol::identity::{Envelope, Freshness, Keypair, Kind, Timestamp, Verifier};

const MACHINES: &str = include_str!("data/machines.ads");
/// Envelopes per round are rounded up to a multiple of the largest batch.
const BATCH: usize = 128;

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    // `cargo test --benches` runs this binary once to see that it works.
    if std::env::args().any(|a| a == "--test") {
        return;
    }
    let rounds = env_usize("STARLING_BENCH_ROUNDS", 15);
    let ops = env_usize("STARLING_BENCH_OPS", 2048).div_ceil(BATCH) * BATCH;

    // One realistic machine ad (about 4.4 KiB of ClassAd text) per signer,
    // from distinct signers as a gossip burst from many peers would be.
    let body = MACHINES
        .split("\n\n")
        .next()
        .unwrap_or_default()
        .as_bytes()
        .to_vec();
    let now = Timestamp::from_unix_secs(1_795_000_000);
    let expires = now.saturating_add_millis(600_000);
    let keys: Vec<Keypair> = (0..ops)
        .map(|i| Keypair::from_seed(&[(i % 251) as u8 + 1; 32]))
        .collect();
    let envelopes: Vec<Envelope> = keys
        .iter()
        .enumerate()
        .map(|(i, k)| {
            Envelope::seal(
                k,
                i as u64 + 1,
                now,
                expires,
                Kind::MACHINE_AD,
                body.clone(),
            )
        })
        .collect();
    let wire: Vec<Vec<u8>> = envelopes.iter().map(Envelope::to_bytes).collect();
    let refs: Vec<&[u8]> = wire.iter().map(Vec::as_slice).collect();
    let freshness = Freshness::default();
    let bare: Vec<(
        ed25519_dalek::VerifyingKey,
        ed25519_dalek::Signature,
        Vec<u8>,
    )> = envelopes
        .iter()
        .map(|e| {
            let key =
                ed25519_dalek::VerifyingKey::from_bytes(e.header().signer.as_bytes()).unwrap();
            (
                key,
                ed25519_dalek::Signature::from_bytes(e.signature()),
                e.signed_bytes().to_vec(),
            )
        })
        .collect();

    // A gossip validator that has seen these peers before.
    let warm = std::cell::RefCell::new(Verifier::new(freshness));
    let batch = |verifier: &mut Verifier, size: usize| {
        for chunk in refs.chunks(size) {
            let opened = verifier.open_batch(chunk, now);
            black_box(opened.iter().all(Result::is_ok));
        }
    };
    type Variant<'a> = (&'static str, Box<dyn Fn() + 'a>);
    let variants: Vec<Variant<'_>> = vec![
        (
            "plain ed25519 verify (baseline)",
            Box::new(|| {
                for (key, sig, msg) in &bare {
                    black_box(key.verify_strict(msg, sig).is_ok());
                }
            }),
        ),
        (
            "decode + open, one by one, cold",
            Box::new(|| {
                for bytes in &wire {
                    let env = Envelope::decode(bytes).unwrap();
                    black_box(env.open(now, &freshness).unwrap());
                }
            }),
        ),
        (
            "decode + open_batch of 64, cold",
            Box::new(|| {
                for chunk in wire.chunks(64) {
                    let envs: Vec<Envelope> =
                        chunk.iter().map(|b| Envelope::decode(b).unwrap()).collect();
                    let opened = Envelope::open_batch(&envs, now, &freshness);
                    black_box(opened.iter().all(Result::is_ok));
                }
            }),
        ),
        (
            "Verifier::open, warm key cache",
            Box::new(|| {
                let mut verifier = warm.borrow_mut();
                for bytes in &wire {
                    black_box(verifier.open(bytes, now).unwrap());
                }
            }),
        ),
        (
            "Verifier::open_batch of 32, warm",
            Box::new(|| batch(&mut warm.borrow_mut(), 32)),
        ),
        (
            "Verifier::open_batch of 64, warm",
            Box::new(|| batch(&mut warm.borrow_mut(), 64)),
        ),
        (
            "Verifier::open_batch of 128, warm",
            Box::new(|| batch(&mut warm.borrow_mut(), 128)),
        ),
        (
            "decode only",
            Box::new(|| {
                for bytes in &wire {
                    black_box(Envelope::decode(bytes).unwrap());
                }
            }),
        ),
        (
            "seal + encode (signing)",
            Box::new(|| {
                for (i, key) in keys.iter().enumerate() {
                    let env =
                        Envelope::seal(key, i as u64, now, expires, Kind::MACHINE_AD, body.clone());
                    black_box(env.to_bytes());
                }
            }),
        ),
    ];

    let mut rates: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); variants.len()];
    for (_, run) in &variants {
        run(); // warm up
    }
    for _ in 0..rounds {
        for (i, (_, run)) in variants.iter().enumerate() {
            let start = Instant::now();
            run();
            rates[i].push(ops as f64 / start.elapsed().as_secs_f64());
        }
    }

    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let baseline = median(&mut rates[0].clone());
    println!(
        "envelope bench: {ops} envelopes of {} bytes per variant, {rounds} rounds, one core",
        body.len()
    );
    println!(
        "{:34} {:>12} {:>21} {:>9}",
        "variant", "median/s", "spread (min-max)/s", "ratio"
    );
    for (i, (name, _)) in variants.iter().enumerate() {
        let m = median(&mut rates[i]);
        let (lo, hi) = (rates[i][0], rates[i][rates[i].len() - 1]);
        println!(
            "{name:34} {m:>12.0} {:>21} {:>8.2}x",
            format!("{lo:.0}-{hi:.0}"),
            m / baseline
        );
    }
}
