//! Who may do what through an agent's control socket.
//!
//! The agent learns who is asking from the socket (the peer's uid, and its
//! name from the machine's user database), never from the request. These
//! rules then decide, HTCondor's way:
//!
//! - **Connecting.** An agent running as root serves every local user. An
//!   agent running as anyone else serves only its own user and root: it
//!   cannot read or write files with another user's rights, so it must not
//!   take their jobs.
//! - **Reading** (`q`, `history`, `status`, `why`, `userprio`, `info`,
//!   `peers`) is open to everyone the agent serves.
//! - **Submitting** needs a name: a uid with no entry in the user database
//!   cannot own jobs, except the agent's own user.
//! - **Jobs** (`rm`, `hold`, `release`, `qedit`): a user changes only their
//!   own jobs. A job named by its id, its cluster or its owner that belongs
//!   to someone else is refused with a message saying so; a constraint alone
//!   quietly selects among the asker's own jobs. Administrators change any.
//! - **Checkpoints**: `ckpt ls` reads (open to everyone, as `q -l` is);
//!   `ckpt get` hands out a job's files, so only its owner and
//!   administrators may ([`checkpoint_access`]).
//! - **The machine** (`drain`, `userprio -setfactor`, `shutdown`): only
//!   administrators.
//!
//! Administrators are root, the agent's own user, and the users the
//! configuration names (`[control] administrators`).

use std::fmt;

/// The root user's uid.
pub const ROOT_UID: u32 = 0;

/// Who is asking, as the socket says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asker<'a> {
    pub uid: u32,
    /// The uid's name in the user database, if it has one.
    pub name: Option<&'a str>,
}

impl Asker<'_> {
    /// The name jobs and messages show: the user name, else `uid<N>`.
    pub fn display_name(&self) -> String {
        match self.name {
            Some(name) => name.to_owned(),
            None => format!("uid{}", self.uid),
        }
    }
}

/// What the agent is, for these rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agent<'a> {
    /// The uid the agent runs as.
    pub uid: u32,
    /// `[control] administrators`.
    pub administrators: &'a [String],
}

impl Agent<'_> {
    fn is_root(&self) -> bool {
        self.uid == ROOT_UID
    }
}

/// What a request does, for these rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// Looks at the pool, the queue or the history.
    Read,
    /// Queues jobs owned by the asker.
    Submit,
    /// Holds, releases, removes or edits jobs (each job is then checked
    /// with [`job_access`]).
    ChangeJobs,
    /// Changes the agent or the machine: drain, priority factors, shutdown.
    ChangeMachine,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Read => "read",
            Operation::Submit => "submit jobs",
            Operation::ChangeJobs => "change jobs",
            Operation::ChangeMachine => "change this machine",
        })
    }
}

/// Why a request or a job was refused, for the person asking.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// A non-root agent serves its own user and root only.
    #[error(
        "this agent runs as uid {agent_uid} and serves only that user and root; \
         {asker} should use an agent of their own or the machine's agent (run as root)"
    )]
    NotServed { agent_uid: u32, asker: String },
    /// A uid with no name cannot own jobs.
    #[error(
        "uid {uid} has no entry in the user database (/etc/passwd); \
         only named local users may submit jobs"
    )]
    Nameless { uid: u32 },
    /// A machine-wide command from someone who is not an administrator.
    #[error(
        "permission denied: only root, the agent's own user or an administrator \
         ([control] administrators) may {operation}; {asker} is none of them"
    )]
    NotAdministrator { operation: Operation, asker: String },
    /// Someone else's job.
    #[error(
        "permission denied: the job belongs to {owner}, and {asker} may change only \
         their own jobs"
    )]
    NotOwner { owner: String, asker: String },
    /// Someone else's job's checkpoint.
    #[error(
        "permission denied: the job belongs to {owner}; only its owner or an \
         administrator may fetch its checkpoint, and {asker} is neither"
    )]
    NotCheckpointOwner { owner: String, asker: String },
    #[error(
        "the job belongs to {owner}: only its owner or an administrator may read its \
         output, and {asker} is neither"
    )]
    NotOutputOwner { owner: String, asker: String },
}

/// Whether the asker is an administrator: root, the agent's own user, or
/// named in the configuration.
pub fn is_administrator(asker: &Asker<'_>, agent: &Agent<'_>) -> bool {
    asker.uid == ROOT_UID
        || asker.uid == agent.uid
        || asker
            .name
            .is_some_and(|name| agent.administrators.iter().any(|a| a == name))
}

