//! The claim protocol's requests as the startd answers them
//! ([`claim::Request`]): a claim (gathered for arbitration, or decided at
//! once), a keepalive that renews a lease, a co-allocated node's barrier,
//! a release, a vacate, and a peek at a running job's output.
//!
//! It only routes: whether a claim is taken is `grant`'s, a busy machine's
//! queue is `waiting`'s, a vacate is carried out by `policy`. It reads a
//! job's sandbox only to peek, and never writes there.

use std::os::unix::fs::OpenOptionsExt as _;

use libp2p::PeerId;
use ractor::ActorRef;
use starling_protocol::claim::{self, ClaimId, RejectCode};

use super::{millis, StartdMsg, StartdState, ARBITRATION_WINDOW};
use crate::execute::barrier;
use crate::network::Command;
use crate::starter;

impl StartdState {
    /// Answers a claim-protocol request; `None` when a claim request waits
    /// for the machine (it is answered later, with `id`).
    pub(super) async fn on_claim(
        &mut self,
        myself: &ActorRef<StartdMsg>,
        peer: PeerId,
        id: u64,
        request: claim::Request,
    ) -> Option<claim::Response> {
        Some(match request {
            claim::Request::Claim {
                request,
                job,
                lease_ms,
                wait_ms,
                ..
            } => {
                // A retry of a granted request, or a draining machine: at once.
                if self.granted.contains_key(&(peer, request)) || self.drain.is_some() {
                    return Some(self.grant(peer, request, &job, lease_ms).await);
                }
                match self.enqueue(peer, id, request, job, lease_ms, wait_ms) {
                    Ok(()) => {
                        if !self.arbitration_scheduled {
                            self.arbitration_scheduled = true;
                            myself.send_after(ARBITRATION_WINDOW, || StartdMsg::Arbitrate);
                        }
                        return None;
                    }
                    // Not a job that could wait here: grant says why.
                    Err(Some(job)) => self.grant(peer, request, &job, lease_ms).await,
                    Err(None) => Self::reject(
                        request,
                        RejectCode::Busy,
                        "the machine is busy and too many requests wait for it",
                    ),
                }
            }
            claim::Request::Keepalive { claim } => match self.claims.get_mut(&claim) {
                Some(held) if held.peer == peer => {
                    held.deadline = tokio::time::Instant::now() + held.lease;
                    if let (Some(job), Some(runs)) = (&held.job, self.args.isolation.runs()) {
                        // The watchdog and the next run of this agent read
                        // the lease there.
                        let lease = starling_process::runs::Lease::from_now(held.lease);
                        let _ =
                            runs.renew(&starling_process::runs::run_name(&claim, job.run), &lease);
                    }
                    claim::Response::KeptAlive {
                        claim,
                        lease_ms: millis(held.lease),
                        running: held.job.is_some(),
                    }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Barrier { claim, release } => {
                let host = self.contact_host().await;
                match self.claims.get_mut(&claim) {
                    Some(held) if held.peer == peer => {
                        held.deadline = tokio::time::Instant::now() + held.lease;
                        let barrier = held.job.as_ref().and_then(|j| j.barrier.clone());
                        let status = match (&barrier, release) {
                            (Some(b), Some(contacts)) => {
                                b.release(contacts);
                                b.status()
                            }
                            (Some(b), None) => b.status(),
                            (None, _) if held.job.is_some() => barrier::Status {
                                ready: false,
                                failed: Some(
                                    "the job under the claim is not a parallel node".into(),
                                ),
                            },
                            (None, _) => barrier::Status {
                                ready: false,
                                failed: None,
                            },
                        };
                        claim::Response::AtBarrier {
                            claim,
                            ready: status.ready,
                            host,
                            failed: status.failed,
                        }
                    }
                    _ => claim::Response::UnknownClaim { claim },
                }
            }
            claim::Request::Release { claim, reason } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => {
                    tracing::debug!(%claim, %reason, "claim released by its submitter");
                    self.drop_claim(claim).await;
                    claim::Response::Released { claim }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Vacate { claim, reason } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => self.vacate_for_submitter(claim, reason).await,
                _ => claim::Response::UnknownClaim { claim },
            },
            claim::Request::Peek {
                claim,
                stream,
                offset,
                max,
            } => match self.claims.get(&claim) {
                Some(held) if held.peer == peer => {
                    let running = held.job.as_ref().map(|job| {
                        self.args
                            .sandboxes
                            .join(starling_process::runs::run_name(&claim, job.run))
                    });
                    let read = tokio::task::spawn_blocking(move || match running {
                        Some(sandbox) => peek(&sandbox, stream, offset, max),
                        None => Ok((0, Vec::new(), 0)),
                    })
                    .await;
                    match read {
                        Ok(Ok((offset, bytes, size))) => claim::Response::Peeked {
                            claim,
                            offset,
                            bytes,
                            size,
                            running: self.claims.get(&claim).is_some_and(|h| h.job.is_some()),
                        },
                        Ok(Err(e)) => {
                            tracing::debug!(%claim, error = %e, "could not read the job's output");
                            claim::Response::Peeked {
                                claim,
                                offset: 0,
                                bytes: Vec::new(),
                                size: 0,
                                running: false,
                            }
                        }
                        Err(_) => claim::Response::UnknownClaim { claim },
                    }
                }
                _ => claim::Response::UnknownClaim { claim },
            },
            _ => claim::Response::UnknownClaim {
                claim: ClaimId::from_bytes([0; 16]),
            },
        })
    }

    /// This machine's host in a co-allocated job's contact list
    /// ([`barrier::contact_host`]).
    async fn contact_host(&mut self) -> String {
        if let Some(host) = &self.contact_host {
            return host.clone();
        }
        let listen = crate::ask_network(&self.args.network, Command::ListenAddrs)
            .await
            .unwrap_or_default();
        let hostname = self
            .machine_ad
            .as_ref()
            .and_then(|m| crate::ad::text(m, "Machine"))
            .unwrap_or_else(|| "localhost".to_owned());
        let host = barrier::contact_host(&listen, &hostname);
        if !listen.is_empty() {
            self.contact_host = Some(host.clone());
        }
        host
    }
}

/// Reads at most `max` bytes of `stream` of the job whose sandbox is
/// `sandbox`, from `offset` (`None`: the last `max` bytes): where they
/// start, the bytes, and the stream's length now. A stream not made yet
/// reads as empty. Blocking.
fn peek(
    sandbox: &std::path::Path,
    stream: claim::OutputStream,
    offset: Option<u64>,
    max: u32,
) -> std::io::Result<(u64, Vec<u8>, u64)> {
    use std::io::{Read as _, Seek as _};
    let name = match stream {
        claim::OutputStream::Stderr => starter::STDERR_FILE,
        _ => starter::STDOUT_FILE,
    };
    // The job's files are its own: a link there must not lead the agent
    // to read another file.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(sandbox.join(name));
    let mut file = match file {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok((0, Vec::new(), 0)),
        Err(e) => return Err(e),
    };
    let size = file.metadata()?.len();
    let max = u64::from(max.min(claim::MAX_PEEK_LEN));
    let start = offset.unwrap_or_else(|| size.saturating_sub(max)).min(size);
    file.seek(std::io::SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(max).read_to_end(&mut bytes)?;
    Ok((start, bytes, size))
}
