"""The changed-fact rule's alternatives for the retrieval benches (bench/locomo.py,
bench/fixture_queries.py): on or off, and the two thresholds of engine/search/versions.py, so
each alternative is measured the same way everywhere (bench/RESULTS.md, "A changed fact")."""

from __future__ import annotations

import argparse

from clawmem.engine.search import versions


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--versions", choices=("on", "off"), default=None, help="search.newer_version_first")
    parser.add_argument("--version-overlap", type=float, default=None, help="versions.VERSION_OVERLAP (a sweep)")
    parser.add_argument("--version-relevance", type=float, default=None, help="versions.VERSION_RELEVANCE (a sweep)")
    parser.add_argument("--version-words", choices=("all", "content"), default=None, help="versions.VERSION_WORDS")
    parser.add_argument("--version-weights", choices=("idf", "flat"), default=None, help="versions.VERSION_WEIGHTS")
    parser.add_argument("--version-bring-in", action="store_true", help="versions.BRING_IN: pull newer versions in")


def apply(args: argparse.Namespace, search: dict[str, object]) -> str:
    """Set the rule for this run (settings in ``search``, thresholds on the module); its label."""
    if args.versions is not None:
        search["newer_version_first"] = args.versions == "on"
    if args.version_overlap is not None:
        versions.VERSION_OVERLAP = args.version_overlap
    if args.version_relevance is not None:
        versions.VERSION_RELEVANCE = args.version_relevance
    if args.version_words is not None:
        versions.VERSION_WORDS = args.version_words
    if args.version_weights is not None:
        versions.VERSION_WEIGHTS = args.version_weights
    if args.version_bring_in:
        versions.BRING_IN = True
    on = search.get("newer_version_first", True)
    rule = f"overlap {versions.VERSION_OVERLAP:g}, relevance {versions.VERSION_RELEVANCE:g}, bring in {versions.BRING_IN}, words {versions.VERSION_WORDS}, weights {versions.VERSION_WEIGHTS}"
    return f"versions {'on' if on else 'off'} ({rule})"
