#!/usr/bin/env python3
"""Writes licenses.tsv: every paragraph of the license texts Debian ships in
/usr/share/common-licenses (package base-files), one row per paragraph:
license, paragraph number, text (whitespace collapsed). Real English text
that compresses like prose, small enough for tests and examples.

Usage: python3 make_licenses.py > licenses.tsv
"""
import os
import re

DIR = "/usr/share/common-licenses"
print("license\tparagraph\ttext")
for name in sorted(os.listdir(DIR)):
    path = os.path.join(DIR, name)
    if os.path.islink(path) or not os.path.isfile(path):
        continue
    with open(path, encoding="utf-8", errors="replace") as f:
        paragraphs = re.split(r"\n\s*\n", f.read())
    n = 0
    for p in paragraphs:
        text = " ".join(p.split())
        if text:
            print(f"{name}\t{n}\t{text}")
            n += 1
