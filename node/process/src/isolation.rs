//! What the execute agent can do, on this machine, to keep jobs apart from
//! it and from each other, found once when it starts: which accounts jobs
//! run as, whether cgroups track them, whether they get a private `/tmp`,
//! and what is weaker than it could be and why. The machine ad carries the
//! summary (`StarlingJobAccounts`, `StarlingJobTracking`,
//! `StarlingPrivateTmp`, `StarlingIsolationLimits`), so `status -l` shows
//! an administrator what holds.
//!
//! The data directory is closed to jobs: when the agent runs as root,
//! everything in it but the control socket is the agent's alone
//! (`0700`/`0600`), whatever modes its parts were made with. A root
//! agent's sandboxes lie outside it, in [`ROOT_EXECUTE_DIR`]`/<agent id>`
//! (HTCondor's `EXECUTE`), whose parents every account can pass through
//! so that a job reaches its sandbox by its path; that directory is `0711`
//! (no job can list the others) and each sandbox is `0700` and its job's
//! account's.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use starling_policies::run_as::{self, RunAs};
use starling_protocol::classad::{ClassAd, Evaluator, Name, Side, Value};

use super::account::{Account, SlotAccounts, SlotLease};
use super::cgroup::{Cgroups, Version};
use super::{confine, Isolation};

/// Entries of the data directory others must reach.
const OPEN_ENTRIES: [&str; 2] = ["execute", "agent.sock"];

/// Where a root agent's sandboxes go unless `[jobs] execute_dir` says.
pub const ROOT_EXECUTE_DIR: &str = "/var/lib/starling/execute";

