"""The word-level tokenizer of the course's tiny model.

A real model splits text into sub-word pieces; the tiny model only has to
read and write the sentences of its own corpus, so one token per word or
punctuation mark is enough and keeps every token readable. Case is kept:
``"Is"`` and ``"is"`` are different tokens.

Unknown words are an error (not a silent ``<unk>``): a prompt with a word the
model never saw would give meaningless output, and the error tells the reader
which word to change.

Introduced in ch-prefill-decode.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from importlib import resources

EOS_TOKEN = "<eos>"

# A word is a run of letters or digits; every other visible character is a
# token on its own. "<eos>" is matched first so it survives a round trip.
_TOKEN_PATTERN = re.compile(r"<eos>|[A-Za-z0-9]+|[^\sA-Za-z0-9]")

# Punctuation that attaches to the word before it when decoding.
_NO_SPACE_BEFORE = frozenset(".,?!;:)")


def split_words(text: str) -> list[str]:
    """Split text into word and punctuation tokens (strings, case kept).

    ``"Is tomato a fruit?"`` -> ``["Is", "tomato", "a", "fruit", "?"]``.

    Introduced in ch-prefill-decode.
    """
    return _TOKEN_PATTERN.findall(text)


class Tokenizer:
    """Maps words and punctuation marks to integer ids and back.

    Id 0 is always ``<eos>``; the other ids follow the order of ``tokens``.

    Introduced in ch-prefill-decode.
    """

    def __init__(self, tokens: Sequence[str]) -> None:
        tokens = list(tokens)
        if not tokens or tokens[0] != EOS_TOKEN:
            raise ValueError(f"tokens must start with {EOS_TOKEN!r} (id 0), got {tokens[:1]!r}.")
        if len(set(tokens)) != len(tokens):
            raise ValueError("tokens must not contain duplicates.")
        self._tokens: list[str] = tokens
        self._ids: dict[str, int] = {token: token_id for token_id, token in enumerate(tokens)}
        self.vocab_size: int = len(tokens)
        self.eos_id: int = 0

    @classmethod
    def from_corpus(cls, lines: Iterable[str]) -> Tokenizer:
        """Build the vocabulary of every token in ``lines``: ``<eos>`` then the rest sorted.

        Sorting makes the ids independent of line order, so rebuilding from the
        same corpus always gives the same ids.

        Introduced in ch-prefill-decode.
        """
        words = {word for line in lines for word in split_words(line)}
        words.discard(EOS_TOKEN)
        return cls([EOS_TOKEN, *sorted(words)])

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``; raises ValueError naming the first unknown word.

        Introduced in ch-prefill-decode.
        """
        token_ids = []
        for word in split_words(text):
            token_id = self._ids.get(word)
            if token_id is None:
                raise ValueError(
                    f"unknown word {word!r} in text: the tiny model only knows the "
                    f"{self.vocab_size} tokens of its shipped corpus (infer_lib/data/corpus.txt); "
                    f"case matters, so try another spelling or a word from the corpus."
                )
            token_ids.append(token_id)
        return token_ids

    def token(self, token_id: int) -> str:
        """The text of one token id.

        Introduced in ch-prefill-decode.
        """
        token_id = int(token_id)
        if not 0 <= token_id < self.vocab_size:
            raise ValueError(f"token_id must be in [0, {self.vocab_size - 1}], got {token_id}.")
        return self._tokens[token_id]

    def decode(self, token_ids: Iterable[int]) -> str:
        """Readable text of ``token_ids``: words joined by spaces, none before punctuation.

        ``<eos>`` is kept as the text ``"<eos>"`` so the reader sees where the
        model stopped; drop it from ``token_ids`` first to hide it.

        Introduced in ch-prefill-decode.
        """
        text = ""
        for token_id in token_ids:
            word = self.token(token_id)
            if text and word not in _NO_SPACE_BEFORE:
                text += " "
            text += word
        return text

    def save(self, path: str) -> None:
        """Write the vocabulary as a JSON list of tokens (index = id).

        Introduced in ch-prefill-decode.
        """
        with open(path, "w", encoding="utf-8") as file:
            json.dump(self._tokens, file, indent=0, ensure_ascii=False)
            file.write("\n")


def load_tokenizer() -> Tokenizer:
    """The tokenizer of the shipped tiny model, read from ``infer_lib/data/vocab.json``.

    Introduced in ch-prefill-decode.
    """
    text = resources.files("infer_lib").joinpath("data", "vocab.json").read_text(encoding="utf-8")
    return Tokenizer(json.loads(text))
