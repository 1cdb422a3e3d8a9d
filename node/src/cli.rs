//! The `starling` command line: argument parsing and dispatch to one module
//! per subcommand. Output is shaped like the HTCondor command each one
//! mirrors.

mod agent;
mod domain;
mod eval;
mod id;
mod matching;
mod status;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory as _, FromArgMatches as _, Parser, Subcommand};

/// Starling: a peer-to-peer grid agent.
#[derive(Debug, Parser)]
#[command(name = "starling", version, about, propagate_version = true)]
pub struct Cli {
    /// The agent's data directory (key, certificates, store); `--agent DIR`
    /// says the same when it is the running agent being addressed.
    /// Default: $STARLING_DATA_DIR, else ~/.local/share/starling.
    #[arg(long, visible_alias = "agent", global = true, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the agent in the foreground (until SIGINT, SIGTERM or `shutdown`).
    Agent(agent::Args),
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
}

/// Runs the command line; the exit code says whether it succeeded.
pub fn main() -> ExitCode {
    // Parsed in two steps so that commands whose options depend on their
    // order (`domain policy`) can read the raw matches.
    // `status` also takes condor_status's single-dash long options.
    let matches = Cli::command().get_matches_from(status::normalize_args(std::env::args_os()));
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let data_dir = cli.data_dir.as_deref();
    let result = match cli.command {
        Command::Agent(args) => agent::run(args, data_dir),
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
    };
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
}
