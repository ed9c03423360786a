#!/usr/bin/env python3
"""Turns the criterion results of `cargo bench -p breaker-benches` into the
tables of BENCHMARKS.md (printed) and the chart beside it (benchmarks.svg).

Usage: python3 benches/report.py [target/criterion] [BENCHMARKS.svg path]
"""
import glob
import json
import os
import sys
from html import escape

GROUPS = ['floor', 'closed_count_window', 'closed_time_window', 'closed_with_timeout',
          'open_rejection', 'half_open', 'contended_2_threads', 'tower layer, closed']


def load(root):
    rows = {}
    for path in glob.glob(os.path.join(root, '*', '*', 'new', 'benchmark.json')):
        bench = json.load(open(path))
        if bench['group_id'] not in GROUPS:
            continue
        est = json.load(open(os.path.join(os.path.dirname(path), 'estimates.json')))
        median = est['median']
        rows.setdefault(bench['group_id'], []).append(
            (bench['function_id'], median['point_estimate'],
             median['confidence_interval']['lower_bound'], median['confidence_interval']['upper_bound']))
    for group in rows.values():
        group.sort(key=lambda row: ('ours' not in row[0], row[1]))
    return rows


def floor_line(rows):
    """The machine's floor in this run, written under every table so that no figure is read
    without the cost of an atomic on the machine that measured it."""
    floor = {name: med for name, med, _, _ in rows.get('floor', [])}
    atomic, bare = floor.get('AtomicU64::fetch_add'), floor.get('bare call')
    if atomic is None or bare is None:
        return ''
    return f'\nFloor in this run: bare call {bare:.2f} ns, uncontended `fetch_add` {atomic:.2f} ns.'


def tables(rows):
    out = []
    under = floor_line(rows)
    for group in GROUPS:
        if group not in rows:
            continue
        out.append(f'\n### {group}\n\n| function | median ns/call | 95% interval |\n|---|---:|---:|')
        for name, med, lo, hi in rows[group]:
            out.append(f'| {name} | {med:.2f} | {lo:.2f} – {hi:.2f} |')
        if group != 'floor' and under:
            out.append(under)
    return '\n'.join(out)


def chart(rows, path):
    width, bar_h, gap, left = 1040, 16, 4, 380
    shown = [g for g in GROUPS if g in rows and g != 'floor']
    height = 40 + sum(30 + len(rows[g]) * (bar_h + gap) for g in shown)
    top = max(med for g in shown for _, med, _, _ in rows[g])
    scale = (width - left - 90) / top
    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">',
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="10" y="22" font-size="16">ns per call, median (shorter is faster); blue: this library</text>']
    y = 40
    for group in shown:
        svg.append(f'<text x="10" y="{y + 14}" font-weight="bold">{escape(group)}</text>')
        y += 22
        for name, med, _, _ in rows[group]:
            colour = '#1e5ac8' if 'ours' in name else '#999999'
            svg.append(f'<text x="{left - 6}" y="{y + 12}" text-anchor="end">{escape(name)}</text>')
            svg.append(f'<rect x="{left}" y="{y}" width="{max(med * scale, 1):.1f}" height="{bar_h}" fill="{colour}"/>')
            svg.append(f'<text x="{left + med * scale + 4:.1f}" y="{y + 12}">{med:.1f}</text>')
            y += bar_h + gap
        y += 8
    svg.append('</svg>')
    open(path, 'w').write('\n'.join(svg) + '\n')


if __name__ == '__main__':
    root = sys.argv[1] if len(sys.argv) > 1 else 'target/criterion'
    svg = sys.argv[2] if len(sys.argv) > 2 else 'benchmarks.svg'
    rows = load(root)
    print(tables(rows))
    chart(rows, svg)
    print(f'\nchart: {svg}')
