"""CPU tests of the topology planner (`deepinfer_sm80.plan`, notebooks nbs/05a-05e): memory terms against hand
arithmetic, the CUDA-visible budget and loaded-weight overhead, the relay's costs, the max-length fit rule, capacity-capped
decode, pipelined prefill, config validation, and the `deepinfer-sm80 plan` command line with its errors and its
vLLM-log mode."""
import json
import math
import subprocess
import sys
from dataclasses import fields, replace

import pytest

from deepinfer_sm80.plan.cli import plan_main, read_vllm_log, compare_with_log
from deepinfer_sm80.plan.memory import ASSUMPTIONS, Assumptions, Layout, LayoutCosts, get_gpu, validate_layout
from deepinfer_sm80.plan.model import (CONTEXT_1M, GiB, LayoutError, ModelSpec, configs_dir, kv_bytes_per_token,
                                       legal_cuts, load_model, relay_bytes_per_token, request_state_bytes, size_breakdown)
from deepinfer_sm80.plan.planner import plan

V41 = load_model("v41-flash")
V4P = load_model("v4-pro")
A0 = Assumptions()
EXPERT41 = 3 * 5120 * 2304          # weights of one V4.1 expert (w1, w3, w2)
EXPERT4P = 3 * 7168 * 3072          # one V4-Pro expert
RAW41 = json.loads((configs_dir() / "deepseek_v41_flash.json").read_text())

# A startup log in vLLM's format, written for these tests (illustrative numbers): TP4 x PP2, ranks 0 and 4.
SAMPLE_LOG = """\
(VllmWorker rank=0 pid=4211) INFO 11-28 10:05:42 [gpu_model_runner.py:1843] Model loading took 41.71 GiB and 612.19 seconds
(VllmWorker rank=4 pid=4215) INFO 11-28 10:05:44 [gpu_model_runner.py:1843] Model loading took 43.60 GiB and 614.02 seconds
(VllmWorker rank=0 pid=4211) INFO 11-28 10:06:30 [gpu_worker.py:246] the current vLLM instance can use total_gpu_memory (63.41GiB) x gpu_memory_utilization (0.92) = 58.34GiB
(VllmWorker rank=0 pid=4211) INFO 11-28 10:06:30 [gpu_worker.py:246] model weights take 41.71GiB; non_torch_memory takes 0.74GiB; PyTorch activation peak memory takes 2.65GiB; the rest of the memory reserved for KV Cache is 13.24GiB.
(VllmWorker rank=4 pid=4215) INFO 11-28 10:06:31 [gpu_worker.py:246] the current vLLM instance can use total_gpu_memory (63.41GiB) x gpu_memory_utilization (0.92) = 58.34GiB
(VllmWorker rank=4 pid=4215) INFO 11-28 10:06:31 [gpu_worker.py:246] model weights take 43.60GiB; non_torch_memory takes 0.81GiB; PyTorch activation peak memory takes 5.12GiB; the rest of the memory reserved for KV Cache is 8.81GiB.
INFO 11-28 10:06:33 [kv_cache_utils.py:716] GPU KV cache size: 12,431,360 tokens
INFO 11-28 10:06:33 [kv_cache_utils.py:720] Maximum concurrency for 1,048,576 tokens per request: 11.86x
(VllmWorker rank=4 pid=4215) INFO 11-28 10:07:10 [gpu_model_runner.py:2251] Graph capturing finished in 37 secs, took 1.12 GiB
"""


def _cfg(key, value=None, drop=False):
    c = json.loads(json.dumps(RAW41)); t = c.get("text_config", c)
    if drop: t.pop(key, None)
    else: t[key] = value
    return c


