//! The job requests of the control API (`submit`, `q`, `history`, `rm`,
//! `hold`, `release`, `vacate`, `qedit`, `why`), answered from the queue,
//! the view and the negotiator.
//!
//! Each request comes with its [`Caller`], as the socket says. Jobs are
//! owned by the user who submits them (`Owner`, and `User` as
//! `owner@domain`); `rm`, `hold`, `release`, `vacate` and `qedit` change only the
//! jobs `control_access::job_access` allows the caller (the agent's
//! control actor has already refused what the caller may not ask at all).
//!
//! A submit file is expanded here, in the agent, once the queue has given
//! the cluster its id (the file may say `$(Cluster)`); `queue ... from
//! FILE` and `matching` read the submitter's files, and every input and
//! the user log are checked, with the submitter's rights
//! ([`starling_process::users::Rights`]).

use std::path::{Path, PathBuf};

use ractor::ActorRef;
use starling_policies::control_access::{self, JobAccess};
use starling_policies::why;
use starling_protocol::classad::{attr_references, unparse_ad, ClassAd, Expr, Name, Value};
use starling_protocol::submit::{self, Environment, SystemEnvironment};

use crate::links::flights::{FlightSummary, Flights};
use crate::negotiator::NegotiatorMsg;
use crate::view_actor::ViewMsg;
use crate::{current_view, job_files, StaticInfo, SupervisorMsg, QUERY_TIMEOUT};
use starling_control::{Caller, Request, Response};
use starling_process::users::Rights;
use starling_queue::{Action, Queue, Selection, Target};

/// Who asks, and what the agent is, for the access rules.
#[derive(Debug, Clone, Copy)]
pub struct Access<'a> {
    pub caller: &'a Caller,
    /// The uid the agent runs as.
    pub agent_uid: u32,
    /// `[control] administrators`.
    pub administrators: &'a [String],
}

impl<'a> Access<'a> {
    pub fn asker(&self) -> control_access::Asker<'a> {
        control_access::Asker {
            uid: self.caller.uid,
            name: self.caller.name.as_deref(),
        }
    }

    pub fn agent(&self) -> control_access::Agent<'a> {
        control_access::Agent {
            uid: self.agent_uid,
            administrators: self.administrators,
        }
    }

    /// What the caller may do to one job `selection` selected.
    fn job(&self, selection: &Selection, id: starling_storage::JobId, ad: &ClassAd) -> JobAccess {
        let owner = crate::ad::text(ad, "Owner");
        control_access::job_access(
            &self.asker(),
            &self.agent(),
            owner.as_deref(),
            selection.names(id, ad),
        )
    }
}

/// Most environment variables a submit may bring.
pub const MAX_ENV_VARS: usize = 4096;

/// Most jobs one `q` or `history` answer holds.
pub const MAX_LISTED: usize = 100_000;

/// `ad` cut down to the attributes `names` and those of its own
/// attributes they refer to, followed through (`RequestMemory =
/// ImageSize / 1024` brings `ImageSize`), so that the client evaluates
/// them as it would the whole ad: what HTCondor's schedd answers a
/// projection with.
pub(crate) fn project(ad: &ClassAd, names: &[String]) -> ClassAd {
    let mut keep: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    for name in names {
        let name = name.to_ascii_lowercase();
        keep.extend(attr_references(ad, &name).of_my(ad));
        keep.insert(name);
    }
    let mut projected = ClassAd::with_capacity(keep.len());
    for entry in ad.iter() {
        if keep.contains(entry.key.as_str()) {
            projected.insert(entry.name, entry.expr().clone());
        }
    }
    projected
}

fn error(message: impl Into<String>) -> Response {
    Response::Error {
        message: message.into(),
    }
}

async fn queue(supervisor: &ActorRef<SupervisorMsg>) -> Result<Queue, Response> {
    match supervisor
        .call(SupervisorMsg::Queue, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(q)) => Ok(q),
        _ => Err(error("the agent is stopping")),
    }
}

