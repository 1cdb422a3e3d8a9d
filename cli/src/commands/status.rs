//! `starling status`: the machines of the pool, shaped like `condor_status`.
//!
//! Ads come from one place, [`machine_ads`]: the running agent's view of the
//! pool through the control API (the agent of `--agent DIR`, or of the
//! default data directory), or a file given with `-ads` (HTCondor's option:
//! new, long or JSON format, detected). Everything after that
//! is rendering over a list of ads: `-constraint` filters them, rows are
//! sorted by `Name`, and one of the default table (with the `Arch/OpSys`
//! summary), `-total`, `-af`, `-l` or `-json` prints them.
//!
//! HTCondor spells its long options with one dash (`-constraint`); both that
//! and `--constraint` work (see `cli::flags`).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::{BufReader, Write};
use std::path::Path;
use std::process::ExitCode;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context as _;
use starling_protocol::classad::formats;
use starling_protocol::classad::{
    parse_ad, parse_expr, unparse_value, ClassAd, Evaluator, Name, Side, Value,
};

use starling_control as control;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Read the machine ads from FILE (new, long or JSON format) instead of
    /// asking the running agent (see --agent), as `condor_status -ads` does.
    #[arg(long, value_name = "FILE")]
    ads: Option<String>,
    /// Show only the machines whose ad makes EXPR true.
    #[arg(long, value_name = "EXPR", allow_hyphen_values = true)]
    constraint: Option<String>,
    /// Print the values of these attributes (or expressions), one machine a
    /// line, separated by spaces (`-autoformat`).
    #[arg(long = "af", visible_alias = "autoformat", value_name = "ATTR", num_args = 1..)]
    af: Vec<String>,
    /// Print the whole ads in the long format, a blank line after each.
    #[arg(short = 'l', long = "long")]
    long: bool,
    /// One line per machine, its slots summed up (as condor_status
    /// -compact): platform, slots, CPUs, GPUs, memory, what is free, load
    /// and state.
    #[arg(long)]
    compact: bool,
    /// Print the ads as a JSON array.
    #[arg(long)]
    json: bool,
    /// Print only the summary by Arch/OpSys (with -store: the totals).
    #[arg(long)]
    total: bool,
    /// Only the store peers (agents with the `store` role that lend disk
    /// to checkpoints): what each lends, uses and has free, and its chunks.
    /// -af, -l and -json print their ads.
    #[arg(long)]
    store: bool,
    /// Only the machines with GPUs, a line per device: who holds it, its
    /// memory, name and capability (`condor_status -gpus`). -af, -l and
    /// -json print their ads.
    #[arg(long, conflicts_with = "store")]
    gpus: bool,
}

/// The global options that take a value (as a separate argument).
const GLOBAL_WITH_VALUE: &[&str] = &["--data-dir", "--agent"];

