//! Decoding HdrHistogram logs and exported histograms with an independent
//! implementation: the `hdrhistogram` package from PyPI, through
//! `hdr_decode.py` beside this file.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Makes sure `python3` can import `hdrh`, installing the package with pip
/// when it is missing.
pub fn python_with_hdrh() -> &'static str {
    let importable = || {
        Command::new("python3")
            .args(["-c", "import hdrh.log"])
            .status()
            .is_ok_and(|s| s.success())
    };
    // Plain pip first; Debian's python refuses that outside a venv
    // (PEP 668), hence the second form.
    for extra in [&[][..], &["--break-system-packages"][..]] {
        if importable() {
            break;
        }
        let _ = Command::new("python3")
            .args(["-m", "pip", "install", "--quiet", "hdrhistogram"])
            .args(extra)
            .status();
    }
    assert!(
        importable(),
        "this test needs python3 with the PyPI package hdrhistogram (python3 -m pip install hdrhistogram); installing it failed"
    );
    "python3"
}

fn decoder(args: &[&std::ffi::OsStr]) -> serde_json::Value {
    let python = python_with_hdrh();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hdr_support/hdr_decode.py");
    let out = Command::new(python)
        .arg(script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "decoder failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("decoder prints JSON")
}

/// Per log (named by its file stem): total count, intervals, maximum and
/// the values at `percentiles` (comma-separated), by Java's rank rule.
pub fn decode(percentiles: &str, files: &[&Path]) -> serde_json::Value {
    let mut args = vec![std::ffi::OsStr::new(percentiles)];
    args.extend(files.iter().map(|f| f.as_os_str()));
    decoder(&args)
}

/// Per section name: the same figures for the sum of the base64
/// histograms of `phase` over JSON exports.
pub fn decode_exports(percentiles: &str, phase: &str, files: &[&Path]) -> serde_json::Value {
    let mut args = vec![
        std::ffi::OsStr::new(percentiles),
        std::ffi::OsStr::new("--exports"),
        std::ffi::OsStr::new(phase),
    ];
    args.extend(files.iter().map(|f| f.as_os_str()));
    decoder(&args)
}
