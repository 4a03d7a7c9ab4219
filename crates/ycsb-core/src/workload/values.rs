//! Field values: random bytes laid out as Java YCSB's
//! `RandomByteIterator`, or, with `dataintegrity`, deterministic values
//! that reads can verify.

use rand::RngCore;

/// Fills `buf` with random field bytes as Java YCSB's `RandomByteIterator`
/// lays them out: groups of six from one random number, the last group cut
/// to fit (see [`random_value_chunk`]).
pub fn fill_random_value(rng: &mut impl RngCore, buf: &mut [u8]) {
    let mut chunks = buf.chunks_exact_mut(VALUE_CHUNK);
    for chunk in &mut chunks {
        chunk.copy_from_slice(&random_value_chunk(rng));
    }
    let tail = chunks.into_remainder();
    if !tail.is_empty() {
        let chunk = random_value_chunk(rng);
        tail.copy_from_slice(&chunk[..tail.len()]);
    }
}

/// The bytes [`random_value_chunk`] produces at a time: one of Java's
/// six-byte groups.
pub const VALUE_CHUNK: usize = 6;

/// The bits of a random word that become a group's bytes, where Java's
/// `RandomByteIterator` takes its 32-bit number's bits: byte 0 keeps 5
/// bits (mask 31), byte 1 six (63), byte 2 bits 1-4 and 6 (95, bit 0
/// shared with byte 1), byte 3 bits 0 and 2-4 (31, bit 1 shared with byte
/// 2), byte 4 six (63), byte 5 bits 1-4 and 6 (95, bit 0 shared with byte
/// 4).
const GROUP_FRESH_BITS: u64 = 0x5E3F_1D5E_3F1F;
/// Where the three bits each shared by two neighbouring bytes of a Java
/// group are copied to, three bits above where they are drawn: byte 1's
/// bit 5 is byte 2's bit 0, byte 2's bit 6 byte 3's bit 1, byte 4's bit 5
/// byte 5's bit 0 (Java's shifts of 5 between masks that are 6 and 7 bits
/// wide).
const GROUP_SHARED_BITS: u64 = (1 << 16) | (1 << 25) | (1 << 40);
/// `' '` added to each of a group's six bytes.
const GROUP_SPACES: u64 = 0x2020_2020_2020;

/// One of Java's six-byte groups (in the low 48 bits) from a random word.
///
/// Java computes byte `k` as `((n >> 5k) & mask_k) + ' '` with masks 31,
/// 63, 95, 31, 63, 95 from one random `int` `n`: 31 of its bits, three of
/// them appearing in two neighbouring bytes, bit 30 unused. This places 31
/// random bits where those bytes need them and copies the three shared
/// ones, which is the same function of 31 uniform bits (a test maps Java's
/// `n` onto it bit for bit) in five operations instead of seventeen.
#[inline]
fn random_group(word: u64) -> u64 {
    ((word & GROUP_FRESH_BITS) | ((word << 3) & GROUP_SHARED_BITS)) + GROUP_SPACES
}

/// Six random field bytes: one of Java's `RandomByteIterator` groups from
/// its own random word. Every byte lies in 32..=127; a value is these
/// chunks one after another, the last cut to fit, which is Java's layout
/// (a value starts a fresh group and a cut group keeps its first bytes).
///
/// Two groups per 64-bit word would halve the random draws, but the 33
/// bits a group leaves are scattered so that no shift or rotation lines
/// them up with another group's positions; gathering them costs more
/// than the draw.
#[inline]
pub fn random_value_chunk(rng: &mut impl RngCore) -> [u8; VALUE_CHUNK] {
    let [a, b, c, d, e, f, _, _] = random_group(rng.next_u64()).to_le_bytes();
    [a, b, c, d, e, f]
}

/// The random stream field values are drawn from: eight xoshiro256++
/// generators (Blackman and Vigna's, which pass BigCrush and PractRand)
/// advanced side by side, one lane each.
///
/// Values take most of the random bits a workload draws (a 1,000-byte
/// record is 170 of Java's groups), and filling them is on the path of
/// every insert and update. Eight independent lanes make one step the same
/// few shifts, additions and exclusive ors on eight words, turned into
/// eight groups, 48 bytes: with AVX-512 VBMI one instruction per
/// operation, one byte permutation and one store; with AVX-512BW alone one
/// byte shuffle and four stores; with AVX2 two of each operation and four
/// stores; elsewhere plain 64-bit operations lane by lane.
/// [`ValueRng::fill_values`] picks the code at run time, and all of them
/// write the same bytes, so a seed gives the same values on every machine.
/// Key choice and the operation mix keep their own streams.
///
/// Each value starts a step, whose groups it takes in lane order, and is
/// cut to its length: the groups of its last step that it does not need
/// are dropped, as is the rest of a cut group.
#[derive(Clone, Debug)]
pub struct ValueRng {
    /// xoshiro256++'s four state words, `state[k][lane]`.
    state: [[u64; LANES]; 4],
    /// The words of the last step [`RngCore::next_u64`] has not yet
    /// handed out, from `spare_at` on.
    spare: [u64; LANES],
    spare_at: usize,
    /// The code that computes the steps, chosen for this CPU.
    path: FillPath,
}

