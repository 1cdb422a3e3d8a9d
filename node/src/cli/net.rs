//! `starling net`: the network links the addressed agent owns (its host
//! link; a netmgr's domain uplink), their capacity, what reservations may
//! use of it, what is reserved now, and each reservation's timeline (who
//! holds it, from when to when, at what rate, held or committed).

use std::path::Path;
use std::process::ExitCode;

use crate::control::{LinkSummary, Request, Response};

/// `starling net` arguments.
#[derive(Debug, clap::Args)]
pub(super) struct Args {
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

pub(super) fn run(args: Args, data_dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let response = super::jobs::call(data_dir, &Request::Links)?;
    let Response::Links { links } = response else {
        anyhow::bail!("the agent answered {response:?}");
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&links)?);
    } else {
        print!("{}", table(&links, now()));
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
            let holder: String = r
                .holder
                .chars()
                .rev()
                .take(8)
                .collect::<Vec<_>>()
                .into_iter()
                .rev()
                .collect();
            out.push_str(&format!(
                "  {} by …{holder}: {:+.1} s to {:+.1} s at {:.1} Mb/s, {}\n",
                r.id,
                r.start - now,
                r.end - now,
                r.rate_mbps,
                if r.committed { "committed" } else { "held" }
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::LinkReservation;

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
        assert!(table(&[], 0.0).contains("manages no link"));
    }
}
