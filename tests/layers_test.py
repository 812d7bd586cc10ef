"""The package's layers: a lower layer never imports a higher one.

public_state, then algorithms, then bots, then evaluation (README's rule);
utils, games, the registry and the native shim sit below them all. Every
import in every module counts, those inside functions too.
"""

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "open_spiel_sog"

LAYERS = {
    "_native": 0, "utils": 0, "games": 0, "registry": 0, "data": 0,
    "public_state": 1,
    "algorithms": 2,
    "bots": 3,
    "evaluation": 4,
}


def _layer(module: str) -> int | None:
  """Layer of `open_spiel_sog.X...` (None: the package's __init__)."""
  parts = module.split(".")
  if parts[0] != "open_spiel_sog" or len(parts) < 2 or parts[1] == "__init__":
    return None
  return LAYERS.get(parts[1], -1)


def _imports(path: pathlib.Path) -> list[tuple[int, str]]:
  """(line, imported module) for each open_spiel_sog import in `path`."""
  out = []
  for node in ast.walk(ast.parse(path.read_text(), str(path))):
    if isinstance(node, ast.Import):
      out += [(node.lineno, a.name) for a in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
      if node.module == "open_spiel_sog":  # from open_spiel_sog import X
        out += [(node.lineno, f"open_spiel_sog.{a.name}") for a in node.names]
      else:
        out.append((node.lineno, node.module))
  return [(line, m) for line, m in out if m.startswith("open_spiel_sog.")]


def _modules():
  for path in sorted(PACKAGE.rglob("*.py")):
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    module = ".".join(rel.parts)
    if _layer(module) is not None:
      yield module, path


def test_every_package_directory_has_a_layer():
  dirs = {p.name for p in PACKAGE.iterdir()
          if p.is_dir() and not p.name.startswith("__")}
  files = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
  assert dirs | files <= set(LAYERS), sorted((dirs | files) - set(LAYERS))


@pytest.mark.parametrize("module,path", list(_modules()),
                         ids=[m for m, _ in _modules()])
def test_no_module_imports_a_higher_layer(module, path):
  mine = _layer(module)
  wrong = [f"line {line}: {imported} (layer {_layer(imported)} > {mine})"
           for line, imported in _imports(path)
           if _layer(imported) is not None and _layer(imported) > mine]
  assert mine >= 0, f"{module} is in no layer: add it to LAYERS"
  assert not wrong, f"{module} imports a higher layer: {wrong}"
