//! The run phase's key numbers: the request distribution, drawn ahead in
//! small batches where the distribution allows it.
//!
//! Why batches: drawing one scrambled-zipfian key is a chain of dependent
//! steps (a uniform draw, `ln`, `exp`, eight dependent multiplications of
//! FNV-1a, a 64-bit division) whose latency, not its instruction count, set
//! the pace when each operation drew its own key just before using it.
//! Drawing [`BATCH`] keys in one loop gives the CPU independent chains to
//! overlap. Keys drawn ahead are the same keys that would have been drawn
//! one at a time: the chooser has its own random stream, and its draws do
//! not depend on anything that changes between operations.
//!
//! The one exception is `latest`, whose draw depends on the number of
//! inserts acknowledged at that moment; it is drawn per operation.
//!
//! The key names (FNV-1a again, then the digits) are formatted ahead in the
//! same way when the workload's keys are generated names: the name of a
//! number depends on nothing but the number.

use super::clients::ClientPartition;
use super::keys::{KeyName, KeyOrder};
use crate::generator::{
    fnvhash64, fnvhash64_low_bytes, Exponential, Hotspot, NumberGenerator, Rng64, ScrambledZipfian,
    Sequential, SkewedLatest, Uniform,
};

/// How many key numbers are drawn ahead at a time: enough independent work
/// to fill the CPU's out-of-order window several times over, small enough
/// to stay in one or two cache lines.
pub(crate) const BATCH: usize = 16;

/// A request distribution over key numbers.
pub(crate) enum Distribution {
    /// `uniform`.
    Uniform(Uniform),
    /// `zipfian`: Java's scrambled zipfian.
    Zipfian(ScrambledZipfian),
    /// `latest`: skewed towards the most recent acknowledged insert.
    Latest(SkewedLatest),
    /// `hotspot`.
    Hotspot(Hotspot),
    /// `sequential`.
    Sequential(Sequential),
    /// `exponential`: a distance back from the last acknowledged insert.
    Exponential(Exponential),
}

/// How key numbers become names, for formatting them ahead.
#[derive(Clone, Copy)]
pub(crate) struct Naming {
    /// `insertorder`.
    pub(crate) order: KeyOrder,
    /// `zeropadding`, at most 20.
    pub(crate) zero_padding: usize,
    /// This client's share of run-phase insert numbers.
    pub(crate) clients: ClientPartition,
    /// `recordcount`.
    pub(crate) record_count: u64,
}

/// One thread's key chooser: the distribution, its own random stream and
/// the key numbers drawn ahead.
pub(crate) struct KeyChooser {
    distribution: Distribution,
    rng: Rng64,
    ahead: [u64; BATCH],
    /// Index of the next unused entry of `ahead`; `BATCH` when none is left.
    next: usize,
    /// How the names of `ahead` are formatted, when they are (only for
    /// distributions whose every number comes from `ahead`).
    naming: Option<Naming>,
    /// The names of `ahead`, with `naming`; blank without.
    ///
    /// Kept apart from `naming`, always allocated, so that reading the
    /// last name checks nothing but the index: taking it out of an
    /// `Option` and a checked index cost a few percent of a read against
    /// the `basic` store.
    names: Box<[KeyName; BATCH]>,
}

impl KeyChooser {
    /// A chooser drawing from `distribution` with the random stream `rng`.
    pub(crate) fn new(distribution: Distribution, rng: Rng64) -> Self {
        KeyChooser {
            distribution,
            rng,
            ahead: [0; BATCH],
            next: BATCH,
            naming: None,
            names: Box::new([KeyName::new(0, KeyOrder::Ordered, 0); BATCH]),
        }
    }

    /// Also formats the names of the numbers drawn ahead, as `naming` says.
    ///
    /// `latest` and `exponential` keep formatting per operation: their key
    /// numbers are known only when drawn (exponential's batch holds
    /// distances back from the last insert, not keys).
    pub(crate) fn with_names(mut self, naming: Naming) -> Self {
        if matches!(
            self.distribution,
            Distribution::Latest(_) | Distribution::Exponential(_)
        ) {
            return self;
        }
        self.naming = Some(naming);
        self
    }