pub async fn handle(
    supervisor: &ActorRef<SupervisorMsg>,
    info: &StaticInfo,
    access: &Access<'_>,
    flights: &Flights,
    request: Request,
) -> Response {
    let queue = match queue(supervisor).await {
        Ok(q) => q,
        Err(response) => return response,
    };
    match request {
        Request::Submit {
            file,
            text,
            cwd,
            env,
            commands,
        } => {
            let owner = access.asker().display_name();
            let asked = Asked {
                file,
                text,
                cwd,
                env,
                commands,
            };
            submit(&queue, asked, owner, &info.domain).await
        }
        Request::Jobs {
            targets,
            constraint,
            history,
            limit,
            projection,
        } => {
            let selection = match Selection::parse(&targets, constraint.as_deref()) {
                Ok(s) => s,
                Err(e) => return error(e.to_string()),
            };
            let limit = limit.unwrap_or(MAX_LISTED).min(MAX_LISTED);
            let ads = if history {
                match queue.history(limit, &selection).await {
                    Ok(ads) => ads,
                    Err(e) => return error(e.to_string()),
                }
            } else {
                queue
                    .jobs(&selection)
                    .into_iter()
                    .take(limit)
                    .map(|(id, mut ad)| {
                        show_transfers(&mut ad, &flights.of_job(id));
                        ad
                    })
                    .collect()
            };
            let jobs = match &projection {
                Some(names) => ads
                    .iter()
                    .map(|ad| unparse_ad(&project(ad, names)))
                    .collect(),
                None => ads.iter().map(unparse_ad).collect(),
            };
            Response::Jobs { jobs }
        }
        Request::Act {
            action,
            targets,
            constraint,
            reason,
            to,
        } => {
            let selection = match chosen(&targets, constraint.as_deref()) {
                Ok(s) => s,
                Err(message) => return error(message),
            };
            if action == "vacate" {
                return vacate(supervisor, &queue, access, &selection, reason).await;
            }
            if action == "migrate" {
                return migrate(supervisor, &queue, access, &selection, to, reason).await;
            }
            let action = match action.as_str() {
                "hold" => Action::Hold {
                    reason: reason.unwrap_or_else(|| "held by the user".to_owned()),
                },
                "release" => Action::Release,
                "remove" => Action::Remove {
                    reason: reason.unwrap_or_else(|| "removed by the user".to_owned()),
                },
                other => return error(format!("unknown action {other:?}")),
            };
            let allowed = |id, ad: &ClassAd| access.job(&selection, id, ad);
            match queue.act_as(&action, &selection, allowed).await {
                Ok(acted) => acted_response(&selection, acted),
                Err(e) => error(e.to_string()),
            }
        }
        Request::Edit {
            targets,
            constraint,
            attribute,
            value,
        } => {
            let selection = match chosen(&targets, constraint.as_deref()) {
                Ok(s) => s,
                Err(message) => return error(message),
            };
            let allowed = |id, ad: &ClassAd| access.job(&selection, id, ad);
            match queue.edit_as(&selection, &attribute, &value, allowed).await {
                Ok(acted) => acted_response(&selection, acted),
                Err(e) => error(e.to_string()),
            }
        }
        Request::Why { job } => why_idle(supervisor, &queue, &job).await,
        Request::UserPrio { set_factor } => user_prio(supervisor, set_factor).await,
        Request::Drain {
            how,
            reason,
            resume_on_completion,
            cancel,
        } => drain(supervisor, how, reason, resume_on_completion, cancel).await,
        _ => error("not a job request"),
    }
}