/// The generators [`ValueRng`] advances together.
const LANES: usize = 8;
/// The value bytes one step of [`ValueRng`] gives: one Java group per
/// lane.
const STEP_BYTES: usize = LANES * VALUE_CHUNK;

/// Which code computes [`ValueRng`]'s steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FillPath {
    /// 64-bit operations lane by lane, each value written exactly.
    Plain,
    /// Two 256-bit registers per state word.
    #[cfg(target_arch = "x86_64")]
    Avx2,
    /// One 512-bit register per state word, and `vpermb` to pack the
    /// groups (AVX-512 VBMI: Intel since Ice Lake, AMD since Zen 4).
    #[cfg(target_arch = "x86_64")]
    Avx512Vbmi,
    /// One 512-bit register per state word, the groups packed within each
    /// 128-bit quarter (AVX-512BW without VBMI: Skylake-SP, Cascade Lake).
    #[cfg(target_arch = "x86_64")]
    Avx512Bw,
}

impl FillPath {
    /// The fastest path this CPU runs.
    fn detect() -> Self {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                if std::arch::is_x86_feature_detected!("avx512vbmi") {
                    return FillPath::Avx512Vbmi;
                }
                if std::arch::is_x86_feature_detected!("avx512bw") {
                    return FillPath::Avx512Bw;
                }
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return FillPath::Avx2;
            }
        }
        FillPath::Plain
    }

    /// Every path this CPU can run, for the tests that compare them.
    #[cfg(test)]
    fn available() -> Vec<Self> {
        #[allow(unused_mut)]
        let mut paths = vec![FillPath::Plain];
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx2") {
                paths.push(FillPath::Avx2);
            }
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
            {
                paths.push(FillPath::Avx512Bw);
            }
            if FillPath::detect() == FillPath::Avx512Vbmi {
                paths.push(FillPath::Avx512Vbmi);
            }
        }
        paths
    }
}

/// One xoshiro256++ step of the eight lanes held in 512-bit registers
/// (`s0` to `s3`, one per state word), giving the eight words turned into
/// Java's groups (in the low six bytes of each 64-bit word). Expands
/// inside functions compiled with AVX-512F.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_step {
    ($s0:ident, $s1:ident, $s2:ident, $s3:ident) => {{
        let word = _mm512_add_epi64(_mm512_rol_epi64::<23>(_mm512_add_epi64($s0, $s3)), $s0);
        let t = _mm512_slli_epi64::<17>($s1);
        $s2 = _mm512_xor_si512($s2, $s0);
        $s3 = _mm512_xor_si512($s3, $s1);
        $s1 = _mm512_xor_si512($s1, $s2);
        $s0 = _mm512_xor_si512($s0, $s3);
        $s2 = _mm512_xor_si512($s2, t);
        $s3 = _mm512_rol_epi64::<45>($s3);
        let placed = _mm512_or_si512(
            _mm512_and_si512(word, _mm512_set1_epi64(GROUP_FRESH_BITS as i64)),
            _mm512_and_si512(
                _mm512_slli_epi64::<3>(word),
                _mm512_set1_epi64(GROUP_SHARED_BITS as i64),
            ),
        );
        _mm512_add_epi64(placed, _mm512_set1_epi64(GROUP_SPACES as i64))
    }};
}

/// A fill on the eight lanes held in 512-bit registers: loads
/// `$rng.state`, runs [`place_steps`] with `STORE = $store`, handing each
/// step's groups ([`avx512_step!`]) and where they go to `$put`, and stores
/// the state back. Expands inside functions compiled with AVX-512F.
#[cfg(target_arch = "x86_64")]
macro_rules! avx512_fill {
    ($rng:expr, $area:expr, $values:expr, $store:literal, |$to:ident, $groups:ident| $put:block) => {{
        let state = $rng.state.as_mut_ptr().cast::<u64>();
        let word = |k: usize| state.wrapping_add(k * LANES).cast::<__m512i>();
        // SAFETY: `state` is the 4 × 8 words of `$rng.state`, each state
        // word 64 bytes.
        let (mut s0, mut s1, mut s2, mut s3) = unsafe {
            (
                _mm512_loadu_si512(word(0)),
                _mm512_loadu_si512(word(1)),
                _mm512_loadu_si512(word(2)),
                _mm512_loadu_si512(word(3)),
            )
        };
        place_steps::<$store>($area, $values, |$to| {
            let $groups = avx512_step!(s0, s1, s2, s3);
            $put
        });
        // SAFETY: as for the loads.
        unsafe {
            _mm512_storeu_si512(word(0), s0);
            _mm512_storeu_si512(word(1), s1);
            _mm512_storeu_si512(word(2), s2);
            _mm512_storeu_si512(word(3), s3);
        }
    }};
}

impl ValueRng {
    /// A stream starting from `seed`.
    pub fn new(seed: u64) -> Self {
        // splitmix64 is xoshiro's recommended seeding: as it is a bijection
        // of its counter, at most one of the 32 words is zero, so no lane
        // starts from xoshiro's one forbidden (all-zero) state.
        let mut counter = seed;
        let mut state = [[0; LANES]; 4];
        for lane in 0..LANES {
            for word in &mut state {
                word[lane] = crate::generator::splitmix64(&mut counter);
            }
        }
        ValueRng {
            state,
            spare: [0; LANES],
            spare_at: LANES,
            path: FillPath::detect(),
        }
    }

