"""Sessions you can keep and share.

- :mod:`.fallback`: the static, script-free HTML (and the text) every widget
  output carries, so a saved notebook shows its session without a kernel.
"""
