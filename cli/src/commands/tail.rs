//! `starling tail JOB` (like `condor_tail`): the end of a running job's
//! standard output (or error, `-stderr`) as it is now, read from its
//! machine; `-f` follows it until the job ends. `-maxbytes N` (default
//! 1024, as condor_tail) says how much of the end to show first.

use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use starling_protocol::claim::MAX_PEEK_LEN;

use starling_control::{Request, Response};

/// `starling tail` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// The running job (12.0).
    job: String,
    /// Keep printing what the job writes until it ends.
    #[arg(short = 'f', long = "follow")]
    follow: bool,
    /// Its standard error instead of its standard output.
    #[arg(long)]
    stderr: bool,
    /// How many bytes of the end to show first.
    #[arg(long, value_name = "N", default_value_t = 1024)]
    maxbytes: u64,
}

/// How often `-f` asks for more.
const FOLLOW_EVERY: Duration = Duration::from_millis(500);

/// Most bytes shown before following (the rest is on the machine).
const MAX_SHOWN: u64 = 16 << 20;

/// One read: where it starts, the bytes, the stream's length, whether the
/// job runs.
fn read(
    data_dir: Option<&Path>,
    args: &Args,
    offset: Option<u64>,
) -> anyhow::Result<(u64, Vec<u8>, u64, bool)> {
    let request = Request::Tail {
        job: args.job.clone(),
        stderr: args.stderr,
        offset,
        max: MAX_PEEK_LEN,
    };
    match super::jobs::call(data_dir, &request)? {
        Response::Tail {
            offset,
            bytes,
            size,
            running,
        } => Ok((offset, bytes, size, running)),
        other => anyhow::bail!("the agent answered {other:?}"),
    }
}

pub(super) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.maxbytes <= MAX_SHOWN,
        "-maxbytes {} is more than {MAX_SHOWN}",
        args.maxbytes
    );
    let (_, _, size, mut running) = read(data_dir, &args, Some(u64::MAX))?;
    let mut at = size.saturating_sub(args.maxbytes);
    let mut out = std::io::stdout().lock();
    // What is there now, from `maxbytes` before its end.
    while at < size {
        let (from, bytes, _, now_running) = read(data_dir, &args, Some(at))?;
        running = now_running;
        if bytes.is_empty() {
            break;
        }
        let shown = &bytes[..bytes
            .len()
            .min(usize::try_from(size - from).unwrap_or(usize::MAX))];
        out.write_all(shown)?;
        at = from + shown.len() as u64;
    }
    out.flush()?;
    if !args.follow {
        return Ok(ExitCode::SUCCESS);
    }
    // Then what it writes, until it ends.
    while running {
        std::thread::sleep(FOLLOW_EVERY);
        let (from, bytes, size, now_running) = match read(data_dir, &args, Some(at)) {
            Ok(read) => read,
            // It ended (left its machine, or the queue) between two reads.
            Err(e)
                if ["is not running", "is not in the queue", "no longer runs it"]
                    .iter()
                    .any(|gone| e.to_string().contains(gone)) =>
            {
                break
            }
            Err(e) => return Err(e),
        };
        running = now_running;
        if size < at {
            // The job truncated its output: start again from its start.
            at = 0;
            continue;
        }
        out.write_all(&bytes)?;
        out.flush()?;
        at = from + bytes.len() as u64;
    }
    Ok(ExitCode::SUCCESS)
}
