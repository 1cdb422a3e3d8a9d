//! `starling match`: one job ad against any number of machine ads.
//!
//! Machine ads are streamed (long and JSON formats), so memory stays flat
//! however many there are; only the best `--top` are kept, in the order
//! `policies::matchmaking` defines.

use std::io::{BufReader, Write};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use starling_policies::matchmaking::{Best, Key};
use starling_protocol::classad::formats::{self, Format};
use starling_protocol::classad::matching::Matcher;
use starling_protocol::classad::{format_real_short, ClassAd, Mode, Value};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The job ad: a file, or ad text in any format.
    #[arg(long, value_name = "FILE|AD")]
    job: String,
    /// A file of machine ads (new, long or JSON format, detected), or `-` for
    /// standard input.
    #[arg(long, value_name = "FILE")]
    machines: String,
    /// How many of the best matches to list.
    #[arg(long, default_value_t = 10, value_name = "N")]
    top: usize,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    /// The machine ads' format, instead of detecting it.
    #[arg(long, value_name = "new|long|json")]
    format: Option<Format>,
    /// Resolve unqualified names in MY only (HTCondor's library default).
    #[arg(long)]
    strict: bool,
    /// Print timings (parse and match) on standard error.
    #[arg(long)]
    stats: bool,
}

/// The running result: how many matched and the best `top` so far.
struct Ranking<'j> {
    matcher: Matcher,
    job: &'j ClassAd,
    best: Best<String>,
    matched: u64,
    match_time: std::time::Duration,
}

impl Ranking<'_> {
    fn consider(&mut self, machine: &ClassAd, seq: u64) {
        let Some(ranks) = self.matcher.pair(self.job, machine) else {
            return;
        };
        self.matched += 1;
        let key = Key {
            rank: ranks.job,
            machine_rank: ranks.machine,
            seq,
        };
        self.best.offer(key, || name_of(machine));
    }
}

fn name_of(ad: &ClassAd) -> String {
    match ad.get("Name") {
        Some(starling_protocol::classad::Expr::Literal(Value::String(s))) => s.to_string(),
        Some(e) => starling_protocol::classad::unparse(e),
        None => "(no Name)".into(),
    }
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    // A deep copy packs the job's expression nodes together: it is evaluated
    // against every machine.
    let job = super::read_ad_arg(&args.job, "--job")?.clone();
    let matcher = Matcher::new(if args.strict {
        Mode::Strict
    } else {
        Mode::Compat
    });
    let input: Box<dyn std::io::Read> = if args.machines == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(
            std::fs::File::open(&args.machines)
                .with_context(|| format!("--machines: opening {}", args.machines))?,
        )
    };
    let reader = BufReader::with_capacity(1 << 20, input);
    let started = Instant::now();
    let mut ranking = Ranking {
        matcher,
        job: &job,
        best: Best::new(args.top),
        matched: 0,
        match_time: std::time::Duration::ZERO,
    };
    // Each ad is matched as soon as it is read, while it is in the caches.
    // (Measured: parsing batches before matching them, or matching on a
    // second thread, is slower: the ads' memory is then cold or remote.)
    let mut seen: u64 = 0;
    formats::read_ads(reader, args.format, |machine| {
        seen += 1;
        let t = Instant::now();
        ranking.consider(&machine, seen);
        ranking.match_time += t.elapsed();
        Ok(())
    })
    .with_context(|| format!("--machines: reading ad {} of {}", seen + 1, args.machines))?;
    let Ranking {
        best,
        matched,
        match_time,
        ..
    } = ranking;
    let total = started.elapsed();
    let best = best.into_sorted();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    if args.json {
        let top: Vec<serde_json::Value> = best
            .iter()
            .map(|c| serde_json::json!({"Name": c.item, "Rank": c.key.rank, "MachineRank": c.key.machine_rank}))
            .collect();
        let doc = serde_json::json!({"machines": seen, "matched": matched, "top": top});
        writeln!(out, "{}", serde_json::to_string_pretty(&doc)?)?;
    } else {
        writeln!(out, "{seen} machines, {matched} match")?;
        if !best.is_empty() {
            writeln!(out, "{:>14} {:>14}  Name", "Rank", "MachineRank")?;
            for c in &best {
                writeln!(
                    out,
                    "{:>14} {:>14}  {}",
                    format_real_short(c.key.rank),
                    format_real_short(c.key.machine_rank),
                    c.item
                )?;
            }
        }
    }
    if args.stats {
        let parse = total.saturating_sub(match_time);
        eprintln!(
            "stats: ads={seen} matched={matched} total_s={:.6} parse_s={:.6} match_s={:.6} per_pair_ns={:.1}",
            total.as_secs_f64(),
            parse.as_secs_f64(),
            match_time.as_secs_f64(),
            if seen > 0 { match_time.as_nanos() as f64 / seen as f64 } else { 0.0 }
        );
    }
    Ok(ExitCode::SUCCESS)
}
