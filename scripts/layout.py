#!/usr/bin/env python3
"""Checks the house rules a reader relies on (issue 38, docs/ARCHITECTURE.md):

- no Rust source file over 1,500 lines (a file past that usually holds two
  things);
- no import cycle between files of different folders of one crate (a
  folder is a module with its children; a cycle across folders means two
  modules each need the other, so neither can be read alone). A module
  naming its own children (declaring, re-exporting, calling them) is
  containment and is not counted; a child using its parent is.

Imports are read from `crate::`, `super::` and `self::` paths in the source
(use lines and inline paths); a path is charged to the file that defines the
longest module prefix it names. Exits non-zero naming each offence.

    scripts/layout.py            # check the workspace
    scripts/layout.py --graph    # also print each crate's file graph
"""
import re
import sys
from pathlib import Path

MAX_LINES = 1500
ROOT = Path(__file__).resolve().parent.parent

SKIP = {"target", ".git", "book"}


def crates():
    for toml in sorted(ROOT.rglob("Cargo.toml")):
        if any(part in SKIP for part in toml.relative_to(ROOT).parts):
            continue
        src = toml.parent / "src"
        if (src / "lib.rs").exists() or (src / "main.rs").exists():
            yield src


def module_of(src, path):
    """The module path of a file: src/a/b.rs -> ('a', 'b'); lib.rs -> ()."""
    rel = path.relative_to(src).with_suffix("")
    parts = rel.parts
    if parts in (("lib",), ("main",)):
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+|::\{)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)*)::\{([^;]*)\};", re.S)


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def strip_tests(text):
    # A file's own `mod tests { ... }` may use anything of its parent.
    m = re.search(r"#\[cfg\(test\)\]\s*mod\s+tests\s*\{", text)
    return text[: m.start()] if m else text


def referenced(module, text):
    """Module paths this file names, absolute from the crate root."""
    out = []

    def absolute(head, rest):
        names = [n for n in rest.split("::") if n]
        if head == "crate":
            base = []
        elif head == "self":
            base = list(module)
        else:  # super, possibly repeated
            base = list(module[:-1])
            while names and names[0] == "super":
                base = base[:-1]
                names = names[1:]
        return tuple(base + names)

    for m in USE_GROUP.finditer(text):
        head, prefix, group = m.groups()
        for item in re.split(r",(?![^{]*\})", group):
            item = item.strip().split(" as ")[0].strip()
            item = re.sub(r"::\{.*", "", item, flags=re.S)
            if item and item != "self":
                out.append(absolute(head, prefix + "::" + item))
            elif item == "self":
                out.append(absolute(head, prefix))
    for m in PATH.finditer(text):
        head, rest = m.groups()
        if rest == "::{":
            continue
        out.append(absolute(head, rest))
    return out


REEXPORT = re.compile(r"\bpub(?:\([a-z]+\))?\s+use\s+([^;]+);", re.S)


def reexports(module, text):
    """Names a file re-exports (`pub use a::b::{C, D}`), to where they come from."""
    out = {}
    for m in REEXPORT.finditer(text):
        body = m.group(1).strip()
        head = body.split("::")[0]
        if head not in ("crate", "super", "self"):
            body = "self::" + body  # a child module of this one
            head = "self"
        for path in referenced(module, "use " + body + ";"):
            out.setdefault(path[-1], path)
        group = re.match(r"(.*?)::\{(.*)\}$", body, re.S)
        if group:
            for item in group.group(2).split(","):
                parts = item.strip().split(" as ")
                name = parts[-1].strip().split("::")[-1]
                if name and name != "self":
                    for path in referenced(module, "use " + group.group(1) + "::" + parts[0].strip() + ";"):
                        out[name] = path
    return out


def check_crate(src, graph_out):
    files = {}
    for path in sorted(src.rglob("*.rs")):
        files[module_of(src, path)] = path
    texts = {m: strip_tests(strip_comments(p.read_text())) for m, p in files.items()}
    exported = {m: reexports(m, t) for m, t in texts.items()}
    edges = {m: set() for m in files}

    def resolve(target, seen=0):
        """The file that defines what `target` names, through re-exports."""
        while target and target not in files:
            owner = target[:-1]
            if owner in files and target[-1] in exported[owner] and seen < 8:
                return resolve(exported[owner][target[-1]], seen + 1)
            target = target[:-1]
        if len(target) < 1 and seen < 8:
            return target
        return target

    for module, text in texts.items():
        for target in referenced(module, text):
            # A name a file re-exports is charged to where it is defined.
            if target and target[:-1] in files and target[-1] in exported[target[:-1]]:
                target = exported[target[:-1]][target[-1]]
            elif len(target) == 1 and () in files and target[0] in exported[()]:
                target = exported[()][target[0]]
            target = resolve(target)
            # A module naming its own children is containment (it declares
            # and re-exports them), not a dependency that could close a loop.
            contained = target[: len(module)] == module
            if target != module and target in files and not contained:
                edges[module].add(target)
    # Tarjan's strongly connected components.
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            scc = []
            while True:
                w = stack.pop()
                on.discard(w)
                scc.append(w)
                if w == v:
                    break
            sccs.append(scc)

    sys.setrecursionlimit(10000)
    for v in files:
        if v not in index:
            visit(v)
    problems = []
    for scc in sccs:
        if len(scc) < 2:
            continue
        folders = {files[m].parent for m in scc}
        if len(folders) > 1:
            names = sorted(str(files[m].relative_to(ROOT)) for m in scc)
            problems.append("import cycle across folders: " + " <-> ".join(names))
    if graph_out:
        for m in sorted(edges):
            print(f"{files[m].relative_to(ROOT)} -> " + ", ".join(
                sorted(str(files[t].relative_to(ROOT)) for t in edges[m])))
    return problems


def main():
    graph = "--graph" in sys.argv
    problems = []
    for path in sorted(ROOT.rglob("*.rs")):
        if any(part in SKIP for part in path.relative_to(ROOT).parts):
            continue
        lines = sum(1 for _ in path.open())
        if lines > MAX_LINES:
            problems.append(f"{path.relative_to(ROOT)}: {lines} lines, over {MAX_LINES}")
    for src in crates():
        problems.extend(check_crate(src, graph))
    for p in problems:
        print(p)
    if problems:
        print(f"layout: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print("layout: every file under %d lines, no import cycle across folders" % MAX_LINES)
    return 0


if __name__ == "__main__":
    sys.exit(main())
