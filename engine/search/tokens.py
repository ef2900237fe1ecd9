"""Query tokens, CJK detection and keyword extraction for the keyword leg.

Tokens follow the spec: runs of letters, digits and ``_`` (after NFC, so composed accents stay
inside a word). Keyword extraction drops stop words and short or numeric noise, and — where
clawmem goes beyond OpenClaw — splits a CJK run at function words and offers its sub-phrases,
so a natural question with no spaces ("为什么没订湖景房") still reaches a note that contains
one of its phrases (湖景房). OpenClaw searches the whole run as one trigram phrase and finds
nothing.
"""

from __future__ import annotations

import re
import unicodedata

_TOKEN = re.compile(r"[^\W]+", re.UNICODE)
_SPLIT = re.compile(r"[\s\W]+", re.UNICODE)

_CJK_RANGES = (
    (0x3040, 0x30FF),  # hiragana, katakana
    (0x3131, 0x3163),  # hangul compatibility jamo
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # hangul syllables
    (0xF900, 0xFAFF),  # compatibility ideographs
    (0x20000, 0x3134F),  # supplementary ideographs
)


def is_cjk_char(ch: str) -> bool:
    o = ord(ch)
    if o < 0x3040:  # every Latin, Cyrillic, Greek … letter: one comparison (this runs per letter)
        return False
    return any(lo <= o <= hi for lo, hi in _CJK_RANGES)


# The same ranges as one character class: ``has_cjk`` runs on every candidate's concepts and text.
_CJK_CHAR = re.compile("[" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in _CJK_RANGES) + "]")


def has_cjk(text: str) -> bool:
    return _CJK_CHAR.search(text) is not None


def nfc(text: str) -> str:
    return unicodedata.normalize("NFC", text)


def query_tokens(query: str) -> list[str]:
    """``[\\p{L}\\p{N}_]+`` tokens of the NFC query, case kept (FTS5 folds case itself)."""
    seen: dict[str, None] = {}
    for tok in _TOKEN.findall(nfc(query)):
        seen.setdefault(tok, None)
    return list(seen)


def content_tokens(query: str) -> list[str]:
    """``query_tokens`` without stop words and one- or two-letter Latin words (all of them
    when nothing else is left), as ``extract_keywords`` leaves them out.

    The calibrated keyword leg ANDs these: "when did Gina go to a dance class" asks FTS5 for
    chunks with gina, dance and class, not for ones that also hold "when", "did" and "go" —
    which few chunks do, and which cost the most to match and rank (every stop word's
    document list is scanned for its BM25 weight; a two-letter word is a substring scan).
    Short words still count in the coverage score ("UK", "DB" are ``query_concepts``).
    """
    tokens = query_tokens(query)
    content = [t for t in tokens if not _not_a_search_word(t.lower())]
    return content or tokens


def _not_a_search_word(word: str) -> bool:
    """A lowercased stop word, or a one- or two-letter Latin word: never ANDed nor probed."""
    return word in STOP_WORDS or (word.isascii() and len(word) < 3)


def lower_tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(nfc(text))]


# A compact English stop list plus the other languages' most common function words; enough
# to keep "why did the deploy fail" from probing "why", "did" and "the".
STOP_WORDS = frozenset(
    """
a about above after again against ain all also am an and any anyone anything are aren as at be
because been before being below between both but by can com como con could couldn da das de del did
didn do does doesn doing don done dos down during e each el else em en es ever everything few find
foi for from fue further get got had has hasn have haven having he her here hers herself him himself
his how i if in into is isn it its itself just know la las let like ll los make many mas may me
might more most much must my myself más na nas need never no nor nos not now o of off on once only
or os other ought our ours ourselves out over own para pero please por que re really remember same
say see sem ser shall she should shouldn show sin so some someone something son still such são tell
than that the their theirs them themselves then there these they thing things this those though
through to told too um uma umas un una unas under unos uns until up upon us ve very want was wasn we
were weren what when where which while who whom whose why will with won would wouldn y yes yet you
your yours yourself yourselves é
""".split()
)

# Chinese function words, longest first (used to split a CJK run into content pieces).
ZH_FUNCTION_WORDS = tuple(
    sorted(
        """
为什么 怎么样 是不是 有没有 能不能 要不要 会不会 为何 什么 怎么 怎样 如何 哪里 哪儿 哪个 哪些 多少 我们
你们 他们 她们 它们 咱们 自己 这个 那个 这些 那些 这里 那里 这样 那样 一下 一些 一个 还是 或者 已经
现在 时候 因为 所以 但是 而且 然后 如果 虽然 可以 应该 需要 知道 告诉 记得 请问 关于 的 了 吗 呢 吧
啊 呀 么 嘛 是 在 和 与 跟 就 都 也 还 又 要 会 能 没 不 把 被 给 让 对 从 到 向 我 你 他
她 它 请 有 得 地 着 过
""".split(),
        key=len,
        reverse=True,
    )
)

JA_PARTICLES = ("から", "まで", "より", "は", "が", "を", "に", "へ", "と", "で", "の", "も", "や", "か", "ね", "よ")


def _cjk_pieces(run: str) -> list[str]:
    """Split a CJK run at function words; keep the content pieces in order."""
    pieces: list[str] = []
    current = ""
    i = 0
    while i < len(run):
        for word in ZH_FUNCTION_WORDS:
            if run.startswith(word, i):
                if current:
                    pieces.append(current)
                current = ""
                i += len(word)
                break
        else:
            current += run[i]
            i += 1
    if current:
        pieces.append(current)
    return pieces


