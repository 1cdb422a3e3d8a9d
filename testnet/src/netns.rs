//! An emulated network for a testnet (`testnet up --netns`): each agent in
//! a Linux network namespace of its own, each domain a router namespace,
//! the domains joined by a core namespace, every link a veth pair, shaped
//! with `tc tbf` where a rate is given.
//!
//! ```text
//!  agent ns <p>-aNNN        router ns <p>-rD                 core ns <p>-core
//!  eth0 10.D.x.y/16 ──veth── aNNN ┐                 
//!   (tbf host rate)  (tbf host)   ├ br0 10.D.0.1/16
//!  eth0 ...         ──veth── aMMM ┘   up0 10.255.0.(D+1)/16 ──veth── dD ─ br0
//!                                      (tbf uplink rate)   (tbf uplink)
//! ```
//!
//! Agents route through their domain's router; routers forward between
//! their domain and the core, where each knows the other domains' subnets.
//! A host link is shaped both ways at `host_mbps` (the agent's `eth0` and
//! the router's end), a domain's uplink both ways at `uplink_mbps`. Nothing
//! is made in the host's own namespace: deleting the namespaces removes
//! every link, address, route and queue discipline with them, so `down`
//! (also after a crash, also of a half-made testnet) deletes every
//! namespace whose name has the testnet's prefix.
//!
//! With `nat` (`up --netns --nat`), each domain is an organisation behind
//! a NAT: its router masquerades what leaves through `up0` (nftables) and
//! drops connections that start outside, and knows no route to the other
//! domains' subnets, so agents of two domains cannot dial each other. The
//! first agent is then the relay instead: its namespace hangs off the core
//! bridge itself, at the "public" [`RELAY_ADDRESS`], which every router
//! reaches.
//!
//! ```text
//!  relay ns <p>-a000  eth0 10.255.1.1/16 ──veth── r000 ─ br0 (core)
//!  router ns <p>-rD   nft: oifname up0 masquerade; iifname up0 ct state new drop
//!                     (forwarded, and to the router itself)
//! ```
//!
//! [`plan`] is pure: the namespaces and the `ip`/`tc` commands that make
//! them, from the layout. [`create`] runs them; [`destroy`] undoes them;
//! [`enter`] moves a child process into its agent's namespace before it
//! runs (only the network namespace: mounts, cgroups and the rest stay the
//! host's, as the agent needs them).

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context as _};
use serde::{Deserialize, Serialize};

/// Link rates, in Mbit/s; `None`: unshaped.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rates {
    /// Each agent's host link, both ways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_mbps: Option<u32>,
    /// Each domain's uplink to the core, both ways.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub uplink_mbps: Option<u32>,
}

/// The fastest rate accepted, in Mbit/s (100 Gbit/s).
pub const MAX_MBPS: u32 = 100_000;

/// A testnet's emulated network, as `testnet.toml` records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// Every namespace's name starts with it (`st` and a hash of the
    /// testnet's directory).
    pub prefix: String,
    #[serde(flatten)]
    pub rates: Rates,
    /// Each domain behind a NAT, the first agent a relay on the core
    /// (see the module's documentation).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nat: bool,
}

impl Network {
    /// The network of the testnet in `dir` (its absolute path).
    pub fn for_dir(dir: &Path, rates: Rates) -> Network {
        // FNV-1a: a short, stable name per directory.
        let mut hash: u32 = 0x811c_9dc5;
        for b in dir.as_os_str().as_encoded_bytes() {
            hash ^= u32::from(*b);
            hash = hash.wrapping_mul(0x0100_0193);
        }
        Network {
            prefix: format!("st{:06x}", hash & 0xff_ffff),
            rates,
            nat: false,
        }
    }

    /// The address agent `i` of domain `d` listens on: behind NAT the
    /// first agent is the relay, at [`RELAY_ADDRESS`].
    pub fn listen_address(&self, d: usize, i: usize) -> String {
        if self.nat && i == 0 {
            RELAY_ADDRESS.to_owned()
        } else {
            agent_address(d, i)
        }
    }

