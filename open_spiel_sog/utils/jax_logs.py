"""JAX's start-up log lines that say nothing to our users.

On a machine without a TPU, JAX's first use logs (at INFO, which absl's
`app.run` shows) "Unable to initialize backend 'tpu': ... libtpu.so ...":
every example and benchmark would print it. `quiet_missing_tpu` drops that
one record, and only it, without importing JAX; every other backend's
failure (a CUDA plugin that does not load, say) still shows.
"""

from __future__ import annotations

import logging

# The logger JAX probes its backends with.
_XLA_BRIDGE = "jax._src.xla_bridge"


def _not_missing_tpu(record: logging.LogRecord) -> bool:
  return not str(record.msg).startswith("Unable to initialize backend 'tpu'")


def quiet_missing_tpu() -> None:
  """Drops JAX's "Unable to initialize backend 'tpu'" record (idempotent)."""
  logger = logging.getLogger(_XLA_BRIDGE)
  if _not_missing_tpu not in logger.filters:
    logger.addFilter(_not_missing_tpu)
