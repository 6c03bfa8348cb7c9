"""The Vega, Vega-Lite and vega-embed JavaScript, bundled offline for embedding in the page.

vl-convert-python ships these libraries with a bundler, so the report carries
them inline and needs no network when it is opened. Chosen over plotly.js
(4.8 MB a page) for the size: the bundle is 0.9 MB.
"""

from __future__ import annotations

import functools

import vl_convert

__all__ = ["VEGA_LITE_VERSION", "vega_javascript"]

VEGA_LITE_VERSION = "6.4"
"""The Vega-Lite version the specs are written for, one of vl-convert's bundled versions."""


@functools.cache
def vega_javascript() -> str:
    """The bundle, which defines ``vegaEmbed``, ``vega`` and ``vegaLite`` on ``window``.

    Bundling takes ~2 CPU-seconds, so it is done once per process.
    """
    bundle = vl_convert.javascript_bundle(vl_version=VEGA_LITE_VERSION)
    # The bundle is inlined in a <script> element, which the text "</script" would close.
    return bundle.replace("</script", "<\\/script")
