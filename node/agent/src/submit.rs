//! The submit side of an agent, as HTCondor's schedd and shadows: the
//! negotiator matches this agent's idle jobs to machines in the view and
//! claims them, a shadow per claim hands jobs over, keeps the claim's lease,
//! brings the output back and reconnects after a restart, and the job's
//! files are read and placed with its owner's rights. The submit agent
//! owns its jobs' checkpoints: it records them, hands them to the next
//! machine, and keeps them replicated ([`checkpoints`]). Scheduler-
//! and local-universe jobs are matched to no machine: the agent runs them
//! itself, as their owners, in their directories ([`local`]). The procs of
//! a parallel-universe cluster are one job whose nodes start together on
//! machines of several domains, or not at all ([`parallel`]).

pub mod checkpoints;
pub mod job_files;
pub mod local;
pub mod negotiator;
pub mod parallel;
pub mod shadow;
