//! The `starling` command line: argument parsing and dispatch to one module
//! per subcommand. Output is shaped like the HTCondor command each one
//! mirrors.
//!
//! The commands built on `starling_testnet` (`testnet`, `demo`) live beside
//! this module and come in as [`Extension`]s that [`main_with`] adds to the
//! command line.

mod agent;
mod ckpt;
mod config;
mod domain;
mod drain;
mod eval;
mod flags;
mod gpus;
mod id;
mod jobs;
mod matching;
mod net;
mod off;
pub(crate) mod progress;
mod service;
mod status;
mod store;
mod tail;
mod userprio;
mod wait;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{ArgMatches, CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

/// Starling: a peer-to-peer grid agent.
#[derive(Debug, Parser)]
#[command(
    name = "starling",
    version,
    about = "Starling: a peer-to-peer grid agent. One agent runs on every machine; these \
             commands run it and talk to it.",
    propagate_version = true
)]
pub(crate) struct Cli {
    /// The agent's data directory; explained once, in `starling --help`
    /// ([`DATA_DIR_HELP`]), not in every command's.
    #[arg(
        long,
        visible_alias = "agent",
        global = true,
        value_name = "DIR",
        hide = true
    )]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the agent in the foreground (until SIGINT, SIGTERM or `shutdown`).
    Agent(agent::Args),
    /// Install the agent as a systemd service (starling-agent.service).
    InstallService(service::Args),
    /// Print the configuration the agent runs with, each value with where it
    /// comes from (like condor_config_val -summary).
    Config(config::Args),
    /// Evaluate ClassAd expressions (like HTCondor's classad_eval).
    Eval(eval::Args),
    /// Match one job ad against many machine ads, two-sidedly, and rank them.
    Match(matching::Args),
    /// The machines of the pool (like HTCondor's condor_status).
    Status(status::Args),
    /// Print this agent's id and its domain certificates (making its key on first use).
    Id(id::Args),
    /// Domain keys, certificates and trust policies.
    #[command(subcommand)]
    Domain(domain::Command),
    /// Queue the jobs of a submit description file (like condor_submit).
    Submit(jobs::SubmitArgs),
    /// The jobs in the queue (like condor_q).
    Q(jobs::QArgs),
    /// Jobs that left the queue (like condor_history).
    History(jobs::HistoryArgs),
    /// Remove jobs (like condor_rm).
    Rm(jobs::ActArgs),
    /// Hold jobs (like condor_hold).
    Hold(jobs::ActArgs),
    /// Release held jobs (like condor_release).
    Release(jobs::ActArgs),
    /// Make running jobs leave their machines and run again (like condor_vacate_job).
    #[command(visible_alias = "vacate-job", alias = "vacate_job")]
    Vacate(jobs::VacateArgs),
    /// Move running jobs that checkpoint to another machine, claimed first.
    Migrate(jobs::MigrateArgs),
    /// The network links this agent owns and their reservations.
    Net(net::Args),
    /// The GPUs the agent would find here (like condor_gpu_discovery).
    GpuDiscovery(gpus::Args),
    /// Change an attribute of jobs (like condor_qedit).
    Qedit(jobs::EditArgs),
    /// Why a job is idle, machine by machine (like condor_q -better-analyze).
    Why(jobs::WhyArgs),
    /// Jobs' checkpoints on store peers: list them, or fetch one back.
    #[command(subcommand)]
    Ckpt(ckpt::Command),
    /// Users' fair-share priorities in this domain (like condor_userprio).
    Userprio(userprio::Args),
    /// Stop this machine taking jobs and make its jobs leave (like condor_drain).
    Drain(drain::Args),
    /// Stop the agent cleanly, draining its jobs first or not (like condor_off).
    Off(off::OffArgs),
    /// Who the agent is: its id, domain and the addresses peers join it by.
    Whoami(off::WhoamiArgs),
    /// Wait until jobs have ended, from their log or the queue (like condor_wait).
    Wait(wait::Args),
    /// The end of a running job's output, read from its machine; -f follows it (like condor_tail).
    Tail(tail::Args),
    /// Check a stopped agent's store for damage, or salvage what still reads.
    #[command(subcommand)]
    Store(store::Command),
    /// Started by the agent itself: ends its jobs when it dies.
    #[command(hide = true)]
    JobWatchdog(starling_process::watchdog::Args),
    /// Started by the agent itself: the parent of one job, recording its end.
    #[command(hide = true)]
    JobReaper(starling_process::reaper::Args),
}

/// What `--data-dir` means, said once for every command.
const DATA_DIR_HELP: &str = concat!(
    "      --data-dir <DIR>  The agent's data directory (key, certificates, store), for every\n",
    "                        command; `--agent DIR` says the same when it is the running agent\n",
    "                        being addressed. Default: $STARLING_DATA_DIR, else\n",
    "                        ~/.local/share/starling",
);