    /// Agent `i`'s namespace.
    pub fn agent_ns(&self, i: usize) -> String {
        format!("{}-a{i:03}", self.prefix)
    }

    fn router_ns(&self, d: usize) -> String {
        format!("{}-r{d}", self.prefix)
    }

    fn core_ns(&self) -> String {
        format!("{}-core", self.prefix)
    }
}

/// The relay's "public" address on the core (`up --netns --nat`).
pub const RELAY_ADDRESS: &str = "10.255.1.1";

/// Agent `i`'s address in domain `d` (at most 250 domains, 50 000 agents).
pub fn agent_address(d: usize, i: usize) -> String {
    format!("10.{d}.{}.{}", 1 + i / 200, 10 + i % 200)
}

/// Checks the rates and the size a network can have.
pub fn check(rates: &Rates, domains: usize) -> anyhow::Result<()> {
    for (flag, rate) in [
        ("--host-mbps", rates.host_mbps),
        ("--uplink-mbps", rates.uplink_mbps),
    ] {
        if let Some(r) = rate {
            if r == 0 || r > MAX_MBPS {
                bail!("{flag} {r}: a rate between 1 and {MAX_MBPS} Mbit/s");
            }
        }
    }
    if domains > 250 {
        bail!("--netns makes at most 250 domains (one subnet each); {domains} asked");
    }
    Ok(())
}

/// One command of a plan: the program and its arguments.
pub type Step = Vec<String>;

