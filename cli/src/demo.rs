//! `starling demo`: Starling at work on a fresh machine, with no setup.
//!
//! It starts a small testnet (two domains of three agents each, real agent
//! processes on loopback), writes a sample workload (a word-count over text
//! chunks, each job with its own input file and output), submits it from
//! one agent of each domain, shows the jobs' progress, and ends with where
//! each job ran and where its output is. The testnet is stopped at the end
//! unless `--keep` is given; its directory stays for inspection.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use clap::{ArgMatches, FromArgMatches as _};
use indicatif::{ProgressBar, ProgressStyle};
use starling_control::{Client, Request, Response};
use starling_protocol::classad::{parse_ad, ClassAd, Evaluator, Name, Side, Value};
use starling_testnet::processes::{self, Progress};
use starling_testnet::UpOptions;

/// The `demo` subcommand, for `crate::commands::main_with`.
pub(crate) struct Demo;

#[derive(Debug, clap::Args)]
struct Args {
    /// Where the testnet and the workload go.
    #[arg(long, default_value = "starling-demo")]
    dir: PathBuf,
    /// Jobs per submitting agent.
    #[arg(long, default_value_t = 12)]
    jobs: usize,
    /// Leave the testnet running afterwards (stop it with `starling testnet
    /// down --dir DIR/pool`).
    #[arg(long)]
    keep: bool,
    /// Give up if the jobs have not all finished after this many seconds.
    #[arg(long, default_value_t = 300)]
    timeout: u64,
}

/// Agents in the demo pool, dealt to two domains.
const AGENTS: usize = 6;

/// The job: counts the words of its chunk, says where it ran.
const WORDCOUNT: &str = r#"#!/bin/sh
# A Starling demo job: count the words of one chunk of text.
words=$(wc -w < "$1")
slot=$(grep '^Name = ' "$_CONDOR_MACHINE_AD" | sed 's/^Name = "\(.*\)"$/\1/')
echo "$1: $words words, counted on $slot"
sleep 1
"#;

const TEXT: &str = "the quick brown fox jumps over the lazy dog while grid agents \
gossip machine ads claim slots and move files between peers without any central manager";

impl crate::commands::Extension for Demo {
    fn command(&self) -> clap::Command {
        <Args as clap::Args>::augment_args(clap::Command::new("demo").about(
            "See Starling work: a local pool of six agents in two domains runs a sample workload",
        ))
    }

    fn run(&self, matches: &ArgMatches, _data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
        let args = Args::from_arg_matches(matches)?;
        demo(args)
    }
}

