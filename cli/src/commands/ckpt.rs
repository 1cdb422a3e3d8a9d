//! `starling ckpt ls` and `starling ckpt get`: a job's latest checkpoint,
//! as the submit agent recorded it, and its files fetched back.
//!
//! - `ls JOB...` prints, per job, the latest checkpoint's sequence, when
//!   it was taken, its size, files and chunks, and the store peers that
//!   keep it (host, short agent id, and `gone` when the peer's ad left the
//!   view); `-l` adds the files and the rest of the manifest, `-json`
//!   prints the agent's answer as it is. No JOB lists every job with one.
//! - `get JOB DIR` has the agent fetch the checkpoint from the nearest live
//!   replica, verify every chunk, and write its files into DIR with your
//!   rights (for the job's owner or an administrator).
//!
//! HTCondor spells long options with one dash (`-json`); both work.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;

use super::status::{format_elapsed, human_bytes};
use starling_control::{
    self as control, Checkpoint, CheckpointGot, CheckpointReplica, JobCheckpoints, Request,
    Response,
};

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Jobs' latest checkpoints: sequence, time, size, files, chunks, and
    /// the store peers that keep them.
    Ls(LsArgs),
    /// Fetch a job's latest checkpoint, every chunk verified, into DIR.
    Get(GetArgs),
}

#[derive(Debug, clap::Args)]
pub(super) struct LsArgs {
    /// Job ids (12.0) or cluster ids (12); none: every job with a
    /// checkpoint.
    jobs: Vec<String>,
    /// Every detail of each checkpoint, its files with their sizes too.
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// Print the checkpoints as JSON.
    #[arg(long, conflicts_with = "long")]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(super) struct GetArgs {
    /// The job (12.0).
    job: String,
    /// Where the files go (made if missing).
    dir: PathBuf,
    /// Replace files of the same names already in DIR.
    #[arg(long)]
    force: bool,
    /// Print what was written as JSON.
    #[arg(long)]
    json: bool,
}

/// How long `get` waits for the agent: its own limit and a little more.
const GET_WAIT: Duration =
    Duration::from_secs(starling_agent::control::checkpoints::GET_TIMEOUT.as_secs() + 60);

pub(super) fn run(command: Command, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    match command {
        Command::Ls(args) => ls(args, data_dir),
        Command::Get(args) => get(args, data_dir),
    }
}

fn ask(data_dir: Option<&Path>, request: &Request, wait: Duration) -> anyhow::Result<Response> {
    let dir = match data_dir {
        Some(d) => d.to_owned(),
        None => starling_storage::DataDir::default_path()?,
    };
    let mut client = control::Client::connect(&dir)?;
    client.set_read_timeout(wait);
    match client.request(request)? {
        Response::Error { message } => anyhow::bail!("{message}"),
        response => Ok(response),
    }
}

