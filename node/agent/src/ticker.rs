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
//! replaced. Whenever the tick's message arrives, from the timer or from
//! anyone else (a negotiator is also asked for a round at once by queue
//! events), the actor calls [`Ticker::fired`] first: the look it is about
//! to take covers whatever was armed, so the timer is cancelled. (Merely
//! forgetting it would leave it running: each message from elsewhere would
//! start one more timer that re-arms itself forever.)

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

    /// The tick's message arrived (from the timer or not): the armed
    /// timer, if any, is cancelled, and nothing is armed until the next
    /// [`Ticker::arm`]. (A timer cancelled just as it fired may still
    /// deliver; that is one look too many, never one too few.)
    pub fn fired(&mut self) {
        self.due = None;
        if let Some(timer) = self.timer.take() {
            timer.abort();
        }
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
        /// A tick after which the actor arms again (as the negotiator does
        /// after each round), whoever sent it.
        Round,
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
                Msg::Round => {
                    state.ticker.fired();
                    let _ = state.ticks.send(Instant::now());
                    state
                        .ticker
                        .arm(&myself, Duration::from_secs(1), || Msg::Round);
                }
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

    #[tokio::test(start_paused = true)]
    async fn ticks_sent_by_others_do_not_start_more_timers() {
        let (tx, mut ticks) = mpsc::unbounded_channel();
        let (actor, handle) = Actor::spawn(None, Counter, tx).await.expect("spawn");
        // Ten rounds asked from outside within a tenth of a second, as queue
        // events ask a negotiator.
        for _ in 0..10 {
            actor.cast(Msg::Round).expect("round");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let start = Instant::now();
        while ticks.try_recv().is_ok() {}
        // Then one timer, ticking once a second: ten rounds in ten seconds,
        // not ten timers' worth.
        tokio::time::sleep(Duration::from_millis(10_500)).await;
        let mut after = 0;
        while let Ok(at) = ticks.try_recv() {
            assert!(at > start);
            after += 1;
        }
        assert_eq!(after, 10, "rounds in the ten seconds after");
        actor.stop(None);
        handle.await.expect("stopped");
    }
}
