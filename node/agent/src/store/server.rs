//! Answers `/starling/store/1`: keeps chunks of other agents' checkpoints
//! in this agent's chunk store.
//!
//! Who may do what:
//! - putting, committing and reading chunks: an agent of a domain this one
//!   trusts (its machine ad is in the view), for a job whose domain is
//!   trusted and not refused by `[store] refuse_domains`;
//! - renewing and releasing a job's chunks: only the job's submit agent,
//!   the one its [`JobKey`] names.
//!
//! Every request is answered, with a code and a reason when refused. The
//! chunk store's work (sled, hashing) runs off the async threads, at most
//! [`MAX_WORKERS`] requests at once; more are answered busy. Every
//! [`COLLECT_EVERY`] the chunks of jobs whose lease ran out are dropped.
//! The store's figures go to the advertiser for the machine ad right after
//! a commit, a release or a collection, and every [`FIGURES_EVERY`]
//! besides (free space moves with the filesystem), so that `starling status
//! -store` follows within seconds.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use libp2p::PeerId;
use ractor::ActorRef;
use starling_policies::storing;
use starling_protocol::checkpoint::{ErrorCode, JobKey, Owner, Request, Response};
use starling_protocol::identity::{AgentId, Timestamp};
use starling_storage::chunks::{ChunkStore, Refusal, Stats};
use tokio::sync::{mpsc, watch};

use crate::network::jobs::Answer;
use crate::network::Command;
use crate::view_actor::{agent_of, ViewMsg};
use starling_web::metrics::Direction;

/// Store requests handled at once, at most.
pub const MAX_WORKERS: usize = 32;

/// How often expired chunks are collected.
pub const COLLECT_EVERY: Duration = Duration::from_secs(30);

/// How often the store's figures are read again, beside after each
/// change.
pub const FIGURES_EVERY: Duration = Duration::from_secs(5);

/// How long the view's list of trusted agents is reused at most: an agent
/// whose ad left the view is trusted no longer after this.
pub const TRUSTED_FOR: Duration = Duration::from_secs(10);

/// How often, at most, a request from an agent not on the list has the
/// view read again (an agent that just joined is on it within this; a
/// stranger's flood costs one read per interval).
pub const TRUSTED_REFRESH: Duration = Duration::from_millis(250);

/// Capacity of the server's request channel.
pub const QUEUE: usize = 256;

/// A request for the server, as the router hands it on.
#[derive(Debug)]
pub struct Inbound {
    pub peer: PeerId,
    pub id: u64,
    pub request: Request,
}

/// What the server is configured with.
pub struct ServerArgs {
    pub chunks: Arc<ChunkStore>,
    pub network: mpsc::Sender<Command>,
    pub view: ActorRef<ViewMsg>,
    pub me: PeerId,
    pub own_domain: String,
    /// `[store] refuse_domains`, as the configuration in force says (a
    /// reload changes it).
    pub refuse_domains: watch::Receiver<Vec<String>>,
    /// Where the store's figures go (the advertiser puts them in the ad).
    pub stats: watch::Sender<Option<Stats>>,
    /// Counts the chunk bytes stored and served, for `/metrics`.
    pub metrics: starling_web::metrics::Metrics,
    /// The links this agent owns: chunks to and from a peer keep to its
    /// reservation on the host link, or its share of what is left.
    pub links: Option<Arc<crate::links::Owner>>,
}

/// Starts the server; requests go to the returned sender.
pub fn spawn(args: ServerArgs) -> mpsc::Sender<Inbound> {
    let (tx, rx) = mpsc::channel(QUEUE);
    tokio::spawn(tracing::Instrument::in_current_span(run(args, rx)));
    tx
}

/// Agents trusted here, as the view has them: agent → (domain, roles).
struct Trusted {
    agents: HashMap<AgentId, String>,
    domains: BTreeSet<String>,
    read: Option<Instant>,
}