# --- published sizes -----------------------------------------------------------------------------------
def test_v41_checkpoint_breakdown_matches_shard_headers():
    "GiB per category, summed from the safetensors headers of the released V4.1-Flash checkpoint."
    published = {"routed_experts": 275.67, "engram": 189.13, "attention": 4.80, "embed_head": 2.47,
                 "shared_experts": 1.32, "vision": 0.90, "drafter": 0.66, "norms_hc": 0.29}
    sb = size_breakdown(V41)
    for k, v in published.items():
        assert abs(sb[k]["bytes"] / GiB - v) <= 0.006 * v + 0.006, k
    assert abs(sum(x["bytes"] for x in sb.values()) / GiB - 475.24) < 0.2


def test_v4_pro_checkpoint_bytes():
    sb = size_breakdown(V4P)
    assert abs(sum(x["bytes"] for x in sb.values()) / GiB - 805.33) < 0.5
    assert sb["routed_experts"]["bytes"] == 62 * 384 * EXPERT4P * (0.5 + 1 / 32)   # 61 layers + 1 MTP layer


# --- memory ---------------------------------------------------------------------------------------------
def test_v41_tp4_pp2_terms_by_hand():
    p = plan(V41, Layout(tp=4, pp=2), "a100-80gb")
    assert p.cuts == (19,)
    s0, s1 = p.stages
    assert s0.terms["experts_data"] == 20 * 384 * EXPERT41 / 2 / 4
    assert s0.terms["experts_scales"] == 20 * 384 * EXPERT41 / 32 / 4          # one E8M0 byte per 32 (Marlin keeps E8M0)
    assert s1.terms["draft_experts"] == 3 * 128 * EXPERT41 * (0.5 + 1 / 32) / 4
    assert s0.terms["embedding"] == 129280 * 5120 * 2 / 4
    assert s1.terms["draft_embedding"] == s0.terms["embedding"]                 # the drafter's own copy on the last stage
    assert "draft_embedding" not in plan(V41, Layout(tp=8), "a100-80gb").stages[0].terms
    rep, split, shared = 5120 * 1280 + 5120 * 512, 32768 * 1280 + 8192 * 4096 + 5120 * 8192, 3 * 5120 * 2304
    assert s0.terms["dense_fp8"] == 20 * (rep + (split + shared) / 4) + 3 * 4096 * 1280
    assert s0.kv_bytes_per_token == 3 * (585 + 135) / 2 and s1.kv_bytes_per_token == 585 + 135
    assert s1.state_bytes == 23 * 133 * 584


def test_budget_is_cuda_visible_total_and_overhead_is_charged():
    p = plan(V41, Layout(tp=4, pp=2), "ga100-64gb")
    s0 = p.stages[0]
    assert s0.visible == 0.99 * 64 * GiB and s0.budget == 0.9 * 0.99 * 64 * GiB
    assert s0.terms["loaded_overhead"] == 0.5 * GiB and math.isclose(s0.pool, s0.budget - s0.used)
    q = plan(V41, Layout(tp=4, pp=2), "ga100-64gb", replace(A0, loaded_weight_overhead_gib=1.5))
    assert math.isclose(p.stages[0].pool - q.stages[0].pool, GiB)
    # the headline figures of the notebook
    assert abs(p.kv_tokens / 1e6 - 14.30) < 0.05
    assert abs(plan(V41, Layout(tp=4, pp=2), "ga100-64gb", replace(A0, gpu_memory_utilization=0.92)).kv_tokens / 1e6 - 15.56) < 0.05


def test_bf16_scales_are_an_option_not_the_default():
    a = plan(V41, Layout(tp=4, pp=2), "ga100-64gb").stages[0].terms["experts_scales"]
    b = plan(V41, Layout(tp=4, pp=2), "ga100-64gb", Assumptions(expert_scales="bf16")).stages[0].terms["experts_scales"]
    assert A0.expert_scales == "e8m0" and b == 2 * a


def test_kv_bytes_per_token_from_roles():
    assert kv_bytes_per_token(V41) == 1790
    assert kv_bytes_per_token(V41, layout="nvfp4_ds_mla") == 890
    assert request_state_bytes(V41, draft_tokens=5) == 43 * 133 * 584 + 3 * 8 * 1024 * 4


