//! Durable state in sled: the job queue, history, the ad cache, accounting, claims and checkpoints. Arrives with the identity and storage issue.