async fn run(args: ServerArgs, mut requests: mpsc::Receiver<Inbound>) {
    let workers = Arc::new(tokio::sync::Semaphore::new(MAX_WORKERS));
    let mut trusted = Trusted {
        agents: HashMap::new(),
        domains: BTreeSet::new(),
        read: None,
    };
    let mut collect = tokio::time::interval(COLLECT_EVERY);
    let mut figures = tokio::time::interval(FIGURES_EVERY);
    figures.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Set by requests that change what the store holds.
    let changed = Arc::new(tokio::sync::Notify::new());
    loop {
        tokio::select! {
            request = requests.recv() => {
                let Some(request) = request else { return };
                let Ok(permit) = workers.clone().try_acquire_owned() else {
                    respond(&args.network, request.id, refused(ErrorCode::Busy, "the store has too many requests in hand; ask again")).await;
                    continue;
                };
                let verdict = admit(&args, &mut trusted, &request).await;
                let chunks = args.chunks.clone();
                let network = args.network.clone();
                let metrics = args.metrics.clone();
                let changed = changed.clone();
                let links = args.links.clone();
                let peer = request.peer;
                let stored_len = match &request.request {
                    Request::Put { data, .. } => data.len() as u64,
                    _ => 0,
                };
                tokio::spawn(async move {
                    let response = match verdict {
                        Err(response) => response,
                        Ok(()) => {
                            let put = match &request.request {
                                Request::Put { data, .. } => data.len() as u64,
                                _ => 0,
                            };
                            let response = tokio::task::spawn_blocking(move || serve(&chunks, request.request))
                                .await
                                .unwrap_or_else(|e| refused(ErrorCode::Failed, &format!("the store failed: {e}")));
                            match &response {
                                Response::Stored => metrics.checkpoint_moved(Direction::received, put),
                                Response::Chunk { data } => metrics.checkpoint_moved(Direction::sent, data.len() as u64),
                                _ => {}
                            }
                            response
                        }
                    };
                    if matches!(response, Response::Committed | Response::Released { .. }) {
                        changed.notify_one();
                    }
                    drop(permit);
                    // A sender faster than it reserved (or than its share
                    // of what reservations leave) is slowed: its answer
                    // waits, and its window with it.
                    let moved = match &response {
                        Response::Stored => stored_len,
                        Response::Chunk { data } => data.len() as u64,
                        _ => 0,
                    };
                    if let (Some(links), true) = (&links, moved > 0) {
                        let wait = links.gate(&peer.to_string(), moved);
                        if !wait.is_zero() {
                            tokio::time::sleep(wait).await;
                        }
                    }
                    respond(&network, request.id, response).await;
                });
            }
            () = changed.notified() => refresh(&args).await,
            _ = figures.tick() => refresh(&args).await,
            _ = collect.tick() => {
                let chunks = args.chunks.clone();
                let _ = tokio::task::spawn_blocking(move || {
                    let now = Timestamp::now().as_unix_millis();
                    match chunks.collect(now) {
                        Ok(c) if c.jobs > 0 => tracing::info!(jobs = c.jobs, chunks = c.chunks, bytes = c.bytes, "dropped checkpoints whose lease ran out"),
                        Ok(_) => {}
                        Err(e) => tracing::warn!(error = %e, "collecting expired checkpoints failed"),
                    }
                })
                .await;
                refresh(&args).await;
            }
        }
    }
}

/// Reads the store's figures and hands them to the advertiser when they
/// changed.
async fn refresh(args: &ServerArgs) {
    let chunks = args.chunks.clone();
    let figures = tokio::task::spawn_blocking(move || chunks.stats().ok())
        .await
        .ok()
        .flatten();
    if let Some(figures) = figures {
        args.stats.send_if_modified(|current| {
            let modified = current.as_ref() != Some(&figures);
            if modified {
                *current = Some(figures);
            }
            modified
        });
    }
}

async fn respond(network: &mpsc::Sender<Command>, id: u64, response: Response) {
    let _ = network
        .send(Command::Respond {
            id,
            answer: Answer::Store(response),
        })
        .await;
}

fn refused(code: ErrorCode, reason: &str) -> Response {
    Response::Error {
        code,
        reason: reason.to_owned(),
    }
}