    /// Whether names are formatted ahead: then [`last_name`](Self::last_name)
    /// is the name of every number [`next`](Self::next) returned.
    #[inline]
    pub(crate) fn has_names(&self) -> bool {
        self.naming.is_some()
    }

    /// The name of the number [`next`](Self::next) returned last, when
    /// [`has_names`](Self::has_names); otherwise a blank name.
    #[inline]
    pub(crate) fn last_name(&self) -> &str {
        // After a draw `next` is 1..=BATCH: the mask is the identity on
        // the index, and keeps it in bounds without a check.
        self.names[self.next.wrapping_sub(1) % BATCH].as_str()
    }

    /// The next key number, never above `limit` (the last acknowledged
    /// insert): numbers beyond it are skipped, as Java draws again.
    #[inline]
    pub(crate) fn next(&mut self, limit: u64) -> u64 {
        match &mut self.distribution {
            Distribution::Latest(gen) => gen.next_value(&mut self.rng),
            Distribution::Exponential(_) => loop {
                let back = self.take();
                if back <= limit {
                    return limit - back;
                }
            },
            _ => loop {
                let number = self.take();
                if number <= limit {
                    return number;
                }
            },
        }
    }

    /// [`next`](Self::next) for a chooser that
    /// [`has_names`](Self::has_names), whose every number comes from the
    /// numbers drawn ahead: without testing the distribution's kind, as
    /// the caller's test of `has_names` already settled it.
    #[inline]
    pub(crate) fn next_named(&mut self, limit: u64) -> u64 {
        debug_assert!(self.has_names());
        loop {
            let number = self.take();
            if number <= limit {
                return number;
            }
        }
    }

    #[inline]
    fn take(&mut self) -> u64 {
        if self.next == BATCH {
            self.refill();
        }
        // `next` is below BATCH here: the mask keeps the index in bounds
        // without a check.
        let value = self.ahead[self.next % BATCH];
        self.next += 1;
        value
    }

    #[inline(never)]
    fn refill(&mut self) {
        let (rng, ahead) = (&mut self.rng, &mut self.ahead);
        match &mut self.distribution {
            Distribution::Uniform(g) => fill(g, rng, ahead),
            Distribution::Zipfian(g) => fill(g, rng, ahead),
            Distribution::Hotspot(g) => fill(g, rng, ahead),
            Distribution::Sequential(g) => fill(g, rng, ahead),
            Distribution::Exponential(g) => fill(g, rng, ahead),
            Distribution::Latest(g) => fill(g, rng, ahead),
        }
        if let Some(naming) = &self.naming {
            name_all(naming, ahead, &mut self.names);
        }
        self.next = 0;
    }
}

/// Formats the names of `ahead` into `names`, with one loop for each
/// case of the settings, decided once per batch rather than per key.
#[inline(always)]
fn name_all(naming: &Naming, ahead: &[u64; BATCH], names: &mut [KeyName; BATCH]) {
    let padding = naming.zero_padding;
    if naming.clients.count == 1 {
        // One client: a key number is the workload's number.
        match naming.order {
            // Key numbers below 2^32 (all of them unless the data set has
            // over four billion records) hash in the shorter way, decided
            // once for the batch: per key, the test and the preparation of
            // both ways cost ten instructions.
            KeyOrder::Hashed if ahead.iter().fold(0, |all, &n| all | n) >> 32 == 0 => {
                name_each(ahead, names, padding, fnvhash64_low_bytes::<4>);
            }
            KeyOrder::Hashed => name_each(ahead, names, padding, fnvhash64),
            KeyOrder::Ordered => name_each(ahead, names, padding, |n| n),
        }
    } else {
        let (clients, records) = (naming.clients, naming.record_count);
        match naming.order {
            KeyOrder::Hashed => name_each(ahead, names, padding, |n| {
                fnvhash64(clients.key_number(records, n))
            }),
            KeyOrder::Ordered => {
                name_each(ahead, names, padding, |n| clients.key_number(records, n));
            }
        }
    }
}

#[inline(always)]
fn name_each(
    ahead: &[u64; BATCH],
    names: &mut [KeyName; BATCH],
    padding: usize,
    digits_of: impl Fn(u64) -> u64,
) {
    for (name, &number) in names.iter_mut().zip(ahead) {
        name.set_digits(digits_of(number), padding);
    }
}

