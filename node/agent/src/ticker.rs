//! A timer an actor arms only when it has something to look at, instead of
//! a fixed interval. An idle agent in a pool of hundreds should wake a few
//! times a minute, not several times a second: the startd's lease check,
//! the negotiator's round and the view's expiry each tick fast while there
//! are claims, idle jobs or ads about to expire, and seldom (or not at all)
//! otherwise. Each wake-up costs a context switch or two whatever the tick
//! does, and on a machine shared by many agents those add up.
//!
//! The actor calls [`Ticker::arm`] after each message with how soon it
//! wants to look again; a tick already due sooner stands, a later one is
//! replaced. When the tick's message arrives the actor calls
//! [`Ticker::fired`] first.

use std::time::Duration;

use ractor::{ActorRef, Message};
use tokio::task::JoinHandle;
use tokio::time::Instant;

/// One actor's next tick.
#[derive(Debug, Default)]
pub struct Ticker {
    due: Option<Instant>,
    timer: Option<JoinHandle<()>>,
}

impl Ticker {
    /// A ticker with nothing armed.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes sure a tick (`tick()`) reaches `myself` within `after`: does
    /// nothing if one is already due by then, else replaces the one armed.
    pub fn arm<M: Message>(&mut self, myself: &ActorRef<M>, after: Duration, tick: fn() -> M) {
        let due = Instant::now() + after;
        if self.due.is_some_and(|armed| armed <= due) {
            return;
        }
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
        self.due = Some(due);
        let myself = myself.clone();
        self.timer = Some(tokio::spawn(async move {
            tokio::time::sleep_until(due).await;
            let _ = myself.cast(tick());
        }));
    }

    /// The tick arrived: nothing is armed until the next [`Ticker::arm`].
    /// (A tick replaced just as it fired may still arrive; it is one look
    /// too many, never one too few.)
    pub fn fired(&mut self) {
        self.due = None;
        self.timer = None;
    }
}

impl Drop for Ticker {
    fn drop(&mut self) {
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ractor::{Actor, ActorProcessingErr};
    use tokio::sync::mpsc;

    struct Counter;

    #[derive(Debug)]
    enum Msg {
        Tick,
        Arm(Duration),
    }

    struct State {
        ticker: Ticker,
        ticks: mpsc::UnboundedSender<Instant>,
    }

    impl Actor for Counter {
        type Msg = Msg;
        type State = State;
        type Arguments = mpsc::UnboundedSender<Instant>;

        async fn pre_start(
            &self,
            _myself: ActorRef<Msg>,
            ticks: Self::Arguments,
        ) -> Result<State, ActorProcessingErr> {
            Ok(State {
                ticker: Ticker::new(),
                ticks,
            })
        }

        async fn handle(
            &self,
            myself: ActorRef<Msg>,
            message: Msg,
            state: &mut State,
        ) -> Result<(), ActorProcessingErr> {
            match message {
                Msg::Tick => {
                    state.ticker.fired();
                    let _ = state.ticks.send(Instant::now());
                }
                Msg::Arm(after) => state.ticker.arm(&myself, after, || Msg::Tick),
            }
            Ok(())
        }
    }

    #[tokio::test(start_paused = true)]
    async fn an_earlier_tick_replaces_a_later_one_and_a_later_one_waits() {
        let (tx, mut ticks) = mpsc::unbounded_channel();
        let (actor, handle) = Actor::spawn(None, Counter, tx).await.expect("spawn");
        let start = Instant::now();
        actor.cast(Msg::Arm(Duration::from_secs(10))).expect("arm");
        actor.cast(Msg::Arm(Duration::from_secs(1))).expect("arm");
        actor.cast(Msg::Arm(Duration::from_secs(5))).expect("arm");
        let first = ticks.recv().await.expect("tick");
        assert_eq!(first - start, Duration::from_secs(1));
        // Nothing else was left armed: the 10 s and 5 s asks were covered.
        let none = tokio::time::timeout(Duration::from_secs(60), ticks.recv()).await;
        assert!(none.is_err(), "a tick came that nobody armed");
        actor.stop(None);
        handle.await.expect("stopped");
    }
}
