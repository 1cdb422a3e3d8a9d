//! The ceiling the agent's transport allows: one libp2p stream per
//! connection over loopback TCP, with the agent's upgrades (TCP_NODELAY,
//! noise, yamux at its defaults; `--plaintext` for libp2p's plaintext
//! instead of noise, `--raw` for the bare TCP socket), moving `--mib` MiB
//! from one sender to each of `--streams` receivers at once, as a
//! checkpoint goes to its replicas. No framing, no disk, no hashing.
//!
//!     cargo run --release -p starling-agent --example p2p_throughput -- --mib 256 --streams 2 --runs 3
//!
//! Prints one line per run: seconds and MiB/s per stream (of `--mib`, as
//! bench/ckpt/rawtcp.py counts), then a JSON line of the medians.

use std::time::{Duration, Instant};

use futures::{AsyncReadExt as _, AsyncWriteExt as _, StreamExt as _};
use libp2p::core::muxing::{StreamMuxerBox, StreamMuxerExt as _};
use libp2p::core::transport::{Boxed, DialOpts, ListenerId, PortUse, TransportEvent};
use libp2p::core::upgrade::Version;
use libp2p::core::{Endpoint, Transport as _};
use libp2p::{identity, noise, plaintext, tcp, yamux, Multiaddr, PeerId};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

#[derive(Clone, Copy, PartialEq)]
enum Security {
    Noise,
    Plaintext,
    Raw,
}

fn transport(key: &identity::Keypair, security: Security) -> Boxed<(PeerId, StreamMuxerBox)> {
    let tcp =
        tcp::tokio::Transport::new(tcp::Config::default().nodelay(true)).upgrade(Version::V1Lazy);
    match security {
        Security::Plaintext => tcp
            .authenticate(plaintext::Config::new(key))
            .multiplex(yamux::Config::default())
            .timeout(Duration::from_secs(20))
            .boxed(),
        _ => tcp
            .authenticate(noise::Config::new(key).expect("noise keys"))
            .multiplex(yamux::Config::default())
            .timeout(Duration::from_secs(20))
            .boxed(),
    }
}

/// Keeps the connection's muxer polled (yamux moves stream data only
/// while its connection is polled).
fn drive(mut muxer: StreamMuxerBox) {
    tokio::spawn(async move {
        loop {
            if futures::future::poll_fn(|cx| muxer.poll_unpin(cx))
                .await
                .is_err()
            {
                return;
            }
        }
    });
}

/// Receives one stream's bytes on `transport`'s next connection; returns
/// them counted.
async fn receive(
    mut transport: Boxed<(PeerId, StreamMuxerBox)>,
    write: usize,
    substreams: usize,
) -> u64 {
    let upgrade = loop {
        match transport.select_next_some().await {
            TransportEvent::Incoming { upgrade, .. } => break upgrade,
            TransportEvent::NewAddress { .. } => continue,
            _ => continue,
        }
    };
    let (_, mut muxer) = upgrade.await.expect("inbound upgrade");
    let mut streams = Vec::new();
    for _ in 0..substreams {
        streams.push(
            futures::future::poll_fn(|cx| muxer.poll_inbound_unpin(cx))
                .await
                .expect("inbound stream"),
        );
    }
    drive(muxer);
    let reads = streams.into_iter().map(|mut stream| {
        tokio::spawn(async move {
            let mut buf = vec![0u8; write];
            let mut got = 0u64;
            loop {
                let n = stream.read(&mut buf).await.expect("read");
                if n == 0 {
                    break;
                }
                got += n as u64;
            }
            let _ = stream.write_all(b"k").await;
            let _ = stream.close().await;
            got
        })
    });
    let mut got = 0;
    for read in futures::future::join_all(reads).await {
        got += read.unwrap();
    }
    got
}

async fn send(
    mut transport: Boxed<(PeerId, StreamMuxerBox)>,
    to: Multiaddr,
    total: u64,
    data: std::sync::Arc<Vec<u8>>,
    start: tokio::sync::watch::Receiver<bool>,
    substreams: usize,
) {
    let dial = transport
        .dial(
            to,
            DialOpts {
                role: Endpoint::Dialer,
                port_use: PortUse::New,
            },
        )
        .expect("dial");
    let (_, mut muxer) = dial.await.expect("outbound upgrade");
    let mut streams = Vec::new();
    for _ in 0..substreams {
        streams.push(
            futures::future::poll_fn(|cx| muxer.poll_outbound_unpin(cx))
                .await
                .expect("outbound stream"),
        );
    }
    drive(muxer);
    let mut start = start;
    let _ = start.wait_for(|s| *s).await;
    let share = total / substreams as u64;
    let writes = streams.into_iter().map(|mut stream| {
        let data = data.clone();
        tokio::spawn(async move {
            let mut left = share;
            while left > 0 {
                let n = left.min(data.len() as u64) as usize;
                stream.write_all(&data[..n]).await.expect("write");
                left -= n as u64;
            }
            stream.close().await.expect("close");
            let mut ack = [0u8; 1];
            let _ = stream.read_exact(&mut ack).await;
        })
    });
    for write in futures::future::join_all(writes).await {
        write.unwrap();
    }
}

