#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""The per-module table of run.sh: OUT/DEV/MODULE.log holds the output of
"run_tests.py -v MODULE" on DEV and OUT/DEV/MODULE.rc its exit status.
Prints ran/pass/fail/error/skip per module for each device, then for each
device every failure and error with the last line of its traceback and the
skip reasons with their counts.

usage: table.py OUT DEV...
"""
import collections
import os
import re
import sys

HEADER = re.compile(r'^(\w+) \((tests\.[\w.]+)\)')
STATUS = re.compile(r'(?:^|\.\.\. )(ok|FAIL|ERROR|expected failure|'
                    r'unexpected success|skipped (.*))$')
BLOCK = re.compile(r'^(FAIL|ERROR): (\w+) \((tests\.[\w.]+)\)')
RAN = re.compile(r'^Ran (\d+) tests? in ')
SUMMARY = re.compile(r'^(OK|FAILED)(?: \((.*)\))?$')


def unquote(reason):
    if len(reason) >= 2 and reason[0] == reason[-1] and reason[0] in '\'"':
        return reason[1:-1]
    return reason


def parse(path, rc):
    """Counts, the failures and errors, and the skips of one log."""
    with open(path, errors='replace') as f:
        lines = f.read().splitlines()
    r = {'ran': None, 'fail': 0, 'error': 0, 'skip': 0, 'pass': 0,
         'rc': rc, 'problems': [], 'skips': [], 'note': ''}
    seen = collections.Counter()
    current = None
    i = 0
    summary = {}
    while i < len(lines):
        line = lines[i]
        m = HEADER.match(line)
        if m and not line.startswith(('FAIL:', 'ERROR:')):
            current = f'{m.group(2)}'.split('.', 1)[-1]
            if m.group(1) in ('setUpClass', 'setUpModule', 'tearDownClass'):
                current = f'{m.group(2).split(".", 1)[-1]}.{m.group(1)}'
        s = STATUS.search(line)
        if s and current:
            word = s.group(1)
            if word.startswith('skipped'):
                seen['skip'] += 1
                r['skips'].append((current, unquote(s.group(2))))
            else:
                seen[word] += 1
        b = BLOCK.match(line)
        if b:
            # The traceback runs from after the dashes (the docstring's
            # first line may come before them) to the next block's ===== or
            # to the dashes before "Ran".
            j = i + 1
            while j < len(lines) and not lines[j].startswith('-' * 20):
                j += 1
            j += 1
            body = []
            while j < len(lines) and not lines[j].startswith(('=' * 20, '-' * 20)):
                body.append(lines[j])
                j += 1
            last = [x for x in body if x.strip()]
            name = b.group(3).split('.', 1)[-1]
            if b.group(2) in ('setUpClass', 'setUpModule', 'tearDownClass'):
                name += '.' + b.group(2)
            r['problems'].append((b.group(1), name,
                                  last[-1].strip() if last else ''))
            i = j
            continue
        m = RAN.match(line)
        if m:
            r['ran'] = int(m.group(1))
        m = SUMMARY.match(line)
        if m and r['ran'] is not None:
            for kv in (m.group(2) or '').split(', '):
                if '=' in kv:
                    k, v = kv.split('=')
                    summary[k] = int(v)
        i += 1
    if r['ran'] is not None and (summary or 'OK' in lines[-3:]):
        r['fail'] = summary.get('failures', 0)
        r['error'] = summary.get('errors', 0)
        r['skip'] = summary.get('skipped', 0)
        xfail = summary.get('expected failures', 0)
        xpass = summary.get('unexpected successes', 0)
        r['pass'] = r['ran'] - r['fail'] - r['error'] - r['skip'] - xfail - xpass
        if xfail or xpass:
            r['note'] = f'xfail {xfail}, xpass {xpass}'
    else:
        # No summary: the process died or timed out.  Count what it said.
        r['ran'] = sum(seen.values())
        r['fail'] = seen['FAIL']
        r['error'] = seen['ERROR']
        r['skip'] = seen['skip']
        r['pass'] = seen['ok']
        r['note'] = ('timed out' if rc in (124, 137) else f'died, status {rc}') + \
            (f' in {current}' if current else ' before any test')
        r['problems'].append(('DIED', current or '-', r['note']))
    return r


def main():
    out, devs = sys.argv[1], sys.argv[2:]
    results = {}
    modules = set()
    for dev in devs:
        d = os.path.join(out, dev)
        for fn in sorted(os.listdir(d)):
            if fn.endswith('.log'):
                mod = fn[:-4]
                modules.add(mod)
                try:
                    with open(os.path.join(d, mod + '.rc')) as f:
                        rc = int(f.read().strip() or -1)
                except (OSError, ValueError):
                    rc = -1
                results[dev, mod] = parse(os.path.join(d, fn), rc)
    cols = ('ran', 'pass', 'fail', 'error', 'skip')
    w = max([len(m) for m in modules] + [6])
    print('# pyverbs tests per module: ' + ' | '.join(
        f'{dev}: ' + '/'.join(cols) for dev in devs))
    print(f'{"module":<{w}} ' + ' | '.join(
        f'{dev:>8} ' + ' '.join(f'{c:>5}' for c in cols) for dev in devs))
    total = {dev: collections.Counter() for dev in devs}
    for mod in sorted(modules):
        cells = []
        notes = []
        for dev in devs:
            r = results.get((dev, mod))
            if r is None:
                cells.append(f'{"":>8} ' + ' '.join(f'{"-":>5}' for _ in cols))
                continue
            for c in cols:
                total[dev][c] += r[c]
            cells.append(f'{"":>8} ' + ' '.join(f'{r[c]:>5}' for c in cols))
            if r['note']:
                notes.append(f'{dev}: {r["note"]}')
        print(f'{mod:<{w}} ' + ' | '.join(cells) +
              (f'   ({"; ".join(notes)})' if notes else ''))
    print(f'{"total":<{w}} ' + ' | '.join(
        f'{"":>8} ' + ' '.join(f'{total[dev][c]:>5}' for c in cols)
        for dev in devs))
    for dev in devs:
        print(f'\n# {dev}: failures and errors')
        for mod in sorted(modules):
            r = results.get((dev, mod))
            for kind, name, why in (r['problems'] if r else []):
                print(f'{kind:5} {name}: {why}')
        print(f'\n# {dev}: skip reasons (count)')
        reasons = collections.Counter()
        where = collections.defaultdict(collections.Counter)
        for mod in sorted(modules):
            r = results.get((dev, mod))
            for name, why in (r['skips'] if r else []):
                reasons[why] += 1
                where[why][mod] += 1
        for why, n in sorted(reasons.items(), key=lambda x: (-x[1], x[0])):
            mods = ', '.join(f'{m} {c}' if c > 1 else m
                             for m, c in sorted(where[why].items()))
            print(f'{n:4}  {why}  [{mods}]')


if __name__ == '__main__':
    main()
