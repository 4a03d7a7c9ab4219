//! What the engines' direct loops share besides ycsb-core's harness
//! (`crates/ycsb-core/examples/support/direct_loop.rs`): each embedded
//! store's `examples/direct_loop.rs` calls an engine directly, and hands
//! the values it reads and the database it opens to the loop the same way.
//! Included by path, as the harness is (`#[path] mod engine_loop;`): it is
//! program code, which prints and exits, so it is no part of a library.

// Each loop uses the helpers its engine needs.
#![allow(dead_code)]

use std::fmt::Display;
use std::hint::black_box;
use std::path::Path;

/// Hands a read value to the loop: copied into `copy_to` when given (an
/// update modifies the copy), else read as any reader would touch it
/// ([`touch_value`]), for an engine that hands out its own memory.
#[inline]
pub fn copy_or_touch(value: &[u8], copy_to: Option<&mut Vec<u8>>) {
    match copy_to {
        Some(out) => copy_into(value, out),
        None => touch_value(value),
    }
}

/// Hands a read value to the loop: copied into `copy_to` when given, else
/// only kept from being optimised away, for an engine whose read already
/// copied the value out of its own memory (LevelDB's malloc'd value) or
/// pinned it (RocksDB).
#[inline]
pub fn copy_or_keep(value: &[u8], copy_to: Option<&mut Vec<u8>>) {
    match copy_to {
        Some(out) => copy_into(value, out),
        None => {
            black_box(value);
        }
    }
}

/// `out` becomes a copy of `value`, reusing its allocation.
#[inline]
fn copy_into(value: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(value);
}

/// Reads a value as any reader of it would touch it: one load from each
/// 64-byte cache line. `black_box` of the slice alone never reads its
/// bytes, and an engine that hands out its own memory (LMDB's map, a
/// cached page) need not have read them either; the loop's reads then cost
/// no memory traffic for the value where ycsb's, which check every field's
/// framing, miss the cache on each line (LMDB C: 1.4 more last-level misses
/// a read under cachegrind's simulation). The per-field work itself stays
/// ycsb's own.
#[inline]
pub fn touch_value(bytes: &[u8]) {
    let mut seen = 0u8;
    for line in bytes.chunks(64) {
        seen ^= line[0];
    }
    black_box(seen);
}

/// Creates the database directory `dir` for an engine that does not, or
/// ends the loop with one line naming it and exit status 1.
pub fn create_dir_or_exit(dir: &Path) {
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("direct_loop: creating {}: {e}", dir.display());
        std::process::exit(1);
    }
}

/// The engine opened in `dir`, or the end of the loop with one line naming
/// `dir` and the engine's error and exit status 1.
pub fn opened_or_exit<E>(dir: &Path, opened: Result<E, impl Display>) -> E {
    match opened {
        Ok(engine) => engine,
        Err(e) => {
            eprintln!("direct_loop: opening {}: {e}", dir.display());
            std::process::exit(1);
        }
    }
}
