"""The package's layers: a lower layer never imports a higher one, and no
modules import each other.

public_state, then algorithms, then bots, then evaluation (README's rule);
utils, games, the registry and the native shim sit below them all. Every
import in every module counts, those inside functions too. A circle is any
set of modules that import each other, directly or around a loop;
`from package import name` counts as an import of the module package.name
where there is one, else of the package's __init__.py.
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


def _module_name(path: pathlib.Path) -> str:
  """`open_spiel_sog.a.b` for a/b.py and for a/b/__init__.py."""
  rel = path.relative_to(PACKAGE.parent).with_suffix("")
  parts = rel.parts[:-1] if rel.parts[-1] == "__init__" else rel.parts
  return ".".join(parts)


def _import_graph() -> dict[str, set[str]]:
  """{module: the package's modules it imports} over every .py file of the
  package (package __init__.py files as their package's name)."""
  modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
  graph = {}
  for module, path in modules.items():
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
      if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
      elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        names = [f"{node.module}.{a.name}"
                 if f"{node.module}.{a.name}" in modules else node.module
                 for a in node.names]
      else:
        continue
      targets.update(n for n in names if n in modules and n != module)
    graph[module] = targets
  return graph


def _circles(graph: dict[str, set[str]]) -> list[list[str]]:
  """The strongly connected components of more than one module (Tarjan)."""
  index, low, stack, on_stack, out = {}, {}, [], set(), []

  def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on_stack.add(v)
    for w in sorted(graph[v]):
      if w not in index:
        visit(w)
        low[v] = min(low[v], low[w])
      elif w in on_stack:
        low[v] = min(low[v], index[w])
    if low[v] == index[v]:
      component = []
      while True:
        w = stack.pop()
        on_stack.discard(w)
        component.append(w)
        if w == v:
          break
      if len(component) > 1:
        out.append(sorted(component))

  for v in sorted(graph):
    if v not in index:
      visit(v)
  return out


def test_no_modules_import_each_other():
  graph = _import_graph()
  circles = _circles(graph)
  described = [
      " <-> ".join(circle) + ": " + "; ".join(
          f"{a} imports {', '.join(sorted(graph[a] & set(circle)))}"
          for a in circle)
      for circle in circles]
  assert not circles, "import circles: " + " | ".join(described)


def test_the_circle_check_finds_a_loop():
  """The check itself: a loop of three modules and a pair are found, a
  chain is not."""
  graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"},
           "f": {"a"}, "g": set()}
  assert _circles(graph) == [["a", "b", "c"], ["d", "e"]]


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