/// Whether `request.peer` may make this request; the answer when not.
async fn admit(
    args: &ServerArgs,
    trusted: &mut Trusted,
    request: &Inbound,
) -> Result<(), Response> {
    let peer = request.peer;
    let Some(agent) = agent_of(&peer) else {
        return Err(refused(ErrorCode::Refused, "not an agent's peer id"));
    };
    let domain = if peer == args.me {
        Some(args.own_domain.clone())
    } else {
        trusted_domain(args, trusted, &agent).await
    };
    let Some(domain) = domain else {
        return Err(refused(
            ErrorCode::Refused,
            "this store keeps checkpoints only for agents of domains it trusts",
        ));
    };
    owns(&request.request, &agent)?;
    match &request.request {
        Request::Missing { owner, .. } | Request::Put { owner, .. } => {
            check_owner(args, trusted, owner, &domain)
        }
        _ => Ok(()),
    }
}

/// Only a job's submit agent renews or releases its chunks; anyone the
/// store trusts may put and read them ([`storing::may_manage`]).
fn owns(request: &Request, agent: &AgentId) -> Result<(), Response> {
    let asker = agent.to_string();
    let manage = |job: &JobKey| {
        let submitter = job.submitter().map(|s| s.to_string());
        storing::may_manage(job.as_str(), submitter.as_deref(), &asker)
            .map_err(|e| refused(ErrorCode::NotOwner, &e.to_string()))
    };
    match request {
        Request::Renew { jobs, .. } => jobs.iter().try_for_each(manage),
        Request::Release { job, .. } => manage(job),
        Request::Missing { .. }
        | Request::Put { .. }
        | Request::Commit { .. }
        | Request::Get { .. } => Ok(()),
        _ => Err(refused(
            ErrorCode::BadRequest,
            "this store does not know that request",
        )),
    }
}

fn check_owner(
    args: &ServerArgs,
    trusted: &Trusted,
    owner: &Owner,
    asker_domain: &str,
) -> Result<(), Response> {
    let refusing = args.refuse_domains.borrow().clone();
    let domains = storing::Domains {
        own: &args.own_domain,
        trusted: &trusted.domains,
        refused: &refusing,
    };
    storing::may_store_for(&domains, &owner.domain, asker_domain)
        .map_err(|e| refused(ErrorCode::Refused, &e.to_string()))
}

/// The domain of a trusted agent, from the view's machine ads (read again
/// when older than [`TRUSTED_FOR`], or when the agent is not among them
/// and the list is older than [`TRUSTED_REFRESH`]).
async fn trusted_domain(
    args: &ServerArgs,
    trusted: &mut Trusted,
    agent: &AgentId,
) -> Option<String> {
    let age = trusted.read.map(|at| at.elapsed());
    if age.is_some_and(|age| age < TRUSTED_FOR) {
        if let Some(domain) = trusted.agents.get(agent) {
            return Some(domain.clone());
        }
        if age.is_some_and(|age| age < TRUSTED_REFRESH) {
            return None;
        }
    }
    trusted.read = Some(Instant::now());
    let machines = match args
        .view
        .call(ViewMsg::Machines, Some(crate::QUERY_TIMEOUT))
        .await
    {
        Ok(ractor::rpc::CallResult::Success(m)) => m,
        _ => return None,
    };
    trusted.agents = machines
        .iter()
        .map(|m| (m.signer, m.domain.clone()))
        .collect();
    trusted.domains = machines.into_iter().map(|m| m.domain).collect();
    trusted.agents.get(agent).cloned()
}

/// How long a lease the request asks for ends, in unix ms.
fn lease_until(lease_secs: u32) -> u64 {
    Timestamp::now()
        .saturating_add_millis(u64::from(lease_secs) * 1000)
        .as_unix_millis()
}

fn hash_bytes(hash: &starling_protocol::transfer::Hash) -> [u8; 32] {
    *hash.as_bytes()
}

