//! The start barrier of a co-allocated (parallel-universe) job's node on
//! the execute side.
//!
//! The starter stages the node's input as for any job, then waits here
//! instead of starting it: the submit agent asks through the claim
//! protocol ([`claim::Request::Barrier`]) until every node is ready, then
//! releases them all with the list of nodes. The starter writes that list
//! into the sandbox ([`CONTACT_FILE`]) and starts the job with HTCondor's
//! `_CONDOR_PROCNO` and `_CONDOR_NPROCS` and Starling's
//! `STARLING_PARALLEL_CONTACT_FILE` and `STARLING_PARALLEL_HOSTS`. A
//! barrier never released ends with the claim (its lease lapses or the
//! submit agent releases it): nothing of the job ran.
//!
//! [`claim::Request::Barrier`]: starling_protocol::claim::Request::Barrier

use std::path::Path;
use std::sync::Mutex;

use starling_protocol::claim::Contact;
use starling_protocol::classad::ClassAd;
use tokio::sync::Notify;

/// The file in the sandbox that lists every node, one per line:
/// `NODE HOST MACHINE`.
pub const CONTACT_FILE: &str = ".parallel_contacts";

/// One node's barrier, shared by its starter and the startd.
#[derive(Debug, Default)]
pub struct Barrier {
    state: Mutex<State>,
    released: Notify,
}

#[derive(Debug, Default)]
struct State {
    ready: bool,
    failed: Option<String>,
    contacts: Option<Vec<Contact>>,
}

/// What the startd answers about a barrier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub ready: bool,
    pub failed: Option<String>,
}

impl Barrier {
    /// Whether `job` waits at a barrier before it starts: a parallel
    /// universe node (`JobUniverse` 11).
    pub fn wanted(job: &ClassAd) -> bool {
        crate::ad::integer(job, "JobUniverse") == Some(11)
    }

    pub fn status(&self) -> Status {
        let state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        Status {
            ready: state.ready,
            failed: state.failed.clone(),
        }
    }

    /// The starter has staged the input: the job may start once released.
    pub fn arrive(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).ready = true;
    }

    /// The node cannot start (its input failed): the submit agent gives the
    /// co-allocation up.
    pub fn fail(&self, reason: &str) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.contacts.is_none() {
            state.failed.get_or_insert_with(|| reason.to_owned());
        }
    }

    /// Releases the node with every node's contact; a second release
    /// changes nothing.
    pub fn release(&self, contacts: Vec<Contact>) {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.contacts.is_none() && state.failed.is_none() {
            state.contacts = Some(contacts);
            self.released.notify_one();
        }
    }

    /// Waits for the release; the contacts.
    pub async fn released(&self) -> Vec<Contact> {
        loop {
            let notified = self.released.notified();
            if let Some(c) = self.contacts() {
                return c;
            }
            notified.await;
        }
    }

    /// The contacts it was released with, if it was.
    pub fn contacts(&self) -> Option<Vec<Contact>> {
        self.state
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contacts
            .clone()
    }
}

/// Writes the contact file into `sandbox`.
pub fn write_contacts(sandbox: &Path, contacts: &[Contact]) -> std::io::Result<()> {
    let mut sorted: Vec<&Contact> = contacts.iter().collect();
    sorted.sort_by_key(|c| c.node);
    let text: String = sorted
        .iter()
        .map(|c| format!("{} {} {}\n", c.node, c.host, c.machine))
        .collect();
    std::fs::write(sandbox.join(CONTACT_FILE), text)
}

/// The variables a released node's job gets: its number (`StarlingNode`
/// of its ad), the node count, the contact file and the hosts in node
/// order.
pub fn environment(job: &ClassAd, sandbox: &Path, contacts: &[Contact]) -> Vec<(String, String)> {
    let node = crate::ad::integer(job, "StarlingNode").unwrap_or(0);
    let mut sorted: Vec<&Contact> = contacts.iter().collect();
    sorted.sort_by_key(|c| c.node);
    let hosts: Vec<&str> = sorted.iter().map(|c| c.host.as_str()).collect();
    vec![
        ("_CONDOR_PROCNO".to_owned(), node.to_string()),
        ("_CONDOR_NPROCS".to_owned(), contacts.len().to_string()),
        (
            "STARLING_PARALLEL_CONTACT_FILE".to_owned(),
            sandbox.join(CONTACT_FILE).to_string_lossy().into_owned(),
        ),
        ("STARLING_PARALLEL_HOSTS".to_owned(), hosts.join(" ")),
    ]
}

