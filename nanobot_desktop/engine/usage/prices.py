"""What a model call costs: a price per million tokens for input, output, cache reads and cache writes.

The defaults are the public list prices (US dollars) of common hosted models at the time of writing;
the person edits them, or adds their own models, on the Usage page (kept in desktop.json as
`usagePrices`). A model with no price has no cost: it is shown as "no price", never as zero, since
an unknown price is not a free one (a local server is free only once someone says so with a 0).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PER_TOKENS = 1_000_000


@dataclass(frozen=True, slots=True)
class ModelPrice:
    """US dollars per million tokens. A cache price of None bills those tokens as ordinary input."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None

    def cost(self, input_tokens: int, output_tokens: int, cache_read: int | None = None,
             cache_write: int | None = None) -> float:
        """`input_tokens` includes the cached ones (as endpoints count them)."""
        read, write = cache_read or 0, cache_write or 0
        plain = max(0, input_tokens - read - write)
        total = plain * self.input + output_tokens * self.output
        total += read * (self.input if self.cache_read is None else self.cache_read)
        total += write * (self.input if self.cache_write is None else self.cache_write)
        return total / PER_TOKENS


def _p(prompt: float, output: float, cache_read: float | None = None, cache_write: float | None = None) -> ModelPrice:
    return ModelPrice(prompt, output, cache_read, cache_write)


DEFAULT_PRICES: dict[str, ModelPrice] = {
    "gpt-5": _p(1.25, 10.0, 0.125), "gpt-5-mini": _p(0.25, 2.0, 0.025), "gpt-5-nano": _p(0.05, 0.40, 0.005),
    "gpt-4.1": _p(2.0, 8.0, 0.50), "gpt-4.1-mini": _p(0.40, 1.60, 0.10), "gpt-4.1-nano": _p(0.10, 0.40, 0.025),
    "gpt-4o": _p(2.50, 10.0, 1.25), "gpt-4o-mini": _p(0.15, 0.60, 0.075),
    "o3": _p(2.0, 8.0, 0.50), "o4-mini": _p(1.10, 4.40, 0.275),
    "claude-opus-4": _p(15.0, 75.0, 1.50, 18.75), "claude-sonnet-4": _p(3.0, 15.0, 0.30, 3.75),
    "claude-haiku-4": _p(1.0, 5.0, 0.10, 1.25), "claude-3-5-haiku": _p(0.80, 4.0, 0.08, 1.0),
    "deepseek-chat": _p(0.28, 0.42, 0.028), "deepseek-reasoner": _p(0.28, 0.42, 0.028),
    "gemini-2.5-pro": _p(1.25, 10.0, 0.31), "gemini-2.5-flash": _p(0.30, 2.50, 0.075),
}
_SEPARATORS = "-.:@_"


def model_key(model: str) -> str:
    """The name prices are looked up by: lower case, without a gateway's "vendor/" prefix."""
    return model.strip().lower().rsplit("/", 1)[-1]


def price_for(model: str, table: Mapping[str, ModelPrice]) -> ModelPrice | None:
    """The model's price: its own entry, else the longest entry it is a dated or versioned variant of
    ("gpt-4o-2024-08-06" → "gpt-4o", "claude-sonnet-4.5" → "claude-sonnet-4"), else None."""
    key = model_key(model)
    if key in table:
        return table[key]
    best = ""
    for name in table:
        if len(name) > len(best) and key.startswith(name) and key[len(name)] in _SEPARATORS:
            best = name
    return table[best] if best else None


def price_table(overrides: Mapping[str, ModelPrice]) -> dict[str, ModelPrice]:
    """The defaults with the person's own prices over them (keys normalised as `model_key`)."""
    table = dict(DEFAULT_PRICES)
    table.update({model_key(name): price for name, price in overrides.items()})
    return table
