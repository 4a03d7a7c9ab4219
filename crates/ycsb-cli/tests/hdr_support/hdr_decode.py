"""Decodes HdrHistogram interval logs with the independent `hdrhistogram`
package (PyPI) and prints, per log, the total count and the values at the
given percentiles as JSON: {"READ": {"count": n, "max": v, "percentiles": {"99.0": v}}}.

Percentile rank as Java YCSB/HdrHistogram: the smallest recorded value that
ceil(p/100 * n) values do not exceed, reported as the highest value
equivalent to it (its bucket's top), as HdrHistogram's getValueAtPercentile.
Usage: hdr_decode.py PERCENTILES(comma-separated) FILE.hdr...
   or: hdr_decode.py PERCENTILES --exports PHASE FILE.json...
       (sums each section's base64 histogram of PHASE over the JSON exports)
"""
import json
import os
import sys
from fractions import Fraction
import math

from hdrh.histogram import HdrHistogram
from hdrh.log import HistogramLogReader

HIGHEST = 3_600 * 10**9  # one hour in nanoseconds, above any test latency


def figures(total, percentiles, intervals):
    n = total.get_total_count()
    values = {}
    for p in percentiles:
        rank = max(1, math.ceil(Fraction(p) * n / 100))
        seen = 0
        value = 0
        for item in total.get_recorded_iterator():
            seen += item.count_at_value_iterated_to
            if seen >= rank:
                value = total.get_highest_equivalent_value(item.value_iterated_to)
                break
        values[p] = value
    return {
        "count": n,
        "intervals": intervals,
        "max": total.get_max_value(),
        "percentiles": values,
    }


def main():
    percentiles = [p for p in sys.argv[1].split(",") if p]
    out = {}
    if sys.argv[2] == "--exports":
        phase = sys.argv[3]
        totals = {}
        for path in sys.argv[4:]:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
            for ph in doc["phases"]:
                if ph["phase"] != phase:
                    continue
                for section in ph["sections"]:
                    decoded = HdrHistogram.decode(section["histogram"])
                    total = totals.setdefault(section["name"], HdrHistogram(1, HIGHEST, 3))
                    total.add(decoded)
        for name, total in totals.items():
            out[name] = figures(total, percentiles, len(sys.argv) - 4)
        json.dump(out, sys.stdout)
        return
    for path in sys.argv[2:]:
        reference = HdrHistogram(1, HIGHEST, 3)
        reader = HistogramLogReader(path, reference)
        total = HdrHistogram(1, HIGHEST, 3)
        intervals = 0
        while True:
            interval = reader.get_next_interval_histogram()
            if interval is None:
                break
            intervals += 1
            total.add(interval)
        name = os.path.basename(path)[: -len(".hdr")]
        out[name] = figures(total, percentiles, intervals)
    json.dump(out, sys.stdout)


main()
