//! Crash safety: a child process submits clusters, updates several
//! attributes at once, moves jobs to history, changes many jobs in one
//! batch (some to history) and draws sequence numbers,
//! printing a line after each call returns; the parent kills it with SIGKILL
//! at seeded random points, reopens the store and checks that every
//! acknowledged change is there and that no change is there in part.
//!
//! The child is this test binary run again with `--exact crash_child
//! --ignored`; it finds its store and round in environment variables.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use starling_protocol::classad::{parse_ad, unparse, ClassAd};
use starling_protocol::identity::{Kind, Timestamp};
use starling_storage::{Batch, Change, JobId, SledStore, Store};

const STORE_ENV: &str = "STARLING_CRASH_STORE";
const ROUND_ENV: &str = "STARLING_CRASH_ROUND";
/// Each line the child means for the parent starts with this.
const TAG: &str = "@@ ";
/// Kills in one run.
const ROUNDS: u64 = 40;
const SEED: u64 = 0x5354_4152_4c49_4e47;
/// Procs per submitted cluster.
const PROCS: u32 = 3;
/// The child moves its oldest job to history while the queue is longer.
const QUEUE: usize = 6;
/// The longest any one wait on the child may take.
const PATIENCE: Duration = Duration::from_secs(20);

/// splitmix64: a small, seeded, deterministic generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    writeln!(out, "{TAG}{line}").unwrap();
    out.flush().unwrap();
}

/// The child: works on the store until it is killed.
#[test]
#[ignore = "the child of kill_9_never_loses_an_acknowledged_change"]
fn crash_child() {
    let (Ok(path), Ok(round)) = (std::env::var(STORE_ENV), std::env::var(ROUND_ENV)) else {
        return;
    };
    let round: u64 = round.parse().unwrap();
    let mut rng = Rng(SEED ^ round);
    let store = SledStore::open(&path).unwrap();
    let mut queue: Vec<JobId> = store
        .jobs()
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    say(format_args!("ready"));
    for step in 0u64.. {
        let value = round * 1_000_000 + step;
        let abc = [
            Change::set("A", value.to_string()),
            Change::set("B", value.to_string()),
            Change::set("C", value.to_string()),
        ];
        if queue.len() > QUEUE && rng.below(4) == 0 {
            // The two oldest jobs leave, every other one is updated: all
            // of it or none.
            let retired: Vec<JobId> = queue.drain(..2).collect();
            let mut batch = Batch::new();
            let mut last = abc.to_vec();
            last.push(Change::set("JobStatus", "3"));
            for id in &retired {
                batch.move_to_history(*id, last.clone(), Timestamp::from_unix_millis(value));
            }
            for id in &queue {
                batch.update(*id, abc.to_vec());
            }
            say(format_args!(
                "begin batch {value} {} {}",
                ids(&retired),
                ids(&queue)
            ));
            store.apply(&batch).unwrap();
            say(format_args!("ack batch {value}"));
        } else if queue.len() > QUEUE && rng.below(3) == 0 {
            let id = queue.remove(0);
            say(format_args!("begin history {id} {value}"));
            let mut last = abc.to_vec();
            last.push(Change::set("JobStatus", "4"));
            store
                .move_to_history(id, &last, Timestamp::from_unix_millis(value))
                .unwrap();
            say(format_args!("ack history {id} {value}"));
        } else if queue.len() < 2 || rng.below(4) == 0 {
            let ad = parse_ad(&format!(
                "[ A = {value}; B = {value}; C = {value}; Cmd = \"/bin/true\" ]"
            ))
            .unwrap();
            let procs = vec![ad; PROCS as usize];
            say(format_args!("begin submit {value}"));
            let cluster = store.submit(&procs).unwrap();
            say(format_args!("ack submit {cluster} {value}"));
            queue.extend((0..PROCS).map(|p| JobId::new(cluster, p)));
        } else if rng.below(5) == 0 {
            say(format_args!("begin seq"));
            let seq = store.next_sequence(Kind::MACHINE_AD).unwrap();
            say(format_args!("ack seq {seq}"));
        } else {
            let id = queue[rng.below(queue.len() as u64) as usize];
            say(format_args!("begin update {id} {value}"));
            store.update(id, &abc).unwrap();
            say(format_args!("ack update {id} {value}"));
        }
    }
}

