"""Project-wide pytest options."""


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true", default=False,
                     help="rewrite tests/golden/*.golden from the current compiler output "
                          "(review the diff before committing)")
