"""A deterministic English-like text for the lstm problem (ADBench reads a text file
we do not have, so we make one): words drawn from a fixed vocabulary with a seeded
generator, in sentences with capitals and punctuation."""
from __future__ import annotations

import numpy as np

VOCABULARY = (
    "the of and to in is that it was for on are as with his they at be this from have "
    "or one had by word but not what all were we when your can said there use an each "
    "which she do how their if will up other about out many then them these so some her "
    "would make like him into time has look two more write go see number no way could "
    "people my than first water been call who oil its now find long down day did get come "
    "made may part over new sound take only little work know place year live me back give "
    "most very after thing our just name good sentence man think say great where help "
    "through much before line right too mean old any same tell boy follow came want show "
    "also around form three small set put end does another well large must big even such "
    "because turn here why ask went men read need land different home us move try kind "
    "hand picture again change off play spell air away animal house point page letter "
    "mother answer found study still learn should world high every near add food between "
    "own below country plant last school father keep tree never start city earth eye light "
    "thought head under story saw left few while along might close something seem next "
    "hard open example begin life always those both paper together got group often run"
).split()


def text(length: int, seed: int = 31337) -> str:
    rng = np.random.default_rng(seed)
    out, size = [], 0
    while size < length:
        words = [VOCABULARY[i] for i in rng.integers(0, len(VOCABULARY), rng.integers(4, 14))]
        words[0] = words[0].capitalize()
        if rng.random() < 0.3:
            cut = int(rng.integers(1, len(words)))
            words[cut - 1] += ","
        sentence = " ".join(words) + (". " if rng.random() < 0.85 else "? ")
        out.append(sentence)
        size += len(sentence)
    return "".join(out)[:length]


def char_bits(txt: str) -> int:
    """ADBench's width of one character: ceil(log2(largest code point))."""
    return int(np.ceil(np.log2(max(ord(c) for c in txt))))


def to_matrix(txt: str, bits: int) -> np.ndarray:
    """One row per character: its code point's binary digits, most significant first."""
    return np.array([[int(b) for b in bin(ord(c))[2:].zfill(bits)] for c in txt], dtype=np.float64)
