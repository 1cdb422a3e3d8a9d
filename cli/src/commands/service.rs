//! `starling install-service`: installs the agent as a systemd service
//! (`dist/starling-agent.service`, with this program's path filled in), or
//! prints the unit for an administrator who installs it by hand.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;

/// The unit, as shipped in the repository.
const UNIT: &str = include_str!("../../../dist/starling-agent.service");

/// The unit's file name.
pub(crate) const UNIT_FILE: &str = "starling-agent.service";

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Where unit files go.
    #[arg(long, value_name = "DIR", default_value = "/etc/systemd/system")]
    unit_dir: PathBuf,
    /// Replace a unit file that says something else.
    #[arg(long)]
    force: bool,
    /// Print the unit instead of writing it.
    #[arg(long)]
    print: bool,
}

/// The unit with `program` as the agent's program.
fn unit_for(program: &std::path::Path) -> anyhow::Result<String> {
    let path = program.to_str().with_context(|| {
        format!(
            "this program's path {} is not UTF-8; install it where systemd can name it",
            program.display()
        )
    })?;
    anyhow::ensure!(
        !path
            .chars()
            .any(|c| c.is_whitespace() || c == '%' || c == '$'),
        "this program's path {path:?} holds a space, % or $, which a unit's ExecStart would \
         misread; install it elsewhere (e.g. /usr/local/bin/starling)"
    );
    Ok(UNIT.replace("@STARLING@", path))
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let program = std::env::current_exe()
        .and_then(std::fs::canonicalize)
        .context("finding this program's path")?;
    let unit = unit_for(&program)?;
    if args.print {
        print!("{unit}");
        return Ok(ExitCode::SUCCESS);
    }
    let path = args.unit_dir.join(UNIT_FILE);
    match std::fs::read_to_string(&path) {
        Ok(existing) if existing == unit => {
            println!(
                "{} is installed already, as this program would write it.",
                path.display()
            );
            return Ok(ExitCode::SUCCESS);
        }
        Ok(_) if !args.force => anyhow::bail!(
            "{} exists and says something else (another program's path, or edited by hand); \
             compare it with `starling install-service --print`, and replace it with --force",
            path.display()
        ),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    }
    let tmp = path.with_extension("service.tmp");
    std::fs::write(&tmp, &unit)
        .and_then(|()| std::fs::rename(&tmp, &path))
        .with_context(|| {
            format!(
                "writing {} (installing a service needs root: sudo starling install-service)",
                path.display()
            )
        })?;
    println!(
        "Installed {}, running {} agent as root.\n\
         Configuration: /etc/starling/agent.toml (see `starling config`); data: /var/lib/starling.\n\
         Start it now and at every boot:\n  \
         systemctl daemon-reload\n  systemctl enable --now starling-agent\n\
         Read its log: journalctl -u starling-agent\n\
         After changing its configuration: systemctl reload starling-agent (SIGHUP)",
        path.display(),
        program.display()
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unit_runs_this_program_and_refuses_a_path_systemd_would_misread() {
        let unit = unit_for(std::path::Path::new("/usr/local/bin/starling")).unwrap();
        assert!(
            unit.contains("\nExecStart=/usr/local/bin/starling agent\n"),
            "{unit}"
        );
        assert!(!unit.contains('@'), "{unit}");
        for line in [
            "Restart=on-failure",
            "KillMode=process",
            "NoNewPrivileges=yes",
        ] {
            assert!(unit.lines().any(|l| l == line), "{line}");
        }
        let err = unit_for(std::path::Path::new("/opt/my tools/starling")).unwrap_err();
        assert!(err.to_string().contains("holds a space"), "{err}");
    }
}
