//! "Did you mean": the one rule for the nearest known name to a misspelt
//! one, shared by unknown properties, store names and command-line flags.

/// The candidate nearest to `given` in edits (insertions, deletions,
/// substitutions), for a "did you mean" hint: within two edits, and fewer
/// edits than half of `given`'s length, so that a short name (`-x`) is not
/// matched to every other short name. Among equally near candidates, the
/// smallest name; `None` when no candidate is near enough.
pub fn nearest_name<'a>(
    given: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let length = given.chars().count();
    candidates
        .into_iter()
        .map(|name| (edit_distance(given, name), name))
        .filter(|(distance, _)| *distance <= 2 && 2 * distance < length)
        .min()
        .map(|(_, name)| name)
}

/// Levenshtein distance over characters, in one row of memory.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_count_insertions_deletions_and_substitutions() {
        assert_eq!(edit_distance("rockdb", "rocksdb"), 1);
        assert_eq!(edit_distance("recordcout", "recordcount"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("same", "same"), 0);
    }

    #[test]
    fn the_nearest_within_two_edits_is_suggested() {
        let flags = ["-P", "-p", "-s", "-threads", "--threads", "-target", "-t"];
        assert_eq!(nearest_name("-threds", flags), Some("-threads"));
        assert_eq!(nearest_name("--threds", flags), Some("--threads"));
        assert_eq!(nearest_name("-targte", flags), Some("-target"));
        assert_eq!(
            nearest_name("rockdb", ["basic", "memory", "rocksdb", "leveldb"]),
            Some("rocksdb")
        );
        // Three edits away, and a short name near every other short name.
        assert_eq!(nearest_name("-thr", flags), None);
        assert_eq!(nearest_name("-x", flags), None);
        assert_eq!(nearest_name("anything", []), None);
    }
}
