"""`in` / `not in` become ag__.in_, an elementwise match for tensors."""


def bucket(x):
    if x in (1, 2, 5):
        return 10
    if x not in [7]:
        return 20
    return 30
