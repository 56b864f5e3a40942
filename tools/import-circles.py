#!/usr/bin/env python3
"""Import circles among the source files of each crate: a file's module
uses another's through `crate::a::b`, `super::x` or `self::x` paths; the
strongly connected components of more than one file are the circles."""
import os, re, sys, collections
root = sys.argv[1] if len(sys.argv) > 1 else "."
crates = {}
for dirpath, dirs, files in os.walk(root):
    dirs[:] = [d for d in dirs if d not in ("target", ".git", ".venv", "bench", "tests")]
    if "Cargo.toml" in files and os.path.isdir(os.path.join(dirpath, "src")):
        crates[dirpath] = os.path.join(dirpath, "src")
def module_of(src, path):
    rel = os.path.relpath(path, src)[:-3].split(os.sep)
    if rel[-1] in ("lib", "main", "mod"): rel = rel[:-1]
    if rel and rel[0] == "bin": return None
    return tuple(rel)
total = 0
for crate, src in sorted(crates.items()):
    mods = {}
    for dp, _, fs in os.walk(src):
        for f in fs:
            if f.endswith(".rs"):
                m = module_of(src, os.path.join(dp, f))
                if m is not None: mods[m] = os.path.join(dp, f)
    edges = collections.defaultdict(set)
    for m, path in mods.items():
        text = open(path).read()
        text = re.sub(r"#\[cfg\(test\)\]\s*mod tests\s*\{.*", "", text, flags=re.S)
        text = re.sub(r"//[^\n]*", "", text)
        def resolve(parts):
            # longest prefix that is a module
            for k in range(len(parts), 0, -1):
                if tuple(parts[:k]) in mods: return tuple(parts[:k])
            return None
        for p in re.findall(r"\bcrate((?:::\w+)+)", text):
            t = resolve(p.strip(":").split("::"))
            if t and t != m and t != (): edges[m].add(t)
        # super:: relative to the file's module (a mod.rs/dir module is its own parent's child)
        for p in re.findall(r"\b((?:super::)+)((?:\w+::)*\w+)", text):
            ups = p[0].count("super")
            base = list(m[:len(m) - ups])
            t = resolve(base + p[1].split("::"))
            if t and t != m and t != () and not (len(t) < len(m) and m[:len(t)] == t): edges[m].add(t)
        # `use super::{a, b}` groups
        for ups, group in re.findall(r"\buse ((?:super::)+)\{([^}]*)\}", text):
            base = list(m[:len(m) - ups.count("super")])
            for name in re.findall(r"(\w+)(?:::|\s*[,}]|$)", group):
                t = resolve(base + [name])
                if t and t != m and t != () and not (len(t) < len(m) and m[:len(t)] == t): edges[m].add(t)
    # Tarjan
    index, low, stack, on, out, n = {}, {}, [], set(), [], [0]
    def strong(v):
        index[v] = low[v] = n[0]; n[0] += 1; stack.append(v); on.add(v)
        for w in edges[v]:
            if w not in index: strong(w); low[v] = min(low[v], low[w])
            elif w in on: low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: out.append(comp)
    sys.setrecursionlimit(10000)
    for v in list(mods):
        if v not in index: strong(v)
    for comp in out:
        total += 1
        print(f"{os.path.relpath(crate, root)}: {len(comp)} files: " + ", ".join(sorted("::".join(c) for c in comp)))
print(f"{total} circles")
