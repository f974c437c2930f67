"""Engines that run the same rules: the local one lives in `linkage.pipeline`; `spark` here."""
