//! `starling domain`: an administrator's tools for a domain key, the
//! certificates it signs and the trust policy it signs, plus `install` on the
//! admitted machine and `verify` for anyone holding a signed file.
//!
//! The domain key lives only in the administrator's key file; agents never
//! hold it. Signed files are armored text (see
//! `starling_protocol::identity::armor`), so they can be mailed and pasted.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use clap::ArgMatches;
use starling_protocol::identity::{
    armor, check_domain_name, AgentId, Certificate, DomainPolicy, Envelope, Export, Freshness,
    Keypair, Kind, PublicKey, Roles, Timestamp, TrustedDomain,
};
use starling_storage::{datadir, DataDir};

const DAY_MS: u64 = 86_400_000;

#[derive(Debug, clap::Subcommand)]
pub(super) enum Command {
    /// Create a domain key (kept by the administrator, never by an agent).
    Init {
        /// The domain's name, like a DNS name: physics.example.org.
        name: String,
        /// Where to write the key; created readable only by you.
        #[arg(long)]
        out: PathBuf,
    },
    /// Sign a certificate admitting an agent into the domain.
    Admit {
        /// The domain key file made by `starling domain init`.
        #[arg(long)]
        key: PathBuf,
        /// The agent's id, as `starling id` prints it on that machine.
        agent: String,
        /// What the agent may do: execute, submit, store, netmgr (comma-separated).
        #[arg(long)]
        roles: String,
        /// How many days the certificate is valid.
        #[arg(long, default_value_t = 365)]
        days: u64,
        /// Where to write the certificate (default: standard output).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Sign the domain's trust policy: which foreign domains it trusts and on
    /// what terms. The options after a --trust apply to that domain.
    Policy(PolicyArgs),
    /// Install a certificate for this agent, or its domain's trust policy
    /// (in its data directory).
    Install {
        /// The certificate file from `starling domain admit`, or the policy
        /// file from `starling domain policy` (signed by the key of a domain
        /// that admitted this agent).
        file: PathBuf,
    },
    /// Check a certificate, policy or other signed file and print what it says.
    /// Exits 1, with the reason, if it is tampered with, expired or not from
    /// the expected key.
    Verify {
        file: PathBuf,
        /// Require the file to be signed by this domain key.
        #[arg(long)]
        domain_key: Option<String>,
        /// For a certificate: require it to admit the agent with this id.
        /// (Not `--agent`: that global option names a data directory.)
        #[arg(long = "agent-id", value_name = "ID")]
        agent: Option<String>,
        /// Check validity at this time (ISO 8601, e.g. 2027-01-31T12:00Z) instead of now.
        #[arg(long)]
        at: Option<String>,
    },
}

#[derive(Debug, clap::Args)]
pub(super) struct PolicyArgs {
    /// The domain key file; the policy is this domain's.
    #[arg(long)]
    key: PathBuf,
    /// Trust a foreign domain: NAME=PUBLIC_KEY. Repeat for several domains.
    #[arg(long = "trust", value_name = "NAME=KEY")]
    trust: Vec<String>,
    /// ClassAd expression over a foreign job that must hold for it to run here.
    #[arg(long, value_name = "EXPR")]
    accept: Vec<String>,
    /// Most slots the domain's jobs may hold here at once.
    #[arg(long, value_name = "N")]
    max_slots: Vec<u32>,
    /// Largest share of this domain's capacity its jobs may hold, in (0, 1].
    #[arg(long, value_name = "F")]
    max_fraction: Vec<f64>,
    /// Most GPUs the domain's jobs may hold here at once, all of this
    /// domain's machines together (0: none).
    #[arg(long, value_name = "N")]
    max_gpus: Vec<u32>,
    /// Priority factor for its users here (higher is lower priority; default 1).
    #[arg(long, value_name = "F")]
    priority_factor: Vec<f64>,
    /// ClassAd expression over this domain's machine ads: which are advertised to it.
    #[arg(long, value_name = "EXPR")]
    export: Vec<String>,
    /// Most slots advertised to it at once.
    #[arg(long, value_name = "N")]
    export_slots: Vec<u32>,
    /// MiB of checkpoints each of this domain's store peers keeps for its
    /// jobs, at most (0: none).
    #[arg(long, value_name = "MIB")]
    store_mib: Vec<u64>,
    /// An address of one of this domain's agents
    /// (/ip4/ADDR/tcp/PORT/p2p/AGENT_ID), which every agent of the domain
    /// dials at start: admitting a machine is then enough for it to join.
    /// Repeat for several.
    #[arg(long, value_name = "MULTIADDR")]
    bootstrap: Vec<String>,
    /// How many days the policy is valid.
    #[arg(long, default_value_t = 365)]
    days: u64,
    /// Where to write the policy (default: standard output).
    #[arg(long)]
    out: Option<PathBuf>,
}

pub(super) fn run(
    command: Command,
    matches: Option<&ArgMatches>,
    data_dir: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    match command {
        Command::Init { name, out } => init(&name, &out),
        Command::Admit {
            key,
            agent,
            roles,
            days,
            out,
        } => admit(&key, &agent, &roles, days, out.as_deref()),
        Command::Policy(args) => {
            let matches = matches.context("internal: policy options without their matches")?;
            policy(&args, matches)
        }
        Command::Install { file } => install(&file, data_dir),
        Command::Verify {
            file,
            domain_key,
            agent,
            at,
        } => {
            // A refused file is an answer, not a usage error: exit 1.
            match verify(
                &file,
                domain_key.as_deref(),
                agent.as_deref(),
                at.as_deref(),
            ) {
                Ok(code) => Ok(code),
                Err(e) => {
                    eprintln!("starling: {e:#}");
                    Ok(ExitCode::FAILURE)
                }
            }
        }
    }
}

fn init(name: &str, out: &Path) -> anyhow::Result<ExitCode> {
    check_domain_name(name)?;
    if out.exists() {
        bail!(
            "{} already exists; a domain key is never overwritten (replacing it would orphan \
             every certificate it signed). Choose another --out.",
            out.display()
        );
    }
    let key = Keypair::generate().context("getting randomness for the key")?;
    let text = armor::armor_domain_key(name, &key);
    datadir::write_private(out, text.as_bytes()).context("writing the domain key")?;
    println!("domain      {name}");
    println!("public key  {}", key.public());
    println!(
        "key file    {} (keep it secret; agents never need it)",
        out.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn read_domain_key(path: &Path) -> anyhow::Result<(String, Keypair)> {
    let text = read_text(path)?;
    armor::dearmor_domain_key(&text)
        .with_context(|| format!("{}: not a domain key file", path.display()))
}

fn read_text(path: &Path) -> anyhow::Result<String> {
    let len = std::fs::metadata(path)
        .with_context(|| format!("reading {}", path.display()))?
        .len();
    if len > armor::MAX_ARMORED_LEN as u64 {
        bail!(
            "{}: {len} bytes is larger than any Starling file",
            path.display()
        );
    }
    std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))
}

/// Writes armored text to `out`, or to standard output.
fn write_out(out: Option<&Path>, text: &str) -> anyhow::Result<()> {
    match out {
        Some(path) => {
            std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
        }
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn validity(days: u64) -> anyhow::Result<(Timestamp, Timestamp)> {
    if days == 0 || days > 100 * 366 {
        bail!("--days must be between 1 and 36600, not {days}");
    }
    let now = Timestamp::now();
    Ok((now, now.saturating_add_millis(days * DAY_MS)))
}

fn admit(
    key: &Path,
    agent: &str,
    roles: &str,
    days: u64,
    out: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    let (domain, domain_key) = read_domain_key(key)?;
    let agent: AgentId = agent
        .parse()
        .context("the agent id (as `starling id` prints it)")?;
    let roles: Roles = roles
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--roles: {e}"))?;
    let (valid_from, valid_until) = validity(days)?;
    let cert = Certificate {
        domain,
        domain_key: domain_key.public(),
        agent,
        roles,
        valid_from,
        valid_until,
    };
    let envelope = cert.issue(&domain_key, valid_from.as_unix_millis())?;
    let summary = format!(
        "domain {} admits {} as {} until {}",
        cert.domain, cert.agent, cert.roles, cert.valid_until
    );
    write_out(
        out,
        &armor::armor_envelope(&envelope, std::slice::from_ref(&summary)),
    )?;
    eprintln!("{summary}");
    Ok(ExitCode::SUCCESS)
}

/// The per-trust options, each tied to the `--trust` before it on the command
/// line.
fn policy(args: &PolicyArgs, matches: &ArgMatches) -> anyhow::Result<ExitCode> {
    let (domain, domain_key) = read_domain_key(&args.key)?;
    if args.trust.is_empty() && args.bootstrap.is_empty() {
        bail!(
            "give at least one --trust NAME=KEY or --bootstrap MULTIADDR (a policy that says \
             neither needs no signing)"
        );
    }
    let trust_at: Vec<usize> = matches
        .indices_of("trust")
        .map(Iterator::collect)
        .unwrap_or_default();
    let mut trusts: Vec<TrustedDomain> = Vec::with_capacity(args.trust.len());
    for spec in &args.trust {
        let (name, key) = spec
            .split_once('=')
            .with_context(|| format!("--trust {spec:?}: expected NAME=KEY"))?;
        check_domain_name(name.trim()).with_context(|| format!("--trust {spec:?}"))?;
        let key: PublicKey = key.parse().with_context(|| format!("--trust {spec:?}"))?;
        trusts.push(TrustedDomain {
            name: name.trim().to_owned(),
            key,
            accept: None,
            max_slots: None,
            max_fraction: None,
            max_gpus: None,
            priority_factor: 1.0,
            export: Export::default(),
            store_mib: None,
        });
    }
    // Which --trust an option occurrence belongs to: the last one before it.
    let owner = |option: &str, index: usize| -> anyhow::Result<usize> {
        trust_at
            .iter()
            .rposition(|&t| t < index)
            .with_context(|| format!("--{option} must come after the --trust it applies to"))
    };
    macro_rules! assign {
        ($option:literal, $id:literal, $values:expr, |$t:ident, $v:ident| $set:expr) => {
            let indices: Vec<usize> = matches
                .indices_of($id)
                .map(Iterator::collect)
                .unwrap_or_default();
            let mut seen = vec![false; trusts.len()];
            for (value, index) in $values.iter().zip(indices) {
                let i = owner($option, index)?;
                if std::mem::replace(&mut seen[i], true) {
                    bail!("--{} given twice for --trust {}", $option, trusts[i].name);
                }
                let $t = &mut trusts[i];
                let $v = value.clone();
                $set;
            }
        };
    }
    assign!("accept", "accept", args.accept, |t, v| t.accept = Some(v));
    assign!("max-slots", "max_slots", args.max_slots, |t, v| t
        .max_slots =
        Some(v));
    assign!("max-fraction", "max_fraction", args.max_fraction, |t, v| {
        t.max_fraction = Some(v)
    });
    assign!("max-gpus", "max_gpus", args.max_gpus, |t, v| t.max_gpus =
        Some(v));
    assign!(
        "priority-factor",
        "priority_factor",
        args.priority_factor,
        |t, v| t.priority_factor = v
    );
    assign!("export", "export", args.export, |t, v| t.export.machines =
        Some(v));
    assign!("export-slots", "export_slots", args.export_slots, |t, v| {
        t.export.max_slots = Some(v)
    });
    assign!("store-mib", "store_mib", args.store_mib, |t, v| t
        .store_mib =
        Some(v));

    let policy = DomainPolicy {
        domain,
        trusts,
        bootstrap: args.bootstrap.clone(),
    };
    let (issued_at, expires_at) = validity(args.days)?;
    let envelope = policy.sign(
        &domain_key,
        issued_at.as_unix_millis(),
        issued_at,
        expires_at,
    )?;
    let names: Vec<&str> = policy.trusts.iter().map(|t| t.name.as_str()).collect();
    let trusts = if names.is_empty() {
        "trusts no other domain".to_owned()
    } else {
        format!("trusts {}", names.join(", "))
    };
    let bootstrap = match policy.bootstrap.len() {
        0 => String::new(),
        n => format!(
            ", its agents join by {n} bootstrap address{}",
            if n == 1 { "" } else { "es" }
        ),
    };
    let summary = format!(
        "domain {} {trusts}{bootstrap} until {}",
        policy.domain, expires_at
    );
    write_out(
        args.out.as_deref(),
        &armor::armor_envelope(&envelope, std::slice::from_ref(&summary)),
    )?;
    eprintln!("{summary}");
    Ok(ExitCode::SUCCESS)
}

/// Reads an envelope file: armored text, or raw envelope bytes.
fn read_envelope(path: &Path) -> anyhow::Result<Envelope> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    if bytes.len() > armor::MAX_ARMORED_LEN {
        bail!(
            "{}: {} bytes is larger than any Starling file",
            path.display(),
            bytes.len()
        );
    }
    let raw = match std::str::from_utf8(&bytes) {
        Ok(text) if text.contains("-----BEGIN STARLING") => {
            let (label, raw) = armor::dearmor(text).with_context(|| path.display().to_string())?;
            if label == armor::DOMAIN_KEY {
                bail!(
                    "{} is a secret domain key, not a signed file",
                    path.display()
                );
            }
            raw
        }
        _ => bytes,
    };
    Envelope::decode(&raw)
        .with_context(|| format!("{}: not a signed Starling file", path.display()))
}

fn install(file: &Path, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let data = open_data_dir(data_dir)?;
    let envelope = read_envelope(file)?;
    let now = Timestamp::now();
    let freshness = Freshness::default();
    match envelope.header().kind {
        Kind::POLICY => {
            let policy = DomainPolicy::open(&envelope, now, &freshness)
                .with_context(|| format!("{}: policy refused", file.display()))?;
            // install_policy checks the signer against this agent's
            // certificate for the policy's domain.
            let path = data
                .install_policy(&envelope, &policy)
                .with_context(|| format!("{}: policy refused", file.display()))?;
            let names: Vec<&str> = policy.trusts.iter().map(|t| t.name.as_str()).collect();
            println!(
                "installed: the policy of domain {} (sequence {}), trusting {} until {}",
                policy.domain,
                envelope.header().seq,
                if names.is_empty() {
                    "no other domain".to_owned()
                } else {
                    names.join(", ")
                },
                envelope.header().expires_at
            );
            println!("  {}", path.display());
            println!(
                "  an agent running on this data directory puts it in force within seconds \
                 (it watches its policies/); claims granted before run on"
            );
        }
        _ => {
            // Anything else must be a certificate; open_kind names what it is.
            let cert = Certificate::open(&envelope, now, &freshness)
                .with_context(|| format!("{}: certificate refused", file.display()))?;
            let path = data
                .install_certificate(&envelope, &cert)
                .with_context(|| format!("{}: certificate refused", file.display()))?;
            println!(
                "installed: domain {} admits this agent as {} until {}",
                cert.domain, cert.roles, cert.valid_until
            );
            println!("  {}", path.display());
        }
    }
    Ok(ExitCode::SUCCESS)
}

pub(super) fn open_data_dir(data_dir: Option<&Path>) -> anyhow::Result<DataDir> {
    let path = match data_dir {
        Some(path) => path.to_owned(),
        None => DataDir::default_path()?,
    };
    Ok(DataDir::open(path)?)
}

fn verify(
    file: &Path,
    domain_key: Option<&str>,
    agent: Option<&str>,
    at: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let now = match at {
        Some(text) => {
            let t = starling_protocol::classad::parse_abs_time(text).with_context(|| {
                format!("--at {text:?}: expected an ISO 8601 time such as 2027-01-31T12:00Z")
            })?;
            Timestamp::from_unix_secs(u64::try_from(t.secs).unwrap_or(0))
        }
        None => Timestamp::now(),
    };
    let expected_key: Option<PublicKey> = domain_key
        .map(|k| k.parse().context("--domain-key"))
        .transpose()?;
    let expected_agent: Option<AgentId> =
        agent.map(|a| a.parse().context("--agent-id")).transpose()?;
    let envelope = read_envelope(file)?;
    let header = envelope.header().clone();
    let refused = || format!("{}: refused", file.display());
    if let Some(expected) = expected_key {
        if header.signer != expected {
            bail!(
                "{}: refused: signed by {}, not by the expected domain key {expected}",
                file.display(),
                header.signer
            );
        }
    }
    let freshness = Freshness::default();
    match header.kind {
        Kind::CERTIFICATE => {
            let cert = Certificate::open(&envelope, now, &freshness).with_context(refused)?;
            if let Some(expected) = expected_agent {
                if cert.agent != expected {
                    bail!(
                        "{}: refused: it admits agent {}, not {expected}",
                        file.display(),
                        cert.agent
                    );
                }
            }
            println!("certificate: valid");
            println!("  domain      {}", cert.domain);
            println!("  domain key  {}", cert.domain_key);
            println!("  agent       {}", cert.agent);
            println!("  roles       {}", cert.roles);
            println!("  valid       {} to {}", cert.valid_from, cert.valid_until);
        }
        Kind::POLICY => {
            if expected_agent.is_some() {
                bail!(
                    "--agent-id applies to certificates; {} is a domain policy",
                    file.display()
                );
            }
            let policy = DomainPolicy::open(&envelope, now, &freshness).with_context(refused)?;
            println!("domain policy: valid");
            println!("  domain      {}", policy.domain);
            println!("  domain key  {}", header.signer);
            println!("  sequence    {}", header.seq);
            println!(
                "  valid       {} to {}",
                header.issued_at, header.expires_at
            );
            for t in &policy.trusts {
                println!("  trusts {} (key {})", t.name, t.key);
                if let Some(accept) = &t.accept {
                    println!("    accept           {accept}");
                }
                if let Some(n) = t.max_slots {
                    println!("    max slots        {n}");
                }
                if let Some(f) = t.max_fraction {
                    println!("    max fraction     {f}");
                }
                if let Some(n) = t.max_gpus {
                    println!("    max gpus         {n}");
                }
                println!("    priority factor  {}", t.priority_factor);
                if let Some(m) = &t.export.machines {
                    println!("    exports          {m}");
                }
                if let Some(n) = t.export.max_slots {
                    println!("    export slots     {n}");
                }
                if let Some(n) = t.store_mib {
                    println!("    store            {n} MiB");
                }
            }
            for addr in &policy.bootstrap {
                println!("  bootstrap   {addr}");
            }
        }
        kind => {
            if expected_agent.is_some() {
                bail!(
                    "--agent-id applies to certificates; {} is a {kind}",
                    file.display()
                );
            }
            let opened = envelope.open(now, &freshness).with_context(refused)?;
            println!("{kind}: valid signature");
            println!("  signer      {}", opened.header.signer);
            println!("  sequence    {}", opened.header.seq);
            println!(
                "  valid       {} to {}",
                opened.header.issued_at, opened.header.expires_at
            );
            println!("  body        {} bytes", opened.body.len());
        }
    }
    Ok(ExitCode::SUCCESS)
}
