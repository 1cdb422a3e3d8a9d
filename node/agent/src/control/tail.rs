//! `starling tail` on the submit side: part of a running job's standard
//! output or error, read from its machine as it is now (HTCondor's
//! `condor_tail`). The submit agent asks the execute agent under the job's
//! claim ([`claim::Request::Peek`]): only the claim's holder may, so a
//! job's output is read only through the agent that submitted it, for the
//! job's owner or an administrator.

use std::time::Duration;

use starling_policies::control_access;
use starling_protocol::claim::{self, ClaimId, OutputStream};
use tokio::sync::mpsc;

use super::jobs::Access;
use crate::network::Command;
use starling_control::Response;
use starling_queue::{Queue, Target};

/// How long the machine has to answer.
const PEEK_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads `max` bytes of job `job`'s stream from `offset` (`None`: the
/// last `max` bytes), or says why not.
pub async fn tail(
    queue: &Queue,
    network: &mpsc::Sender<Command>,
    access: &Access<'_>,
    job: &str,
    stderr: bool,
    offset: Option<u64>,
    max: u32,
) -> Result<Response, String> {
    let id = match Target::parse(job) {
        Ok(Target::Job(id)) => id,
        _ => return Err(format!("{job:?} is not a job id (like 12.0)")),
    };
    let Some(ad) = queue.job(id) else {
        return Err(format!("job {id} is not in the queue"));
    };
    let owner = crate::ad::text(&ad, "Owner");
    control_access::output_access(&access.asker(), &access.agent(), owner.as_deref())
        .map_err(|refusal| format!("job {id}: {refusal}"))?;
    let running = crate::ad::integer(&ad, "JobStatus") == Some(starling_queue::status::RUNNING);
    let machine = crate::ad::text(&ad, starling_queue::EXECUTE_AGENT);
    let claim = crate::ad::text(&ad, "ClaimId").and_then(|c| c.parse::<ClaimId>().ok());
    let (Some(machine), Some(claim), true) = (machine, claim, running) else {
        return Err(format!(
            "job {id} is not running: its output is in its output file once it ends"
        ));
    };
    let peer = machine
        .parse()
        .map_err(|_| format!("job {id}: its machine's agent id {machine:?} cannot be read"))?;
    let request = claim::Request::Peek {
        claim,
        stream: if stderr {
            OutputStream::Stderr
        } else {
            OutputStream::Stdout
        },
        offset,
        max: max.min(claim::MAX_PEEK_LEN),
    };
    let asked = crate::network::jobs::ask(network, |reply| Command::Claim {
        peer,
        request,
        reply,
    });
    let host = crate::ad::text(&ad, "RemoteHost").unwrap_or(machine);
    match tokio::time::timeout(PEEK_TIMEOUT, asked).await {
        Ok(Ok(claim::Response::Peeked {
            offset,
            bytes,
            size,
            running,
            ..
        })) => Ok(Response::Tail {
            offset,
            bytes,
            size,
            running,
        }),
        Ok(Ok(claim::Response::UnknownClaim { .. })) => Err(format!(
            "job {id}: {host} no longer runs it (it has just ended or moved)"
        )),
        Ok(Ok(other)) => Err(format!("job {id}: {host} answered {other:?}")),
        // An execute agent older than `Peek` cannot read the request.
        Ok(Err(e)) => Err(format!("job {id}: {host} could not be asked ({e})")),
        Err(_) => Err(format!(
            "job {id}: {host} did not answer within {} s",
            PEEK_TIMEOUT.as_secs()
        )),
    }
}
