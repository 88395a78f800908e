"""The Program IR's JSON form: ``program_from_json(program_to_json(p)) == p`` for random programs
(core and extension instructions, PDL grids, mbarrier objects), for every litmus file of the project
and of Dat3M's suite, and through real JSON text; a schema version from the future is refused."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fuzzgpu.ir import SCHEMA_VERSION, ProgramError, program_from_json, program_to_json
from fuzzgpu.litmus import parse_file

from test_litmus_roundtrip import programs
from test_model_extension_properties import extension_programs

from paths import DAT3M, ROOT, own_litmus

FILES = own_litmus() + sorted(DAT3M.rglob("*.litmus"))


def roundtrip(p):
    return program_from_json(json.loads(json.dumps(program_to_json(p))))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(programs(), extension_programs()))
def test_json_roundtrip_random(p):
    assert roundtrip(p) == p


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(f.parents[1])) for f in FILES])
def test_json_roundtrip_files(path):
    p = parse_file(path)
    assert roundtrip(p) == p


def test_pdl_grids_survive():
    p = parse_file(ROOT / "tests" / "litmus" / "pdl" / "PDL-wait-nc.litmus")
    assert p.pdl_grids and roundtrip(p).pdl_grids == p.pdl_grids


def test_future_schema_refused():
    d = program_to_json(parse_file(FILES[0]))
    d["version"] = SCHEMA_VERSION + 1
    with pytest.raises(ProgramError, match="newer"):
        program_from_json(d)