/// The commands that make the network for agents in `domains` (agent `i`
/// in domain `domains[i]`), in order: namespaces, links, addresses, routes,
/// shaping.
pub fn plan(net: &Network, agent_domains: &[usize], domains: usize) -> Vec<Step> {
    let mut steps: Vec<Step> = Vec::new();
    let mut add = |words: &[&str]| steps.push(words.iter().map(|w| (*w).to_owned()).collect());
    let core = net.core_ns();
    add(&["ip", "netns", "add", &core]);
    add(&["ip", "-n", &core, "link", "set", "lo", "up"]);
    add(&["ip", "-n", &core, "link", "add", "br0", "type", "bridge"]);
    add(&["ip", "-n", &core, "link", "set", "br0", "up"]);
    for d in 0..domains {
        let router = net.router_ns(d);
        let down = format!("d{d}");
        let uplink_address = format!("10.255.0.{}/16", d + 1);
        let subnet_gateway = format!("10.{d}.0.1/16");
        add(&["ip", "netns", "add", &router]);
        add(&["ip", "-n", &router, "link", "set", "lo", "up"]);
        add(&[
            "ip",
            "netns",
            "exec",
            &router,
            "sysctl",
            "-qw",
            "net.ipv4.ip_forward=1",
        ]);
        add(&["ip", "-n", &router, "link", "add", "br0", "type", "bridge"]);
        add(&[
            "ip",
            "-n",
            &router,
            "address",
            "add",
            &subnet_gateway,
            "dev",
            "br0",
        ]);
        add(&["ip", "-n", &router, "link", "set", "br0", "up"]);
        add(&[
            "ip", "-n", &router, "link", "add", "up0", "type", "veth", "peer", "name", &down,
            "netns", &core,
        ]);
        add(&[
            "ip",
            "-n",
            &router,
            "address",
            "add",
            &uplink_address,
            "dev",
            "up0",
        ]);
        add(&["ip", "-n", &router, "link", "set", "up0", "up"]);
        add(&["ip", "-n", &core, "link", "set", &down, "master", "br0"]);
        add(&["ip", "-n", &core, "link", "set", &down, "up"]);
        if net.nat {
            steps_nat(&mut add, &router);
        }
        for e in (0..domains).filter(|e| *e != d && !net.nat) {
            let subnet = format!("10.{e}.0.0/16");
            let via = format!("10.255.0.{}", e + 1);
            add(&["ip", "-n", &router, "route", "add", &subnet, "via", &via]);
        }
        if let Some(rate) = net.rates.uplink_mbps {
            for (ns, dev) in [(router.as_str(), "up0"), (core.as_str(), down.as_str())] {
                steps_shape(&mut add, ns, dev, rate);
            }
        }
    }
    for (i, &d) in agent_domains.iter().enumerate() {
        let ns = net.agent_ns(i);
        if net.nat && i == 0 {
            // The relay: on the core bridge, at the public address.
            let address = format!("{RELAY_ADDRESS}/16");
            add(&["ip", "netns", "add", &ns]);
            add(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
            add(&[
                "ip", "-n", &core, "link", "add", "r000", "type", "veth", "peer", "name", "eth0",
                "netns", &ns,
            ]);
            add(&["ip", "-n", &core, "link", "set", "r000", "master", "br0"]);
            add(&["ip", "-n", &core, "link", "set", "r000", "up"]);
            add(&["ip", "-n", &ns, "address", "add", &address, "dev", "eth0"]);
            add(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
            continue;
        }
        let router = net.router_ns(d);
        let port = format!("a{i:03}");
        let address = format!("{}/16", agent_address(d, i));
        let gateway = format!("10.{d}.0.1");
        add(&["ip", "netns", "add", &ns]);
        add(&["ip", "-n", &ns, "link", "set", "lo", "up"]);
        add(&[
            "ip", "-n", &router, "link", "add", &port, "type", "veth", "peer", "name", "eth0",
            "netns", &ns,
        ]);
        add(&["ip", "-n", &router, "link", "set", &port, "master", "br0"]);
        add(&["ip", "-n", &router, "link", "set", &port, "up"]);
        add(&["ip", "-n", &ns, "address", "add", &address, "dev", "eth0"]);
        add(&["ip", "-n", &ns, "link", "set", "eth0", "up"]);
        add(&["ip", "-n", &ns, "route", "add", "default", "via", &gateway]);
        if let Some(rate) = net.rates.host_mbps {
            for (ns, dev) in [(ns.as_str(), "eth0"), (router.as_str(), port.as_str())] {
                steps_shape(&mut add, ns, dev, rate);
            }
        }
    }
    steps
}

/// The NAT of a router namespace: what leaves through `up0` takes the
/// router's address (masquerade), and a connection that starts on the
/// `up0` side is dropped, silently, whether forwarded or for the router
/// itself (what answers ours passes, by connection tracking), as at a home
/// or office router.
fn steps_nat(add: &mut impl FnMut(&[&str]), router: &str) {
    let nft = |words: &[&str]| -> Vec<String> {
        ["ip", "netns", "exec", router, "nft"]
            .iter()
            .chain(words)
            .map(|w| (*w).to_owned())
            .collect()
    };
    for step in [
        nft(&["add", "table", "ip", "starling"]),
        nft(&[
            "add",
            "chain",
            "ip",
            "starling",
            "masq",
            "{",
            "type",
            "nat",
            "hook",
            "postrouting",
            "priority",
            "100",
            ";",
            "}",
        ]),
        nft(&[
            "add",
            "rule",
            "ip",
            "starling",
            "masq",
            "oifname",
            "up0",
            "masquerade",
        ]),
        nft(&[
            "add", "chain", "ip", "starling", "guard", "{", "type", "filter", "hook", "forward",
            "priority", "0", ";", "policy", "accept", ";", "}",
        ]),
        nft(&[
            "add", "rule", "ip", "starling", "guard", "iifname", "up0", "ct", "state", "new",
            "drop",
        ]),
        // Nor does the router answer one meant for itself with a reset, as
        // its kernel would: it stays silent, so that a peer's early hole
        // punching attempt is retried, not refused.
        nft(&[
            "add", "chain", "ip", "starling", "inward", "{", "type", "filter", "hook", "input",
            "priority", "0", ";", "policy", "accept", ";", "}",
        ]),
        nft(&[
            "add", "rule", "ip", "starling", "inward", "iifname", "up0", "ct", "state", "new",
            "drop",
        ]),
    ] {
        let words: Vec<&str> = step.iter().map(String::as_str).collect();
        add(&words);
    }
}

/// A token bucket at `mbps` on `dev`'s egress in namespace `ns`: a burst of
/// a hundredth of a second at the rate (at least 32 KiB, so that one
/// packet and the kernel's timer granularity never starve it).
fn steps_shape(add: &mut impl FnMut(&[&str]), ns: &str, dev: &str, mbps: u32) {
    let rate = format!("{mbps}mbit");
    let burst_bytes = (u64::from(mbps) * 1_000_000 / 8 / 100).max(32 * 1024);
    let burst = burst_bytes.to_string();
    add(&[
        "tc", "-n", ns, "qdisc", "add", "dev", dev, "root", "tbf", "rate", &rate, "burst", &burst,
        "latency", "25ms",
    ]);
}

/// Makes the network: runs [`plan`]'s commands, failing on the first that
/// fails (naming it and what it said). What was made is left for
/// [`destroy`], which `up` calls on failure.
pub fn create(net: &Network, agent_domains: &[usize], domains: usize) -> anyhow::Result<()> {
    if !rustix::process::geteuid().is_root() {
        bail!(
            "--netns needs root (network namespaces, veth pairs and tc are root's): run the \
             testnet as root, or leave --netns out for a testnet on loopback"
        );
    }
    for step in plan(net, agent_domains, domains) {
        run(&step)?;
    }
    Ok(())
}

fn run(step: &[String]) -> anyhow::Result<()> {
    let out = Command::new(&step[0])
        .args(&step[1..])
        .output()
        .with_context(|| format!("running {} (is iproute2 installed?)", step[0]))?;
    if !out.status.success() && step.iter().any(|w| w == "nft") {
        bail!(
            "`{}` failed ({}): {} (is nftables installed? `--nat` needs it)",
            step.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    if !out.status.success() {
        bail!(
            "`{}` failed ({}): {}",
            step.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(())
}

/// The namespaces whose names start with `prefix-`.
pub fn existing(prefix: &str) -> anyhow::Result<Vec<String>> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .context("running ip netns list (is iproute2 installed?)")?;
    let want = format!("{prefix}-");
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| name.starts_with(&want))
        .map(str::to_owned)
        .collect())
}

/// Deletes every namespace of the network (agents' first; their processes
/// must be gone, or the kernel keeps the namespace until they are).
/// Returns how many were deleted.
pub fn destroy(net: &Network) -> anyhow::Result<usize> {
    let mut names = existing(&net.prefix)?;
    // Agents, then routers, then the core: each veth goes with its first end.
    names.sort_by_key(|n| (!n.contains("-a"), !n.contains("-r"), n.clone()));
    let mut failed = Vec::new();
    for name in &names {
        let out = Command::new("ip").args(["netns", "del", name]).output()?;
        if !out.status.success() {
            failed.push(format!(
                "{name}: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    if !failed.is_empty() {
        bail!("could not delete namespaces: {}", failed.join("; "));
    }
    Ok(names.len())
}

/// The command that runs `program` in agent `i`'s network namespace:
/// `nsenter --net=/run/netns/<ns> -- program`, which enters that namespace
/// only (mounts, cgroups and the rest stay the host's, as the agent needs
/// them) and then becomes `program`, keeping its pid.
pub fn command_in(net: &Network, i: usize, program: &Path) -> anyhow::Result<Command> {
    let path = format!("/run/netns/{}", net.agent_ns(i));
    if !Path::new(&path).exists() {
        bail!("{path} is gone: the testnet's network was removed; bring the testnet up again");
    }
    let mut command = Command::new("nsenter");
    command.arg(format!("--net={path}")).arg("--").arg(program);
    Ok(command)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(host: Option<u32>, uplink: Option<u32>) -> Network {
        Network::for_dir(
            Path::new("/tmp/x"),
            Rates {
                host_mbps: host,
                uplink_mbps: uplink,
            },
        )
    }

    #[test]
    fn names_are_short_stable_and_per_directory() {
        let a = net(None, None);
        assert_eq!(a, net(None, None));
        assert_ne!(
            a.prefix,
            Network::for_dir(Path::new("/tmp/y"), Rates::default()).prefix
        );
        assert!(a.agent_ns(999).len() <= 15, "{}", a.agent_ns(999));
        assert_eq!(agent_address(2, 0), "10.2.1.10");
        assert_eq!(agent_address(0, 201), "10.0.2.11");
    }

    #[test]
    fn the_plan_links_every_agent_to_its_router_and_every_router_to_the_core() {
        let n = net(Some(100), Some(20));
        let steps = plan(&n, &[0, 1, 0], 2);
        let text: Vec<String> = steps.iter().map(|s| s.join(" ")).collect();
        let has = |needle: &str| text.iter().any(|t| t.contains(needle));
        assert!(has(&format!("ip netns add {}-a002", n.prefix)));
        assert!(has(&format!(
            "ip -n {p}-r1 link add a001 type veth peer name eth0 netns {p}-a001",
            p = n.prefix
        )));
        assert!(has("address add 10.1.1.11/16 dev eth0"));
        assert!(has("route add 10.1.0.0/16 via 10.255.0.2"));
        assert!(has("route add 10.0.0.0/16 via 10.255.0.1"));
        // Two uplinks and three host links, each shaped both ways.
        let shaped = |rate: &str| text.iter().filter(|t| t.contains(rate)).count();
        assert_eq!(shaped("tbf rate 20mbit"), 4);
        assert_eq!(shaped("tbf rate 100mbit"), 6);
        // Unshaped: no tc at all.
        assert!(plan(&net(None, None), &[0], 1).iter().all(|s| s[0] != "tc"));
    }

    #[test]
    fn behind_nat_routers_masquerade_know_no_other_domain_and_the_relay_is_on_the_core() {
        let mut n = net(None, None);
        n.nat = true;
        let text: Vec<String> = plan(&n, &[0, 1, 0], 2)
            .iter()
            .map(|s| s.join(" "))
            .collect();
        let has = |needle: &str| text.iter().any(|t| t.contains(needle));
        assert!(has(&format!(
            "ip netns exec {}-r1 nft add rule ip starling masq oifname up0 masquerade",
            n.prefix
        )));
        assert!(has("iifname up0 ct state new drop"));
        assert!(!has("route add 10.1.0.0/16"), "{text:#?}");
        assert!(has(&format!(
            "ip -n {p}-core link add r000 type veth peer name eth0 netns {p}-a000",
            p = n.prefix
        )));
        assert!(has(&format!("address add {RELAY_ADDRESS}/16 dev eth0")));
        assert!(has("address add 10.0.1.12/16 dev eth0"));
        assert_eq!(n.listen_address(0, 0), RELAY_ADDRESS);
        assert_eq!(n.listen_address(1, 1), agent_address(1, 1));
        // Without NAT the first agent is an agent like the others.
        assert_eq!(net(None, None).listen_address(0, 0), agent_address(0, 0));
    }

    #[test]
    fn bad_rates_and_too_many_domains_are_refused_naming_the_flag() {
        let err = check(
            &Rates {
                host_mbps: Some(0),
                uplink_mbps: None,
            },
            1,
        )
        .unwrap_err();
        assert!(err.to_string().contains("--host-mbps 0"), "{err}");
        let err = check(
            &Rates {
                host_mbps: None,
                uplink_mbps: Some(MAX_MBPS + 1),
            },
            1,
        )
        .unwrap_err();
        assert!(err.to_string().contains("--uplink-mbps"), "{err}");
        assert!(check(&Rates::default(), 251).is_err());
    }
}
