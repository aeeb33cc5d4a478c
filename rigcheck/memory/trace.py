"""Parameters and activations read off the real model: transformers builds the architecture from
its config.json on the meta device (shapes, no weights), its parameters are counted by module,
and one forward pass on meta tensors records every tensor autograd saves for the backward pass
(torch.autograd.graph.saved_tensors_hooks), layer by layer. Any architecture transformers can
build is then exact by construction; the hand formulas (architecture.py, activations.py) stay the
fallback without transformers, and tests/memory/test_trace.py holds them to this.

torch and transformers are imported inside the functions: importing rigcheck.memory stays light.
"""

import warnings
from contextlib import contextmanager
from dataclasses import dataclass

from rigcheck.memory import traced_groups
from rigcheck.memory.errors import ConfigError

# rigcheck's attention names -> transformers' attn_implementation. On meta, SDPA dispatches to
# its math path (which keeps the s x s weights) and flash_attention_2 needs a GPU package, so
# "flash" is traced with a stand-in that keeps what flash_attn keeps (_flash_attention below).
FLASH = "rigcheck_meta_fa2"  # a name without "flash": transformers would look for a kernel
ATTENTION_IMPLEMENTATION = {"eager": "eager", "flash": FLASH}
DTYPES = {2: "bfloat16", 4: "float32"}
# Which part a parameter belongs to, by the first of these in its dotted name.
_PARTS = (
    ("projector", ("multi_modal_projector", "visual.merger", "mm_projector")),
    ("vision", ("vision", "visual", "image_")),
    ("experts", (".experts.",)),
)


def available() -> bool:
    """Whether torch and transformers can be imported here (the trace needs both)."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError:
        return False
    return True


def peft_available() -> bool:
    """Whether peft can be imported here (for the traced LoRA counts)."""
    try:
        import peft  # noqa: F401
    except ImportError:
        return False
    return True


@dataclass(frozen=True)
class TracedParameters:
    """Parameters of the real model, by part; active: those one token uses (MoE)."""

    total: int
    active: int
    parts: dict  # text, vision, projector, experts -> count
    model_class: str
    groups: tuple = ()  # every parameter as TensorGroups (traced_groups.tensor_groups)


@dataclass(frozen=True)
class TracedActivations:
    """Bytes autograd saved in one forward pass of the whole model, per decoder layer and outside
    the layers (embedding, final norm, lm_head, loss)."""

    layers: tuple[int, ...]
    outside: int
    attention: str  # the attn_implementation traced
    layer_input: int  # bytes of one layer's input: all full recomputation keeps of a layer

    @property
    def total(self) -> int:
        return sum(self.layers) + self.outside

    @property
    def full_recompute_peak(self) -> int:
        """Full recomputation: every layer's input, the output layers, and the largest layer
        recomputed in the backward pass (the formula's peak, activations.activation_bytes)."""
        inputs = len(self.layers) * self.layer_input
        return inputs + self.outside + max(self.layers) - self.layer_input


def _flash_attention(module, query, key, value, attention_mask, **kwargs):
    """transformers' attention-function signature ((b, h, s, d) in, (b, s, h, d) out), keeping
    for backward what flash_attn 2's FlashAttnFunc keeps (flash_attn/flash_attn_interface.py:
    ctx.save_for_backward(q, k, v, out_padded, softmax_lse, rng_state)): q, k and v (GQA
    unrepeated), the output and an fp32 logsumexp per head and row; the 16-byte rng state is left
    out. Nothing is computed: on meta only the shapes exist."""
    import torch

    class FlashAttention(torch.autograd.Function):
        @staticmethod
        def forward(ctx, q, k, v):
            b, h, s, _ = q.shape
            out = q.new_empty(b, s, h, v.shape[-1])
            ctx.save_for_backward(q, k, v, out, q.new_empty(b, h, s, dtype=torch.float32))
            return out

        @staticmethod
        def backward(ctx, grad):  # never run: the trace only counts what is saved
            raise NotImplementedError("the meta flash stand-in has no backward")

    return FlashAttention.apply(query, key, value), None


def _register_flash() -> None:
    from transformers import AttentionInterface

    AttentionInterface.register(FLASH, _flash_attention)


def hf_config(config: dict):
    """transformers' configuration object for a config.json's fields (no Hub access)."""
    import transformers

    fields = {k: v for k, v in config.items() if k not in ("transformers_version", "auto_map")}
    family = fields.pop("model_type", None)
    if family not in transformers.CONFIG_MAPPING:
        raise ConfigError(
            f"model_type {family!r} is unknown to transformers {transformers.__version__}: "
            "give --params for model state only"
        )
    fields.pop("quantization_config", None)  # the meta model is built unquantized
    cls = transformers.CONFIG_MAPPING[family]
    # as from_pretrained reads a config.json: {"__float__": "Infinity"} back to a float
    fields = cls._decode_special_floats(fields)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return cls.from_dict(fields)
        except Exception as exc:  # transformers' validators raise many kinds
            raise ConfigError(
                f"transformers {transformers.__version__} refuses this {family} config.json: "
                f"{_first_line(exc)}"
            ) from None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0][:200]}" if lines else type(exc).__name__


