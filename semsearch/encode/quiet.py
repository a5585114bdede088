"""The libraries' own progress bars ("Loading weights: 100%|████| 103/103"), silenced while a
model loads: they are the library's, not semsearch's progress, and land on the stderr of every
``ask`` and ``eval``. Scoped to the load: the caller's process gets its settings back after."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

HUB_PROGRESS_VARIABLE = "HF_HUB_DISABLE_PROGRESS_BARS"
"""Set by a user, either way, it is their choice: left alone."""


@contextmanager
def library_progress_silenced() -> Iterator[None]:
    """Within: no tqdm bars from transformers or huggingface_hub; after: their state as it was
    (transformers' switch, and huggingface_hub's per-group switches, which its own
    ``enable_progress_bars`` would reset to one global value)."""
    if os.environ.get(HUB_PROGRESS_VARIABLE) is not None:
        yield
        return
    from transformers.utils import logging as transformers_logging

    hub_states = _hub_progress_states()
    saved = dict(hub_states)
    was_enabled = transformers_logging.is_progress_bar_enabled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        transformers_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                transformers_logging.enable_progress_bar()
        hub_states.clear()
        hub_states.update(saved)


def _hub_progress_states() -> dict:
    """huggingface_hub's switches by group (``{"_global": False}``); a dict of nothing to restore
    in a version that keeps them elsewhere."""
    import importlib

    module = importlib.import_module("huggingface_hub.utils.tqdm")  # the package's ``tqdm`` is the class
    states = getattr(module, "progress_bar_states", None)
    return states if isinstance(states, dict) else {}
