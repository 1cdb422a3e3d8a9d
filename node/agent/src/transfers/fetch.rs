//! Pulling offered files from a peer, chunk by chunk, into a directory.
//!
//! Both sides use it: the execute agent pulls a job's input from its submit
//! agent, the submit agent pulls the output back. Each chunk is a
//! `transfer::Request::Chunk` through the network loop; the
//! [`starling_process::files::Assembler`] writes it, refuses anything out of
//! order or beyond the announced size, and checks each file's hash before it
//! is renamed into place, so a half-pulled or corrupted file is never seen.

use std::path::Path;
use std::time::{Duration, Instant};

use libp2p::PeerId;
use starling_protocol::transfer::{self, File, TransferId};
use tokio::sync::mpsc;

use crate::links;
use crate::network::Command;
use starling_process::files::Assembler;

/// How often a chunk is asked for again after the peer said busy or did not
/// answer, before the pull fails.
pub const CHUNK_ATTEMPTS: u32 = 5;

/// Pause before asking again for a chunk the peer was too busy to send.
pub const BUSY_PAUSE: Duration = Duration::from_millis(50);

/// Chunks asked for at once.
pub const PIPELINE: usize = 4;

/// Pulls every file of `files` offered under `transfer` by `peer` into
/// `dir`, at most `budget` bytes in all. The caller [`close`]s the transfer
/// once it has made use of the files (a submit agent records the job's end
/// first, so that a crash in between makes the execute agent offer again). The
/// error says which file failed and why. Dropping the future midway leaves
/// no file in place (only the assembler's partial files, which it removes).
///
/// With `pace`, at most at its rate (a reserved one).
pub async fn pull(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    transfer: TransferId,
    files: &[File],
    dir: &Path,
    budget: u64,
    mut pace: Option<&mut crate::links::Pace>,
) -> Result<u64, PullError> {
    use futures::{FutureExt as _, StreamExt as _};
    let mut assembler =
        Assembler::new(dir, files.to_vec(), budget).map_err(|e| PullError::Here(e.to_string()))?;
    if u32::try_from(files.len()).is_err() {
        return Err(PullError::Here("too many files".to_owned()));
    }
    // Every chunk in order; up to PIPELINE asked for at once, so the link
    // does not idle a round trip per chunk. The assembler takes them in
    // order (a peer sends a short chunk only at a file's end).
    let step = u64::from(transfer::MAX_CHUNK_LEN);
    let mut wanted: Vec<(usize, u64, u32)> = Vec::new();
    for (index, file) in files.iter().enumerate() {
        for k in 0..file.size.div_ceil(step).max(1) {
            let offset = k * step;
            wanted.push((index, offset, (file.size - offset).min(step) as u32));
        }
    }
    let asks = wanted.into_iter().map(|(index, offset, len)| {
        let network = network.clone();
        async move {
            // An empty file (or an empty tail) needs nothing from the peer.
            let data = if len == 0 {
                Ok(Vec::new())
            } else {
                chunk(&network, peer, transfer, index as u32, offset, len).await
            };
            (index, offset, data)
        }
        .boxed()
    });
    let mut chunks = futures::stream::iter(asks).buffered(PIPELINE);
    let mut total = 0u64;
    while let Some((index, offset, data)) = chunks.next().await {
        let name = files.get(index).map(|f| f.name.as_str()).unwrap_or("?");
        let data = data.map_err(|e| PullError::Peer(format!("{name}: {e}")))?;
        total += data.len() as u64;
        assembler
            .chunk(index, offset, &data)
            .map_err(|e| PullError::Here(format!("{name}: {e}")))?;
        if let Some(pace) = pace.as_deref_mut() {
            pace.moved(data.len() as u64).await;
        }
    }
    if !assembler.is_complete() {
        return Err(PullError::Peer(
            "the transfer ended before every file arrived".to_owned(),
        ));
    }
    Ok(total)
}

/// Why a pull failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PullError {
    /// The files could not be had from the peer: it is gone, restarted
    /// (and forgot the transfer), busy, or answered nonsense. Asking again
    /// later, or running the job again, may well work.
    Peer(String),
    /// They could not be kept here: more than the budget, a file that
    /// cannot be written.
    Here(String),
}