/// Carries out an admitted request. Blocking.
fn serve(chunks: &ChunkStore, request: Request) -> Response {
    match request {
        Request::Missing {
            job,
            owner,
            sequence,
            hashes,
            lease_secs,
        } => {
            let hashes: Vec<[u8; 32]> = hashes.iter().map(hash_bytes).collect();
            match chunks.missing(
                &owner_of(&job, &owner),
                sequence,
                &hashes,
                lease_until(lease_secs),
            ) {
                Ok(indices) => Response::Missing { indices },
                Err(e) => refusal(e),
            }
        }
        Request::Put {
            job,
            owner,
            sequence,
            hash,
            data,
            lease_secs,
        } => match chunks.put(
            &owner_of(&job, &owner),
            sequence,
            hash.as_bytes(),
            &data,
            lease_until(lease_secs),
        ) {
            Ok(()) => Response::Stored,
            Err(e) => refusal(e),
        },
        Request::Commit {
            job,
            sequence,
            hashes,
        } => {
            let hashes: Vec<[u8; 32]> = hashes.iter().map(hash_bytes).collect();
            match chunks.commit(job.as_str(), sequence, &hashes) {
                Ok(()) => Response::Committed,
                Err(e) => refusal(e),
            }
        }
        Request::Get { job, hash } => match chunks.holds(job.as_str(), hash.as_bytes()) {
            Ok(true) => match chunks.get(hash.as_bytes()) {
                Ok(Some(data)) => Response::Chunk { data },
                Ok(None) => refused(ErrorCode::NoSuchChunk, &format!("no chunk {hash} here")),
                Err(e) => refused(ErrorCode::Corrupt, &format!("chunk {hash}: {e}")),
            },
            Ok(false) => refused(
                ErrorCode::NoSuchChunk,
                &format!("this store holds no chunk {hash} of job {job}"),
            ),
            Err(e) => refused(ErrorCode::Failed, &e.to_string()),
        },
        Request::Renew { jobs, lease_secs } => {
            let until = lease_until(lease_secs);
            let mut unknown = Vec::new();
            for (i, job) in jobs.iter().enumerate() {
                match chunks.renew(job.as_str(), until) {
                    Ok(true) => {}
                    Ok(false) => unknown.push(u32::try_from(i).unwrap_or(u32::MAX)),
                    Err(e) => return refused(ErrorCode::Failed, &e.to_string()),
                }
            }
            Response::Renewed { unknown }
        }
        Request::Release { job, keep } => match chunks.release(job.as_str(), keep) {
            Ok(freed) => Response::Released { freed },
            Err(e) => refused(ErrorCode::Failed, &e.to_string()),
        },
        _ => refused(
            ErrorCode::BadRequest,
            "this store does not know that request",
        ),
    }
}

fn owner_of(job: &JobKey, owner: &Owner) -> starling_storage::chunks::Owner {
    starling_storage::chunks::Owner {
        job: job.as_str().to_owned(),
        domain: owner.domain.clone(),
        user: owner.user.clone(),
    }
}

fn refusal(refusal: Refusal) -> Response {
    let code = match &refusal {
        Refusal::NoSpace { .. } => ErrorCode::NoSpace,
        Refusal::DomainQuota { .. } | Refusal::UserQuota { .. } => ErrorCode::Quota,
        Refusal::BadHash => ErrorCode::BadHash,
        Refusal::TooLarge { .. } => ErrorCode::TooLarge,
        Refusal::Unknown(_) => ErrorCode::Incomplete,
        Refusal::Invalid(_) => ErrorCode::BadRequest,
        _ => ErrorCode::Failed,
    };
    let mut reason = refusal.to_string();
    reason.truncate(starling_protocol::wire::MAX_REASON_LEN);
    refused(code, &reason)
}

#[cfg(test)]
mod tests {
    use super::*;
    use starling_protocol::checkpoint::chunk_hashes;
    use starling_protocol::identity::Keypair;
    use starling_protocol::transfer::Hash;
    use starling_storage::chunks::Limits;

    fn store(dir: &std::path::Path, lend: u64, per_user: Option<u64>) -> ChunkStore {
        ChunkStore::open(
            &dir.join("chunks"),
            Limits {
                lend_bytes: lend,
                per_user,
                ..Limits::default()
            },
        )
        .unwrap()
    }

    fn key() -> JobKey {
        let agent = AgentId::from_public_key(Keypair::generate().unwrap().public());
        JobKey::new(&agent, 1, 0)
    }

    fn owner() -> Owner {
        Owner {
            domain: "d".into(),
            user: "alice".into(),
        }
    }

