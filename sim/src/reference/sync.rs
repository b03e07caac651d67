//! The synchronisation primitives of the reference implementations: loom's under `--cfg loom`,
//! so that loom can explore every interleaving, std's otherwise. Nothing else in
//! [`crate::reference`] names `std::sync` or `loom` directly.

#[cfg(loom)]
pub use loom::sync::atomic::{AtomicU64, Ordering};
#[cfg(loom)]
pub use loom::sync::{Arc, Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread;

#[cfg(not(loom))]
pub use std::sync::atomic::{AtomicU64, Ordering};
#[cfg(not(loom))]
pub use std::sync::{Arc, Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread;
