"""Loader for the optional C++ shim `open_spiel_sog._native._shim`.

The shim registers Python bot factories in OpenSpiel's C++ bot registry
(see shim.cc). It is compiled against the headers of one open_spiel wheel and
linked to that wheel's pyspiel.so, so it is only used when:

  * the environment variable OPEN_SPIEL_SOG_DISABLE_SHIM is not "1" (it exists
    to exercise the pure-Python fallback in tests),
  * the installed open_spiel is SUPPORTED_OPEN_SPIEL_VERSION,
  * the extension was built and imports, and
  * its self-check (shared pybind11 type registry with pyspiel) passes.

`load_shim()` never raises: it returns the module or the reason it is unusable.
"""

import importlib
import importlib.metadata
import os
import types
from typing import Optional, Tuple

SUPPORTED_OPEN_SPIEL_VERSION = "2.0.2"
DISABLE_ENV_VAR = "OPEN_SPIEL_SOG_DISABLE_SHIM"


def installed_open_spiel_version() -> Optional[str]:
  """Returns the version of the open_spiel in use, or None if unknown."""
  try:
    import pyspiel  # pylint: disable=g-import-not-at-top
  except ImportError:
    return None
  version = getattr(pyspiel, "__version__", None)
  if version:
    return str(version)
  try:
    return importlib.metadata.version("open_spiel")
  except importlib.metadata.PackageNotFoundError:
    return None


def load_shim() -> Tuple[Optional[types.ModuleType], Optional[str]]:
  """Imports and checks the C++ shim.

  Returns:
    (module, None) when the shim is usable, otherwise (None, reason) where
    reason is a human-readable sentence saying why it is not.
  """
  if os.environ.get(DISABLE_ENV_VAR, "") == "1":
    return None, f"the shim is disabled by {DISABLE_ENV_VAR}=1"
  version = installed_open_spiel_version()
  if version != SUPPORTED_OPEN_SPIEL_VERSION:
    return None, (f"the shim supports open_spiel=={SUPPORTED_OPEN_SPIEL_VERSION}"
                  f" only, but open_spiel {version or '(unknown version)'} is "
                  "in use")
  try:
    import pyspiel  # pylint: disable=g-import-not-at-top,unused-import
    shim = importlib.import_module(__name__ + "._shim")
  except ImportError as e:
    return None, f"the C++ shim could not be imported ({e})"
  try:
    shim.self_check()
  except Exception as e:  # pylint: disable=broad-except
    return None, f"the C++ shim failed its self-check ({e})"
  return shim, None
