//! Which local account a job runs as on the execute agent, as HTCondor's
//! starter decides between `SLOT<N>_USER`, the submitter's own account
//! (`UID_DOMAIN`) and `nobody`.
//!
//! The rule, in order:
//! 1. An agent that does not run as root cannot change user: the job runs
//!    as the agent's own user ([`RunAs::Agent`]).
//! 2. An account named in the configuration (`[jobs] account`) is used for
//!    every job.
//! 3. A job from this machine's own domain whose owner is a local, non-root
//!    user runs as that user when the configuration allows it
//!    (`[jobs] run_as_owner`, HTCondor's `UID_DOMAIN`). A foreign domain's
//!    job never does, whatever its `Owner` says: a name means nothing
//!    across organisations.
//! 4. Otherwise the job gets a dedicated slot account that no other
//!    running job holds ([`RunAs::Slot`]), so two jobs never share a user;
//!    with none free (or none could be made), the agent falls back to
//!    `nobody`, the job still in a sandbox of its own.
//!
//! Root is never an answer: the caller refuses a configured or owner
//! account with uid 0 before asking.

/// What the rule needs to know.
#[derive(Debug, Clone, Copy)]
pub struct Inputs<'a> {
    /// The agent runs as root.
    pub agent_is_root: bool,
    /// `[jobs] account`, already checked to be a local non-root user.
    pub configured: Option<&'a str>,
    /// `[jobs] run_as_owner`.
    pub run_as_owner: bool,
    /// The job comes from this agent's own domain.
    pub own_domain: bool,
    /// The job's `Owner` when it names a local, non-root user.
    pub local_owner: Option<&'a str>,
}

/// The account chosen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunAs {
    /// The agent's own user (a non-root agent).
    Agent,
    /// The configured account.
    Configured(String),
    /// The job's owner, a local user.
    Owner(String),
    /// A dedicated slot account of its own (`nobody` when none is free).
    Slot,
}

/// Chooses the account a job runs as.
pub fn choose(inputs: Inputs<'_>) -> RunAs {
    if !inputs.agent_is_root {
        return RunAs::Agent;
    }
    if let Some(name) = inputs.configured {
        return RunAs::Configured(name.to_owned());
    }
    if inputs.run_as_owner && inputs.own_domain {
        if let Some(owner) = inputs.local_owner {
            return RunAs::Owner(owner.to_owned());
        }
    }
    RunAs::Slot
}

/// The account a scheduler- or local-universe job runs as on the submit
/// agent itself, as HTCondor's schedd runs them: its owner's.
///
/// An agent that is not root cannot change user and runs it as itself
/// ([`RunAs::Agent`]), as it runs every job. A root agent runs it as the
/// owner's own local account (`local_owner`: a local, non-root person's
/// account of that name), and otherwise not at all: no slot account
/// stands in, since the job works in its owner's directory with its
/// owner's files, and root never runs a job. The error says why, for the
/// job's hold reason.
pub fn in_place(
    agent_is_root: bool,
    owner: &str,
    local_owner: Option<&str>,
) -> Result<RunAs, String> {
    if !agent_is_root {
        return Ok(RunAs::Agent);
    }
    match local_owner {
        Some(name) => Ok(RunAs::Owner(name.to_owned())),
        None => Err(format!(
            "the submit agent runs as root and runs no job as root or as another user: \
             the job's owner {owner:?} has no local account of a person on this machine \
             to run it as"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jobs_run_in_place_as_their_owner_and_never_as_root() {
        assert_eq!(in_place(false, "alice", None), Ok(RunAs::Agent));
        assert_eq!(
            in_place(true, "alice", Some("alice")),
            Ok(RunAs::Owner("alice".into()))
        );
        let refused = in_place(true, "root", None).unwrap_err();
        assert!(refused.contains("\"root\""), "{refused}");
        assert!(refused.contains("runs no job as root"), "{refused}");
    }

    fn inputs() -> Inputs<'static> {
        Inputs {
            agent_is_root: true,
            configured: None,
            run_as_owner: false,
            own_domain: true,
            local_owner: Some("alice"),
        }
    }

    #[test]
    fn a_non_root_agent_runs_jobs_as_itself() {
        let mut i = inputs();
        i.agent_is_root = false;
        i.configured = Some("jobs");
        i.run_as_owner = true;
        assert_eq!(choose(i), RunAs::Agent);
    }

    #[test]
    fn a_root_agent_gives_each_job_a_slot_account_by_default() {
        assert_eq!(choose(inputs()), RunAs::Slot);
    }

    #[test]
    fn a_configured_account_wins() {
        let mut i = inputs();
        i.configured = Some("condor");
        i.run_as_owner = true;
        assert_eq!(choose(i), RunAs::Configured("condor".into()));
    }

    #[test]
    fn owners_run_as_themselves_only_from_their_own_domain_and_when_allowed() {
        let mut i = inputs();
        assert_eq!(choose(i), RunAs::Slot, "not allowed by default");
        i.run_as_owner = true;
        assert_eq!(choose(i), RunAs::Owner("alice".into()));
        i.own_domain = false;
        assert_eq!(choose(i), RunAs::Slot, "a foreign job never does");
        i.own_domain = true;
        i.local_owner = None;
        assert_eq!(choose(i), RunAs::Slot, "an owner with no local account");
    }
}
