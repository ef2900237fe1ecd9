"""The JSON form of an intent match: what fired, every verdict and why, what was injected.
The CLI's ``intent match --json`` and the MCP ``intent_match`` tool both return it."""

from __future__ import annotations

from typing import Any

from clawmem.engine.intents.service import IntentVerdict, MatchReport
from clawmem.engine.json_form import json_form


def verdict_record(v: IntentVerdict) -> dict[str, Any]:
    return {
        "id": v.intent.id,
        "description": v.intent.description,
        "status": v.intent.status,
        "outcome": v.outcome,
        "fires": v.fires,
        "reason": v.reason,
        "reasons": list(v.reasons),
        "matchedKeyword": v.matched_keyword,
        "keywords": [
            {"keyword": k.keyword, "tokens": list(k.tokens), "missing": list(k.missing), "matched": k.matched}
            for k in v.keywords
        ],
        "intent": json_form(v.intent),
        "after": json_form(v.after) if v.after else None,
    }


def match_record(r: MatchReport) -> dict[str, Any]:
    return {
        "prompt": r.prompt,
        "channel": r.channel,
        "sender": r.sender,
        "at": r.at.isoformat(),
        "applied": r.applied,
        "tokens": list(r.tokens),
        "fired": [v.intent.id for v in r.verdicts if v.fires],
        "verdicts": [verdict_record(v) for v in r.verdicts],
        "injected": r.block,
        "injectedChars": r.block_chars,
        "limits": {"maxIntents": r.max_injected, "maxChars": r.max_injected_chars},
        "scannedCandidates": r.scanned,
        "swept": json_form(r.swept),
    }
