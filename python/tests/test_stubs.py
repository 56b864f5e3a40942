"""The type stubs (tempo/_tempo.pyi) against the extension module itself:
every public class, method, property and function of ``tempo._tempo`` is
in the stubs and every one the stubs declare exists, and each callable's
parameter names (from the signature PyO3 gives it, ``__text_signature__``)
are the stubs' (what editors and mypy check calls against)."""

import ast
import inspect
import pathlib

import tempo
from tempo import _tempo

STUBS = pathlib.Path(tempo.__file__).parent / "_tempo.pyi"


def stub_tree():
    """Top-level functions and classes of the stubs: name -> node."""
    tree = ast.parse(STUBS.read_text())
    return {node.name: node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}


def public(name):
    return not name.startswith("_")


def stub_parameters(node):
    """Parameter names of a stub function (without self/cls)."""
    args = node.args
    names = [a.arg for a in args.posonlyargs + args.args]
    if names and names[0] in ("self", "cls"):
        names = names[1:]
    if args.vararg:
        names.append("*" + args.vararg.arg)
    names += [a.arg for a in args.kwonlyargs]
    if args.kwarg:
        names.append("**" + args.kwarg.arg)
    return names


def runtime_parameters(obj):
    """Parameter names of a runtime callable from its text signature, or
    None where PyO3 gives none."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    names = []
    for p in signature.parameters.values():
        if p.name in ("self", "cls", "$self", "$cls"):
            continue
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            names.append("*" + p.name)
        elif p.kind is inspect.Parameter.VAR_KEYWORD:
            names.append("**" + p.name)
        else:
            names.append(p.name)
    return names


def test_every_public_name_is_in_the_stubs_and_back():
    stubs = stub_tree()
    runtime = {name for name in dir(_tempo) if public(name)}
    missing = sorted(runtime - set(stubs))
    extra = sorted(n for n in set(stubs) - runtime if public(n))
    assert not missing, f"in tempo._tempo but not in _tempo.pyi: {missing}"
    assert not extra, f"in _tempo.pyi but not in tempo._tempo: {extra}"


def test_every_class_member_is_in_the_stubs_and_back():
    stubs = stub_tree()
    problems = []
    for name, node in stubs.items():
        if not isinstance(node, ast.ClassDef) or issubclass(getattr(_tempo, name), BaseException):
            continue
        cls = getattr(_tempo, name)
        declared = {m.name for m in node.body if isinstance(m, ast.FunctionDef)}
        declared |= {m.target.id for m in node.body if isinstance(m, ast.AnnAssign) and isinstance(m.target, ast.Name)}
        actual = {m for m in vars(cls) if public(m)}
        for m in sorted(actual - declared):
            problems.append(f"{name}.{m}: in the module, not in the stubs")
        for m in sorted(d for d in declared - set(dir(cls)) if public(d)):
            problems.append(f"{name}.{m}: in the stubs, not in the module")
    assert not problems, "\n".join(problems)


def test_parameter_names_match():
    stubs = stub_tree()
    problems = []
    checked = 0

    def compare(label, node, obj):
        nonlocal checked
        actual = runtime_parameters(obj)
        if actual is None:
            return
        checked += 1
        declared = stub_parameters(node)
        if declared != actual:
            problems.append(f"{label}: stubs {declared}, module {actual}")

    for name, node in stubs.items():
        obj = getattr(_tempo, name)
        if isinstance(node, ast.FunctionDef):
            compare(name, node, obj)
            continue
        if issubclass(obj, BaseException):
            continue
        for member in node.body:
            if not isinstance(member, ast.FunctionDef) or not public(member.name):
                continue
            if any(isinstance(d, ast.Name) and d.id == "property" for d in member.decorator_list):
                continue
            if any(isinstance(d, ast.Attribute) and d.attr == "setter" for d in member.decorator_list):
                continue
            compare(f"{name}.{member.name}", member, getattr(obj, member.name))
    assert checked > 50, f"only {checked} signatures compared: PyO3 gave too few text signatures"
    assert not problems, "\n".join(problems)
