"""``wolli.ai.ask``: the reply parsed safely, and a real round trip through the faux model."""

from __future__ import annotations

import pytest

from tests.support.runtime import make_host, start_session
from wolli.ai.providers.faux import FauxProvider, faux_error
from wolli.extensions.api import ExtensionAPI
from wolli.extensions.api_services import EventBus
from wolli.extensions.ask import parse_answer
from wolli.extensions.registry import ExtensionRecord, ExtensionRegistry


def test_parse_answer_reads_the_first_answer_object_and_clamps() -> None:
    assert parse_answer('Sure. {"answer": "YES", "probability": 0.9, "reason": "tests pass"}').result == "yes"
    odd = parse_answer('{"x": 1} then {"answer": "maybe", "probability": 7}')
    assert (odd.result, odd.probability) == ("uncertain", 1.0)
    assert parse_answer('{"answer": "no", "probability": "high"}').probability == 0.0
    missing = parse_answer("I think so")
    assert missing.result == "uncertain" and "expected form" in missing.reason


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


async def test_ask_uses_the_active_model_and_survives_a_failed_request(faux, tmp_path) -> None:
    host = make_host(faux)
    await start_session(host, tmp_path, model=faux.model)
    api = ExtensionAPI(ExtensionRegistry(EventBus()), ExtensionRecord("t", None, 0), host)
    faux.push('{"answer": "no", "probability": 0.2, "reason": "a test fails"}')
    answer = await api.ai.ask("Is the build green?")
    assert (answer.result, answer.probability, answer["reason"]) == ("no", 0.2, "a test fails")
    assert faux.contexts[-1].messages[-1].content == "Is the build green?"
    assert "yes/no questions" in faux.contexts[-1].system_prompt
    faux.push(faux_error("overloaded"))
    failed = await api.ai.ask("Again?")
    assert failed.result == "uncertain" and "overloaded" in failed.reason
