"""A tiny GGUF chat model, written here and never downloaded, for the real llama.cpp server
the real-server tests start (``tests/llama_server.py``).

:func:`write_tiny_model` is a pure function of its path: the same bytes every time (the
weights come from a fixed seed and a few fixed rules), about 0.4 MB. The model is
llama.cpp's ``llama`` architecture: 2 layers, 64 dimensions, 4 heads, a 64-wide
feed-forward, every tensor float32.

Its vocabulary can spell anything: sentencepiece-style (``tokenizer.ggml.model`` ``llama``),
every printable ASCII character, ``▁`` for a space, and the 256 byte tokens for everything
else (a newline, ``×``, ...), so the server's JSON grammars always have a token to go on.
Its chat template is ChatML with Hermes-style tools (the ``act`` function's signature in a
``<tools>`` block of a system turn), which llama-cpp-python renders with its Jinja
formatter (``chat_template.default``: the template is not one it knows by name).

What it writes: the weights are random (seed :data:`SEED`, small) except for a few
planted ones, which make it a player that is always legal in Liar's Dice, whatever shape
the request takes:

- ``Legal now: you must bid`` (the arena's turn line when the seat opens a deal) is one
  token, a user-defined one, which the tokenizer finds in the text itself. One attention
  head of the last layer looks for it, wherever it is (its query and key sit in the
  head's slowest rotary pair, which does not turn over any context: attention by
  content alone), and writes "opening" into the residual stream.
- Three tokens make whole replies: :data:`OPEN`'s two (the lowest opening bid, always
  legal when opening) and :data:`CHALLENGE` (always legal when a bid stands). The output
  layer picks OPEN's first half after the marker, CHALLENGE without it, OPEN's second
  half after its first, and the end of turn (``<|im_end|>``, the EOS) after a whole
  reply. The margins are 10+ logits: sampling at any temperature the
  server uses picks the same token, so the same request gets the same reply.

So a forced ``act`` tool (grammar-constrained by the server) comes back as a tool call whose
arguments are one of those two objects, and a text reply is the object itself.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

SEED = 20261205
"""The seed of the random part of the weights."""
N_EMBD = 64
N_HEAD = 4
HEAD_DIM = N_EMBD // N_HEAD
N_FF = 64
N_LAYER = 2
CONTEXT = 32768
"""The context the model declares; the server is started with its own ``n_ctx``."""

MARKER = "Legal now: you must bid"
"""The arena's turn line when the seat must open (``plugins/model_seat/prompt.py``)."""
OPEN = ('{"action": "bid", ', '"quantity": 1, "face": 1}')
"""The reply when opening, in two tokens: the lowest bid, which is legal on any opening.
(Two, because llama-cpp-python detokenizes into 32 bytes a token and drops a longer one.)"""
CHALLENGE = '{"action": "challenge"}'
"""The reply when a bid stands: a challenge, which is legal then."""
BABBLE = ('{"action": "challenge", ', '"notes": "', "a")
"""What the babbling model (:func:`write_babbling_model`) writes: an action whose notes never
end, ``a`` after ``a`` (a string any JSON grammar lets go on), until the server's cap."""

BOS, EOS = "<s>", "<|im_end|>"
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% if tools %}<|im_start|>system\n"
    "You may call one or more functions to assist with the user query. "
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n"
    "{% for tool in tools %}{{ tool | tojson }}\n{% endfor %}"
    "</tools>\nFor each function call, return a json object with function name and arguments "
    "within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n'
    "{% endif %}"
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + (message['content'] or '') + '<|im_end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
"""ChatML with Hermes-style tools (as Qwen's and NousResearch's Hermes templates write them)."""

# Token types, as gguf.TokenType numbers them (NORMAL 1, UNKNOWN 2, CONTROL 3,
# USER_DEFINED 4, BYTE 6): the module imports gguf only inside the writer.
_NORMAL, _UNKNOWN, _CONTROL, _USER_DEFINED, _BYTE = 1, 2, 3, 4, 6


