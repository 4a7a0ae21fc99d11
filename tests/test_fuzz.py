"""A small CPU fuzz of every kernel family (Triton interpreter), and a check that the fuzzer catches
what it is meant to catch: a kernel writing past its buffer, a wrong count, a missing error."""
import deepinfer_sm80  # noqa: F401  (before triton)
import pathlib
import random
import re

import pytest
import torch

from deepinfer_sm80 import core
from deepinfer_sm80 import fuzz as F
from deepinfer_sm80.core import InputError

FAMILIES = {"kv_insert", "kv_gather", "combine_indices", "sparse_prefill", "sparse_decode", "topk", "mhc",
            "indexer_decode"}


def test_fuzz_cpu():
    fams = F.load_families()
    assert FAMILIES <= set(fams), sorted(fams)
    names = sorted(FAMILIES)
    rows = F.fuzz(cases=6 * len(names), families=names, seed=20261130, device="cpu")
    print(F.format_rows(rows))
    for name, row in rows.items():
        assert row["failed"] == 0, F.format_rows(rows)
        assert row["cases"] == 6
    assert sum(r["invalid"] for r in rows.values()) > 0 and sum(r["flagged"] for r in rows.values()) > 0


def test_families_registered_in_core_without_the_tool():
    "Every family comes from core.FUZZ_CASES, registered by its own module; no ops module imports the tool."
    F.load_families()
    assert FAMILIES <= set(core.FUZZ_CASES)
    ops = pathlib.Path(deepinfer_sm80.__file__).parent / "ops"
    tool = re.compile(r"from \.\.fuzz\b|from \.\. import .*\bfuzz\b|deepinfer_sm80\.fuzz\b|deepinfer_sm80 import .*\bfuzz\b")
    for p in ops.glob("*.py"):
        assert not tool.search(p.read_text()), p


def _fake_case(rng, device, *, overrun=False, count=0, raises=True, bad_args=False, value=1.0, tol=None):
    buf = F.Guarded.flat((8,), torch.float32, device, pad=4)
    buf.inner.zero_()

    def call(errors=None, check_metadata=False):
        if bad_args and raises: raise InputError("bad")
        if check_metadata and raises and count:
            raise InputError("bad")
        kernel(errors)

    def kernel(errors=None):
        buf.inner.fill_(value)
        if overrun: buf.full[4 + 8] = 1                   # one element past the end
        if errors is not None: errors.add_(count)

    def reference(bufs, errors):
        bufs["x"].fill_(1)
        errors.add_(1 if count else 0)

    return F.FuzzCase("fake", {"x": buf}, call, kernel, reference, consistent=count == 0,
                      tolerance={} if tol is None else {"x": tol}, raises=bad_args)


@pytest.mark.parametrize("kw, column", [(dict(overrun=True), "guard"), (dict(count=3), "count"),
                                        (dict(count=1, raises=False), None),
                                        (dict(bad_args=True, raises=False), None),
                                        (dict(value=1.01), "mismatch"), (dict(value=1.01, tol=1e-3), "mismatch"),
                                        (dict(value=float("nan"), tol=1.0), "mismatch")])
def test_fuzz_catches_faults(kw, column):
    F.FUZZ_FAMILIES["_fake"] = F.FuzzFamily("_fake", lambda rng, dev: _fake_case(rng, dev, **kw))
    try:
        rows = F.fuzz(cases=2, families=["_fake"], seed=0, device="cpu")
    finally:
        del F.FUZZ_FAMILIES["_fake"]
    row = rows["_fake"]
    assert row["failed"] == 2, F.format_rows(rows)
    if column: assert row[column] > 0, F.format_rows(rows)


@pytest.mark.parametrize("kw", [dict(value=1.001, tol=1e-2), dict(bad_args=True)])
def test_fuzz_accepts(kw):
    F.FUZZ_FAMILIES["_fake"] = F.FuzzFamily("_fake", lambda rng, dev: _fake_case(rng, dev, **kw))
    try:
        rows = F.fuzz(cases=2, families=["_fake"], seed=0, device="cpu")
    finally:
        del F.FUZZ_FAMILIES["_fake"]
    assert rows["_fake"]["failed"] == 0, F.format_rows(rows)


def test_fuzz_cli(capsys):
    assert F.main(["--cases", "3", "--seed", "5", "--device", "cpu", "--family", "kv_insert"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("3 passed, 0 failed"), out
