"""``fuzzgpu replay --junit-xml FILE``: each corpus entry against its expectation as a JUnit test
case, for CI systems (Jenkins, GitLab, GitHub test reporters).

One ``<testsuite>`` in a ``<testsuites>``; one ``<testcase>`` per entry, named by the entry's file,
shape, property and expectation.  FAIL is a ``<failure>``, ERROR an ``<error>``, and NOT CHECKED an
``<error type="not-checked">`` too: an entry this machine could not check is not a pass (the
replay's exit status is 3), and a CI system that counts skips as green would read it as one.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..files import write_atomic


def junit_xml(results: Iterable[Mapping[str, Any]], suite: str, backend: str) -> str:
    """The JUnit XML text of replay results (each with ``check`` and ``check_reason``)."""
    rs = list(results)
    fails = sum(1 for r in rs if r.get("check") == "fail")
    errors = sum(1 for r in rs if r.get("check") in ("error", "not-checked"))
    total = sum(float(r.get("seconds") or 0) for r in rs)
    root = ET.Element("testsuites", name="fuzzgpu replay", tests=str(len(rs)), failures=str(fails), errors=str(errors),
                      time=f"{total:.3f}")
    ts = ET.SubElement(root, "testsuite", name=suite, tests=str(len(rs)), failures=str(fails), errors=str(errors),
                       skipped="0", time=f"{total:.3f}")
    props = ET.SubElement(ts, "properties")
    ET.SubElement(props, "property", name="backend", value=backend)
    for r in rs:
        name = Path(str(r.get("entry", "?"))).name
        label = f"{name} ({r.get('shape', '?')}, {r.get('property', '?')}, expect {r.get('expect', '?')})"
        tc = ET.SubElement(ts, "testcase", classname="fuzzgpu.corpus", name=label, time=f"{float(r.get('seconds') or 0):.3f}")
        check, why = r.get("check", "error"), str(r.get("check_reason") or r.get("reason") or "")
        text = _details(r)
        if check == "fail":
            ET.SubElement(tc, "failure", message=why, type="expectation").text = text
        elif check == "not-checked":
            ET.SubElement(tc, "error", message=f"NOT CHECKED: {why}", type="not-checked").text = text
        elif check == "error":
            ET.SubElement(tc, "error", message=why, type="error").text = text
        else:
            ET.SubElement(tc, "system-out").text = text
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _details(r: Mapping[str, Any]) -> str:
    lines = [f"{k}: {r[k]}" for k in ("entry", "status", "expect", "check", "check_reason", "checked_by", "summary", "reason", "backend")
             if r.get(k) not in (None, "")]
    return "\n".join(lines)


def write_junit(path: str | Path, results: Iterable[Mapping[str, Any]], suite: str, backend: str) -> None:
    write_atomic(Path(path), junit_xml(results, suite, backend))


__all__ = ["junit_xml", "write_junit"]
