//! The files a command reads because a user named them: traces (`show`, `replay`), check and
//! swarm reports (`merge`) and connector files (`check`, `explore`, and the file a trace was
//! written from). Each is read only when it is a regular file, and only up to a limit, so that a
//! FIFO, a device (`/dev/zero`, `/dev/urandom`) or a file far larger than any real one is one
//! line of error and exit 2, never a hang or an unbounded read.

use std::fs::FileType;
use std::io::Read;
use std::path::Path;

/// The most bytes a trace may hold: 64 MiB. The largest golden trace is 23 KB (an
/// electric-flush lasso), and the largest trace `simulate --trace-out` writes at the ladders'
/// defaults 1.1 MB (a sync bootstrap at 32,000 rows).
pub const TRACE_MAX_BYTES: u64 = 64 << 20;

/// The most bytes a report given to `merge` may hold: 256 MiB. The whole catalogue's `check
/// --json` report is 2.8 MB; a swarm report takes about 1.6 KB a seed, 160 MB for the 100,000
/// seeds one run takes at most.
pub const REPORT_MAX_BYTES: u64 = 256 << 20;

/// The most bytes a connector file may hold: 1 MiB, 250 times the largest in `connectors/`
/// (4 KB).
pub const CONNECTOR_MAX_BYTES: u64 = 1 << 20;

/// The text of the file at `path`, a `what` (`trace`, `report`, `connector file`) at most
/// `max_bytes` long; or the one-line error naming it. A path that does not lead to a regular
/// file (a FIFO, a device, a folder) is refused before it is opened: opening a FIFO to read it
/// waits for a writer.
pub fn read_input(path: &Path, what: &str, max_bytes: u64) -> Result<String, String> {
    let cannot = |why: String| format!("cannot read {what} {}: {why}", path.display());
    let too_large = || {
        cannot(format!(
            "larger than {}, the most a {what} may be",
            size(max_bytes)
        ))
    };
    let metadata = std::fs::metadata(path).map_err(|e| cannot(e.to_string()))?;
    if !metadata.is_file() {
        return Err(cannot(format!(
            "{}, not a regular file",
            kind(metadata.file_type())
        )));
    }
    if metadata.len() > max_bytes {
        return Err(too_large());
    }
    // A file may grow after it was measured: never more than one byte past the limit is read.
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .and_then(|file| file.take(max_bytes + 1).read_to_end(&mut bytes))
        .map_err(|e| cannot(e.to_string()))?;
    if bytes.len() as u64 > max_bytes {
        return Err(too_large());
    }
    String::from_utf8(bytes).map_err(|e| cannot(format!("not UTF-8 text ({e})")))
}

/// What a file that is not a regular one is.
fn kind(file_type: FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if file_type.is_fifo() {
            return "a FIFO";
        } else if file_type.is_char_device() {
            return "a character device";
        } else if file_type.is_block_device() {
            return "a block device";
        } else if file_type.is_socket() {
            return "a socket";
        }
    }
    if file_type.is_dir() {
        "a folder"
    } else {
        "something else"
    }
}

/// `bytes` in the largest binary unit that divides it: `64 MiB`, `1 MiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}