def _model_class(config):
    """The model class a checkpoint of this config loads as: image-text-to-text when the config
    has a vision tower (so its parameters count), else causal LM."""
    import transformers

    auto = (transformers.AutoModelForCausalLM, transformers.AutoModelForImageTextToText)
    if getattr(config, "vision_config", None) is not None:
        auto = auto[::-1]
    for cls in auto:  # a family only image-text-to-text maps (Chameleon) is built as that
        if type(config) in cls._model_mapping:
            return cls
    raise ConfigError(f"transformers cannot build {config.model_type!r} as a language model")


def build_meta(config: dict, element_bytes: int = 2, attention: str = "flash"):
    """The real model on the meta device, in training mode."""
    import torch

    hf = hf_config(config)
    cls = _model_class(hf)
    _register_flash()
    dtype = getattr(torch, DTYPES[element_bytes])
    try:
        model = _from_config(cls, hf, dtype, ATTENTION_IMPLEMENTATION[attention])
    except Exception:  # e.g. GPT-Neo's own attention table has no stand-in
        if attention == "eager":
            raise
        # the parameters do not depend on the attention: count them on the eager build (the
        # trace then says flash was not traced), or refuse with transformers' own reason
        model = _from_config(cls, hf, dtype, "eager")
    return model.train()


def _from_config(cls, hf, dtype, implementation: str):
    """transformers' model on the meta device; any failure is one line saying why."""
    import torch

    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        try:
            return cls.from_config(hf, dtype=dtype, attn_implementation=implementation)
        except Exception as exc:  # transformers' model code raises any kind
            raise ConfigError(
                f"transformers cannot build {hf.model_type!r}: {_first_line(exc)}"
            ) from None


def _part(name: str) -> str:
    for part, marks in _PARTS:
        if any(mark in name for mark in marks):
            return part
    return "text"


def _routing(config: dict) -> tuple[int, int]:
    """(routed experts, experts per token) of the text model; (0, 0) when dense."""
    text = config.get("text_config") or config
    experts = (
        text.get("num_local_experts") or text.get("num_experts") or text.get("n_routed_experts")
    )
    return int(experts or 0), int(text.get("num_experts_per_tok") or 0)


def count_parameters(model, config: dict) -> TracedParameters:
    """Parameters by part (a tied matrix once, as torch counts); active per token: every
    parameter but the routed experts a token is not sent to."""
    parts = {"text": 0, "vision": 0, "projector": 0, "experts": 0}
    for name, p in model.named_parameters():
        parts[_part(name)] += p.numel()
    experts, top_k = _routing(config)
    idle = parts["experts"] * (experts - top_k) // experts if experts else 0
    total = sum(parts.values())
    groups = traced_groups.tensor_groups(model)
    return TracedParameters(total, total - idle, parts, type(model).__name__, groups)


def decoder_layers(model):
    """The text model's decoder layers, outside any vision tower: the first ModuleList named
    'layers', else the text ModuleList holding the most parameters (GPT-2 and Bloom's 'h',
    BERT's 'layer', MPT's 'blocks')."""
    import torch

    lists = [
        (name, m)
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.ModuleList) and len(m) and _part(name + ".") == "text"
    ]
    named = [m for name, m in lists if name.rsplit(".", 1)[-1] == "layers"]
    if named:
        return named[0]
    if not lists:
        raise ConfigError(f"no decoder layers found in {type(model).__name__}")
    return max(lists, key=lambda nm: sum(p.numel() for p in nm[1].parameters()))[1]


