"""The generator's tensor-form question (``producer_consumer._tensor_copy``: does the tensor form of a
bulk copy add a reason the harness refuses the program?) answered by ``codegen.added_reasons``
without the value plan -- the oracle's traces, which made a draw of the ``all`` profile cost ~150
CPU ms (issue 29) -- and with the same answer as the set difference of ``unrunnable_reasons``."""

from __future__ import annotations

import dataclasses

import pytest

from fuzzgpu import codegen
from fuzzgpu.codegen import runnable, values as cvalues
from fuzzgpu.ir import CpAsyncBulk, Program, validate
from fuzzgpu.model import values

from draws import sample


def _tensor_forms(p: Program) -> list[Program]:
    """``p`` with one of its plain bulk copies in its tensor form, for each such copy."""
    out = []
    for t, th in enumerate(p.threads):
        for n, ins in enumerate(th.code):
            if isinstance(ins, CpAsyncBulk) and not ins.tensor:
                code = list(th.code)
                code[n] = dataclasses.replace(ins, tensor=True)
                threads = p.threads[:t] + (dataclasses.replace(th, code=tuple(code)),) + p.threads[t + 1:]
                out.append(validate(dataclasses.replace(p, threads=threads)))
    return out


def _pairs() -> list[tuple[Program, Program]]:
    """(a drawn program with its copies plain, one tensor form of it): 12 whose tensor form the
    harness cannot hold (its own reasons), 18 it can."""
    refused: list[tuple[Program, Program]] = []
    held: list[tuple[Program, Program]] = []
    for seed in range(5, 25):  # seeded chunks until both quotas are met (the generator's mix changes)
        # a copy through a tensor map the program rewrites (class D) has no plain form (its source is the
        # map): such draws are left out
        plain = [cvalues._plain_copies(p) for p in sample(60, seed) if not any(loc.kind == "tensormap" for loc in p.locations)]
        for pq in ((p, q) for p in plain for q in _tensor_forms(p)):
            (refused if runnable._tensor_reasons(pq[1]) else held).append(pq)
        if len(refused) >= 12 and len(held) >= 18:
            break
    return refused[:12] + held[:18]


PAIRS = _pairs()


def test_the_sample_has_tensor_forms_with_and_without_new_reasons():
    """The sample exercises both answers (else the tests below would prove little)."""
    slow = [bool(set(codegen.unrunnable_reasons(q)) - set(codegen.unrunnable_reasons(p))) for p, q in PAIRS]
    assert len(PAIRS) == 30 and sum(slow) >= 10 and not all(slow)


@pytest.mark.parametrize("i", range(len(PAIRS)))
def test_added_reasons_is_the_set_difference(i):
    p, q = PAIRS[i]
    want = set(codegen.unrunnable_reasons(q)) - set(codegen.unrunnable_reasons(p))
    assert codegen.added_reasons(p, q) == want
    assert codegen.added_reasons(q, p) == set(codegen.unrunnable_reasons(p)) - set(codegen.unrunnable_reasons(q))


def test_added_reasons_of_a_tensor_form_asks_no_value_plan(monkeypatch):
    """The cost the draw saves: for a program and its tensor form, the value plan (the oracle's
    traces) is not asked."""
    def no_plan(p):
        raise AssertionError("value_plan asked")

    monkeypatch.setattr(runnable, "value_plan", no_plan)
    for p, q in PAIRS:
        codegen.added_reasons(p, q)


def test_added_reasons_of_other_programs_is_the_set_difference():
    """Programs that differ in more than a tensor form: the full question (value plans included)."""
    a, b = PAIRS[0][0], PAIRS[-1][0]
    assert a != b
    assert codegen.added_reasons(a, b) == set(codegen.unrunnable_reasons(b)) - set(codegen.unrunnable_reasons(a))


@pytest.mark.parametrize("i", range(0, len(PAIRS), 4))
def test_a_tensor_form_has_its_plain_copys_values(i):
    """Why one value plan serves both, and why ``harness_domains`` hands the tensor form's domains as
    its plain form's without computing them: the oracle reads a tensor copy as its plain copy (the
    IR's ``CpAsyncBulk.tensor``), so every key and location holds the same values (each computed here
    from its own traces: two programs, two cache entries)."""
    p, q = PAIRS[i]
    assert values.key_values(q) == values.key_values(p)
    assert values.location_values(q) == values.location_values(p)
    assert values.domains(q) == values.domains(p)
    assert cvalues.value_plan(q) == cvalues.value_plan(p)
    assert dict(cvalues.harness_domains(q)) == {q: values.domains(q), p: values.domains(p)}


def test_harness_domains_traces_a_tensor_program_once(monkeypatch):
    """The worker's question for a tensor program (its domains and its plain form's) enumerates the
    paths of one program, not two (issue 29: bench/results/oracle_speed/values-compare-plain-once.md)."""
    from fuzzgpu.model import events

    traced: list[Program] = []
    real = values.program_traces

    def counting(p, *args, **kwargs):
        traced.append(p)
        return real(p, *args, **kwargs)

    monkeypatch.setattr(values, "program_traces", counting)
    for _, q in PAIRS[12:16]:  # tensor forms the harness holds
        events._TRACES.clear()
        values._DOMAINS.clear()
        traced.clear()
        assert len(cvalues.harness_domains(q)) == 2
        assert traced == [q]
