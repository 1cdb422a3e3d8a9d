//! How many durable calls per second a `SledStore` takes on this machine:
//! each mutating call flushes (fsyncs) before it returns, so the disk's
//! flush latency sets the pace.
//!
//! `cargo run --release -p starling-storage --example flush_rate [CALLS] [DIR]`
//! (DIR defaults to a new temporary directory; put it on the disk the agent
//! will use).

use std::time::{Duration, Instant};

use starling_protocol::classad::parse_ad;
use starling_protocol::identity::Kind;
use starling_storage::{Change, JobId, SledStore, Store};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let calls: usize = args.next().map(|a| a.parse()).transpose()?.unwrap_or(500);
    let temp = tempfile::tempdir()?;
    let dir = args
        .next()
        .map(Into::into)
        .unwrap_or_else(|| temp.path().join("store"));
    let store = SledStore::open(&dir)?;
    let job = parse_ad(
        r#"[ Cmd = "/bin/sleep"; Args = "60"; Owner = "alice@lab"; RequestCpus = 1;
             RequestMemory = 1024; Requirements = TARGET.Memory >= RequestMemory ]"#,
    )?;

    let submit = measure(calls, |_| {
        store.submit(std::slice::from_ref(&job)).map(drop)
    })?;
    report("submit, 1 proc", &submit);
    let cluster = vec![job.clone(); 100];
    let big = measure(calls / 10, |_| store.submit(&cluster).map(drop))?;
    report("submit, 100 procs", &big);
    let update = measure(calls, |i| {
        let v = i.to_string();
        let changes = [
            Change::set("A", v.clone()),
            Change::set("B", v.clone()),
            Change::set("C", v),
        ];
        store.update(JobId::new(1 + (i % calls.max(1)) as u64, 0), &changes)
    })?;
    report("update, 3 attributes", &update);
    let seq = measure(calls, |_| store.next_sequence(Kind::MACHINE_AD).map(drop))?;
    report("next_sequence", &seq);
    Ok(())
}

fn measure(
    calls: usize,
    mut call: impl FnMut(usize) -> Result<(), starling_storage::Error>,
) -> Result<Vec<Duration>, starling_storage::Error> {
    let mut times = Vec::with_capacity(calls);
    for i in 0..calls {
        let started = Instant::now();
        call(i)?;
        times.push(started.elapsed());
    }
    times.sort();
    Ok(times)
}

fn report(what: &str, times: &[Duration]) {
    if times.is_empty() {
        return;
    }
    let median = times[times.len() / 2];
    let p90 = times[times.len() * 9 / 10];
    println!(
        "{what:24} {:6} calls  median {:>9.3?}  p90 {:>9.3?}  {:7.0} calls/s at the median",
        times.len(),
        median,
        p90,
        1.0 / median.as_secs_f64()
    );
}