    /// One xoshiro256++ step of every lane.
    #[inline(always)]
    fn step(&mut self) -> [u64; LANES] {
        let [s0, s1, s2, s3] = &mut self.state;
        let mut out = [0; LANES];
        for lane in 0..LANES {
            out[lane] = s0[lane]
                .wrapping_add(s3[lane])
                .rotate_left(23)
                .wrapping_add(s0[lane]);
            let t = s1[lane] << 17;
            s2[lane] ^= s0[lane];
            s3[lane] ^= s1[lane];
            s1[lane] ^= s2[lane];
            s0[lane] ^= s3[lane];
            s2[lane] ^= t;
            s3[lane] = s3[lane].rotate_left(45);
        }
        out
    }

    /// Fills `out` with field values of `len` bytes each, one after
    /// another (the last one shorter when `len` does not divide
    /// `out.len()`), laid out as Java YCSB's `RandomByteIterator` lays out
    /// a value: groups of six bytes, each from its own 31 random bits,
    /// every value starting with a fresh group and its last group cut to
    /// fit.
    pub fn fill_values(&mut self, out: &mut [u8], len: usize) {
        let end = out.len();
        let values = (0..end)
            .step_by(len.max(1))
            .map(|at| (at, len.min(end - at)));
        self.fill(out, values);
    }

    /// Fills `out` with one field value of `out.len()` bytes:
    /// [`fill_values`](Self::fill_values) with the value's own length,
    /// without working out where further values would start (an update's
    /// one value paid a tenth of its generation for that).
    #[inline]
    pub fn fill_value(&mut self, out: &mut [u8]) {
        let len = out.len();
        self.fill(out, std::iter::once((0, len)));
    }

    /// Writes values of `len` bytes, each laid out as
    /// [`fill_values`](Self::fill_values) lays out each, into `area` at
    /// `starts` (increasing, each value inside `area`), and may write
    /// anything anywhere else in `area`: room for the steps' whole stores,
    /// as [`Record::push_template`] gives.
    ///
    /// # Panics
    ///
    /// When a value does not lie inside `area`.
    ///
    /// [`Record::push_template`]: ycsb_db::Record::push_template
    pub fn fill_at(&mut self, area: &mut [u8], starts: &[usize], len: usize) {
        self.fill(area, starts.iter().map(|&at| (at, len)));
    }

    /// Values at the given (start, length) spans of `area`, in order;
    /// stores anywhere in `area`.
    #[inline]
    fn fill(&mut self, area: &mut [u8], values: impl Iterator<Item = (usize, usize)>) {
        match self.path {
            FillPath::Plain => self.fill_plain(area, values),
            // SAFETY: the path was chosen for this CPU, which has AVX2.
            #[cfg(target_arch = "x86_64")]
            FillPath::Avx2 => unsafe { self.fill_avx2(area, values) },
            // SAFETY: the path was chosen for this CPU, which has AVX-512F
            // and VBMI.
            #[cfg(target_arch = "x86_64")]
            FillPath::Avx512Vbmi => unsafe { self.fill_avx512_vbmi(area, values) },
            // SAFETY: the path was chosen for this CPU, which has AVX-512F
            // and BW.
            #[cfg(target_arch = "x86_64")]
            FillPath::Avx512Bw => unsafe { self.fill_avx512_bw(area, values) },
        }
    }

    /// [`fill`](Self::fill) with 64-bit operations, each value exactly in
    /// place.
    fn fill_plain(&mut self, area: &mut [u8], values: impl Iterator<Item = (usize, usize)>) {
        for (start, len) in values {
            for step in area[start..start + len].chunks_mut(STEP_BYTES) {
                let mut words = self.step().into_iter();
                let mut groups = step.chunks_exact_mut(VALUE_CHUNK);
                // `zip` asks the groups first: no word is taken for a
                // group that is not there.
                for (group, word) in (&mut groups).zip(&mut words) {
                    group.copy_from_slice(&random_group(word).to_le_bytes()[..VALUE_CHUNK]);
                }
                let cut = groups.into_remainder();
                if let Some(word) = words.next().filter(|_| !cut.is_empty()) {
                    let n = cut.len();
                    cut.copy_from_slice(&random_group(word).to_le_bytes()[..n]);
                }
            }
        }
    }

    /// [`fill`](Self::fill) with AVX2: lanes 0 to 3 in one register, 4 to
    /// 7 in another; each half's four groups go out with one byte shuffle
    /// and two 16-byte stores.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn fill_avx2(&mut self, area: &mut [u8], values: impl Iterator<Item = (usize, usize)>) {
        use std::arch::x86_64::*;