def vocabulary() -> list[tuple[str, int]]:
    """Every token, in id order, with its type."""
    tokens = [("<unk>", _UNKNOWN), (BOS, _CONTROL), ("</s>", _CONTROL)]
    tokens += [(f"<0x{byte:02X}>", _BYTE) for byte in range(256)]
    tokens += [(chr(code), _NORMAL) for code in range(0x21, 0x7F)]
    tokens += [("\u2581", _NORMAL)]  # sentencepiece's space
    tokens += [("<|im_start|>", _CONTROL), (EOS, _CONTROL), (MARKER, _USER_DEFINED)]
    tokens += [(_piece(text), _NORMAL) for text in (*OPEN, CHALLENGE, *BABBLE[:2])]
    return tokens


def _piece(text: str) -> str:
    """A token's text as sentencepiece stores it (a space is ``▁``)."""
    return text.replace(" ", "\u2581")


def _weights(tokens: list[tuple[str, int]], babble: bool) -> dict[str, np.ndarray]:
    """Every tensor, in numpy's (out, in) layout, as llama.cpp's converters write them."""
    rng = np.random.default_rng(SEED)
    ids = {text: i for i, (text, _) in enumerate(tokens)}
    marker, eos = ids[MARKER], ids[EOS]
    first, second, challenge = (ids[_piece(text)] for text in (*OPEN, CHALLENGE))
    opens, notes, more = (ids[_piece(text)] for text in BABBLE)
    n_vocab = len(tokens)

    def noise(*shape: int, scale: float = 0.01) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    # The residual stream's planted dimensions: every token embeds as 1 on CONST and 1 on
    # exactly one of MARK/REPLY/OTHER/HALF (so all have the same norm); FLAG is written by
    # the marker head.
    # The babbling model's: OPENS after its first token, NOTES inside its notes.
    const, mark, reply, other, flag, half, opened, inside = 0, 1, 2, 3, 4, 5, 6, 7
    embed = noise(n_vocab, N_EMBD)
    embed[:, :8] = 0
    embed[:, const] = 1
    embed[:, other] = 1
    planted = [(marker, mark), (first, half), (second, reply), (challenge, reply)]
    if babble:
        planted += [(opens, opened), (notes, inside), (more, inside)]
    for token, dim in planted:
        embed[token, other] = 0
        embed[token, dim] = 1

    tensors: dict[str, np.ndarray] = {"token_embd.weight": embed}
    for layer in range(N_LAYER):
        q, k, v, o = (noise(N_EMBD, N_EMBD) for _ in range(4))
        # Nothing random reads or writes the planted dimensions.
        for matrix in (q, k, v):
            matrix[:, :8] = 0
        o[:8, :] = 0
        if layer == N_LAYER - 1:
            # Head 0 finds the marker: query and key in the head's last rotary pair
            # (dimensions 14 and 15), whose frequency is freq_base ** (-14/16): with a freq
            # base of 1e30 it turns by 1e-26 radians a position, so the score is the content's
            # alone. Score 8 * 4 = 32 on the marker, 0 elsewhere; the value carries MARK.
            q[:HEAD_DIM, :] = 0
            k[:HEAD_DIM, :] = 0
            v[:HEAD_DIM, :] = 0
            q[HEAD_DIM - 2, const] = 4.0
            k[HEAD_DIM - 2, mark] = 1.0
            v[0, mark] = 1.0
            o[:, :HEAD_DIM] = 0
            o[flag, 0] = 1.0 / np.sqrt(N_EMBD / 2)  # back to about 1 on FLAG
        tensors[f"blk.{layer}.attn_norm.weight"] = np.ones(N_EMBD, np.float32)
        tensors[f"blk.{layer}.attn_q.weight"] = q
        tensors[f"blk.{layer}.attn_k.weight"] = k
        tensors[f"blk.{layer}.attn_v.weight"] = v
        tensors[f"blk.{layer}.attn_output.weight"] = o
        tensors[f"blk.{layer}.ffn_norm.weight"] = np.ones(N_EMBD, np.float32)
        gate, up, down = noise(N_FF, N_EMBD), noise(N_FF, N_EMBD), noise(N_EMBD, N_FF)
        down[:8, :] = 0
        tensors[f"blk.{layer}.ffn_gate.weight"] = gate
        tensors[f"blk.{layer}.ffn_up.weight"] = up
        tensors[f"blk.{layer}.ffn_down.weight"] = down
    tensors["output_norm.weight"] = np.ones(N_EMBD, np.float32)
    # The output layer reads the planted dimensions (each about 5.7 after the final norm,
    # 4.6 with FLAG set): CHALLENGE by default, OPEN's first half with FLAG, its second
    # half after the first, EOS after a whole reply, any other token far below (by 11
    # logits or more in every case).
    out = noise(n_vocab, N_EMBD, scale=0.05)
    out[:, :8] = 0
    out[:, const] = -2.0
    columns = [const, reply, flag, half]
    out[challenge, columns] = [3.0, -6.0, -6.0, -6.0]
    out[first, columns] = [1.0, -6.0, 4.0, -6.0]
    out[second, columns] = [-4.0, -6.0, 0.0, 8.0]
    out[eos, columns] = [0.0, 8.0, 0.0, -6.0]
    if babble:  # the first babbling token, then the notes' opening, then `a` for ever
        out[[challenge, first, second, eos], const] = -2.0
        out[[challenge, first, second, eos], 1:8] = 0
        columns = [const, opened, inside]
        out[opens, columns] = [3.0, -6.0, -6.0]
        out[notes, columns] = [-4.0, 10.0, -6.0]
        out[more, columns] = [-4.0, -6.0, 10.0]
    tensors["output.weight"] = out
    return tensors


