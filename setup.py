"""Build and install open_spiel_sog.

The package is pure Python apart from `open_spiel_sog._native._shim`, a small
pybind11 extension that registers Python bot factories in OpenSpiel's C++ bot
registry. It is compiled against the C++ headers shipped inside the pinned
open_spiel wheel and linked to that wheel's `pyspiel.so`. The extension is
optional: if it cannot be built, the package still installs and
`open_spiel_sog.registry` falls back to a pure-Python registry with a warning.
"""

import importlib.util
import os

import setuptools
from setuptools.command.build_ext import build_ext

OPEN_SPIEL_VERSION = "2.0.2"


def _shim_extension() -> setuptools.Extension:
  """The C++ shim, configured against the installed open_spiel wheel."""
  spec = importlib.util.find_spec("pyspiel")
  if spec is None or spec.origin is None:
    raise RuntimeError(
        f"building open_spiel_sog needs open_spiel=={OPEN_SPIEL_VERSION} "
        "installed (pip install open_spiel==" + OPEN_SPIEL_VERSION + ")")
  site_dir = os.path.dirname(spec.origin)
  import pybind11  # pylint: disable=g-import-not-at-top
  pybind11_root = os.path.dirname(os.path.dirname(pybind11.__file__))
  return setuptools.Extension(
      name="open_spiel_sog._native._shim",
      sources=["open_spiel_sog/_native/shim.cc"],
      depends=["open_spiel_sog/_native/cfr_kernels.h",
               "open_spiel_sog/_native/rollouts.h",
               "open_spiel_sog/_native/history_tree.h",
               "open_spiel_sog/_native/history_engine.h",
               "open_spiel_sog/_native/expander.h",
               "open_spiel_sog/_native/rows.h",
               "open_spiel_sog/_native/blake2b.h",
               "open_spiel_sog/_native/scotland_yard.h",
               "open_spiel_sog/_native/scotland_yard_mcts.h"],
      include_dirs=[
          site_dir,  # "open_spiel/..." headers
          os.path.join(site_dir, "open_spiel", "abseil-cpp"),  # "absl/..."
          # <nlohmann/...>, as spiel_utils.h's json.hpp includes it
          os.path.join(site_dir, "open_spiel", "json", "include"),
          pybind11_root,  # "pybind11/include/pybind11/..." as pyspiel's headers spell it
          pybind11.get_include(),
      ],
      library_dirs=[site_dir],
      libraries=[":pyspiel.so"],
      # pyspiel.so sits two folders above the installed shim; the absolute
      # folder covers editable installs, where the shim stays in the source tree.
      runtime_library_dirs=["$ORIGIN/../..", site_dir],
      extra_compile_args=["-std=c++17", "-O2", "-fvisibility=hidden"],
      language="c++",
      optional=True,
  )


class BuildExt(build_ext):
  """Reports a failed shim build loudly instead of silently skipping it."""

  def build_extension(self, ext):
    try:
      super().build_extension(ext)
    except Exception as e:  # pylint: disable=broad-except
      print(f"WARNING: open_spiel_sog C++ shim was not built ({e}); "
            "bots will be registered through the pure-Python fallback.")
      raise


setuptools.setup(
    name="open_spiel_sog",
    version="0.1.0",
    description="Student of Games (GT-CFR, continual re-solving, CVPN) for OpenSpiel",
    long_description=open("README.md", encoding="utf-8").read(),
    long_description_content_type="text/markdown",
    python_requires=">=3.10",
    packages=setuptools.find_packages(include=["open_spiel_sog", "open_spiel_sog.*"]),
    package_data={"open_spiel_sog": ["data/*", "_native/*.cc", "_native/*.h",
                                     "games/maps/*", "games/*.efg"]},
    install_requires=[
        f"open_spiel=={OPEN_SPIEL_VERSION}",
        "numpy",
        "absl-py",
        "jax",
        "dm-haiku",
        "optax",
    ],
    extras_require={
        "test": ["pytest", "pytest-xdist"],
        "progress": ["tqdm"],
        "plot": ["matplotlib"],
        "tensorboard": ["tensorflow", "tensorboard"],
        "ray": ["ray"],
    },
    ext_modules=[_shim_extension()],
    cmdclass={"build_ext": BuildExt},
)
