//! The latency histograms exports carry: HdrHistogram's base64 V2
//! encoding (what `ycsb merge` adds up, what interval logs hold) and the
//! one percentile rule every report and merge computes its figures by.

use std::io::Read as _;

use base64::Engine as _;
use hdrhistogram::serialization::{Deserializer, Serializer as _, V2Serializer};
use hdrhistogram::{Counter, Histogram};

/// The uncompressed V2 encoding's cookie (HdrHistogram's, with the
/// word-size bits the Rust crate writes).
const V2_COOKIE: u32 = 0x1c84_9303 | 0x10;
/// The compressed V2 encoding's cookie.
const V2_COMPRESSED_COOKIE: u32 = 0x1c84_9304 | 0x10;
/// A V2 header: cookie, payload length, normalizing offset, significant
/// digits, lowest and highest value, integer-to-double ratio.
const V2_HEADER: usize = 40;
/// The most bytes one count takes in V2's variable-length encoding.
const MAX_BYTES_PER_COUNT: usize = 9;

/// A text that should hold a base64 V2 histogram does not.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{origin}: not a base64 HdrHistogram V2 histogram: {reason}")]
pub struct HistogramError {
    /// Where the text came from (`file:line`, a JSON path).
    pub origin: String,
    /// What went wrong.
    pub reason: String,
}

/// Encodes a histogram as HdrHistogram's compressed V2 encoding in base64
/// (the last column of an interval log line).
///
/// The bytes are `V2DeflateSerializer`'s exactly (its cookie, the length,
/// zlib at the default level of the uncompressed V2 encoding), but the
/// zlib compressor is made once per thread and reset for each histogram:
/// the serializer makes a new one each time, whose 300 KB of zeroed tables
/// were a tenth of a short run's start-up CPU (issue 37, item 4).
pub fn encode_histogram<C: Counter>(histogram: &Histogram<C>) -> String {
    thread_local! {
        static ENCODER: std::cell::RefCell<Encoder> = std::cell::RefCell::new(Encoder::new());
    }
    ENCODER.with(|encoder| encoder.borrow_mut().encode(histogram))
}

/// The buffers and zlib compressor [`encode_histogram`] reuses.
struct Encoder {
    plain: Vec<u8>,
    packed: Vec<u8>,
    serializer: V2Serializer,
    zlib: flate2::Compress,
}

impl Encoder {
    fn new() -> Self {
        Self {
            plain: Vec::new(),
            packed: Vec::new(),
            serializer: V2Serializer::new(),
            zlib: flate2::Compress::new(flate2::Compression::default(), true),
        }
    }

    fn encode<C: Counter>(&mut self, histogram: &Histogram<C>) -> String {
        self.plain.clear();
        // Serializing into a Vec fails only for a histogram whose counts do
        // not fit the format (never with our 3-digit nanosecond histograms);
        // an empty string then decodes to an error naming the export.
        if self
            .serializer
            .serialize(histogram, &mut self.plain)
            .is_err()
        {
            return String::new();
        }
        self.packed.clear();
        self.packed
            .extend_from_slice(&V2_COMPRESSED_COOKIE.to_be_bytes());
        self.packed.extend_from_slice(&[0; 4]);
        self.zlib.reset();
        let mut input = &self.plain[..];
        loop {
            self.packed.reserve(input.len() / 2 + 64);
            let before = self.zlib.total_in();
            let status =
                self.zlib
                    .compress_vec(input, &mut self.packed, flate2::FlushCompress::Finish);
            input = &input[(self.zlib.total_in() - before) as usize..];
            match status {
                Ok(flate2::Status::StreamEnd) => break,
                Ok(_) => continue,
                Err(_) => return String::new(),
            }
        }
        let length = (self.packed.len() - 8) as u32;
        self.packed[4..8].copy_from_slice(&length.to_be_bytes());
        base64::engine::general_purpose::STANDARD.encode(&self.packed)
    }
}