fn ls(args: LsArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let request = Request::Checkpoints {
        jobs: args.jobs.clone(),
        files: args.long || args.json,
    };
    let (jobs, missing) = match ask(data_dir, &request, control::client::READ_TIMEOUT)? {
        Response::Checkpoints { jobs, missing } => (jobs, missing),
        other => anyhow::bail!("unexpected answer {other:?}"),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let now = unix_now();
    if args.json {
        serde_json::to_writer_pretty(&mut out, &jobs)?;
        writeln!(out)?;
    } else if args.long {
        for job in &jobs {
            write!(out, "{}", long_form(job, now))?;
        }
    } else if !jobs.is_empty() {
        write!(out, "{}", table(&jobs))?;
    } else if args.jobs.is_empty() {
        writeln!(out, "No job has a checkpoint.")?;
    }
    out.flush()?;
    for (job, why) in &missing {
        eprintln!("starling: {job}: {why}");
    }
    Ok(if missing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn get(args: GetArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let dir = std::path::absolute(&args.dir)
        .with_context(|| format!("cannot resolve {}", args.dir.display()))?;
    let fetching = super::progress::spinner(format!(
        "fetching the checkpoint of {} from store peers",
        args.job
    ));
    let request = Request::CheckpointGet {
        job: args.job,
        dir,
        force: args.force,
    };
    let answer = ask(data_dir, &request, GET_WAIT);
    fetching.finish_and_clear();
    let got = match answer? {
        Response::CheckpointGot(got) => got,
        other => anyhow::bail!("unexpected answer {other:?}"),
    };
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if args.json {
        serde_json::to_writer_pretty(&mut out, &got)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", fetched(&got))?;
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// A time as `YYYY-MM-DD HH:MM:SS` in UTC.
fn date_time(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (y, m, d) = starling_queue::userlog::civil(days);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A time as condor_q's `M/D HH:MM`, in UTC.
fn short_date(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let (_, m, d) = starling_queue::userlog::civil(days);
    format!("{m}/{d} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}

/// An agent id's short form: its last 8 characters, as `starling id`
/// prints them.
fn short(peer: &str) -> &str {
    let start = peer.char_indices().rev().nth(7).map_or(0, |(i, _)| i);
    &peer[start..]
}

fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// A replica in a row: `host (short id)`, marked `gone` when its ad left
/// the view.
fn replica_cell(replica: &CheckpointReplica) -> String {
    if replica.live {
        format!("{} ({})", replica.host, short(&replica.peer))
    } else {
        format!("{} ({}, gone)", replica.host, short(&replica.peer))
    }
}

/// What a job without a checkpoint on store peers shows instead.
fn none_cell(job: &JobCheckpoints) -> String {
    if let Some(problem) = &job.problem {
        format!("unreadable record: {problem}")
    } else if job.local_only && job.num_ckpts > 0 {
        "none: kept only locally".to_owned()
    } else if job.num_ckpts > 0 && !job.in_queue {
        "none: released when the job left the queue".to_owned()
    } else {
        "no checkpoint".to_owned()
    }
}

/// The default form: a row per job, condor_q's way.
fn table(jobs: &[JobCheckpoints]) -> String {
    let rows: Vec<[String; 7]> = jobs
        .iter()
        .map(|job| match &job.latest {
            Some(c) => {
                let mut replicas: Vec<String> = c.replicas.iter().map(replica_cell).collect();
                if c.replicas.is_empty() {
                    replicas.push("none".to_owned());
                }
                let mut cell = replicas.join(", ");
                if job.local_only {
                    cell.push_str("; a later one kept only locally");
                }
                [
                    job.job.clone(),
                    c.sequence.to_string(),
                    short_date(c.taken_secs),
                    human_bytes(c.bytes),
                    c.file_count.to_string(),
                    c.chunks.to_string(),
                    cell,
                ]
            }
            None => [
                job.job.clone(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                "-".into(),
                none_cell(job),
            ],
        })
        .collect();
    let heads = ["ID", "SEQ", "TAKEN", "SIZE", "FILES", "CHUNKS", "REPLICAS"];
    let mut widths = heads.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: [&str; 7]| {
        // ID and TAKEN left, numbers right, replicas as they come.
        let [id, seq, taken, size, files, chunks, replicas] = cells;
        let text = format!(
            " {id:<w0$} {seq:>w1$} {taken:<w2$} {size:>w3$} {files:>w4$} {chunks:>w5$} {replicas}",
            w0 = widths[0],
            w1 = widths[1],
            w2 = widths[2],
            w3 = widths[3],
            w4 = widths[4],
            w5 = widths[5],
        );
        format!("{}\n", text.trim_end())
    };
    let mut out = line(heads);
    for row in &rows {
        out.push_str(&line([
            &row[0], &row[1], &row[2], &row[3], &row[4], &row[5], &row[6],
        ]));
    }
    out
}

/// The long form: a block per job, then a blank line.
fn long_form(job: &JobCheckpoints, now: i64) -> String {
    let mut out = String::new();
    let mut about = Vec::new();
    if let Some(owner) = &job.owner {
        about.push(format!("owner {owner}"));
    }
    if let Some(status) = &job.status {
        about.push(status.clone());
    }
    about.push(
        if job.in_queue {
            "in the queue"
        } else {
            "in the history"
        }
        .to_owned(),
    );
    out.push_str(&format!("Job {} ({})\n", job.job, about.join(", ")));
    out.push_str(&format!("  Checkpoints taken:   {}\n", job.num_ckpts));
    out.push_str(&format!(
        "  Kept only locally:   {}\n",
        if job.local_only { "yes" } else { "no" }
    ));
    match &job.latest {
        Some(c) => out.push_str(&latest(c, now)),
        None => out.push_str(&format!("  Latest on store peers: {}\n", none_cell(job))),
    }
    out.push('\n');
    out
}

fn latest(c: &Checkpoint, now: i64) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "  Latest:              checkpoint {}\n",
        c.sequence
    ));
    out.push_str(&format!(
        "  Taken:               {} UTC ({} ago) by {}\n",
        date_time(c.taken_secs),
        format_elapsed(now.saturating_sub(c.taken_secs)),
        short(&c.taken_by)
    ));
    out.push_str(&format!("  Key:                 {}\n", c.key));
    out.push_str(&format!("  Work saved:          {:.1} s\n", c.run_secs));
    out.push_str(&format!(
        "  Size:                {} ({} bytes) in {}, {} ({} distinct)\n",
        human_bytes(c.bytes),
        c.bytes,
        plural(c.file_count, "file"),
        plural(c.chunks, "chunk"),
        c.distinct_chunks
    ));
    let live = c.replicas.iter().filter(|r| r.live).count();
    out.push_str(&format!(
        "  Replicas:            {} ({live} live)\n",
        c.replicas.len()
    ));
    let host_w = c.replicas.iter().map(|r| r.host.len()).max().unwrap_or(0);
    for r in &c.replicas {
        out.push_str(&format!(
            "    {:<host_w$}  {}  {}  {}\n",
            r.host,
            short(&r.peer),
            if r.live { "live" } else { "gone" },
            r.peer
        ));
    }
    out.push_str("  Files:\n");
    let name_w = c.files.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for f in &c.files {
        out.push_str(&format!(
            "    {:<name_w$}  {:>10}  {:04o}\n",
            f.name,
            human_bytes(f.size),
            f.mode
        ));
    }
    out
}

/// What `get` says it wrote.
fn fetched(got: &CheckpointGot) -> String {
    let mut out = format!(
        "Job {}: checkpoint {} written to {} ({}, {}) in {:.2} s\n",
        got.job,
        got.sequence,
        got.dir.display(),
        plural(got.files.len(), "file"),
        human_bytes(got.bytes),
        got.elapsed_ms as f64 / 1000.0
    );
    let name_w = got.files.iter().map(|f| f.name.len()).max().unwrap_or(0);
    for f in &got.files {
        out.push_str(&format!(
            "  {:<name_w$}  {:>10}\n",
            f.name,
            human_bytes(f.size)
        ));
    }
    out.push_str("From (nearest first):\n");
    let host_w = got.replicas.iter().map(|r| r.host.len()).max().unwrap_or(0);
    for r in &got.replicas {
        let chunks = r.chunks.unwrap_or(0);
        out.push_str(&format!(
            "  {:<host_w$}  {}  {}  {}\n",
            r.host,
            short(&r.peer),
            if r.live { "live" } else { "gone" },
            plural(usize::try_from(chunks).unwrap_or(usize::MAX), "chunk")
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_control::CheckpointFile;

    const PEER_A: &str = "12D3KooWAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAaaaa1111";
    const PEER_B: &str = "12D3KooWBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBbbbb2222";

    fn checkpoint() -> Checkpoint {
        Checkpoint {
            key: format!("{PEER_A}/4.0"),
            sequence: 3,
            taken_secs: 1_700_000_000,
            taken_by: PEER_B.to_owned(),
            run_secs: 12.5,
            bytes: 3 << 20,
            file_count: 2,
            chunks: 3,
            distinct_chunks: 3,
            files: vec![
                CheckpointFile {
                    name: "state".into(),
                    size: 7,
                    mode: 0o644,
                },
                CheckpointFile {
                    name: "data/big.bin".into(),
                    size: (3 << 20) - 7,
                    mode: 0o600,
                },
            ],
            replicas: vec![
                CheckpointReplica {
                    peer: PEER_A.into(),
                    host: "host-a".into(),
                    live: true,
                    chunks: None,
                },
                CheckpointReplica {
                    peer: PEER_B.into(),
                    host: "host-b".into(),
                    live: false,
                    chunks: None,
                },
            ],
        }
    }

    fn job(id: &str, latest: Option<Checkpoint>) -> JobCheckpoints {
        JobCheckpoints {
            job: id.into(),
            owner: Some("alice".into()),
            status: Some("running".into()),
            in_queue: true,
            num_ckpts: latest.as_ref().map_or(0, |c| c.sequence),
            local_only: false,
            latest,
            problem: None,
        }
    }

    #[test]
    fn the_table_has_a_row_per_job_with_its_replicas() {
        let mut local = job("5.0", None);
        local.num_ckpts = 2;
        local.local_only = true;
        let text = table(&[job("4.0", Some(checkpoint())), job("6.0", None), local]);
        let expected = [
            " ID  SEQ TAKEN          SIZE FILES CHUNKS REPLICAS",
            " 4.0   3 11/14 22:13 3.0 MiB     2      3 host-a (aaaa1111), host-b (bbbb2222, gone)",
            " 6.0   - -                 -     -      - no checkpoint",
            " 5.0   - -                 -     -      - none: kept only locally",
            "",
        ]
        .join("\n");
        assert_eq!(text, expected, "\n{text}");
    }

    #[test]
    fn the_long_form_lists_the_files_and_every_replica() {
        let text = long_form(&job("4.0", Some(checkpoint())), 1_700_000_062);
        assert!(
            text.starts_with("Job 4.0 (owner alice, running, in the queue)\n"),
            "{text}"
        );
        for line in [
            "  Checkpoints taken:   3\n",
            "  Kept only locally:   no\n",
            "  Latest:              checkpoint 3\n",
            "  Taken:               2023-11-14 22:13:20 UTC (0+00:01:02 ago) by bbbb2222\n",
            "  Work saved:          12.5 s\n",
            "  Size:                3.0 MiB (3145728 bytes) in 2 files, 3 chunks (3 distinct)\n",
            "  Replicas:            2 (1 live)\n",
            &format!("    host-a  aaaa1111  live  {PEER_A}\n"),
            &format!("    host-b  bbbb2222  gone  {PEER_B}\n"),
            "    state                7 B  0644\n",
            "    data/big.bin     3.0 MiB  0600\n",
        ] {
            assert!(text.contains(line), "no {line:?} in\n{text}");
        }
        assert!(text.ends_with("\n\n"));
        let mut gone = job("7.0", None);
        gone.in_queue = false;
        gone.num_ckpts = 1;
        let text = long_form(&gone, 0);
        assert!(
            text.contains("Latest on store peers: none: released when the job left the queue"),
            "{text}"
        );
    }

    #[test]
    fn get_says_what_it_wrote_and_from_where() {
        let c = checkpoint();
        let mut replicas = c.replicas.clone();
        replicas[0].chunks = Some(3);
        replicas[1].chunks = Some(0);
        let got = CheckpointGot {
            job: "4.0".into(),
            sequence: 3,
            dir: "/home/alice/restore".into(),
            files: c.files.clone(),
            bytes: c.bytes,
            replicas,
            elapsed_ms: 1234,
        };
        assert_eq!(
            fetched(&got),
            "\
Job 4.0: checkpoint 3 written to /home/alice/restore (2 files, 3.0 MiB) in 1.23 s
  state                7 B
  data/big.bin     3.0 MiB
From (nearest first):
  host-a  aaaa1111  live  3 chunks
  host-b  bbbb2222  gone  0 chunks
"
        );
    }

    #[test]
    fn short_ids_and_dates() {
        assert_eq!(short(PEER_A), "aaaa1111");
        assert_eq!(short("abc"), "abc");
        assert_eq!(date_time(0), "1970-01-01 00:00:00");
        assert_eq!(date_time(1_700_000_000), "2023-11-14 22:13:20");
        assert_eq!(short_date(1_700_000_000), "11/14 22:13");
    }
}