        macro_rules! rotate_left {
            ($x:expr, $by:literal) => {
                _mm256_or_si256(
                    _mm256_slli_epi64::<$by>($x),
                    _mm256_srli_epi64::<{ 64 - $by }>($x),
                )
            };
        }
        // xoshiro256++ on four lanes; gives their words.
        macro_rules! xoshiro {
            ($s0:ident, $s1:ident, $s2:ident, $s3:ident) => {{
                let word = _mm256_add_epi64(rotate_left!(_mm256_add_epi64($s0, $s3), 23), $s0);
                let t = _mm256_slli_epi64::<17>($s1);
                $s2 = _mm256_xor_si256($s2, $s0);
                $s3 = _mm256_xor_si256($s3, $s1);
                $s1 = _mm256_xor_si256($s1, $s2);
                $s0 = _mm256_xor_si256($s0, $s3);
                $s2 = _mm256_xor_si256($s2, t);
                $s3 = rotate_left!($s3, 45);
                word
            }};
        }

        let fresh = _mm256_set1_epi64x(GROUP_FRESH_BITS as i64);
        let shared = _mm256_set1_epi64x(GROUP_SHARED_BITS as i64);
        let spaces = _mm256_set1_epi64x(GROUP_SPACES as i64);
        // In each 128-bit half, the six group bytes of its two words side
        // by side: 12 bytes, then four bytes to be overwritten.
        let pack = _mm256_setr_epi8(
            0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1, //
            0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1,
        );
        let groups = |word: __m256i| {
            let placed = _mm256_or_si256(
                _mm256_and_si256(word, fresh),
                _mm256_and_si256(_mm256_slli_epi64::<3>(word), shared),
            );
            _mm256_shuffle_epi8(_mm256_add_epi64(placed, spaces), pack)
        };

        let state = self.state.as_mut_ptr().cast::<u64>();
        let half =
            |k: usize, half: usize| state.wrapping_add(k * LANES + half * 4).cast::<__m256i>();
        // SAFETY: `state` is `self.state`'s 4 × 8 words; each half of a
        // state word is four of them, 32 bytes.
        let [mut a0, mut a1, mut a2, mut a3, mut b0, mut b1, mut b2, mut b3] = unsafe {
            [
                _mm256_loadu_si256(half(0, 0)),
                _mm256_loadu_si256(half(1, 0)),
                _mm256_loadu_si256(half(2, 0)),
                _mm256_loadu_si256(half(3, 0)),
                _mm256_loadu_si256(half(0, 1)),
                _mm256_loadu_si256(half(1, 1)),
                _mm256_loadu_si256(half(2, 1)),
                _mm256_loadu_si256(half(3, 1)),
            ]
        };
        // The last 16-byte store starts at 36: a step writes 52 bytes.
        place_steps::<52>(area, values, |to| {
            let low = groups(xoshiro!(a0, a1, a2, a3));
            let high = groups(xoshiro!(b0, b1, b2, b3));
            // SAFETY: `place_steps` gives 52 writable bytes at `to`.
            unsafe {
                _mm_storeu_si128(to.cast(), _mm256_castsi256_si128(low));
                _mm_storeu_si128(to.add(12).cast(), _mm256_extracti128_si256::<1>(low));
                _mm_storeu_si128(to.add(24).cast(), _mm256_castsi256_si128(high));
                _mm_storeu_si128(to.add(36).cast(), _mm256_extracti128_si256::<1>(high));
            }
        });
        // SAFETY: as for the loads.
        unsafe {
            _mm256_storeu_si256(half(0, 0), a0);
            _mm256_storeu_si256(half(1, 0), a1);
            _mm256_storeu_si256(half(2, 0), a2);
            _mm256_storeu_si256(half(3, 0), a3);
            _mm256_storeu_si256(half(0, 1), b0);
            _mm256_storeu_si256(half(1, 1), b1);
            _mm256_storeu_si256(half(2, 1), b2);
            _mm256_storeu_si256(half(3, 1), b3);
        }
    }

    /// [`fill`](Self::fill) with AVX-512 VBMI: the eight lanes in one
    /// register per state word, the eight groups packed by one `vpermb`
    /// and stored at once (64 bytes, of which the next step overwrites 16).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512vbmi")]
    fn fill_avx512_vbmi(&mut self, area: &mut [u8], values: impl Iterator<Item = (usize, usize)>) {
        use std::arch::x86_64::*;

        /// For each stored byte, the register's byte it is: group g's six
        /// bytes are the low six of word g (the last 16, overwritten by
        /// the next step, repeat the last group).
        const PACK: [u8; 64] = {
            let mut pack = [0u8; 64];
            let mut i = 0;
            while i < 64 {
                let group = if i < STEP_BYTES {
                    i / VALUE_CHUNK
                } else {
                    LANES - 1
                };
                pack[i] = (group * 8 + i % VALUE_CHUNK) as u8;
                i += 1;
            }
            pack
        };

        // SAFETY: PACK is 64 readable bytes.
        let pack = unsafe { _mm512_loadu_si512(PACK.as_ptr().cast()) };
        avx512_fill!(self, area, values, 64, |to, groups| {
            let packed = _mm512_permutexvar_epi8(pack, groups);
            // SAFETY: `place_steps` gives 64 writable bytes at `to`.
            unsafe { _mm512_storeu_si512(to.cast(), packed) };
        });
    }

    /// [`fill`](Self::fill) with AVX-512BW: as with VBMI, but each 128-bit
    /// quarter of the groups is packed apart (its two groups side by side,
    /// 12 bytes) and stored by itself, four 16-byte stores a step.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn fill_avx512_bw(&mut self, area: &mut [u8], values: impl Iterator<Item = (usize, usize)>) {
        use std::arch::x86_64::*;

        // In each quarter, the six group bytes of its two words side by
        // side, then four bytes the next store overwrites.
        let pack = _mm512_broadcast_i32x4(_mm_setr_epi8(
            0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13, -1, -1, -1, -1,
        ));
        // The last 16-byte store starts at 36: a step writes 52 bytes.
        avx512_fill!(self, area, values, 52, |to, groups| {
            let packed = _mm512_shuffle_epi8(groups, pack);
            // SAFETY: `place_steps` gives 52 writable bytes at `to`.
            unsafe {
                _mm_storeu_si128(to.cast(), _mm512_castsi512_si128(packed));
                _mm_storeu_si128(to.add(12).cast(), _mm512_extracti32x4_epi32::<1>(packed));
                _mm_storeu_si128(to.add(24).cast(), _mm512_extracti32x4_epi32::<2>(packed));
                _mm_storeu_si128(to.add(36).cast(), _mm512_extracti32x4_epi32::<3>(packed));
            }
        });
    }
}

