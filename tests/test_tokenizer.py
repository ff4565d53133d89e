"""Tests of the word-level tokenizer and its shipped vocabulary."""

from __future__ import annotations

import json
from importlib import resources

import pytest

from infer_lib.numpy_model.tokenizer import EOS_TOKEN, Tokenizer, load_tokenizer, split_words


def corpus_lines() -> list[str]:
    text = resources.files("infer_lib").joinpath("data", "corpus.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def test_split_keeps_case_and_separates_punctuation() -> None:
    assert split_words("Is tomato a fruit?") == ["Is", "tomato", "a", "fruit", "?"]
    assert split_words("Yes, a seed.") == ["Yes", ",", "a", "seed", "."]


def test_every_corpus_line_round_trips() -> None:
    tokenizer = load_tokenizer()
    for line in corpus_lines():
        assert tokenizer.decode(tokenizer.encode(line)) == line


def test_vocabulary_matches_the_shipped_files() -> None:
    tokenizer = load_tokenizer()
    tokens = json.loads(resources.files("infer_lib").joinpath("data", "vocab.json").read_text(encoding="utf-8"))
    assert tokenizer.vocab_size == len(tokens) == len(set(tokens))
    assert tokenizer.token(tokenizer.eos_id) == EOS_TOKEN == "<eos>"
    corpus_words = {word for line in corpus_lines() for word in split_words(line)}
    assert set(tokens) == corpus_words | {EOS_TOKEN}


def test_case_matters() -> None:
    tokenizer = load_tokenizer()
    assert tokenizer.encode("Is") != tokenizer.encode("is")


def test_decode_puts_no_space_before_punctuation_and_shows_eos() -> None:
    tokenizer = load_tokenizer()
    token_ids = tokenizer.encode("Yes, a tomato is a fruit.") + [tokenizer.eos_id]
    assert tokenizer.decode(token_ids) == "Yes, a tomato is a fruit. <eos>"


def test_unknown_word_names_the_word() -> None:
    tokenizer = load_tokenizer()
    with pytest.raises(ValueError, match=r"unknown word 'xylophone'.*corpus"):
        tokenizer.encode("Is xylophone a fruit?")


def test_token_out_of_range_is_an_error() -> None:
    tokenizer = load_tokenizer()
    with pytest.raises(ValueError, match="token_id"):
        tokenizer.token(tokenizer.vocab_size)


def test_ids_do_not_depend_on_line_order() -> None:
    lines = ["b a .", "c ?"]
    forward = Tokenizer.from_corpus(lines)
    backward = Tokenizer.from_corpus(lines[::-1])
    assert forward.encode("a b c . ?") == backward.encode("a b c . ?")
    assert forward.eos_id == 0 and forward.vocab_size == 6


def test_tokens_must_start_with_eos() -> None:
    with pytest.raises(ValueError, match="<eos>"):
        Tokenizer(["a", "<eos>"])
