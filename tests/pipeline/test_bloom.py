"""The chunks' Bloom filters: compiled or not, the same bits; every stored input found; few others."""

from __future__ import annotations

import doctest
import importlib.util
import random
from array import array
from types import ModuleType

import pytest

from worker.store import bloom

SOURCE = bloom.__file__.rsplit("/", 1)[0] + "/bloom.py"


def _as_python() -> ModuleType:
    """The module run as Python from its source, whichever of the two the import gave."""
    spec = importlib.util.spec_from_file_location("bloom_as_python", SOURCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_its_examples_hold_run_as_python() -> None:
    failures, tried = doctest.testmod(_as_python())
    assert tried and not failures


@pytest.mark.slow
def test_compiled_and_python_make_the_same_filters() -> None:
    rng = random.Random(127)
    python = _as_python()
    for count in (0, 1, 31, 32, 33, 1000, 4096):
        hashes = array("Q", [rng.getrandbits(64) for _ in range(count)])
        assert bloom.build(hashes) == python.build(hashes)
        probes = [rng.getrandbits(64) for _ in range(200)] + list(hashes[:50])
        assert [bloom.holds(bloom.build(hashes), h) for h in probes] == [python.holds(python.build(hashes), h)
                                                                         for h in probes]


@pytest.mark.parametrize("count", [1, 500, 20_000])
def test_every_input_is_found_and_few_others(count: int) -> None:
    rng = random.Random(count)
    hashes = array("Q", [rng.getrandbits(64) for _ in range(count)])
    bits = bloom.build(hashes)
    assert len(bits) == bloom.blocks_for(count) * bloom.BLOCK_BYTES
    assert all(bloom.holds(bits, h) for h in hashes)
    # Read as a search reads it: one block, found where SQL finds it.
    blocks = len(bits) // bloom.BLOCK_BYTES
    for h in hashes[:100]:
        start = bloom.key(h) % blocks * bloom.BLOCK_BYTES
        assert start == bloom.block_of(h, blocks) and bloom.holds(bits[start : start + bloom.BLOCK_BYTES], h)
    others = sum(bloom.holds(bits, rng.getrandbits(64)) for _ in range(20_000))
    assert others < 20_000 * 0.005  # about one in a thousand, by its sizes
