//! The job commands, shaped like HTCondor's: `submit` (condor_submit), `q`
//! (condor_q), `history`, `rm`, `hold`, `release`, `vacate`
//! (condor_vacate_job), `qedit` and `why`
//! (condor_q -better-analyze). Each asks the local agent over the control
//! API and renders its answer.

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use starling_protocol::classad::{
    formats, parse_ad, parse_expr, ClassAd, Evaluator, Name, Side, Value,
};

use super::status::{af_value, format_elapsed};
use starling_control::{self as control, Request, Response};

/// Largest submit file read.
const MAX_SUBMIT_FILE: u64 = starling_protocol::submit::MAX_FILE_LEN as u64;

#[derive(Debug, clap::Args)]
pub(crate) struct SubmitArgs {
    /// The submit description file.
    file: Option<std::path::PathBuf>,
    /// Queue nothing: write the job ads the file makes to OUT (`-` or
    /// nothing: standard output), like condor_submit -dry-run.
    #[arg(long = "dry-run", value_name = "OUT", num_args = 0..=1, default_missing_value = "-")]
    dry_run: Option<String>,
    /// Run the programs the file names (`include command : PROGRAM`,
    /// `queue ... from PROGRAM |`), as you, in this directory, each within
    /// 60 s: without it such a file is refused.
    #[arg(long = "allow-commands")]
    allow_commands: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct QArgs {
    /// Job ids (12.0), cluster ids (12) or owners.
    targets: Vec<String>,
    /// Only the jobs for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
    /// Print these attributes' values, a line per job.
    #[arg(long = "af", visible_alias = "autoformat", value_name = "ATTR", num_args = 1..)]
    af: Vec<String>,
    /// Print the whole job ads.
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// Print the job ads as JSON.
    #[arg(long)]
    json: bool,
    /// One line per job instead of one per batch.
    #[arg(long)]
    nobatch: bool,
    /// Held jobs and why.
    #[arg(long)]
    hold: bool,
    /// Running jobs and where.
    #[arg(long)]
    run: bool,
    /// Every user's jobs; without it (and without job ids, owners or a
    /// constraint) only yours, as condor_q shows.
    #[arg(long, visible_alias = "all-users")]
    allusers: bool,
    /// Only the totals line.
    #[arg(long)]
    totals: bool,
    /// Why each job named is idle, machine by machine (as `starling why`);
    /// with no job named, the first 20 idle jobs (the caller's, or
    /// everyone's with -allusers).
    #[arg(long = "better-analyze", visible_alias = "analyze")]
    better_analyze: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    targets: Vec<String>,
    /// Only the jobs for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
    /// At most this many jobs, the latest first.
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Print these attributes' values, a line per job.
    #[arg(long = "af", visible_alias = "autoformat", value_name = "ATTR", num_args = 1..)]
    af: Vec<String>,
    /// Print the whole job ads.
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// Print the job ads as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, clap::Args)]
pub(crate) struct ActArgs {
    /// Job ids, cluster ids or owners.
    targets: Vec<String>,
    /// Only the jobs for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
    /// Every job you may act on: your own (everyone's for the queue's
    /// administrator), as condor_rm -all.
    #[arg(long, conflicts_with_all = ["targets", "constraint"])]
    all: bool,
    /// Why (recorded as HoldReason or RemoveReason).
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct VacateArgs {
    /// Job ids (12.0), cluster ids (12) or owners.
    targets: Vec<String>,
    /// Only the jobs for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
    /// Every running job you may vacate (your own; everyone's for the
    /// queue's administrator).
    #[arg(long, conflicts_with_all = ["targets", "constraint"])]
    all: bool,
    /// Why, added to the reason the job's user log records.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct MigrateArgs {
    /// Job ids (12.0), cluster ids (12) or owners: running jobs that
    /// checkpoint.
    #[arg(required_unless_present = "constraint")]
    targets: Vec<String>,
    /// Only the jobs for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
    /// The machine to move to (its slot name, as `status` shows it, or its
    /// machine name); default: the best machine free for the job.
    #[arg(long, value_name = "MACHINE")]
    to: Option<String>,
    /// Why, added to the reason the job's user log records.
    #[arg(long, value_name = "TEXT")]
    reason: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct EditArgs {
    /// `TARGET ATTR VALUE`, or `ATTR VALUE` with -constraint: the job id,
    /// cluster id or owner, the attribute, and its new value (a ClassAd
    /// expression).
    #[arg(num_args = 2..=3, required = true, value_name = "[TARGET] ATTR VALUE")]
    words: Vec<String>,
    /// Only the jobs for which this ClassAd expression is true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
}

#[derive(Debug, clap::Args)]
pub(crate) struct WhyArgs {
    /// The job (12.0).
    job: String,
}

pub(super) fn call(data_dir: Option<&Path>, request: &Request) -> anyhow::Result<Response> {
    let dir = match data_dir {
        Some(d) => d.to_owned(),
        None => starling_storage::DataDir::default_path()?,
    };
    let response = control::Client::call(&dir, request)?;
    if let Response::Error { message } = &response {
        anyhow::bail!("{message}");
    }
    Ok(response)
}

/// How long a submit or an action on jobs may take the agent: a
/// `queue 100000` or `rm` of a cluster that size takes longer than the
/// [`control::client::READ_TIMEOUT`] a query gets, in a debug build
/// most of all.
pub(super) const LONG_ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// [`call`] for a request that may take the agent long: waits up to
/// [`LONG_ANSWER_TIMEOUT`], saying once on stderr that the agent is still
/// working when the answer is slower than a query's.
pub(super) fn call_long(data_dir: Option<&Path>, request: &Request) -> anyhow::Result<Response> {
    let dir = match data_dir {
        Some(d) => d.to_owned(),
        None => starling_storage::DataDir::default_path()?,
    };
    let mut client = control::Client::connect(&dir)?;
    client.set_read_timeout(LONG_ANSWER_TIMEOUT);
    let (done, waiting) = std::sync::mpsc::channel::<()>();
    let note = std::thread::spawn(move || {
        let patience = control::client::READ_TIMEOUT;
        if let Err(std::sync::mpsc::RecvTimeoutError::Timeout) = waiting.recv_timeout(patience) {
            eprintln!(
                "starling: the agent is still working on it (waiting up to {} s)...",
                LONG_ANSWER_TIMEOUT.as_secs()
            );
        }
    });
    let response = client.request(request);
    drop(done);
    let _ = note.join();
    let response = response.map_err(|e| {
        if e.kind() == std::io::ErrorKind::TimedOut {
            anyhow::anyhow!("{e}; it may still finish the work (see with starling q)")
        } else {
            e.into()
        }
    })?;
    if let Response::Error { message } = &response {
        anyhow::bail!("{message}");
    }
    Ok(response)
}

pub(crate) fn submit(args: SubmitArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    // `-dry-run job.sub` names the file, as users type it; `-dry-run OUT
    // job.sub` names where the ads go, as condor_submit takes it.
    let (file, out) = match (args.file, args.dry_run) {
        (Some(file), out) => (file, out),
        (None, Some(out)) if out != "-" => (out.into(), Some("-".to_owned())),
        (None, _) => anyhow::bail!("name the submit description file"),
    };
    let path = &file;
    let meta =
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(
        meta.len() <= MAX_SUBMIT_FILE,
        "{} is larger than {MAX_SUBMIT_FILE} bytes",
        path.display()
    );
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let name = path.display().to_string();
    // Checked here first, so that a bad file is reported without an agent.
    let cwd = std::env::current_dir()?;
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let system = starling_protocol::submit::SystemEnvironment {
        vars: env.clone(),
        // The agent names the owner from the socket; the same user here.
        owner: starling_process::users::name_of(rustix::process::getuid().as_raw())
            .or_else(|| std::env::var("USER").ok())
            .unwrap_or_default(),
    };
    // The programs the file names run here, only when allowed; the agent
    // gets their outputs and runs none itself.
    let allowing = starling_protocol::submit::Allowing::new(&system);
    let world: &dyn starling_protocol::submit::Environment = if args.allow_commands {
        &allowing
    } else {
        &system
    };
    let description = starling_protocol::submit::parse_with_includes(&name, &text, &cwd, world)?;
    for warning in description.warnings() {
        eprintln!("WARNING: {warning}");
    }
    if let Some(out) = out {
        return dry_run(&description, &cwd, world, &out);
    }
    if args.allow_commands {
        // Run here, once, what `queue ... from PROGRAM |` names.
        description.expand(1, &cwd, world)?;
    }
    let commands = allowing.outputs();
    let response = call_long(
        data_dir,
        &Request::Submit {
            file: name,
            text,
            cwd,
            env,
            commands,
        },
    )?;
    match response {
        Response::Submitted { cluster, procs } => {
            println!("Submitting job(s){}", ".".repeat(procs.min(80)));
            println!("{procs} job(s) submitted to cluster {cluster}.");
            Ok(ExitCode::SUCCESS)
        }
        other => anyhow::bail!("unexpected answer {other:?}"),
    }
}

/// The job ads `description` makes, as cluster 1, in the long form, a
/// blank line after each, to `out` (`-`: standard output); nothing is
/// queued and no agent is asked.
fn dry_run(
    description: &starling_protocol::submit::Description,
    cwd: &Path,
    world: &dyn starling_protocol::submit::Environment,
    out: &str,
) -> anyhow::Result<ExitCode> {
    let ads = description.expand(1, cwd, world)?;
    let mut text = Vec::new();
    for ad in &ads {
        formats::write_long(&mut text, ad)?;
        text.push(b'\n');
    }
    if out == "-" {
        std::io::stdout().lock().write_all(&text)?;
    } else {
        std::fs::write(out, &text).with_context(|| format!("cannot write {out}"))?;
    }
    eprintln!("{} job(s) dry-run to cluster 1.", ads.len());
    Ok(ExitCode::SUCCESS)
}

pub(super) fn jobs(data_dir: Option<&Path>, request: Request) -> anyhow::Result<Vec<ClassAd>> {
    match call(data_dir, &request)? {
        Response::Jobs { jobs } => jobs
            .iter()
            .map(|t| parse_ad(t).context("a job ad from the agent"))
            .collect(),
        other => anyhow::bail!("unexpected answer {other:?}"),
    }
}

fn get(ad: &ClassAd, name: &str) -> Value {
    Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, Name::known(name).folded())
}

fn int(ad: &ClassAd, name: &str) -> i64 {
    match get(ad, name) {
        Value::Int(i) => i,
        Value::Real(r) => r as i64,
        _ => 0,
    }
}

fn text(ad: &ClassAd, name: &str) -> String {
    match get(ad, name) {
        Value::String(s) => s.to_string(),
        _ => String::new(),
    }
}

fn id_of(ad: &ClassAd) -> String {
    format!("{}.{}", int(ad, "ClusterId"), int(ad, "ProcId"))
}

fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

fn date(secs: i64) -> String {
    // condor_q's "M/D HH:MM", in UTC.
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = starling_queue::userlog::civil(days);
    let _ = y;
    format!("{m}/{d} {:02}:{:02}", rem / 3600, rem % 3600 / 60)
}

fn print_ads(ads: &[ClassAd], af: &[String], long: bool, json: bool) -> anyhow::Result<bool> {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !af.is_empty() {
        let exprs = af
            .iter()
            .map(|a| parse_expr(a).with_context(|| format!("-af: cannot parse '{a}'")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        for ad in ads {
            let mut ev = Evaluator::with_ads(Some(ad), None);
            let line: Vec<String> = exprs.iter().map(|e| af_value(&ev.eval(e))).collect();
            writeln!(out, "{}", line.join(" "))?;
        }
    } else if long {
        for ad in ads {
            formats::write_long(&mut out, ad)?;
        }
    } else if json {
        formats::write_json_ads(&mut out, ads)?;
    } else {
        return Ok(false);
    }
    out.flush()?;
    Ok(true)
}

/// The attributes `q`'s tables print (batch, -nobatch, -run, -hold and
/// the totals line): all its answer carries of each job.
const TABLE_ATTRS: &[&str] = &[
    "ClusterId",
    "ProcId",
    "Owner",
    "JobStatus",
    "JobBatchName",
    "QDate",
    "JobCurrentStartDate",
    "RemoteWallClockTime",
    "RemoteHost",
    "EnteredCurrentStatus",
    "HoldReason",
    "JobPrio",
    "MemoryUsage",
    "Cmd",
    "Arguments",
];

/// Most jobs `q -better-analyze` with no job named analyzes.
const MAX_ANALYZED: usize = 20;

/// The ids of the idle jobs `constraint` selects (the caller's, unless
/// -allusers), oldest first: what `q -better-analyze` with no job named
/// analyzes, as condor_q does.
fn idle_jobs(data_dir: Option<&Path>, constraint: Option<String>) -> anyhow::Result<Vec<String>> {
    let idle = match constraint {
        Some(c) => format!("({c}) && JobStatus == 1"),
        None => "JobStatus == 1".to_owned(),
    };
    let ads = jobs(
        data_dir,
        Request::Jobs {
            targets: Vec::new(),
            constraint: Some(idle),
            history: false,
            limit: None,
            projection: Some(vec!["ClusterId".to_owned(), "ProcId".to_owned()]),
        },
    )?;
    let mut ids: Vec<(i64, i64)> = ads
        .iter()
        .map(|ad| (int(ad, "ClusterId"), int(ad, "ProcId")))
        .collect();
    ids.sort_unstable();
    if ids.is_empty() {
        println!("No idle jobs to analyze.");
    }
    Ok(ids.into_iter().map(|(c, p)| format!("{c}.{p}")).collect())
}

/// The attributes `-af` expressions refer to, for the agent to send only
/// those (it adds what they refer to in turn).
fn af_projection(af: &[String]) -> anyhow::Result<Vec<String>> {
    let mut names = std::collections::BTreeSet::new();
    for a in af {
        let expr = parse_expr(a).with_context(|| format!("-af: cannot parse '{a}'"))?;
        let refs = starling_protocol::classad::references(&expr);
        names.extend(refs.my);
        names.extend(refs.unscoped);
    }
    Ok(names.into_iter().collect())
}

pub(crate) fn q(args: QArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let mut constraint = args.constraint.clone();
    if !args.allusers && args.targets.is_empty() && constraint.is_none() {
        // condor_q shows only the caller's jobs unless asked for all.
        if let Some(me) = starling_process::users::name_of(rustix::process::getuid().as_raw()) {
            constraint = Some(format!(
                "Owner == {}",
                starling_protocol::classad::unparse_value(&Value::String(me.as_str().into()))
            ));
        }
    }
    if args.better_analyze {
        let jobs = if args.targets.is_empty() {
            idle_jobs(data_dir, constraint)?
        } else {
            args.targets.clone()
        };
        let mut status = ExitCode::SUCCESS;
        for (i, job) in jobs.iter().take(MAX_ANALYZED).enumerate() {
            if i > 0 {
                println!();
            }
            status = why(WhyArgs { job: job.clone() }, data_dir)?;
        }
        if jobs.len() > MAX_ANALYZED {
            println!(
                "\n{} more idle jobs not analyzed; name one to analyze it (q -better-analyze {}).",
                jobs.len() - MAX_ANALYZED,
                jobs[MAX_ANALYZED]
            );
        }
        return Ok(status);
    }
    let extra = if args.hold {
        Some("JobStatus == 5")
    } else if args.run {
        Some("JobStatus == 2")
    } else {
        None
    };
    if let Some(extra) = extra {
        constraint = Some(match constraint {
            Some(c) => format!("({c}) && {extra}"),
            None => extra.to_owned(),
        });
    }
    let projection = if args.long || args.json {
        None
    } else if !args.af.is_empty() {
        Some(af_projection(&args.af)?)
    } else if args.totals {
        Some(vec!["JobStatus".to_owned()])
    } else {
        Some(TABLE_ATTRS.iter().map(|a| (*a).to_owned()).collect())
    };
    let ads = jobs(
        data_dir,
        Request::Jobs {
            targets: args.targets.clone(),
            constraint,
            history: false,
            limit: None,
            projection,
        },
    )?;
    if print_ads(&ads, &args.af, args.long, args.json)? {
        return Ok(ExitCode::SUCCESS);
    }
    let now = unix_now();
    let mut out = String::new();
    use std::fmt::Write as _;
    if args.totals {
        // The totals line alone.
    } else if args.hold {
        writeln!(
            out,
            "{:<10} {:<10} {:<11} HOLD_REASON",
            "ID", "OWNER", "HELD_SINCE"
        )?;
        for ad in &ads {
            writeln!(
                out,
                "{:<10} {:<10} {:<11} {}",
                id_of(ad),
                text(ad, "Owner"),
                date(int(ad, "EnteredCurrentStatus")),
                text(ad, "HoldReason")
            )?;
        }
    } else if args.run {
        writeln!(
            out,
            "{:<10} {:<10} {:<11} {:>12} HOST(S)",
            "ID", "OWNER", "SUBMITTED", "RUN_TIME"
        )?;
        for ad in &ads {
            let run = now - int(ad, "JobCurrentStartDate");
            writeln!(
                out,
                "{:<10} {:<10} {:<11} {:>12} {}",
                id_of(ad),
                text(ad, "Owner"),
                date(int(ad, "QDate")),
                format_elapsed(run),
                text(ad, "RemoteHost")
            )?;
        }
    } else if args.nobatch {
        writeln!(
            out,
            "{:<10} {:<10} {:<11} {:>12} ST PRI SIZE CMD",
            "ID", "OWNER", "SUBMITTED", "RUN_TIME"
        )?;
        for ad in &ads {
            let status = int(ad, "JobStatus");
            let run = if status == 2 {
                now - int(ad, "JobCurrentStartDate")
            } else {
                0
            } + int(ad, "RemoteWallClockTime");
            let cmd = text(ad, "Cmd");
            let cmd = Path::new(&cmd)
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or(cmd);
            writeln!(
                out,
                "{:<10} {:<10} {:<11} {:>12} {}  {:<3} {:<4.1} {} {}",
                id_of(ad),
                text(ad, "Owner"),
                date(int(ad, "QDate")),
                format_elapsed(run),
                starling_queue::status::letter(status),
                int(ad, "JobPrio"),
                int(ad, "MemoryUsage") as f64,
                cmd,
                text(ad, "Arguments")
            )?;
        }
    } else {
        // One line per cluster, as condor_q's batch view.
        writeln!(
            out,
            "{:<10} {:<12} {:<11} {:>4} {:>4} {:>4} {:>4} {:>5} JOB_IDS",
            "OWNER", "BATCH_NAME", "SUBMITTED", "DONE", "RUN", "IDLE", "HOLD", "TOTAL"
        )?;
        let mut batches: BTreeMap<i64, Vec<&ClassAd>> = BTreeMap::new();
        for ad in &ads {
            batches.entry(int(ad, "ClusterId")).or_default().push(ad);
        }
        for (cluster, members) in &batches {
            let count = |s: i64| members.iter().filter(|a| int(a, "JobStatus") == s).count();
            let first = members[0];
            let batch = match text(first, "JobBatchName") {
                b if b.is_empty() => format!("ID: {cluster}"),
                b => b,
            };
            let procs: Vec<i64> = members.iter().map(|a| int(a, "ProcId")).collect();
            let ids = if procs.len() == 1 {
                format!("{cluster}.{}", procs[0])
            } else {
                format!(
                    "{cluster}.{}-{}",
                    procs.iter().min().unwrap_or(&0),
                    procs.iter().max().unwrap_or(&0)
                )
            };
            writeln!(
                out,
                "{:<10} {:<12} {:<11} {:>4} {:>4} {:>4} {:>4} {:>5} {}",
                text(first, "Owner"),
                batch,
                date(int(first, "QDate")),
                "_",
                count(2) + count(6),
                count(1),
                count(5),
                members.len(),
                ids
            )?;
        }
    }
    let count = |s: i64| ads.iter().filter(|a| int(a, "JobStatus") == s).count();
    if !args.totals {
        out.push('\n');
    }
    writeln!(
        out,
        "Total for query: {} jobs; {} completed, {} removed, {} idle, {} running, {} held, {} suspended",
        ads.len(),
        count(4),
        count(3),
        count(1),
        count(2) + count(6),
        count(5),
        count(7)
    )?;
    print!("{out}");
    Ok(ExitCode::SUCCESS)
}

pub(crate) fn history(args: HistoryArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let projection = match (&args.af, args.long || args.json) {
        (af, false) if !af.is_empty() => Some(af_projection(af)?),
        _ => None,
    };
    let ads = jobs(
        data_dir,
        Request::Jobs {
            targets: args.targets.clone(),
            constraint: args.constraint.clone(),
            history: true,
            limit: args.limit,
            projection,
        },
    )?;
    if print_ads(&ads, &args.af, args.long, args.json)? {
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<10} {:<10} {:<11} {:>12} ST {:<11} {:>4} CMD",
        "ID", "OWNER", "SUBMITTED", "RUN_TIME", "COMPLETED", "EXIT"
    );
    for ad in &ads {
        let status = int(ad, "JobStatus");
        let cmd = text(ad, "Cmd");
        let cmd = Path::new(&cmd)
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or(cmd);
        let exit = match get(ad, "ExitCode") {
            Value::Int(c) => c.to_string(),
            _ => "-".to_owned(),
        };
        println!(
            "{:<10} {:<10} {:<11} {:>12} {}  {:<11} {:>4} {}",
            id_of(ad),
            text(ad, "Owner"),
            date(int(ad, "QDate")),
            format_elapsed(int(ad, "RemoteWallClockTime")),
            starling_queue::status::letter(status),
            date(int(ad, "EnteredCurrentStatus")),
            exit,
            cmd
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `rm`, `hold` and `release`.
pub(crate) fn act(
    action: &str,
    args: ActArgs,
    data_dir: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.all || !args.targets.is_empty() || args.constraint.is_some(),
        "say which jobs: job ids (12.0), cluster ids (12), owners, -constraint EXPR or -all"
    );
    // `-all`: a constraint alone selects only the jobs the caller may
    // change, silently skipping the rest.
    let constraint = if args.all {
        Some("true".to_owned())
    } else {
        args.constraint
    };
    let clusters = args.targets.clone();
    let response = call_long(
        data_dir,
        &Request::Act {
            action: action.to_owned(),
            targets: args.targets,
            constraint,
            reason: args.reason,
            to: None,
        },
    )?;
    let verb = match action {
        "remove" => "marked for removal",
        "hold" => "held",
        _ => "released",
    };
    report_by_cluster(response, &clusters, verb)
}

/// `vacate` (like condor_vacate_job): running jobs leave their machines,
/// sent their `kill_sig`, and go back to idle to run again.
pub(crate) fn vacate(args: VacateArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.all || !args.targets.is_empty() || args.constraint.is_some(),
        "say which jobs: job ids (12.0), cluster ids (12), owners, -constraint EXPR or -all"
    );
    // `-all`: a constraint alone selects only the jobs the caller may
    // change, silently skipping the rest.
    let constraint = if args.all {
        Some("true".to_owned())
    } else {
        args.constraint
    };
    let clusters = args.targets.clone();
    let response = call_long(
        data_dir,
        &Request::Act {
            action: "vacate".to_owned(),
            targets: args.targets,
            constraint,
            reason: args.reason,
            to: None,
        },
    )?;
    report_by_cluster(response, &clusters, "vacated")
}

/// `migrate`: running jobs that checkpoint move to another machine (the
/// one named, or the best free): it is claimed first, then the job is
/// vacated, checkpoints and restarts there.
pub(crate) fn migrate(args: MigrateArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let response = call_long(
        data_dir,
        &Request::Act {
            action: "migrate".to_owned(),
            targets: args.targets,
            constraint: args.constraint,
            reason: args.reason,
            to: args.to,
        },
    )?;
    report(response, |moving| format!("Job {moving}"), "moved")
}

/// What an action on `targets` changed, as condor_rm says it: one line
/// for each cluster named whole whose every job changed ("All jobs in
/// cluster 10 have been marked for removal"), one per job otherwise; what
/// it skipped, and the exit code, as [`report`].
fn report_by_cluster(
    response: Response,
    targets: &[String],
    verb: &str,
) -> anyhow::Result<ExitCode> {
    let Response::Acted { changed, skipped } = response else {
        anyhow::bail!("unexpected answer {response:?}");
    };
    let lines = changed_lines(targets, &changed, &skipped, verb);
    finish_report(&lines, !changed.is_empty(), &skipped, verb)
}

/// The lines [`report_by_cluster`] prints for the jobs `changed`.
fn changed_lines(
    targets: &[String],
    changed: &[String],
    skipped: &[(String, String)],
    verb: &str,
) -> Vec<String> {
    let cluster_of = |id: &str| id.split('.').next().unwrap_or(id).to_owned();
    let whole: std::collections::BTreeSet<String> = targets
        .iter()
        .filter(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()))
        .filter(|c| {
            changed.iter().any(|id| cluster_of(id) == **c)
                && !skipped.iter().any(|(id, _)| cluster_of(id) == **c)
        })
        .cloned()
        .collect();
    let mut lines: Vec<String> = Vec::new();
    let mut said: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for id in changed {
        let cluster = cluster_of(id);
        if whole.contains(&cluster) {
            if said.insert(cluster.clone()) {
                lines.push(format!("All jobs in cluster {cluster} have been {verb}"));
            }
        } else {
            lines.push(format!("Job {id} {verb}"));
        }
    }
    lines
}

fn report_acted(response: Response, verb: &str) -> anyhow::Result<ExitCode> {
    report(response, |id| format!("Job {id} {verb}"), verb)
}

/// Prints what an action changed (`line` of each entry) and skipped (why
/// not `verb`); exits 1 unless it changed something and skipped nothing.
fn report(
    response: Response,
    line: impl Fn(&str) -> String,
    verb: &str,
) -> anyhow::Result<ExitCode> {
    let Response::Acted { changed, skipped } = response else {
        anyhow::bail!("unexpected answer {response:?}");
    };
    let lines: Vec<String> = changed.iter().map(|entry| line(entry)).collect();
    finish_report(&lines, !changed.is_empty(), &skipped, verb)
}

/// Prints `lines` (what changed) and what was `skipped`; exits 1 unless
/// something changed and nothing was skipped.
fn finish_report(
    lines: &[String],
    changed_any: bool,
    skipped: &[(String, String)],
    verb: &str,
) -> anyhow::Result<ExitCode> {
    {
        let stdout = std::io::stdout();
        let mut out = std::io::BufWriter::new(stdout.lock());
        for line in lines {
            writeln!(out, "{line}")?;
        }
        out.flush()?;
    }
    for (id, why) in skipped {
        eprintln!("Job {id} not {verb}: {why}");
    }
    if !changed_any && skipped.is_empty() {
        eprintln!("No jobs matched.");
    }
    Ok(if skipped.is_empty() && changed_any {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub(crate) fn qedit(args: EditArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let (targets, attribute, value) = match (args.words.as_slice(), &args.constraint) {
        ([target, attribute, value], _) => (vec![target.clone()], attribute, value),
        ([attribute, value], Some(_)) => (Vec::new(), attribute, value),
        _ => anyhow::bail!(
            "say which jobs: qedit TARGET ATTR VALUE, or qedit -constraint EXPR ATTR VALUE"
        ),
    };
    let response = call_long(
        data_dir,
        &Request::Edit {
            targets,
            constraint: args.constraint.clone(),
            attribute: attribute.clone(),
            value: value.clone(),
        },
    )?;
    report_acted(response, &format!("set {attribute} = {value}"))
}

pub(crate) fn why(args: WhyArgs, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    match call(data_dir, &Request::Why { job: args.job })? {
        Response::Why { report } => {
            print!("{report}");
            Ok(ExitCode::SUCCESS)
        }
        other => anyhow::bail!("unexpected answer {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cluster_acted_on_whole_is_one_line() {
        let ids = |n: usize, c: u32| (0..n).map(move |p| format!("{c}.{p}"));
        let changed: Vec<String> = ids(100_000, 10)
            .chain(ids(3, 11))
            .chain(["12.4".into()])
            .collect();
        let skipped = vec![("11.3".to_owned(), "not yours".to_owned())];
        let targets = ["10", "11", "12.4"].map(String::from);
        let lines = changed_lines(&targets, &changed, &skipped, "marked for removal");
        assert_eq!(
            lines,
            [
                "All jobs in cluster 10 have been marked for removal",
                "Job 11.0 marked for removal",
                "Job 11.1 marked for removal",
                "Job 11.2 marked for removal",
                "Job 12.4 marked for removal",
            ]
        );
    }

    /// `submit -dry-run OUT FILE` writes every job's ad and queues nothing
    /// (no agent is running here: asking one would fail).
    #[test]
    fn dry_run_writes_the_job_ads_without_an_agent() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.out"), "").unwrap();
        let exe = dir.path().join("a.out");
        std::fs::write(
            dir.path().join("job.sub"),
            format!(
                "executable = {}\narguments = $INT(Process,%02d) $(x)\nqueue 2 x in (p q)\n",
                exe.display()
            ),
        )
        .unwrap();
        let out = dir.path().join("ads");
        let file = dir.path().join("job.sub");
        let result = submit(
            SubmitArgs {
                file: Some(file),
                dry_run: Some(out.display().to_string()),
                allow_commands: false,
            },
            Some(&dir.path().join("no-agent")),
        );
        assert_eq!(result.unwrap(), ExitCode::SUCCESS);
        let ads = formats::parse_ads_any(&std::fs::read_to_string(&out).unwrap()).unwrap();
        let args: Vec<String> = ads.iter().map(|ad| text(ad, "Args")).collect();
        assert_eq!(args, ["00 p", "01 p", "02 q", "03 q"]);
    }
}
