"""The package's layout rules: stages import only the stages below them, no module imports
itself back through others (counting imports inside functions), and modules and functions stay
small enough to read. CONTRIBUTING.md explains the layers and where a change goes."""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "semsearch"

# Lower layers first; a room may import its own layer's other rooms only where listed as allowed.
LAYERS: list[set[str]] = [
    {"errors", "util", "defaults", "semsearch"},  # "semsearch": the package's own constants (__version__)
    {"ingest"},
    {"encode"},
    {"store"},
    {"gate"},
    {"retrieve"},
    {"build"},
    {"context"},  # the prompt ``ask --context`` prints, from what retrieval found (Collection.context_prompt)
    {"collection", "hints"},
    {"evaluation"},
    {"mcp"},
    {"cli"},  # `semsearch mcp` starts the server
    {"__main__"},
]
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts).removesuffix(".__init__")


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "semsearch"


@functools.cache
def _modules() -> dict[str, ast.Module]:
    """Every module of the package, parsed once for all the checks here (read, never changed)."""
    return {_module_name(path): ast.parse(path.read_text("utf-8")) for path in sorted(PACKAGE.rglob("*.py"))}


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            guarded.update(id(inner) for inner in ast.walk(node))
    return guarded


def runtime_imports(tree: ast.Module, known: set[str]) -> set[str]:
    """The semsearch modules ``tree`` imports when it runs (inside functions too)."""
    guarded = _type_checking_nodes(tree)
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in guarded or not isinstance(node, ast.ImportFrom | ast.Import):
            continue
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if isinstance(node, ast.ImportFrom) and node.level:
            raise AssertionError(f"relative import in semsearch: from {'.' * node.level}{node.module}")
        for name in names:
            if not name.startswith("semsearch"):
                continue
            if isinstance(node, ast.ImportFrom):
                subs = {f"{name}.{alias.name}" for alias in node.names} & known
                found.update(subs or {name})
            else:
                found.add(name)
    return found


def _layer_of(room: str) -> int:
    for level, rooms in enumerate(LAYERS):
        if room in rooms:
            return level
    raise AssertionError(f"semsearch/{room} is in no layer of tests/test_layout.py: add it to LAYERS")


@functools.cache
def _imports() -> dict[str, frozenset[str]]:
    """What each module imports when it runs (``runtime_imports``), found once."""
    modules = _modules()
    return {name: frozenset(runtime_imports(tree, set(modules))) for name, tree in modules.items()}


def test_every_stage_imports_only_the_stages_below_it():
    upward = []
    for name, targets in _imports().items():
        for target in targets:
            source_room, target_room = _room(name), _room(target)
            if source_room != target_room and _layer_of(target_room) >= _layer_of(source_room):
                upward.append(f"{name} -> {target}")
    assert upward == []


def test_no_module_imports_itself_back_through_others():
    graph = {name: targets & set(_imports()) for name, targets in _imports().items()}
    graph = {
        name: {t for t in targets if t != name and not name.startswith(t + ".")}
        for name, targets in graph.items()
    }
    cycles = []
    state: dict[str, int] = defaultdict(int)  # 0 new, 1 on the path, 2 done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state[target] == 1:
                cycles.append(" -> ".join([*path[path.index(target) :], target]))
            elif state[target] == 0:
                visit(target, [*path, target])
        state[node] = 2

    for name in sorted(graph):
        if state[name] == 0:
            visit(name, [name])
    assert cycles == []


def test_the_layout_check_sees_upward_and_circular_imports():
    tree = ast.parse(
        "from semsearch.cli.commands import main\ndef f():\n    from semsearch.ingest import chunking\n"
    )
    known = {"semsearch.cli.commands", "semsearch.ingest", "semsearch.ingest.chunking"}
    assert runtime_imports(tree, known) == {"semsearch.cli.commands", "semsearch.ingest.chunking"}
    assert _layer_of("cli") > _layer_of("ingest")


META_OWNERS = {"store/meta.py", "store/records.py"}
"""The modules that know meta.json's layout; every other one reads ``IndexMeta``'s fields."""
_RAW_META = re.compile(r"\bmeta\s*\[|\bmeta\s*\.\s*get\s*\(")


def test_only_the_meta_module_reads_meta_json_as_a_dict():
    raw = [
        f"{path.relative_to(PACKAGE)}:{number}: {line.strip()}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if str(path.relative_to(PACKAGE)) not in META_OWNERS
        for number, line in enumerate(path.read_text("utf-8").splitlines(), 1)
        if _RAW_META.search(line)
    ]
    assert raw == []


def test_the_meta_check_sees_a_dict_read():
    assert _RAW_META.search('docs = index.meta["docs_root"]')
    assert _RAW_META.search("spec = meta.get('model')")
    assert not _RAW_META.search("docs = index.meta.docs_root; metadata['x']")


def test_modules_stay_under_400_lines():
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text("utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_function_bodies_stay_under_60_lines():
    long = {}
    for name, tree in _modules().items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                body = node.body[1:] if ast.get_docstring(node) else node.body
                lines = body[-1].end_lineno - body[0].lineno + 1 if body else 0
                if lines > MAX_FUNCTION_LINES:
                    long[f"{name}.{node.name}"] = lines
    assert long == {}
