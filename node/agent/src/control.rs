//! The control actor: serves the control API for the agent and answers
//! each request by asking the other actors: the job requests in [`jobs`],
//! the checkpoint requests in [`checkpoints`], a running job's output in
//! [`tail`]. It decides nothing itself: who may ask what is
//! `starling_policies::control_access`'s.

pub mod checkpoints;
pub mod jobs;
pub mod tail;

/// Checkpoint fetches (`ckpt get`) that may run at once.
pub const MAX_CHECKPOINT_GETS: usize = 4;

use std::path::PathBuf;
use std::sync::Arc;

use ractor::{Actor, ActorProcessingErr, ActorRef};
use tokio::sync::{mpsc, Notify};

use starling_policies::control_access::{self, Operation};

use super::network::Command;
use super::{ask_network, current_view, StaticInfo, SupervisorMsg, QUERY_TIMEOUT};
use crate::view_actor::ViewMsg;
use starling_control::{self as control, Caller, Request, Response};

#[derive(Debug)]
pub enum ControlMsg {
    /// The server task ended; the actor fails so that it is restarted.
    ServerEnded(String),
}

pub struct Control;

#[derive(Clone)]
pub struct ControlArgs {
    pub data_dir: PathBuf,
    pub supervisor: ActorRef<SupervisorMsg>,
    pub network: mpsc::Sender<Command>,
    pub info: StaticInfo,
    pub shutdown_requested: Arc<Notify>,
    /// `[control] administrators`.
    pub administrators: Arc<Vec<String>>,
    /// Whether the data directory is full: submissions are refused
    /// meanwhile ([`crate::supervisor::disk`]).
    pub disk: crate::supervisor::disk::Receiver,
    /// Where this machine stands, for fetching checkpoints from the
    /// nearest replica.
    pub place: starling_policies::replicas::Place,
    /// Permits for the checkpoint fetches that run at once.
    pub checkpoint_gets: Arc<tokio::sync::Semaphore>,
    /// The links this agent owns (`starling net`).
    pub links: Arc<super::links::Owner>,
    /// `[http] listen`: where the web page and metrics are served
    /// ([`starling_web`]), from the same handler.
    pub http: Option<std::net::SocketAddr>,
    /// What the actors count, for `/metrics`.
    pub metrics: starling_web::metrics::Metrics,
}

pub struct ControlState {
    server: tokio::task::JoinHandle<()>,
    web: Option<tokio::task::JoinHandle<()>>,
}

impl Actor for Control {
    type Msg = ControlMsg;
    type State = ControlState;
    type Arguments = ControlArgs;

    async fn pre_start(
        &self,
        myself: ActorRef<ControlMsg>,
        args: ControlArgs,
    ) -> Result<ControlState, ActorProcessingErr> {
        let dir = args.data_dir.clone();
        // Bound before anything is served, so that a port in use stops
        // the agent with a message naming `[http] listen`.
        let metrics = args.metrics.clone();
        let web_listener = match args.http {
            // ractor shows only the error's own message: the cause goes
            // into it.
            Some(addr) => Some(starling_web::bind(addr).await.map_err(|e| {
                let cause = std::error::Error::source(&e)
                    .map(|s| format!(": {s}"))
                    .unwrap_or_default();
                format!("{e}{cause}")
            })?),
            None => None,
        };
        let handler: Arc<dyn control::Handler> = Arc::new(AgentHandler { args });
        let web = web_listener.map(|listener| {
            if let Ok(addr) = listener.local_addr() {
                tracing::info!(%addr, "serving the web page and /metrics");
            }
            tokio::spawn(starling_web::serve(listener, handler.clone(), metrics))
        });
        let server = tokio::spawn(async move {
            let why = match control::serve(&dir, handler).await {
                Ok(()) => "the control server stopped".to_owned(),
                Err(e) => format!("the control server failed: {e}"),
            };
            let _ = myself.cast(ControlMsg::ServerEnded(why));
        });
        Ok(ControlState { server, web })
    }

    async fn post_stop(
        &self,
        _myself: ActorRef<ControlMsg>,
        state: &mut ControlState,
    ) -> Result<(), ActorProcessingErr> {
        state.server.abort();
        if let Some(web) = state.web.take() {
            // Waited for, so that a restarted actor can bind the port
            // again.
            web.abort();
            let _ = web.await;
        }
        Ok(())
    }

    async fn handle(
        &self,
        _myself: ActorRef<ControlMsg>,
        message: ControlMsg,
        _state: &mut ControlState,
    ) -> Result<(), ActorProcessingErr> {
        match message {
            ControlMsg::ServerEnded(why) => Err(why.into()),
        }
    }
}

struct AgentHandler {
    args: ControlArgs,
}

/// What `request` does, for the access rules.
fn operation(request: &Request) -> Operation {
    match request {
        Request::Submit { .. } => Operation::Submit,
        Request::Act { .. } | Request::Edit { .. } => Operation::ChangeJobs,
        Request::Shutdown | Request::Drain { .. } => Operation::ChangeMachine,
        Request::UserPrio {
            set_factor: Some(_),
        } => Operation::ChangeMachine,
        _ => Operation::Read,
    }
}

