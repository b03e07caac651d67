//! Whether an interrupt (SIGINT or SIGTERM) has arrived: a module of its own, below both the
//! servers (whose handler sets it) and the replication client (which opens nothing once it is
//! set), so that neither imports the other for it.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Set first thing by the interrupt handler: the main thread then reports nothing of what the
/// interrupt cut short ([`interrupted`], [`exit_interrupted`]).
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Whether SIGINT or SIGTERM arrived: the handler is stopping the servers, and errors seen since
/// are the interrupt's doing, not the server's.
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

/// Waits for the interrupt handler to finish its clean-up and exit 130 (it prints the
/// `interrupted` line); exits 130 itself should the handler take longer than a minute.
pub fn exit_interrupted() -> ! {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::process::exit(130)
}

/// Marks the interrupt as arrived: the handler's first step ([`crate::server::clean_up_on_interrupt`]).
pub(crate) fn begin() {
    INTERRUPTED.store(true, Ordering::SeqCst);
}