    fn put(job: &JobKey, hash: Hash, data: &[u8]) -> Request {
        Request::Put {
            job: job.clone(),
            owner: owner(),
            sequence: 1,
            hash,
            data: data.to_vec(),
            lease_secs: 3600,
        }
    }

    fn code(response: &Response) -> Option<ErrorCode> {
        match response {
            Response::Error { code, .. } => Some(*code),
            _ => None,
        }
    }

    #[test]
    fn a_checkpoint_is_put_committed_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let chunks = store(dir.path(), 1 << 30, None);
        let job = key();
        let data = b"state 42".to_vec();
        let hash = chunk_hashes(&data)[0];
        let missing = serve(
            &chunks,
            Request::Missing {
                job: job.clone(),
                owner: owner(),
                sequence: 1,
                hashes: vec![hash],
                lease_secs: 3600,
            },
        );
        assert_eq!(missing, Response::Missing { indices: vec![0] });
        assert_eq!(serve(&chunks, put(&job, hash, &data)), Response::Stored);
        let commit = Request::Commit {
            job: job.clone(),
            sequence: 1,
            hashes: vec![hash],
        };
        assert_eq!(serve(&chunks, commit), Response::Committed);
        assert_eq!(
            serve(&chunks, Request::Get { job, hash }),
            Response::Chunk { data }
        );
    }

    #[test]
    fn bad_chunks_and_other_jobs_chunks_are_refused_with_a_reason() {
        let dir = tempfile::tempdir().unwrap();
        let chunks = store(dir.path(), 1 << 30, Some(16));
        let job = key();
        // Bytes that do not hash to the name they came under.
        let wrong = serve(&chunks, put(&job, chunk_hashes(b"other")[0], b"these"));
        assert_eq!(code(&wrong), Some(ErrorCode::BadHash), "{wrong:?}");
        // Over the user's quota.
        let big = vec![1u8; 64];
        let over = serve(&chunks, put(&job, chunk_hashes(&big)[0], &big));
        assert_eq!(code(&over), Some(ErrorCode::Quota), "{over:?}");
        let Response::Error { reason, .. } = over else {
            unreachable!()
        };
        assert!(reason.contains("alice"), "{reason}");
        // A chunk held for one job is not given out under another's name.
        let data = b"mine".to_vec();
        let hash = chunk_hashes(&data)[0];
        assert_eq!(serve(&chunks, put(&job, hash, &data)), Response::Stored);
        let stranger = serve(&chunks, Request::Get { job: key(), hash });
        assert_eq!(
            code(&stranger),
            Some(ErrorCode::NoSuchChunk),
            "{stranger:?}"
        );
        // A commit naming a chunk never sent.
        let incomplete = serve(
            &chunks,
            Request::Commit {
                job: job.clone(),
                sequence: 1,
                hashes: vec![hash, chunk_hashes(b"never sent")[0]],
            },
        );
        assert_eq!(
            code(&incomplete),
            Some(ErrorCode::Incomplete),
            "{incomplete:?}"
        );
    }

    #[test]
    fn a_full_store_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let chunks = store(dir.path(), 8, None);
        let data = vec![3u8; 64];
        let full = serve(&chunks, put(&key(), chunk_hashes(&data)[0], &data));
        assert_eq!(code(&full), Some(ErrorCode::NoSpace), "{full:?}");
    }

    #[test]
    fn only_the_jobs_submit_agent_renews_or_releases_it() {
        let job = key();
        let submitter = job.submitter().unwrap();
        let stranger = AgentId::from_public_key(Keypair::generate().unwrap().public());
        let release = Request::Release {
            job: job.clone(),
            keep: None,
        };
        let renew = Request::Renew {
            jobs: vec![job.clone()],
            lease_secs: 3600,
        };
        for request in [&release, &renew] {
            assert!(owns(request, &submitter).is_ok());
            let refused = owns(request, &stranger).unwrap_err();
            assert_eq!(code(&refused), Some(ErrorCode::NotOwner), "{refused:?}");
        }
        // Anyone trusted may put and read.
        assert!(owns(
            &Request::Get {
                job,
                hash: chunk_hashes(b"x")[0]
            },
            &stranger
        )
        .is_ok());
    }
}