/// The subcommands by what a user is doing, for `starling --help`; a
/// command not named here is listed under "Other".
const TASKS: &[(&str, &[&str])] = &[
    (
        "Run jobs",
        &[
            "submit", "q", "wait", "tail", "why", "history", "rm", "hold", "release", "qedit",
            "vacate", "migrate", "ckpt",
        ],
    ),
    (
        "Look at the pool",
        &["status", "userprio", "net", "match", "eval"],
    ),
    (
        "Run an agent on this machine",
        &[
            "agent",
            "config",
            "install-service",
            "whoami",
            "off",
            "drain",
            "gpu-discovery",
            "store",
            "id",
        ],
    ),
    ("Domains and trust", &["domain"]),
    ("Try it out", &["demo", "testnet"]),
];

/// The help's list of subcommands, grouped by [`TASKS`].
fn grouped_commands(command: &clap::Command) -> String {
    let shown: Vec<&clap::Command> = command
        .get_subcommands()
        .filter(|c| !c.is_hide_set() && c.get_name() != "help")
        .collect();
    let width = shown.iter().map(|c| c.get_name().len()).max().unwrap_or(0);
    let line = |c: &clap::Command| {
        let about = c.get_about().map(|a| a.to_string()).unwrap_or_default();
        format!("  {:<width$}  {about}\n", c.get_name())
    };
    let mut text = String::new();
    let mut listed: Vec<&str> = Vec::new();
    for (task, names) in TASKS {
        let members: Vec<&&clap::Command> = names
            .iter()
            .filter_map(|n| shown.iter().find(|c| c.get_name() == *n))
            .collect();
        if members.is_empty() {
            continue;
        }
        text.push_str(&format!("{task}:\n"));
        for c in members {
            text.push_str(&line(c));
            listed.push(c.get_name());
        }
        text.push('\n');
    }
    let others: Vec<&&clap::Command> = shown
        .iter()
        .filter(|c| !listed.contains(&c.get_name()))
        .collect();
    if !others.is_empty() {
        text.push_str("Other:\n");
        for c in others {
            text.push_str(&line(c));
        }
        text.push('\n');
    }
    text
}

