//! walcheck-engine: the engines that search a system's states and decide its properties.
//!
//! [`compact`] is the engine `walcheck check` uses by default: one breadth-first exploration over
//! fingerprints deciding every `always` and `sometimes` property at once, on several threads,
//! within a budget of states, time and memory, and building the graph [`liveness`] decides
//! `eventually` properties on under fairness. [`reference`](mod@reference) is the reference engine: a plain
//! breadth-first search per property that stores every state whole, which the compact engine's
//! answers are held to (`walcheck check --engine reference`). What they share is in [`search`]
//! (budget, path, outcome, progress), [`fingerprint`], [`table`] (the fingerprint table) and
//! [`graph`] (the explored graph).
//!
//! The layering is one way: `search` ← `fingerprint` ← `table` ← `graph` ← `liveness` ←
//! `compact`; `reference` needs `search` alone. Every engine reads a system through the
//! authoring API of `walcheck-properties` and nothing here is imported back there.
//!
//! Not for: declaring a system or its properties (`walcheck-properties`), the models
//! (`walcheck-model`, `walcheck-systems`), traces on disk (`walcheck-traces`) or the command line
//! (`walcheck`).

pub mod compact;
pub mod fingerprint;
pub mod graph;
pub mod liveness;
pub mod reference;
pub mod search;
pub mod table;
