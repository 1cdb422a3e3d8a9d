//! The submit commands, as tables: those `starling submit` carries out
//! ([`COMMANDS`], and the GPU ones in `gpus`), the job attributes HTCondor
//! takes as their names ([`ATTRIBUTE_ALIASES`]), HTCondor's commands that
//! Starling ignores ([`IGNORED`]) or refuses ([`REFUSED`]), each with why,
//! and the commands that are ClassAd expressions ([`EXPRESSIONS`]).
//!
//! Data only: what a command does to a job ad is `job_ad`'s, how a file
//! is read `syntax`'s.

/// The commands `starling submit` knows, lower case (and the GPU ones,
/// [`super::gpus::COMMANDS`]).
pub(super) const COMMANDS: &[&str] = &[
    "universe",
    "jar_files",
    "java_vm_args",
    "java_vm_arguments",
    "executable",
    "arguments",
    "args",
    "environment",
    "env",
    "input",
    "output",
    "error",
    "log",
    "initialdir",
    "initial_dir",
    "transfer_input_files",
    "transfer_output_files",
    "transfer_output_remaps",
    "allowed_execute_duration",
    "allowed_job_duration",
    "transfer_executable",
    "should_transfer_files",
    "when_to_transfer_output",
    "request_cpus",
    "request_memory",
    "retry_request_memory",
    "retry_request_memory_increase",
    "retry_request_memory_max",
    "concurrency_limits",
    "max_transfer_input_mb",
    "max_transfer_output_mb",
    "request_disk",
    "requirements",
    "rank",
    "priority",
    "accounting_group",
    "accounting_group_user",
    "notification",
    "notify_user",
    "getenv",
    "hold",
    "batch_name",
    "max_retries",
    "success_exit_code",
    "retry_until",
    "nice_user",
    "periodic_hold",
    "periodic_release",
    "periodic_remove",
    "on_exit_hold",
    "on_exit_remove",
    "periodic_hold_reason",
    "periodic_hold_subcode",
    "on_exit_hold_reason",
    "on_exit_hold_subcode",
    "job_max_vacate_time",
    "component_domain",
    "co_allocation",
    "max_materialize",
    "max_idle",
    "materialize_max_idle",
    "output_directory",
    "checkpoint_exit_code",
    "transfer_checkpoint_files",
    "checkpoint_replicas",
    "kill_sig",
    "description",
];

/// Job attribute names HTCondor takes for the commands that set them,
/// lower case, with the command.
pub(super) const ATTRIBUTE_ALIASES: &[(&str, &str)] = &[
    ("jobbatchname", "batch_name"),
    ("jobdescription", "description"),
    ("notifyuser", "notify_user"),
    ("jobprio", "priority"),
    ("prio", "priority"),
    ("jobmaxvacatetime", "job_max_vacate_time"),
    ("checkpointexitcode", "checkpoint_exit_code"),
];

/// HTCondor 25's submit commands that Starling accepts and ignores, each
/// with why it has no effect here.
pub(super) const IGNORED: &[(&str, &str)] = &[
    (
        "want_graceful_removal",
        "Starling always sends the kill signal first",
    ),
    ("use_oauth_services", "Starling has no credential service"),
    ("transfer_output", "only for the grid universe"),
    ("transfer_input", "only for the grid universe"),
    ("transfer_error", "only for the grid universe"),
    ("stream_output", "output comes back when the job ends"),
    ("stream_error", "errors come back when the job ends"),
    ("stream_input", "input goes with the job when it starts"),
    (
        "job_lease_duration",
        "Starling's claims keep their own leases",
    ),
    ("coresize", "Starling does not limit core files"),
    ("image_size", "Starling schedules by request_memory"),
    (
        "leave_in_queue",
        "Starling keeps finished jobs in its history",
    ),
    ("preserve_relative_paths", "not supported by Starling yet"),
    ("want_remote_io", "Starling has no remote I/O"),
    ("want_io_proxy", "Starling has no remote I/O"),
    ("encrypt_input_files", "Starling encrypts every transfer"),
    ("encrypt_output_files", "Starling encrypts every transfer"),
    (
        "dont_encrypt_input_files",
        "Starling encrypts every transfer",
    ),
    (
        "dont_encrypt_output_files",
        "Starling encrypts every transfer",
    ),
    ("job_machine_attrs", "not recorded by Starling yet"),
    ("periodic_vacate", "not supported by Starling yet"),
    ("submit_event_notes", "Starling's user log has no notes"),
    ("load_profile", "Starling runs jobs without a login profile"),
    (
        "run_as_owner",
        "Starling runs jobs as its configured account",
    ),
    ("skip_filechecks", "Starling always checks the files"),
    (
        "machine_count",
        "only a parallel-universe job runs on several machines",
    ),
    (
        "grid_resource",
        "only for the grid universe, which Starling refuses",
    ),
];

/// HTCondor 25's submit commands whose job Starling would run wrongly if
/// it ignored them (at the wrong time, outside its container): refused,
/// each with why.
pub(super) const REFUSED: &[(&str, &str)] = &[
    (
        "docker_image",
        "Starling cannot run containers yet (no machine advertises a container runtime)",
    ),
    (
        "container_image",
        "Starling cannot run containers yet (no machine advertises a container runtime)",
    ),
    (
        "deferral_time",
        "Starling has no deferred start yet: submit the job when it should start",
    ),
    (
        "deferral_window",
        "Starling has no deferred start yet: submit the job when it should start",
    ),
    (
        "deferral_prep_time",
        "Starling has no deferred start yet: submit the job when it should start",
    ),
    (
        "cron_minute",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_hour",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_day_of_month",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_month",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_day_of_week",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_prep_time",
        "Starling has no cron jobs: submit from cron instead",
    ),
    (
        "cron_window",
        "Starling has no cron jobs: submit from cron instead",
    ),
];

/// Attribute names of the commands that are ClassAd expressions.
pub(super) const EXPRESSIONS: &[(&str, &str)] = &[
    ("periodic_hold", "PeriodicHold"),
    ("periodic_release", "PeriodicRelease"),
    ("periodic_remove", "PeriodicRemove"),
    ("on_exit_hold", "OnExitHold"),
    ("on_exit_remove", "OnExitRemove"),
    ("periodic_hold_reason", "PeriodicHoldReason"),
    ("periodic_hold_subcode", "PeriodicHoldSubCode"),
    ("on_exit_hold_reason", "OnExitHoldReason"),
    ("on_exit_hold_subcode", "OnExitHoldSubCode"),
    ("job_max_vacate_time", "JobMaxVacateTime"),
    ("checkpoint_exit_code", "CheckpointExitCode"),
];
