//! Latency distributions: each run's cumulative distribution of one
//! operation's latency from the HdrHistogram its export carries (its
//! listed percentiles when it has none), with the intended latency's
//! beside it where a target rate was set.

use ycsb_results::SectionReport;

use crate::phase::Family;
use crate::style::Dash;
use crate::svg::Chart;

/// CDF points (µs, percentile) from an export's base64 V2 HdrHistogram of
/// nanosecond latencies: dense in the tail, where engines differ.
pub fn histogram_cdf(text: &str) -> Option<Vec<(f64, f64)>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text.trim())
        .ok()?;
    let h: hdrhistogram::Histogram<u64> = hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut bytes.as_slice())
        .ok()?;
    if h.is_empty() {
        return None;
    }
    let mut quantiles: Vec<f64> = (0..=36).map(|i| f64::from(i) * 0.025).collect();
    // 0.9 onwards: equal steps in the number of nines, up to 99.999%.
    quantiles.extend((1..=60).map(|k| 1.0 - 0.1 * 10f64.powf(-f64::from(k) / 15.0)));
    quantiles.push(1.0);
    let mut points = vec![(h.min() as f64 / 1000.0, 0.0)];
    points.extend(
        quantiles
            .iter()
            .map(|&q| (h.value_at_quantile(q) as f64 / 1000.0, 100.0 * q)),
    );
    Some(points)
}

/// A section's CDF: from its histogram, else from its listed percentiles
/// between its minimum and maximum.
fn section_cdf(section: &SectionReport) -> Vec<(f64, f64)> {
    if let Some(points) = section.histogram.as_deref().and_then(histogram_cdf) {
        return points;
    }
    // Exports before nanoseconds were kept have whole microseconds.
    let us = |ns: u64, us: u64| {
        if ns > 0 {
            ns as f64 / 1000.0
        } else {
            us as f64
        }
    };
    let mut points = vec![(us(section.min_ns, section.min_us), 0.0)];
    points.extend(
        section
            .percentiles
            .iter()
            .map(|e| (us(e.ns, e.us), e.percentile)),
    );
    points.push((us(section.max_ns, section.max_us), 100.0));
    points
}

/// The latency distribution of `op`, per run its service time (solid)
/// and its intended latency (dashed) where measured.
pub(crate) fn family(op: &str) -> Family<'_> {
    Family {
        chart: Chart::new(
            format!("{op} latency distribution"),
            "latency (µs)",
            "percentile",
        )
        .with_log_x()
        .with_y_max(100.0),
        draw: Box::new(move |_, p, look| {
            let of = |intended: bool| {
                let name = if intended {
                    format!("Intended-{op}")
                } else {
                    op.to_string()
                };
                p.sections
                    .iter()
                    .find(|s| s.name == name && s.intended == intended && s.operations > 0)
            };
            let Some(service) = of(false) else {
                // A phase still running (the live view) has its rows but
                // not yet its final figures.
                let running = p.operations == 0 && p.series().iter().any(|r| r.operations > 0);
                return Err(if running {
                    "the phase is still running: its distribution comes with its final figures"
                } else {
                    "no operation of its kind completed"
                }
                .into());
            };
            let mut series = vec![look.series("", section_cdf(service), Dash::Solid)];
            if let Some(intended) = of(true) {
                series.push(look.series("intended", section_cdf(intended), Dash::Dashed));
            }
            Ok(series)
        }),
    }
}

#[cfg(test)]
mod tests {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer as _, V2DeflateSerializer};

    #[test]
    fn cdf_from_an_exported_histogram() {
        // 1..=1000 µs uniformly, in nanoseconds, encoded as ycsb exports it.
        let mut h = hdrhistogram::Histogram::<u64>::new(3).unwrap();
        for us in 1..=1000u64 {
            h.record(us * 1000).unwrap();
        }
        let mut bytes = Vec::new();
        V2DeflateSerializer::new()
            .serialize(&h, &mut bytes)
            .unwrap();
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        let points = super::histogram_cdf(&text).unwrap();
        assert!(
            (points[0].0 - 1.0).abs() < 0.01 && points[0].1 == 0.0,
            "{:?}",
            points[0]
        );
        let median = points.iter().find(|p| p.1 == 50.0).unwrap();
        assert!((median.0 - 500.0).abs() < 1.0, "{median:?}");
        let last = points.last().unwrap();
        assert!((last.0 - 1000.0).abs() < 1.0 && last.1 == 100.0, "{last:?}");
        assert!(
            points
                .windows(2)
                .all(|w| w[0].0 <= w[1].0 && w[0].1 <= w[1].1),
            "monotone"
        );
        assert!(super::histogram_cdf("not base64!").is_none());
    }
}