/// Shows a job's transfers in flight in its ad, as `q -l` prints it:
/// HTCondor's `TransferringInput` / `TransferringOutput` (and `TransferQueued`
/// while its path has not admitted it), and how far it has come:
/// `StarlingTransferBytes`, `StarlingTransferBytesDone`,
/// `StarlingTransferRate` (bytes per second so far) and, when its path is
/// reserved, `StarlingTransferReservedRate`. Only the shown ad changes.
fn show_transfers(ad: &mut ClassAd, flights: &[FlightSummary]) {
    let Some(flight) = flights.iter().max_by_key(|f| f.bytes) else {
        return;
    };
    let set = |ad: &mut ClassAd, name: &str, value: Value| {
        if let Ok(name) = Name::new(name) {
            ad.insert(name, Expr::Literal(value));
        }
    };
    let input = flight.kind.is_input();
    set(ad, "TransferringInput", Value::Bool(input));
    set(ad, "TransferringOutput", Value::Bool(!input));
    set(ad, "TransferQueued", Value::Bool(flight.waiting));
    let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    set(ad, "StarlingTransferBytes", int(flight.bytes));
    set(ad, "StarlingTransferBytesDone", int(flight.moved));
    set(ad, "StarlingTransferRate", int(flight.rate.round() as u64));
    if let Some(rate) = flight.reserved_rate {
        set(ad, "StarlingTransferReservedRate", int(rate.round() as u64));
    }
}

/// Who asked, and the user's own one-line reason after it; the error
/// message when the reason is not one line.
fn why_asked(who: String, reason: Option<String>) -> Result<String, String> {
    match reason {
        None => Ok(who),
        Some(reason) => match submit::values::one_line(&reason) {
            Ok(_) => Ok(format!("{who}: {reason}")),
            Err(e) => Err(format!("the reason {e}")),
        },
    }
}

/// `migrate`: each selected running job the caller may change moves to
/// `to` (or the best machine free): its new machine is claimed first, then
/// it is vacated, checkpointing on its way out, and restarts there from
/// that checkpoint. `Acted.changed` names each job moving and where.
async fn migrate(
    supervisor: &ActorRef<SupervisorMsg>,
    queue: &Queue,
    access: &Access<'_>,
    selection: &Selection,
    to: Option<String>,
    reason: Option<String>,
) -> Response {
    let why = match why_asked(
        format!(
            "user {} asked (starling migrate)",
            access.asker().display_name()
        ),
        reason,
    ) {
        Ok(why) => why,
        Err(refused) => return error(refused),
    };
    if let Some(to) = &to {
        if to.is_empty() || to.len() > starling_protocol::transfer::MAX_SLOT_NAME_LEN {
            return error(format!(
                "--to names a machine in 1 to {} bytes",
                starling_protocol::transfer::MAX_SLOT_NAME_LEN
            ));
        }
    }
    if why.len() > starling_protocol::claim::MAX_VACATE_REASON_LEN / 2 {
        return error("the reason is too long".to_owned());
    }
    let negotiator: ActorRef<NegotiatorMsg> = match supervisor
        .call(SupervisorMsg::Negotiator, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(n)) => n,
        _ => return error("the agent is stopping"),
    };
    let mut changed = Vec::new();
    let mut skipped = Vec::new();
    for (id, ad) in queue.jobs(selection) {
        match access.job(selection, id, &ad) {
            JobAccess::Allowed => {}
            JobAccess::Refused(refusal) => {
                skipped.push((id.to_string(), refusal.to_string()));
                continue;
            }
            JobAccess::Ignored => continue,
        }
        if starling_queue::status_of(&ad) != Some(starling_queue::status::RUNNING) {
            let status = starling_queue::name_of(starling_queue::status_of(&ad).unwrap_or(0));
            skipped.push((id.to_string(), format!("it is {status}, not running")));
            continue;
        }
        let answer = negotiator
            .call(
                |reply| NegotiatorMsg::Migrate {
                    job: id,
                    to: to.clone(),
                    reason: why.clone(),
                    reply,
                },
                Some(QUERY_TIMEOUT),
            )
            .await;
        match answer {
            Ok(ractor::rpc::CallResult::Success(Ok(dest))) => {
                changed.push(format!("{id} moves to {dest}"))
            }
            Ok(ractor::rpc::CallResult::Success(Err(why))) => skipped.push((id.to_string(), why)),
            _ => skipped.push((id.to_string(), "the negotiator did not answer".to_owned())),
        }
    }
    Response::Acted { changed, skipped }
}

