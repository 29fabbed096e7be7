# Agent profile: Mistral Vibe 2.26 with its Python/Textual TUI (VIBE_CLI=python), OpenAI-compatible provider.
# The last 2.x release; 3.x replaced the Textual TUI with a Rust one.
# Sourced by run_peers.sh; run as `bash vibe-textual.sh setup` (by bench.py) to write the config.
export VIBE_BIN="${VIBE2_BIN:-/tmp/peers/vibe2/bin/vibe}"
export VIBE_CLI=python

AGENT_NAME=vibe-textual
AGENT_VERSION_CMD='"$VIBE_BIN" --version 2>&1 | tail -n 1'
AGENT_SETUP='bash "$BENCH_DIR/agents/vibe-textual.sh" setup'
# headless mode runs the default agent profile; --auto-approve lets the read tool run unasked
AGENT_PRINT_CMD='"$VIBE_BIN" --trust --auto-approve -p "$BENCH_PROMPT"'
AGENT_TOOL_NAME=read_file
AGENT_TOOL_ARGS='{"path": "{file}"}'
AGENT_TUI_CMD='"$VIBE_BIN" --trust'
# footer "… 0/160k tokens (0%)" under the "> " input box, and (3.x) the "Initializing…" spinner gone:
# the Rust TUI draws the input box at once and shows that spinner until the Python backend is up
AGENT_READY_REGEX='\A(?![\s\S]*Initializing)[\s\S]*^>.*(\n.*){0,4}tokens \(\d+%\)'

if [[ "${BASH_SOURCE[0]}" == "$0" && "${1:-}" == setup ]]; then
  mkdir -p "$HOME/.vibe"
  cat > "$HOME/.vibe/config.toml" <<EOF
# written by tests/perf/terminal/agents/vibe-textual.sh
active_model = "fake"
# nothing outside this machine is reachable: switch off what would phone home
enable_telemetry = false
enable_update_checks = false
enable_auto_update = false
enable_notifications = false
enable_connectors = false
experimental_enable_model_catalog = false

[experiments]
enable = false

[session_logging]
generate_titles = false

[[providers]]
name = "fake"
api_base = "$BENCH_BASE_URL"
api_key_env_var = "BENCH_API_KEY"
api_style = "openai"
backend = "generic"

[[models]]
name = "$BENCH_MODEL"
provider = "fake"
alias = "fake"
temperature = 0.2
max_context_length = 200000
EOF
fi
