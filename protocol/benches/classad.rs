//! Micro-benchmarks of the ClassAd hot paths, on 64 machine ads and a job
//! written by `bench/match/generate_ads.py` (HTCondor-style partitionable
//! slots, as `condor_status -l` prints them).
//!
//! The comparison with HTCondor's own library is `scripts/bench-match`; these
//! isolate one step each so a change to the parser or evaluator shows up
//! without the noise of a whole run.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use starling_protocol::classad::formats::parse_ads_any;
use starling_protocol::classad::matching::Matcher;

const MACHINES: &str = include_str!("data/machines.ads");
const JOB: &str = include_str!("data/job.ad");

fn benches(c: &mut Criterion) {
    let machines = parse_ads_any(MACHINES).expect("sample machine ads parse");
    let job = parse_ads_any(JOB).expect("sample job parses").remove(0);
    let matcher = Matcher::default();

    let mut g = c.benchmark_group("classad");
    g.throughput(Throughput::Bytes(MACHINES.len() as u64));
    g.bench_function("parse_long_64_ads", |b| {
        b.iter(|| parse_ads_any(std::hint::black_box(MACHINES)).unwrap())
    });
    g.throughput(Throughput::Elements(machines.len() as u64));
    g.bench_function("match_and_rank_64_pairs", |b| {
        b.iter(|| {
            machines
                .iter()
                .filter_map(|m| matcher.pair(std::hint::black_box(&job), m))
                .count()
        })
    });
    g.finish();
}

criterion_group!(classad, benches);
criterion_main!(classad);
