#!/usr/bin/env python3
"""Points the released chart and kustomize tree at the released image, by digest (cmd/release.sh).

Usage: stamp.py values FILE REPOSITORY DIGEST          the chart's values.yaml: image.repository
                                                        and image.digest
       stamp.py kustomization FILE REPOSITORY DIGEST   a kustomization.yaml: the `restarter`
                                                        images entry's newName and digest (its
                                                        newTag goes)

Edits the file in place, as text, so that its comments stay; fails (exit 1, saying why) when the
file does not have the expected entry, rather than releasing a chart or a tree that still names
the development image.
"""

import re
import sys

DIGEST = re.compile(r"^sha256:[0-9a-f]{64}$")
REPOSITORY = re.compile(r"^[a-z0-9.-]+(:[0-9]+)?(/[a-z0-9._-]+)+$")


def stamp_values(text, repository, digest):
    block = re.search(r"^image:\n(?:[ #].*\n|\n)*", text, re.M)
    if not block:
        raise ValueError("no top-level image: block")
    image = block.group(0)
    image, repositories = re.subn(r"^  repository: .*$", "  repository: " + repository, image, count=1, flags=re.M)
    image, digests = re.subn(r"^  digest: .*$", f'  digest: "{digest}"', image, count=1, flags=re.M)
    if repositories != 1 or digests != 1:
        raise ValueError("the image: block lacks repository: or digest:")
    return text.replace(block.group(0), image, 1)


def stamp_kustomization(text, repository, digest):
    entry = re.compile(r"^(  - name: restarter\n)    newName: .*\n    newTag: .*\n", re.M)
    text, count = entry.subn(lambda m: f"{m.group(1)}    newName: {repository}\n    digest: {digest}\n", text, count=1)
    if count != 1:
        raise ValueError("no images entry `- name: restarter` with newName and newTag")
    return text


def main(argv):
    if len(argv) != 5 or argv[1] not in ("values", "kustomization"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    kind, path, repository, digest = argv[1:]
    if not DIGEST.match(digest) or not REPOSITORY.match(repository):
        print(f"stamp.py: not a repository and a sha256 digest: {repository} {digest}", file=sys.stderr)
        return 2
    with open(path, encoding="utf-8") as file:
        text = file.read()
    try:
        text = (stamp_values if kind == "values" else stamp_kustomization)(text, repository, digest)
    except ValueError as error:
        print(f"stamp.py: {path}: {error}", file=sys.stderr)
        return 1
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