/// The host the other nodes reach this machine's jobs at, from the
/// addresses its agent listens on: the first routable IP, else a loopback
/// one (a testnet on one machine), else `hostname`.
pub fn contact_host(listen: &[libp2p::Multiaddr], hostname: &str) -> String {
    use libp2p::multiaddr::Protocol;
    let ips: Vec<std::net::IpAddr> = listen
        .iter()
        .filter(|a| !a.iter().any(|p| matches!(p, Protocol::P2pCircuit)))
        .filter_map(|a| {
            a.iter().find_map(|p| match p {
                Protocol::Ip4(ip) => Some(std::net::IpAddr::V4(ip)),
                Protocol::Ip6(ip) => Some(std::net::IpAddr::V6(ip)),
                _ => None,
            })
        })
        .filter(|ip| !ip.is_unspecified())
        .collect();
    ips.iter()
        .find(|ip| !ip.is_loopback())
        .or_else(|| ips.first())
        .map(ToString::to_string)
        .unwrap_or_else(|| hostname.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn contact(node: u32, host: &str) -> Contact {
        Contact {
            node,
            host: host.to_owned(),
            machine: format!("slot1@m{node}"),
        }
    }

    #[tokio::test]
    async fn a_node_starts_only_once_released_and_a_failed_one_never() {
        let b = Barrier::default();
        assert!(!b.status().ready);
        b.arrive();
        assert!(b.status().ready);
        let waiting = tokio::time::timeout(std::time::Duration::from_millis(50), b.released());
        assert!(waiting.await.is_err(), "not released yet");
        b.release(vec![contact(1, "b"), contact(0, "a")]);
        let got = tokio::time::timeout(std::time::Duration::from_secs(5), b.released())
            .await
            .unwrap();
        assert_eq!(got.len(), 2);
        // A failure after the release changes nothing.
        b.fail("late");
        assert_eq!(b.status().failed, None);
        let f = Barrier::default();
        f.fail("input missing");
        f.release(vec![contact(0, "a")]);
        assert_eq!(f.contacts(), None);
        assert_eq!(f.status().failed.as_deref(), Some("input missing"));
    }

    #[test]
    fn the_contact_file_lists_nodes_in_order_and_the_environment_names_it() {
        let dir = tempfile::tempdir().unwrap();
        let contacts = [contact(1, "10.0.0.2"), contact(0, "10.0.0.1")];
        write_contacts(dir.path(), &contacts).unwrap();
        let text = std::fs::read_to_string(dir.path().join(CONTACT_FILE)).unwrap();
        assert_eq!(text, "0 10.0.0.1 slot1@m0\n1 10.0.0.2 slot1@m1\n");
        let job = starling_protocol::classad::parse_ad("[StarlingNode = 1]").unwrap();
        let env = environment(&job, dir.path(), &contacts);
        assert!(env.contains(&("_CONDOR_PROCNO".into(), "1".into())));
        assert!(env.contains(&("_CONDOR_NPROCS".into(), "2".into())));
        assert!(env.contains(&("STARLING_PARALLEL_HOSTS".into(), "10.0.0.1 10.0.0.2".into())));
    }

    #[test]
    fn the_contact_host_is_a_routable_address_when_there_is_one() {
        let a = |s: &str| s.parse::<libp2p::Multiaddr>().unwrap();
        assert_eq!(
            contact_host(&[a("/ip4/127.0.0.1/tcp/1"), a("/ip4/10.1.2.3/tcp/1")], "h"),
            "10.1.2.3"
        );
        assert_eq!(contact_host(&[a("/ip4/127.0.0.1/tcp/1")], "h"), "127.0.0.1");
        assert_eq!(contact_host(&[a("/ip4/0.0.0.0/tcp/1")], "h"), "h");
    }
}
