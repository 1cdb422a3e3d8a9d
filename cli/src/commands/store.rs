//! `starling store check` and `starling store salvage`: what an
//! administrator runs when an agent refuses to start because its store is
//! damaged.
//!
//! Both work on the store of a stopped agent: they hold the data
//! directory's `agent.pid` while they run, so they refuse to start while
//! its agent runs and an agent cannot start under them. `check` changes
//! nothing; `salvage` keeps the damaged store aside (it deletes nothing)
//! and puts a fresh store with every record that still verifies in its
//! place. The checks themselves are `starling_storage::damage`'s.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use starling_protocol::identity::Timestamp;
use starling_storage::damage::{self, Count, Report};
use starling_storage::DataDir;

use starling_control::{self as control, PidFile};

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Verify every record of the store and that none it acknowledged is
    /// missing; exit 1 if it is damaged. Changes nothing.
    Check(CheckArgs),
    /// Keep a damaged store aside (as store.damaged-TIME) and put in its
    /// place a fresh one holding every record that still verifies.
    Salvage,
}

#[derive(Debug, clap::Args)]
pub(super) struct CheckArgs {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(command: Command, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let dir = match data_dir {
        Some(dir) => dir.to_owned(),
        None => DataDir::default_path()?,
    };
    anyhow::ensure!(dir.is_dir(), "there is no data directory {}", dir.display());
    let data = DataDir::open(&dir)?;
    let name = match command {
        Command::Check(_) => "check",
        Command::Salvage => "salvage",
    };
    let _pid = hold(&dir, name)?;
    let store = data.store_path();
    match command {
        Command::Check(args) => check(&dir, &store, args.json),
        Command::Salvage => salvage(&dir, &store),
    }
}

/// Holds the data directory's pid file: no agent runs there meanwhile.
fn hold(dir: &Path, command: &str) -> anyhow::Result<PidFile> {
    match PidFile::acquire(dir) {
        Ok(pid) => Ok(pid),
        Err(control::Error::AgentRunning { pid, .. }) => anyhow::bail!(
            "the agent of {} is running{}: stop it first (`starling store {command}` works on \
             the store of a stopped agent)",
            dir.display(),
            pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
        ),
        Err(e) => Err(e).context("keeping agents out of the data directory"),
    }
}

fn check(dir: &Path, store: &Path, json: bool) -> anyhow::Result<ExitCode> {
    let report = damage::check(store)?;
    if json {
        let out = serde_json::json!({
            "store": store.display().to_string(),
            "intact": report.is_intact(),
            "store_version": report.store_version(),
            "acknowledged_version": report.acknowledged_version(),
            "counts": report.counts.iter().map(count_json).collect::<Vec<_>>(),
            "problems": report.problems.iter().map(|p| serde_json::json!({
                "store": p.store, "what": p.what,
            })).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        print_report(&report);
        if !report.is_intact() {
            println!();
            println!(
                "To keep the damaged store aside and start again with every record that \
                 still verifies:"
            );
            println!("  starling store salvage --data-dir {}", dir.display());
        }
    }
    Ok(if report.is_intact() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn count_json(c: &Count) -> serde_json::Value {
    serde_json::json!({
        "store": c.store, "unit": c.unit, "intact": c.intact, "damaged": c.damaged,
        "acknowledged": c.acknowledged, "lost": c.lost(),
    })
}

fn print_report(report: &Report) {
    let state = if report.is_intact() {
        "intact"
    } else {
        "DAMAGED"
    };
    println!("store {}: {state}", report.path.display());
    print_counts(&report.counts, "INTACT");
    let version = |v: Option<u64>| v.map_or_else(|| "unknown".to_owned(), |v| v.to_string());
    println!(
        "changes: {} in the store, {} acknowledged",
        version(report.store_version()),
        version(report.acknowledged_version())
    );
    if !report.is_intact() {
        println!("damage:");
        for problem in &report.problems {
            println!("  {problem}");
        }
    }
}

fn print_counts(counts: &[Count], intact: &str) {
    println!(
        "  {:<26} {:>9} {:>8} {:>13} {:>6}",
        "STORE", intact, "DAMAGED", "ACKNOWLEDGED", "LOST"
    );
    for c in counts {
        let acked = c
            .acknowledged
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        println!(
            "  {:<26} {:>9} {:>8} {:>13} {:>6}",
            format!("{} ({})", c.store, c.unit),
            c.intact,
            c.damaged,
            acked,
            c.lost()
        );
    }
}

fn salvage(dir: &Path, store: &Path) -> anyhow::Result<ExitCode> {
    let salvaged = damage::salvage(store, Timestamp::now())?;
    let Some(aside) = salvaged.aside else {
        println!(
            "the store {} is intact: nothing to salvage",
            store.display()
        );
        return Ok(ExitCode::SUCCESS);
    };
    println!("damage found:");
    for problem in &salvaged.report.problems {
        println!("  {problem}");
    }
    println!(
        "the damaged store is kept at {} (nothing was deleted)",
        aside.display()
    );
    println!("the fresh store {} holds:", store.display());
    print_counts(&salvaged.recovered, "RECOVERED");
    let queue = salvaged.recovered.iter().find(|c| c.store == "queue");
    if let Some(q) = queue {
        let acked = q
            .acknowledged
            .map_or_else(|| "?".to_owned(), |n| n.to_string());
        println!(
            "queue: {} of {acked} jobs recovered, {} lost",
            q.intact,
            q.lost()
        );
    }
    println!(
        "the next cluster id is {} (ids handed out before are not used again)",
        salvaged.next_cluster
    );
    println!(
        "the agent can start again: starling agent --data-dir {}",
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// What to run when the agent of `dir` found its store damaged.
pub(super) fn damaged_hint(dir: &Path) -> String {
    format!(
        "the agent will not start on a damaged store. To see the damage: starling store check \
         --data-dir {dir}\nTo keep the damaged store aside and start again with every record \
         that still verifies: starling store salvage --data-dir {dir}",
        dir = dir.display()
    )
}