/// Job ids as one word: `1.0,1.2`.
fn ids(ids: &[JobId]) -> String {
    ids.iter()
        .map(JobId::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// When the parent kills a child.
#[derive(Clone, Copy, Debug)]
enum Kill {
    /// This long after it was started: often while it opens the store.
    AfterStart(Duration),
    /// This long after it said it was ready.
    AfterReady(Duration),
    /// As soon as it says it is starting this operation.
    OnBegin(&'static str),
}

/// What the parent learnt from the child's lines.
#[derive(Default)]
struct Model {
    /// Each job's value as of its last acknowledged change.
    acked: BTreeMap<JobId, u64>,
    /// Jobs whose move to history was acknowledged.
    retired: BTreeSet<JobId>,
    last_cluster: u64,
    last_seq: u64,
    /// The operation begun and not acknowledged when the child died.
    pending: Option<Pending>,
    /// Rounds in which an operation was cut, and in which it then showed.
    cut: usize,
    cut_applied: usize,
    /// Of those, batches.
    cut_batches: usize,
}

#[derive(Clone, Debug)]
enum Pending {
    Submit(u64),
    Update(JobId, u64),
    History(JobId, u64),
    /// Jobs moved to the history and jobs updated, all to one value.
    Batch {
        value: u64,
        retired: Vec<JobId>,
        updated: Vec<JobId>,
    },
    Seq,
}

fn job_id(text: &str) -> JobId {
    let (cluster, proc) = text.split_once('.').unwrap();
    JobId::new(cluster.parse().unwrap(), proc.parse().unwrap())
}

impl Model {
    fn read(&mut self, line: &str) {
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["ready"] => {}
            ["begin", "submit", v] => self.pending = Some(Pending::Submit(v.parse().unwrap())),
            ["begin", "update", id, v] => {
                self.pending = Some(Pending::Update(job_id(id), v.parse().unwrap()))
            }
            ["begin", "history", id, v] => {
                self.pending = Some(Pending::History(job_id(id), v.parse().unwrap()))
            }
            ["begin", "seq"] => self.pending = Some(Pending::Seq),
            ["begin", "batch", v, retired, updated] => {
                let list = |text: &str| -> Vec<JobId> {
                    text.split(',')
                        .filter(|w| !w.is_empty())
                        .map(job_id)
                        .collect()
                };
                self.pending = Some(Pending::Batch {
                    value: v.parse().unwrap(),
                    retired: list(retired),
                    updated: list(updated),
                });
            }
            ["ack", "batch", v] => {
                let Some(Pending::Batch {
                    value,
                    retired,
                    updated,
                }) = self.pending.take()
                else {
                    panic!("a batch acknowledged that was not begun");
                };
                assert_eq!(value, v.parse::<u64>().unwrap());
                self.batch_applied(value, &retired, &updated);
            }
            ["ack", "submit", cluster, v] => {
                let cluster: u64 = cluster.parse().unwrap();
                assert!(cluster > self.last_cluster, "cluster id {cluster} reused");
                self.last_cluster = cluster;
                for proc in 0..PROCS {
                    self.acked
                        .insert(JobId::new(cluster, proc), v.parse().unwrap());
                }
                self.pending = None;
            }
            ["ack", "update", id, v] => {
                self.acked.insert(job_id(id), v.parse().unwrap());
                self.pending = None;
            }
            ["ack", "history", id, v] => {
                self.acked.insert(job_id(id), v.parse().unwrap());
                self.retired.insert(job_id(id));
                self.pending = None;
            }
            ["ack", "seq", n] => {
                let n: u64 = n.parse().unwrap();
                assert!(n > self.last_seq, "sequence number {n} handed out again");
                self.last_seq = n;
                self.pending = None;
            }
            _ => panic!("the child said {line:?}"),
        }
    }

    /// Takes a batch's values as acknowledged.
    fn batch_applied(&mut self, value: u64, retired: &[JobId], updated: &[JobId]) {
        for id in retired.iter().chain(updated) {
            self.acked.insert(*id, value);
        }
        self.retired.extend(retired);
    }

    /// Checks the reopened store against what was acknowledged, then takes
    /// what the cut operation did, if anything, as the new truth.
    fn check(&mut self, store: &SledStore) {
        let queue: BTreeMap<JobId, ClassAd> = store.jobs().unwrap().into_iter().collect();
        let mut history = BTreeMap::new();
        for entry in store.history(usize::MAX).unwrap() {
            assert!(
                history.insert(entry.id, entry.ad).is_none(),
                "{} is in the history twice",
                entry.id
            );
        }
        let mut seen = BTreeMap::new();
        for (id, ad) in queue.iter().chain(&history) {
            assert!(
                seen.insert(*id, value_of(*id, ad)).is_none(),
                "{id} is both queued and in history"
            );
        }
        // Clusters are whole.
        let mut procs: BTreeMap<u64, u32> = BTreeMap::new();
        for id in seen.keys() {
            *procs.entry(id.cluster).or_default() += 1;
        }
        for (cluster, n) in procs {
            assert_eq!(n, PROCS, "cluster {cluster} has {n} of its {PROCS} procs");
        }
        let mut pending = self.pending.take();
        let mut applied = false;
        if let Some(Pending::Batch {
            value,
            retired,
            updated,
        }) = &pending
        {
            // A cut batch shows in every one of its jobs or in none.
            let shows = |id: &JobId, leaves: bool| {
                seen.get(id) == Some(value) && history.contains_key(id) == leaves
            };
            let shown = retired.iter().filter(|id| shows(id, true)).count()
                + updated.iter().filter(|id| shows(id, false)).count();
            let all = retired.len() + updated.len();
            assert!(
                shown == 0 || shown == all,
                "a cut batch shows in {shown} of its {all} jobs"
            );
            if shown == all {
                self.batch_applied(*value, retired, updated);
                applied = true;
            }
            self.cut += 1;
            self.cut_batches += 1;
            self.cut_applied += usize::from(applied);
            pending = None;
        }
        for (&id, &value) in &seen {
            let in_history = history.contains_key(&id);
            match self.acked.get(&id) {
                Some(&acked) if acked == value => {
                    let retired = self.retired.contains(&id);
                    if retired != in_history {
                        let pending_move = matches!(&pending, Some(Pending::History(p, v)) if *p == id && *v == value);
                        assert!(
                            pending_move && in_history,
                            "{id}: acknowledged retired {retired}, in history {in_history}"
                        );
                        applied = true;
                        self.retired.insert(id);
                    }
                }
                acked => {
                    // Only the cut operation may explain a value not acknowledged.
                    let explained = match &pending {
                        Some(Pending::Submit(v)) => acked.is_none() && *v == value && !in_history,
                        Some(Pending::Update(p, v)) => *p == id && *v == value && !in_history,
                        Some(Pending::History(p, v)) => *p == id && *v == value && in_history,
                        _ => false,
                    };
                    assert!(
                        explained,
                        "{id} has value {value}; acknowledged {acked:?}; cut operation {pending:?}"
                    );
                    if let Some(Pending::Submit(_)) = pending {
                        self.last_cluster = self.last_cluster.max(id.cluster);
                    }
                    if in_history {
                        self.retired.insert(id);
                    }
                    self.acked.insert(id, value);
                    applied = true;
                }
            }
        }
        for (id, value) in &self.acked {
            assert!(
                seen.contains_key(id),
                "{id} (acknowledged with value {value}) is gone"
            );
        }
        if let Some(Pending::Seq) = pending {
            // Whether or not it was written, the next number must be new.
            applied = false;
        }
        if pending.is_some() {
            self.cut += 1;
            self.cut_applied += usize::from(applied);
        }
    }
}

/// A job's A, B and C, which every change sets together.
fn value_of(id: JobId, ad: &ClassAd) -> u64 {
    let get = |name: &str| {
        ad.get(name)
            .map(unparse)
            .unwrap_or_else(|| panic!("{id} has no {name}"))
    };
    let (a, b, c) = (get("A"), get("B"), get("C"));
    assert!(
        a == b && b == c,
        "{id} is half updated: A = {a}, B = {b}, C = {c}"
    );
    assert_eq!(get("ClusterId"), id.cluster.to_string());
    assert_eq!(get("ProcId"), id.proc.to_string());
    a.parse().unwrap()
}

/// Reads the child's tagged lines onto a channel.
fn lines_of(child: &mut Child) -> Receiver<String> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(i) = line.find(TAG) {
                if tx.send(line[i + TAG.len()..].to_owned()).is_err() {
                    break;
                }
            }
        }
    });
    rx
}