async fn once_libp2p(
    mib: u64,
    streams: usize,
    substreams: usize,
    write: usize,
    security: Security,
) -> Duration {
    let total = mib << 20;
    let data = std::sync::Arc::new((0..write).map(|i| (i * 31 + 7) as u8).collect::<Vec<u8>>());
    let (start_tx, start_rx) = tokio::sync::watch::channel(false);
    let mut receivers = Vec::new();
    let mut senders = Vec::new();
    for _ in 0..streams {
        let key = identity::Keypair::generate_ed25519();
        let mut listener = transport(&key, security);
        listener
            .listen_on(ListenerId::next(), "/ip4/127.0.0.1/tcp/0".parse().unwrap())
            .expect("listen");
        let addr = loop {
            if let TransportEvent::NewAddress { listen_addr, .. } =
                listener.select_next_some().await
            {
                break listen_addr;
            }
        };
        receivers.push(tokio::spawn(receive(listener, write, substreams)));
        let sender = transport(&identity::Keypair::generate_ed25519(), security);
        senders.push(tokio::spawn(send(
            sender,
            addr,
            total,
            data.clone(),
            start_rx.clone(),
            substreams,
        )));
    }
    // Let the connections come up before the clock starts.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    start_tx.send(true).unwrap();
    for r in receivers {
        assert_eq!(r.await.unwrap(), total);
    }
    let elapsed = started.elapsed();
    for s in senders {
        s.await.unwrap();
    }
    elapsed
}

async fn once_raw(mib: u64, streams: usize, write: usize) -> Duration {
    let total = mib << 20;
    let data = std::sync::Arc::new(vec![7u8; write]);
    let (start_tx, start_rx) = tokio::sync::watch::channel(false);
    let mut receivers = Vec::new();
    let mut senders = Vec::new();
    for _ in 0..streams {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        receivers.push(tokio::spawn(async move {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = vec![0u8; write];
            let mut got = 0u64;
            loop {
                let n = s.read(&mut buf).await.unwrap();
                if n == 0 {
                    break;
                }
                got += n as u64;
            }
            got
        }));
        let data = data.clone();
        let mut start = start_rx.clone();
        senders.push(tokio::spawn(async move {
            let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
            s.set_nodelay(true).unwrap();
            let _ = start.wait_for(|s| *s).await;
            let mut left = total;
            while left > 0 {
                let n = left.min(data.len() as u64) as usize;
                s.write_all(&data[..n]).await.unwrap();
                left -= n as u64;
            }
            s.shutdown().await.unwrap();
        }));
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    start_tx.send(true).unwrap();
    for r in receivers {
        assert_eq!(r.await.unwrap(), total);
    }
    let elapsed = started.elapsed();
    for s in senders {
        s.await.unwrap();
    }
    elapsed
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let mut mib = 256u64;
    let mut streams = 1usize;
    let mut substreams = 1usize;
    let mut runs = 3usize;
    let mut write = 1usize << 20;
    let mut security = Security::Noise;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().expect("a value after the flag");
        match arg.as_str() {
            "--mib" => mib = value().parse().expect("--mib N"),
            "--streams" => streams = value().parse().expect("--streams N"),
            "--substreams" => substreams = value().parse().expect("--substreams N"),
            "--runs" => runs = value().parse().expect("--runs N"),
            "--write-kib" => write = value().parse::<usize>().expect("--write-kib N") << 10,
            "--plaintext" => security = Security::Plaintext,
            "--raw" => security = Security::Raw,
            other => panic!("unknown argument {other}"),
        }
    }
    let name = match security {
        Security::Noise => "tcp+noise+yamux",
        Security::Plaintext => "tcp+plaintext+yamux",
        Security::Raw => "tcp",
    };
    let mut rates = Vec::new();
    for run in 0..runs {
        let elapsed = match security {
            Security::Raw => once_raw(mib, streams, write).await,
            _ => once_libp2p(mib, streams, substreams, write, security).await,
        };
        let rate = mib as f64 / elapsed.as_secs_f64();
        println!(
            "{name} ({substreams} substreams) run {run}: {streams} x {mib} MiB in {:.3} s = {rate:.0} MiB/s per stream",
            elapsed.as_secs_f64()
        );
        rates.push(rate);
    }
    let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
    let max = rates.iter().copied().fold(0.0, f64::max);
    println!(
        "{{\"transport\":\"{name}\",\"streams\":{streams},\"substreams\":{substreams},\"mib\":{mib},\"median_mib_s\":{:.0},\"min\":{min:.0},\"max\":{max:.0},\"runs\":{runs}}}",
        median(rates)
    );
}
