//! What a store peer's chunk store costs per checkpoint, without the
//! network: `--mib` MiB of random 1 MiB chunks put into a fresh
//! [`ChunkStore`] and committed, as a store peer does for one replica.
//! Prints the time and the bytes the process wrote (`/proc/self/io`
//! `wchar`: sled's write amplification) per run.
//!
//!     cargo run --release -p starling-storage --example chunk_store_put -- --mib 256 --runs 3

use std::time::Instant;

use starling_storage::chunks::{ChunkStore, Limits, Owner};

fn wchar() -> u64 {
    std::fs::read_to_string("/proc/self/io")
        .ok()
        .and_then(|io| {
            io.lines()
                .find_map(|l| l.strip_prefix("wchar: ").map(|v| v.trim().parse().ok()))
                .flatten()
        })
        .unwrap_or(0)
}

fn main() {
    let mut mib = 256usize;
    let mut runs = 3usize;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args.next().expect("a value after the flag");
        match arg.as_str() {
            "--mib" => mib = value.parse().expect("--mib N"),
            "--runs" => runs = value.parse().expect("--runs N"),
            other => panic!("unknown argument {other}"),
        }
    }
    // Distinct chunks: a counter stirred into each.
    let chunks: Vec<Vec<u8>> = (0..mib)
        .map(|i| {
            let mut x = (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (0..1 << 20)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect()
        })
        .collect();
    let hashes: Vec<[u8; 32]> = chunks.iter().map(|c| *blake3::hash(c).as_bytes()).collect();
    let owner = Owner {
        job: "bench#1.0".to_owned(),
        domain: "d".to_owned(),
        user: "u".to_owned(),
    };
    for run in 0..runs {
        let dir = tempfile::tempdir_in(std::env::var("TMPDIR").unwrap_or("/tmp".into())).unwrap();
        let store = ChunkStore::open(
            &dir.path().join("chunks"),
            Limits {
                lend_bytes: 1 << 40,
                ..Limits::default()
            },
        )
        .unwrap();
        let before = wchar();
        let started = Instant::now();
        let until = u64::MAX / 2;
        store.missing(&owner, 1, &hashes, until).unwrap();
        for (hash, data) in hashes.iter().zip(&chunks) {
            store.put(&owner, 1, hash, data, until).unwrap();
        }
        let put = started.elapsed();
        store.commit(&owner.job, 1, &hashes).unwrap();
        let elapsed = started.elapsed();
        let written = wchar() - before;
        println!(
            "run {run}: {mib} MiB put in {:.3} s, committed (flushed) at {:.3} s = {:.0} MiB/s; \
             wrote {:.0} MiB ({:.2}x)",
            put.as_secs_f64(),
            elapsed.as_secs_f64(),
            mib as f64 / elapsed.as_secs_f64(),
            written as f64 / (1 << 20) as f64,
            written as f64 / (mib << 20) as f64,
        );
    }
}
