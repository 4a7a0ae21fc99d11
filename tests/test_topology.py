"""CPU tests of the topology planner (nbs/05_topology.ipynb): memory terms against hand arithmetic for
V4.1-Flash and V4-Pro, the legal-cut rule, and the `deepinfer-sm80 plan` command line and its errors."""
import json
import math
import subprocess
import sys

import pytest

from deepinfer_sm80.topology import (CONTEXT_1M, GiB, Assumptions, Layout, LayoutError, kv_bytes_per_token,
                                     legal_cuts, load_model, plan, plan_main, relay_bytes_per_token,
                                     request_state_bytes, size_breakdown, validate_layout)

V41 = load_model("v41-flash")
V4P = load_model("v4-pro")
EXPERT41 = 3 * 5120 * 2304          # weights of one V4.1 expert (w1, w3, w2)
EXPERT4P = 3 * 7168 * 3072          # one V4-Pro expert


# --- published sizes -----------------------------------------------------------------------------------
def test_v41_checkpoint_breakdown_matches_shard_headers():
    "PocketLLM's header audit of the released V4.1-Flash checkpoint, GiB per category."
    published = {"routed_experts": 275.67, "engram": 189.13, "attention": 4.80, "embed_head": 2.47,
                 "shared_experts": 1.32, "vision": 0.90, "drafter": 0.66, "norms_hc": 0.29}
    sb = size_breakdown(V41)
    for k, v in published.items():
        assert abs(sb[k]["bytes"] / GiB - v) <= 0.006 * v + 0.006, k
    assert abs(sum(x["bytes"] for x in sb.values()) / GiB - 475.24) < 0.2


def test_v4_pro_checkpoint_bytes_and_params():
    sb = size_breakdown(V4P)
    assert abs(sum(x["bytes"] for x in sb.values()) / GiB - 805.33) < 0.5          # public tensor dump
    assert sb["routed_experts"]["bytes"] == 62 * 384 * EXPERT4P * (0.5 + 1 / 32)   # 61 layers + 1 MTP layer


# --- memory terms, by hand -----------------------------------------------------------------------------
def test_v41_tp4_pp2_terms_by_hand():
    p = plan(V41, Layout(tp=4, pp=2), "a100-80gb")
    assert p.cuts == (19,)
    s0, s1 = p.stages
    assert s0.terms["experts_data"] == 20 * 384 * EXPERT41 / 2 / 4
    assert s0.terms["experts_scales"] == 20 * 384 * EXPERT41 / 32 / 4
    assert s1.terms["draft_experts"] == 3 * 128 * EXPERT41 * (0.5 + 1 / 32) / 4
    assert s0.terms["embedding"] == 129280 * 5120 * 2 / 4
    assert s1.terms["lm_head"] == 129280 * 5120 * 2 / 4 + 5120 * 2
    rep, split, shared = 5120 * 1280 + 5120 * 512, 32768 * 1280 + 8192 * 4096 + 5120 * 8192, 3 * 5120 * 2304
    assert s0.terms["dense_fp8"] == 20 * (rep + (split + shared) / 4) + 3 * 4096 * 1280      # + 3 indexer wq_b
    assert s0.terms["engram_proj"] == 2 * (25600 * 6144 + 800 * 192 + 2 * 4 * 5120 * 2)
    assert s0.kv_bytes_per_token == 3 * (585 + 135) / 2 and s1.kv_bytes_per_token == 585 + 135
    assert s1.state_bytes == 23 * 133 * 584
    assert s0.budget == 0.9 * 80 * GiB and math.isclose(s0.pool, s0.budget - s0.used)


def test_v41_bf16_marlin_scales_double_the_scale_term():
    a = plan(V41, Layout(tp=4, pp=2), "ga100-64gb").stages[0].terms["experts_scales"]
    b = plan(V41, Layout(tp=4, pp=2), "ga100-64gb", Assumptions(expert_scales="bf16")).stages[0].terms["experts_scales"]
    assert b == 2 * a