/// Whether the agent serves a connection from `asker` at all.
pub fn serves(asker: &Asker<'_>, agent: &Agent<'_>) -> Result<(), Refusal> {
    if agent.is_root() || asker.uid == agent.uid || asker.uid == ROOT_UID {
        Ok(())
    } else {
        Err(Refusal::NotServed {
            agent_uid: agent.uid,
            asker: asker.display_name(),
        })
    }
}

/// Whether `asker` may do `operation` (for jobs, per job see
/// [`job_access`]).
pub fn may(operation: Operation, asker: &Asker<'_>, agent: &Agent<'_>) -> Result<(), Refusal> {
    serves(asker, agent)?;
    match operation {
        Operation::Read | Operation::ChangeJobs => Ok(()),
        Operation::Submit => {
            if asker.name.is_some() || asker.uid == agent.uid {
                Ok(())
            } else {
                Err(Refusal::Nameless { uid: asker.uid })
            }
        }
        Operation::ChangeMachine => {
            if is_administrator(asker, agent) {
                Ok(())
            } else {
                Err(Refusal::NotAdministrator {
                    operation,
                    asker: asker.display_name(),
                })
            }
        }
    }
}

/// What a job-changing request does to one selected job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JobAccess {
    /// The asker may change it.
    Allowed,
    /// Named by the asker but not theirs: reported, left alone.
    Refused(Refusal),
    /// Selected by a constraint alone and not theirs: left alone silently.
    Ignored,
}

/// Whether `asker` may change a job whose `Owner` is `owner`. `named`: the
/// request named the job (its id, its cluster or its owner) rather than
/// selecting it by a constraint alone.
pub fn job_access(
    asker: &Asker<'_>,
    agent: &Agent<'_>,
    owner: Option<&str>,
    named: bool,
) -> JobAccess {
    if is_administrator(asker, agent) {
        return JobAccess::Allowed;
    }
    let mine = match (owner, asker.name) {
        (Some(owner), Some(name)) => owner == name,
        // A nameless uid owns no jobs (it cannot submit).
        _ => false,
    };
    if mine {
        JobAccess::Allowed
    } else if named {
        JobAccess::Refused(Refusal::NotOwner {
            owner: owner.unwrap_or("nobody").to_owned(),
            asker: asker.display_name(),
        })
    } else {
        JobAccess::Ignored
    }
}

/// Whether `asker` may fetch the files of a checkpoint of a job whose
/// `Owner` is `owner` (`starling ckpt get`): its owner and administrators
/// only, since the files are the job's output so far.
pub fn checkpoint_access(
    asker: &Asker<'_>,
    agent: &Agent<'_>,
    owner: Option<&str>,
) -> Result<(), Refusal> {
    match job_access(asker, agent, owner, true) {
        JobAccess::Allowed => Ok(()),
        _ => Err(Refusal::NotCheckpointOwner {
            owner: owner.unwrap_or("nobody").to_owned(),
            asker: asker.display_name(),
        }),
    }
}

/// Whether `asker` may read the output of a running job whose `Owner` is
/// `owner` (`starling tail`): its owner and administrators only, as for
/// its checkpoint.
pub fn output_access(
    asker: &Asker<'_>,
    agent: &Agent<'_>,
    owner: Option<&str>,
) -> Result<(), Refusal> {
    match job_access(asker, agent, owner, true) {
        JobAccess::Allowed => Ok(()),
        _ => Err(Refusal::NotOutputOwner {
            owner: owner.unwrap_or("nobody").to_owned(),
            asker: asker.display_name(),
        }),
    }
}