/// Commands that print and end (`history | head`) end quietly when their
/// output is closed, as every Unix tool does: SIGPIPE takes its default
/// action again (Rust's runtime ignores it, which turns the closed pipe
/// into a panic of `println!`). The agent, the testnet and a job's helpers
/// keep ignoring it: a peer that hangs up must not end them.
fn quiet_on_closed_output() {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let long_running = ["agent", "testnet", "job-watchdog", "job-reaper", "demo"];
    match status::subcommand_index(&args) {
        Some(i) if !long_running.iter().any(|l| args[i] == *l) => {}
        _ => return,
    }
    // SAFETY: sets a signal's disposition to its default before any
    // thread is started; no handler runs.
    #[allow(unsafe_code)]
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// A subcommand defined by a crate that depends on this one, such as
/// `starling testnet`: the binary passes it to [`main_with`].
pub(crate) trait Extension {
    /// The subcommand, its arguments and help.
    fn command(&self) -> clap::Command;
    /// Runs it with the matches of its own arguments; `data_dir` is the
    /// global `--data-dir`.
    fn run(&self, matches: &ArgMatches, data_dir: Option<&Path>) -> anyhow::Result<ExitCode>;
}

/// Runs the command line with this crate's commands and `extensions`; the
/// exit code says whether it succeeded.
pub(crate) fn main_with(extensions: &[&dyn Extension]) -> ExitCode {
    // A job's reaper starts with every job: it skips building the whole
    // command line.
    if std::env::args_os().nth(1).as_deref() == Some(std::ffi::OsStr::new("job-reaper")) {
        #[derive(Parser)]
        #[command(name = "starling job-reaper")]
        struct Reaper {
            #[command(flatten)]
            args: starling_process::reaper::Args,
        }
        let reaper = Reaper::parse_from(std::env::args_os().skip(1));
        return starling_process::reaper::run(reaper.args);
    }
    quiet_on_closed_output();
    // Parsed in two steps so that commands whose options depend on their
    // order (`domain policy`) can read the raw matches. Every command also
    // takes its long options with HTCondor's one dash (`-constraint`).
    let mut command = Cli::command();
    for extension in extensions {
        command = command.subcommand(extension.command());
    }
    let template = format!(
        "{{about-with-newline}}\n{{usage-heading}} {{usage}}\n\n{}Options:\n{DATA_DIR_HELP}\n{{options}}\n\n\
         Each command's options: starling COMMAND --help. HTCondor's one-dash spelling \
         (-constraint) works for every option.",
        grouped_commands(&command)
    );
    command = command.help_template(template);
    let args = match flags::normalize(&command, std::env::args_os()) {
        Ok(args) => args,
        Err(e) => {
            eprintln!("starling: {e}");
            return ExitCode::from(2);
        }
    };
    let matches = command.get_matches_from(args);
    // Absolute from the start: an agent's jobs and their reapers work in
    // other directories, and a relative path would name another place
    // there.
    let data_dir = match matches.get_one::<PathBuf>("data_dir").map(absolute) {
        Some(Ok(dir)) => Some(dir),
        Some(Err(e)) => return report(Err(e)),
        None => None,
    };
    if let Some((name, sub)) = matches.subcommand() {
        if let Some(extension) = extensions.iter().find(|e| e.command().get_name() == name) {
            return report(extension.run(sub, data_dir.as_deref()));
        }
    }
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let data_dir = data_dir.as_deref();
    let result = match cli.command {
        Command::Agent(args) => agent::run(args, data_dir),
        Command::Config(args) => config::run(args, data_dir),
        Command::InstallService(args) => service::run(args),
        Command::Eval(args) => eval::run(args),
        Command::Match(args) => matching::run(args),
        Command::Status(args) => status::run(args, data_dir),
        Command::Id(args) => domain::open_data_dir(data_dir).and_then(|data| id::run(args, &data)),
        Command::Domain(command) => {
            let domain_matches = matches
                .subcommand_matches("domain")
                .and_then(|m| m.subcommand().map(|(_, m)| m));
            domain::run(command, domain_matches, data_dir)
        }
        Command::Submit(args) => jobs::submit(args, data_dir),
        Command::Q(args) => jobs::q(args, data_dir),
        Command::History(args) => jobs::history(args, data_dir),
        Command::Rm(args) => jobs::act("remove", args, data_dir),
        Command::Hold(args) => jobs::act("hold", args, data_dir),
        Command::Release(args) => jobs::act("release", args, data_dir),
        Command::Vacate(args) => jobs::vacate(args, data_dir),
        Command::Migrate(args) => jobs::migrate(args, data_dir),
        Command::Net(args) => net::run(args, data_dir),
        Command::GpuDiscovery(args) => gpus::run(&args),
        Command::Qedit(args) => jobs::qedit(args, data_dir),
        Command::Why(args) => jobs::why(args, data_dir),
        Command::Ckpt(command) => ckpt::run(command, data_dir),
        Command::Userprio(args) => userprio::run(args, data_dir),
        Command::Drain(args) => drain::run(args, data_dir),
        Command::Off(args) => off::off(args, data_dir),
        Command::Whoami(args) => off::whoami(args, data_dir),
        Command::Wait(args) => wait::run(args, data_dir),
        Command::Tail(args) => tail::run(args, data_dir),
        Command::Store(command) => store::run(command, data_dir),
        Command::JobWatchdog(args) => Ok(starling_process::watchdog::run(&args)),
        Command::JobReaper(args) => Ok(starling_process::reaper::run(args)),
    };
    report(result)
}

/// `path` made absolute against the current directory.
fn absolute(path: &PathBuf) -> anyhow::Result<PathBuf> {
    use anyhow::Context as _;
    std::path::absolute(path)
        .with_context(|| format!("--data-dir {}: resolving it", path.display()))
}

fn report(result: anyhow::Result<ExitCode>) -> ExitCode {
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("starling: {e:#}");
            ExitCode::from(2)
        }
    }
}

/// Reads an ad given as a file path or as ad text (any of the three formats).
fn read_ad_arg(arg: &str, what: &str) -> anyhow::Result<starling_protocol::classad::ClassAd> {
    use anyhow::Context;
    use starling_protocol::classad::formats;
    let path = std::path::Path::new(arg);
    let (text, source) = if !arg.trim_start().starts_with(['[', '{']) && path.is_file() {
        let meta = std::fs::metadata(path).with_context(|| format!("{what}: reading {arg}"))?;
        anyhow::ensure!(
            meta.len() <= starling_protocol::classad::limits::MAX_INPUT_LEN as u64,
            "{what}: {arg} is larger than {} bytes",
            starling_protocol::classad::limits::MAX_INPUT_LEN
        );
        (
            std::fs::read_to_string(path).with_context(|| format!("{what}: reading {arg}"))?,
            arg.to_owned(),
        )
    } else {
        (arg.to_owned(), "the command line".to_owned())
    };
    formats::parse_ad_text(&text).with_context(|| format!("{what}: parsing the ad in {source}"))
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    #[test]
    fn options_do_not_clash() {
        // A subcommand option named like a global one (`--agent`) panics
        // only when that subcommand runs; clap's own check finds it here.
        super::Cli::command().debug_assert();
    }

    #[test]
    fn vacate_job_is_vacate() {
        use clap::Parser as _;
        for name in ["vacate", "vacate-job", "vacate_job"] {
            let cli = super::Cli::try_parse_from(["starling", name, "12.0"])
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert!(
                matches!(cli.command, super::Command::Vacate(_)),
                "{name}: {:?}",
                cli.command
            );
        }
    }
}
