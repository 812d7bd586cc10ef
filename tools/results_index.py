"""Writes benchmarks/results/README.md: every results file, the commit that
added it (and its date), its size and the pages and code that cite it.

    .venv/bin/python tools/results_index.py     # rewrites the index

A file is cited where README.md, docs/*.md, benchmarks/*.py, examples/*.py
or tests/*.py name it (its path under benchmarks/results/ or its bare
name, or a pattern with `*` that matches it).
"""

import fnmatch
import glob
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
CITERS = (["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) +
          sorted(glob.glob("benchmarks/*.py", root_dir=ROOT)) +
          sorted(glob.glob("examples/*.py", root_dir=ROOT)) +
          sorted(glob.glob("tests/*.py", root_dir=ROOT)))


def _added(path: str) -> tuple[str, str]:
  """(short commit, date) of the commit that added `path`."""
  out = subprocess.run(
      ["git", "log", "--diff-filter=A", "--follow", "--format=%h %as", "--",
       path], cwd=ROOT, capture_output=True, text=True, check=False).stdout
  lines = out.strip().splitlines()
  return tuple(lines[-1].split(" ", 1)) if lines else ("(new)", "")


def main() -> None:
  texts = {c: open(os.path.join(ROOT, c)).read() for c in CITERS}
  # Names with wildcards (`game_memory_native_*_2026-11-28.json`).
  patterns = {c: re.findall(r"[\w./-]+\*[\w.*/-]*\.[a-z]+", text)
              for c, text in texts.items()}
  rows = []
  for path in sorted(glob.glob("**/*", root_dir=RESULTS, recursive=True)):
    full = os.path.join(RESULTS, path)
    if not os.path.isfile(full) or path == "README.md":
      continue
    name = os.path.basename(path)
    cited = [c for c, text in texts.items() if path in text or name in text
             or any(fnmatch.fnmatch(f"benchmarks/results/{path}", p) or
                    fnmatch.fnmatch(name, p) for p in patterns[c])]
    commit, date = _added(os.path.join("benchmarks", "results", path))
    size = os.path.getsize(full)
    rows.append(f"| `{path}` | {commit} | {date} | {size // 1024 + 1} KB | "
                f"{', '.join(cited) or 'none'} |")
  uncited = sum(r.endswith("| none |") for r in rows)
  with open(os.path.join(RESULTS, "README.md"), "w") as f:
    f.write(
        "# Results\n\n"
        "What the benchmarks wrote, one row per file: the commit that added "
        "it (its message names the command and the machine), its date, its "
        "size, and the pages and code that cite it. Written by "
        "`tools/results_index.py`; the page that cites a file gives the "
        "command that prints its figure. Unless a page says otherwise the "
        "machine is the 2-core development machine.\n\n"
        f"{len(rows)} files; {uncited} cited nowhere.\n\n"
        "| file | added in | date | size | cited by |\n"
        "|---|---|---|---|---|\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
  main()
