//! Decisions as pure functions over plain data: which candidate a job
//! prefers today; fair share, admission control and placement as the agent
//! grows. Nothing here does I/O or reads a clock: callers pass what a rule
//! needs and carry out its answer.
//!
//! - [`autocluster`]: which idle jobs are alike and negotiated as one.
//! - [`bandwidth`]: network capacity as an allocated resource: allocation
//!   pointers, the slot scheduler's strategies, a link's two-phase ledger.
//! - [`net_share`]: a link's fair share of its users by their priorities
//!   (Basney's two phases).
//! - [`negotiation`]: which machines a submit agent asks for an autocluster.
//! - [`claiming`]: whether an execute agent grants a claim, on its own state.
//! - [`slots`]: partitionable slots, carving a dynamic slot per claim.
//! - [`job_policy`]: the job's periodic and on-exit hold, release and remove.
//! - [`on_evict`]: HTCondor's eviction transforms: a job held for going over
//!   its memory runs again with more (`retry_request_memory`).
//! - [`owner_policy`]: the machine owner's START, SUSPEND, PREEMPT and KILL;
//!   slot states and activities.
//! - [`priority`]: user priority, the accountant's Up-Down aging, summed
//!   over execute agents.
//! - [`favours`]: OurGrid's network of favours, what we owe each domain.
//! - [`arbitration`]: who gets freed resources among waiting claims, and
//!   when a running claim is preempted for rank or priority.
//! - [`matchmaking`]: keeping the best few matched machines.
//! - [`why`]: why a job is idle, machine by machine.
//! - [`run_as`]: which local account a job runs as on the execute agent.
//! - [`control_access`]: who may do what through the control socket.
//! - [`terms`]: the terms a domain's signed policy sets on the domains it
//!   trusts (`accept`), applied to their jobs.
//! - [`shares`]: what a trusted domain holds in this whole domain at once,
//!   against its caps (`max_slots`, `max_fraction`, `max_gpus`): the keeper's ledger.
//! - [`replicas`]: which store peers keep a checkpoint's replicas, and
//!   which replica a restore reads first.
//! - [`storing`]: what a store peer keeps for whom, and how much.
//! - [`migration`]: when a running job moves to another machine, and to
//!   which.
//! - [`coallocation`]: where a multi-component job's components go
//!   (modified Worst-Fit and Best-Fit) and which waiting one goes next
//!   (FCFS, FPFS).

pub mod arbitration;
pub mod autocluster;
pub mod bandwidth;
pub mod claiming;
pub mod coallocation;
pub mod control_access;
pub mod favours;
pub mod job_policy;
pub mod matchmaking;
pub mod materialize;
pub mod migration;
pub mod negotiation;
pub mod net_share;
pub mod on_evict;
pub mod owner_policy;
pub mod priority;
pub mod replicas;
pub mod run_as;
pub mod shares;
pub mod slots;
pub mod storing;
pub mod terms;
pub mod why;
