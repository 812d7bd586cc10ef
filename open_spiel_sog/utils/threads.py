"""JAX on one compute thread.

XLA sizes its CPU thread pool once, when JAX starts, by the cores the
starting thread may run on, and spreads each computation over the pool. A
process that shares the machine's cores with busy workers (the learner,
the inference service) wants one thread: `start_jax_on_one_thread` starts
JAX while the calling thread is held to one core, then gives the thread its
cores back. XLA's flag for this, --xla_cpu_multi_thread_eigen=false, left
jax 0.10's pool as wide as the machine (a 1024x1024 product used 1.8 cores
on 2 with and without it, 1.0 this way).
"""

from __future__ import annotations

import os


def jax_started() -> bool:
  """Whether this process's JAX has started its backends (True where that
  cannot be told)."""
  try:
    from jax._src import xla_bridge  # pylint: disable=g-import-not-at-top
    return bool(xla_bridge.backends_are_initialized())
  except (ImportError, AttributeError):
    return True


def usable_cores() -> int:
  """The cores this process may run on (its affinity where the platform
  says, else the machine's count)."""
  if hasattr(os, "sched_getaffinity"):
    return max(1, len(os.sched_getaffinity(0)))
  return max(1, os.cpu_count() or 1)


def start_jax_on_one_thread() -> bool:
  """Starts JAX with a one-thread CPU pool; False (nothing done) where JAX
  has already started or the platform cannot hold a thread to a core (not
  Linux)."""
  if jax_started() or not hasattr(os, "sched_setaffinity"):
    return False
  import jax  # pylint: disable=g-import-not-at-top
  cores = os.sched_getaffinity(0)
  os.sched_setaffinity(0, {max(cores)})
  try:
    jax.devices()  # starts JAX: its CPU pool is sized now
  finally:
    os.sched_setaffinity(0, cores)
  return True