# --- cuts and the relay ----------------------------------------------------------------------------------
def test_legal_cuts_and_relay_costs():
    assert legal_cuts(V41) == (0, 1, 7, 13, 19)
    assert legal_cuts(load_model("v4-flash")) == tuple(range(42))
    assert relay_bytes_per_token(V41, 19) == 0
    assert relay_bytes_per_token(V41, 26) == 716 + 4 * 512 + 4 * 2048
    with pytest.raises(LayoutError, match="inside a KV-sharing group"):
        validate_layout(V41, Layout(pp=2, cuts=(20,)))
    p = plan(V41, Layout(tp=2, pp=3, cuts=(13, 27), relay=True), "a100-80gb")
    last = p.stages[2]
    assert last.relayed == (20,) and last.relay_kv_bytes_per_token == 585 + 135 and last.own_kv_bytes_per_token == 0
    assert p.relay_bytes == [0.0, relay_bytes_per_token(V41, 27)]
    # the relay's hop is on the decode chain
    legal = plan(V41, Layout(tp=2, pp=3, cuts=(13, 27), relay=True), "a100-80gb", replace(A0, draft_tokens=0, mean_accepted=1.0))
    assert legal.decode(1, 8192)["hops_ms"] > 0


def test_tp2_pp3_on_64gb_only_with_a_relay():
    assert not plan(V41, Layout(tp=2, pp=3), "ga100-64gb").fits
    assert not plan(V41, Layout(tp=2, pp=3), "a100-80gb").fits
    assert not plan(V41, Layout(tp=2, pp=3, relay=True), "ga100-64gb").fits          # 1.34 GiB short of one 1M request
    assert plan(V41, Layout(tp=2, pp=3, relay=True), "ga100-64gb", replace(A0, prefill_gather_requests=0)).fits


# --- fit rule, decode cap, prefill pipelining -------------------------------------------------------------
def test_a_layout_that_cannot_hold_one_max_length_request_does_not_fit():
    p = plan(V41, Layout(tp=8), "a100-80gb", replace(A0, gpu_memory_utilization=0.60))
    assert p.weights_fit and not p.fits and p.kv_tokens == 0 and "refuse to start" in p.breaker
    assert plan(V41, Layout(tp=8), "a100-80gb", replace(A0, gpu_memory_utilization=0.60, max_model_len=131072)).fits


def test_decode_is_capped_by_capacity():
    p = plan(V41, Layout(tp=4, pp=2), "ga100-64gb")
    d = p.decode(64, CONTEXT_1M)
    assert d["capped"] and d["streams"] == math.floor(p.contexts(CONTEXT_1M)) and d["streams_requested"] == 64
    assert p.decode(12, 8192)["capped"] is False
    assert p.decode(500, 1024)["streams"] == A0.max_num_seqs


def test_prefill_chunks_pipeline_across_stages():
    on = plan(V41, Layout(tp=4, pp=2), "ga100-64gb").prefill(65536)
    off = plan(V41, Layout(tp=4, pp=2), "ga100-64gb", replace(A0, pp_overlaps_one_request=False)).prefill(65536)
    assert on["ttft_s"] < off["ttft_s"] and on["chunks"] == 8


def test_link_moves_latency():
    fast = plan(V41, Layout(tp=4, pp=2), "ga100-64gb")
    slow = plan(V41, Layout(tp=4, pp=2), get_gpu("ga100-64gb", link="pcie1-x4"))
    assert slow.prefill(65536)["ttft_s"] > 1.5 * fast.prefill(65536)["ttft_s"]
    assert slow.decode(1, 8192)["step_ms"] > fast.decode(1, 8192)["step_ms"]


