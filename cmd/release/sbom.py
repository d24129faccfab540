#!/usr/bin/env python3
"""The SBOM of one restarter image: a CycloneDX 1.6 JSON document (cmd/release.sh attaches it to
the image as a cosign attestation of type cyclonedx; docs/release.md "On a tag: what a maintainer runs", step 3).

Usage: sbom.py --rootfs DIR --version V --platform linux/ARCH --revision COMMIT --created RFC3339
               [--image-digest sha256:...] --out FILE

It lists what the image is made of, read from the image's own files (DIR: its root filesystem, as
`buildah mount` shows it):
  - every Debian package installed in the image (its dpkg database: name, version, architecture,
    source package), each with its package URL (pkg:deb/debian/NAME@VERSION?arch=..&distro=..);
  - restarter itself, the image's one application (/usr/local/bin/restarter), and the packages
    whose shared libraries it links: its ELF NEEDED entries (readelf, any architecture), each
    resolved to the package whose file list holds that library, as dependencies of restarter.
A library the binary needs that no package provides is an error: the image could not run it.
The document is checked against CycloneDX's 1.6 JSON schema before it is written. The document is
a function of the image's files and the arguments alone (no time of its own, a serial number
derived from the image), so the same image gives the same SBOM.

The library, cyclonedx-python-lib, is CycloneDX's own (PyPI; cmd/release/requirements.txt pins
it); cmd/release.sh runs this in a virtual environment it makes.
"""

import argparse
import hashlib
import os
import re
import subprocess
import sys
import uuid
from datetime import datetime

from cyclonedx.model import Property
from cyclonedx.model.bom import Bom, BomMetaData
from cyclonedx.model.component import Component, ComponentType
from cyclonedx.model.contact import OrganizationalEntity
from cyclonedx.output.json import JsonV1Dot6
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
from packageurl import PackageURL

BINARY = "/usr/local/bin/restarter"
# Where the dynamic loader looks for a NEEDED library in a Debian image (ld.so.conf.d's
# multiarch directories and the defaults; /lib is /usr/lib in a merged-/usr image).
LIBRARY_DIRS = ("/usr/lib/{triplet}", "/lib/{triplet}", "/usr/lib", "/lib")
TRIPLETS = {"amd64": "x86_64-linux-gnu", "arm64": "aarch64-linux-gnu"}


def fail(message):
    print(f"sbom.py: {message}", file=sys.stderr)
    sys.exit(1)


def read_dpkg_status(rootfs):
    """The installed packages of the image: a list of dicts (Package, Version, Architecture, Source)."""
    path = os.path.join(rootfs, "var/lib/dpkg/status")
    try:
        with open(path, encoding="utf-8") as status:
            text = status.read()
    except OSError as error:
        fail(f"cannot read the image's dpkg database {path}: {error}")
    packages = []
    for stanza in text.split("\n\n"):
        fields = {}
        for line in stanza.splitlines():
            match = re.match(r"^([A-Za-z0-9-]+):\s?(.*)$", line)
            if match:
                fields[match.group(1)] = match.group(2)
        if fields.get("Status", "").endswith(" installed") and "Package" in fields:
            packages.append(fields)
    if not packages:
        fail(f"no installed package in {path}")
    return packages


def package_files(rootfs, package):
    """The paths a package installed (its dpkg file list), as written there."""
    info = os.path.join(rootfs, "var/lib/dpkg/info")
    for name in (f"{package['Package']}:{package['Architecture']}.list", f"{package['Package']}.list"):
        path = os.path.join(info, name)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as listing:
                return [line.rstrip("\n") for line in listing if line.strip()]
    return []


def needed_libraries(path):
    """The ELF NEEDED entries of the binary at path."""
    try:
        out = subprocess.run(["readelf", "--dynamic", "--wide", path], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        fail(f"readelf --dynamic {path} failed: {error}")
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out)
    if not needed:
        fail(f"{path} has no NEEDED entries: not a dynamically linked binary")
    return needed


def purl_of(package, distro):
    name = package["Package"]
    qualifiers = {"arch": package["Architecture"], "distro": distro}
    source = package.get("Source")
    if source:
        # "Source: name (version)" when the source version differs.
        qualifiers["upstream"] = source.replace(" (", "@").rstrip(")")
    return PackageURL(type="deb", namespace="debian", name=name, version=package["Version"], qualifiers=qualifiers)


