//! `starling net`: the network links the addressed agent owns (its host
//! link; a netmgr's domain uplink), their capacity, what reservations may
//! use of it, what is reserved now, and each reservation's timeline (who
//! holds it, from when to when, at what rate, held or committed), then the
//! bulk transfers in flight on the agent with how far each has come, its
//! rate so far and what its path reserved.

use std::path::Path;
use std::process::ExitCode;

use starling_agent::links::flights::{FlightSummary, Kind};
use starling_control::{LinkSummary, Request, Response};

/// `starling net` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let response = super::jobs::call(data_dir, &Request::Links)?;
    let Response::Links { links, transfers } = response else {
        anyhow::bail!("the agent answered {response:?}");
    };
    if args.json {
        let both = serde_json::json!({ "links": links, "transfers": transfers });
        println!("{}", serde_json::to_string_pretty(&both)?);
    } else {
        print!("{}", table(&links, now()));
        print!("{}", in_flight(&transfers));
    }
    Ok(ExitCode::SUCCESS)
}

fn now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

/// The links as a table, times relative to `now`.
fn table(links: &[LinkSummary], now: f64) -> String {
    if links.is_empty() {
        return "This agent manages no link ([links] host_mbps, or uplink_mbps with the netmgr role).\n"
            .to_owned();
    }
    let mut out = format!(
        "{:<28} {:>10} {:>11} {:>13} {:>5}\n",
        "LINK", "CAPACITY", "RESERVABLE", "RESERVED NOW", "HELD"
    );
    for link in links {
        out.push_str(&format!(
            "{:<28} {:>5.0} Mb/s {:>6.0} Mb/s {:>8.1} Mb/s {:>5}\n",
            link.link,
            link.capacity_mbps,
            link.reservable_mbps,
            link.reserved_now_mbps,
            link.reservations.len()
        ));
        for r in &link.reservations {
            let holder = short(&r.holder);
            out.push_str(&format!(
                "  {} by …{holder}: {:+.1} s to {:+.1} s at {:.1} Mb/s, {}\n",
                r.id,
                r.start - now,
                r.end - now,
                r.rate_mbps,
                if r.committed { "committed" } else { "held" }
            ));
        }
        if !link.users.is_empty() {
            let users: Vec<String> = link
                .users
                .iter()
                .map(|u| {
                    format!(
                        "{} {:.1} MiB{}",
                        u.user,
                        u.used_mib,
                        if u.waiting { " (waiting)" } else { "" }
                    )
                })
                .collect();
            out.push_str(&format!("  recent use: {}\n", users.join(", ")));
        }
    }
    out
}

/// The last 8 characters of a peer id, as the tables show peers.
fn short(peer: &str) -> String {
    let tail: Vec<char> = peer.chars().rev().take(8).collect();
    tail.into_iter().rev().collect()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn mbps(bytes_per_sec: f64) -> f64 {
    bytes_per_sec * 8.0 / 1_000_000.0
}

/// The transfers in flight, one line each.
fn in_flight(transfers: &[FlightSummary]) -> String {
    if transfers.is_empty() {
        return "\nNo transfer in flight.\n".to_owned();
    }
    let mut out = format!(
        "\n{:<6} {:<26} {:>19} {:>5} {:>11}  {}\n",
        "JOB", "TRANSFER", "MOVED", "DONE", "RATE", "PATH"
    );
    for t in transfers {
        let done = if t.bytes == 0 {
            100.0
        } else {
            t.moved as f64 * 100.0 / t.bytes as f64
        };
        let path = match (t.waiting, t.reserved_rate, t.kind) {
            (true, _, _) => "waiting for admission".to_owned(),
            (false, Some(rate), _) => format!("reserved {:.1} Mb/s", mbps(rate)),
            (false, None, Kind::InputOut) => "served as the machine pulls".to_owned(),
            (false, None, _) => "unreserved (shares what is left)".to_owned(),
        };
        out.push_str(&format!(
            "{:<6} {:<26} {:>8.1} of {:>6.1} MiB {:>4.0}% {:>6.1} Mb/s  {path}\n",
            t.job.as_deref().unwrap_or("-"),
            format!("{} …{}", t.kind.describe(), short(&t.peer)),
            mib(t.moved),
            mib(t.bytes),
            done,
            mbps(t.rate),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_control::LinkReservation;

    #[test]
    fn the_table_shows_each_link_and_its_reservations() {
        let links = vec![LinkSummary {
            link: "uplink of d0.testnet".to_owned(),
            capacity_mbps: 40.0,
            reservable_mbps: 38.0,
            reserved_now_mbps: 36.0,
            reservations: vec![LinkReservation {
                id: "00000000000000ab".to_owned(),
                holder: "12D3KooWabcdefgh".to_owned(),
                start: 100.0,
                end: 104.5,
                rate_mbps: 36.0,
                committed: true,
            }],
            users: vec![starling_control::LinkUser {
                user: "alice@d0".to_owned(),
                used_mib: 12.0,
                waiting: true,
            }],
        }];
        let text = table(&links, 101.0);
        assert!(text.contains("uplink of d0.testnet"), "{text}");
        assert!(text.contains("36.0 Mb/s"), "{text}");
        assert!(
            text.contains(
                "00000000000000ab by …abcdefgh: -1.0 s to +3.5 s at 36.0 Mb/s, committed"
            ),
            "{text}"
        );
        assert!(
            text.contains("recent use: alice@d0 12.0 MiB (waiting)"),
            "{text}"
        );
        assert!(table(&[], 0.0).contains("manages no link"));
    }

    #[test]
    fn transfers_in_flight_show_progress_rate_and_path() {
        let transfers = vec![
            FlightSummary {
                kind: Kind::InputIn,
                peer: "12D3KooWabcdefgh".to_owned(),
                job: Some("7.0".to_owned()),
                bytes: 60 * 1024 * 1024,
                moved: 15 * 1024 * 1024,
                rate: 1_000_000.0,
                reserved_rate: Some(1_250_000.0),
                waiting: false,
                age_secs: 16.0,
            },
            FlightSummary {
                kind: Kind::CheckpointOut,
                peer: "12D3KooWzyxwvuts".to_owned(),
                job: None,
                bytes: 4 * 1024 * 1024,
                moved: 0,
                rate: 0.0,
                reserved_rate: None,
                waiting: true,
                age_secs: 1.0,
            },
        ];
        let text = in_flight(&transfers);
        assert!(text.contains("7.0    input from …abcdefgh"), "{text}");
        assert!(
            text.contains("15.0 of   60.0 MiB   25%    8.0 Mb/s  reserved 10.0 Mb/s"),
            "{text}"
        );
        assert!(text.contains("checkpoint to …zyxwvuts"), "{text}");
        assert!(text.contains("waiting for admission"), "{text}");
        assert!(in_flight(&[]).contains("No transfer in flight"));
    }
}
