"""Put on PYTHONPATH (with the checkout) by tests/end_to_end/test_killed_late.py: a fresh
``semsearch`` process then knows ``fake:paced``, the hashing fake taking the time a model would
(sleeping, so that a busy machine moves it little), besides ``fake:hashing``."""

import time

from semsearch.encode.embedders import register_backend
from tests.helpers import HashingEmbedder, fake_backend


class Paced(HashingEmbedder):
    """Each batch takes time by its longest text times its size, as a model's padding does."""

    spec = "fake:paced"

    def embed_passages(self, texts):
        time.sleep(0.02 + 0.0001 * max(len(text) for text in texts) * len(texts))
        return super().embed_passages(texts)


register_backend("fake", lambda name, local_only=False: Paced() if name == "paced" else fake_backend(name))
