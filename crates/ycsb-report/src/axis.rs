//! Axes: round ticks, decades, labels in one style, and the binary unit a
//! byte axis is labelled in.

/// Round tick values covering `lo..=hi`, about `target` of them, at 1, 2
/// or 5 times a power of ten.
pub(crate) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / target.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| span / s <= target as f64)
        .unwrap_or(10.0 * magnitude);
    ticks_every(lo, hi, step)
}

/// Ticks at whole numbers only (counts), about `target` of them.
pub(crate) fn whole_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let ticks = nice_ticks(lo, hi, target);
    match ticks.get(1).zip(ticks.first()) {
        Some((second, first)) if second - first < 1.0 => ticks_every(lo, hi, 1.0),
        _ => ticks,
    }
}

fn ticks_every(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    let first = (lo / step).ceil() * step;
    let mut ticks = Vec::new();
    let mut k = 0.0;
    loop {
        let t = first + k * step;
        if t > hi + step * 1e-9 || ticks.len() > 50 {
            break;
        }
        // Snaps -0.0 and 0.30000000000000004 to clean values.
        ticks.push(if t.abs() < step * 1e-9 { 0.0 } else { t });
        k += 1.0;
    }
    ticks
}

/// The powers of ten from `lo` to `hi`, both powers of ten themselves.
pub(crate) fn decades(lo: f64, hi: f64) -> Vec<f64> {
    let mut t = Vec::new();
    let mut v = lo;
    while v <= hi * 1.000001 && t.len() < 40 {
        t.push(v);
        v *= 10.0;
    }
    t
}

/// The label of a logarithmic axis tick: every decade in one style
/// (1, 10, 100, 1k, 10k, 1M), never `1000` beside `10k`.
pub(crate) fn format_decade(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    // Decades below 1 (0.1, 0.01) keep their decimals.
    let text = if scaled.fract().abs() < 1e-9 {
        format!("{scaled:.0}")
    } else {
        format_value(scaled)
    };
    text + suffix
}

/// A short label: SI suffixes from ten thousand on, at most 3 decimals.
pub fn format_value(v: f64) -> String {
    let a = v.abs();
    let (scaled, suffix) = if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e4 {
        (v / 1e3, "k")
    } else {
        (v, "")
    };
    let mut text = format!("{scaled:.3}");
    while text.contains('.') && (text.ends_with('0') || text.ends_with('.')) {
        text.pop();
    }
    if text == "-0" {
        text = "0".into();
    }
    text + suffix
}

/// The y range, widened so that a flat line sits mid-chart and starting at
/// 0 when the data is non-negative (throughput, CPU, counts).
pub(crate) fn y_range(lo: f64, hi: f64) -> (f64, f64) {
    let lo = if lo >= 0.0 { 0.0 } else { lo };
    if hi - lo <= f64::EPSILON * hi.abs().max(1.0) {
        (lo, if hi == 0.0 { 1.0 } else { hi * 2.0 })
    } else {
        (lo, hi + (hi - lo) * 0.05)
    }
}

/// The binary unit a byte axis whose values reach `largest` is labelled
/// in, and its size in bytes.
pub(crate) fn byte_unit(largest: f64) -> (&'static str, f64) {
    const UNITS: [(&str, f64); 5] = [
        ("TiB", 1_099_511_627_776.0),
        ("GiB", 1_073_741_824.0),
        ("MiB", 1_048_576.0),
        ("KiB", 1024.0),
        ("B", 1.0),
    ];
    UNITS
        .into_iter()
        .find(|(_, size)| largest.abs() >= *size)
        .unwrap_or(("B", 1.0))
}

/// `bytes` in the binary unit that suits it (`3.0 MiB`).
pub fn format_bytes(bytes: f64) -> String {
    if !bytes.is_finite() {
        return "—".into();
    }
    let (unit, size) = byte_unit(bytes);
    if size == 1.0 {
        format!("{bytes:.0} B")
    } else {
        format!("{:.1} {unit}", bytes / size)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_range() {
        assert_eq!(
            nice_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        let t = nice_ticks(0.0, 0.9, 6);
        assert_eq!(t.first(), Some(&0.0));
        assert!((t[1] - 0.2).abs() < 1e-12, "{t:?}");
        let t = nice_ticks(3.0, 47_000.0, 6);
        assert_eq!(t, vec![10_000.0, 20_000.0, 30_000.0, 40_000.0]);
        // Counts never tick at halves.
        assert_eq!(whole_ticks(0.0, 2.1, 6), vec![0.0, 1.0, 2.0]);
    }

    #[test]
    fn values_get_short_labels() {
        assert_eq!(format_value(0.0), "0");
        assert_eq!(format_value(2.5), "2.5");
        assert_eq!(format_value(12_000.0), "12k");
        assert_eq!(format_value(1_500_000.0), "1.5M");
        assert_eq!(format_value(-0.0), "0");
        assert_eq!(format_bytes(3.0 * 1_048_576.0), "3.0 MiB");
        assert_eq!(format_bytes(512.0), "512 B");
        assert_eq!(byte_unit(5e9), ("GiB", 1_073_741_824.0));
    }

    #[test]
    fn decades_are_labelled_in_one_style() {
        assert_eq!(format_decade(1.0), "1");
        assert_eq!(format_decade(1000.0), "1k");
        assert_eq!(format_decade(10_000.0), "10k");
        assert_eq!(format_decade(1e6), "1M");
        assert_eq!(format_decade(0.1), "0.1");
    }
}
