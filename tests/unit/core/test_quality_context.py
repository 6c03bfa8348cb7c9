"""The GX context: built once per process, whichever thread asks first."""

from __future__ import annotations

import threading

from core import quality


def test_a_context_prepared_in_the_background_is_the_one_a_gate_gets():
    quality._new_context.cache_clear()
    quality.prepare_in_background()
    # Asked again while the background thread may still be importing: it waits, no second one.
    asked = quality._context()
    for thread in threading.enumerate():
        if thread.name == "dkg-gx-import":
            thread.join(timeout=120)
    assert quality._context() is asked
    assert quality._new_context.cache_info().currsize == 1