/// `vacate` (HTCondor's `condor_vacate_job`): each selected running job
/// the caller may change is made to leave its machine (sent its
/// `KillSig`, killed after the machine's `MachineMaxVacateTime`) and goes
/// back to idle to run again; its user log and `LastVacateReason` say
/// who vacated it. Jobs that are not running are reported, not changed.
async fn vacate(
    supervisor: &ActorRef<SupervisorMsg>,
    queue: &Queue,
    access: &Access<'_>,
    selection: &Selection,
    reason: Option<String>,
) -> Response {
    use starling_protocol::claim::MAX_VACATE_REASON_LEN;
    let why = match why_asked(
        format!(
            "vacated by user {} via starling vacate",
            access.asker().display_name()
        ),
        reason,
    ) {
        Ok(why) => why,
        Err(refused) => return error(refused),
    };
    if why.len() > MAX_VACATE_REASON_LEN {
        return error(format!(
            "the reason is too long: the vacate's whole reason (\"{}\") is at most {MAX_VACATE_REASON_LEN} bytes",
            submit::values::shorten(&why, 60)
        ));
    }
    let mut acted = starling_queue::Acted::default();
    let mut running = Vec::new();
    for (id, ad) in queue.jobs(selection) {
        match access.job(selection, id, &ad) {
            JobAccess::Allowed => {}
            JobAccess::Refused(refusal) => {
                acted.skipped.push((id, refusal.to_string()));
                continue;
            }
            JobAccess::Ignored => continue,
        }
        match starling_queue::status_of(&ad) {
            Some(starling_queue::status::RUNNING) => running.push(id),
            code => acted.skipped.push((
                id,
                format!(
                    "it is {}, not running",
                    starling_queue::name_of(code.unwrap_or(0))
                ),
            )),
        }
    }
    if !running.is_empty() {
        let negotiator: ActorRef<NegotiatorMsg> = match supervisor
            .call(SupervisorMsg::Negotiator, Some(QUERY_TIMEOUT))
            .await
        {
            Ok(ractor::rpc::CallResult::Success(n)) => n,
            _ => return error("the agent is stopping"),
        };
        let wait = crate::negotiator::VACATE_ANSWER + std::time::Duration::from_secs(1);
        let jobs = running.clone();
        let answers = match negotiator
            .call(
                |reply| NegotiatorMsg::Vacate {
                    jobs,
                    reason: why,
                    reply,
                },
                Some(wait),
            )
            .await
        {
            Ok(ractor::rpc::CallResult::Success(answers)) => answers,
            _ => return error("the negotiator did not answer; see starling q for the jobs"),
        };
        for (id, answer) in answers {
            match answer {
                Ok(()) => acted.changed.push(id),
                Err(why) => acted.skipped.push((id, why)),
            }
        }
    }
    acted_response(selection, acted)
}