impl std::fmt::Display for PullError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PullError::Peer(e) | PullError::Here(e) => f.write_str(e),
        }
    }
}

/// Tells the offerer it may forget the files.
pub async fn close(network: &mpsc::Sender<Command>, peer: PeerId, transfer: TransferId) {
    let _ = request(network, peer, transfer::Request::Close { transfer }).await;
}

/// Sends one transfer request and waits for its answer.
pub async fn request(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    request: transfer::Request,
) -> Result<transfer::Response, String> {
    crate::network::jobs::ask(network, |reply| Command::Transfer {
        peer,
        request,
        reply,
    })
    .await
}

async fn chunk(
    network: &mpsc::Sender<Command>,
    peer: PeerId,
    transfer: TransferId,
    file: u32,
    offset: u64,
    len: u32,
) -> Result<Vec<u8>, String> {
    let mut last = String::new();
    for attempt in 0..CHUNK_ATTEMPTS {
        if attempt > 0 {
            tokio::time::sleep(BUSY_PAUSE * attempt).await;
        }
        let asked = transfer::Request::Chunk {
            transfer,
            file,
            offset,
            len,
        };
        match request(network, peer, asked).await {
            Ok(transfer::Response::Chunk {
                file: f,
                offset: o,
                data,
                ..
            }) if f == file && o == offset => return Ok(data),
            Ok(transfer::Response::Error {
                code: transfer::ErrorCode::Busy,
                reason,
                ..
            }) => last = reason,
            Ok(transfer::Response::Error { code, reason, .. }) => {
                return Err(format!("{code}: {reason}"))
            }
            Ok(other) => return Err(format!("unexpected answer {other:?}")),
            Err(e) => last = e,
        }
    }
    Err(format!("no chunk after {CHUNK_ATTEMPTS} attempts: {last}"))
}

/// Pulls `files` from `peer` as [`pull`] does, having
/// first reserved the path (waiting, as admission control says, until a
/// slot is free within the horizon) and then paced at the reserved rate;
/// without a reservation, at its share of what reservations leave on this
/// agent's host link ([`links::Owner::gate`]).
pub async fn pull_reserved(
    client: &links::Client,
    peer: PeerId,
    transfer: TransferId,
    files: &[transfer::File],
    dir: &std::path::Path,
    budget: u64,
    purpose: &links::Purpose,
) -> Result<u64, PullError> {
    let bytes: u64 = files.iter().map(|f| f.size).sum();
    let flight = client
        .owner
        .flights()
        .register(purpose.kind, peer, purpose.job, bytes);
    let asked = Instant::now();
    let reserved = links::admit(
        client,
        peer,
        bytes,
        links::ADMISSION_WAIT,
        purpose.user.as_deref(),
    )
    .await;
    let mut pace = match &reserved {
        Some(reserved) => {
            flight.admitted(reserved.slot.rate);
            links::until_start(&reserved.slot).await;
            links::Pace::new(reserved.slot.rate)
        }
        None => {
            flight.unreserved();
            links::Pace::unreserved(&client.owner, peer)
        }
    }
    .counting(flight);
    let started = Instant::now();
    let pulled = pull(
        &client.network,
        peer,
        transfer,
        files,
        dir,
        budget,
        Some(&mut pace),
    )
    .await;
    if let Ok(n) = &pulled {
        client
            .metrics
            .transferred(starling_web::metrics::Direction::received, *n);
    }
    let took = started.elapsed().as_secs_f64();
    let achieved = (bytes as f64 / took.max(1e-3)).round();
    let Some(reserved) = reserved else {
        tracing::debug!(bytes, achieved, "moved the files unreserved");
        return pulled;
    };
    client.release(&reserved).await;
    tracing::info!(
        bytes,
        rate = reserved.slot.rate.round(),
        achieved,
        waited_ms = asked
            .elapsed()
            .as_millis()
            .saturating_sub(started.elapsed().as_millis()),
        negotiated_ms = reserved.negotiated.as_millis(),
        hops = reserved.path.len(),
        "moved the files in a reserved slot"
    );
    pulled
}
