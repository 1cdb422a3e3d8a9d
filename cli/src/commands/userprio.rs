//! `starling userprio`: users' priorities as every agent of the domain
//! computes them from the usage its execute agents gossip, shaped like
//! `condor_userprio` (effective priority, real priority, factor, resources
//! in use, accumulated usage). `-setfactor USER FACTOR` changes a user's
//! priority factor for the domain.

use std::path::Path;
use std::process::ExitCode;

use starling_control::{Request, Response, SetFactor, UserPrio};

/// `starling userprio` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Set USER's priority factor (at least 1; higher means a worse
    /// priority) for the domain, then show the table.
    #[arg(long = "setfactor", num_args = 2, value_names = ["USER", "FACTOR"])]
    setfactor: Option<Vec<String>>,
    /// With -setfactor: set the factor of a short name no user has yet
    /// (this domain's user of that name, ahead of their first job).
    #[arg(long, requires = "setfactor")]
    force: bool,
    /// Print the table as JSON.
    #[arg(long)]
    json: bool,
    /// Also users with no usage left (accepted for condor_userprio's sake:
    /// every user with a record is shown).
    #[arg(long)]
    allusers: bool,
}

pub(super) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let set_factor = match args.setfactor.as_deref() {
        Some([user, factor]) => {
            let factor: f64 = factor
                .parse()
                .map_err(|_| anyhow::anyhow!("-setfactor: {factor:?} is not a number"))?;
            // Checked here too: JSON has no NaN or infinity to send.
            starling_policies::priority::check_factor(factor)
                .map_err(|e| anyhow::anyhow!("-setfactor {user}: {e}"))?;
            Some(SetFactor {
                user: user.clone(),
                factor,
                force: args.force,
            })
        }
        Some(_) => anyhow::bail!("-setfactor takes a user and a factor"),
        None => None,
    };
    let response = super::jobs::call(data_dir, &Request::UserPrio { set_factor })?;
    let Response::UserPrio {
        users,
        halflife_secs,
    } = response
    else {
        anyhow::bail!("the agent answered {response:?}");
    };
    if let Some([user, _]) = args.setfactor.as_deref() {
        // Said, not left to look like nothing happened.
        let shown = users
            .iter()
            .any(|u| u.user == *user || u.user.rsplit_once('@').is_some_and(|(n, _)| n == user));
        if !shown {
            eprintln!(
                "starling: {user} has no usage recorded yet; its factor applies once it runs jobs"
            );
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&users)?);
        return Ok(ExitCode::SUCCESS);
    }
    print!("{}", table(&users, halflife_secs));
    Ok(ExitCode::SUCCESS)
}

/// The table as `condor_userprio` prints it.
fn table(users: &[UserPrio], halflife_secs: f64) -> String {
    let mut out = String::new();
    let width = users
        .iter()
        .map(|u| u.user.len())
        .max()
        .unwrap_or(4)
        .max("User Name".len());
    out.push_str(&format!(
        "Last Priority Update: now (half-life {})\n",
        duration(halflife_secs)
    ));
    out.push_str(&format!(
        "{:<width$} {:>12} {:>12} {:>10} {:>8} {:>14}\n",
        "User Name", "Effective", "Real", "Priority", "Res", "Total Usage"
    ));
    out.push_str(&format!(
        "{:<width$} {:>12} {:>12} {:>10} {:>8} {:>14}\n",
        "", "Priority", "Priority", "Factor", "In Use", "(wghted-hrs)"
    ));
    out.push_str(&format!("{}\n", "-".repeat(width + 61)));
    for u in users {
        out.push_str(&format!(
            "{:<width$} {:>12.2} {:>12.2} {:>10.2} {:>8.2} {:>14.2}\n",
            u.user,
            u.effective,
            u.real,
            u.factor,
            u.in_use,
            u.accumulated / 3600.0
        ));
    }
    out.push_str(&format!("{}\n", "-".repeat(width + 61)));
    let in_use: f64 = users.iter().map(|u| u.in_use).sum();
    let total: f64 = users.iter().map(|u| u.accumulated).sum();
    out.push_str(&format!(
        "{:<width$} {:>12} {:>12} {:>10} {:>8.2} {:>14.2}\n",
        format!("Number of users: {}", users.len()),
        "",
        "",
        "",
        in_use,
        total / 3600.0
    ));
    out
}

fn duration(secs: f64) -> String {
    let secs = secs.max(0.0) as u64;
    if secs % 86_400 == 0 {
        format!("{} d", secs / 86_400)
    } else if secs % 3600 == 0 {
        format!("{} h", secs / 3600)
    } else {
        format!("{secs} s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_lists_users_best_first_as_given_with_totals() {
        let users = vec![
            UserPrio {
                user: "alice@lab".to_owned(),
                effective: 500.0,
                real: 0.5,
                factor: 1000.0,
                in_use: 2.0,
                accumulated: 7200.0,
                first_usage: 0,
                last_usage: 0,
            },
            UserPrio {
                user: "bob@lab".to_owned(),
                effective: 3000.0,
                real: 1.5,
                factor: 2000.0,
                in_use: 1.0,
                accumulated: 3600.0,
                first_usage: 0,
                last_usage: 0,
            },
        ];
        let text = table(&users, 86_400.0);
        assert!(text.contains("half-life 1 d"), "{text}");
        let alice = text.find("alice@lab").unwrap();
        let bob = text.find("bob@lab").unwrap();
        assert!(alice < bob);
        assert!(text.contains("500.00"), "{text}");
        assert!(text.contains("Number of users: 2"), "{text}");
        assert!(text.contains("3.00"), "{text}");
    }
}