fn demo(args: Args) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        (1..=1000).contains(&args.jobs),
        "--jobs is 1 to 1000, not {}",
        args.jobs
    );
    std::fs::create_dir_all(&args.dir).with_context(|| format!("making {}", args.dir.display()))?;
    let dir = args.dir.canonicalize()?;
    let pool = dir.join("pool");
    let starling = std::env::current_exe().context("finding the starling binary to run")?;
    let mut options = UpOptions::new(&pool, AGENTS, starling);
    options.domains = 2;
    say!(
        "Starting a pool of {AGENTS} agents in 2 domains in {}",
        pool.display()
    );
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(120));
    let report = processes::up(&options, &mut |p| match p {
        Progress::Answering {
            answering, total, ..
        } => spinner.set_message(format!("{answering}/{total} agents answering")),
        Progress::Joining { joined, total } => {
            spinner.set_message(format!("{joined}/{total} agents see the whole pool"))
        }
        _ => {}
    })
    .context(
        "starting the demo pool (stop a previous one with `starling testnet down --dir DIR/pool`)",
    )?;
    spinner.finish_and_clear();
    say!(
        "Pool up: {} agents, each sees every machine.",
        report.layout.agents.len()
    );

    // Agent 0 (domain d0) and agent 1 (domain d1) each submit a workload.
    let submitters = [0usize, 1];
    let mut clusters = Vec::new();
    for &s in &submitters {
        let work = dir.join(format!("work-{s}"));
        write_workload(&work, args.jobs)?;
        let agent = pool.join(format!("agent-{s:02}"));
        let text = std::fs::read_to_string(work.join("wordcount.sub"))?;
        let response = Client::call(
            &agent,
            &Request::Submit {
                file: "wordcount.sub".to_owned(),
                text,
                cwd: work.clone(),
                env: BTreeMap::new(),
                commands: BTreeMap::new(),
            },
        )?;
        match response {
            Response::Submitted { cluster, procs } => {
                say!(
                    "agent-{s:02} queued {procs} jobs as cluster {cluster} (outputs in {})",
                    work.join("out").display()
                );
                clusters.push((s, agent, work));
            }
            Response::Error { message } => {
                anyhow::bail!("agent-{s:02} refused the workload: {message}")
            }
            other => anyhow::bail!("agent-{s:02} answered {other:?}"),
        }
    }

    let total = (args.jobs * submitters.len()) as u64;
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} done  {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let deadline = Instant::now() + Duration::from_secs(args.timeout);
    let finished = loop {
        let mut done = 0;
        let mut running = 0;
        let mut held = 0;
        for (_, agent, _) in &clusters {
            done += jobs(agent, true)?.len();
            for ad in jobs(agent, false)? {
                match int(&ad, "JobStatus") {
                    2 | 6 => running += 1,
                    5 => held += 1,
                    _ => {}
                }
            }
        }
        bar.set_position(done as u64);
        bar.set_message(format!("{running} running, {held} held"));
        if done as u64 >= total || (held > 0 && done + held >= total as usize) {
            break true;
        }
        if Instant::now() >= deadline {
            break false;
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    bar.finish();

    say!(
        "\n{:<8} {:<6} {:<34} {:>4}  OUTPUT",
        "AGENT",
        "JOB",
        "RAN ON",
        "EXIT"
    );
    let mut per_machine: BTreeMap<String, usize> = BTreeMap::new();
    for (s, agent, _) in &clusters {
        let mut ads = jobs(agent, true)?;
        ads.sort_by_key(|ad| int(ad, "ProcId"));
        for ad in &ads {
            let host = text(ad, "LastRemoteHost");
            *per_machine
                .entry(host.split('@').nth(1).unwrap_or(&host).to_owned())
                .or_default() += 1;
            say!(
                "agent-{s:02} {:<6} {:<34} {:>4}  {}",
                format!("{}.{}", int(ad, "ClusterId"), int(ad, "ProcId")),
                host,
                int(ad, "ExitCode"),
                Path::new(&text(ad, "Iwd")).join(text(ad, "Out")).display()
            );
        }
    }
    say!("\nJobs per machine:");
    for (machine, n) in &per_machine {
        say!("  {machine:<32} {n}");
    }
    if args.keep {
        say!(
            "\nThe pool keeps running: try `starling q --agent {0}/agent-00`, \
             `starling status --agent {0}/agent-00`; stop it with `starling testnet down --dir {0}`.",
            pool.display()
        );
    } else {
        processes::down(&pool, processes::DEFAULT_DOWN_TIMEOUT, &mut |_| {})?;
        say!("\nPool stopped. Everything is in {}.", dir.display());
    }
    if finished {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!(
            "starling demo: not every job finished within {} s",
            args.timeout
        );
        Ok(ExitCode::from(1))
    }
}

fn write_workload(work: &Path, jobs: usize) -> anyhow::Result<()> {
    std::fs::create_dir_all(work.join("chunks"))?;
    std::fs::create_dir_all(work.join("out"))?;
    let words: Vec<&str> = TEXT.split_whitespace().collect();
    let mut names = Vec::new();
    for i in 0..jobs {
        let chunk: Vec<&str> = words
            .iter()
            .cycle()
            .skip(i)
            .take(5 + i % 17)
            .copied()
            .collect();
        let name = format!("chunk-{i:03}.txt");
        std::fs::write(work.join("chunks").join(&name), chunk.join(" ") + "\n")?;
        names.push(name);
    }
    let exe = work.join("wordcount.sh");
    std::fs::write(&exe, WORDCOUNT)?;
    std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755))?;
    std::fs::write(
        work.join("wordcount.sub"),
        format!(
            "# A Starling demo workload: one job per chunk of text.\n\
             executable = wordcount.sh\n\
             arguments = $(chunk)\n\
             transfer_input_files = chunks/$(chunk)\n\
             output = out/$(chunk).count\n\
             error = out/$(chunk).err\n\
             request_memory = 64\n\
             queue chunk in ({})\n",
            names.join(", ")
        ),
    )?;
    Ok(())
}

fn jobs(agent: &Path, history: bool) -> anyhow::Result<Vec<ClassAd>> {
    match Client::call(
        agent,
        &Request::Jobs {
            targets: Vec::new(),
            constraint: None,
            history,
            limit: None,
            projection: None,
        },
    )? {
        Response::Jobs { jobs } => jobs
            .iter()
            .map(|t| parse_ad(t).context("a job ad"))
            .collect(),
        other => anyhow::bail!("{} answered {other:?}", agent.display()),
    }
}

fn get(ad: &ClassAd, name: &str) -> Value {
    Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded())
}

fn int(ad: &ClassAd, name: &str) -> i64 {
    match get(ad, name) {
        Value::Int(i) => i,
        _ => -1,
    }
}

fn text(ad: &ClassAd, name: &str) -> String {
    match get(ad, name) {
        Value::String(s) => s.to_string(),
        _ => String::new(),
    }
}
