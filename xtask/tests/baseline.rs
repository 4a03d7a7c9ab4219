//! `--baseline` refuses bad input before building anything: one line
//! naming the flag, exit status 2. (The comparison itself builds two
//! release binaries, too slow for CI; docs/performance.md gives the manual
//! command, and the export/build plumbing is tested in xtask's unit tests
//! with a stand-in build.)

use std::process::Command;

#[test]
fn bad_baseline_input_is_one_line_and_status_2() {
    // (arguments, the line on stderr)
    let cases: &[(&[&str], &str)] = &[
        (
            &["bench", "--baseline", "no-such-revision-anywhere"],
            "--baseline no-such-revision-anywhere: not a commit of the repository at",
        ),
        (
            &["bench", "--baseline", "HEAD", "--pairs", "0"],
            "--pairs 0: expected a positive whole number",
        ),
        (&["bench", "--baseline"], "--baseline needs a git revision"),
        (&["bench", "--pairs", "2"], "--pairs needs --baseline <rev>"),
        (
            &["bench", "--instructions"],
            "--instructions needs --baseline <rev>",
        ),
    ];
    for (args, line) in cases {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(*args)
            .output()
            .expect("xtask runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("xtask: {line}")),
            "{args:?}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