def write_tiny_model(path: str | os.PathLike[str]) -> Path:
    """Write the model to ``path`` (replacing it) and return the path; the bytes depend on
    nothing but this module (and the ``gguf`` package's format)."""
    return _write(Path(path), babble=False)


def write_babbling_model(path: str | os.PathLike[str]) -> Path:
    """The same model, but one that never stops: it writes :data:`BABBLE` (an ``act``
    whose notes go on for ever, within any grammar the server holds it to) until the
    server's output cap, for the tests of a decision's deadline."""
    return _write(Path(path), babble=True)


def _write(path: Path, babble: bool) -> Path:
    import gguf

    tokens = vocabulary()
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_name("liars-arena tiny test model" + (", babbling" if babble else ""))
    writer.add_context_length(CONTEXT)
    writer.add_embedding_length(N_EMBD)
    writer.add_block_count(N_LAYER)
    writer.add_feed_forward_length(N_FF)
    writer.add_head_count(N_HEAD)
    writer.add_head_count_kv(N_HEAD)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_rope_dimension_count(HEAD_DIM)
    writer.add_rope_freq_base(1e30)
    writer.add_vocab_size(len(tokens))
    writer.add_file_type(0)  # all float32
    writer.add_tokenizer_model("llama")
    writer.add_token_list([text for text, _ in tokens])
    writer.add_token_scores([0.0] * len(tokens))
    writer.add_token_types([kind for _, kind in tokens])
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(tokens.index((EOS, _CONTROL)))
    writer.add_add_bos_token(False)  # the template writes it
    writer.add_add_eos_token(False)
    writer.add_add_space_prefix(False)
    writer.add_chat_template(CHAT_TEMPLATE)
    for name, tensor in _weights(tokens, babble).items():
        writer.add_tensor(name, np.ascontiguousarray(tensor, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


if __name__ == "__main__":  # python tests/tiny_gguf.py OUT.gguf
    import sys

    written = write_tiny_model(sys.argv[1])
    print(json.dumps({"path": str(written), "bytes": written.stat().st_size}))