fn spawn(path: &Path, round: u64, stderr: &Path) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "crash_child",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(STORE_ENV, path)
        .env(ROUND_ENV, round.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(stderr).unwrap())
        .spawn()
        .unwrap()
}

/// The next line, failing the test if the child died or went quiet.
fn next_line(rx: &Receiver<String>, child: &mut Child, stderr: &Path) -> String {
    match rx.recv_timeout(PATIENCE) {
        Ok(line) => line,
        Err(e) => {
            let _ = child.kill();
            let status = child.wait().unwrap();
            let err = std::fs::read_to_string(stderr).unwrap_or_default();
            panic!("the child stopped talking ({e:?}, {status}):\n{err}");
        }
    }
}

#[test]
fn kill_9_never_loses_an_acknowledged_change() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("store");
    let stderr = dir.path().join("child.stderr");
    let mut rng = Rng(SEED);
    let mut model = Model::default();
    let started = Instant::now();
    let mut acks = 0;
    for round in 0..ROUNDS {
        let kill = match round % 6 {
            0 => Kill::AfterStart(Duration::from_millis(rng.below(40))),
            1 | 4 => Kill::OnBegin("history"),
            2 => Kill::OnBegin("submit"),
            5 => Kill::OnBegin("batch"),
            _ => Kill::AfterReady(Duration::from_millis(rng.below(80))),
        };
        let mut child = spawn(&path, round, &stderr);
        let rx = lines_of(&mut child);
        let spawned = Instant::now();
        match kill {
            Kill::AfterStart(delay) => std::thread::sleep(delay.saturating_sub(spawned.elapsed())),
            Kill::AfterReady(delay) => {
                let line = next_line(&rx, &mut child, &stderr);
                model.read(&line);
                std::thread::sleep(delay);
            }
            Kill::OnBegin(op) => loop {
                let line = next_line(&rx, &mut child, &stderr);
                model.read(&line);
                if line.starts_with(&format!("begin {op}")) {
                    // Let the call get under way, sometimes to its flush.
                    std::thread::sleep(Duration::from_micros(rng.below(3000)));
                    break;
                }
            },
        }
        if let Ok(Some(status)) = child.try_wait() {
            let err = std::fs::read_to_string(&stderr).unwrap_or_default();
            panic!("round {round}: the child exited by itself ({status}):\n{err}");
        }
        // std's kill is SIGKILL on Unix: no destructor, no flush, no exit.
        child.kill().unwrap();
        child.wait().unwrap();
        loop {
            match rx.recv_timeout(PATIENCE) {
                Ok(line) => {
                    acks += usize::from(line.starts_with("ack"));
                    model.read(&line);
                }
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("round {round}: output never ended"),
            }
        }
        let store = SledStore::open(&path).unwrap();
        model.check(&store);
    }
    assert!(
        acks > ROUNDS as usize * 3,
        "the children did too little: {acks} acknowledgements"
    );
    assert!(
        model.cut > ROUNDS as usize / 3,
        "too few kills cut an operation: {}",
        model.cut
    );
    assert!(
        !model.retired.is_empty(),
        "no history move was ever acknowledged"
    );
    assert!(model.cut_batches > 0, "no kill cut a batch");
    eprintln!(
        "{ROUNDS} kills in {:.1?}: {acks} acknowledged calls, {} calls cut ({} of them took \
         effect, {} batches), {} jobs retired, last cluster {}",
        started.elapsed(),
        model.cut,
        model.cut_applied,
        model.cut_batches,
        model.retired.len(),
        model.last_cluster
    );
}