# --- configs -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key,value,msg", [
    ("hidden_size", None, "lacks the key 'hidden_size'"),
    ("o_lora_rank", None, "lacks the key 'o_lora_rank'"),
    ("sliding_window", None, "lacks the key 'sliding_window'"),
    ("num_attention_heads", -64, "'num_attention_heads' must be >= 1"),
    ("num_hidden_layers", 0, "'num_hidden_layers' must be >= 1"),
    ("o_groups", 0, "'o_groups' must be >= 1"),
    ("head_dim", "512", "'head_dim' must be an integer"),
    ("vocab_size", 1.5, "'vocab_size' must be an integer"),
    ("index_topk", True, "'index_topk' must be an integer"),
    ("kv_source_layer_ids", [2, 8, 99], "'kv_source_layer_ids' holds 99"),
    ("kv_source_layer_ids", "2,8", "must be a list"),
    ("num_experts_per_tok", 1000, "exceeds 'n_routed_experts'"),
    ("compress_ratios", [0, 4], "fewer than 'num_hidden_layers'"),
])
def test_bad_configs_name_the_key(key, value, msg):
    with pytest.raises(LayoutError, match=msg.replace("(", r"\(").replace(")", r"\)")):
        ModelSpec.from_config(_cfg(key, value, drop=value is None))


def test_bad_config_files_on_the_command_line(tmp_path, capsys):
    for name, cfg in (("zero", _cfg("o_groups", 0)), ("neg", _cfg("moe_intermediate_size", -2304)),
                      ("type", _cfg("hidden_size", [5120])), ("missing", _cfg("q_lora_rank", drop=True))):
        f = tmp_path / f"{name}.json"; f.write_text(json.dumps(cfg))
        assert plan_main(["--config", str(f)]) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and err.startswith("deepinfer-sm80 plan: error: config"), err
    f = tmp_path / "bad.json"; f.write_text("{not json")
    assert plan_main(["--config", str(f)]) == 2 and "not valid JSON" in capsys.readouterr().err


# --- assumptions and the command line -----------------------------------------------------------------
def test_every_assumption_is_documented_and_settable(capsys):
    d = Assumptions()
    for f in fields(Assumptions):
        assert f.name in ASSUMPTIONS
        v = getattr(d, f.name)
        text = str(v).lower() if isinstance(v, bool) else str(v)
        assert plan_main(["--gpu", "ga100-64gb", "--tp", "4", "--pp", "2", "--json", "--set", f"{f.name}={text}"]) == 0, f.name
        assert json.loads(capsys.readouterr().out)["assumptions"][f.name] == v


