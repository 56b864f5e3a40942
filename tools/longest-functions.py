#!/usr/bin/env python3
"""The longest Rust functions under the given directories (lines from `fn`
to its closing brace; string and char literals and comments ignored):
`tools/longest-functions.py passes lowering runtime src capi python dialects`,
N=30 for more rows."""
import os, re, sys
STR = re.compile(r'"(?:\\.|[^"\\])*"')
CHR = re.compile(r"'(?:\\.|[^'\\])'")
res = []
for root in sys.argv[1:]:
    for dp, ds, fs in os.walk(root):
        ds[:] = [d for d in ds if d not in ('target', '.venv', '.git')]
        for f in fs:
            if not f.endswith('.rs'):
                continue
            p = os.path.join(dp, f)
            lines = open(p).read().split('\n')
            clean = [CHR.sub("''", STR.sub('""', l.split('//')[0] if '"' not in l else l)) for l in lines]
            clean = [re.sub(r'//.*', '', c) for c in clean]
            for i, l in enumerate(lines):
                m = re.match(r'\s*(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?(extern "C"\s+)?fn\s+(\w+)', l)
                if not m:
                    continue
                depth, started, j = 0, False, i
                while j < len(lines):
                    for ch in clean[j]:
                        if ch == '{':
                            depth += 1; started = True
                        elif ch == '}':
                            depth -= 1
                    if started and depth == 0:
                        break
                    if not started and clean[j].rstrip().endswith(';'):
                        break
                    j += 1
                if started:
                    res.append((j - i + 1, p, m.group(6), i + 1))
res.sort(reverse=True)
for r in res[:int(os.environ.get('N', '15'))]:
    print(*r)