/// `userprio`: the priorities every agent of the domain computes from the
/// usage gossiped in its machine ads; `-setfactor` first.
async fn user_prio(
    supervisor: &ActorRef<SupervisorMsg>,
    set_factor: Option<starling_control::SetFactor>,
) -> Response {
    let setup = match supervisor
        .call(SupervisorMsg::Accounting, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(s)) => s,
        _ => return error("the agent is stopping"),
    };
    let now = unix_now();
    if let Some(mut set) = set_factor {
        if let Err(e) = starling_protocol::submit::values::one_line(&set.user) {
            return error(format!("-setfactor: the user name {e}"));
        }
        let ads = crate::machine_ads(supervisor).await;
        let trust = setup.trust.current();
        let foreign = &trust.foreign_factors;
        let (known, factors) = crate::usage::priorities(
            &ads,
            &setup.own_domain,
            foreign,
            now,
            setup.accounting.halflife(),
        );
        let mut known: Vec<&str> = known.users.keys().map(String::as_str).collect();
        known.extend(factors.users());
        known.sort_unstable();
        known.dedup();
        let domains: Vec<&str> = std::iter::once(setup.own_domain.as_str())
            .chain(foreign.keys().map(String::as_str))
            .collect();
        match starling_policies::priority::resolve_user(&set.user, &domains, &known, set.force) {
            Ok(full) => set.user = full,
            Err(message) => return error(format!("-setfactor {}: {message}", set.user)),
        }
        let accounting = setup.accounting.clone();
        let user = set.user.clone();
        let written =
            tokio::task::spawn_blocking(move || accounting.set_factor(&user, set.factor, now))
                .await
                .unwrap_or_else(|e| Err(e.to_string()));
        if let Err(message) = written {
            return error(format!(
                "-setfactor {:?} {:?}: {message}",
                set.user, set.factor
            ));
        }
        // The setting goes out with the machine ad at once.
        SupervisorMsg::pool(supervisor).republish();
    }
    let ads = crate::machine_ads(supervisor).await;
    let (priorities, factors) = crate::usage::priorities(
        &ads,
        &setup.own_domain,
        &setup.trust.current().foreign_factors,
        now,
        setup.accounting.halflife(),
    );
    setup
        .accounting
        .adopt_in_background(&factors, supervisor.clone());
    let mut users: Vec<starling_control::UserPrio> = priorities
        .users
        .into_values()
        .map(|p| starling_control::UserPrio {
            user: p.user,
            effective: p.effective,
            real: p.real,
            factor: p.factor,
            in_use: p.in_use,
            accumulated: p.accumulated,
            first_usage: p.first_usage,
            last_usage: p.last_usage,
        })
        .collect();
    users.sort_by(|a, b| {
        a.effective
            .total_cmp(&b.effective)
            .then(a.user.cmp(&b.user))
    });
    Response::UserPrio {
        users,
        halflife_secs: setup.accounting.halflife(),
    }
}

/// `drain`: the startd stops taking claims and makes its jobs leave, or
/// (`cancel`) takes claims again.
async fn drain(
    supervisor: &ActorRef<SupervisorMsg>,
    how: starling_control::DrainHow,
    reason: Option<String>,
    resume_on_completion: bool,
    cancel: bool,
) -> Response {
    use crate::startd::{DrainOrder, StartdMsg};
    if let Some(reason) = &reason {
        if reason.len() > starling_control::MAX_DRAIN_REASON_LEN {
            return error(format!(
                "the drain reason is {} bytes; at most {} are accepted",
                reason.len(),
                starling_control::MAX_DRAIN_REASON_LEN
            ));
        }
        if reason.chars().any(char::is_control) {
            return error("the drain reason may not contain control characters (newlines, tabs)");
        }
    }
    let startd = match supervisor
        .call(SupervisorMsg::Startd, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(s)) => s,
        _ => return error("the agent is stopping"),
    };
    let order = if cancel {
        None
    } else {
        Some(DrainOrder {
            how: how.into(),
            reason: reason.unwrap_or_else(|| "by the machine's administrator".to_owned()),
            resume_on_completion,
        })
    };
    match startd
        .call(
            |reply| StartdMsg::Drain { order, reply },
            Some(QUERY_TIMEOUT),
        )
        .await
    {
        Ok(ractor::rpc::CallResult::Success(Ok(status))) => Response::Drain(status),
        Ok(ractor::rpc::CallResult::Success(Err(message))) => error(message),
        _ => error("the startd did not answer; try again"),
    }
}

fn unix_now() -> i64 {
    i64::try_from(starling_protocol::identity::Timestamp::now().as_unix_millis() / 1000)
        .unwrap_or(i64::MAX)
}

