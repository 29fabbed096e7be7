"""The user's own shell commands: ``!cmd`` (output joins the context) and ``!!cmd`` (it doesn't)."""

from __future__ import annotations

from collections.abc import Callable

from ...agent.messages import BashExecutionMessage
from ...ai.abort import AbortSignal
from ...tools.bash import run_bash
from ...tools.environment import Environment


async def run_user_bash(
    env: Environment, command: str, *, exclude_from_context: bool = False, signal: AbortSignal | None = None,
    on_output: Callable[[bytes], None] | None = None,
) -> BashExecutionMessage:
    """Run ``command`` like the bash tool does (same limits, full output file when cut);
    ``on_output`` sees every piece of output as it arrives."""
    run = await run_bash(env, command, signal=signal, on_chunk=on_output)
    return BashExecutionMessage(
        command=command,
        output=run.text if run.text != "(no output)" else "",
        exit_code=run.exit_code,
        cancelled=run.aborted or run.timed_out,
        truncated=run.truncated,
        full_output_path=run.full_output_path,
        exclude_from_context=exclude_from_context,
    )


def message_from_result(command: str, result: object, exclude_from_context: bool) -> BashExecutionMessage:
    """A ``user_bash`` handler's ready result (``{output, exit_code, cancelled, truncated}``,
    snake_case or camelCase keys) as the message the transcript and the model see."""
    data = dict(result) if isinstance(result, dict) else {k: v for k, v in vars(result).items() if not k.startswith("_")}
    data.pop("command", None)
    data.pop("exclude_from_context", None)
    data.pop("excludeFromContext", None)
    return BashExecutionMessage.model_validate(
        {"command": command, "exclude_from_context": exclude_from_context, **data}
    )
