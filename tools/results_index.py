"""Writes benchmarks/results/README.md: every results file, the command
that wrote it, the machine, the commit that added it (and its date), its
size and the pages and code that cite it.

    .venv/bin/python tools/results_index.py     # rewrites the index

The command and the machine come from the file where it records them (a
JSON object's, a JSON list's first element's or a .jsonl's first line's
`command`, `command_train`, `command_match`, `commands`, `latency_command`,
`throughput_command` and `machine`; a .json that prints a table first is
read from its first JSON line), else from the hand-kept
benchmarks/results/sources.json (path -> {"command", "machine"}). A file
with neither, or an entry of sources.json naming no file, stops the tool
with one line and exit status 1.

A file is cited where README.md, docs/*.md, benchmarks/*.py, examples/*.py
or tests/*.py name it (its path under benchmarks/results/ or its bare
name, or a pattern with `*` that matches it).
"""

import fnmatch
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
CITERS = (["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) +
          sorted(glob.glob("benchmarks/*.py", root_dir=ROOT)) +
          sorted(glob.glob("examples/*.py", root_dir=ROOT)) +
          sorted(glob.glob("tests/*.py", root_dir=ROOT)))


SOURCES = os.path.join(RESULTS, "sources.json")
COMMAND_KEYS = ("command", "command_train", "command_match", "commands",
                "latency_command", "throughput_command")
TABLE_COMMAND = 100  # characters of a command shown in the table


def _record(full: str) -> dict:
  """The JSON object a results file records (its first one), or {}."""
  if not re.search(r"\.jsonl?$", full):
    return {}
  with open(full, errors="replace") as f:
    text = f.read()
  data = None
  if full.endswith(".json"):
    try:
      data = json.loads(text)
    except ValueError:
      pass
  if data is None:  # a .jsonl, or a table printed before the JSON
    for line in text.splitlines():
      if line[:1] in "[{":
        try:
          data = json.loads(line)
          break
        except ValueError:
          continue
  if isinstance(data, list):
    data = data[0] if data else None
  return data if isinstance(data, dict) else {}


def _text(value) -> str:
  """A command or machine as one line."""
  if isinstance(value, dict):
    return "; ".join(f"{k}: {_text(v)}" for k, v in value.items())
  if isinstance(value, list):
    return "; ".join(_text(v) for v in value)
  return " ".join(str(value).split())


def _source(record: dict, hand: dict) -> tuple[str, str]:
  """(command, machine): the file's own, else sources.json's ('' if none)."""
  found = [(k, record[k]) for k in COMMAND_KEYS if k in record]
  if len(found) == 1:
    command = _text(found[0][1])
  else:
    command = "; ".join(f"{k.replace('command_', '')}: {_text(v)}"
                        for k, v in found)
  command = command or hand.get("command", "")
  machine = _text(record["machine"]) if "machine" in record else ""
  return command, machine or hand.get("machine", "")


def _cell(text: str, limit: int | None = None) -> str:
  if limit and len(text) > limit:
    text = text[:limit - 1].rstrip() + "\u2026"
  return text.replace("|", "\\|")


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
  with open(SOURCES) as f:
    sources = json.load(f)
  rows, missing = [], []
  paths = [p for p in sorted(glob.glob("**/*", root_dir=RESULTS,
                                       recursive=True))
           if os.path.isfile(os.path.join(RESULTS, p))
           and p not in ("README.md", "sources.json")]
  stale = sorted(set(sources) - set(paths))
  if stale:
    sys.exit(f"results_index: sources.json names {len(stale)} file(s) that "
             f"are not in benchmarks/results: {', '.join(stale)}")
  for path in paths:
    full = os.path.join(RESULTS, path)
    command, machine = _source(_record(full), sources.get(path, {}))
    if not command or not machine:
      missing.append(path)
      continue
    name = os.path.basename(path)
    cited = [c for c, text in texts.items() if path in text or name in text
             or any(fnmatch.fnmatch(f"benchmarks/results/{path}", p) or
                    fnmatch.fnmatch(name, p) for p in patterns[c])]
    commit, date = _added(os.path.join("benchmarks", "results", path))
    size = os.path.getsize(full)
    rows.append(f"| `{path}` | `{_cell(command, TABLE_COMMAND)}` | "
                f"{_cell(machine, 60)} | {commit} | {date} | "
                f"{size // 1024 + 1} KB | {', '.join(cited) or 'none'} |")
  if missing:
    sys.exit(f"results_index: no command or machine for {len(missing)} "
             f"file(s) (record them in the file or in "
             f"benchmarks/results/sources.json): {', '.join(missing)}")
  uncited = sum(r.endswith("| none |") for r in rows)
  with open(os.path.join(RESULTS, "README.md"), "w") as f:
    f.write(
        "# Results\n\n"
        "What the benchmarks wrote, one folder per capability and one row "
        "per file: the command that wrote it and the machine (from the file "
        "where it records them, else from `sources.json`; commands past "
        f"{TABLE_COMMAND} characters are cut here, whole there or in the "
        "file), the commit that added it and its date, its size, and the "
        "pages and code that cite it. Written by `tools/results_index.py`."
        "\n\n"
        f"{len(rows)} files; {uncited} cited nowhere.\n\n"
        "| file | command | machine | added in | date | size | cited by |\n"
        "|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
  main()