/// Whether `name` can be a local user's name in `[control]
/// administrators`: what `useradd` accepts by default (a letter or `_`,
/// then letters, digits, `_`, `-` and `.`, an optional final `$`), at
/// most 32 bytes.
pub fn is_user_name(name: &str) -> bool {
    let body = name.strip_suffix('$').unwrap_or(name);
    !body.is_empty()
        && name.len() <= 32
        && body.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALICE: Asker<'static> = Asker {
        uid: 1001,
        name: Some("alice"),
    };
    const BOB: Asker<'static> = Asker {
        uid: 1002,
        name: Some("bob"),
    };
    const ROOT: Asker<'static> = Asker {
        uid: 0,
        name: Some("root"),
    };
    const NAMELESS: Asker<'static> = Asker {
        uid: 4242,
        name: None,
    };

    fn root_agent(administrators: &[String]) -> Agent<'_> {
        Agent {
            uid: 0,
            administrators,
        }
    }

    #[test]
    fn only_the_owner_and_administrators_fetch_a_checkpoint() {
        let admins = ["carol".to_owned()];
        let agent = root_agent(&admins);
        assert_eq!(checkpoint_access(&ALICE, &agent, Some("alice")), Ok(()));
        assert_eq!(checkpoint_access(&ROOT, &agent, Some("alice")), Ok(()));
        let carol = Asker {
            uid: 1003,
            name: Some("carol"),
        };
        assert_eq!(checkpoint_access(&carol, &agent, Some("alice")), Ok(()));
        let why = checkpoint_access(&BOB, &agent, Some("alice")).unwrap_err();
        assert_eq!(
            why.to_string(),
            "permission denied: the job belongs to alice; only its owner or an \
             administrator may fetch its checkpoint, and bob is neither"
        );
        // A nameless uid owns nothing, not even a job with no owner.
        assert!(checkpoint_access(&NAMELESS, &agent, None).is_err());
        // A non-root agent's own user is its administrator.
        let own = Agent {
            uid: 1002,
            administrators: &[],
        };
        assert_eq!(checkpoint_access(&BOB, &own, Some("alice")), Ok(()));
    }

    #[test]
    fn users_change_only_their_own_jobs_and_root_changes_any() {
        let agent = root_agent(&[]);
        assert_eq!(
            job_access(&ALICE, &agent, Some("alice"), true),
            JobAccess::Allowed
        );
        let refused = job_access(&BOB, &agent, Some("alice"), true);
        let JobAccess::Refused(why) = refused else {
            panic!("bob changed alice's job: {refused:?}");
        };
        assert_eq!(
            why.to_string(),
            "permission denied: the job belongs to alice, and bob may change only their own jobs"
        );
        // A constraint alone passes over other users' jobs silently.
        assert_eq!(
            job_access(&BOB, &agent, Some("alice"), false),
            JobAccess::Ignored
        );
        assert_eq!(
            job_access(&ROOT, &agent, Some("alice"), true),
            JobAccess::Allowed
        );
        // A job without an owner is nobody's but an administrator's.
        assert!(matches!(
            job_access(&ALICE, &agent, None, true),
            JobAccess::Refused(_)
        ));
        assert!(matches!(
            job_access(&NAMELESS, &agent, Some("uid4242"), true),
            JobAccess::Refused(_)
        ));
    }

    #[test]
    fn configured_administrators_change_any_job_and_the_machine() {
        let admins = vec!["alice".to_owned()];
        let agent = root_agent(&admins);
        assert_eq!(
            job_access(&ALICE, &agent, Some("bob"), true),
            JobAccess::Allowed
        );
        assert_eq!(may(Operation::ChangeMachine, &ALICE, &agent), Ok(()));
        let e = may(Operation::ChangeMachine, &BOB, &agent).unwrap_err();
        assert!(e.to_string().contains("only root"), "{e}");
        assert!(e.to_string().contains("bob"), "{e}");
        // The same name without the configuration is an ordinary user.
        assert!(may(Operation::ChangeMachine, &ALICE, &root_agent(&[])).is_err());
    }

    #[test]
    fn everyone_a_root_agent_serves_may_read_and_named_users_may_submit() {
        let agent = root_agent(&[]);
        for asker in [ALICE, BOB, ROOT, NAMELESS] {
            assert_eq!(may(Operation::Read, &asker, &agent), Ok(()));
        }
        assert_eq!(may(Operation::Submit, &BOB, &agent), Ok(()));
        assert_eq!(
            may(Operation::Submit, &NAMELESS, &agent),
            Err(Refusal::Nameless { uid: 4242 })
        );
    }

    #[test]
    fn a_non_root_agent_serves_only_its_own_user_and_root() {
        let agent = Agent {
            uid: 1001,
            administrators: &[],
        };
        assert_eq!(may(Operation::ChangeMachine, &ALICE, &agent), Ok(()));
        assert_eq!(may(Operation::ChangeMachine, &ROOT, &agent), Ok(()));
        let e = may(Operation::Read, &BOB, &agent).unwrap_err();
        assert!(matches!(
            e,
            Refusal::NotServed {
                agent_uid: 1001,
                ..
            }
        ));
        // Its own user may submit even without a name (a container's uid).
        let own = Asker {
            uid: 1001,
            name: None,
        };
        assert_eq!(may(Operation::Submit, &own, &agent), Ok(()));
        assert_eq!(
            job_access(&own, &agent, Some("uid1001"), true),
            JobAccess::Allowed
        );
    }

    #[test]
    fn user_names_are_what_useradd_accepts() {
        for good in ["alice", "_svc", "bob.smith", "a-b_c", "machine$", "x"] {
            assert!(is_user_name(good), "{good}");
        }
        for bad in ["", "1abc", "-x", "a b", "a:b", "$", "ré", &"a".repeat(33)] {
            assert!(!is_user_name(bad), "{bad}");
        }
    }
}
