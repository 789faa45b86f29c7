"""Shared helper of the tests that drive Chromium: waiting on a page under a policy without eval."""

import time


def eventually(target, expression: str, seconds: float = 10, arg=None) -> None:
    """Wait until ``expression`` is truthy in ``target`` (a page or frame), polling with
    ``evaluate``: Playwright's ``wait_for_function`` evaluates a string with ``eval`` when its
    first try fails, which the pages' policy (no 'unsafe-eval') refuses: an intermittent EvalError."""
    deadline = time.monotonic() + seconds
    while not target.evaluate(expression, arg):
        assert time.monotonic() < deadline, f"not true within {seconds} s: {expression}"
        time.sleep(0.05)


def show_token_and_head(page, token: int, head: int, step: str = "input") -> None:
    """Open ``step`` of the explorer ``page`` for ``token`` and ``head`` (through its URL's hash)
    and wait until the token's chip and the head's button are the checked ones."""
    page.evaluate(f"location.hash = '#token={token}&head={head}&step={step}'")
    eventually(
        page,
        f"document.querySelector('.chip[aria-checked=true]').dataset.token === '{token}' && document.querySelector('.head[aria-checked=true]').dataset.head === '{head}'",
    )
