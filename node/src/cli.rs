//! The `starling` command line: argument parsing and dispatch to one module
//! per subcommand. Output is shaped like the HTCondor command each one
//! mirrors.

mod eval;
mod matching;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Starling: a peer-to-peer grid agent.
#[derive(Debug, Parser)]
#[command(name = "starling", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate ClassAd expressions (like HTCondor's classad_eval).
    Eval(eval::Args),
    /// Match one job ad against many machine ads, two-sidedly, and rank them.
    Match(matching::Args),
}

/// Runs the command line; the exit code says whether it succeeded.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Eval(args) => eval::run(args),
        Command::Match(args) => matching::run(args),
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
