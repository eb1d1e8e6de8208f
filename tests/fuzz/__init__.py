"""A fuzzer for srcgrad's gradients (issue 11): random valid NumPy programs, compared with NumPy,
central finite differences and autograd.

- `programs.py`: what programs are drawn (the hypothesis strategy `programs()` and
  `random_program(random.Random)`), built by `statements.py` and `exprs.py` over the tree of
  `tree.py`, with values kept bounded by `bounds.py`; `draw.py` is the randomness interface.
- `oracle.py`: runs one program and classifies the result (ok, kink, clear_error, invalid,
  wrong_value, wrong_gradient, crash).
- `campaign.py`: the long run in isolated worker processes,
  `python -m tests.fuzz.campaign --programs 10000 --jit-fraction 0.05 --seed 0 --out /tmp/fuzz`.
- `checkpointed.py`: the same programs with their top-level loops marked `srcgrad.checkpointed`
  (`campaign --checkpoint`), against the unmarked programs' gradients (issue 16).
- `accumulators.py`, `indices.py`, `products.py`, `sums.py`: targeted campaigns (inner-loop
  accumulators, loops indexing at offsets, recurrent products, sum loops reversed in
  place) sharing `targeted.py`.
- `tests/test_fuzz.py`: the fixed-seed slice in the default pytest run.
"""
