"""vLLM's KV cache accounting, by version: what one request reserves, and what the startup log
reports ("GPU KV cache size: N tokens", "Maximum concurrency for L tokens per request").

Layers are grouped as vLLM groups them (vllm/v1/core/kv_cache_utils.py
_get_kv_cache_groups_uniform_page_size, vllm-project/vllm at commit 001cabc1): one attention type
alone is one group of every layer; a hybrid of full and sliding-window layers is split into groups
of G layers, G the smaller layer count (the larger when it is under 1.5 times the smaller), the
last group of a type padded, so Gemma-3-27B's 52 sliding + 10 full layers make 6 + 1 groups of
10 (8 padding slots). All groups draw blocks of one page (G layers x block tokens) from one pool:
num_blocks = available // (page x G), and one request takes the sum over groups of each group's
blocks (get_max_concurrency_for_kv_cache_config); the startup check charges the padded groups
(_max_memory_usage_bytes_from_groups).

What changed between versions (each rule with the code it was read from):
- The tokens a sliding-window layer keeps beyond its window (SlidingWindowSpec
  max_memory_usage_bytes: cdiv(min(window - 1 + in_flight, max_model_len), block) + 1 blocks).
  Up to 0.25 in_flight is max_num_batched_tokens (vllm/v1/kv_cache_interface.py at 001cabc1).
  From 0.26 (PR #47728: out-of-window blocks are freed on the processed-token basis; issue #49878
  traces the v0.25.1 -> v0.26.0 change to it, with the numbers) it is
  VllmConfig.max_in_flight_tokens = max_concurrent_batches x max_num_batched_tokens, where
  max_concurrent_batches is 2 under async scheduling (on by default) and pp + 1 with pipeline
  parallelism on the V2 model runner (the default), pp without async scheduling
  (vllm/config/vllm.py at commit 000fc94b).
- The reported token count. Up to 0.25: num_blocks // groups x block (_report_kv_cache_config at
  001cabc1). From 0.26: int(max_concurrency x max_model_len) (get_kv_cache_capacity, the newer
  kv_cache_utils.py; the one-line log "GPU KV cache size: N tokens, Maximum concurrency for ..."
  in vllm issue #51041). Which release first logged it was not pinned; rigcheck ties it to 0.26.

- Chunked local attention (Llama-4): the same in-flight tokens, one chunk plus them, no extra block.
The same rules serve the trace-only families read by hybrid_layers (gpt-oss's sliding layers).

Mamba layers (MambaSpec, kv_cache_interface.py at 001cabc1): one page of conv + ssm state per
request and layer in mamba_cache_mode "none" (align and all, with prefix caching, are refused:
hybrid_layers.check_engine), the page padded to the attention
page, whose block is raised until it holds one Mamba state (hybrid_block). The state shapes per
family: hybrid_layers.
"""

from dataclasses import dataclass

from rigcheck.memory.architecture import Architecture
from rigcheck.memory.errors import ConfigError
from rigcheck.memory.units import ceil_div
from rigcheck.number_text import plain_int

# 0.25: the oldest whose reservation was checked (issue #49878 reproduces v0.25.1's numbers with
# the rule at 001cabc1); 0.33: the newest, whose code at 000fc94b keeps the 0.26 rule.
OLDEST, NEWEST = (0, 25), (0, 33)
DEFAULT_VERSION = "0.33"
_IN_FLIGHT_BATCHES_SINCE = (0, 26)


def parse_version(text: str) -> tuple[int, int]:
    """'0.33', '0.26.1' or 'v0.25.1' -> (0, 33); a ConfigError outside the versions read."""
    parts = str(text).strip().lstrip("v").split(".")
    try:
        version = (plain_int(parts[0]), plain_int(parts[1]))  # '٠.٣٠' was echoed as given
    except (ValueError, IndexError):
        raise ConfigError(f"{text!r} is not a vLLM version (e.g. 0.33 or 0.25.1)") from None
    if not OLDEST <= version <= NEWEST:
        raise ConfigError(
            f"vLLM {text}: rigcheck knows the KV accounting of vLLM 0.25 to 0.33; "
            "give --vllm-version in that range"
        )
    return version


def in_flight_tokens(version: str, max_num_batched_tokens: int, async_on: bool, pp: int) -> int:
    """Tokens scheduled but not yet processed that a sliding-window layer must keep."""
    if parse_version(version) < _IN_FLIGHT_BATCHES_SINCE:
        return max_num_batched_tokens
    batches = pp + 1 if async_on else pp  # VllmConfig.max_concurrent_batches, V2 model runner
    return batches * max_num_batched_tokens