/// The jobs an action is for; naming none is an error, not "all".
fn chosen(targets: &[String], constraint: Option<&str>) -> Result<Selection, String> {
    let selection = Selection::parse(targets, constraint).map_err(|e| e.to_string())?;
    if selection.targets.is_empty() && selection.constraint.is_none() {
        return Err("say which jobs: job ids, cluster ids, owners or -constraint".to_owned());
    }
    Ok(selection)
}

fn acted_response(selection: &Selection, acted: starling_queue::Acted) -> Response {
    let mut skipped: Vec<(String, String)> = acted
        .skipped
        .iter()
        .map(|(id, why)| (id.to_string(), why.clone()))
        .collect();
    // A job id that selected nothing is worth saying. (A set: a request
    // may name 10,000 jobs and change 100,000.)
    let named = selection.targets.iter().filter_map(|t| match t {
        Target::Job(id) => Some(id),
        _ => None,
    });
    if named.clone().next().is_some() {
        let mentioned: std::collections::HashSet<_> = acted
            .changed
            .iter()
            .chain(acted.skipped.iter().map(|(id, _)| id))
            .collect();
        for id in named.filter(|id| !mentioned.contains(id)) {
            skipped.push((id.to_string(), "no such job in the queue".to_owned()));
        }
    }
    Response::Acted {
        changed: acted.changed.iter().map(|id| id.to_string()).collect(),
        skipped,
    }
}

/// The submitter's environment for expanding a submit file: the variables
/// the CLI sent, and files read with the submitter's rights.
struct SubmitterEnvironment {
    system: SystemEnvironment,
    rights: Rights,
    /// What the programs the file names printed, as the submitter's
    /// `starling submit -allow-commands` ran them: the agent runs none.
    commands: std::collections::BTreeMap<String, String>,
}

impl Environment for SubmitterEnvironment {
    fn var(&self, name: &str) -> Option<String> {
        self.system.var(name)
    }
    fn vars(&self) -> Vec<(String, String)> {
        self.system.vars()
    }
    fn read_file(&self, path: &Path) -> std::io::Result<String> {
        // Reading uses nothing of the variables: a bare one does it.
        let path = path.to_owned();
        self.rights
            .run(move || SystemEnvironment::default().read_file(&path))
    }
    fn glob(&self, dir: &Path, pattern: &str, dirs: bool) -> std::io::Result<Vec<String>> {
        let (dir, pattern) = (dir.to_owned(), pattern.to_owned());
        self.rights
            .run(move || SystemEnvironment::default().glob(&dir, &pattern, dirs))
    }
    fn check_directory(&self, path: &Path) -> std::io::Result<()> {
        let path = path.to_owned();
        self.rights
            .run(move || SystemEnvironment::default().check_directory(&path))
    }
    fn check_exists(&self, path: &Path) -> std::io::Result<()> {
        let path = path.to_owned();
        self.rights
            .run(move || SystemEnvironment::default().check_exists(&path))
    }
    fn size_kib(&self, path: &Path, max_entries: usize) -> (u64, usize) {
        // Sized with the submitter's rights: what they cannot see counts
        // as nothing, as for condor_submit.
        let path = path.to_owned();
        self.rights
            .run(move || Ok(SystemEnvironment::default().size_kib(&path, max_entries)))
            .unwrap_or((0, 0))
    }
    fn owner(&self) -> String {
        self.system.owner()
    }
    fn now(&self) -> i64 {
        self.system.now()
    }
    fn run(&self, command: &str, _dir: &Path) -> Result<String, String> {
        self.commands
            .get(command)
            .cloned()
            .ok_or_else(|| submit::commands_refused(command))
    }
}

/// A submit request, as the CLI sends it.
struct Asked {
    file: String,
    text: String,
    cwd: PathBuf,
    env: std::collections::BTreeMap<String, String>,
    commands: std::collections::BTreeMap<String, String>,
}

