//! How the program names itself: the name it was invoked by, in error lines and in the commands
//! its output suggests (a crate's own binary over walcheck says its own name, as clap's usage
//! lines do), and the one line on stderr that bad usage or input prints. Every module that speaks
//! to the user reads it; it reads none of them.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::OnceLock;

static PROGRAM: OnceLock<String> = OnceLock::new();

/// Takes the program's name from how it was invoked, once: what [`crate::cli::main`] does first.
pub fn name_from_args() {
    let _ = PROGRAM.set(invoked_name());
}

/// The name the program was invoked by, for error lines and the commands the output suggests:
/// its file name, as clap's usage lines show it (`textbook-connector` for a crate's own binary
/// over [`crate::cli::main`]); `walcheck` where there is none, or before [`name_from_args`].
pub fn name() -> &'static str {
    PROGRAM.get().map_or("walcheck", String::as_str)
}

/// argv\[0\]'s file name, as clap takes it.
fn invoked_name() -> String {
    std::env::args_os()
        .next()
        .and_then(|arg| {
            Path::new(&arg)
                .file_name()
                .and_then(|name| name.to_str())
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "walcheck".to_owned())
}

/// One line on stderr, `PROGRAM: error: MESSAGE` (the program as invoked, as clap's usage lines
/// name it), and exit code 2.
pub fn usage_error(message: &str) -> ExitCode {
    // Not eprintln!: a closed or full stderr must not turn bad usage into a panic.
    let _ = writeln!(std::io::stderr(), "{}: error: {message}", name());
    ExitCode::from(2)
}