def reports_concurrency_tokens(version: str) -> bool:
    """Whether the log's token count is concurrency x max_model_len (else pool blocks)."""
    return parse_version(version) >= _IN_FLIGHT_BATCHES_SINCE


@dataclass(frozen=True)
class Layout:
    """One GPU's KV cache groups and what one request takes from them."""

    page_bytes: int  # one layer's block
    block: int  # tokens per block
    group_size: int  # layers per group (G)
    groups: tuple[int, ...]  # blocks one request takes, per group

    @property
    def blocks_per_request(self) -> int:
        return sum(self.groups)

    @property
    def request_bytes(self) -> int:
        """What vLLM's startup check charges one request, padding layers included."""
        return self.group_size * self.page_bytes * self.blocks_per_request

    def num_blocks(self, available: int) -> int:
        """Blocks of the shared pool (get_num_blocks)."""
        return max(0, available // self.page_bytes // self.group_size)


def sliding_blocks(window: int, tokens: int, block: int, in_flight: int) -> int:
    """SlidingWindowSpec: the window less one token plus the in-flight tokens, capped at the
    request, and one block more because the window need not start at a block boundary."""
    return ceil_div(min(window - 1 + in_flight, tokens), block) + 1


def chunked_blocks(chunk: int, tokens: int, block: int, in_flight: int) -> int:
    """ChunkedLocalAttentionSpec: one chunk plus the in-flight tokens, capped at the request; no
    extra block (chunks start at multiples of the chunk size). kv_cache_interface.py at 001cabc1
    adds max_num_batched_tokens (0.25); the newer max_admission_blocks_per_request adds
    VllmConfig.max_in_flight_tokens, the same change as the sliding window's (PR #47728)."""
    return ceil_div(min(chunk + in_flight, tokens), block)


def grouped(page: int, block: int, types: list[tuple[int, int]]) -> Layout:
    """Groups of layers of each type ((layers, blocks one request takes per layer)), all drawing
    `page`-byte blocks from one pool (_get_kv_cache_groups_uniform_page_size)."""
    counts = [n for n, _ in types if n]
    size = min(counts)
    if max(counts) < 1.5 * size:
        size = max(counts)
    groups = [blocks for n, blocks in types if n for _ in range(ceil_div(n, size))]
    return Layout(page, block, size, tuple(groups))


def layout(share: Architecture, tokens: int, element_bytes: int, block: int, in_flight: int):
    """The groups of one GPU's layers (`share`: its layers and KV heads) at `tokens` per request."""
    page = share.kv_cache_width * block * element_bytes
    sliding = share.sliding_layers if share.sliding_window else 0
    window = sliding_blocks(share.sliding_window, tokens, block, in_flight) if sliding else 0
    return grouped(
        page, block, [(share.layers - sliding, ceil_div(tokens, block)), (sliding, window)]
    )


# Attention block sizes a hybrid's block is rounded up to (16 in HybridAttentionMambaModelConfig,
# vllm/model_executor/models/config.py at commit 0144dd5b: "some attention backends (e.g. FA) only
# support setting block size to multiple of 16"; newer releases take the backend's kernel block
# alignment, not read here).
HYBRID_BLOCK_ALIGNMENT = 16


def hybrid_block(attention_token_bytes: int, mamba_page: int, block: int) -> int:
    """The attention block vLLM sets so that one attention page holds one Mamba state: the
    configured block, raised to 16 x cdiv(mamba page, 16 x attention bytes per token) when
    smaller; the Mamba page is then padded to the attention page (mamba_page_size_padded)."""
    needed = HYBRID_BLOCK_ALIGNMENT * ceil_div(
        mamba_page, HYBRID_BLOCK_ALIGNMENT * attention_token_bytes
    )
    return max(block, needed)


# MambaSpec.max_memory_usage_bytes pages per request and layer in mamba_cache_mode "none"
# (kv_cache_interface.py at 001cabc1; the default for hybrid models: prefix caching off).
MAMBA_PAGES = {"none": 1}


def capacity(lay: Layout, available: int, max_model_len: int, version: str) -> dict:
    """vLLM's startup figures for `available` bytes of KV cache."""
    blocks = lay.num_blocks(available)
    concurrency = blocks / lay.blocks_per_request
    if reports_concurrency_tokens(version):
        tokens = int(concurrency * max_model_len)
    else:
        tokens = blocks // len(lay.groups) * lay.block
    return {"num_blocks": blocks, "kv_tokens": tokens, "max_concurrency": concurrency}