def _cjk_terms(run: str, limit: int) -> list[str]:
    """Sub-phrases of a CJK run, most specific first: whole pieces, then their trigrams, bigrams."""
    pieces = _cjk_pieces(run) or [run]
    whole = [p for p in pieces if len(p) >= 2]
    trigrams = [p[i : i + 3] for p in pieces if len(p) > 3 for i in range(len(p) - 2)]
    bigrams = [p[i : i + 2] for p in pieces if len(p) > 2 for i in range(len(p) - 1)]
    out: dict[str, None] = {}
    for term in (*whole, *trigrams, *bigrams):
        out.setdefault(term, None)
        if len(out) >= limit:
            break
    return list(out)


_CJK_CLASS = "\u3040-\u30ff\u3131-\u3163\u3400-\u9fff\uac00-\ud7af\uf900-\ufaff"
_MIXED = re.compile(f"[^\\W{_CJK_CLASS}]+|[{_CJK_CLASS}]+")


def extract_keywords(query: str, *, limit: int = 6, cjk_subphrases: bool = True) -> list[str]:
    """Up to ``limit`` search terms from a natural-language query (lowercased, de-duplicated).

    ``cjk_subphrases=False`` keeps each CJK run whole, as OpenClaw does under the trigram
    tokenizer (used by ``--scoring openclaw`` for parity).
    """
    out: dict[str, None] = {}
    text = nfc(query).lower()
    for segment in _SPLIT.split(text):
        if not segment:
            continue
        # Mixed segments ("用react部署k8s集群") split into ASCII-ish runs and CJK runs.
        for part in _MIXED.findall(segment):
            if has_cjk(part):
                for particle in JA_PARTICLES:
                    part = part.replace(particle, " ")
                for run in part.split():
                    for term in _cjk_terms(run, limit) if cjk_subphrases else [run]:
                        out.setdefault(term, None)
                continue
            if _not_a_search_word(part) or part.isdigit():
                continue
            out.setdefault(part, None)
    return [t for t in out if t != text.strip()][:limit]


_SUFFIXES = (("ations", ""), ("ation", ""), ("ies", ""), ("sses", "ss"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))
_ES_PLURAL = re.compile(r"(?:ch|sh|x|z)es$")
STEM_MIN = 4  # a shorter stem ("lov" of loved, "car" of cars) matches too many other words


def word_stem(word: str) -> str:
    """A conservative English stem, matched as a substring: "volunteering" → "volunteer"
    (finds volunteer, volunteered), "restoration" → "restor", "symbols" → "symbol".

    Only plural, -ing, -ed and -ation endings go, a doubled final consonant is undone
    ("swimming" → "swim"), and a word is kept whole when less than ``STEM_MIN`` letters would
    remain. Non-ASCII words (CJK, accented) are returned unchanged.
    """
    if len(word) <= STEM_MIN or not (word.isascii() and word.isalpha()):
        return word
    for suffix, replacement in _SUFFIXES:
        if not word.endswith(suffix):
            continue
        if suffix == "s" and word[-2] in "su":  # class, status: no plural ending
            return word
        if suffix == "es" and not _ES_PLURAL.search(word):
            continue  # "rotates" loses only its "s"
        stem = word[: -len(suffix)] + replacement
        if suffix in ("ing", "ed") and len(stem) > STEM_MIN and stem[-1] == stem[-2] and stem[-1] not in "lsz":
            stem = stem[:-1]
        return stem if len(stem) >= STEM_MIN else word
    return word


def query_concepts(query: str, *, stem: bool = False) -> list[str]:
    """The query's content words and CJK phrases (stop words and function words removed).

    Used to measure how much of a question a chunk covers; CJK runs give their pieces between
    function words, not every n-gram. ``stem`` (calibrated search) reduces English words to
    ``word_stem``, so a chunk that says "volunteer" covers a question about "volunteering".
    """
    out: dict[str, None] = {}
    text = nfc(query).lower()
    for segment in _SPLIT.split(text):
        for part in _MIXED.findall(segment):
            if has_cjk(part):
                for particle in JA_PARTICLES:
                    part = part.replace(particle, " ")
                for run in part.split():
                    for piece in _cjk_pieces(run) or [run]:
                        if len(piece) >= 2 or len(run) == 1:
                            out.setdefault(piece, None)
            elif part not in STOP_WORDS and not part.isdigit() and not (part.isascii() and len(part) < 2):
                out.setdefault(part, None)
    if not out:
        out = dict.fromkeys(t.lower() for t in query_tokens(query))
    if stem:
        return list(dict.fromkeys(word_stem(c) for c in out))
    return list(out)


def _longest_shared_run(piece: str, text: str) -> int:
    """Length of the longest substring of ``piece`` that occurs in ``text``.

    Searched by length (a shared run's prefixes are shared too), so a long pasted query costs
    O(n log n) substring tests, not O(n²) (a 4,000-character CJK query took 3 s per search).
    """
    low, high = 0, min(len(piece), len(text))
    while low < high:
        size = (low + high + 1) // 2
        if any(piece[i : i + size] in text for i in range(len(piece) - size + 1)):
            low = size
        else:
            high = size - 1
    return low


def concept_coverage(concepts: list[str], text: str, weights: dict[str, float] | None = None) -> float:
    """Weighted share of the query's concepts a text contains (CJK phrases get partial credit).

    ``weights`` (an IDF per concept) make a rare word count more than one found everywhere —
    a speaker's name on every line of a transcript says little about which line answers.
    """
    if not concepts:
        return 0.0
    low = nfc(text).lower()
    credit = total = 0.0
    for concept in concepts:
        w = weights.get(concept, 1.0) if weights else 1.0
        total += w
        if concept in low:
            credit += w
        elif has_cjk(concept) and len(concept) > 2:
            run = _longest_shared_run(concept, low)
            credit += w * run / len(concept) if run >= 2 else 0.0
    return credit / total if total else 0.0