/// Most programs one submit file may name, and the most their outputs
/// may come to in all.
pub const MAX_COMMANDS: usize = 64;
pub const MAX_COMMANDS_OUTPUT: usize = submit::MAX_FILE_LEN;

/// The programs' outputs a submit request brings: at most
/// [`MAX_COMMANDS`], [`MAX_COMMANDS_OUTPUT`] bytes in all.
fn check_commands(commands: &std::collections::BTreeMap<String, String>) -> Result<(), String> {
    if commands.len() > MAX_COMMANDS {
        return Err(format!(
            "at most {MAX_COMMANDS} programs named in one submit file"
        ));
    }
    let output: usize = commands.iter().map(|(c, o)| c.len() + o.len()).sum();
    if output > MAX_COMMANDS_OUTPUT {
        return Err(format!(
            "the programs named in the submit file printed more than {MAX_COMMANDS_OUTPUT} bytes"
        ));
    }
    Ok(())
}

/// Sets a string attribute, replacing whatever the submit file said.
fn set_text(ad: &mut ClassAd, name: &str, value: &str) {
    ad.insert(
        Name::known(name),
        Expr::Literal(Value::String(value.into())),
    );
}

async fn submit(queue: &Queue, asked: Asked, owner: String, domain: &str) -> Response {
    let Asked {
        file,
        text,
        cwd,
        env,
        commands,
    } = asked;
    if env.len() > MAX_ENV_VARS {
        return error(format!("at most {MAX_ENV_VARS} environment variables"));
    }
    if let Err(e) = check_commands(&commands) {
        return error(e);
    }
    if !cwd.is_absolute() {
        return error(format!(
            "{}: the working directory must be absolute",
            cwd.display()
        ));
    }
    if owner.is_empty()
        || owner.len() > 256
        || owner.contains(['"', '\\'])
        || submit::values::one_line(&owner).is_err()
    {
        return error(format!("{owner:?} is not a user name"));
    }
    let rights = match Rights::of_owner(&owner) {
        Ok(r) => r,
        Err(e) => return error(format!("cannot submit as {owner}: {e}")),
    };
    let user = format!("{owner}@{domain}");
    let world = SubmitterEnvironment {
        system: SystemEnvironment {
            vars: env,
            owner: owner.clone(),
        },
        rights,
        commands,
    };
    // Included files are read with the submitter's rights, as the rest.
    let description = match submit::parse_with_includes(&file, &text, &cwd, &world) {
        Ok(d) => d,
        Err(e) => return error(e.to_string()),
    };
    let made = queue
        .submit_with(move |cluster| {
            let mut ads = description
                .expand(cluster, Path::new(&cwd), &world)
                .map_err(|e| e.to_string())?;
            for ad in &mut ads {
                // Who owns the job is the socket's word, not the file's
                // (`+Owner = "bob"` is overruled).
                set_text(ad, "Owner", &owner);
                set_text(ad, "User", &user);
            }
            // The same files for every job of a cluster are checked once.
            let mut checked = std::collections::HashSet::new();
            for ad in &ads {
                let key = [
                    "Iwd",
                    "Cmd",
                    "In",
                    "TransferInput",
                    "TransferExecutable",
                    "UserLog",
                ]
                .map(|a| ad.get(a).map(starling_protocol::classad::unparse));
                if checked.insert(key) {
                    job_files::check_at_submit(ad)?;
                }
            }
            Ok(ads)
        })
        .await;
    match made {
        Ok((cluster, procs)) => Response::Submitted { cluster, procs },
        Err(e) => error(e.to_string()),
    }
}

