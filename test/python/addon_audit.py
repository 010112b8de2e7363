"""Static audit of the add-on's Python sources: nothing the sidecar sends can be run as code, and the add-on writes
no files (so no token file can exist).

`audit_source(source, filename)` parses one file with `ast` and returns findings (line, rule, text) for:
  - dynamic code: eval, exec, compile, __import__, breakpoint, execfile (any receiver), importlib, runpy, code;
  - unsafe deserialisers: pickle, cPickle, marshal, shelve, dill, yaml.load;
  - shells: os.system, os.popen, os.exec*, os.spawn*, subprocess.getoutput/getstatusoutput, any call with
    shell=<anything but False>;
  - data-chosen attributes: getattr/setattr/delattr/hasattr whose name is not a string literal or a module-level
    string constant (a name from the sidecar must never pick what code runs);
  - Blender hooks that evaluate text: driver `expression` assignments, `driver_namespace`;
  - files: open() with a writing mode (w, a, x, +), os.open, tempfile (the add-on keeps nothing on disk).
Run as a script: `python3 addon_audit.py DIR...` prints {"files": [...], "findings": [...]} as JSON.
"""

import ast
import json
import os
import sys

__all__ = ["audit_source", "audit_folder"]

_DYNAMIC_CODE = {"eval", "exec", "compile", "__import__", "breakpoint", "execfile"}
_BAD_MODULES = {"pickle", "cPickle", "_pickle", "marshal", "shelve", "dill", "importlib", "runpy", "code", "codeop",
                "tempfile"}
_SHELL_FUNCTIONS = {"system", "popen", "getoutput", "getstatusoutput"}
_ATTRIBUTE_BUILTINS = {"getattr", "setattr", "delattr", "hasattr"}


def _called_name(func):
    """The last name of a call target: `eval` for eval(...), `system` for os.system(...)."""
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def _module_string_constants(tree):
    """Names assigned a string literal at module level (e.g. _TOKEN_PROPERTY = "autorig_session_token")."""
    names = set()
    for node in tree.body:
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def _write_mode(call):
    """The mode of an open() call when it can write, else None (reading, or no mode given)."""
    mode = call.args[1] if len(call.args) > 1 else next((k.value for k in call.keywords if k.arg == "mode"), None)
    if mode is None:
        return None
    if not isinstance(mode, ast.Constant):
        return "<computed>"
    return mode.value if any(c in str(mode.value) for c in "wax+") else None


def _check_call(node, constants, report):
    name = _called_name(node.func)
    if name in _DYNAMIC_CODE:
        report(node, "dynamic-code", name)
    if name in _SHELL_FUNCTIONS and isinstance(node.func, ast.Attribute):
        report(node, "shell", ast.unparse(node.func))
    if isinstance(node.func, ast.Attribute) and (name.startswith("exec") or name.startswith("spawn")) \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "os":
        report(node, "shell", ast.unparse(node.func))
    if name == "load" and isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == "yaml":
        report(node, "deserialiser", "yaml.load")
    for keyword in node.keywords:
        if keyword.arg == "shell" and not (isinstance(keyword.value, ast.Constant) and keyword.value.value is False):
            report(node, "shell", "shell=" + ast.unparse(keyword.value))
    if name in _ATTRIBUTE_BUILTINS and isinstance(node.func, ast.Name) and len(node.args) >= 2:
        attribute = node.args[1]
        literal = isinstance(attribute, ast.Constant) and isinstance(attribute.value, str)
        if not literal and not (isinstance(attribute, ast.Name) and attribute.id in constants):
            report(node, "dynamic-attribute", ast.unparse(node))
    if name == "open" and isinstance(node.func, ast.Name):
        mode = _write_mode(node)
        if mode is not None:
            report(node, "writes-file", "open(..., %r)" % mode)
    if name == "open" and isinstance(node.func, ast.Attribute) and ast.unparse(node.func.value) == "os":
        report(node, "writes-file", "os.open")


def audit_source(source, filename="<source>"):
    """Findings in one Python source: a list of {"file", "line", "rule", "text"}."""
    tree = ast.parse(source, filename)
    constants = _module_string_constants(tree)
    findings = []

    def report(node, rule, text):
        findings.append({"file": filename, "line": getattr(node, "lineno", 0), "rule": rule, "text": text})

    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            _check_call(node, constants, report)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _BAD_MODULES:
                    report(node, "module", alias.name)
        elif isinstance(node, ast.ImportFrom):
            if node.module and node.module.split(".")[0] in _BAD_MODULES:
                report(node, "module", node.module)
        elif isinstance(node, ast.Attribute) and node.attr == "driver_namespace":
            report(node, "evaluates-text", "driver_namespace")
        elif isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Attribute) and target.attr == "expression":
                    report(node, "evaluates-text", ast.unparse(target))
    return findings


def audit_folder(folder):
    """(files audited, findings) for every .py file under `folder`."""
    files, findings = [], []
    for root, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                with open(path, encoding="utf-8") as f:
                    findings.extend(audit_source(f.read(), os.path.relpath(path, folder)))
                files.append(os.path.relpath(path, folder))
    return files, findings


if __name__ == "__main__":
    all_files, all_findings = [], []
    for arg in sys.argv[1:]:
        got_files, got_findings = audit_folder(arg)
        all_files += got_files
        all_findings += got_findings
    print(json.dumps({"files": all_files, "findings": all_findings}))
