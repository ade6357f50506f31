"""Greedy search with an early exit: stop as soon as the end token is produced,
or return from inside the loop when the score gets too low. `break` and a
nested `return` in a tensor loop become flags of one graph loop.

    python samples/beam_search.py [--dump]
"""
import sys

import numpy as np

import autograph as ag
import runtime as rt

END = 0


@ag.convert
def greedy_decode(logits, max_len, min_score):
    tokens = []
    score = 0.0
    for t in range(max_len):
        step = rt.nn.log_softmax(logits[t])
        token = rt.argmax(step, output_type=rt.int32)
        score += rt.reduce_max(step)
        if score < min_score:
            return -1, score
        tokens.append(token)
        if token == END:
            break
    return rt.size(rt.stack(tokens)), score


def main(argv):
    if "--dump" in argv:
        print(ag.to_code(greedy_decode))
        return
    rng = np.random.default_rng(1)
    logits = rng.normal(size=(12, 5)).astype(np.float32)
    logits[:, END] = -10.0
    logits[6, END] = 10.0              # the end token wins at step 6
    length, score = greedy_decode(logits, rt.constant(12), rt.constant(-50.0))
    print(f"decoded {length} tokens, score {float(score):.3f}")
    length, score = greedy_decode(logits, rt.constant(12), rt.constant(-2.0))
    print(f"with a score floor of -2: {length} (gave up), score {float(score):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:])