/// Why the agent cannot start jobs as configured.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("jobs.account: {0}")]
    Account(#[from] super::account::Error),
    #[error("{path}: {source}")]
    Dir {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The runs directory's name in the data directory.
pub const RUNS_DIR: &str = "runs";

fn dir_error(path: &Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Dir {
        path: path.to_owned(),
        source,
    }
}

/// The agent's means of isolation.
#[derive(Debug)]
pub struct Setup {
    agent_is_root: bool,
    configured: Option<Account>,
    run_as_owner: bool,
    slots: Option<SlotAccounts>,
    cgroups: Option<Arc<Cgroups>>,
    private_tmp: bool,
    mount_namespace: bool,
    /// What is weaker than it could be, and why, for the ad and the log.
    limits: Vec<String>,
    /// The job watchdog ([`super::watchdog`]), for an agent of its own
    /// process: kept (its stdin open) as long as the agent runs.
    _watchdog: Option<std::process::Child>,
    /// The records of the jobs this agent runs ([`super::runs`]), for an
    /// agent with a data directory: its jobs outlive a crash of it.
    runs: Option<super::runs::Runs>,
}

/// The account a job runs as, held while it runs.
#[derive(Debug)]
pub struct RunAsAccount {
    pub account: Option<Account>,
    /// The slot account's lock; dropping it frees the account.
    pub lease: Option<SlotLease>,
}

impl RunAsAccount {
    /// Whether every process of the account is this job's.
    pub fn dedicated(&self) -> bool {
        self.lease.is_some()
    }
}

impl Setup {
    /// Finds what this machine allows. Blocking (it may make accounts and
    /// starts a probe process). `name` names the agent's cgroups.
    pub fn prepare(
        config: &Jobs,
        name: &str,
        data_dir: Option<&Path>,
        sandboxes: &Path,
    ) -> Result<Setup, Error> {
        let agent_is_root = rustix::process::geteuid().is_root();
        let mut limits: Vec<String> = Vec::new();
        let configured = match &config.account {
            Some(name) => Some(Account::resolve(name)?),
            None => None,
        };
        std::fs::create_dir_all(sandboxes).map_err(dir_error(sandboxes))?;
        if agent_is_root {
            if let Some(data) = data_dir {
                close_data_dir(data).map_err(dir_error(data))?;
            }
            set_mode(sandboxes, 0o711).map_err(dir_error(sandboxes))?;
            if let Some(closed) = sandboxes
                .ancestors()
                .skip(1)
                .find(|p| std::fs::metadata(p).is_ok_and(|m| m.permissions().mode() & 0o001 == 0))
            {
                limits.push(format!(
                    "{} is closed to other users: jobs reach their sandbox only by relative paths \
                     (set jobs.execute_dir elsewhere)",
                    closed.display()
                ));
            }
        } else {
            set_mode(sandboxes, 0o700).map_err(dir_error(sandboxes))?;
            limits.push(
                "the agent is not root: jobs run as its own user and can read what it can, \
                 its key included"
                    .to_owned(),
            );
        }
        let slots = if agent_is_root && configured.is_none() {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            let most = config.slot_accounts.unwrap_or(cpus.max(64));
            match SlotAccounts::prepare(most, cpus.min(most)) {
                Ok(s) => Some(s),
                Err(e) => {
                    limits.push(format!(
                        "no slot accounts ({e}): jobs share the nobody account, so one can reach another's files and processes"
                    ));
                    None
                }
            }
        } else {
            None
        };
        let cgroups = match config.cgroups.as_str() {
            "off" => {
                limits.push("cgroups are off: daemons a job hides may outlive it".to_owned());
                None
            }
            wanted => {
                let prefer = match wanted {
                    "v1" => Some(Version::V1),
                    "v2" => Some(Version::V2),
                    _ => None,
                };
                match Cgroups::detect(name, prefer) {
                    Ok(c) => {
                        if !c.limits_memory() {
                            limits.push(
                                "no memory controller: request_memory is enforced by polling"
                                    .to_owned(),
                            );
                        }
                        Some(Arc::new(c))
                    }
                    Err(e) => {
                        limits.push(format!(
                            "no cgroups ({e}): jobs are tracked by process group and environment, \
                             and request_memory by polling"
                        ));
                        None
                    }
                }
            }
        };
        // A job's own mount namespace gives it a private /tmp and hides
        // the GPUs it was not given.
        let mounts = if agent_is_root {
            private_tmp_works(sandboxes)
        } else {
            Err("needs root".to_owned())
        };
        let private_tmp = if !config.private_tmp {
            limits.push("private /tmp is off".to_owned());
            false
        } else if let Err(e) = &mounts {
            limits.push(format!("no private /tmp ({e})"));
            false
        } else {
            true
        };
        if let Err(e) = &mounts {
            limits.push(format!(
                "GPUs a job was not given are not hidden from it ({e})"
            ));
        }
        let mount_namespace = mounts.is_ok();
        // Agents inside one process (tests, simulations) have no data
        // directory and share their process's end: no watchdog, and no
        // job outlives them.
        let runs = match data_dir.map(|d| super::runs::Runs::open(&d.join(RUNS_DIR))) {
            Some(Ok(runs)) => Some(runs),
            Some(Err(e)) => {
                limits.push(format!(
                    "no record of running jobs ({e}): jobs die with the agent"
                ));
                None
            }
            None => None,
        };
        // The watchdog of the agent that ran before hands its jobs over.
        if let Some(runs) = &runs {
            super::watchdog::retire_previous(runs);
        }
        let watchdog = match data_dir.map(|_| super::watchdog::start(name, runs.as_ref())) {
            Some(Ok(child)) => Some(child),
            Some(Err(e)) => {
                limits.push(format!(
                    "no job watchdog ({e}): jobs may outlive an agent killed with SIGKILL"
                ));
                None
            }
            None => None,
        };
        for limit in &limits {
            tracing::warn!("job isolation: {limit}");
        }
        Ok(Setup {
            agent_is_root,
            configured,
            run_as_owner: config.run_as_owner,
            slots,
            cgroups,
            private_tmp,
            mount_namespace,
            limits,
            _watchdog: watchdog,
            runs,
        })
    }

    /// Kills what jobs of an earlier run of this agent left in its
    /// cgroups, but for those named in `keep` (taken on again). Blocking.
    pub fn sweep(&self, keep: &[&str]) -> usize {
        self.cgroups.as_ref().map_or(0, |c| c.sweep_except(keep))
    }

    /// The records of the jobs this agent runs, when they outlive it.
    pub fn runs(&self) -> Option<&super::runs::Runs> {
        self.runs.as_ref()
    }

    /// The job cgroups, when jobs have them.
    pub fn cgroups(&self) -> Option<&Arc<Cgroups>> {
        self.cgroups.as_ref()
    }

    /// The summary for the machine ad: attribute name and ClassAd text.
    pub fn attributes(&self) -> Vec<(String, String)> {
        let accounts = if !self.agent_is_root {
            "agent's own user".to_owned()
        } else if let Some(a) = &self.configured {
            format!("configured: {}", a.name)
        } else if self.slots.is_some() {
            "slot accounts".to_owned()
        } else {
            "nobody".to_owned()
        };
        let accounts = if self.run_as_owner && self.agent_is_root {
            format!("{accounts}; own domain's users as themselves")
        } else {
            accounts
        };
        let tracking = match &self.cgroups {
            Some(c) => c.describe(),
            None => "process group and environment".to_owned(),
        };
        vec![
            ("StarlingJobAccounts".to_owned(), quote(&accounts)),
            ("StarlingJobTracking".to_owned(), quote(&tracking)),
            (
                "StarlingPrivateTmp".to_owned(),
                self.private_tmp.to_string(),
            ),
            (
                "StarlingIsolationLimits".to_owned(),
                quote(&self.limits.join("; ")),
            ),
        ]
    }

    /// How a job running as `account` is kept apart.
    pub fn isolation(&self, account: &RunAsAccount) -> Isolation {
        Isolation {
            cgroups: self.cgroups.clone(),
            private_tmp: self.private_tmp,
            mount_namespace: self.mount_namespace,
            dedicated_account: account.dedicated(),
        }
    }

    /// The account `job` runs as ([`run_as::choose`]); `own_domain`: it
    /// comes from this agent's domain. Blocking: it may make a slot
    /// account.
    pub fn account_for(&self, job: &ClassAd, own_domain: bool) -> RunAsAccount {
        // Only a person's account: never a system, slot or shared one.
        let owner = owner(job)
            .and_then(|o| Account::local(&o))
            .filter(Account::is_personal);
        let choice = run_as::choose(run_as::Inputs {
            agent_is_root: self.agent_is_root,
            configured: self.configured.as_ref().map(|a| a.name.as_str()),
            run_as_owner: self.run_as_owner,
            own_domain,
            local_owner: owner.as_ref().map(|a| a.name.as_str()),
        });
        let (account, lease) = match choice {
            RunAs::Agent => (None, None),
            RunAs::Configured(_) => (self.configured.clone(), None),
            RunAs::Owner(_) => (owner, None),
            RunAs::Slot => match self.slots.as_ref().and_then(SlotAccounts::take) {
                Some(lease) => (Some(lease.account.clone()), Some(lease)),
                None => (Some(Account::nobody()), None),
            },
        };
        RunAsAccount { account, lease }
    }
}

/// Clears what an agent that will not run again left on the machine: the
/// processes still in its job cgroups, those groups and its parent
/// groups, and its sandboxes under [`ROOT_EXECUTE_DIR`]. For `testnet
/// down` and tests, whose agents are gone for good (a restarted agent
/// sweeps its own). Blocking.
pub fn forget_agent(agent_id: &str) {
    for cgroups in Cgroups::existing(&format!("starling-{agent_id}")) {
        cgroups.sweep();
        cgroups.release();
    }
    let root = Path::new(ROOT_EXECUTE_DIR).join(agent_id);
    if root.is_dir() {
        let _ = super::Sandbox::sweep(&root, &[]);
        let _ = std::fs::remove_dir(&root);
    }
}

fn owner(job: &ClassAd) -> Option<String> {
    let name = Name::new("Owner").ok()?;
    match Evaluator::with_ads(Some(job), None).eval_attr(Side::My, name.folded()) {
        Value::String(s) => Some(s.to_string()),
        _ => None,
    }
}

fn quote(text: &str) -> String {
    let escaped: String = text
        .chars()
        .flat_map(|c| match c {
            '"' | '\\' => vec!['\\', c],
            c if c.is_control() => vec![' '],
            c => vec![c],
        })
        .collect();
    format!("\"{escaped}\"")
}

fn set_mode(path: &Path, mode: u32) -> std::io::Result<()> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
}

/// Makes the data directory reachable but not listable, and everything in
/// it but [`OPEN_ENTRIES`] the agent's alone.
fn close_data_dir(data: &Path) -> std::io::Result<()> {
    set_mode(data, 0o711)?;
    for entry in std::fs::read_dir(data)? {
        let entry = entry?;
        let name = entry.file_name();
        if OPEN_ENTRIES.iter().any(|o| name.to_str() == Some(o)) {
            continue;
        }
        let meta = entry.metadata()?;
        let mode = meta.permissions().mode() & 0o7777;
        let closed = mode & !0o077;
        if closed != mode {
            set_mode(&entry.path(), closed)?;
        }
    }
    Ok(())
}

/// The agent configuration's `[jobs]` section: how jobs are kept apart
/// from the machine (read by the agent's `config`, decided on here).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Jobs {
    /// The local user every job runs as. Default: unset, meaning a
    /// dedicated slot account per running job (`starling-slot1`, ...,
    /// made on first start) when the agent runs as root, and the agent's
    /// own user otherwise. Setting it needs the agent to run as root; root
    /// is refused.
    pub account: Option<String>,
    /// Whether a job from this machine's own domain whose `Owner` is a
    /// person's local account (uid at least `UID_MIN`, not `nobody` nor a
    /// slot account) runs as that user (HTCondor's `UID_DOMAIN`). Foreign
    /// domains' jobs never do. Default: `false`.
    pub run_as_owner: bool,
    /// How many slot accounts a root agent may make: at most this many
    /// jobs on the machine run under accounts of their own at once; the
    /// rest run as `nobody`. As many as the machine has CPUs are made at
    /// the first start, the others when needed. Default: unset, meaning
    /// the larger of the CPU count and 64.
    pub slot_accounts: Option<usize>,
    /// Job cgroups: `"auto"` (v1 where its memory controller is mounted,
    /// else v2), `"v1"`, `"v2"`, or `"off"` (process groups only).
    /// Default: `"auto"`.
    pub cgroups: String,
    /// Whether each job gets a private `/tmp` and `/var/tmp` in its
    /// sandbox (a mount namespace; needs root). Default: `true`.
    pub private_tmp: bool,
    /// Where job sandboxes go (HTCondor's `EXECUTE`); every parent must
    /// let other users through. Default: unset, meaning
    /// `/var/lib/starling/execute/<agent id>` when the agent runs as root
    /// and `<data_dir>/execute` otherwise.
    pub execute_dir: Option<PathBuf>,
}