def os_release(rootfs):
    fields = {}
    for candidate in ("etc/os-release", "usr/lib/os-release"):
        path = os.path.join(rootfs, candidate)
        if os.path.exists(path):
            with open(path, encoding="utf-8") as release:
                for line in release:
                    key, _, value = line.strip().partition("=")
                    fields[key] = value.strip('"')
            break
    return fields


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rootfs", required=True)
    parser.add_argument("--version", required=True)
    parser.add_argument("--platform", required=True, choices=["linux/amd64", "linux/arm64"])
    parser.add_argument("--revision", required=True)
    parser.add_argument("--created", required=True, help="the image's creation time, RFC 3339")
    parser.add_argument("--image-digest", default="")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    arch = args.platform.split("/")[1]
    rootfs = os.path.abspath(args.rootfs)

    release = os_release(rootfs)
    distro = f"{release.get('ID', 'debian')}-{release.get('VERSION_ID', '')}".rstrip("-")
    packages = read_dpkg_status(rootfs)
    components = {}
    for package in sorted(packages, key=lambda p: (p["Package"], p["Architecture"])):
        purl = purl_of(package, distro)
        components[(package["Package"], package["Architecture"])] = Component(
            type=ComponentType.LIBRARY if package["Package"].startswith("lib") else ComponentType.APPLICATION,
            name=package["Package"],
            version=package["Version"],
            purl=purl,
            bom_ref=purl.to_string(),
            supplier=OrganizationalEntity(name="Debian"),
        )

    # Which package holds each library the binary needs.
    triplet = TRIPLETS[arch]
    dirs = [d.format(triplet=triplet) for d in LIBRARY_DIRS]
    owner = {}
    for package in packages:
        for path in package_files(rootfs, package):
            owner.setdefault(path, package)
            # A merged /usr: the list may say /lib/... where the file is /usr/lib/..., or the other way.
            if path.startswith("/lib/"):
                owner.setdefault("/usr" + path, package)
            elif path.startswith("/usr/lib/"):
                owner.setdefault(path[len("/usr"):], package)
    binary = os.path.join(rootfs, BINARY.lstrip("/"))
    linked = []
    for library in needed_libraries(binary):
        package = next((owner[f"{d}/{library}"] for d in dirs if f"{d}/{library}" in owner), None)
        if package is None:
            fail(f"{BINARY} needs {library}, which no package of the image provides")
        linked.append((library, components[(package["Package"], package["Architecture"])]))

    restarter_purl = PackageURL(
        type="oci" if args.image_digest else "generic",
        name="restarter",
        version=args.image_digest or args.version,
        qualifiers={"arch": arch},
    )
    restarter = Component(
        type=ComponentType.APPLICATION,
        name="restarter",
        version=args.version,
        purl=restarter_purl,
        bom_ref="restarter",
        description="Rolls Kubernetes workloads when the ConfigMaps and Secrets they use change",
        properties=[Property(name="restarter:revision", value=args.revision),
                    Property(name="restarter:platform", value=args.platform),
                    Property(name="restarter:binary", value=BINARY)]
        + [Property(name="restarter:links", value=f"{library} ({component.name})") for library, component in linked],
    )

    seed = f"restarter {args.version} {args.platform} {args.revision} {args.image_digest}"
    bom = Bom(
        serial_number=uuid.UUID(bytes=hashlib.sha256(seed.encode()).digest()[:16], version=4),
        metadata=BomMetaData(component=restarter, timestamp=datetime.fromisoformat(args.created.replace("Z", "+00:00"))),
    )
    bom.metadata.tools.components.clear()
    for component in components.values():
        bom.components.add(component)
    bom.register_dependency(restarter, [component for _, component in linked])
    for component in components.values():
        bom.register_dependency(component, [])

    text = JsonV1Dot6(bom).output_as_string(indent=2)
    problem = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if problem is not None:
        fail(f"the SBOM does not validate against CycloneDX 1.6: {problem}")
    with open(args.out, "w", encoding="utf-8") as out:
        out.write(text + "\n")
    print(f"{args.out}: {len(components)} packages, restarter links "
          + ", ".join(f"{library} ({component.name})" for library, component in linked))


if __name__ == "__main__":
    main()
