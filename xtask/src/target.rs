//! Where cargo builds: the one answer every xtask command that runs a built
//! binary uses.

use std::path::{Path, PathBuf};

/// The cargo target directory of the tree at `root`, absolute.
pub fn target_dir(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    if target.is_absolute() {
        target
    } else {
        root.join(target)
    }
}