/// Where the subcommand is in the command line: the first argument that is
/// not an option (the only global option with a value is `--data-dir DIR`,
/// alias `--agent DIR`).
pub(crate) fn subcommand_index(args: &[OsString]) -> Option<usize> {
    let mut i = 1;
    while i < args.len() {
        let a = args[i].to_string_lossy();
        if GLOBAL_WITH_VALUE.contains(&a.as_ref()) {
            i += 2;
            continue;
        }
        if !a.starts_with('-') {
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Where the machine ads come from: the file of `-ads`, else the running
/// agent. This is the one place the agent's control API plugs in.
fn machine_ads(args: &Args, data_dir: Option<&Path>) -> anyhow::Result<Vec<ClassAd>> {
    match &args.ads {
        Some(path) => read_ads_file(path),
        None => {
            let dir = match data_dir {
                Some(d) => d.to_owned(),
                None => starling_storage::DataDir::default_path()?,
            };
            agent_ads(&dir, args.constraint.clone())
        }
    }
}

/// The machine ads in the view of the agent of `data_dir`. The agent
/// applies `constraint` too, so less crosses the socket; the caller still
/// filters, which costs little and keeps one meaning of `-constraint`.
fn agent_ads(data_dir: &Path, constraint: Option<String>) -> anyhow::Result<Vec<ClassAd>> {
    let request = control::Request::Ads {
        kind: "machine".to_owned(),
        constraint,
    };
    let response = control::Client::call(data_dir, &request).map_err(|e| match e {
        control::Error::NoAgent { .. } => {
            anyhow::anyhow!("{e}; to read machine ads from a file instead, use -ads FILE")
        }
        e => e.into(),
    })?;
    let dir = data_dir.display();
    match response {
        control::Response::Ads { ads } => ads
            .iter()
            .enumerate()
            .map(|(i, text)| {
                parse_ad(text).with_context(|| format!("ad {} from the agent at {dir}", i + 1))
            })
            .collect(),
        control::Response::Error { message } => {
            anyhow::bail!("the agent at {dir} answered: {message}")
        }
        other => anyhow::bail!("the agent at {dir} answered a request for ads with {other:?}"),
    }
}

fn read_ads_file(path: &str) -> anyhow::Result<Vec<ClassAd>> {
    let file = std::fs::File::open(path).with_context(|| format!("-ads: opening {path}"))?;
    let mut ads = Vec::new();
    formats::read_ads(BufReader::new(file), None, |ad| {
        ads.push(ad);
        Ok(())
    })
    .with_context(|| format!("-ads: reading ad {} of {path}", ads.len() + 1))?;
    Ok(ads)
}

pub(crate) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    // Check the constraint before reading anything: a typo is reported first.
    let constraint = args
        .constraint
        .as_deref()
        .map(|c| parse_expr(c).with_context(|| format!("-constraint: cannot parse '{c}'")))
        .transpose()?;
    let af = args
        .af
        .iter()
        .map(|a| parse_expr(a).with_context(|| format!("-af: cannot parse '{a}'")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut ads = machine_ads(&args, data_dir)?;
    if let Some(c) = &constraint {
        ads.retain(|ad| Evaluator::with_ads(Some(ad), None).eval(c).is_true());
    }
    if args.store {
        ads = store_ads(ads);
    }
    if args.gpus {
        ads.retain(|ad| attr(ad, "TotalGPUs").as_int().is_some_and(|n| n > 0));
    }
    ads.sort_by_cached_key(|ad| text_attr(ad, "Name").unwrap_or_default());
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    if !af.is_empty() {
        for ad in &ads {
            let mut ev = Evaluator::with_ads(Some(ad), None);
            let line: Vec<String> = af.iter().map(|e| af_value(&ev.eval(e))).collect();
            writeln!(out, "{}", line.join(" "))?;
        }
    } else if args.long {
        for ad in &ads {
            formats::write_long(&mut out, ad)?;
        }
    } else if args.json {
        formats::write_json_ads(&mut out, &ads)?;
    } else if args.store {
        let rows: Vec<StoreRow> = ads.iter().map(StoreRow::of).collect();
        write!(out, "{}", store_table(&rows, args.total))?;
    } else if args.gpus {
        let rows: Vec<GpuRow> = ads.iter().flat_map(GpuRow::of).collect();
        write!(out, "{}", gpu_table(&rows, args.total))?;
    } else {
        let now = unix_now();
        let rows: Vec<Row> = ads.iter().map(|ad| Row::of(ad, now)).collect();
        // Like condor_status, no matching machine prints nothing at all.
        if !rows.is_empty() {
            if args.compact && !args.total {
                write!(out, "{}", compact_table(&compact_rows(&ads)))?;
                writeln!(out)?;
            } else if !args.total {
                write_table(&mut out, &rows)?;
            }
            write_summary(&mut out, &rows)?;
        }
    }
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// The value of attribute `name` evaluated in `ad` alone.
fn attr(ad: &ClassAd, name: &str) -> Value {
    match Name::new(name) {
        Ok(n) => Evaluator::with_ads(Some(ad), None).eval_attr(Side::My, n.folded()),
        Err(_) => Value::Undefined,
    }
}

fn text_attr(ad: &ClassAd, name: &str) -> Option<String> {
    attr(ad, name).as_str().map(str::to_owned)
}

/// A value as `-af` prints it: strings bare, anything else in ClassAd syntax.
pub(crate) fn af_value(v: &Value) -> String {
    match v.as_str() {
        Some(s) => s.to_owned(),
        None => unparse_value(v),
    }
}

/// What `condor_status` prints in a column whose attribute is missing.
const MISSING: &str = "[????]";

/// One machine's line of the default table, and what the summary counts.
struct Row {
    name: String,
    opsys: String,
    arch: String,
    state: String,
    activity: String,
    load_avg: String,
    memory: String,
    activity_time: String,
}

impl Row {
    fn of(ad: &ClassAd, now: i64) -> Row {
        let text = |n: &str| text_attr(ad, n).unwrap_or_else(|| MISSING.into());
        let load_avg = match attr(ad, "LoadAvg").as_number() {
            Some(l) => format!("{l:.3}"),
            None => MISSING.into(),
        };
        let memory = match attr(ad, "Memory").as_number() {
            Some(m) => format!("{}", m as i64),
            None => MISSING.into(),
        };
        // HTCondor measures against the ad's own clock when it has one.
        let now = attr(ad, "MyCurrentTime")
            .as_int()
            .or_else(|| attr(ad, "LastHeardFrom").as_int())
            .unwrap_or(now);
        let activity_time = match attr(ad, "EnteredCurrentActivity").as_int() {
            Some(entered) => format_elapsed(now.saturating_sub(entered)),
            None => "[Unknown]".into(),
        };
        Row {
            name: text("Name"),
            opsys: text("OpSys"),
            arch: text("Arch"),
            state: text("State"),
            activity: text("Activity"),
            load_avg,
            memory,
            activity_time,
        }
    }
}

/// One machine's line of `status -compact`: its slots summed up.
#[derive(Debug, Default)]
struct CompactRow {
    machine: String,
    platform: String,
    /// A partitionable slot and its dynamic slots, or each static slot.
    slots: i64,
    cpus: f64,
    gpus: i64,
    /// MiB.
    memory: f64,
    free_cpus: f64,
    free_memory: f64,
    load: f64,
    /// Each slot's state and activity, as two letters (`Ui`, `Cb`).
    states: Vec<String>,
}

/// The machine an ad describes: what follows `@` in its `Name`
/// (`slot1@host` is a slot of `host`, and each agent of a testnet names
/// its own though they share a host), else `Machine`.
fn machine_of(ad: &ClassAd) -> String {
    text_attr(ad, "Name")
        .and_then(|n| n.rsplit_once('@').map(|(_, m)| m.to_owned()))
        .or_else(|| text_attr(ad, "Machine"))
        .or_else(|| text_attr(ad, "Name"))
        .unwrap_or_else(|| MISSING.into())
}

/// `Arch/OpSys` as condor_status -compact shortens them (`x64/LINUX`).
fn platform_of(ad: &ClassAd) -> String {
    let arch = match text_attr(ad, "Arch").as_deref() {
        Some("X86_64") => "x64".to_owned(),
        Some("INTEL") => "x86".to_owned(),
        Some(a) => a.to_owned(),
        None => "?".to_owned(),
    };
    let opsys = text_attr(ad, "OpSysAndVer")
        .or_else(|| text_attr(ad, "OpSys"))
        .unwrap_or_else(|| "?".into());
    format!("{arch}/{opsys}")
}

/// The ads grouped by machine, sorted by machine: a partitionable slot
/// counts its dynamic slots (`NumDynamicSlots`) and its totals
/// (`TotalCpus`, `TotalMemory`, `TotalGPUs`), what it has left is free; a
/// static slot counts itself, free when unclaimed.
fn compact_rows(ads: &[ClassAd]) -> Vec<CompactRow> {
    let mut machines: BTreeMap<String, CompactRow> = BTreeMap::new();
    for ad in ads {
        let number = |n: &str| attr(ad, n).as_number();
        let machine = machine_of(ad);
        let row = machines
            .entry(machine.clone())
            .or_insert_with(|| CompactRow {
                machine,
                platform: platform_of(ad),
                ..CompactRow::default()
            });
        let cpus = number("Cpus").unwrap_or(0.0);
        let memory = number("Memory").unwrap_or(0.0);
        let state = text_attr(ad, "State").unwrap_or_default();
        let activity = text_attr(ad, "Activity").unwrap_or_default();
        let letters = format!(
            "{}{}",
            state.chars().next().unwrap_or('?'),
            activity.chars().next().unwrap_or('?').to_ascii_lowercase()
        );
        if attr(ad, "PartitionableSlot").is_true() {
            let dynamic = attr(ad, "NumDynamicSlots").as_int().unwrap_or(0).max(0);
            row.slots += 1 + dynamic;
            row.cpus += number("TotalCpus").unwrap_or(cpus);
            row.memory += number("TotalMemory").unwrap_or(memory);
            row.gpus += attr(ad, "TotalGPUs").as_int().unwrap_or(0);
            row.free_cpus += cpus;
            row.free_memory += memory;
            // Jobs in its dynamic slots make the machine claimed and busy,
            // unless its owner or a drain has it.
            row.states.push(
                if dynamic > 0 && matches!(state.as_str(), "Unclaimed" | "Claimed") {
                    "Cb".to_owned()
                } else {
                    letters
                },
            );
        } else {
            row.slots += 1;
            row.cpus += cpus;
            row.memory += memory;
            row.gpus += attr(ad, "GPUs").as_int().unwrap_or(0);
            if state == "Unclaimed" {
                row.free_cpus += cpus;
                row.free_memory += memory;
            }
            row.states.push(letters);
        }
        row.load += number("TotalLoadAvg")
            .or_else(|| number("LoadAvg"))
            .unwrap_or(0.0);
    }
    machines.into_values().collect()
}

/// `status -compact`: a line per machine, as condor_status -compact.
/// `ST` is the slots' state and activity when they agree, `**` when they
/// do not.
fn compact_table(rows: &[CompactRow]) -> String {
    let heads = [
        "Machine", "Platform", "Slots", "Cpus", "Gpus", "TotalGb", "FreCpu", "FreeGb", "CpuLoad",
        "ST",
    ]
    .map(str::to_owned);
    let lines: Vec<[String; 10]> = rows
        .iter()
        .map(|r| {
            let state = match r.states.split_first() {
                Some((first, rest)) if rest.iter().all(|s| s == first) => first.clone(),
                Some(_) => "**".to_owned(),
                None => MISSING.to_owned(),
            };
            let load = if r.cpus > 0.0 {
                r.load / r.cpus
            } else {
                r.load
            };
            [
                r.machine.clone(),
                r.platform.clone(),
                r.slots.to_string(),
                format!("{}", r.cpus as i64),
                r.gpus.to_string(),
                format!("{:.2}", r.memory / 1024.0),
                format!("{}", r.free_cpus as i64),
                format!("{:.2}", r.free_memory / 1024.0),
                format!("{load:.2}"),
                state,
            ]
        })
        .collect();
    let widths = column_widths(&heads, &lines);
    let right = |i: usize| (2..=8).contains(&i);
    let mut out = table_line(&heads, &widths, right);
    out.push('\n');
    for line in &lines {
        out.push_str(&table_line(line, &widths, right));
    }
    out
}

/// Bytes in binary units with one decimal: `512 B`, `1.5 KiB`, `2.0 GiB`.
pub(crate) fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// The store peers among `ads`, one ad per agent.
fn store_ads(ads: Vec<ClassAd>) -> Vec<ClassAd> {
    let mut seen = std::collections::HashSet::new();
    ads.into_iter()
        .filter(starling_agent::store::place::is_store)
        .filter(|ad| {
            text_attr(ad, "StarlingAgentId")
                .or_else(|| text_attr(ad, "Name"))
                .is_none_or(|id| seen.insert(id))
        })
        .collect()
}

/// One store peer's line of `status -store`.
struct StoreRow {
    name: String,
    host: String,
    domain: String,
    place: String,
    /// KiB, as the ad has them.
    lent: Option<i64>,
    used: Option<i64>,
    free: Option<i64>,
    chunks: Option<i64>,
}

impl StoreRow {
    fn of(ad: &ClassAd) -> StoreRow {
        let text = |n: &str| text_attr(ad, n).unwrap_or_else(|| MISSING.into());
        let int = |n: &str| attr(ad, n).as_int();
        let place = match (text_attr(ad, "StarlingSite"), text_attr(ad, "StarlingRack")) {
            (None, None) => "-".to_owned(),
            (site, rack) => format!(
                "{}/{}",
                site.as_deref().unwrap_or("-"),
                rack.as_deref().unwrap_or("-")
            ),
        };
        StoreRow {
            name: text("Name"),
            host: text_attr(ad, "StarlingHost")
                .or_else(|| text_attr(ad, "Machine"))
                .unwrap_or_else(|| MISSING.into()),
            domain: text("StarlingDomain"),
            place,
            lent: int("StarlingStoreLent"),
            used: int("StarlingStoreUsed"),
            free: int("StarlingStoreFree"),
            chunks: int("StarlingStoreChunks"),
        }
    }
}

fn kib_cell(kib: Option<i64>) -> String {
    match kib {
        Some(k) => human_bytes(u64::try_from(k).unwrap_or(0).saturating_mul(1024)),
        None => MISSING.into(),
    }
}

/// `status -store`: a line per store peer, then the totals (only the
/// totals with `totals_only`); nothing at all when there is no store peer,
/// as `condor_status` prints nothing when nothing matches.
fn store_table(rows: &[StoreRow], totals_only: bool) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let heads = [
        "Name",
        "Host",
        "Domain",
        "Site/Rack",
        "Lent",
        "Used",
        "Free",
        "Chunks",
    ]
    .map(str::to_owned);
    let sum = |f: fn(&StoreRow) -> Option<i64>| rows.iter().filter_map(f).sum::<i64>();
    let totals = [
        kib_cell(Some(sum(|r| r.lent))),
        kib_cell(Some(sum(|r| r.used))),
        kib_cell(Some(sum(|r| r.free))),
        sum(|r| r.chunks).to_string(),
    ];
    let lines: Vec<[String; 8]> = rows
        .iter()
        .filter(|_| !totals_only)
        .map(|r| {
            [
                r.name.clone(),
                r.host.clone(),
                r.domain.clone(),
                r.place.clone(),
                kib_cell(r.lent),
                kib_cell(r.used),
                kib_cell(r.free),
                r.chunks.map_or_else(|| MISSING.into(), |c| c.to_string()),
            ]
        })
        .collect();
    let mut widths = column_widths(&heads, &lines);
    for (w, cell) in widths[4..].iter_mut().zip(&totals) {
        *w = (*w).max(cell.chars().count());
    }
    // Text left, figures right.
    let render = |cells: &[String; 8]| table_line(cells, &widths, |i| i >= 4);
    let mut out = render(&heads);
    out.push('\n');
    for line in &lines {
        out.push_str(&render(line));
    }
    if !lines.is_empty() {
        out.push('\n');
    }
    // The peer count spans Host, Domain and Site/Rack.
    let span = widths[1] + widths[2] + widths[3] + 2;
    let mut total = format!(
        "{:<w$} {:<span$}",
        "Total",
        format!("{} store peers", rows.len()),
        w = widths[0]
    );
    for (cell, w) in totals.iter().zip(&widths[4..]) {
        total.push_str(&format!(" {cell:>w$}"));
    }
    out.push_str(total.trim_end());
    out.push('\n');
    out
}

/// One GPU's line of `status -gpus`.
struct GpuRow {
    machine: String,
    device: String,
    /// `condor_status`'s two-letter state: `Cb` for a device a job holds.
    state: String,
    user: String,
    memory_mb: Option<i64>,
    name: String,
    capability: Option<f64>,
}

impl GpuRow {
    /// The lines of one machine ad: a line per device in the order the
    /// machine lists them, with the holders `StarlingClaimedGPUs` names.
    fn of(ad: &ClassAd) -> Vec<GpuRow> {
        use starling_protocol::classad::Expr;
        let machine = text_attr(ad, "Name").unwrap_or_else(|| MISSING.into());
        let mut holders: BTreeMap<String, String> = BTreeMap::new();
        if let Value::List(held) = attr(ad, "StarlingClaimedGPUs") {
            for item in held.iter() {
                if let Value::Ad(h) = item {
                    let get = |n: &str| match h.ad.get(n) {
                        Some(Expr::Literal(Value::String(s))) => Some(s.to_string()),
                        _ => None,
                    };
                    if let Some(id) = get("Id") {
                        holders.insert(id, get("User").unwrap_or_default());
                    }
                }
            }
        }
        // A free device on a machine its owner has taken back is not free.
        let idle_state = match (text_attr(ad, "State"), text_attr(ad, "Activity")) {
            (Some(s), Some(a)) if !matches!(s.as_str(), "Unclaimed" | "Claimed") => {
                format!(
                    "{}{}",
                    initial(&s).to_ascii_uppercase(),
                    initial(&a).to_ascii_lowercase()
                )
            }
            _ => "Ui".to_owned(),
        };
        starling_policies::slots::devices_of(ad)
            .into_iter()
            .map(|d| {
                let prop = |n: &str| {
                    Evaluator::with_ads(Some(&d.properties), None)
                        .eval_attr(Side::My, Name::known(n).folded())
                };
                let held = holders.get(&d.id);
                GpuRow {
                    machine: machine.clone(),
                    state: if held.is_some() {
                        "Cb".to_owned()
                    } else {
                        idle_state.clone()
                    },
                    user: match held {
                        Some(u) if !u.is_empty() => u.clone(),
                        Some(_) => "(claimed)".to_owned(),
                        None => "-".to_owned(),
                    },
                    memory_mb: prop("GlobalMemoryMb").as_int(),
                    name: prop("DeviceName")
                        .as_str()
                        .map_or_else(|| "-".to_owned(), str::to_owned),
                    capability: prop("Capability").as_number(),
                    device: d.id,
                }
            })
            .collect()
    }
}

fn initial(s: &str) -> char {
    s.chars().next().unwrap_or('?')
}

/// `status -gpus`: a line per device, then how many are held and free
/// (only that with `totals_only`); nothing when no machine has a GPU.
fn gpu_table(rows: &[GpuRow], totals_only: bool) -> String {
    if rows.is_empty() {
        return String::new();
    }
    let heads = [
        "Name",
        "GPU",
        "ST",
        "User",
        "GPU-Memory",
        "GPU-Name",
        "Capability",
    ]
    .map(str::to_owned);
    let lines: Vec<[String; 7]> = rows
        .iter()
        .filter(|_| !totals_only)
        .map(|r| {
            [
                r.machine.clone(),
                r.device.clone(),
                r.state.clone(),
                r.user.clone(),
                r.memory_mb.map_or_else(
                    || "-".to_owned(),
                    |m| human_bytes(u64::try_from(m).unwrap_or(0).saturating_mul(1 << 20)),
                ),
                r.name.clone(),
                r.capability
                    .map_or_else(|| "-".to_owned(), |c| format!("{c:.1}")),
            ]
        })
        .collect();
    let widths = column_widths(&heads, &lines);
    // Figures right, text left.
    let render = |cells: &[String; 7]| table_line(cells, &widths, |i| i == 4 || i == 6);
    let mut out = String::new();
    if !lines.is_empty() {
        out.push_str(&render(&heads));
        out.push('\n');
        for line in &lines {
            out.push_str(&render(line));
        }
        out.push('\n');
    }
    let held = rows.iter().filter(|r| r.state == "Cb").count();
    let free = rows.iter().filter(|r| r.state == "Ui").count();
    out.push_str(&format!(
        "Total: {} GPUs, {held} claimed, {free} free, {} unavailable\n",
        rows.len(),
        rows.len() - held - free
    ));
    out
}

/// The width of each column of a table: its widest cell, heading included.
fn column_widths<const N: usize>(heads: &[String; N], lines: &[[String; N]]) -> [usize; N] {
    let mut widths = heads.clone().map(|h| h.chars().count());
    for line in lines {
        for (w, cell) in widths.iter_mut().zip(line) {
            *w = (*w).max(cell.chars().count());
        }
    }
    widths
}

/// One line of a table: a space between columns, the columns `right`
/// picks aligned right, the others left, no blanks at the end.
fn table_line(cells: &[String], widths: &[usize], right: impl Fn(usize) -> bool) -> String {
    let mut s = String::new();
    for (i, (cell, w)) in cells.iter().zip(widths).enumerate() {
        if i > 0 {
            s.push(' ');
        }
        if right(i) {
            s.push_str(&format!("{cell:>w$}"));
        } else {
            s.push_str(&format!("{cell:<w$}"));
        }
    }
    format!("{}\n", s.trim_end())
}

/// Seconds as `condor_status` prints a duration: `d+hh:mm:ss` (negative
/// durations, from clock skew, print as zero).
pub(crate) fn format_elapsed(secs: i64) -> String {
    let secs = secs.max(0);
    let (days, rest) = (secs / 86_400, secs % 86_400);
    format!(
        "{days}+{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn write_table(out: &mut impl Write, rows: &[Row]) -> std::io::Result<()> {
    let width = |min: usize, f: fn(&Row) -> &str| {
        rows.iter()
            .map(|r| f(r).chars().count())
            .fold(min, usize::max)
    };
    // Name grows to the longest name, as in HTCondor 8.8 and later; the other
    // columns keep condor_status's widths unless a value is wider.
    let name_w = width(4, |r| &r.name);
    let opsys_w = width(10, |r| &r.opsys);
    let arch_w = width(6, |r| &r.arch);
    let state_w = width(9, |r| &r.state);
    let act_w = width(8, |r| &r.activity);
    let load_w = width(6, |r| &r.load_avg);
    let mem_w = width(4, |r| &r.memory);
    let time_w = width(11, |r| &r.activity_time);
    writeln!(
        out,
        "{:<name_w$} {:<opsys_w$} {:<arch_w$} {:<state_w$} {:<act_w$} {:<load_w$} {:<mem_w$} {:>time_w$}",
        "Name", "OpSys", "Arch", "State", "Activity", "LoadAv", "Mem", "ActvtyTime"
    )?;
    writeln!(out)?;
    for r in rows {
        let line = format!(
            "{:<name_w$} {:<opsys_w$} {:<arch_w$} {:<state_w$} {:<act_w$} {:>load_w$} {:>mem_w$} {:>time_w$}",
            r.name, r.opsys, r.arch, r.state, r.activity, r.load_avg, r.memory, r.activity_time
        );
        writeln!(out, "{}", line.trim_end())?;
    }
    writeln!(out)
}

/// The summary's columns: heading and width, as `condor_status` prints them.
const SUMMARY_COLUMNS: [(&str, usize); 9] = [
    ("Total", 5),
    ("Owner", 5),
    ("Claimed", 7),
    ("Unclaimed", 9),
    ("Matched", 7),
    ("Preempting", 10),
    ("Drain", 6),
    ("Backfill", 8),
    ("BkIdle", 6),
];

/// Counts in the order of [`SUMMARY_COLUMNS`].
type Counts = [u64; 9];

fn count(counts: &mut Counts, row: &Row) {
    counts[0] += 1;
    let column = match row.state.as_str() {
        "Owner" => Some(1),
        "Claimed" => Some(2),
        "Unclaimed" => Some(3),
        "Matched" => Some(4),
        "Preempting" => Some(5),
        "Drained" => Some(6),
        "Backfill" if row.activity == "Idle" => Some(8),
        "Backfill" => Some(7),
        _ => None,
    };
    if let Some(c) = column {
        counts[c] += 1;
    }
}

fn write_summary(out: &mut impl Write, rows: &[Row]) -> std::io::Result<()> {
    let mut groups: BTreeMap<String, Counts> = BTreeMap::new();
    let mut total = Counts::default();
    for r in rows {
        count(
            groups.entry(format!("{}/{}", r.arch, r.opsys)).or_default(),
            r,
        );
        count(&mut total, r);
    }
    let key_w = groups.keys().map(|k| k.chars().count()).fold(5, usize::max) + 2;
    let line = |key: &str, cells: &mut dyn Iterator<Item = String>| {
        let mut s = format!("{key:>key_w$}");
        for ((_, w), cell) in SUMMARY_COLUMNS.iter().zip(cells) {
            s.push_str(&format!(" {cell:>w$}"));
        }
        s
    };
    writeln!(
        out,
        "{}",
        line("", &mut SUMMARY_COLUMNS.iter().map(|(h, _)| h.to_string()))
    )?;
    writeln!(out)?;
    for (key, counts) in &groups {
        writeln!(out, "{}", line(key, &mut counts.iter().map(u64::to_string)))?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "{}",
        line("Total", &mut total.iter().map(u64::to_string))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_is_a_line_per_machine_its_slots_summed_up() {
        let ads: Vec<ClassAd> = [
            // A partitionable slot with two jobs in dynamic slots.
            r#"[ Name = "slot1@big.example.org"; Machine = "big.example.org"; Arch = "X86_64";
                 OpSys = "LINUX"; State = "Unclaimed"; Activity = "Idle";
                 PartitionableSlot = true; NumDynamicSlots = 2; Cpus = 12; TotalCpus = 16;
                 Memory = 49152; TotalMemory = 65536; TotalGPUs = 2; TotalLoadAvg = 4.0 ]"#,
            // Two static slots, one claimed: the states differ.
            r#"[ Name = "slot1@old.example.org"; Machine = "old.example.org"; Arch = "INTEL";
                 OpSys = "WINDOWS"; State = "Claimed"; Activity = "Busy"; Cpus = 1;
                 Memory = 1024; LoadAvg = 1.0 ]"#,
            r#"[ Name = "slot2@old.example.org"; Machine = "old.example.org"; Arch = "INTEL";
                 OpSys = "WINDOWS"; State = "Unclaimed"; Activity = "Idle"; Cpus = 1;
                 Memory = 1024; LoadAvg = 0.0 ]"#,
            // An idle partitionable slot.
            r#"[ Name = "slot1@idle.example.org"; Arch = "X86_64"; OpSys = "LINUX";
                 State = "Unclaimed"; Activity = "Idle"; PartitionableSlot = true;
                 NumDynamicSlots = 0; Cpus = 4; TotalCpus = 4; Memory = 8192;
                 TotalMemory = 8192; LoadAvg = 0.0 ]"#,
        ]
        .iter()
        .map(|t| parse_ad(t).unwrap())
        .collect();
        let text = compact_table(&compact_rows(&ads));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines,
            [
                "Machine          Platform    Slots Cpus Gpus TotalGb FreCpu FreeGb CpuLoad ST",
                "",
                "big.example.org  x64/LINUX       3   16    2   64.00     12  48.00    0.25 Cb",
                "idle.example.org x64/LINUX       1    4    0    8.00      4   8.00    0.00 Ui",
                "old.example.org  x86/WINDOWS     2    2    0    2.00      1   1.00    0.50 **",
            ],
            "{text}"
        );
    }

    #[test]
    fn elapsed_time_is_days_plus_hh_mm_ss() {
        assert_eq!(format_elapsed(0), "0+00:00:00");
        assert_eq!(format_elapsed(59), "0+00:00:59");
        assert_eq!(format_elapsed(3_600 + 2 * 60 + 3), "0+01:02:03");
        assert_eq!(format_elapsed(86_399), "0+23:59:59");
        assert_eq!(format_elapsed(86_400), "1+00:00:00");
        assert_eq!(format_elapsed(12 * 86_400 + 5), "12+00:00:05");
    }

    #[test]
    fn bytes_in_binary_units() {
        assert_eq!(human_bytes(0), "0 B");
        assert_eq!(human_bytes(1023), "1023 B");
        assert_eq!(human_bytes(1024), "1.0 KiB");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(4 << 30), "4.0 GiB");
        assert_eq!(human_bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn gpus_are_listed_a_line_each_with_who_holds_them() {
        let ad = parse_ad(
            r#"[ Name = "slot1@gpu-node"; State = "Claimed"; Activity = "Busy"; TotalGPUs = 2;
                 DetectedGPUs = "GPU-9a8ed216, GPU-6a96bd13";
                 GPUs_GPU_9a8ed216 = [ Id = "GPU-9a8ed216"; DeviceName = "NVIDIA H200"; Capability = 9.0; GlobalMemoryMb = 143771 ];
                 GPUs_GPU_6a96bd13 = [ Id = "GPU-6a96bd13"; DeviceName = "NVIDIA H200"; Capability = 9.0; GlobalMemoryMb = 143771 ];
                 StarlingClaimedGPUs = { [ Id = "GPU-6a96bd13"; User = "alice@lab" ] } ]"#,
        )
        .unwrap();
        let rows = GpuRow::of(&ad);
        let text = gpu_table(&rows, false);
        let expected = "\
Name           GPU          ST User      GPU-Memory GPU-Name    Capability

slot1@gpu-node GPU-9a8ed216 Ui -          140.4 GiB NVIDIA H200        9.0
slot1@gpu-node GPU-6a96bd13 Cb alice@lab  140.4 GiB NVIDIA H200        9.0

Total: 2 GPUs, 1 claimed, 1 free, 0 unavailable
";
        assert_eq!(text, expected, "\n{text}");
        assert_eq!(
            gpu_table(&rows, true),
            "Total: 2 GPUs, 1 claimed, 1 free, 0 unavailable\n"
        );
        // A machine its owner took back offers no free device.
        let owned = parse_ad(
            r#"[ Name = "slot1@desk"; State = "Owner"; Activity = "Idle"; TotalGPUs = 1; DetectedGPUs = "CUDA0" ]"#,
        )
        .unwrap();
        let text = gpu_table(&GpuRow::of(&owned), false);
        assert!(text.contains("CUDA0 Oi -"), "{text}");
        assert!(
            text.ends_with("1 GPUs, 0 claimed, 0 free, 1 unavailable\n"),
            "{text}"
        );
    }

    #[test]
    fn store_peers_are_listed_with_their_figures_and_totals() {
        let ad = |name: &str, host: &str, site: &str, used_kib: i64, chunks: i64| {
            parse_ad(&format!(
                r#"[ Name = "{name}"; StarlingAgentId = "{name}-id"; StarlingHost = "{host}";
                     StarlingDomain = "lab"; {site} StarlingRoles = "execute,submit,store";
                     StarlingStoreLent = 4194304; StarlingStoreUsed = {used_kib};
                     StarlingStoreFree = {}; StarlingStoreChunks = {chunks} ]"#,
                4_194_304 - used_kib
            ))
            .unwrap()
        };
        let no_store =
            parse_ad(r#"[ Name = "exec-only"; StarlingRoles = "execute"; StarlingStoreLent = 0 ]"#)
                .unwrap();
        let ads = store_ads(vec![
            ad(
                "agent-00",
                "host-00",
                r#"StarlingSite = "s1"; StarlingRack = "r2";"#,
                12,
                3,
            ),
            no_store,
            ad("agent-01", "host-01", "", 1024, 1),
            ad("agent-01", "host-01", "", 1024, 1),
        ]);
        assert_eq!(ads.len(), 2, "one line per store peer");
        let rows: Vec<StoreRow> = ads.iter().map(StoreRow::of).collect();
        let text = store_table(&rows, false);
        let expected = "\
Name     Host    Domain Site/Rack    Lent     Used    Free Chunks

agent-00 host-00 lab    s1/r2     4.0 GiB 12.0 KiB 4.0 GiB      3
agent-01 host-01 lab    -         4.0 GiB  1.0 MiB 4.0 GiB      1

Total    2 store peers            8.0 GiB  1.0 MiB 8.0 GiB      4
";
        assert_eq!(text, expected, "\n{text}");
        let totals = store_table(&rows, true);
        assert_eq!(
            totals,
            "Name Host Domain Site/Rack    Lent    Used    Free Chunks\n\n\
             Total 2 store peers         8.0 GiB 1.0 MiB 8.0 GiB      4\n"
        );
        assert_eq!(store_table(&[], false), "");
    }

    #[test]
    fn negative_elapsed_time_is_zero() {
        assert_eq!(format_elapsed(-30), "0+00:00:00");
    }
}