/// Runs `step` once per [`STEP_BYTES`] of each value (start, length),
/// giving it where the step's groups go: `STORE` writable bytes, of which
/// the first [`STEP_BYTES`] are the step's. A step whose stores fit in
/// `area` writes in place, the last of a value running past its end; near
/// the end of `area` a step goes through a spill buffer instead.
///
/// # Panics
///
/// When a value does not lie inside `area`.
#[inline(always)]
fn place_steps<const STORE: usize>(
    area: &mut [u8],
    values: impl Iterator<Item = (usize, usize)>,
    mut step: impl FnMut(*mut u8),
) {
    let room = area.len();
    let out = area.as_mut_ptr();
    let mut spill = [0u8; STORE];
    for (start, len) in values {
        assert!(
            start + len <= room,
            "a value at {start}..{} in {room}",
            start + len
        );
        let steps = len.div_ceil(STEP_BYTES);
        if steps > 0 && start + (steps - 1) * STEP_BYTES + STORE <= room {
            let mut to = out.wrapping_add(start);
            for _ in 0..steps {
                // Step k writes `start + 48k .. start + 48k + STORE`,
                // inside `area`, as the test above says.
                step(to);
                to = to.wrapping_add(STEP_BYTES);
            }
            continue;
        }
        let (mut at, end) = (start, start + len);
        while at < end {
            if at + STORE <= room {
                step(out.wrapping_add(at));
                at += STEP_BYTES;
            } else {
                step(spill.as_mut_ptr());
                let n = (end - at).min(STEP_BYTES);
                // SAFETY: `at + n <= end <= room`, and `spill` is a buffer
                // of its own.
                unsafe { std::ptr::copy_nonoverlapping(spill.as_ptr(), out.add(at), n) };
                at += n;
            }
        }
    }
}

impl RngCore for ValueRng {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.next_u64() as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        if self.spare_at == LANES {
            self.spare = self.step();
            self.spare_at = 0;
        }
        let word = self.spare[self.spare_at];
        self.spare_at += 1;
        word
    }

    fn fill_bytes(&mut self, dst: &mut [u8]) {
        let mut chunks = dst.chunks_exact_mut(8);
        for chunk in &mut chunks {
            chunk.copy_from_slice(&self.next_u64().to_le_bytes());
        }
        let tail = chunks.into_remainder();
        let word = self.next_u64().to_le_bytes();
        let len = tail.len();
        tail.copy_from_slice(&word[..len]);
    }
}

/// Java's `String.hashCode` step for one more (ASCII) character.
fn java_hash_step(hash: i32, byte: u8) -> i32 {
    hash.wrapping_mul(31).wrapping_add(i32::from(byte))
}

/// Writes Java YCSB's deterministic value for (`key`, `field`) of `length`
/// bytes into `out` (cleared first).
///
/// Java starts with `<key>:<field>`; while shorter than the length it
/// appends `:` and the `String.hashCode()` of the whole buffer so far, as a
/// signed decimal; then it cuts the buffer to the length. The hash of the
/// buffer is kept incrementally here, which gives Java's value without
/// rehashing the buffer each round. Keys and field names are ASCII in every
/// workload, so Java's UTF-16 units are the bytes.
pub fn build_deterministic_value(key: &str, field: &str, length: usize, out: &mut Vec<u8>) {
    out.clear();
    let mut hash: i32 = 0;
    fn push(out: &mut Vec<u8>, hash: &mut i32, bytes: &[u8]) {
        for &b in bytes {
            *hash = java_hash_step(*hash, b);
        }
        out.extend_from_slice(bytes);
    }
    push(out, &mut hash, key.as_bytes());
    push(out, &mut hash, b":");
    push(out, &mut hash, field.as_bytes());
    let mut digits = [0u8; 12];
    while out.len() < length {
        push(out, &mut hash, b":");
        let current = hash;
        push(out, &mut hash, format_i32(current, &mut digits));
    }
    out.truncate(length);
}

