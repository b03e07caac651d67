//! `walcheck live` refuses bad input in one line, exit 2, before touching any server.

use std::process::Command;

fn walcheck(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_walcheck"))
        .args(args)
        .output()
        .expect("walcheck runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn live_rejects_bad_input_in_one_line() {
    for args in [
        &[
            "live",
            "conformance",
            "--pg-url",
            "postgresql://postgres@db.example:5432/x",
        ][..],
        &["live", "conformance", "--pg-url", "not a url"],
        &["live", "ladder", "--attempts", "0"],
        &["live", "ladder", "--ladder", "sideways"],
        &["live", "ladder", "--level-ms", "-5"],
        &["live", "sideways"],
    ] {
        let (code, stdout, stderr) = walcheck(args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stdout.is_empty(), "{args:?}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with("walcheck: error: "),
            "{args:?}: {stderr}"
        );
    }
}