def test_cli_table_json_link_and_sweep(capsys):
    assert plan_main(["--gpus", "8", "--gpu", "ga100-64gb", "--tp", "4", "--pp", "2", "--util", "0.92"]) == 0
    out = capsys.readouterr().out
    assert "TP4xPP2" in out and "CUDA-visible" in out and "15.56M" in out
    assert plan_main(["--tp", "4", "--pp", "2", "--json", "--link", "20,25,30", "--max-model-len", "131072"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["gpu"]["link"] == {"name": "custom", "allreduce_gbs": 20.0, "p2p_gbs": 25.0, "latency_us": 30.0}
    assert d["assumptions"]["max_model_len"] == 131072
    assert plan_main(["--gpus", "8", "--gpu", "ga100-64gb", "--sweep", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["recommended"]["capacity"]["fits"] and all(x["gpus"] == 8 for x in d["layouts"])


@pytest.mark.parametrize("argv,msg", [
    (["--tp", "3"], "does not divide the 64 attention heads"),
    (["--gpus", "8", "--tp", "4"], "does not equal --gpus 8"),
    (["--gpu", "v100"], "unknown GPU"),
    (["--gpu", "a10", "--mem-gib", "-24"], "positive"),
    (["--mem-gib", "inf"], "finite"),
    (["--util", "nan"], "finite"),
    (["--accepted", "nan"], "finite"),
    (["--accepted", "inf"], "finite"),
    (["--layer-overhead-us", "nan"], "finite"),
    (["--mfu", "inf"], "finite"),
    (["--accepted", "6.5"], "--accepted must be between 1 and --draft-tokens + 1 = 6"),
    (["--draft-tokens", "2", "--accepted", "3.5"], "--draft-tokens + 1 = 3"),
    (["--util", "1.2"], "--util must be in (0, 1]"),
    (["--set", "bw_efficiency=nan"], "finite"),
    (["--set", "max_num_seqs=0"], "--set max_num_seqs must be >= 1"),
    (["--set", "engram_on_host=maybe"], "true or false"),
    (["--set", "nope=1"], "unknown assumption 'nope'"),
    (["--pp", "7"], "--allow-relay allows cuts elsewhere"),
    (["--tp", "4", "--pp", "2", "--cuts", "20"], "--allow-relay allows it"),
    (["--cuts", "x"], "comma-separated integers"),
    (["--streams", "1,,2"], "no empty items"),
    (["--streams", "0"], "--streams must be positive"),
    (["--link", "warp"], "unknown link"),
    (["--link", "1,2,nan"], "finite"),
    (["--config", "/nonexistent/config.json"], "not found"),
    (["--sweep"], "--sweep needs --gpus"),
    (["--tp", "-2"], "positive integer"),
])
def test_cli_errors(argv, msg, capsys):
    assert plan_main(argv) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("deepinfer-sm80 plan: error: ") and msg in lines[0], err
    assert "usage:" not in err and "Traceback" not in err and "pass relay" not in err
    if "--set" not in argv: assert "gpu_memory_utilization" not in err


def test_cli_error_in_a_fresh_process():
    code = "import sys; from deepinfer_sm80.plan.cli import plan_main; sys.exit(plan_main(sys.argv[1:]))"
    r = subprocess.run([sys.executable, "-c", code, "--gpus", "6", "--tp", "4"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("deepinfer-sm80 plan: error:") and "Traceback" not in r.stderr


# --- vLLM log mode -------------------------------------------------------------------------------------
def test_read_vllm_log():
    log = read_vllm_log(SAMPLE_LOG)
    assert log["engine"] == {"kv_cache_tokens": 12_431_360, "concurrency_len": 1_048_576, "concurrency": 11.86}
    assert log["workers"]["rank 0"]["total_gpu_gib"] == 63.41 and log["workers"]["rank 4"]["kv_cache_gib"] == 8.81
    p = plan(V41, Layout(tp=4, pp=2), "ga100-64gb", replace(A0, gpu_memory_utilization=0.92))
    cmp = compare_with_log(p, log)
    assert cmp["calibration"]["gpu_memory_utilization"] == 0.92
    assert abs(cmp["calibration"]["cuda_visible_fraction"] - 63.41 / 64) < 1e-4
    assert abs(cmp["calibration"]["loaded_weight_overhead_gib"] - (43.60 - p.stages[1].weights / GiB)) < 0.01
    assert cmp["calibration"]["cuda_graph_gib"] == 1.12
    stages = {r[0] for r in cmp["rows"]}
    assert "rank 0 (stage 0)" in stages and "rank 4 (stage 1)" in stages


def test_cli_vllm_log_file_and_stdin(tmp_path, capsys):
    f = tmp_path / "vllm.log"; f.write_text(SAMPLE_LOG)
    assert plan_main(["--gpu", "ga100-64gb", "--tp", "4", "--pp", "2", "--util", "0.92", "--vllm-log", str(f)]) == 0
    out = capsys.readouterr().out
    assert "KV cache tokens" in out and "12,431,360" in out and "--set loaded_weight_overhead_gib=" in out
    code = "import sys; from deepinfer_sm80.plan.cli import plan_main; sys.exit(plan_main(sys.argv[1:]))"
    r = subprocess.run([sys.executable, "-c", code, "--gpu", "ga100-64gb", "--tp", "4", "--pp", "2", "--json",
                        "--vllm-log", "-"], input=SAMPLE_LOG, capture_output=True, text=True)
    assert r.returncode == 0 and json.loads(r.stdout)["calibration"]["cuda_visible_fraction"] > 0.98
    f.write_text("nothing here\n")
    assert plan_main(["--vllm-log", str(f)]) == 2 and "no vLLM startup lines" in capsys.readouterr().err
