"""A small CPU fuzz of every kernel family (Triton interpreter), and a check that the fuzzer catches
what it is meant to catch: a kernel writing past its buffer, a wrong count, a missing error."""
import deepinfer_sm80  # noqa: F401  (before triton)
import random

import pytest
import torch

from deepinfer_sm80 import fuzz as F
from deepinfer_sm80.core import InputError


def test_fuzz_cpu():
    rows = F.fuzz(cases=30, seed=20261130, device="cpu")
    print(F.format_rows(rows))
    assert set(rows) >= {"kv_insert", "kv_gather", "combine_indices"}
    for name, row in rows.items():
        assert row["failed"] == 0, F.format_rows(rows)
        assert row["cases"] == 10
    assert sum(r["invalid"] for r in rows.values()) > 0 and sum(r["flagged"] for r in rows.values()) > 0


def _fake_case(rng, device, *, overrun=False, count=0, raises=True):
    buf = F.Guarded.flat((8,), torch.int32, device, pad=4)
    buf.inner.zero_()

    def call(errors=None, check_metadata=False):
        if check_metadata and raises and count:
            raise InputError("bad")
        kernel(errors)

    def kernel(errors=None):
        buf.inner.fill_(1)
        if overrun: buf.full[4 + 8] = 1                   # one element past the end
        if errors is not None: errors.add_(count)

    def reference(bufs, errors):
        bufs["x"].fill_(1)
        errors.add_(1 if count else 0)

    return F.FuzzCase("fake", {"x": buf}, call, kernel, reference, consistent=count == 0)


@pytest.mark.parametrize("kw, column", [(dict(overrun=True), "guard"), (dict(count=3), "count"),
                                        (dict(count=1, raises=False), None)])
def test_fuzz_catches_faults(kw, column):
    F.FUZZ_FAMILIES["_fake"] = F.FuzzFamily("_fake", lambda rng, dev: _fake_case(rng, dev, **kw))
    try:
        rows = F.fuzz(cases=2, families=["_fake"], seed=0, device="cpu")
    finally:
        del F.FUZZ_FAMILIES["_fake"]
    row = rows["_fake"]
    assert row["failed"] == 2, F.format_rows(rows)
    if column: assert row[column] > 0, F.format_rows(rows)


def test_fuzz_cli(capsys):
    assert F.main(["--cases", "3", "--seed", "5", "--device", "cpu", "--family", "kv_insert"]) == 0
    out = capsys.readouterr().out
    assert "3 passed, 0 failed" in out