def test_v4_pro_tp8_pp2_terms_by_hand():
    p = plan(V4P, Layout(tp=8, pp=2), "h200")
    s0, s1 = p.stages
    n0 = s0.last + 1
    assert s0.terms["experts_data"] == n0 * 384 * EXPERT4P / 2 / 8
    assert s1.terms["draft_experts"] == 384 * EXPERT4P * (0.5 + 1 / 32) / 8                   # one MTP layer
    # layer 0 (HCA) attention: wq_a, wkv replicated, wq_b / wo_a / wo_b split; 128x128 block scales
    fp8 = 7168 * 1536 + 7168 * 512 + (65536 * 1536 + 16384 * 4096 + 7168 * 16384) / 8
    p1 = plan(V4P, Layout(tp=8, pp=2, cuts=(0,)), "h200")
    shared = 3 * 7168 * 3072 / 8
    assert p1.stages[0].terms["dense_fp8"] == fp8 + shared
    assert p1.stages[0].terms["dense_fp8_scales"] == 12 * 56 + 4 * 56 + (512 * 12 + 128 * 32 + 56 * 128 + 3 * 24 * 56) / 8


def test_kv_bytes_per_token_from_roles():
    assert kv_bytes_per_token(V41) == 1790                               # 3 x 716 / 2 + 716
    assert kv_bytes_per_token(V41, layout="nvfp4_ds_mla") == 890         # official FP4 layout
    assert kv_bytes_per_token(V4P) == 30 * (584 + 132) / 4 + 31 * 584 / 128
    assert request_state_bytes(V41, draft_tokens=5) == 43 * 133 * 584 + 3 * 8 * 1024 * 4


# --- pipeline cuts -------------------------------------------------------------------------------------
def test_legal_cuts():
    assert legal_cuts(V41) == (0, 1, 7, 13, 19)
    assert legal_cuts(load_model("v4-flash")) == tuple(range(42))
    assert relay_bytes_per_token(V41, 19) == 0
    assert relay_bytes_per_token(V41, 26) == 716 + 4 * 512 + 4 * 2048
    with pytest.raises(LayoutError, match="inside a KV-sharing group"):
        validate_layout(V41, Layout(pp=2, cuts=(20,)))
    with pytest.raises(LayoutError, match="only 5 are allowed"):
        validate_layout(V41, Layout(pp=7))
    assert validate_layout(V41, Layout(pp=2, cuts=(20,), relay=True)).cuts == (20,)


def test_tp2_pp3_legal_does_not_fit_80gb_but_tp4_pp2_does():
    assert not plan(V41, Layout(tp=2, pp=3), "a100-80gb").fits
    p = plan(V41, Layout(tp=4, pp=2), "ga100-64gb")
    assert p.fits and p.contexts(CONTEXT_1M) > 1


# --- command line --------------------------------------------------------------------------------------
def test_cli_table(capsys):
    assert plan_main(["--gpus", "8", "--gpu", "a100-80gb", "--tp", "4", "--pp", "2"]) == 0
    out = capsys.readouterr().out
    assert "TP4xPP2" in out and "KV pool" in out and "full 1M contexts" in out


def test_cli_json_and_config_path(capsys, tmp_path):
    from deepinfer_sm80.topology import configs_dir
    assert plan_main(["--config", str(configs_dir() / "deepseek_v4_flash.json"), "--tp", "4", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["fits"] and d["layout"]["tp"] == 4 and len(d["stages"]) == 1 and d["kv_tokens"] > 1e6


def test_cli_sweep(capsys):
    assert plan_main(["--gpus", "8", "--gpu", "ga100-64gb", "--sweep", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["recommended"]["latency"]["fits"] and d["recommended"]["capacity"]["fits"]
    assert all(x["gpus"] == 8 for x in d["layouts"])


@pytest.mark.parametrize("argv,msg", [
    (["--tp", "3"], "does not divide the 64 attention heads"),
    (["--gpus", "8", "--tp", "4"], "does not equal --gpus 8"),
    (["--gpu", "v100"], "unknown GPU"),
    (["--gpu", "a10", "--mem-gib", "-24"], "positive"),
    (["--pp", "7"], "only 5 are allowed"),
    (["--tp", "4", "--pp", "2", "--cuts", "20"], "inside a KV-sharing group"),
    (["--cuts", "x"], "comma-separated integers"),
    (["--config", "/nonexistent/config.json"], "not found"),
    (["--sweep"], "--sweep needs --gpus"),
    (["--tp", "-2"], "positive integer"),
])
def test_cli_errors(argv, msg, capsys):
    assert plan_main(argv) == 2
    err = capsys.readouterr().err
    assert msg in err and "Traceback" not in err


def test_cli_error_in_a_fresh_process():
    code = "import sys; from deepinfer_sm80.topology import plan_main; sys.exit(plan_main(sys.argv[1:]))"
    r = subprocess.run([sys.executable, "-c", code, "--gpus", "6", "--tp", "4"], capture_output=True, text=True)
    assert r.returncode == 2 and "deepinfer-sm80 plan: error:" in r.stderr and "Traceback" not in r.stderr