@contextmanager
def _layer_tracker(layers):
    """Which decoder layer is running (None: outside every layer), via forward hooks."""
    current = {"layer": None}
    handles = []
    for i, layer in enumerate(layers):
        handles.append(layer.register_forward_pre_hook(lambda *_, i=i: current.update(layer=i)))
        handles.append(layer.register_forward_hook(lambda *_: current.update(layer=None)))
    try:
        yield current
    finally:
        for h in handles:
            h.remove()


def trace_activations(model, batch: int, seq: int) -> TracedActivations:
    """Saved bytes of one training forward pass (input ids and labels, as a user runs it): each
    distinct storage once, parameters excluded, charged to the layer running when it is first
    saved. On meta tensors nothing is computed: a full-size model traces in about a second."""
    import torch

    layers = decoder_layers(model)
    params = {p.untyped_storage()._cdata for p in model.parameters()}
    saved: dict[int, tuple[int | None, int]] = {}
    ids = torch.zeros(batch, seq, dtype=torch.long, device="meta")
    with _layer_tracker(layers) as current:

        def pack(t):
            storage = t.untyped_storage()
            key = storage._cdata
            if key not in params and key not in saved:
                saved[key] = (current["layer"], storage.nbytes())
            return t

        with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            _forward(model, ids)
    per_layer = [0] * len(layers)
    outside = 0
    for layer, n in saved.values():
        if layer is None:
            outside += n
        else:
            per_layer[layer] += n
    implementation = getattr(model.config, "_attn_implementation", "?")
    hidden = model.config.get_text_config().hidden_size
    element = next(model.parameters()).element_size()
    layer_input = batch * seq * hidden * element
    return TracedActivations(tuple(per_layer), outside, implementation, layer_input)


def _forward(model, ids) -> None:
    try:
        model(input_ids=ids, labels=ids)
    except Exception as exc:  # the parameters stand; the activations are not traced
        # a data-dependent operation (nonzero, item) has no meta result: say so, do not guess
        raise ConfigError(
            f"the meta-device trace of {type(model).__name__} failed: {_first_line(exc)}"
        ) from None


@dataclass(frozen=True)
class Trace:
    """What the trace of one config gives: parameters and, when traced, activations."""

    parameters: TracedParameters
    activations: TracedActivations | None
    activation_problem: str = ""  # why activations were not traced
    lora_trainable: int | None = None  # PEFT's trainable count on this model, when asked


def _peft_targets(targets: str | tuple[str, ...]) -> str | list[str]:
    """rigcheck's matrix names as the module names PEFT matches (q -> q_proj, kv_a ->
    kv_a_proj_with_mqa); all-linear as is."""
    from rigcheck.memory.lora import ALIASES

    if isinstance(targets, str):  # all-linear, or PEFT's own default as a regular expression
        return targets
    names = {short: module for module, short in ALIASES.items()}
    return [names.get(t, t) for t in targets]


def lora_trainable(config: dict, rank: int, targets: str | tuple[str, ...]) -> int:
    """Trainable parameters PEFT's get_peft_model gives this model (adapters on meta tensors):
    under all-linear that includes a vision tower's and a projector's linears."""
    import peft

    model = build_meta(config)
    lora = peft.LoraConfig(r=rank, target_modules=_peft_targets(targets))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            wrapped = peft.get_peft_model(model, lora)
        except ValueError as exc:  # e.g. a target module the model does not have
            raise ConfigError(f"PEFT cannot adapt this model: {exc}") from None
    return sum(p.numel() for p in wrapped.parameters() if p.requires_grad)


def trace(
    config: dict, batch: int = 1, seq: int = 2048, element_bytes: int = 2, attention: str = "flash"
) -> Trace:
    """Build the config's model on meta, count its parameters and trace its activations."""
    model = build_meta(config, element_bytes, attention)
    params = count_parameters(model, config)
    built = getattr(model.config, "_attn_implementation", None)
    if built != ATTENTION_IMPLEMENTATION[attention]:
        why = f"{type(model).__name__} takes no {attention} stand-in on meta: try --attention eager"
        return Trace(params, None, why)
    try:
        acts = trace_activations(model, batch, seq)
    except ConfigError as exc:
        return Trace(params, None, str(exc))
    return Trace(params, acts)


def summary(result: Trace) -> dict:
    """The trace as JSON: the model class, parameters by part, what was traced and what not."""
    out = {"model_class": result.parameters.model_class, "parts": dict(result.parameters.parts)}
    if result.activations is not None:
        acts = result.activations
        out.update(attention=acts.attention, layer_bytes=list(acts.layers), outside=acts.outside)
    else:
        out["activations_not_traced"] = result.activation_problem
    return out
