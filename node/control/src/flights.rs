//! Bulk transfers in flight on an agent, as the control API reports them
//! (`starling net`, `q -l`). The agent's registry of flights, which
//! counts their bytes, is the agent's own (`starling_agent::links::flights`).

use serde::{Deserialize, Serialize};

/// What a transfer carries, and which way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A job's input, served by its submit agent.
    InputOut,
    /// A job's input, pulled by its machine.
    InputIn,
    /// A job's output, pulled by its submit agent.
    OutputIn,
    /// A job's output, served by its machine.
    OutputOut,
    /// A checkpoint sent to a store peer.
    CheckpointOut,
    /// A checkpoint fetched from a store peer.
    CheckpointIn,
}

impl Kind {
    pub fn describe(self) -> &'static str {
        match self {
            Kind::InputOut => "input to",
            Kind::InputIn => "input from",
            Kind::OutputIn => "output from",
            Kind::OutputOut => "output to",
            Kind::CheckpointOut => "checkpoint to",
            Kind::CheckpointIn => "checkpoint from",
        }
    }

    /// Whether it is a job's input (else its output or a checkpoint).
    pub fn is_input(self) -> bool {
        matches!(self, Kind::InputOut | Kind::InputIn)
    }
}

/// One transfer as `starling net` and `q -l` show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlightSummary {
    pub kind: Kind,
    /// The peer at the other end.
    pub peer: String,
    /// The job it is for (`12.0`), when known.
    #[serde(default)]
    pub job: Option<String>,
    pub bytes: u64,
    pub moved: u64,
    /// Bytes per second since its first byte moved.
    pub rate: f64,
    /// The rate its path reserved; `None`: unreserved (it shares what the
    /// reservations leave), or still waiting to be admitted.
    #[serde(default)]
    pub reserved_rate: Option<f64>,
    /// Waiting for the path to admit it (no byte may move yet).
    #[serde(default)]
    pub waiting: bool,
    /// Seconds since it was registered.
    pub age_secs: f64,
}