/// Decodes [`encode_histogram`]'s text (also accepting the uncompressed V2
/// encoding); `origin` names where the text came from, for the error.
///
/// The lengths a histogram declares are checked against the bytes that
/// hold it and the range it declares before anything of that size is
/// allocated: a few hundred bytes claiming gigabytes of counts are
/// refused, not believed. What is decoded takes memory in proportion to
/// the text and the declared range (HdrHistogram's widest, five digits
/// over all of `u64`, is 6.3 million counts).
///
/// # Errors
///
/// [`HistogramError`] when the text is not base64 or not a V2
/// histogram, or declares lengths its bytes or its range cannot hold.
pub fn decode_histogram(text: &str, origin: &str) -> Result<Histogram<u64>, HistogramError> {
    let fail = |reason: String| HistogramError {
        origin: origin.to_string(),
        reason,
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .map_err(|e| fail(e.to_string()))?;
    let plain = v2_plain(&bytes).map_err(&fail)?;
    Deserializer::new()
        .deserialize::<u64, _>(&mut plain.as_ref())
        .map_err(|e| fail(format!("{e:?}")))
}

/// The uncompressed V2 encoding of `bytes` (inflated when compressed),
/// every declared length checked first.
fn v2_plain(bytes: &[u8]) -> Result<std::borrow::Cow<'_, [u8]>, String> {
    let word = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    };
    let cookie = word(0).ok_or("shorter than a histogram's header")?;
    match cookie {
        V2_COOKIE => {
            let header = bytes
                .get(..V2_HEADER)
                .ok_or("shorter than a histogram's header")?;
            let payload = check_v2_header(header)?;
            let held = bytes.len() - V2_HEADER;
            if payload > held {
                return Err(format!(
                    "declares {payload} bytes of counts but holds {held}"
                ));
            }
            Ok(std::borrow::Cow::Borrowed(bytes))
        }
        V2_COMPRESSED_COOKIE => {
            let declared = word(4).ok_or("shorter than a histogram's header")? as usize;
            let held = bytes.len() - 8;
            if declared > held {
                return Err(format!(
                    "declares a compressed payload of {declared} bytes but holds {held}"
                ));
            }
            let mut inflater = flate2::read::ZlibDecoder::new(&bytes[8..8 + declared]);
            let mut plain = vec![0u8; V2_HEADER];
            inflater
                .read_exact(&mut plain)
                .map_err(|e| format!("its compressed payload holds no histogram header ({e})"))?;
            let payload = check_v2_header(&plain)?;
            // Grows with what inflates, never to the declared length up
            // front.
            let inflated = inflater
                .take(payload as u64)
                .read_to_end(&mut plain)
                .map_err(|e| format!("its compressed payload does not inflate ({e})"))?;
            if inflated < payload {
                return Err(format!(
                    "declares {payload} bytes of counts but its compressed payload holds {inflated}"
                ));
            }
            Ok(std::borrow::Cow::Owned(plain))
        }
        other => Err(format!("unknown cookie {other:#010x}")),
    }
}

/// Checks an uncompressed V2 header: the cookie, a range HdrHistogram can
/// build, and a payload length the range's counts could take. Returns the
/// payload length.
fn check_v2_header(header: &[u8]) -> Result<usize, String> {
    let word = |at: usize| {
        u32::from_be_bytes([header[at], header[at + 1], header[at + 2], header[at + 3]])
    };
    let long = |at: usize| {
        let mut b = [0u8; 8];
        b.copy_from_slice(&header[at..at + 8]);
        u64::from_be_bytes(b)
    };
    if word(0) != V2_COOKIE {
        return Err(format!("unknown inner cookie {:#010x}", word(0)));
    }
    let payload = word(4) as usize;
    let digits = word(12);
    let (low, high) = (long(16), long(24));
    let digits = u8::try_from(digits)
        .ok()
        .filter(|d| *d <= 5)
        .ok_or_else(|| {
            format!("declares {digits} significant digits (HdrHistogram takes 0 to 5)")
        })?;
    // One byte per count sizes the range as the decoder will (the
    // decoder's own histogram then takes eight per count).
    let counts = Histogram::<u8>::new_with_bounds(low, high, digits)
        .map_err(|e| {
            format!("declares a range HdrHistogram cannot build ({low} to {high}, {digits} digits: {e:?})")
        })?
        .distinct_values();
    let most = counts.saturating_mul(MAX_BYTES_PER_COUNT);
    if payload > most {
        return Err(format!(
            "declares {payload} bytes of counts, more than the {counts} counts of its range ({low} to {high}, {digits} digits) can take ({most} bytes)"
        ));
    }
    Ok(payload)
}

/// The value at `percentile` (in `(0, 100]`) of `histogram`: the smallest
/// recorded value that at least `percentile` % of the values do not exceed,
/// with Java HdrHistogram's rank rounding; 0 for an empty histogram.
///
/// Every percentile of a report comes from here, so that a histogram
/// decoded from an export or a log (`ycsb merge`) gives the same figures.
pub fn java_percentile<C: Counter>(histogram: &Histogram<C>, percentile: f64) -> u64 {
    match histogram.len() {
        0 => 0,
        n => histogram.value_at_quantile(java_quantile(n, percentile)),
    }
}

