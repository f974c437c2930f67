"""The names options take live in one place, `linkage.options` (issue 15)."""

from __future__ import annotations

import typing

import pytest

import linkage.golden  # registers GoldenRecord
import linkage.guards
import linkage.options as options
import linkage.text  # noqa: F401  (registers the text comparisons; blockers: linkage.blocking)
from linkage._schema import Configurable
from linkage.errors import RulesError
from linkage.guards import MaxClusterSize


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub} | _subclasses(sub)
    return out


def _literals(hint) -> list:
    found = [hint] if typing.get_origin(hint) is typing.Literal else []
    for arg in typing.get_args(hint):
        found += _literals(arg)
    return found


def test_every_option_of_the_rules_is_a_literal_of_linkage_options():
    aliases = [getattr(options, name) for name in options.__all__]
    inline = []
    seen = 0
    for cls in _subclasses(Configurable):
        if not cls.__module__.startswith("linkage."):
            continue  # a class a test defined
        for argument, hint in typing.get_type_hints(cls.__init__).items():
            for literal in _literals(hint):
                seen += 1
                if not any(literal is alias or literal == alias for alias in aliases):
                    inline.append(f"{cls.__module__}.{cls.__name__}({argument}: {literal})")
    assert seen >= 10  # the keeper policies, survivorship, shingles, phonetic codes, scorers ...
    assert not inline, ("declare these names in linkage/options.py and annotate with the "
                        "alias: " + "; ".join(inline))


def test_a_name_outside_the_literal_is_refused_with_the_names():
    with pytest.raises(RulesError) as err:
        MaxClusterSize(3, action="drop")
    for name in typing.get_args(options.OversizedAction):
        assert repr(name) in str(err.value)
