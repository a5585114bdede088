from __future__ import annotations

import hashlib
import inspect
import socket

import pytest

from semsearch.ingest import tokens


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("network access attempted")

    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)


def test_bundled_rank_file_matches_the_hash_tiktoken_expects():
    from tiktoken_ext import openai_public

    digest = hashlib.sha256(tokens._rank_file_bytes()).hexdigest()
    assert digest in inspect.getsource(openai_public.cl100k_base)


def test_cl100k_base_loads_offline_and_matches_known_encodings(no_network, monkeypatch, tmp_path):
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: nothing to fall back on
    tokens.cl100k_base.cache_clear()
    encoding = tokens.cl100k_base()
    assert encoding.name == "cl100k_base"
    assert encoding.encode("hello world") == [15339, 1917]
    assert encoding.encode("<|endoftext|>", allowed_special="all") == [100257]
    assert tokens.count_tokens("<|endoftext|>") > 1  # user text is never a special token
    assert list(tmp_path.iterdir()) == []


def test_a_corrupted_rank_file_is_refused(monkeypatch):
    monkeypatch.setattr(tokens, "_rank_file_bytes", lambda: b"aGVsbG8= 0\n")
    tokens.cl100k_base.cache_clear()
    try:
        with pytest.raises(tokens.SemsearchError, match="sha256"):
            tokens.cl100k_base()
    finally:
        tokens.cl100k_base.cache_clear()