/// Formats `v` in decimal into `buf`, returning the used tail.
fn format_i32(v: i32, buf: &mut [u8; 12]) -> &[u8] {
    let negative = v < 0;
    let mut rest = v.unsigned_abs();
    let mut at = buf.len();
    loop {
        at -= 1;
        buf[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    if negative {
        at -= 1;
        buf[at] = b'-';
    }
    &buf[at..]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Java's `RandomByteIterator.fillBytesImpl` for one random `int`:
    /// byte k is `((n >> shift_k) & mask_k) + ' '` (arithmetic shifts).
    fn java_group(n: i32) -> [u8; 6] {
        let part = |shift: u32, mask: i32| (((n >> shift) & mask) + i32::from(b' ')) as u8;
        [
            part(0, 31),
            part(5, 63),
            part(10, 95),
            part(15, 31),
            part(20, 63),
            part(25, 95),
        ]
    }

    /// Places the 31 bits of Java's `n` that its group uses where
    /// [`random_group`] reads them.
    fn spread(n: i32) -> u64 {
        let n = u64::from(n as u32);
        let bits = |from: u32, to: u32, count: u32| ((n >> from) & ((1 << count) - 1)) << to;
        bits(0, 0, 5)
            | bits(5, 8, 6)
            | bits(11, 17, 4)
            | bits(16, 22, 1)
            | bits(15, 24, 1)
            | bits(17, 26, 3)
            | bits(20, 32, 6)
            | bits(26, 41, 4)
            | bits(31, 46, 1)
    }

    /// Every group is Java's group of some `int` and every Java group is
    /// ours of some word, bit for bit: the same function of uniform random
    /// bits, so the same distribution of bytes.
    #[test]
    fn groups_are_java_s_bit_for_bit() {
        let mut rng = ValueRng::new(0x1DEA);
        let edges = [0, -1, 1, i32::MIN, i32::MAX, 0x4000_0000, 0x0001_0400];
        let randoms = (0..200_000).map(|_| rng.next_u32() as i32);
        for n in edges.into_iter().chain(randoms) {
            let ours = random_group(spread(n)).to_le_bytes();
            assert_eq!(ours[..6], java_group(n), "n = {n:#x}");
            assert_eq!(ours[6..], [0, 0], "n = {n:#x}");
        }
        // Bits outside the 31 read positions change nothing.
        for _ in 0..10_000 {
            let word = rng.next_u64();
            assert_eq!(random_group(word), random_group(word & GROUP_FRESH_BITS));
        }
    }

    /// The bytes each position of a Java group can hold: mask 31 gives
    /// `' '..='?'`, 63 `' '..='_'`, 95 `' '..='?'` and `` '`'..=DEL ``.
    fn allowed(position: usize, byte: u8) -> bool {
        match position % 6 {
            0 | 3 => (32..64).contains(&byte),
            1 | 4 => (32..96).contains(&byte),
            _ => (32..64).contains(&byte) || (96..128).contains(&byte),
        }
    }

    /// One value filled alone is the value `fill_values` writes for its
    /// length, from the same stream.
    #[test]
    fn one_value_is_the_value_fill_values_writes() {
        let (mut one, mut many) = (ValueRng::new(11), ValueRng::new(11));
        for len in (0..=40).chain([99, 100, 101, 1000, 4096]) {
            let (mut a, mut b) = (vec![0u8; len], vec![0u8; len]);
            one.fill_value(&mut a);
            many.fill_values(&mut b, len);
            assert_eq!(a, b, "len {len}");
        }
    }

    /// Values of every length are Java's groups one after another, the
    /// last cut (`fillBytesImpl`'s switch on the bytes left): each byte
    /// lies in its position's set and the bits Java's shifts share between
    /// neighbouring bytes agree, in every group including cut ones, from
    /// the general fill and from the workload's value stream alike.
    #[test]
    fn values_are_java_groups_cut_to_the_length() {
        let mut rng = ValueRng::new(6);
        for len in (0..=40).chain([100, 1000, 4096]) {
            for _ in 0..200 {
                let mut value = vec![0u8; 2 * len];
                let (general, filled) = value.split_at_mut(len);
                fill_random_value(&mut rng, general);
                rng.fill_values(filled, len);
                for (i, &b) in general.iter().chain(filled.iter()).enumerate() {
                    let i = i % len.max(1);
                    assert!(allowed(i, b), "len {len}: byte {i} is {b}");
                }
                for group in value.chunks(len.max(1)).flat_map(|v| v.chunks(6)) {
                    let v = |k: usize| group.get(k).map(|b| b - b' ');
                    let bit = |k: usize, bit: u32| v(k).map(|x| (x >> bit) & 1);
                    for (a, b) in [((1, 5), (2, 0)), ((2, 6), (3, 1)), ((4, 5), (5, 0))] {
                        if let (Some(x), Some(y)) = (bit(a.0, a.1), bit(b.0, b.1)) {
                            assert_eq!(x, y, "len {len}: shared bit {a:?}/{b:?}");
                        }
                    }
                }
            }
        }
    }

    /// Each position of a group draws its allowed bytes evenly (Java's
    /// masks of a uniform `int`): 2^16 groups give 1024 to 2048 expected
    /// draws per (position, byte) cell, so a stuck bit or a wrong mask
    /// (a mask of 31 where Java has 95, say) gives a
    /// statistic hundreds of times the critical value; the seed is fixed
    /// and the level is the suite's (see `generator::testutil`). Checked
    /// for groups one at a time and for the workload's eight-lane fill.
    #[test]
    fn each_position_draws_its_bytes_evenly() {
        let mut rng = ValueRng::new(0x5EED);
        let mut counts = vec![[0u64; 128]; 6];
        for _ in 0..1 << 16 {
            for (i, &b) in random_value_chunk(&mut rng).iter().enumerate() {
                counts[i % 6][usize::from(b)] += 1;
            }
        }
        assert_positions_even(&counts);
        let mut counts = vec![[0u64; 128]; 6];
        let mut values = vec![0u8; 6 << 16];
        rng.fill_values(&mut values, 96);
        for (i, &b) in values.iter().enumerate() {
            counts[i % 6][usize::from(b)] += 1;
        }
        assert_positions_even(&counts);
    }

    fn assert_positions_even(counts: &[[u64; 128]]) {
        use crate::generator::testutil::{assert_does_not_fit, assert_fits};
        for (position, counts) in counts.iter().enumerate() {
            let symbols: Vec<u8> = (0..128).filter(|&b| allowed(position, b)).collect();
            let observed: Vec<u64> = symbols.iter().map(|&b| counts[usize::from(b)]).collect();
            let outside: u64 = counts.iter().sum::<u64>() - observed.iter().sum::<u64>();
            assert_eq!(outside, 0, "position {position}");
            let even = vec![1.0 / symbols.len() as f64; symbols.len()];
            assert_fits(&observed, &even);
        }
        // Power: position 0's draws (32 bytes) read as position 2's
        // (64), which a mask of 31 where Java has 95 would give.
        let position0: Vec<u64> = (32..64).map(|b| counts[0][b]).chain([0; 32]).collect();
        assert_does_not_fit(&position0, &[1.0 / 64.0; 64]);
    }

    /// The lanes are independent streams: the first bytes of the groups
    /// of lanes 0 and 1 (and 2 and 3, 4 and 5, 6 and 7) of each step are
    /// uniform over the 32 × 32 pairs (120-byte values are 20 groups, so
    /// every pair of groups lies in one step). 2^17 pairs give 128 a cell; lanes that
    /// repeated each other would put them all on the diagonal, a
    /// statistic of about 4 million against a critical value near 1,200.
    #[test]
    fn neighbouring_groups_are_independent() {
        use crate::generator::testutil::{assert_does_not_fit, assert_fits};
        let mut rng = ValueRng::new(0x1A7E);
        let mut values = vec![0u8; 12 << 17];
        rng.fill_values(&mut values, 120);
        let mut pairs = vec![0u64; 32 * 32];
        for two in values.chunks_exact(12) {
            pairs[usize::from(two[0] - b' ') * 32 + usize::from(two[6] - b' ')] += 1;
        }
        assert_fits(&pairs, &[1.0 / 1024.0; 1024]);
        // Power: the same count of pairs with the second byte a copy.
        let mut copies = vec![0u64; 32 * 32];
        for two in values.chunks_exact(12) {
            copies[usize::from(two[0] - b' ') * 33] += 1;
        }
        assert_does_not_fit(&copies, &[1.0 / 1024.0; 1024]);
    }

    /// Compressibility is what the byte layout changes for storage
    /// figures: zlib (default level) on 4 KiB blocks of ten 100-byte
    /// fields per record gives 0.799 for Java's layout (Python's zlib on
    /// Java's algorithm over `random.getrandbits(32)`, seeds 0 to 3, all
    /// 0.7989) and 0.761 for uniform 64-symbol bytes. Over 1.1 MB the ratio
    /// varies by about 1e-4 between seeds, and miniz and zlib differ by
    /// less than 1%, so ±0.008 separates the two layouts with room.
    #[test]
    fn zlib_compresses_values_as_it_does_java_s() {
        use std::io::Write;
        let mut rng = ValueRng::new(42);
        let names: Vec<String> = (0..10).map(|i| format!("field{i}")).collect();
        let template = ycsb_db::RecordTemplate::new(&names, 100);
        let mut data = Vec::new();
        let mut record = ycsb_db::Record::new();
        for _ in 0..1100 {
            record.clear();
            record.push_template(&template, |area, starts| rng.fill_at(area, starts, 100));
            for field in record.iter() {
                data.extend_from_slice(field.value);
            }
        }
        let (mut original, mut compressed) = (0usize, 0usize);
        for block in data.chunks_exact(4096) {
            let mut encoder =
                flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
            encoder.write_all(block).unwrap();
            original += block.len();
            compressed += encoder.finish().unwrap().len();
        }
        let ratio = compressed as f64 / original as f64;
        assert!((ratio - 0.799).abs() < 0.008, "zlib ratio {ratio:.4}");
    }

    /// Each lane is xoshiro256++ exactly: rand's `SmallRng` (xoshiro256++
    /// on 64-bit targets) started from the lane's state gives its words.
    #[test]
    fn each_lane_is_xoshiro256_plus_plus() {
        use rand::SeedableRng;
        let mut rng = ValueRng::new(0xC0FFEE);
        let mut lanes: Vec<rand::rngs::SmallRng> = (0..LANES)
            .map(|lane| {
                let mut seed = [0u8; 32];
                for (k, bytes) in seed.chunks_exact_mut(8).enumerate() {
                    bytes.copy_from_slice(&rng.state[k][lane].to_le_bytes());
                }
                rand::rngs::SmallRng::from_seed(seed)
            })
            .collect();
        for _ in 0..1000 {
            let step = rng.step();
            for (lane, reference) in lanes.iter_mut().enumerate() {
                assert_eq!(step[lane], reference.next_u64(), "lane {lane}");
            }
        }
    }

    /// What the fills must write: each value starts a step, whose eight
    /// lanes give eight groups in lane order, and is cut to its length.
    fn reference_fill(rng: &mut ValueRng, lens: &[usize]) -> Vec<Vec<u8>> {
        lens.iter()
            .map(|&len| {
                let mut bytes = Vec::new();
                while bytes.len() < len {
                    for word in rng.step() {
                        bytes.extend_from_slice(&random_group(word).to_le_bytes()[..VALUE_CHUNK]);
                    }
                }
                bytes.truncate(len);
                bytes
            })
            .collect()
    }

    /// A stream from `seed` that computes its steps with `path`.
    fn on_path(seed: u64, path: FillPath) -> ValueRng {
        ValueRng {
            path,
            ..ValueRng::new(seed)
        }
    }

    /// Every path this CPU runs (AVX-512, AVX2, plain) writes the
    /// reference's bytes and takes its steps, for every length (cut and
    /// whole steps, cut groups) and a short last value.
    #[test]
    fn filled_values_are_the_steps_groups_cut_to_each_value() {
        let paths = FillPath::available();
        for len in (0..=100).chain([143, 144, 145, 1000, 4099]) {
            for total in [len, 3 * len, 3 * len + len / 2] {
                let mut reference = ValueRng::new(9);
                let lens: Vec<usize> = (0..total)
                    .step_by(len.max(1))
                    .map(|at| len.min(total - at))
                    .collect();
                let expected = reference_fill(&mut reference, &lens).concat();
                for &path in &paths {
                    let mut rng = on_path(9, path);
                    let mut out = vec![0xAA; total];
                    rng.fill_values(&mut out, len);
                    assert_eq!(out, expected, "{path:?}: len {len}, {total} bytes");
                    assert_eq!(rng.state, reference.state, "{path:?}: len {len}: steps");
                }
            }
        }
    }

    /// Values at gaps, with any room after the last one (which the stores
    /// may use, in place or through the spill buffer): the same bytes and
    /// steps on every path.
    #[test]
    fn values_at_gaps_are_the_references() {
        for len in (0..=100).chain([1000]) {
            let starts = [3, 3 + len + 5, 3 + 2 * len + 13];
            let mut reference = ValueRng::new(4);
            let expected = reference_fill(&mut reference, &[len; 3]);
            for path in FillPath::available() {
                for room in 0..70 {
                    let mut rng = on_path(4, path);
                    let mut area = vec![0xAA; starts[2] + len + room];
                    rng.fill_at(&mut area, &starts, len);
                    for (&at, value) in starts.iter().zip(&expected) {
                        assert_eq!(
                            &area[at..at + len],
                            &value[..],
                            "{path:?}: len {len}, room {room}, at {at}"
                        );
                    }
                    assert_eq!(rng.state, reference.state, "{path:?}: len {len}: steps");
                }
            }
        }
    }

    #[test]
    fn value_streams_with_different_seeds_differ() {
        let mut a = ValueRng::new(1);
        let mut b = ValueRng::new(2);
        let (x, y): (Vec<u64>, Vec<u64>) = (0..4).map(|_| (a.next_u64(), b.next_u64())).unzip();
        assert_ne!(x, y);
        let mut buf = [0u8; 13];
        a.fill_bytes(&mut buf);
        assert!(buf.iter().any(|&b| b != 0));
    }

    #[test]
    fn deterministic_values_match_java() {
        // Produced by Java YCSB's buildDeterministicValue on a JVM.
        let mut out = Vec::new();
        build_deterministic_value("user6284781860667377211", "field0", 100, &mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "user6284781860667377211:field0:-56807877:2032869390:-165488160:1762371712:-169193395:-1039977118:-10"
        );
        build_deterministic_value("user1", "field9", 37, &mut out);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "user1:field9:-1268390937:701431326:16"
        );
        build_deterministic_value("user8517097267634966620", "field3", 1000, &mut out);
        let java_hash = out.iter().fold(0i32, |h, &b| java_hash_step(h, b));
        assert_eq!(java_hash, 1477606726);
        assert_eq!(out.len(), 1000);
        build_deterministic_value("user1", "field0", 3, &mut out);
        assert_eq!(out, b"use");
    }

    #[test]
    fn format_i32_extremes() {
        let mut b = [0u8; 12];
        assert_eq!(format_i32(i32::MIN, &mut b), b"-2147483648");
        assert_eq!(format_i32(0, &mut b), b"0");
        assert_eq!(format_i32(42, &mut b), b"42");
    }
}