async fn why_idle(supervisor: &ActorRef<SupervisorMsg>, queue: &Queue, job: &str) -> Response {
    let id = match Target::parse(job) {
        Ok(Target::Job(id)) => id,
        _ => return error(format!("{job:?} is not a job id (like 12.0)")),
    };
    let Some(ad) = queue.job(id) else {
        return error(format!("job {id} is not in the queue"));
    };
    let machines = match current_view(supervisor).await {
        Ok(view) => match view.call(ViewMsg::Machines, Some(QUERY_TIMEOUT)).await {
            Ok(ractor::rpc::CallResult::Success(list)) => list,
            _ => Vec::new(),
        },
        Err(message) => return error(message),
    };
    let rejections = match supervisor
        .call(SupervisorMsg::Negotiator, Some(QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(negotiator)) => {
            let n: ActorRef<NegotiatorMsg> = negotiator;
            match n
                .call(|r| NegotiatorMsg::Rejections(id, r), Some(QUERY_TIMEOUT))
                .await
            {
                Ok(ractor::rpc::CallResult::Success(list)) => {
                    list.into_iter().map(|r| (r.machine, r.reason)).collect()
                }
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    };
    let named: Vec<(String, &starling_protocol::classad::ClassAd)> = machines
        .iter()
        .map(|m| (why::machine_name(&m.ad), m.ad.as_ref()))
        .collect();
    let now = i64::try_from(starling_protocol::identity::Timestamp::now().as_unix_millis() / 1000)
        .unwrap_or(0);
    let analysis = why::analyze(&ad, &named, &rejections, now);
    Response::Why {
        report: format!("Job {id}\n{analysis}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_queue::Acted;
    use starling_storage::JobId;

    #[test]
    fn a_submit_brings_few_and_bounded_program_outputs() {
        use std::collections::BTreeMap;
        let few: BTreeMap<String, String> = [("seq 1 3".to_owned(), "1\n2\n3\n".to_owned())].into();
        assert!(check_commands(&few).is_ok());
        let many: BTreeMap<String, String> = (0..=MAX_COMMANDS)
            .map(|i| (format!("echo {i}"), String::new()))
            .collect();
        assert!(check_commands(&many)
            .unwrap_err()
            .contains("at most 64 programs"));
        let big: BTreeMap<String, String> =
            [("cat x".to_owned(), "y".repeat(MAX_COMMANDS_OUTPUT))].into();
        assert!(check_commands(&big)
            .unwrap_err()
            .contains("printed more than"));
    }

    #[test]
    fn a_projection_keeps_the_named_attributes_and_what_they_refer_to() {
        let ad = starling_protocol::classad::parse_ad(
            r#"[ ClusterId = 3; ProcId = 1; JobStatus = 1; Cmd = "/bin/echo";
                 RequestMemory = ImageSize / 1024; ImageSize = 2048;
                 Requirements = TARGET.Memory >= RequestMemory; Environment = "A=1" ]"#,
        )
        .unwrap();
        let names = ["jobstatus", "RequestMemory", "NoSuchAttr"].map(String::from);
        let projected = project(&ad, &names);
        assert_eq!(
            unparse_ad(&projected),
            "[ JobStatus = 1; RequestMemory = ImageSize / 1024; ImageSize = 2048 ]"
        );
        assert_eq!(unparse_ad(&project(&ad, &[])), "[  ]");
    }

    #[test]
    fn a_named_job_that_nothing_selected_is_reported() {
        let words = ["1.0", "1.1", "2.0", "3"].map(String::from);
        let selection = Selection::parse(&words, None).unwrap();
        let acted = Acted {
            changed: vec![JobId::new(1, 0), JobId::new(3, 0), JobId::new(3, 1)],
            skipped: vec![(JobId::new(1, 1), "already held".to_owned())],
        };
        let Response::Acted { changed, skipped } = acted_response(&selection, acted) else {
            panic!("not an Acted answer");
        };
        assert_eq!(changed, ["1.0", "3.0", "3.1"]);
        assert_eq!(
            skipped,
            [
                ("1.1".to_owned(), "already held".to_owned()),
                ("2.0".to_owned(), "no such job in the queue".to_owned()),
            ]
        );
    }
}
