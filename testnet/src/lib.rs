//! Starting many agents on one machine with domains, keys, emulated links and faults. Arrives with the agent issue.
