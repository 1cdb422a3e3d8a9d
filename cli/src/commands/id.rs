//! `starling id`: this agent's id and the certificates installed for it.
//!
//! The key is made in the data directory on first use, so an administrator can
//! read a new machine's id and admit it before its agent ever runs.

use std::process::ExitCode;

use anyhow::Context as _;
use starling_protocol::identity::{AgentId, Certificate, Freshness, Timestamp};
use starling_storage::DataDir;

#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

/// One installed certificate as `id` reports it.
struct Row {
    file: String,
    domain: String,
    domain_key: String,
    roles: String,
    valid_until: String,
    status: String,
}

pub(super) fn run(args: Args, data: &DataDir) -> anyhow::Result<ExitCode> {
    let id = data
        .agent_key()
        .context("loading this agent's key")?
        .agent_id();
    let rows = certificate_rows(data, &id, Timestamp::now())?;
    if args.json {
        let certs: Vec<_> = rows
            .iter()
            .map(|r| {
                serde_json::json!({
                    "file": r.file, "domain": r.domain, "domain_key": r.domain_key,
                    "roles": r.roles, "valid_until": r.valid_until, "status": r.status,
                })
            })
            .collect();
        let out = serde_json::json!({
            "agent_id": id.to_string(),
            "data_dir": data.path().display().to_string(),
            "certificates": certs,
        });
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(ExitCode::SUCCESS);
    }
    println!("agent id  {id}");
    println!("data dir  {}", data.path().display());
    if rows.is_empty() {
        println!("certificates: none. To admit this agent, a domain administrator runs");
        println!(
            "  starling domain admit --key DOMAIN.key {id} --roles execute,submit --out {}.cert",
            id.short()
        );
        println!(
            "and this machine then runs: starling domain install {}.cert",
            id.short()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!("certificates:");
    let width = rows
        .iter()
        .map(|r| r.domain.len())
        .max()
        .unwrap_or(0)
        .max(6);
    let roles_width = rows.iter().map(|r| r.roles.len()).max().unwrap_or(0).max(5);
    println!(
        "  {:width$}  {:roles_width$}  {:20}  STATUS",
        "DOMAIN", "ROLES", "VALID UNTIL"
    );
    for r in &rows {
        println!(
            "  {:width$}  {:roles_width$}  {:20}  {}",
            r.domain, r.roles, r.valid_until, r.status
        );
    }
    Ok(ExitCode::SUCCESS)
}

impl Row {
    /// A file whose certificate could not be read at all.
    fn unreadable(file: String, status: String) -> Self {
        Self {
            file,
            domain: "?".to_owned(),
            domain_key: String::new(),
            roles: String::new(),
            valid_until: String::new(),
            status,
        }
    }
}

fn certificate_rows(data: &DataDir, id: &AgentId, now: Timestamp) -> anyhow::Result<Vec<Row>> {
    let mut rows = Vec::new();
    for installed in data.certificates()? {
        let file = installed.path.display().to_string();
        let envelope = match installed.envelope {
            Ok(envelope) => envelope,
            Err(reason) => {
                rows.push(Row::unreadable(file, format!("unreadable: {reason}")));
                continue;
            }
        };
        let freshness = Freshness::default();
        let (cert, status) = match Certificate::open(&envelope, now, &freshness) {
            Ok(cert) if cert.agent != *id => {
                let status = format!("admits another agent ({})", cert.agent);
                (Some(cert), status)
            }
            Ok(cert) => (Some(cert), "valid".to_owned()),
            Err(e) => {
                // Show what the certificate says even when it is expired.
                let far = Freshness {
                    max_skew_ms: u64::MAX,
                };
                (Certificate::open(&envelope, now, &far).ok(), e.to_string())
            }
        };
        rows.push(match cert {
            Some(cert) => Row {
                file,
                domain: cert.domain,
                domain_key: cert.domain_key.to_string(),
                roles: cert.roles.to_string(),
                valid_until: cert.valid_until.to_string(),
                status,
            },
            None => Row::unreadable(file, status),
        });
    }
    Ok(rows)
}
