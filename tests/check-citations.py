#!/usr/bin/env python3
"""Fails when a citation of a documentation section in the code does not resolve.

Code, scripts and manifests cite the design by file and section name, for example
(docs/architecture.md, "Memory that follows references") or README "Set up". This reads every file
git tracks (but the Markdown itself, images and results), finds each Markdown file name followed
by a quoted section name (with or without a comma between), and checks that the file exists and
has a heading that is, or starts with, the section name. FILE resolves from the repository root when it has a directory part, else beside the
citing file or in its nearest parent directory that has one, else in docs/. README without .md
means the README.md found that way. A section name split across two lines is not checked.
"""
import os
import re
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CITATION = re.compile(r'((?:[\w./-]+/)?[\w-]+\.md|README),? ?\(?"([^"\n]+)"')
SKIP = (".md", ".png", ".json", ".svg", ".zst")


_HEADINGS = {}  # path -> the set of its headings, read once


def headings(path):
    if path not in _HEADINGS:
        found = set()
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = re.match(r"#+ +(.*)", line)
                if m:
                    found.add(m.group(1).strip().strip("`"))
        _HEADINGS[path] = found
    return _HEADINGS[path]


def resolve(cited, citing):
    name = "README.md" if cited == "README" else cited
    if "/" in name:
        path = os.path.join(REPO, name)
        return path if os.path.exists(path) else None
    directory = os.path.dirname(os.path.join(REPO, citing))
    while directory.startswith(REPO):
        path = os.path.join(directory, name)
        if os.path.exists(path):
            return path
        directory = os.path.dirname(directory)
    path = os.path.join(REPO, "docs", name)
    return path if os.path.exists(path) else None


def main():
    files = subprocess.run(["git", "-C", REPO, "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    problems = []
    checked = 0
    for citing in files:
        if citing.endswith(SKIP) or not os.path.isfile(os.path.join(REPO, citing)):
            continue
        with open(os.path.join(REPO, citing), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
        for number, line in enumerate(lines, 1):
            for m in CITATION.finditer(line):
                cited, section = m.group(1), m.group(2).strip()
                if not section or not section[0].isupper():
                    continue  # a quoted value, not a section name
                path = resolve(cited, citing)
                checked += 1
                if path is None:
                    problems.append(f"{citing}:{number}: {cited} does not exist")
                elif not any(h == section or h.startswith(section) for h in headings(path)):
                    problems.append(f"{citing}:{number}: {os.path.relpath(path, REPO)} has no section \"{section}\"")
    for problem in problems:
        print(problem)
    if problems:
        print(f"check-citations: {len(problems)} citations do not resolve")
        return 1
    print(f"check-citations: all {checked} cited sections exist")
    return 0


if __name__ == "__main__":
    sys.exit(main())