impl Default for Jobs {
    fn default() -> Self {
        Self {
            account: None,
            run_as_owner: false,
            slot_accounts: None,
            cgroups: "auto".to_owned(),
            private_tmp: true,
            execute_dir: None,
        }
    }
}

/// Whether a private `/tmp` works for sandboxes on `sandboxes`' file
/// system ([`confine::probe_private_tmp`]), probed once per file system
/// and process. The probe forks the agent: cheap for an agent of its own,
/// but agents sharing one process (the in-process testnets of hundreds)
/// would each fork all of the others' memory, and mark it copy-on-write.
fn private_tmp_works(sandboxes: &Path) -> Result<(), String> {
    use std::collections::HashMap;
    use std::os::unix::fs::MetadataExt as _;
    use std::sync::Mutex;
    static PROBED: Mutex<Option<HashMap<u64, Result<(), String>>>> = Mutex::new(None);
    let Ok(device) = std::fs::metadata(sandboxes).map(|m| m.dev()) else {
        return confine::probe_private_tmp(sandboxes);
    };
    let mut probed = PROBED.lock().unwrap_or_else(|e| e.into_inner());
    probed
        .get_or_insert_with(HashMap::new)
        .entry(device)
        .or_insert_with(|| confine::probe_private_tmp(sandboxes))
        .clone()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_data_directory_is_closed_but_the_sandboxes_reachable() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path();
        std::fs::create_dir(data.join("store")).unwrap();
        set_mode(&data.join("store"), 0o755).unwrap();
        std::fs::write(data.join("agent.log"), "x").unwrap();
        set_mode(&data.join("agent.log"), 0o644).unwrap();
        std::fs::create_dir(data.join("execute")).unwrap();
        set_mode(&data.join("execute"), 0o711).unwrap();
        close_data_dir(data).unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(data), 0o711);
        assert_eq!(mode(&data.join("store")), 0o700);
        assert_eq!(mode(&data.join("agent.log")), 0o600);
        assert_eq!(mode(&data.join("execute")), 0o711);
    }

    #[test]
    fn strings_in_the_ad_are_quoted() {
        assert_eq!(quote(r#"a "b" \ c"#), r#""a \"b\" \\ c""#);
        assert_eq!(quote("a\nb"), "\"a b\"");
    }
}
