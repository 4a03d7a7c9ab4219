//! A small file system of the test's own, to fill or make read-only.

use std::path::Path;
use std::process::Command;

/// A tmpfs mounted on a temporary directory, unmounted when dropped (and
/// detached lazily when a file in it is still open), so that no mount
/// outlives the test. Mounting needs root or `CAP_SYS_ADMIN`: the tests
/// that use it fail, rather than skip, where it cannot be had.
#[derive(Debug)]
pub struct Tmpfs(tempfile::TempDir);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (mount's `size=` option, such as `8m`).
    ///
    /// # Panics
    ///
    /// When the directory cannot be made or the mount fails.
    pub fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .status()
            .expect("mount(8) runs");
        assert!(
            status.success(),
            "this test mounts a small tmpfs: it needs root or CAP_SYS_ADMIN"
        );
        Tmpfs(dir)
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.0.path()
    }

    /// Mounts it again read-only (which holds for root too).
    ///
    /// # Panics
    ///
    /// When the remount fails.
    pub fn remount_read_only(&self) {
        let status = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .status()
            .expect("mount(8) runs");
        assert!(status.success(), "cannot remount the tmpfs read-only");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let unmounted = Command::new("umount")
            .arg(self.path())
            .status()
            .is_ok_and(|s| s.success());
        if !unmounted {
            let _ = Command::new("umount").arg("-l").arg(self.path()).status();
        }
    }
}