/// The quantile to ask HdrHistogram's `value_at_quantile` for so that it
/// answers `percentile` (in `(0, 100]`) of `n` values (at least one) with
/// Java HdrHistogram's rank rounding: [`java_percentile`]'s rule, for
/// counts kept in HdrHistogram's layout outside a `Histogram` (a worker's
/// flat counts).
pub fn java_quantile(n: u64, percentile: f64) -> f64 {
    // As Java's HdrHistogram, the percentile is lowered by one ulp
    // before the rank is rounded up, so that roundoff (99.9 / 100 *
    // 1000 = 999.0000000000001) cannot push the rank into the next
    // value; the crate's value_at_percentile has no such guard.
    let lowered = if percentile > 0.0 {
        f64::from_bits(percentile.to_bits() - 1)
    } else {
        0.0
    };
    let rank = ((lowered.min(100.0) * n as f64) / 100.0).ceil().max(1.0);
    // Half a count below the rank, ceil(quantile * n) is the rank
    // whatever the roundoff.
    ((rank - 0.5) / n as f64).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reused_compressor_writes_the_serializers_bytes() {
        use hdrhistogram::serialization::V2DeflateSerializer;
        // Several histograms in a row on one thread: each encoding must be
        // the serializer's own, whatever the compressor held before.
        let shapes: [&[u64]; 4] = [
            &[],
            &[1_000, 2_500, 2_500, 1_000_000, 7_000_000_000],
            &[42; 3],
            &[5, 50, 500, 5_000, 50_000, 500_000, 5_000_000, 50_000_000],
        ];
        for values in shapes.iter().cycle().take(8) {
            let mut h = Histogram::<u64>::new(3).unwrap();
            for (k, v) in values.iter().enumerate() {
                h.record_n(*v, k as u64 + 1).unwrap();
            }
            let mut expected = Vec::new();
            V2DeflateSerializer::new()
                .serialize(&h, &mut expected)
                .unwrap();
            assert_eq!(
                encode_histogram(&h),
                base64::engine::general_purpose::STANDARD.encode(&expected),
                "{values:?}"
            );
        }
    }

    #[test]
    fn encoded_histograms_decode_to_the_same_counts() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in [1_000u64, 2_500, 2_500, 1_000_000, 7_000_000_000] {
            h.record(v).unwrap();
        }
        let text = encode_histogram(&h);
        assert!(text.starts_with("HISTF"), "V2 compressed cookie: {text}");
        let back = decode_histogram(&text, "test").unwrap();
        assert_eq!(back.len(), 5);
        for p in [50.0, 99.0, 100.0] {
            assert_eq!(java_percentile(&back, p), java_percentile(&h, p));
        }
        let err = decode_histogram("not base64!", "x.json: phases[0]").unwrap_err();
        assert!(err.to_string().starts_with("x.json: phases[0]: "), "{err}");
    }

    #[test]
    fn a_header_that_claims_more_counts_than_its_bytes_is_refused() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&V2_COOKIE.to_be_bytes());
        bytes.extend_from_slice(&(1u32 << 31).to_be_bytes());
        bytes.extend_from_slice(&0u32.to_be_bytes());
        bytes.extend_from_slice(&3u32.to_be_bytes());
        bytes.extend_from_slice(&1u64.to_be_bytes());
        bytes.extend_from_slice(&3_600_000_000u64.to_be_bytes());
        bytes.extend_from_slice(&1.0f64.to_be_bytes());
        bytes.extend_from_slice(&[2, 0, 2]);
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        let err = decode_histogram(&text, "a.json").unwrap_err();
        assert!(err.reason.contains("declares"), "{err}");
    }

    #[test]
    fn percentiles_follow_javas_rank_rounding() {
        let mut h = Histogram::<u64>::new(3).unwrap();
        for v in 1..=1000u64 {
            h.record(v).unwrap();
        }
        // 99.9 % of 1000 is rank 999 exactly, not 1000 by roundoff.
        assert_eq!(java_percentile(&h, 99.9), 999);
        assert_eq!(java_percentile(&h, 50.0), 500);
        assert_eq!(java_percentile(&h, 100.0), 1000);
        assert_eq!(java_percentile(&Histogram::<u64>::new(3).unwrap(), 50.0), 0);
    }
}
