"""Put on PYTHONPATH (with the checkout) by tests/end_to_end/test_fast_front_door.py: a fresh
``semsearch`` process then knows the test backend ``fake:hashing``, as the suite's own does."""

from semsearch.encode.embedders import register_backend
from tests.helpers import fake_backend

register_backend("fake", fake_backend)
