"""The version of linkage (its own module, so that the modules need not import the package)."""

__version__ = "0.1.0"