#[async_trait::async_trait]
impl control::Handler for AgentHandler {
    async fn handle(&self, caller: &Caller, request: Request) -> Response {
        let args = &self.args;
        let access = crate::control::jobs::Access {
            caller,
            agent_uid: rustix::process::geteuid().as_raw(),
            administrators: &args.administrators,
        };
        if let Err(refusal) =
            control_access::may(operation(&request), &access.asker(), &access.agent())
        {
            tracing::info!(uid = caller.uid, pid = ?caller.pid, %refusal, "control request refused");
            return Response::Error {
                message: refusal.to_string(),
            };
        }
        if let Request::Submit { .. } = &request {
            // Refused before anything is read or written: the queue
            // could not keep the jobs, and the machine takes none.
            if let Some(reason) = crate::supervisor::disk::full_reason(&args.disk) {
                return Response::Error {
                    message: format!(
                        "{reason}; this agent takes no submissions until space returns"
                    ),
                };
            }
        }
        match request {
            Request::Info => {
                let listen = ask_network(&args.network, Command::ListenAddrs)
                    .await
                    .unwrap_or_default();
                let peer_list = peers(&args.network, &args.supervisor).await;
                let traffic = ask_network(&args.network, Command::Traffic)
                    .await
                    .unwrap_or_default();
                let reachability = ask_network(&args.network, Command::Reachability)
                    .await
                    .map_or_else(|| "unknown".to_owned(), |r| r.to_string());
                let ads = match current_view(&args.supervisor).await {
                    Ok(view) => {
                        match view
                            .call(crate::view_actor::ViewMsg::Counts, Some(QUERY_TIMEOUT))
                            .await
                        {
                            Ok(ractor::rpc::CallResult::Success(c)) => c,
                            _ => Default::default(),
                        }
                    }
                    Err(_) => Default::default(),
                };
                Response::Info(control::Info {
                    agent_id: args.info.agent_id.clone(),
                    domain: args.info.domain.clone(),
                    version: env!("CARGO_PKG_VERSION").to_owned(),
                    pid: std::process::id(),
                    data_dir: args.data_dir.clone(),
                    listen: listen.iter().map(ToString::to_string).collect(),
                    peers: peer_list.len(),
                    ads,
                    started_ms: args.info.started_ms,
                    bytes_received: traffic.received,
                    bytes_sent: traffic.sent,
                    reachability,
                })
            }
            Request::Ads { kind, constraint } => {
                let my_type = match kind.to_ascii_lowercase().as_str() {
                    "machine" => Some("Machine".to_owned()),
                    "submitter" => Some("Submitter".to_owned()),
                    "any" => None,
                    other => {
                        return Response::Error {
                            message: format!(
                                "unknown kind of ad {other:?}: use machine, submitter or any"
                            ),
                        }
                    }
                };
                let view = match current_view(&args.supervisor).await {
                    Ok(v) => v,
                    Err(message) => return Response::Error { message },
                };
                match view
                    .call(
                        |reply| crate::view_actor::ViewMsg::Query {
                            my_type,
                            constraint,
                            reply,
                        },
                        Some(QUERY_TIMEOUT),
                    )
                    .await
                {
                    Ok(ractor::rpc::CallResult::Success(Ok(ads))) => Response::Ads { ads },
                    Ok(ractor::rpc::CallResult::Success(Err(message))) => {
                        Response::Error { message }
                    }
                    _ => Response::Error {
                        message: "the view did not answer in time".to_owned(),
                    },
                }
            }
            Request::Peers => Response::Peers {
                peers: peers(&args.network, &args.supervisor).await,
            },
            Request::Links => Response::Links {
                links: args.links.summary(),
                transfers: args.links.flights().summary(),
            },
            Request::Shutdown => {
                args.shutdown_requested.notify_one();
                Response::Done
            }
            checkpoints @ (Request::Checkpoints { .. } | Request::CheckpointGet { .. }) => {
                let staging = args.data_dir.join("transfer");
                let ctx = crate::control::checkpoints::Context {
                    supervisor: &args.supervisor,
                    network: &args.network,
                    access: &access,
                    me: &args.info.agent_id,
                    place: &args.place,
                    staging: &staging,
                    gets: &args.checkpoint_gets,
                };
                crate::control::checkpoints::handle(&ctx, checkpoints).await
            }
            Request::Tail {
                job,
                stderr,
                offset,
                max,
            } => {
                let queue = match args
                    .supervisor
                    .call(SupervisorMsg::Queue, Some(QUERY_TIMEOUT))
                    .await
                {
                    Ok(ractor::rpc::CallResult::Success(q)) => q,
                    _ => {
                        return Response::Error {
                            message: "the agent is stopping".to_owned(),
                        }
                    }
                };
                tail::tail(&queue, &args.network, &access, &job, stderr, offset, max)
                    .await
                    .unwrap_or_else(|message| Response::Error { message })
            }
            jobs => {
                crate::control::jobs::handle(
                    &args.supervisor,
                    &args.info,
                    &access,
                    args.links.flights(),
                    jobs,
                )
                .await
            }
        }
    }
}

/// This agent's peers, with how many of each one's ads the view rejected.
pub(crate) async fn peers(
    network: &mpsc::Sender<Command>,
    supervisor: &ActorRef<SupervisorMsg>,
) -> Vec<control::Peer> {
    let Some(list) = ask_network(network, Command::Peers).await else {
        return Vec::new();
    };
    let rejects = match current_view(supervisor).await {
        Ok(view) => {
            let ids = list.iter().map(|p| p.peer).collect();
            match view
                .call(
                    |reply| ViewMsg::Rejects { peers: ids, reply },
                    Some(QUERY_TIMEOUT),
                )
                .await
            {
                Ok(ractor::rpc::CallResult::Success(counts)) => counts,
                _ => Vec::new(),
            }
        }
        Err(_) => Vec::new(),
    };
    list.into_iter()
        .enumerate()
        .map(|(i, p)| control::Peer {
            agent_id: p.peer.to_string(),
            addresses: p.addresses.iter().map(ToString::to_string).collect(),
            rtt_ms: p.rtt.map(|d| d.as_secs_f64() * 1000.0),
            score: p.score,
            rejected: rejects.get(i).copied().unwrap_or(0),
        })
        .collect()
}
