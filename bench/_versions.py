"""The versions of the libraries that move a benchmark's figures, for every results file.

A float summed in another order moves a tie or a threshold, and a library's own speed moves a
timing: the same commit gave Amazon-Google an F1 of 0.6769 in one environment and 0.6631 in
another (bench/GENERALIZATION.md, stop 40). Each results file names the versions it was made
with (`packages_line`)."""

from __future__ import annotations

import platform
from importlib.metadata import PackageNotFoundError, version

PACKAGES = ("numpy", "scipy", "pandas", "pyarrow", "scikit-learn", "rapidfuzz", "jellyfish",
            "torch", "sentence-transformers")


def package_versions(packages: tuple[str, ...] = PACKAGES) -> str:
    """'python 3.11.7, numpy 2.4.6, ...': this environment's versions of `packages`."""
    found = [f"python {platform.python_version()}"]
    for name in packages:
        try:
            found.append(f"{name} {version(name)}")
        except PackageNotFoundError:
            found.append(f"{name} absent")
    return ", ".join(found)


def packages_line(packages: tuple[str, ...] = PACKAGES) -> str:
    """The results file's line naming them."""
    return f"Packages: {package_versions(packages)} (figures can move with them)."