/// One loop per generator type, so each is compiled with the draw inlined.
#[inline(always)]
fn fill<G: NumberGenerator>(gen: &mut G, rng: &mut Rng64, ahead: &mut [u64; BATCH]) {
    for slot in ahead {
        *slot = gen.next_value(rng);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generator::seeded_rng;

    /// Drawing ahead must not change which keys come out: the batched
    /// chooser yields exactly the sequence of one-at-a-time draws from the
    /// same stream.
    #[test]
    fn batched_draws_equal_one_at_a_time_draws() {
        let mut batched = KeyChooser::new(
            Distribution::Zipfian(ScrambledZipfian::new(0, 999_999).unwrap()),
            seeded_rng(9, 3),
        );
        let mut single = ScrambledZipfian::new(0, 999_999).unwrap();
        let mut rng = seeded_rng(9, 3);
        for _ in 0..10 * BATCH + 3 {
            assert_eq!(batched.next(u64::MAX), single.next_value(&mut rng));
        }
    }

    /// Numbers above the limit are skipped without losing the order of the
    /// others.
    #[test]
    fn numbers_above_the_limit_are_skipped_in_order() {
        let mut batched = KeyChooser::new(
            Distribution::Sequential(Sequential::new(0, 99, 0, 1).unwrap()),
            seeded_rng(1, 0),
        );
        let mut single = Sequential::new(0, 99, 0, 1).unwrap();
        let mut rng = seeded_rng(1, 0);
        let expected: Vec<u64> = (0..200)
            .map(|_| single.next_value(&mut rng))
            .filter(|&n| n <= 49)
            .take(60)
            .collect();
        let got: Vec<u64> = (0..60).map(|_| batched.next(49)).collect();
        assert_eq!(got, expected);
    }

    /// Names formatted ahead are the names of the numbers returned, also
    /// across skipped numbers and batch boundaries; distributions whose
    /// numbers are known only when drawn format none.
    #[test]
    fn names_formatted_ahead_belong_to_the_numbers_returned() {
        use crate::workload::clients::ClientPartition;
        use crate::workload::keys::key_name;
        let naming = Naming {
            order: KeyOrder::Hashed,
            zero_padding: 1,
            clients: ClientPartition::default(),
            record_count: 1_000,
        };
        let mut chooser = KeyChooser::new(
            Distribution::Zipfian(ScrambledZipfian::new(0, 999).unwrap()),
            seeded_rng(5, 1),
        )
        .with_names(naming);
        for _ in 0..5 * BATCH {
            let number = chooser.next(600);
            assert!(number <= 600);
            assert_eq!(
                chooser.last_name(),
                key_name(number, KeyOrder::Hashed, 1).as_str()
            );
        }
        // A chooser with names draws the same numbers through either door.
        let zipfian = || {
            KeyChooser::new(
                Distribution::Zipfian(ScrambledZipfian::new(0, 999).unwrap()),
                seeded_rng(5, 3),
            )
            .with_names(naming)
        };
        let (mut plain, mut named) = (zipfian(), zipfian());
        for _ in 0..5 * BATCH {
            assert_eq!(plain.next(700), named.next_named(700));
            assert_eq!(plain.last_name(), named.last_name());
        }
        // Batches with and without key numbers of more than 32 bits.
        let mut wide = KeyChooser::new(
            Distribution::Uniform(Uniform::new((1 << 32) - 40, (1 << 32) + 2).unwrap()),
            seeded_rng(5, 2),
        )
        .with_names(naming);
        for _ in 0..50 * BATCH {
            let number = wide.next(u64::MAX);
            assert_eq!(
                wide.last_name(),
                key_name(number, KeyOrder::Hashed, 1).as_str()
            );
        }
        let mut exponential = KeyChooser::new(
            Distribution::Exponential(Exponential::new(95.0, 1000.0).unwrap()),
            seeded_rng(2, 0),
        )
        .with_names(naming);
        exponential.next(500);
        assert!(!exponential.has_names());
    }

    #[test]
    fn exponential_counts_back_from_the_limit() {
        let mut chooser = KeyChooser::new(
            Distribution::Exponential(Exponential::new(95.0, 1000.0).unwrap()),
            seeded_rng(2, 0),
        );
        for _ in 0..1000 {
            assert!(chooser.next(500) <= 500);
        }
    }
}
